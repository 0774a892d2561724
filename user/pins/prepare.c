// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF object prepared for pinned state: its maps sized and reused from
 * pins, its configuration template, and its pins written.
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "table_hash.h"
#include "pins/internal.h"

/* Calls fn for the object's map of every pin that is a map. */
static int for_each_pinned_map(struct bpf_object *obj,
			       int (*fn)(struct bpf_map *map, size_t pin, void *arg), void *arg)
{
	struct bpf_map *map;
	size_t i;
	int err;

	for (i = 0; i < N_PINS; i++) {
		if (!pins[i].obj_name)
			continue;
		map = bpf_object__find_map_by_name(obj, pins[i].obj_name);
		if (!map)
			return -ENOENT;
		err = fn(map, i, arg);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Userspace makes each configuration's map without BTF (config_publish), so
 * the slot's template must have none either: Linux 6.1 compares the
 * BTF-derived timer offset of the two and refuses every update otherwise
 * (later kernels compare records, and take either). The template must stay
 * open until the object is loaded: the last one made is closed when the
 * next is, so a process keeps at most one.
 */
static int config_template = -1;

static int config_template_set(struct bpf_object *obj)
{
	struct bpf_map *config = bpf_object__find_map_by_name(obj, SLUICE_MAP_CONFIG);
	int fd, err;

	if (!config)
		return -ENOENT;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sluice_cfg_tpl", sizeof(__u32),
			    sizeof(struct sluice_config), 1, NULL);
	if (fd < 0)
		return -errno;
	err = bpf_map__set_inner_map_fd(config, fd);
	if (err) {
		close(fd);
		return err;
	}
	if (config_template >= 0)
		close(config_template);
	config_template = fd;
	return 0;
}

int state_prepare(struct bpf_object *obj, uint64_t max_sources)
{
	struct bpf_map *buckets = bpf_object__find_map_by_name(obj, "buckets");
	struct bpf_map *aggregates = bpf_object__find_map_by_name(obj, "aggregates");
	struct bpf_map *hot = bpf_object__find_map_by_name(obj, "hot");
	struct bpf_map *usage = bpf_object__find_map_by_name(obj, "fleet_usage");
	struct bpf_map *filter = bpf_object__find_map_by_name(obj, "buckets_filter");
	__u32 sets = table_sets_for(max_sources);
	int ncpu = libbpf_num_possible_cpus();
	int err;

	if (!buckets || !aggregates || !hot || !usage || !filter)
		return -ENOENT;
	if (ncpu < 0)
		return ncpu;
	err = bpf_map__set_max_entries(buckets, sets);
	if (!err)
		err = bpf_map__set_max_entries(filter, table_filter_entries_for(sets));
	if (!err)
		err = bpf_map__set_max_entries(usage, sets);
	if (!err)
		err = bpf_map__set_max_entries(aggregates, table_aggregate_sets_for(max_sources));
	/* The over-limit cache: one value per CPU, indexed by its number. */
	if (!err)
		err = bpf_map__set_max_entries(hot, (__u32)ncpu);
	return err ?: config_template_set(obj);
}

static int reuse_one(struct bpf_map *map, size_t pin, void *arg)
{
	return bpf_map__reuse_fd(map, *pin_fd(arg, pin));
}

int state_reuse(struct bpf_object *obj, struct state *st)
{
	return for_each_pinned_map(obj, reuse_one, st);
}

void state_from_object(struct bpf_object *obj, struct state *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < N_PINS; i++)
		*pin_fd(st, i) = pins[i].obj_name
					 ? bpf_object__find_map_fd_by_name(obj, pins[i].obj_name)
					 : -1;
	st->maps.dir = -1; /* not pinned yet */
}

struct pin_where {
	const char *ifname;
	int dir_fd;
};

static int pin_one(struct bpf_map *map, size_t pin, void *arg)
{
	const struct pin_where *w = arg;
	char path[PATH_MAX];
	int err;

	err = state_path(w->ifname, pins[pin].name, path, sizeof(path));
	if (!err)
		err = bpf_map__pin(map, path);
	return err ?: state_pin_share(w->dir_fd, pins[pin].name);
}

int state_pin(struct bpf_object *obj, const char *ifname)
{
	struct pin_where w = { .ifname = ifname, .dir_fd = state_dir_open(ifname, NULL) };
	int err;

	if (w.dir_fd < 0)
		return w.dir_fd;
	err = for_each_pinned_map(obj, pin_one, &w);
	close(w.dir_fd);
	return err;
}

int state_pin_prog(int prog_fd, const char *ifname)
{
	char path[PATH_MAX];
	int err;

	err = state_path(ifname, SLUICE_PIN_PROG, path, sizeof(path));
	if (!err && bpf_obj_pin(prog_fd, path))
		err = -errno;
	return err;
}

int state_pin_link(int prog_fd, int ifindex, uint32_t xdp_flags, const char *ifname)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = xdp_flags);
	char path[PATH_MAX];
	int link_fd, err;

	link_fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	if (link_fd < 0)
		return -errno;
	err = state_path(ifname, SLUICE_PIN_LINK, path, sizeof(path));
	if (!err && bpf_obj_pin(link_fd, path))
		err = -errno;
	/* Unpinned, the link dies with this fd and the program detaches. */
	close(link_fd);
	return err;
}
