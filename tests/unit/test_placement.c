// SPDX-License-Identifier: GPL-2.0
/*
 * Where a key lives in a set table (include/table_hash.h): an inline IPv4
 * key placed and read back from its set, tag and ext alone; a paired key
 * read back from its key way; the sizing at 86% of the ways. The model
 * here is the definition itself: a way must name exactly the key placed.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include "harness.h"
#include "unit.h"
#include "table_hash.h"

static const __u64 seed[3] = { 0x9e3779b97f4a7c15ULL, 0xbf58476d1ce4e5b9ULL,
			       0x94d049bb133111ebULL };

static __u64 rng = 88172645463325252ULL;

static __u64 next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random IPv4 key: any policy, any prefix length (a third of them /32), masked. */
static void random_key(struct sluice_key *k)
{
	__u32 p = next_random() % 3 ? (__u32)(next_random() % 33) : 32;
	__u32 a = (__u32)next_random();

	memset(k, 0, sizeof(*k));
	k->family = SLUICE_FAMILY_IPV4;
	k->prefix_len = (__u8)p;
	k->policy = (__u16)next_random();
	k->addr[0] = htonl(p ? a & (0xffffffffU << (32 - p)) : 0);
}

/* Each key read back from each of its sets, the two sets apart, the tag never 0. */
static void test_inline_round_trip(__u32 sets)
{
	struct sluice_key k, back;
	struct table_place pl;
	int i, j, wrong = 0, apart = 0, marked = 0;

	for (i = 0; i < 200000; i++) {
		random_key(&k);
		table_place(&pl, &k, seed, sets);
		apart += pl.set[0] != pl.set[1] && pl.set[0] < sets && pl.set[1] < sets;
		marked += (pl.tag >> 31) && !(pl.tag & 1) && !(pl.ext & SLUICE_EXT_PAIRED);
		for (j = 0; j < 2; j++)
			wrong += table_key_inline(&back, pl.set[j], pl.tag | (__u32)j, pl.ext, seed,
						  sets) ||
				 memcmp(&back, &k, sizeof(k));
	}
	check(!wrong && apart == 200000 && marked == 200000,
	      "inline keys: 200,000 read back from both their sets",
	      "%u sets: %d wrong, %d apart, %d marked", sets, wrong, apart, marked);
}

/* The prefix encoding's edges: /0, and the first and last address of /1, /31 and /32. */
static void test_prefix_edges(void)
{
	static const __u32 lens[] = { 0, 1, 31, 32 };
	struct sluice_key k, back;
	struct table_place pl;
	int i, e, wrong = 0;

	for (i = 0; i < 4; i++) {
		for (e = 0; e < 2; e++) {
			memset(&k, 0, sizeof(k));
			k.family = SLUICE_FAMILY_IPV4;
			k.prefix_len = (__u8)lens[i];
			k.policy = e ? 0xffff : 0;
			k.addr[0] = htonl(e && lens[i] ? 0xffffffffU << (32 - lens[i]) : 0);
			table_place(&pl, &k, seed, 96900);
			wrong += table_key_inline(&back, pl.set[1], pl.tag | 1, pl.ext, seed,
						  96900) ||
				 memcmp(&back, &k, sizeof(k));
		}
	}
	check(!wrong, "inline keys: the prefix lengths' first and last codes", "%d wrong", wrong);
}

/* A paired key: its bucket way and key way, read back; a key way changed under it reads as none. */
static void test_paired(void)
{
	struct sluice_set s = {};
	struct sluice_key k = { .family = SLUICE_FAMILY_IPV6, .prefix_len = 64, .policy = 7 }, back;
	struct sluice_key_way *kw = (struct sluice_key_way *)&s.ways.count[3];
	struct table_place pl;
	int ok;

	inet_pton(AF_INET6, "2001:db8:1:2::", k.addr);
	table_place(&pl, &k, seed, 96900);
	s.ways.tag[2] = pl.tag | 1;
	s.ways.ext[2] = pl.ext;
	s.ways.tag[3] = sluice_key_head(k.family, k.prefix_len, k.policy);
	s.ways.ext[3] = SLUICE_EXT_KEY;
	memcpy(kw->addr, k.addr, sizeof(kw->addr));
	ok = !table_key_at(&back, &s, pl.set[1], 2, seed, 96900) && !memcmp(&back, &k, sizeof(k)) &&
	     table_key_at(&back, &s, pl.set[1], 3, seed, 96900);
	check(ok && (pl.ext & SLUICE_EXT_PAIRED), "an IPv6 key: read back from its key way",
	      "ext %#x", pl.ext);
	kw->addr[1] ^= 1;
	check(table_key_at(&back, &s, pl.set[1], 2, seed, 96900) != 0,
	      "a key way changed under its bucket names no key", "it named one");
	check(pl.set[0] < 96900 && pl.set[1] < 96900, "a paired key's sets are in the table",
	      "%u %u", pl.set[0], pl.set[1]);
}

/* Sizing: --max-sources always fits; the default costs under 40 bytes a source. */
static void test_sizing(void)
{
	static const __u64 sources[] = { 1,	2,     5,     300,   5000,    17000,
					 17300, 20000, 42000, 50000, 1000000, 10000000 };
	double bytes;
	int i, short_of = 0;

	for (i = 0; i < (int)(sizeof(sources) / sizeof(sources[0])); i++)
		short_of += table_sources_of(table_sets_for(sources[i])) < sources[i];
	check(!short_of, "every --max-sources tried fits in its table", "%d short", short_of);
	check(table_sets_for(1000000) == 96900 && table_inline(table_sets_for(1000000)),
	      "1,000,000 sources: 96,900 sets, keys inline", "%u sets", table_sets_for(1000000));
	check(!table_inline(table_sets_for(10000)) && table_inline(table_sets_for(20000)),
	      "tables under 4096 sets keep every key in a key way", "10000: %u sets, 20000: %u",
	      table_sets_for(10000), table_sets_for(20000));
	bytes = ((double)sizeof(struct sluice_set) *
			 (table_sets_for(1000000) + table_aggregate_sets_for(1000000)) +
		 (double)sizeof(struct sluice_filter) *
			 table_filter_entries_for(table_sets_for(1000000))) /
		1e6;
	check(sizeof(struct sluice_set) == 384 && sizeof(struct sluice_filter) == 64 &&
		      bytes <= 40.0,
	      "the default tables and the filter cost at most 40 bytes a source",
	      "%.2f bytes, sets of %zu", bytes, sizeof(struct sluice_set));
}

/*
 * The filter's bits (table_filter_bits): the same in both of a key's sets
 * (bit 0 of the tag says which), one or two, spread evenly over the
 * word's 32 bits.
 */
static void test_filter_bits(void)
{
	unsigned int hits[32] = { 0 }, lo = ~0U, hi = 0;
	struct table_place pl;
	struct sluice_key k;
	int i, b, differ = 0;
	__u32 bits;

	for (i = 0; i < 320000; i++) {
		random_key(&k);
		table_place(&pl, &k, seed, 96900);
		bits = table_filter_bits(pl.tag);
		differ += bits != table_filter_bits(pl.tag | 1) || !bits ||
			  __builtin_popcount(bits) > 2;
		for (b = 0; b < 32; b++)
			hits[b] += bits >> b & 1;
	}
	for (b = 0; b < 32; b++) {
		lo = hits[b] < lo ? hits[b] : lo;
		hi = hits[b] > hi ? hits[b] : hi;
	}
	/* Each bit: 2/32 of the keys, less the 1/1024 whose two bits are the same: 19,688. */
	check(!differ && lo > 18000 && hi < 21400,
	      "filter bits: one or two a tag, the same in both sets, even over 32",
	      "%d differ; per bit %u to %u of 320,000", differ, lo, hi);
}

/*
 * How often a key with no bucket gets past the word of a set holding n
 * buckets (its two bits both set there), against the odds of two
 * independent bits: 1.44%, 10.2% and 28.7% for n = 2, 6 and 12. Two bits
 * that went together (one hash) would give 6.2%, 17.3% and 31.7%, the one
 * bit's odds; the bounds are 5 standard deviations of 40,000 probes.
 */
static void test_filter_odds(int n, double want)
{
	unsigned int past = 0, probes = 40000;
	char name[96];
	double sd = sqrt(want * (1 - want) / probes);
	struct table_place pl;
	struct sluice_key k;
	__u32 word, bits;
	unsigned int i;
	int j;

	for (i = 0; i < probes; i++) {
		word = 0;
		for (j = 0; j < n; j++) {
			random_key(&k);
			table_place(&pl, &k, seed, 96900);
			word |= table_filter_bits(pl.tag);
		}
		random_key(&k);
		table_place(&pl, &k, seed, 96900);
		bits = table_filter_bits(pl.tag);
		past += (word & bits) == bits;
	}
	snprintf(
		name, sizeof(name),
		"filter: an unknown key gets past a word of %d buckets at two independent bits' odds",
		n);
	check(fabs((double)past / probes - want) < 5 * sd, name, "%u of %u (%.2f%%, want %.2f%%)",
	      past, probes, 100.0 * past / probes, 100 * want);
}

void suite_placement(void)
{
	test_filter_bits();
	test_filter_odds(2, 0.01438);
	test_filter_odds(6, 0.10152);
	test_filter_odds(12, 0.28693);
	test_inline_round_trip(SLUICE_INLINE_SETS);
	test_inline_round_trip(96900);
	test_inline_round_trip(1U << 20);
	test_inline_round_trip(11627907);
	test_prefix_edges();
	test_paired();
	test_sizing();
}
