/* SPDX-License-Identifier: GPL-2.0 */
/* Every map of the datapath, in one place. Userspace pins them by name. */
#ifndef SLUICE_BPF_MAPS_H
#define SLUICE_BPF_MAPS_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"
#include "table_hash.h"

/*
 * The source table: sets of SLUICE_SET_WAYS buckets (struct sluice_set),
 * sized from --max-sources before load. Mappable only for its alignment:
 * the values then start on a page, so each of a set's six lines is one
 * cache line.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_TABLE_SETS(SLUICE_DEFAULT_MAX_SOURCES));
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sluice_set);
} buckets SEC(".maps");

/*
 * The source table's filter: a word per set with a bit per bucket way
 * (struct sluice_filter), sized with the table. A packet of a source that
 * has no bucket learns it here, from one word of each of its two sets.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, (SLUICE_TABLE_SETS(SLUICE_DEFAULT_MAX_SOURCES) + SLUICE_FILTER_SETS -
			     1) / SLUICE_FILTER_SETS);
	__type(key, __u32);
	__type(value, struct sluice_filter);
} buckets_filter SEC(".maps");

/*
 * The configuration lives in a one-entry array. Userspace writes each new
 * configuration into a fresh one and swaps it into the `config` slot, which
 * starts empty: an upgrade that reuses the pinned slot must not have libbpf
 * fill it. config_shape is never used; it gives libbpf the inner map's shape
 * and clang the struct's full BTF.
 */
struct config_slot {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_config);
} config_shape SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct config_slot);
} config SEC(".maps");

/* Two sets of policy slots; config.policy_set names the live one. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2 * SLUICE_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct sluice_policy);
} policies SEC(".maps");

/* Source CIDR -> the policy slots to try; keys carry the set. */
struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 2 * SLUICE_MAX_POLICIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_lpm_v4);
	__type(value, struct sluice_rule_group);
} rules_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, 2 * SLUICE_MAX_POLICIES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct sluice_lpm_v6);
	__type(value, struct sluice_rule_group);
} rules_v6 SEC(".maps");

/*
 * Allow and deny lists; keys carry the set. An allow entry is presence
 * alone, a deny entry says until when it denies (struct sluice_deny).
 */
#define LIST_TRIE(name, key_type, value_type)                 \
	struct {                                              \
		__uint(type, BPF_MAP_TYPE_LPM_TRIE);          \
		__uint(max_entries, SLUICE_MAX_LIST_ENTRIES); \
		__uint(map_flags, BPF_F_NO_PREALLOC);         \
		__type(key, key_type);                        \
		__type(value, value_type);                    \
	} name SEC(".maps")

LIST_TRIE(allow_v4, struct sluice_lpm_v4, __u8);
LIST_TRIE(allow_v6, struct sluice_lpm_v6, __u8);
LIST_TRIE(deny_v4, struct sluice_lpm_v4, struct sluice_deny);
LIST_TRIE(deny_v6, struct sluice_lpm_v6, struct sluice_deny);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_stats);
} stats SEC(".maps");

/* The same per policy slot, both sets: what each rule passed and held back. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SLUICE_MAX_POLICIES);
	__type(key, __u32);
	__type(value, struct sluice_stats);
} rule_stats SEC(".maps");

/*
 * The generation of the newest configuration, raised by userspace before
 * it swaps the configuration in. A global costs one load, where a map
 * lookup would cost several: the over-limit cache checks it per packet.
 */
__u64 config_generation SEC(".data.generation");

/* Admission and overflow state per rule id: outlives set flips, like buckets. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct sluice_admission);
} admission SEC(".maps");

/*
 * The aggregate table: a bucket per wider prefix of a rule (--aggregate),
 * in sets like the source table's and by the same code, so a bucket that
 * still holds state is never given away. Sized by userspace before load,
 * from --max-sources (table_aggregate_sets_for).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_TABLE_SETS(SLUICE_DEFAULT_MAX_SOURCES / 16));
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sluice_set);
} aggregates SEC(".maps");

/*
 * The per-CPU over-limit cache (struct sluice_hot in sluice.h): one value
 * per possible CPU, indexed by the CPU's number (userspace sizes it before
 * load). A plain array, not a per-CPU one: a per-CPU value is limited to
 * 32 KiB. Mappable only for its alignment: the values then start on a page,
 * so each line of a set is one cache line.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct sluice_hot);
} hot SEC(".maps");

/*
 * Per-CPU scratch for the aggregate steps (struct aggregates_step in
 * aggregate.h, which checks it fits): off the stack, whose 512 bytes the
 * whole call chain shares. A program runs to its end on its CPU before
 * the next one there starts, so one entry per CPU serves them all. Not
 * pinned: it holds nothing between packets.
 */
#define SCRATCH_BYTES 256
struct scratch {
	__u8 bytes[SCRATCH_BYTES];
};

/* The entries: the aggregates' step, and the source's own table op (meter.h). */
enum scratch_entry {
	SCRATCH_AGGREGATES,
	SCRATCH_SOURCE,
	SCRATCH_ENTRIES,
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SCRATCH_ENTRIES);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/*
 * The fleet (sluice.h, struct sluice_fleet_hint): what the agent tells the
 * datapath, one load per metered packet, and the candidates it is handed
 * back. The ring holds a few periods' worth; a full ring drops candidates
 * (the agent counts what it lost), never packets.
 */
struct sluice_fleet_hint fleet_hint SEC(".data.fleet");

/*
 * Each source way's usage this period, for the fleet (bpf/table.h
 * fleet_note): an entry per set, sized with the source table. Apart from
 * the table, so a host without a fleet pays it in memory only (with one,
 * a way's word is also cleared when it changes hands).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SLUICE_TABLE_SETS(SLUICE_DEFAULT_MAX_SOURCES));
	__type(key, __u32);
	__type(value, struct sluice_fleet_usage);
} fleet_usage SEC(".maps");

#define FLEET_RING_BYTES (512 * 1024)
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FLEET_RING_BYTES);
} fleet_ring SEC(".maps");

/*
 * The sync program's batch (bpf/fleet.h): written by the agent, run, read
 * back. Not pinned: each agent loads its own copy of the program and map.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sluice_fleet_batch);
} fleet_batch SEC(".maps");

/* Sources that proved their address (--prove), for top: written once per proof. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_PROVEN_MAX);
	__type(key, struct sluice_key);
	__type(value, struct sluice_proven);
} proven SEC(".maps");

/*
 * The penalty box (bpf/ban.h): a key's refusals in its period and its
 * bans, written by the datapath only. An LRU, so keys refused long ago
 * give their place to new ones.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_BANS_MAX);
	__type(key, struct sluice_key);
	__type(value, struct sluice_ban);
} bans SEC(".maps");

/* The audit's notes of bans (struct sluice_ban_note): userspace only, pinned with the rest. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SLUICE_BANS_MAX);
	__type(key, struct sluice_ban_note);
	__type(value, __u8);
} ban_notes SEC(".maps");

#endif /* SLUICE_BPF_MAPS_H */
