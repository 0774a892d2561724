// SPDX-License-Identifier: GPL-2.0
/*
 * One bucket hammered from every CPU at once: a thread pinned to each CPU
 * runs the production program (real clock) through BPF_PROG_TEST_RUN.
 * The bucket is one source's, or a /24 aggregate's with a source of its
 * own per CPU, or that /24's with one source passing and, on every other
 * CPU, a source its rule refuses, whose every packet takes from the /24
 * and gives it back. The total passed must never exceed burst + rate x elapsed,
 * plus one per CPU. Each BPF_PROG_TEST_RUN call with repeat > 1 also waits for an RCU
 * grace period (XDP dispatcher update), leaving gaps without packets; a
 * small bucket loses that credit, as it should. So only where the
 * tolerance spans the gaps (1 s) must the total also reach 90% of
 * burst + rate x elapsed (the first and last grace periods fall inside
 * "elapsed" but carry no packets); elsewhere it must exceed the burst.
 * The window algorithms and the warm-up are hammered the same way, each
 * against the most its definition lets through (hammer_ceiling).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "reads/counters.h"
#include "suites.h"

#define RUNS_PER_THREAD 20
#define REPEAT_PER_RUN	200000

struct hammer {
	pthread_t thread;
	int cpu;
	struct fixture *fx;
	const struct frame *frame;
	pthread_barrier_t *start;
	uint64_t begin_ns, end_ns;
	int err;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	int i, ret;

	h->err = pin_thread_to_cpu(h->cpu);
	pthread_barrier_wait(h->start);
	h->begin_ns = monotonic_ns();
	for (i = 0; i < RUNS_PER_THREAD && !h->err; i++) {
		ret = fixture_run(h->fx, h->frame->data, h->frame->len, REPEAT_PER_RUN);
		if (ret < 0)
			h->err = ret;
	}
	h->end_ns = monotonic_ns();
	return NULL;
}

/* The limit under test: the default policy's own, or a /24 aggregate's. */
struct hammered {
	uint64_t rate, burst;
	bool aggregate;	   /* one source per CPU, all in one /24 */
	bool roomy;	   /* never over the limit: every refusal must be a counted contention */
	bool refunds;	   /* one source per CPU in one /24, of which only CPU 0's is admitted */
	uint8_t algorithm; /* of the source's own slot; windows of 100 ms */
	uint64_t warmup_ns;
};

#define HAMMER_WINDOW_NS (NSEC_PER_SEC / 10)

/*
 * The most a slot may pass over elapsed ns, from its definition: a window
 * counts at most rate x window in each window the run touches; a warm-up
 * has no burst, and paces at most at the rate; GCRA adds its burst.
 */
static uint64_t hammer_ceiling(const struct hammered *b, uint64_t elapsed, int ncpu)
{
	uint64_t per_window = b->rate * HAMMER_WINDOW_NS / NSEC_PER_SEC;

	if (b->algorithm != SLUICE_METER_GCRA)
		return per_window * (elapsed / HAMMER_WINDOW_NS + 2) + (uint64_t)ncpu;
	if (b->warmup_ns)
		return 1 + b->rate * elapsed / NSEC_PER_SEC + (uint64_t)ncpu;
	return b->burst + b->rate * elapsed / NSEC_PER_SEC + (uint64_t)ncpu;
}

static int hammer_open(struct fixture *fx, const struct hammered *b)
{
	struct settings s;
	const char *why;
	char agg[96];

	if (!b->aggregate) {
		settings_per_second(&s, b->rate, b->burst);
		s.algorithm = b->algorithm;
		s.warmup_ns = b->warmup_ns;
		if (b->algorithm != SLUICE_METER_GCRA)
			s.window_ns = HAMMER_WINDOW_NS;
		return fixture_open_real_clock(fx, &s, 64);
	}
	/* Sources far under their own limit: only the aggregate refuses. */
	settings_per_second(&s, RATE_METERED_MAX_PER_SEC, BURST_MAX);
	snprintf(agg, sizeof(agg), "/24=%llu/s,burst=%llu", (unsigned long long)b->rate,
		 (unsigned long long)b->burst);
	s.n_aggregates = 1;
	if (parse_aggregate(agg, &s.aggregates[0], &why))
		return -EINVAL;
	/* One new source an hour, and as much overflow: the others are refused. */
	if (b->refunds &&
	    (parse_rate("1/h", &s.new_sources, &why) || parse_rate("1/h", &s.overflow, &why)))
		return -EINVAL;
	return fixture_open_real_clock(fx, &s, 64);
}

/* Admits CPU 0's source, then spends the overflow bucket on others of the /24. */
static void hammer_prepare(struct fixture *fx, const struct frame *cpu0)
{
	struct frame_spec spec = { .family = 4, .payload = 18 };
	struct frame f;
	char src[32];
	int i;

	fixture_run(fx, cpu0->data, cpu0->len, 1);
	for (i = 200; i < 210; i++) {
		snprintf(src, sizeof(src), "192.0.2.%d", i);
		spec.src = src;
		frame_build(&f, &spec);
		fixture_run(fx, f.data, f.len, 1);
	}
}

static void hammer_case(const char *name, const struct hammered *b, bool gaps_absorbed)
{
	uint64_t burst = b->burst, rate = b->rate;
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i, err = 0;
	uint64_t first = UINT64_MAX, last = 0, passed, ceiling, floor_, contended, dropped;
	pthread_barrier_t start;
	struct sluice_stats st = {}, before = {};
	struct hammer *h;
	struct frame_spec spec = { .family = 4, .payload = 18 };
	struct fixture fx;
	struct frame *f;
	char src[32];

	h = calloc((size_t)ncpu, sizeof(*h));
	f = calloc((size_t)ncpu, sizeof(*f));
	if (!h || !f || hammer_open(&fx, b)) {
		check(false, name, "cannot load");
		free(h);
		free(f);
		return;
	}
	pthread_barrier_init(&start, NULL, (unsigned int)ncpu);
	for (i = 0; i < ncpu; i++) {
		snprintf(src, sizeof(src), "192.0.2.%d", b->aggregate ? i + 1 : 99);
		spec.src = src;
		frame_build(&f[i], &spec);
	}
	if (b->refunds) {
		hammer_prepare(&fx, &f[0]);
		fixture_stats(&fx, &before);
	}
	for (i = 0; i < ncpu; i++) {
		h[i] = (struct hammer){ .cpu = i, .fx = &fx, .frame = &f[i], .start = &start };
		pthread_create(&h[i].thread, NULL, hammer_run, &h[i]);
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(h[i].thread, NULL);
		err = err ? err : h[i].err;
		/* With refunds only CPU 0's source passes: its run is the time that counts. */
		if (b->refunds && i > 0)
			continue;
		first = h[i].begin_ns < first ? h[i].begin_ns : first;
		last = h[i].end_ns > last ? h[i].end_ns : last;
	}
	fixture_stats(&fx, &st);
	passed = st.c[SLUICE_CNT_PASSED].packets - before.c[SLUICE_CNT_PASSED].packets;
	st.c[SLUICE_CNT_DROPPED].packets -= before.c[SLUICE_CNT_DROPPED].packets;
	ceiling = hammer_ceiling(b, last - first, ncpu);
	floor_ = gaps_absorbed ? (ceiling - (uint64_t)ncpu) * 90 / 100 : burst + 1;
	/* A window passes its whole limit in the first window; a warm-up its first packets. */
	if (b->algorithm != SLUICE_METER_GCRA)
		floor_ = rate * HAMMER_WINDOW_NS / NSEC_PER_SEC;
	else if (b->warmup_ns)
		floor_ = 2;
	contended = st.c[SLUICE_CNT_CONTENDED].packets;
	dropped = st.c[SLUICE_CNT_DROPPED].packets;
	/* Never over its limit: everything passes but the counted contention. */
	if (b->roomy)
		floor_ = (uint64_t)ncpu * RUNS_PER_THREAD * REPEAT_PER_RUN - contended;
	check(!err && passed <= ceiling && passed >= floor_ && contended <= dropped &&
		      (!b->roomy || dropped == contended) &&
		      passed + dropped == (uint64_t)ncpu * RUNS_PER_THREAD * REPEAT_PER_RUN,
	      name,
	      "err %d passed %llu, allowed at most %llu, at least %llu (%d CPUs, %.3f s); "
	      "dropped %llu, contended %llu",
	      err, (unsigned long long)passed, (unsigned long long)ceiling,
	      (unsigned long long)floor_, ncpu, (double)(last - first) / 1e9,
	      (unsigned long long)dropped, (unsigned long long)contended);
	printf("     %s: %llu passed of %llu offered over %.3f s on %d CPUs; ceiling %llu, "
	       "%llu contended\n",
	       name, (unsigned long long)passed, (unsigned long long)(passed + dropped),
	       (double)(last - first) / 1e9, ncpu, (unsigned long long)ceiling,
	       (unsigned long long)contended);
	pthread_barrier_destroy(&start);
	fixture_close(&fx);
	free(h);
	free(f);
}

/* Runs f once on cpu (the test clock's time), returning the verdict. */
static int run_on(struct fixture *fx, int cpu, const struct frame *f)
{
	return pin_thread_to_cpu(cpu) ? -1 : fixture_run(fx, f->data, f->len, 1);
}

/* The TAT of key's bucket (0 if none); with tat, sets it first (as a refund's CAS does). */
static __u64 bucket_tat(struct fixture *fx, const struct sluice_key *key, __u64 tat)
{
	struct sluice_set s;
	__u32 set;
	int w = fixture_bucket_way(fx, key, &set, &s);

	if (w < 0)
		return 0;
	if (tat) {
		s.ways.tat[w] = tat;
		if (bpf_map_update_elem(fx->st.maps.buckets, &set, &s, BPF_ANY))
			return 0;
	}
	return s.ways.tat[w];
}

/*
 * The bound docs/design.md states for refunds under the over-limit cache,
 * on two CPUs of the test clock at one instant t0 (10/s, burst 10): CPU 0
 * passes 9, CPU 1 the 10th, whose charge CPU 0's 11th then sees and is
 * refused on: its cache entry is computed from that TAT. CPU 1's charge
 * is then given back, as a refund's compare-and-swap leaves it (an
 * aggregate refused that packet: the refund runs in the same program run,
 * which a test run cannot split). The bucket has room again, yet CPU 0's
 * cache refuses: the source is refused longer than needed, by at most the
 * refunded packet's cost, here one 100 ms interval. CPU 1, without the
 * entry, passes at t0; CPU 0 passes again at t0 + 100 ms.
 */
static void case_refund_bound(void)
{
	struct frame_spec spec = { .family = 4, .src = "192.0.2.99", .payload = 18 };
	struct sluice_key key = { .family = SLUICE_FAMILY_IPV4, .prefix_len = 32 };
	uint64_t t0 = 100ULL * NSEC_PER_SEC, cost_ns = NSEC_PER_SEC / 10;
	__u64 tat9, tat10, after;
	int i, passed = 0, refused, cached, other, later;
	struct fixture fx;
	struct settings s;
	struct frame f;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || stay_on_this_cpu() < 0) {
		check(false, "refunds and the over-limit cache: two CPUs", "one CPU online");
		return;
	}
	settings_per_second(&s, 10, 10);
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "refunds and the over-limit cache: loads", "failed");
		back_to_every_cpu();
		return;
	}
	inet_pton(AF_INET, spec.src, &key.addr[0]);
	frame_build(&f, &spec);
	fixture_set_clock(&fx, t0);
	for (i = 0; i < 9; i++)
		passed += run_on(&fx, 0, &f) == XDP_PASS;
	tat9 = bucket_tat(&fx, &key, 0);
	passed += run_on(&fx, 1, &f) == XDP_PASS;
	tat10 = bucket_tat(&fx, &key, 0);
	refused = run_on(&fx, 0, &f) == XDP_DROP;
	/* CPU 1's packet given back: the bucket as before it. */
	bucket_tat(&fx, &key, tat9);
	cached = run_on(&fx, 0, &f) == XDP_DROP;
	after = bucket_tat(&fx, &key, 0);
	check(passed == 10 && refused && tat10 > tat9 && cached && after == tat9,
	      "a refund under another CPU's cache entry: refused with room in the bucket",
	      "%d passed of 10, 11th %s, then %s; TAT %llu, was %llu", passed,
	      refused ? "refused" : "passed", cached ? "refused" : "passed",
	      (unsigned long long)after, (unsigned long long)tat9);
	other = run_on(&fx, 1, &f);
	fixture_set_clock(&fx, t0 + cost_ns);
	later = run_on(&fx, 0, &f);
	check(other == XDP_PASS && later == XDP_PASS,
	      "... by at most the refunded packet's cost: the other CPU passes, and it at t0 + T",
	      "other CPU %s at t0, this one %s at t0 + 100 ms",
	      other == XDP_PASS ? "passed" : "refused", later == XDP_PASS ? "passed" : "refused");
	fixture_close(&fx);
	back_to_every_cpu();
}

void suite_concurrency(void)
{
	const struct hammered fast = { 1000000, 1000 }, wide = { 100000, 100000 }, slow = { 50, 1 },
			      agg_fast = { 1000000, 1000, true },
			      agg_wide = { 100000, 100000, true },
			      roomy = { RATE_METERED_MAX_PER_SEC, BURST_MAX, false, true },
			      agg_roomy = { RATE_METERED_MAX_PER_SEC, BURST_MAX, true, true },
			      agg_refunds = { 100000, 100000, true, false, true },
			      fixed = { .rate = 1000000, .algorithm = SLUICE_METER_FIXED_WINDOW },
			      sliding = { .rate = 100000,
					  .algorithm = SLUICE_METER_SLIDING_WINDOW },
			      warm = { .rate = 1000, .warmup_ns = NSEC_PER_SEC };

	/* Contended CAS on every admission, precise clock throughout. */
	hammer_case("all CPUs, 1M/s burst 1000: never over-admits", &fast, false);
	/* Tolerance of 1 s: exact, and the over-limit cache judges by jiffies. */
	hammer_case("all CPUs, 100k/s burst 100k: exact", &wide, true);
	hammer_case("all CPUs, 50/s burst 1: never over-admits", &slow, false);
	/* The same for an aggregate that every CPU's own source shares. */
	hammer_case("aggregate /24 from all CPUs, 1M/s burst 1000: never over-admits", &agg_fast,
		    false);
	hammer_case("aggregate /24 from all CPUs, 100k/s burst 100k: exact", &agg_wide, true);
	/* Under the limit throughout: a refusal can only be a lost race, and is counted. */
	hammer_case("all CPUs, 16M/s burst 1e9: every refusal counted as contended", &roomy, false);
	hammer_case(
		"aggregate /24 from all CPUs, 16M/s burst 1e9: every refusal counted as contended",
		&agg_roomy, false);
	/* Every algorithm's slot takes one compare-and-swap: exact from every CPU too. */
	hammer_case("all CPUs, fixed-window 1M/s in 100 ms windows: never over its windows", &fixed,
		    false);
	hammer_case("all CPUs, sliding-window 100k/s in 100 ms windows: never over its windows",
		    &sliding, false);
	hammer_case("all CPUs, gcra 1000/s --warmup 1s: never over the rate", &warm, false);
	/* Refused packets on the other CPUs give back all they took, to the /24 only. */
	hammer_case("aggregate /24, one source passing while the rest are refused on every other "
		    "CPU: exact",
		    &agg_refunds, true);
	case_refund_bound();
}
