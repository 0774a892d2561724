/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a key may live in a set table (sources, aggregates): one of two
 * sets, and what its way carries there (struct sluice_set in sluice.h).
 * Pure inline functions, so the XDP program and userspace (top, tests)
 * place keys alike, and userspace turns a way back into its key.
 */
#ifndef SLUICE_TABLE_HASH_H
#define SLUICE_TABLE_HASH_H

#include <linux/types.h>
#ifndef __bpf__
#include <string.h>
#endif
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

/*
 * Sizing. Twelve ways a set and two choices keep sets even: filled to
 * --max-sources, 86% of the ways, a few IPv4 keys in 100,000 find both
 * sets full (`make bench`, "table fill"). A table under
 * SLUICE_INLINE_SETS keeps every key in a key way: its six pairs a set
 * are filled to 70% at most, for the same odds. Constants, for the map
 * definitions.
 */
#define SLUICE_PAIRED_LOAD_PCT 70
#define SLUICE_TABLE_WAYS(sources) \
	(((__u64)(sources)*100 + SLUICE_TABLE_LOAD_PCT - 1) / SLUICE_TABLE_LOAD_PCT)
#define SLUICE_TABLE_SETS_INLINE(sources) \
	((SLUICE_TABLE_WAYS(sources) + SLUICE_SET_WAYS - 1) / SLUICE_SET_WAYS)
#define SLUICE_PAIRS_PER_SET (SLUICE_SET_WAYS / 2)
#define SLUICE_TABLE_SETS_PAIRED(sources)                                             \
	(((__u64)(sources)*100 + SLUICE_PAIRS_PER_SET * SLUICE_PAIRED_LOAD_PCT - 1) / \
			 (SLUICE_PAIRS_PER_SET * SLUICE_PAIRED_LOAD_PCT)              \
		 ?: 1)
#define SLUICE_TABLE_SETS(sources)                                 \
	(SLUICE_TABLE_SETS_INLINE(sources) >= SLUICE_INLINE_SETS   \
		 ? SLUICE_TABLE_SETS_INLINE(sources)               \
	 : SLUICE_TABLE_SETS_PAIRED(sources) >= SLUICE_INLINE_SETS \
		 ? SLUICE_INLINE_SETS                              \
		 : SLUICE_TABLE_SETS_PAIRED(sources))

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

/* Entries of the source table's filter (struct sluice_filter) for a table of `sets`. */
static inline __u32 table_filter_entries_for(__u32 sets)
{
	return (sets + SLUICE_FILTER_SETS - 1) / SLUICE_FILTER_SETS;
}

/*
 * The bits of a bucket way's tag in its set's filter word: two, each five
 * bits of a multiplicative hash of the tag, whatever the set (bit 0 says
 * which of the key's two sets it is in); they may be the same bit. A key
 * with no bucket gets past a set's word only when both of its bits are
 * set: in a set of 2 buckets 1.4% of the time (6% with one bit a tag), of
 * 6 buckets 10% (17%), of 12 buckets 29% (32%). A spoofed flood's packets
 * read the table that often (design.md, the filter).
 */
static inline __u32 table_filter_bits(__u32 tag)
{
	__u32 t = tag & ~1U;

	return 1U << ((t * 0x9e3779b1U) >> 27) | 1U << ((t * 0x85ebca6bU) >> 27);
}

/* Whether a table of `sets` holds IPv4 keys in their tags alone. */
static inline int table_inline(__u32 sets)
{
	return sets >= SLUICE_INLINE_SETS;
}

/* The IPv4 buckets a table of `sets` holds: a way each, or a pair in a small table. */
static inline __u64 table_buckets_of(__u32 sets)
{
	return (__u64)sets * SLUICE_SET_WAYS / (table_inline(sets) ? 1 : 2);
}

/* The IPv4 sources a table of `sets` was sized for (the inverse, rounded down). */
static inline __u64 table_sources_of(__u32 sets)
{
	if (!table_inline(sets))
		return (__u64)sets * SLUICE_PAIRS_PER_SET * SLUICE_PAIRED_LOAD_PCT / 100;
	return (__u64)sets * SLUICE_SET_WAYS * SLUICE_TABLE_LOAD_PCT / 100;
}

/*
 * Where a key lives: its two sets, and what its bucket's way carries
 * there: tag | i in set[i], and ext. With SLUICE_EXT_PAIRED in ext, the
 * key itself is in the way after (struct sluice_key_way).
 */
struct table_place {
	__u32 set[2];
	__u32 tag; /* bit 0 clear, bit 31 set (so never 0) */
	__u8 ext;
};

/* An IPv4 key as 49 bits: its policy, then its prefix and the address bits it keeps. */
#define KEY49_BITS 49
#define KEY49_MASK ((1ULL << KEY49_BITS) - 1)
#define KEY49_ADDR 33

/* A word between host and network byte order (either way: the swap is its own inverse). */
static inline __u32 table_net32(__u32 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

/*
 * The prefix and address in 33 bits: the /p prefixes come after those of
 * every shorter length, 2^p - 1 of them, so each (p, bits) has one value.
 */
static inline __u64 key49_of(const struct sluice_key *key)
{
	__u32 p = key->prefix_len > 32 ? 32 : key->prefix_len;
	__u64 addr = p ? (__u64)(table_net32(key->addr[0]) >> (32 - p)) : 0;

	return (__u64)key->policy << KEY49_ADDR | (((1ULL << p) - 1) + addr);
}

static inline __u64 odd_of(__u64 seed)
{
	return (seed | 1) & KEY49_MASK;
}

/*
 * A bijection of [0, 2^49) keyed by the seeds: odd multiplies and
 * xor-shifts, each invertible, so userspace can turn a way back into its
 * key (table_key_inline), and unknown seeds keep forged keys off one set.
 */
static inline __u64 key49_mix(__u64 x, const __u64 seed[3])
{
	x = (x ^ seed[2]) & KEY49_MASK;
	x = (x * odd_of(seed[0])) & KEY49_MASK;
	x ^= x >> 25;
	x = (x * odd_of(seed[1])) & KEY49_MASK;
	x ^= x >> 25;
	return x;
}

/* What the second set is offset by from the first, 1 to sets - 1, from the quotient. */
static inline __u32 set2_offset(__u64 q, __u32 sets)
{
	return 1 + (__u32)((((q * 0x9e3779b97f4a7c15ULL) >> 32) * (sets - 1)) >> 32);
}

/*
 * An inline key: its mixed value h is quotient and remainder by the set
 * count. The remainder is the first set; the second is offset from it by
 * the quotient; the way carries the quotient and which set it is in
 * (bit 0 of the tag), 38 bits, in its tag and ext.
 */
static inline void table_place_inline(struct table_place *pl, const struct sluice_key *key,
				      const __u64 seed[3], __u32 sets)
{
	__u64 h = key49_mix(key49_of(key), seed);
	__u64 q = h / sets;
	__u32 first = (__u32)(h - q * sets), second = first + set2_offset(q, sets);

	pl->set[0] = first;
	pl->set[1] = second >= sets ? second - sets : second;
	pl->tag = 0x80000000U | (__u32)((q << 1) & 0x7fffffff);
	pl->ext = (__u8)(q >> 30);
}

/* A paired key: its sets and tag from the keyed hash; the key way confirms it. */
static inline void table_place_paired(struct table_place *pl, const struct sluice_key *key,
				      const __u64 seed[3], __u32 sets)
{
	__u64 hash = table_hash(key, seed);

	pl->set[0] = table_set_of(hash, sets);
	pl->set[1] = table_set2_of(hash, sets);
	pl->tag = ((__u32)hash | 0x80000000U) & ~1U;
	pl->ext = SLUICE_EXT_PAIRED | (__u8)((hash >> 58) & 0x3f);
}

static inline void table_place(struct table_place *pl, const struct sluice_key *key,
			       const __u64 seed[3], __u32 sets)
{
	/* An IPv4 source key; a destination or pair key is paired (its kind is in family). */
	if (key->family == SLUICE_FAMILY_IPV4 && table_inline(sets))
		table_place_inline(pl, key, seed, sets);
	else
		table_place_paired(pl, key, seed, sets);
}

#ifndef __bpf__
/* Userspace only: a way back into its key. */

/* The inverse of an odd number modulo 2^64 (Newton's iteration: 6 steps give 64 bits). */
static inline __u64 odd_inverse(__u64 a)
{
	__u64 x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

static inline __u64 key49_unmix(__u64 x, const __u64 seed[3])
{
	x ^= x >> 25;
	x = (x * odd_inverse(odd_of(seed[1]))) & KEY49_MASK;
	x ^= x >> 25;
	x = (x * odd_inverse(odd_of(seed[0]))) & KEY49_MASK;
	return (x ^ seed[2]) & KEY49_MASK;
}

/* The key of an inline way in set `set`; -1 if tag and ext name no key. */
static inline int table_key_inline(struct sluice_key *key, __u32 set, __u32 tag, __u8 ext,
				   const __u64 seed[3], __u32 sets)
{
	__u64 code = (__u64)ext << 31 | (tag & 0x7fffffff), q = code >> 1, h, x, enc;
	__u32 first = set, back, p;

	if (code & 1) {
		back = set2_offset(q, sets);
		first = set >= back ? set - back : set + sets - back;
	}
	h = q * sets + first;
	if (h > KEY49_MASK)
		return -1;
	x = key49_unmix(h, seed);
	enc = (x & ((1ULL << KEY49_ADDR) - 1)) + 1;
	for (p = 0; p < 32 && enc >> (p + 1); p++)
		;
	memset(key, 0, sizeof(*key));
	key->family = SLUICE_FAMILY_IPV4;
	key->prefix_len = (__u8)p;
	key->policy = (__u16)(x >> KEY49_ADDR);
	key->addr[0] = p ? table_net32((__u32)((enc - (1ULL << p)) << (32 - p))) : 0;
	return 0;
}

/*
 * The key of the bucket in way w of set `set` (a table of `sets`), or -1:
 * an empty way, a key way, or a pair whose key way is not (yet) whole.
 */
static inline int table_key_at(struct sluice_key *key, const struct sluice_set *s, __u32 set, int w,
			       const __u64 seed[3], __u32 sets)
{
	const struct sluice_key_way *kw;
	struct table_place pl;

	if (!s->ways.tag[w] || s->ways.ext[w] == SLUICE_EXT_KEY)
		return -1;
	if (!(s->ways.ext[w] & SLUICE_EXT_PAIRED))
		return table_key_inline(key, set, s->ways.tag[w], s->ways.ext[w], seed, sets);
	if (w & 1 || s->ways.ext[w + 1] != SLUICE_EXT_KEY || !s->ways.tag[w + 1])
		return -1;
	kw = (const struct sluice_key_way *)&s->ways.count[w + 1];
	memcpy(key, &s->ways.tag[w + 1], 4);
	memcpy(key->addr, kw->addr, sizeof(key->addr));
	/* Read unlocked: a pair changing hands reads as no key, never a wrong one. */
	table_place_paired(&pl, key, seed, sets);
	return (s->ways.tag[w] & ~1U) == pl.tag && s->ways.ext[w] == pl.ext ? 0 : -1;
}
#endif

#endif /* SLUICE_TABLE_HASH_H */
