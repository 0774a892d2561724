/* SPDX-License-Identifier: GPL-2.0 */
/* Every map of the datapath, in one place. Userspace pins them by name. */
#ifndef SLUICE_BPF_MAPS_H
#define SLUICE_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"

/* One bucket per source key; sized by --max-sources before load. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_DEFAULT_MAX_SOURCES);
	__type(key, struct sluice_key);
	__type(value, struct sluice_bucket);
} buckets SEC(".maps");

/*
 * The configuration lives in a one-entry array. Userspace writes each new
 * configuration into a fresh one and swaps it into the `config` slot.
 * config_initial is the first; it also gives libbpf the inner map's shape.
 */
struct config_slot {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_config);
} config_initial SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct config_slot);
} config SEC(".maps") = {
	.values = { [0] = &config_initial },
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_stats);
} stats SEC(".maps");

/*
 * The generation of the newest configuration, raised by userspace before
 * it swaps the configuration in. A global costs one load, where a map
 * lookup would cost several: the over-limit cache checks it per packet.
 */
__u64 config_generation SEC(".data.generation");

/* The per-CPU over-limit cache (struct sluice_hot in sluice.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_hot);
} hot SEC(".maps");

#endif /* SLUICE_BPF_MAPS_H */
