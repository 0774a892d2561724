// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "state.h"

#define BPFFS_ROOT "/sys/fs/bpf"

static const char *const pin_names[] = {
	SLUICE_PIN_LINK,  SLUICE_MAP_BUCKETS, SLUICE_MAP_CONFIG,
	SLUICE_MAP_STATS, SLUICE_MAP_HOT,     SLUICE_MAP_GENERATION,
};

int bpffs_ensure(void)
{
	struct statfs fs;

	if (!statfs(BPFFS_ROOT, &fs) && fs.f_type == BPF_FS_MAGIC)
		goto make_root;
	if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700"))
		return -errno;
make_root:
	if (mkdir(SLUICE_PIN_ROOT, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

int state_lock(void)
{
	int fd;

	fd = open(SLUICE_PIN_ROOT, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

void state_unlock(int lock_fd)
{
	if (lock_fd >= 0)
		close(lock_fd); /* releases the flock */
}

int state_path(const char *ifname, const char *name, char *buf, size_t len)
{
	int n;

	if (name)
		n = snprintf(buf, len, "%s/%s/%s", SLUICE_PIN_ROOT, ifname, name);
	else
		n = snprintf(buf, len, "%s/%s", SLUICE_PIN_ROOT, ifname);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int state_exists(const char *ifname)
{
	char dir[PATH_MAX];
	struct stat sb;

	if (state_path(ifname, NULL, dir, sizeof(dir)))
		return 0;
	return !stat(dir, &sb);
}

static int pin_open(const char *ifname, const char *name)
{
	char path[PATH_MAX];
	int fd;

	if (state_path(ifname, name, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = bpf_obj_get(path);
	return fd < 0 ? -errno : fd;
}

int state_open(const char *ifname, struct state *st)
{
	int err;

	memset(st, 0, sizeof(*st));
	st->link_fd = st->config_fd = st->stats_fd = st->buckets_fd = st->generation_fd = -1;
	st->hot_fd = -1;
	snprintf(st->ifname, sizeof(st->ifname), "%s", ifname);
	err = state_path(ifname, NULL, st->dir, sizeof(st->dir));
	if (err)
		return err;
	if (!state_exists(ifname))
		return -ENOENT;

	st->link_fd = pin_open(ifname, SLUICE_PIN_LINK);
	st->config_fd = pin_open(ifname, SLUICE_MAP_CONFIG);
	st->stats_fd = pin_open(ifname, SLUICE_MAP_STATS);
	st->buckets_fd = pin_open(ifname, SLUICE_MAP_BUCKETS);
	st->generation_fd = pin_open(ifname, SLUICE_MAP_GENERATION);
	st->hot_fd = pin_open(ifname, SLUICE_MAP_HOT);
	err = st->config_fd < 0	      ? st->config_fd
	      : st->stats_fd < 0      ? st->stats_fd
	      : st->buckets_fd < 0    ? st->buckets_fd
	      : st->generation_fd < 0 ? st->generation_fd
	      : st->hot_fd < 0	      ? st->hot_fd
				      : 0;
	if (err)
		state_close(st);
	return err;
}

void state_close(struct state *st)
{
	int *fds[] = { &st->link_fd,	&st->config_fd,	    &st->stats_fd,
		       &st->buckets_fd, &st->generation_fd, &st->hot_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int state_remove(const char *ifname)
{
	char path[PATH_MAX];
	size_t i;
	int err = 0;

	for (i = 0; i < sizeof(pin_names) / sizeof(pin_names[0]); i++) {
		if (state_path(ifname, pin_names[i], path, sizeof(path)))
			return -ENAMETOOLONG;
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	if (state_path(ifname, NULL, path, sizeof(path)))
		return -ENAMETOOLONG;
	if (rmdir(path) && errno != ENOENT)
		err = -errno;
	return err;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int state_list(char (*names)[IF_NAMESIZE], int max)
{
	struct dirent *de;
	DIR *dir;
	int n = 0;

	dir = opendir(SLUICE_PIN_ROOT);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dir)) && n < max) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= IF_NAMESIZE)
			continue;
		memcpy(names[n++], de->d_name, strlen(de->d_name) + 1);
	}
	closedir(dir);
	qsort(names, (size_t)n, IF_NAMESIZE, name_cmp);
	return n;
}

/* The inner map currently in the config slot. */
static int config_slot_fd(int config_fd)
{
	__u32 zero = 0, inner_id;
	int fd;

	if (bpf_map_lookup_elem(config_fd, &zero, &inner_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(inner_id);
	return fd < 0 ? -errno : fd;
}

int config_read(int config_fd, struct sluice_config *cfg)
{
	__u32 zero = 0;
	int fd, err = 0;

	fd = config_slot_fd(config_fd);
	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &zero, cfg))
		err = -errno;
	close(fd);
	return err;
}

int config_write(int config_fd, int generation_fd, struct sluice_config *cfg)
{
	struct sluice_config old = {};
	__u32 zero = 0;
	int fd, err;

	err = config_read(config_fd, &old);
	if (err)
		return err;
	cfg->generation = old.generation + 1;
	if (bpf_map_update_elem(generation_fd, &zero, &cfg->generation, BPF_ANY))
		return -errno;

	/* Fill a fresh slot completely, then swap it in with one update. */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sluice_config", sizeof(__u32), sizeof(*cfg), 1,
			    NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, cfg, BPF_ANY) ||
	    bpf_map_update_elem(config_fd, &zero, &fd, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

int stats_read(int stats_fd, struct sluice_stats *sum)
{
	struct sluice_stats *percpu;
	int ncpu, cpu, i, err = 0;
	__u32 zero = 0;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	percpu = calloc((size_t)ncpu, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(stats_fd, &zero, percpu)) {
		err = -errno;
		goto out;
	}
	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpu; cpu++) {
		for (i = 0; i < SLUICE_CNT_MAX; i++) {
			sum->c[i].packets += percpu[cpu].c[i].packets;
			sum->c[i].bytes += percpu[cpu].c[i].bytes;
		}
	}
out:
	free(percpu);
	return err;
}

const char *xdp_mode_name(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, opts);

	if (ifindex <= 0 || bpf_xdp_query(ifindex, 0, &opts))
		return "none";
	switch (opts.attach_mode) {
	case XDP_ATTACHED_DRV:
		return "native";
	case XDP_ATTACHED_SKB:
		return "generic";
	case XDP_ATTACHED_HW:
		return "offload";
	case XDP_ATTACHED_MULTI:
		return "multi";
	default:
		return "none";
	}
}

unsigned int link_prog_id(int link_fd, unsigned int *ifindex)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	*ifindex = 0;
	if (link_fd < 0 || bpf_obj_get_info_by_fd(link_fd, &info, &len))
		return 0;
	*ifindex = info.xdp.ifindex;
	return info.prog_id;
}

const char *state_health(const struct state *st, unsigned int *prog_id)
{
	unsigned int ifindex, link_ifindex;

	*prog_id = link_prog_id(st->link_fd, &link_ifindex);
	ifindex = if_nametoindex(st->ifname);
	if (!ifindex)
		return "stale: interface is gone";
	if (!*prog_id || link_ifindex != ifindex)
		return "stale: program is not attached";
	return STATE_OK;
}
