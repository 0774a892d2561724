// SPDX-License-Identifier: GPL-2.0
/*
 * Each algorithm's bound, computed from its definition, on the patterns of
 * tools/lib/replay.c run through the datapath under the test clock. All at
 * 100/s: a fixed or sliding window of 100 per second, a GCRA bucket of 100,
 * a warm-up of 5 s.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "replay.h"
#include "suites.h"

#define LIMIT	  100
#define WINDOW_NS NSEC_PER_SEC

static int run(uint8_t algorithm, uint64_t burst, uint64_t warmup_ns, enum replay_pattern_id p,
	       struct replay_result *r)
{
	struct settings s;

	settings_per_second(&s, LIMIT, burst);
	s.algorithm = algorithm;
	s.warmup_ns = warmup_ns;
	return replay_run(&s, &replay_patterns[p], r);
}

/* The most passed in any window aligned to a multiple of the window. */
static uint64_t max_in_aligned_window(const struct replay_result *r)
{
	uint64_t best = 0, n = 0, window = UINT64_MAX;
	size_t i;

	for (i = 0; i < r->passed; i++) {
		if (r->passed_at[i] / WINDOW_NS != window) {
			window = r->passed_at[i] / WINDOW_NS;
			n = 0;
		}
		if (++n > best)
			best = n;
	}
	return best;
}

/* Fixed window: at most the limit per window, so at most 2x around an edge, and it gets there. */
static void case_fixed_window(void)
{
	struct replay_result r;
	char name[128];
	int p;

	for (p = 0; p < PATTERN_COUNT; p++) {
		snprintf(name, sizeof(name),
			 "fixed-window, %s: at most %d per window, %d in any 1 s",
			 replay_patterns[p].name, LIMIT, 2 * LIMIT);
		if (run(SLUICE_METER_FIXED_WINDOW, 0, 0, (enum replay_pattern_id)p, &r)) {
			check(false, name, "cannot run");
			continue;
		}
		check(max_in_aligned_window(&r) == LIMIT &&
			      replay_max_in_window(&r, WINDOW_NS) <= 2 * LIMIT,
		      name, "aligned %llu, any window %llu",
		      (unsigned long long)max_in_aligned_window(&r),
		      (unsigned long long)replay_max_in_window(&r, WINDOW_NS));
		if (p == PATTERN_EDGE)
			check(replay_max_in_window(&r, WINDOW_NS) == 2 * LIMIT,
			      "fixed-window: a burst across the edge gets 2x the limit in 0.2 s",
			      "got %llu", (unsigned long long)replay_max_in_window(&r, WINDOW_NS));
		replay_free(&r);
	}
}

/*
 * Sliding-window counter: within the limit for steady traffic (its
 * documented error is 1%; the estimate is exact for an even flood), the
 * mean within 1% of the rate, and under 2x the limit for any traffic.
 */
static void case_sliding_window(void)
{
	struct replay_result r;
	uint64_t max;
	char name[128];
	int p;

	if (run(SLUICE_METER_SLIDING_WINDOW, 0, 0, PATTERN_STEADY, &r)) {
		check(false, "sliding-window, steady flood", "cannot run");
	} else {
		max = replay_max_in_window(&r, WINDOW_NS);
		check(max <= LIMIT + LIMIT / 100 &&
			      replay_mean_rate(&r, &replay_patterns[PATTERN_STEADY]) >=
				      LIMIT * 0.99,
		      "sliding-window, steady flood: within 1% of the limit in any 1 s, the mean within "
		      "1% of the rate",
		      "max %llu, mean %.2f/s", (unsigned long long)max,
		      replay_mean_rate(&r, &replay_patterns[PATTERN_STEADY]));
		replay_free(&r);
	}
	for (p = 0; p < PATTERN_COUNT; p++) {
		snprintf(name, sizeof(name), "sliding-window, %s: under %d in any 1 s",
			 replay_patterns[p].name, 2 * LIMIT);
		if (run(SLUICE_METER_SLIDING_WINDOW, 0, 0, (enum replay_pattern_id)p, &r)) {
			check(false, name, "cannot run");
			continue;
		}
		max = replay_max_in_window(&r, WINDOW_NS);
		check(max < 2 * LIMIT && max_in_aligned_window(&r) <= LIMIT, name, "max %llu",
		      (unsigned long long)max);
		replay_free(&r);
	}
}

/* GCRA: never more than burst + rate x window (+1) in any window of burst / rate. */
static void case_gcra(void)
{
	struct replay_result r;
	char name[128];
	uint64_t max;
	int p;

	for (p = 0; p < PATTERN_COUNT; p++) {
		snprintf(name, sizeof(name), "gcra burst %d, %s: at most %d in any 1 s", LIMIT,
			 replay_patterns[p].name, 2 * LIMIT + 1);
		if (run(SLUICE_METER_GCRA, LIMIT, 0, (enum replay_pattern_id)p, &r)) {
			check(false, name, "cannot run");
			continue;
		}
		max = replay_max_in_window(&r, WINDOW_NS);
		check(max <= 2 * LIMIT + 1 && max >= LIMIT, name, "max %llu",
		      (unsigned long long)max);
		replay_free(&r);
	}
}

/*
 * Guava's SmoothWarmingUp, as its definition gives it: permit k from cold
 * is taken with M - k stored and costs the curve's integral over it, I up
 * to M / 2 stored, rising linearly to 3 I at M. The number passed by each
 * moment must be within one packet of the curve's.
 */
static void case_warmup_curve(void)
{
	const double interval = (double)NSEC_PER_SEC / LIMIT, max = 5 * LIMIT;
	double due = 0, stored = max, worst = 0, off;
	struct replay_result r;
	size_t k, curve = 0;

	if (run(SLUICE_METER_GCRA, 0, 5 * NSEC_PER_SEC, PATTERN_STEADY, &r)) {
		check(false, "warm-up curve", "cannot run");
		return;
	}
	/* curve: packets the curve has passed by passed_at[k]; due: when its next one is. */
	for (k = 0; k < r.passed; k++) {
		while (due <= (double)r.passed_at[k]) {
			due += 2 * stored > max + 1
				       ? interval + 2 * interval * (2 * stored - 1 - max) / max
				       : interval;
			stored = stored > 0 ? stored - 1 : 0;
			curve++;
		}
		off = (double)curve - (double)(k + 1);
		worst = off > worst ? off : -off > worst ? -off : worst;
	}
	check(worst <= 1 && r.passed_at[1] - r.passed_at[0] >= (uint64_t)(2.9 * interval),
	      "warm-up 5s at 100/s: from cold, within one packet of Guava's curve at every step, "
	      "the first gap 3x",
	      "worst %.0f packets off, first gap %llu ns", worst,
	      (unsigned long long)(r.passed_at[1] - r.passed_at[0]));
	replay_free(&r);
}

/*
 * A warming source that goes idle stores a permit per interval again: 2 s
 * of flood spend about 110 of the 500, 3 s of idle store 300 more, capped
 * at 500, so the next burst starts cold, its second gap 3x the interval.
 */
static void case_warmup_cools(void)
{
	struct replay_result r;
	uint64_t gap = 0;
	size_t k;

	if (run(SLUICE_METER_GCRA, 0, 5 * NSEC_PER_SEC, PATTERN_ON_OFF, &r)) {
		check(false, "warm-up cools", "cannot run");
		return;
	}
	for (k = 1; k + 1 < r.passed && !gap; k++)
		if (r.passed_at[k - 1] < 5 * NSEC_PER_SEC && r.passed_at[k] >= 5 * NSEC_PER_SEC)
			gap = r.passed_at[k + 1] - r.passed_at[k];
	check(gap >= 29 * NSEC_PER_SEC / 1000 && gap <= 31 * NSEC_PER_SEC / 1000,
	      "warm-up: idle refills the stored allowance; the next burst starts cold (3x gap)",
	      "gap %llu ns", (unsigned long long)gap);
	replay_free(&r);
}

void suite_algorithms(void)
{
	case_fixed_window();
	case_sliding_window();
	case_gcra();
	case_warmup_curve();
	case_warmup_cools();
}
