// SPDX-License-Identifier: GPL-2.0
/*
 * The live configuration: read from its pin or slot, published in one step
 * as a new generation.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <unistd.h>
#include "table_hash.h"
#include "base/clock.h"
#include "maps/config.h"

int config_load(const struct policy_maps *m, struct sluice_config *cfg)
{
	int err = config_read(m, cfg);

	if (!err && cfg->layout_version != SLUICE_LAYOUT_VERSION)
		return -EPROTO;
	return err;
}

/*
 * The live configuration's map: its pin (config_live), which read
 * permission opens, or for state pinned before it existed, the slot of the
 * map-in-map, which only CAP_SYS_ADMIN may open by id.
 */
static int config_slot_fd(const struct policy_maps *m)
{
	__u32 zero = 0, inner_id;
	int fd;

	if (m->dir >= 0) {
		fd = state_pin_open_at(m->dir, SLUICE_PIN_CONFIG_LIVE);
		if (fd != -ENOENT)
			return fd;
	}
	if (bpf_map_lookup_elem(m->config, &zero, &inner_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(inner_id);
	return fd < 0 ? -errno : fd;
}

int table_max_sources(const struct policy_maps *m, const struct sluice_config *cfg,
		      uint64_t *max_sources)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	*max_sources = cfg->max_sources;
	if (*max_sources)
		return 0;
	if (bpf_obj_get_info_by_fd(m->buckets, &info, &len))
		return -errno;
	*max_sources = table_sources_of(info.max_entries);
	return 0;
}

/* config_slot_fd, with its map's info; the fd or -errno. */
static int config_slot_info(const struct policy_maps *m, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);
	int fd = config_slot_fd(m), err;

	if (fd < 0)
		return fd;
	memset(info, 0, sizeof(*info));
	if (!bpf_obj_get_info_by_fd(fd, info, &len))
		return fd;
	err = -errno;
	close(fd);
	return err;
}

int config_read(const struct policy_maps *m, struct sluice_config *cfg)
{
	struct bpf_map_info info;
	__u32 zero = 0;
	int fd = config_slot_info(m, &info), err = 0;

	if (fd < 0)
		return fd;
	/* State pinned by a sluice of another layout: never read past our struct. */
	if (info.value_size != sizeof(*cfg))
		err = -EPROTO;
	else if (bpf_map_lookup_elem(fd, &zero, cfg))
		err = -errno;
	close(fd);
	return err;
}

int config_layout(const struct policy_maps *m, __u32 *layout)
{
	struct bpf_map_info info;
	__u32 zero = 0;
	void *value = NULL;
	int fd = config_slot_info(m, &info), err = 0;

	if (fd < 0)
		return fd;
	/* Every layout's configuration begins with its version: read it at any size. */
	if (info.value_size < sizeof(*layout) || !(value = calloc(1, info.value_size)))
		err = info.value_size < sizeof(*layout) ? -EPROTO : -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, value))
		err = -errno;
	else
		memcpy(layout, value, sizeof(*layout));
	free(value);
	close(fd);
	return err;
}

/* The slot the datapath reads, swapped to fd; with its pin staged first, so that fails alone. */
static int config_swap(const struct policy_maps *m, int fd)
{
	__u32 zero = 0;
	int err;

	if (m->dir < 0)
		return bpf_map_update_elem(m->config, &zero, &fd, BPF_ANY) ? -errno : 0;
	err = state_pin_stage(m->dir, fd, SLUICE_PIN_CONFIG_LIVE);
	if (err)
		return err;
	err = bpf_map_update_elem(m->config, &zero, &fd, BPF_ANY) ? -errno : 0;
	return state_pin_commit(m->dir, SLUICE_PIN_CONFIG_LIVE, !err) ?: err;
}

/*
 * A configuration's map is written once and never changed (not frozen:
 * the tests rewrite one in place to stand for an older layout): a reader
 * who opened it (by pin, or the datapath through the slot) reads one
 * generation whole. It is swapped into the slot and pinned over the
 * last one before the writer touches the sets the old one names.
 */
static int config_publish(const struct policy_maps *m, const struct sluice_config *cfg)
{
	__u32 zero = 0;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sluice_config", sizeof(__u32), sizeof(*cfg), 1,
			    NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, cfg, BPF_ANY))
		err = -errno;
	if (!err)
		err = config_swap(m, fd);
	close(fd);
	return err;
}

int config_write(const struct policy_maps *m, struct sluice_config *cfg)
{
	struct sluice_config old = {};
	__u32 zero = 0;
	int err;

	/* A freshly loaded program has an empty slot: generation 0. */
	err = config_read(m, &old);
	if (err && err != -ENOENT)
		return err;
	cfg->generation = old.generation + 1;
	cfg->changed_at_ns = realtime_ns();
	if (bpf_map_update_elem(m->generation, &zero, &cfg->generation, BPF_ANY))
		return -errno;
	return config_publish(m, cfg);
}

int config_republish(const struct policy_maps *m)
{
	struct sluice_config cfg;
	int err = config_load(m, &cfg);

	return err ?: config_write(m, &cfg);
}
