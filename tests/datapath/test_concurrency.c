// SPDX-License-Identifier: GPL-2.0
/*
 * One source hammered from every CPU at once: a thread pinned to each CPU
 * runs the production program (real clock) through BPF_PROG_TEST_RUN.
 * The total passed must never exceed burst + rate x elapsed, plus one per
 * CPU. Each BPF_PROG_TEST_RUN call with repeat > 1 also waits for an RCU
 * grace period (XDP dispatcher update), leaving gaps without packets; a
 * small bucket loses that credit, as it should. So only where the
 * tolerance spans the gaps (1 s) must the total also reach 90% of
 * burst + rate x elapsed (the first and last grace periods fall inside
 * "elapsed" but carry no packets); elsewhere it must exceed the burst.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
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

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	cpu_set_t set;
	int i, ret;

	CPU_ZERO(&set);
	CPU_SET(h->cpu, &set);
	h->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
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

static void hammer_case(const char *name, uint64_t rate, uint64_t burst, bool gaps_absorbed)
{
	struct frame_spec spec = { .family = 4, .src = "192.0.2.99", .payload = 18 };
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i, err = 0;
	uint64_t first = UINT64_MAX, last = 0, passed, ceiling, floor_;
	pthread_barrier_t start;
	struct sluice_stats st = {};
	struct hammer *h;
	struct fixture fx;
	struct settings s;
	struct frame f;

	settings_per_second(&s, rate, burst);
	frame_build(&f, &spec);
	h = calloc((size_t)ncpu, sizeof(*h));
	if (!h || fixture_open_real_clock(&fx, &s, 64)) {
		check(false, name, "cannot load");
		free(h);
		return;
	}
	pthread_barrier_init(&start, NULL, (unsigned int)ncpu);
	for (i = 0; i < ncpu; i++) {
		h[i] = (struct hammer){ .cpu = i, .fx = &fx, .frame = &f, .start = &start };
		pthread_create(&h[i].thread, NULL, hammer_run, &h[i]);
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(h[i].thread, NULL);
		err = err ? err : h[i].err;
		first = h[i].begin_ns < first ? h[i].begin_ns : first;
		last = h[i].end_ns > last ? h[i].end_ns : last;
	}
	fixture_stats(&fx, &st);
	passed = st.c[SLUICE_CNT_PASSED].packets;
	ceiling = burst + rate * (last - first) / NSEC_PER_SEC + (uint64_t)ncpu;
	floor_ = gaps_absorbed ? (ceiling - (uint64_t)ncpu) * 90 / 100 : burst + 1;
	check(!err && passed <= ceiling && passed >= floor_ &&
		      passed + st.c[SLUICE_CNT_DROPPED].packets ==
			      (uint64_t)ncpu * RUNS_PER_THREAD * REPEAT_PER_RUN,
	      name, "err %d passed %llu, allowed at most %llu, at least %llu (%d CPUs, %.3f s)",
	      err, (unsigned long long)passed, (unsigned long long)ceiling,
	      (unsigned long long)floor_, ncpu, (double)(last - first) / 1e9);
	printf("     %s: %llu passed of %llu offered over %.3f s on %d CPUs; ceiling %llu\n", name,
	       (unsigned long long)passed,
	       (unsigned long long)(passed + st.c[SLUICE_CNT_DROPPED].packets),
	       (double)(last - first) / 1e9, ncpu, (unsigned long long)ceiling);
	pthread_barrier_destroy(&start);
	fixture_close(&fx);
	free(h);
}

void suite_concurrency(void)
{
	/* Contended CAS on every admission, precise clock throughout. */
	hammer_case("all CPUs, 1M/s burst 1000: never over-admits", 1000000, 1000, false);
	/* Tolerance of 1 s: exact, and the over-limit cache judges by jiffies. */
	hammer_case("all CPUs, 100k/s burst 100k: exact", 100000, 100000, true);
	hammer_case("all CPUs, 50/s burst 1: never over-admits", 50, 1, false);
}
