/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a key may live in a set table (sources, aggregates): one of two
 * sets, with a tag, from a seeded hash. Pure inline functions, so the XDP
 * program and userspace (top, tests) place keys alike.
 *
 * Two choices keep sets even: a new key goes to the emptier of its two
 * sets, so at 80% of the ways in use about 0.02% of keys find both full,
 * where one choice would leave 6.7% out. The table is sized for that load.
 */
#ifndef SLUICE_TABLE_HASH_H
#define SLUICE_TABLE_HASH_H

#include <linux/types.h>
#include "sluice.h"

/*
 * Multiply-add over the key's five words with the random odd seeds, then a
 * xor-shift-multiply finish so that every output bit depends on every
 * input bit. Without the seeds unknown, forged sources could all be aimed
 * at one set.
 */
static inline __u64 table_hash(const struct sluice_key *key, const __u64 seed[3])
{
	const __u32 *w = (const __u32 *)key;
	__u64 h;

	h = (((__u64)w[1] << 32) | w[0]) * (seed[0] | 1) +
	    (((__u64)w[3] << 32) | w[2]) * (seed[1] | 1) + (__u64)w[4] * (seed[2] | 1);
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 32;
	return h;
}

/* The first set: the hash's high half scaled to [0, sets) without a division. */
static inline __u32 table_set_of(__u64 hash, __u32 sets)
{
	return (__u32)(((hash >> 32) * sets) >> 32);
}

/* The second set, from the hash mixed once more. */
static inline __u32 table_set2_of(__u64 hash, __u32 sets)
{
	return table_set_of(hash * 0x94d049bb133111ebULL, sets);
}

/* The tag: the low half, never 0 (which marks an empty way). */
static inline __u32 table_tag_of(__u64 hash)
{
	return (__u32)hash | 1;
}

/* Sets for `sources` buckets at a load of 4/5 of the ways (a constant, for map definitions). */
#define SLUICE_TABLE_SETS(sources) ((((sources)*5 + 3) / 4 + SLUICE_SET_WAYS - 1) / SLUICE_SET_WAYS)

static inline __u32 table_sets_for(__u64 sources)
{
	return (__u32)SLUICE_TABLE_SETS(sources);
}

/* Aggregate buckets: a sixteenth of the sources, at least 1024 (each covers many). */
static inline __u32 table_aggregates_for(__u64 sources)
{
	return (__u32)(sources / 16 > 1024 ? sources / 16 : 1024);
}

/* Sets of the aggregate table, at the same load as the source table's. */
static inline __u32 table_aggregate_sets_for(__u64 sources)
{
	return table_sets_for(table_aggregates_for(sources));
}

/* The sources a table of `sets` was sized for (the inverse, rounded down). */
static inline __u64 table_sources_of(__u32 sets)
{
	return (__u64)sets * SLUICE_SET_WAYS * 4 / 5;
}

/*
 * The key's first four bytes as one word. Written field by field, they
 * would later be read back as a word, and a narrow store feeding a wide
 * load stalls the CPU's store forwarding. The datapath and userspace
 * (the over-limit cache's keys, hot_key.h) build it alike.
 */
static inline __u32 sluice_key_head(__u8 family, __u8 prefix_len, __u16 policy)
{
	union {
		struct {
			__u8 family;
			__u8 prefix_len;
			__u16 policy;
		} fields;
		__u32 word;
	} head = { .fields = { family, prefix_len, policy } };

	return head.word;
}

#endif /* SLUICE_TABLE_HASH_H */
