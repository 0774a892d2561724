// SPDX-License-Identifier: GPL-2.0
/*
 * Per-source counts for `sluice top`, under the test clock: a bucket counts
 * what passed and what went over its limit; refusals the per-CPU cache
 * answers wait in the cache entry (no shared write on the fast path) and
 * reach the bucket in one add when the source next reaches it or another
 * source takes the entry. The thread stays on one CPU so that "the cache"
 * is one entry.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "reads/sources.h"
#include "suites.h"

#define T0 (100 * NSEC_PER_SEC)

struct counts {
	uint64_t passed, dropped; /* in the bucket itself */
	uint64_t pending;	  /* in this CPU's cache entry, for this key */
	uint64_t total_dropped;	  /* what `top` shows: bucket + every cache */
};

static void key_v4(struct sluice_key *key, const char *addr)
{
	memset(key, 0, sizeof(*key));
	key->family = SLUICE_FAMILY_IPV4;
	key->prefix_len = 32;
	inet_pton(AF_INET, addr, key->addr);
}

struct pending_of {
	const struct sluice_key *key;
	int cpu;
	uint64_t n;
};

static int pending_sum(int cpu, const struct sluice_key *key, uint64_t n, void *ctx)
{
	struct pending_of *want = ctx;

	if (cpu == want->cpu && !memcmp(key, want->key, sizeof(*key)))
		want->n += n;
	return 0;
}

/* The refusals this CPU's cache holds for key. */
static uint64_t pending_of(struct fixture *fx, const struct sluice_key *key, int cpu)
{
	struct pending_of want = { key, cpu, 0 };

	return hot_walk(fx->st.maps.hot, pending_sum, &want) ? 0 : want.n;
}

static int counts_of(struct fixture *fx, const struct sluice_key *key, int cpu, struct counts *c)
{
	const struct source_row *row;
	struct source_index ix;
	struct source_table t;
	struct sluice_bucket b;

	if (fixture_bucket(fx, key, &b) || sources_read(fx->st.maps.buckets, fx->st.maps.hot, &t))
		return -1;
	c->passed = b.passed;
	c->dropped = b.dropped;
	c->pending = pending_of(fx, key, cpu);
	if (sources_index(&t, &ix)) {
		sources_free(&t);
		return -1;
	}
	row = sources_lookup(&ix, key);
	c->total_dropped = row ? row->b.dropped : 0;
	sources_index_free(&ix);
	sources_free(&t);
	return 0;
}

static int run_n(struct fixture *fx, const char *src, uint32_t n)
{
	struct frame_spec spec = { .family = 4, .src = src, .payload = 18 };
	struct frame f;

	frame_build(&f, &spec);
	return fixture_run(fx, f.data, f.len, n);
}

#define COUNTS_FMT "bucket passed %llu dropped %llu, cache %llu, top %llu"
#define COUNTS_ARGS(c)                                                   \
	(unsigned long long)(c).passed, (unsigned long long)(c).dropped, \
		(unsigned long long)(c).pending, (unsigned long long)(c).total_dropped

/* One source, 100 packets at one instant, burst 5; then another source takes the cache. */
static void case_cache_and_flush(int cpu, uint32_t action, const char *name)
{
	struct sluice_key a, b;
	struct counts ca = {}, cb = {};
	struct fixture fx;
	struct settings s;
	int ok;

	settings_per_second(&s, 1, 5);
	s.action = action;
	key_v4(&a, "198.51.100.1");
	key_v4(&b, "198.51.100.2");
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, name, "cannot load");
		return;
	}
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.1", 100);
	ok = !counts_of(&fx, &a, cpu, &ca);
	check(ok && ca.passed == 5 && ca.dropped == 1 && ca.pending == 94 && ca.total_dropped == 95,
	      name, "after 100 packets: " COUNTS_FMT, COUNTS_ARGS(ca));

	/* Source b goes over its limit and takes the cache: a's 94 reach a's bucket. */
	run_n(&fx, "198.51.100.2", 7);
	ok = !counts_of(&fx, &a, cpu, &ca) && !counts_of(&fx, &b, cpu, &cb);
	check(ok && ca.dropped == 95 && ca.pending == 0 && ca.total_dropped == 95 &&
		      cb.passed == 5 && cb.total_dropped == 2 && cb.dropped + cb.pending == 2,
	      action == SLUICE_ACTION_DRY_RUN
		      ? "dry run: another source taking the cache hands the pending count on"
		      : "another source taking the cache hands the pending count to its bucket",
	      "a: " COUNTS_FMT "; b: " COUNTS_FMT, COUNTS_ARGS(ca), COUNTS_ARGS(cb));
	fixture_close(&fx);
}

/* A configuration change retires the cache entry; its count rides on the next add. */
static void case_generation(int cpu)
{
	struct sluice_key a;
	struct counts c = {};
	struct fixture fx;
	int ok;
	struct settings s;

	settings_per_second(&s, 1, 1);
	key_v4(&a, "198.51.100.3");
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "count survives a configuration change", "cannot load");
		return;
	}
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.3", 11); /* 1 passes, 1 to the bucket, 9 cached */
	fixture_configure(&fx, &s);
	run_n(&fx, "198.51.100.3", 1); /* slow path again: 1 + 9 in one add */
	ok = !counts_of(&fx, &a, cpu, &c);
	check(ok && c.passed == 1 && c.dropped == 11 && c.pending == 0 && c.total_dropped == 11,
	      "the cached count reaches the bucket when the source next reaches it", COUNTS_FMT,
	      COUNTS_ARGS(c));
	fixture_close(&fx);
}

/* Time passes: the source conforms again and its passes are counted too. */
static void case_passes_over_time(int cpu)
{
	struct sluice_key a;
	struct counts c = {};
	struct fixture fx;
	struct settings s;
	int i, ok;

	settings_per_second(&s, 10, 2);
	key_v4(&a, "198.51.100.4");
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "passes over time", "cannot load");
		return;
	}
	/* 3 packets every 10 ms from 0 to 990 ms: burst 2 at 0, then one every 100 ms. */
	for (i = 0; i < 100; i++) {
		fixture_set_clock(&fx, T0 + (uint64_t)i * 10000000);
		run_n(&fx, "198.51.100.4", 3);
	}
	ok = !counts_of(&fx, &a, cpu, &c);
	check(ok && c.passed == 11 && c.total_dropped == 289,
	      "a source over 1 s: passed = burst + rate x time, dropped = the rest", COUNTS_FMT,
	      COUNTS_ARGS(c));
	fixture_close(&fx);
}

/*
 * A source with no bucket yet, refused by its aggregate while a neighbour
 * spent it: those refusals (the first at the aggregate, the rest from the
 * cache) reach the bucket it gets once the aggregate refills.
 */
static void case_no_bucket_yet(int cpu)
{
	struct sluice_key a;
	struct counts c = {};
	struct fixture fx;
	int ok;

	key_v4(&a, "198.51.100.6");
	if (fixture_open_conf(&fx, "default rate 1k/s burst 100 aggregate /24=1/s,burst=1\n", 64,
			      T0)) {
		check(false, "refusals before a bucket", "cannot load");
		return;
	}
	run_n(&fx, "198.51.100.5", 1); /* the neighbour spends the aggregate */
	run_n(&fx, "198.51.100.6", 6); /* refused: 1 at the aggregate, 5 by the cache */
	fixture_set_clock(&fx, T0 + NSEC_PER_SEC);
	run_n(&fx, "198.51.100.6", 1); /* passes, and gets a bucket */
	ok = !counts_of(&fx, &a, cpu, &c);
	check(ok && c.passed == 1 && c.dropped == 6 && c.pending == 0 && c.total_dropped == 6,
	      "refusals before a source has a bucket reach the bucket it gets", COUNTS_FMT,
	      COUNTS_ARGS(c));
	fixture_close(&fx);
}

/*
 * A source whose idle bucket went to another source while the cache still
 * held its refusals: they reach the bucket it gets when it comes back. A
 * table of 16 ways; 40 other sources take them all, the source's included.
 */
static void case_bucket_given_away(int cpu)
{
	struct sluice_key a;
	struct counts c = {};
	struct fixture fx;
	struct settings s;
	char src[32];
	int i, ok;

	settings_per_second(&s, 1, 1);
	key_v4(&a, "198.51.100.7");
	if (fixture_open_test_clock(&fx, &s, 8)) {
		check(false, "refusals of a bucket given away", "cannot load");
		return;
	}
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.7", 7); /* 1 passes, 1 to the bucket, 5 cached */
	fixture_set_clock(&fx, T0 + 2 * NSEC_PER_SEC);
	for (i = 0; i < 40; i++) {
		snprintf(src, sizeof(src), "10.30.0.%d", i + 1);
		run_n(&fx, src, 1);
	}
	ok = !fixture_has_bucket(&fx, &a);
	fixture_set_clock(&fx, T0 + 4 * NSEC_PER_SEC);
	run_n(&fx, "198.51.100.7", 1); /* passes into a new bucket */
	ok = ok && !counts_of(&fx, &a, cpu, &c);
	check(ok && c.passed == 1 && c.dropped == 5 && c.pending == 0,
	      "refusals cached for a bucket given away reach the source's next bucket", COUNTS_FMT,
	      COUNTS_ARGS(c));
	fixture_close(&fx);
}

void suite_counts(void)
{
	cpu_set_t old, one;
	int cpu = sched_getcpu();

	sched_getaffinity(0, sizeof(old), &old);
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (cpu < 0 || sched_setaffinity(0, sizeof(one), &one)) {
		check(false, "per-source counts", "cannot stay on one CPU");
		return;
	}
	case_cache_and_flush(cpu, SLUICE_ACTION_DROP,
			     "over-limit packets: one in the bucket, the cached ones pending");
	case_cache_and_flush(cpu, SLUICE_ACTION_DRY_RUN,
			     "dry run: would-drops counted the same way per source");
	case_generation(cpu);
	case_passes_over_time(cpu);
	case_no_bucket_yet(cpu);
	case_bucket_given_away(cpu);
	sched_setaffinity(0, sizeof(old), &old);
}
