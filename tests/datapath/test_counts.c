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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "hot_key.h"
#include "maps/policy_maps.h"
#include "pins/datapath.h"
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

	if (fixture_bucket(fx, key, &b) || sources_read(&fx->st.maps, &t))
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

/* The hash of an IPv4 source's cache lines, under these seeds. */
static __u64 hash_of(const __u64 seed[3], const char *src)
{
	__u32 addr[4] = { 0 };

	inet_pton(AF_INET, src, addr);
	return hot_hash(SLUICE_FAMILY_IPV4, addr, seed);
}

/* n sources of 10.64.0.0/10 whose first cache line is `want` (8 expected among 2^16 per line). */
static int first_in_line(const __u64 seed[3], uint32_t want, char (*found)[32], int n)
{
	char src[32];
	int i, k = 0;

	for (i = 0; i < (1 << 20) && k < n; i++) {
		snprintf(src, sizeof(src), "10.%d.%d.%d", 64 + i / 65536, i / 256 % 256, i % 256);
		if (hot_line_of(SLUICE_FAMILY_IPV4, hash_of(seed, src)) == want)
			snprintf(found[k++], sizeof(found[0]), "%s", src);
	}
	return k == n ? 0 : -1;
}

/*
 * Sources to fill both lines of one: found[0] and [1] share a's first
 * line, found[2] and [3] fill found[0]'s second line.
 */
static int colliding(struct fixture *fx, const char *a, char (*found)[32])
{
	struct sluice_config cfg;
	uint32_t first, second;

	if (config_read(&fx->st.maps, &cfg))
		return -1;
	first = hot_line_of(SLUICE_FAMILY_IPV4, hash_of(cfg.table_seed, a));
	if (first_in_line(cfg.table_seed, first, found, 2))
		return -1;
	second = hot_line2_of(SLUICE_FAMILY_IPV4, hash_of(cfg.table_seed, found[0]));
	if (second == first)
		return -1;
	return first_in_line(cfg.table_seed, second, found + 2, 2);
}

/*
 * A fixture at 1/s, burst 5, under `action`, and sources filling both lines
 * of 198.51.100.1's (colliding); -1, reported under `name`, when not.
 */
static int open_colliding(struct fixture *fx, uint32_t action, char (*found)[32], const char *name)
{
	struct settings s;

	settings_per_second(&s, 1, 5);
	s.action = action;
	if (fixture_open_test_clock(fx, &s, 64)) {
		check(false, name, "cannot load");
		return -1;
	}
	if (colliding(fx, "198.51.100.1", found)) {
		check(false, name, "no sources found to fill both lines of one");
		fixture_close(fx);
		return -1;
	}
	return 0;
}

/*
 * One source, 100 packets at one instant, burst 5. Another lands in its
 * line, two more in the other line of a fourth, b, which then finds all
 * four ways live: none is taken from them, nor answers for b. Once all are
 * past their moment, b takes a's way and hands a's 94 on.
 */
static void case_cache_and_flush(int cpu, uint32_t action, const char *name)
{
	char found[4][32];
	struct sluice_key a, b, c, d;
	struct counts ca = {}, cb = {}, cc = {}, cd = {};
	struct fixture fx;
	int ok;

	if (open_colliding(&fx, action, found, name))
		return;
	key_v4(&a, "198.51.100.1");
	key_v4(&b, found[0]);
	key_v4(&c, found[1]);
	key_v4(&d, found[2]);
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.1", 100);
	ok = !counts_of(&fx, &a, cpu, &ca);
	check(ok && ca.passed == 5 && ca.dropped == 1 && ca.pending == 94 && ca.total_dropped == 95,
	      name, "after 100 packets: " COUNTS_FMT, COUNTS_ARGS(ca));

	/* c takes a's line's other way, two more b's second line; b finds all live, answered in
	 * full. */
	run_n(&fx, found[1], 7);
	run_n(&fx, found[2], 7);
	run_n(&fx, found[3], 7);
	run_n(&fx, found[0], 7);
	ok = !counts_of(&fx, &a, cpu, &ca) && !counts_of(&fx, &b, cpu, &cb) &&
	     !counts_of(&fx, &c, cpu, &cc) && !counts_of(&fx, &d, cpu, &cd);
	check(ok && ca.pending == 94 && ca.total_dropped == 95 && cc.passed == 5 &&
		      cc.dropped == 1 && cc.pending == 1 && cd.passed == 5 && cd.dropped == 1 &&
		      cd.pending == 1 && cb.passed == 5 && cb.dropped == 2 && cb.pending == 0,
	      "a source whose two lines are held live: the live entries stay, each source counted as its own",
	      "a: " COUNTS_FMT "; b: " COUNTS_FMT "; c: " COUNTS_FMT "; d: " COUNTS_FMT,
	      COUNTS_ARGS(ca), COUNTS_ARGS(cb), COUNTS_ARGS(cc), COUNTS_ARGS(cd));

	/* All past their moment: b takes its first line's first way, a's, and a's 94 reach a's
	 * bucket. */
	fixture_set_clock(&fx, T0 + 10 * NSEC_PER_SEC);
	run_n(&fx, found[0], 7);
	ok = !counts_of(&fx, &a, cpu, &ca) && !counts_of(&fx, &b, cpu, &cb);
	check(ok && ca.dropped == 95 && ca.pending == 0 && ca.total_dropped == 95 &&
		      cb.passed == 10 && cb.total_dropped == 4 && cb.dropped + cb.pending == 4,
	      action == SLUICE_ACTION_DRY_RUN
		      ? "dry run: another source taking the way hands the pending count on"
		      : "another source taking the way hands the pending count to its bucket",
	      "a: " COUNTS_FMT "; b: " COUNTS_FMT, COUNTS_ARGS(ca), COUNTS_ARGS(cb));
	fixture_close(&fx);
}

/* Whether this CPU's cache holds an entry of src in line `index`. */
static bool line_holds(struct fixture *fx, int cpu, uint32_t index, const char *src)
{
	struct sluice_hot *c = fixture_hot(fx, cpu);
	__u32 addr = 0;
	bool held = false;
	int w;

	inet_pton(AF_INET, src, &addr);
	if (c)
		for (w = 0; w < 2; w++)
			held |= c->line[index].way[w].flags && c->line[index].way[w].addr == addr;
	free(c);
	return held;
}

/* A source whose first line two others hold live is cached in its second, and answered there. */
static void case_second_line(int cpu)
{
	const char *name = "a source whose first cache line is held live is cached in its "
			   "second, and answered there";
	struct sluice_config cfg;
	char found[4][32];
	struct sluice_key b;
	struct counts cb = {};
	struct fixture fx;
	bool ok, in_first, in_second;
	__u64 hash;

	if (open_colliding(&fx, SLUICE_ACTION_DROP, found, name))
		return;
	key_v4(&b, found[0]);
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.1", 7);
	run_n(&fx, found[1], 7);
	run_n(&fx, found[0], 7);
	ok = !counts_of(&fx, &b, cpu, &cb) && !config_read(&fx.st.maps, &cfg);
	hash = hash_of(cfg.table_seed, found[0]);
	in_first = ok && line_holds(&fx, cpu, hot_line_of(SLUICE_FAMILY_IPV4, hash), found[0]);
	in_second = ok && line_holds(&fx, cpu, hot_line2_of(SLUICE_FAMILY_IPV4, hash), found[0]);
	check(ok && cb.passed == 5 && cb.dropped == 1 && cb.pending == 1 && in_second && !in_first,
	      name, COUNTS_FMT "; in its first line %d, its second %d", COUNTS_ARGS(cb), in_first,
	      in_second);
	fixture_close(&fx);
}

#define MANY 2000

static void many_src(char *src, size_t len, int i)
{
	snprintf(src, len, "10.40.%d.%d", i / 250, i % 250 + 1);
}

/* Each of the first `sources` of the MANY sends n packets at `at` ns after T0, in turn. */
static int some_send(struct fixture *fx, uint64_t at, int sources, uint32_t n)
{
	char src[32];
	int i;

	fixture_set_clock(fx, T0 + at);
	for (i = 0; i < sources; i++) {
		many_src(src, sizeof(src), i);
		if (run_n(fx, src, n) < 0)
			return -1;
	}
	return 0;
}

/* Every one of the MANY sources sends n packets at `at` ns after T0. */
static int many_send(struct fixture *fx, uint64_t at, uint32_t n)
{
	return some_send(fx, at, MANY, n);
}

/* Sums of the MANY sources' counts; -1 unless each has `passed` and `dropped` in total. */
static int many_counts(struct fixture *fx, int cpu, uint64_t passed, uint64_t dropped,
		       struct counts *sum)
{
	struct sluice_key k;
	struct counts c;
	char src[32];
	int i;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < MANY; i++) {
		many_src(src, sizeof(src), i);
		key_v4(&k, src);
		if (counts_of(fx, &k, cpu, &c) || c.passed != passed || c.total_dropped != dropped)
			return -1;
		sum->passed += c.passed;
		sum->dropped += c.dropped;
		sum->pending += c.pending;
		sum->total_dropped += c.total_dropped;
	}
	return 0;
}

/*
 * Many sources over their limits at once, far more than one entry, each
 * answered for itself: MANY sources at 10/s, burst 1, 4 packets each at T0
 * (1 passes, 1 reaches the bucket, 2 the cache answers), 1 more 99.9 ms
 * later (still refused), and 1 at 100 ms, which passes.
 */
static void case_many_sources(int cpu)
{
	struct counts held = {}, after = {};
	struct fixture fx;
	struct settings s;
	int ok;

	settings_per_second(&s, 10, 1);
	if (fixture_open_test_clock(&fx, &s, 4 * MANY)) {
		check(false, "many sources over their limits", "cannot load");
		return;
	}
	ok = !many_send(&fx, 0, 4) && !many_send(&fx, 99900000, 1) &&
	     !many_counts(&fx, cpu, 1, 4, &held);
	check(ok && held.dropped + held.pending == 4 * MANY && held.pending > 2 * MANY,
	      "2000 sources over their limits: each refused until its moment, most by the cache",
	      "%s; in buckets %llu, cached %llu", ok ? "each passed 1, refused 4" : "miscounted",
	      (unsigned long long)held.dropped, (unsigned long long)held.pending);
	ok = !many_send(&fx, 100000000, 1) && !many_counts(&fx, cpu, 2, 4, &after);
	check(ok && fixture_counter(&fx, SLUICE_CNT_PASSED) == 2 * MANY &&
		      fixture_counter(&fx, SLUICE_CNT_DROPPED) == 4 * MANY,
	      "2000 sources conform again at their moment, and their counts stay exact",
	      "%s; passed %llu, dropped %llu (counters %llu, %llu)",
	      ok ? "each passed 2, refused 4" : "miscounted", (unsigned long long)after.passed,
	      (unsigned long long)after.total_dropped,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_PASSED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_DROPPED));
	fixture_close(&fx);
}

/* This CPU's cache's weight of unanswered lookups (sluice_hot_head.unanswered), or -1. */
static int cache_unanswered(struct fixture *fx, int cpu)
{
	struct sluice_hot_head hd;

	return fixture_hot_head(fx, cpu, &hd) ? -1 : hd.unanswered;
}

/* The IPv4 entries in this CPU's cache (its first SLUICE_HOT_SETS lines), or -1. */
static int cache_entries(struct fixture *fx, int cpu)
{
	struct sluice_hot *c = fixture_hot(fx, cpu);
	int n = 0, i;

	if (!c)
		return -1;
	/* An IPv6 line's second half is its address's tail, not a way. */
	for (i = 0; i < SLUICE_HOT_SETS; i++)
		n += !!(c->line[i].way[0].flags & SLUICE_HOT_IPV4) +
		     !!(c->line[i].way[1].flags & SLUICE_HOT_IPV4);
	free(c);
	return n;
}

/* The refusals this CPU's cache holds for the first n of the MANY sources. */
static uint64_t some_pending(struct fixture *fx, int cpu, int n)
{
	struct sluice_key k;
	struct counts c;
	uint64_t sum = 0;
	char src[32];
	int i;

	for (i = 0; i < n; i++) {
		many_src(src, sizeof(src), i);
		key_v4(&k, src);
		if (!counts_of(fx, &k, cpu, &c))
			sum += c.pending;
	}
	return sum;
}

/*
 * A cache that answers nothing steps aside, the table's answers stay exact
 * without it, and it comes back once it can answer. MANY sources at 10/s,
 * burst 1, one packet each in turn at T0 (each passes, and none is in the
 * cache: 2000 lookups unanswered), then one more each (refused: only the
 * probes, one packet in SLUICE_HOT_PROBE_EVERY, reach the cache), one each
 * at 100 ms (each passes). Then 100 of them in turn, 40 times at 150 ms:
 * the probes' entries answer, and the cache takes every packet again.
 */
static void case_cache_steps_aside(int cpu)
{
	uint64_t before, after;
	struct counts sum = {};
	struct fixture fx;
	struct settings s;
	int ok, aside, held, back, r;

	settings_per_second(&s, 10, 1);
	if (fixture_open_test_clock(&fx, &s, 4 * MANY)) {
		check(false, "a cache that answers nothing steps aside", "cannot load");
		return;
	}
	ok = !some_send(&fx, 0, MANY, 1);
	aside = cache_unanswered(&fx, cpu);
	ok = ok && !some_send(&fx, 1000000, MANY, 1) && !many_counts(&fx, cpu, 1, 1, &sum);
	held = cache_entries(&fx, cpu);
	check(ok && aside == SLUICE_HOT_STEP_ASIDE_AFTER &&
		      held >= MANY / SLUICE_HOT_PROBE_EVERY / 2 &&
		      held <= MANY / SLUICE_HOT_PROBE_EVERY + 1,
	      "2000 new sources in turn: the cache steps aside, only probes reach it, the counts exact",
	      "%s; unanswered %d of %d; %d of %d refusals cached (one probe in %d)",
	      ok ? "each passed 1, refused 1" : "miscounted", aside, SLUICE_HOT_STEP_ASIDE_AFTER,
	      held, MANY, SLUICE_HOT_PROBE_EVERY);
	ok = !some_send(&fx, 100000000, MANY, 1) && !many_counts(&fx, cpu, 2, 1, &sum);
	check(ok && fixture_counter(&fx, SLUICE_CNT_PASSED) == 2 * MANY,
	      "with the cache aside, each of 2000 sources passes at its moment, exactly",
	      "%s; %llu passed", ok ? "each passed 2, refused 1" : "miscounted",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_PASSED));
	for (r = 0, ok = 1; ok && r < 39; r++)
		ok = !some_send(&fx, 150000000, 100, 1);
	before = some_pending(&fx, cpu, 100);
	ok = ok && !some_send(&fx, 150000000, 100, 1);
	after = some_pending(&fx, cpu, 100);
	back = cache_unanswered(&fx, cpu);
	check(ok && back == 0 && after - before == 100,
	      "100 sources over their limits in turn: the probes' answers bring the cache back",
	      "unanswered %d; the last round's 100 refusals: %llu answered by the cache", back,
	      (unsigned long long)(after - before));
	fixture_close(&fx);
}

/*
 * Sources that flood in step reach their moments together: a source the
 * cache holds at its moment is no miss, so the cache stays. IN_STEP
 * sources (more than SLUICE_HOT_STEP_ASIDE_AFTER) at 10/s, burst 1, three
 * packets each in turn at T0 (passed, refused by its bucket, then by the
 * cache), one each at 100 ms (each passes at its moment, and the full
 * path moves its entry to the next), one each at 150 ms (each refused by
 * the cache). Counted as misses, the moments shut the cache and left the
 * entries of the sources past the mark at their old moments.
 */
#define IN_STEP 1100
_Static_assert(IN_STEP > SLUICE_HOT_STEP_ASIDE_AFTER && IN_STEP <= MANY,
	       "more sources in step than the misses that shut the cache");
static void case_cache_moments_in_step(int cpu)
{
	uint64_t before, after;
	struct fixture fx;
	struct settings s;
	int ok, weight;

	settings_per_second(&s, 10, 1);
	if (fixture_open_test_clock(&fx, &s, 4 * MANY)) {
		check(false, "sources in step at their moments", "cannot load");
		return;
	}
	ok = !some_send(&fx, 0, IN_STEP, 3) && !some_send(&fx, 100000000, IN_STEP, 1);
	weight = cache_unanswered(&fx, cpu);
	before = some_pending(&fx, cpu, IN_STEP);
	ok = ok && !some_send(&fx, 150000000, IN_STEP, 1);
	after = some_pending(&fx, cpu, IN_STEP);
	check(ok && weight < SLUICE_HOT_STEP_ASIDE_AFTER && after - before == IN_STEP &&
		      fixture_counter(&fx, SLUICE_CNT_PASSED) == 2 * IN_STEP,
	      "1100 sources at their moments together: the cache stays, and refuses each after",
	      "unanswered %d (steps aside at %d); %llu of %d refusals answered by the cache; "
	      "%llu passed",
	      weight, SLUICE_HOT_STEP_ASIDE_AFTER, (unsigned long long)(after - before), IN_STEP,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_PASSED));
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

/*
 * A cached source passed at its moment: the cache learns its next moment
 * from the pass, so the packet after it is refused by the cache, not the
 * bucket, and the moment after that is still exact. 10/s, burst 1.
 */
static void case_pass_refreshes(int cpu)
{
	struct sluice_key a;
	struct counts c = {}, later = {};
	struct fixture fx;
	struct settings s;
	int ok, early, on_time;

	settings_per_second(&s, 10, 1);
	key_v4(&a, "198.51.100.4");
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "a pass refreshes the cache", "cannot load");
		return;
	}
	fixture_set_clock(&fx, T0);
	run_n(&fx, "198.51.100.4", 3); /* 1 passes, 1 to the bucket, 1 cached */
	fixture_set_clock(&fx, T0 + 100000000);
	run_n(&fx, "198.51.100.4", 3); /* its moment: 1 passes (taking the 1 cached), 2 cached */
	ok = !counts_of(&fx, &a, cpu, &c);
	fixture_set_clock(&fx, T0 + 199999999);
	early = run_n(&fx, "198.51.100.4", 1);
	fixture_set_clock(&fx, T0 + 200000000);
	on_time = run_n(&fx, "198.51.100.4", 1);
	ok = ok && !counts_of(&fx, &a, cpu, &later);
	check(ok && c.passed == 2 && c.dropped == 2 && c.pending == 2 && early == XDP_DROP &&
		      on_time == XDP_PASS && later.passed == 3 && later.total_dropped == 5,
	      "a pass at the source's moment refreshes its cache entry: the next refusals skip the bucket, the next moment is exact",
	      "after the pass: " COUNTS_FMT
	      "; XDP action 1 ns early %d, on time %d; then " COUNTS_FMT,
	      COUNTS_ARGS(c), early, on_time, COUNTS_ARGS(later));
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

/*
 * Each build counts a frame's whole length (bpf/frame.h): a linear one
 * from its pointers in the default build, a multi-buffer one (a frame
 * past a page, as BPF_PROG_TEST_RUN builds it) and every frame of the
 * Linux 6.1 build through the helper. The default build is checked only
 * where this kernel can load it.
 */
static void case_frame_lengths(bool compat)
{
	static const size_t payloads[] = { 18, 1400, 4000 };
	struct frame_spec spec = { .family = 4, .src = "192.0.2.77" };
	struct sluice_stats before, after;
	uint64_t want = 0, got;
	struct fixture fx;
	struct settings s;
	struct frame f;
	int ret = XDP_PASS;
	size_t i;

	settings_per_second(&s, RATE_METERED_MAX_PER_SEC, BURST_MAX);
	if (fixture_open_build(&fx, &s, 64, compat)) {
		check(false, "frame lengths", "cannot load the %s build",
		      compat ? "Linux 6.1" : "default");
		return;
	}
	fixture_stats(&fx, &before);
	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]) && ret == XDP_PASS; i++) {
		spec.payload = payloads[i];
		frame_build(&f, &spec);
		ret = fixture_run(&fx, f.data, f.len, 1);
		want += f.len;
	}
	fixture_stats(&fx, &after);
	got = after.c[SLUICE_CNT_PASSED].bytes - before.c[SLUICE_CNT_PASSED].bytes;
	check(ret == XDP_PASS && got == want,
	      compat ? "the Linux 6.1 build counts each frame's whole length, multi-buffer too"
		     : "the default build counts each frame's whole length, multi-buffer too",
	      "last verdict %d, %llu bytes counted of %llu", ret, (unsigned long long)got,
	      (unsigned long long)want);
	fixture_close(&fx);
}

void suite_counts(void)
{
	int cpu = stay_on_this_cpu();

	if (cpu < 0) {
		check(false, "per-source counts", "cannot stay on one CPU");
		return;
	}
	case_cache_and_flush(cpu, SLUICE_ACTION_DROP,
			     "over-limit packets: one in the bucket, the cached ones pending");
	case_cache_and_flush(cpu, SLUICE_ACTION_DRY_RUN,
			     "dry run: would-drops counted the same way per source");
	case_second_line(cpu);
	case_pass_refreshes(cpu);
	case_generation(cpu);
	case_passes_over_time(cpu);
	case_many_sources(cpu);
	case_cache_steps_aside(cpu);
	case_cache_moments_in_step(cpu);
	case_no_bucket_yet(cpu);
	case_bucket_given_away(cpu);
	if (kernel_casts_xdp_ctx())
		case_frame_lengths(false);
	case_frame_lengths(true);
	back_to_every_cpu();
}
