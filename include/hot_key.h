/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a source lives in the per-CPU over-limit cache (struct sluice_hot),
 * and the bucket an entry's pending count belongs to. Pure inline
 * functions, so the XDP program and userspace (top, tests) agree.
 */
#ifndef SLUICE_HOT_KEY_H
#define SLUICE_HOT_KEY_H

#include <linux/types.h>
#include "sluice.h"
#include "table_hash.h"

/*
 * The keyed hash of a full source address (a key of no policy), with the
 * table's random seeds: forged sources cannot be aimed at one line.
 */
static inline __u64 hot_hash(__u8 family, const __u32 addr[4], const __u64 seed[3])
{
	struct sluice_key k = { .family = family };

	k.addr[0] = addr[0];
	if (family == SLUICE_FAMILY_IPV6) {
		k.addr[1] = addr[1];
		k.addr[2] = addr[2];
		k.addr[3] = addr[3];
	}
	return table_hash(&k, seed);
}

/*
 * The line of a source: its set for IPv4, a line of the second half for
 * IPv6. Without a branch (bit 1 of the family tells 6 from 4), so the
 * verifier sees one shape of pointer for both families.
 */
static inline __u32 hot_line_of(__u8 family, __u64 hash)
{
	return ((__u32)(family >> 1) & 1) * SLUICE_HOT_SETS +
	       ((__u32)(hash >> 32) & (SLUICE_HOT_SETS - 1));
}

/*
 * A source's second line, taken when its first is held live by others: from
 * the hash's low half (itself mixed with the high one), so independent of
 * the first. Two choices leave about 0.4% of 10,000 sources uncached where
 * one left 5% (docs/design.md).
 */
static inline __u32 hot_line2_of(__u8 family, __u64 hash)
{
	return ((__u32)(family >> 1) & 1) * SLUICE_HOT_SETS + ((__u32)hash & (SLUICE_HOT_SETS - 1));
}

/* The first `bits` bits of a word, as a mask in network byte order. */
static inline __u32 hot_mask_word(int bits)
{
	__u32 m;

	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffffU;
	m = 0xffffffffU << (32 - bits);
	return table_net32(m);
}

/*
 * The key of way w's bucket: its source masked to the key's prefix. The
 * head is built as one word (a narrow store read back wide would stall).
 */
static inline void hot_key_of(const union sluice_hot_line *line, int w, struct sluice_key *key)
{
	const struct sluice_hot_way *e = &line->way[w & 1];
	int bits = (int)SLUICE_HOT_PREFIX(e->count);
	int v6 = e->flags & SLUICE_HOT_IPV6;

	*(__u32 *)key = sluice_key_head(v6 ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4, (__u8)bits,
					e->policy);
	key->addr[0] = e->addr & hot_mask_word(bits);
	key->addr[1] = v6 ? line->v6.tail.addr[0] & hot_mask_word(bits - 32) : 0;
	key->addr[2] = v6 ? line->v6.tail.addr[1] & hot_mask_word(bits - 64) : 0;
	key->addr[3] = v6 ? line->v6.tail.addr[2] & hot_mask_word(bits - 96) : 0;
}

#endif /* SLUICE_HOT_KEY_H */
