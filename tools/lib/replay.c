// SPDX-License-Identifier: GPL-2.0
/* Patterns through the real datapath under the test clock (replay.h). */
#include <errno.h>
#include <linux/bpf.h>
#include <stdlib.h>
#include "fixture.h"
#include "frames.h"
#include "replay.h"

#define MS (NSEC_PER_SEC / 1000)

/* clang-format off: one pattern per entry, phases in time order */
const struct replay_pattern replay_patterns[PATTERN_COUNT] = {
	/* Ten times the limit, evenly, for 20 s. */
	[PATTERN_STEADY] = { "steady flood", { { 0, 1 * MS, 20000 } }, 20 * NSEC_PER_SEC },
	/* 2 s at ten times the limit, 3 s off, four times. */
	[PATTERN_ON_OFF] = { "on/off bursts",
			     { { 0, 1 * MS, 2000 },
			       { 5000 * MS, 1 * MS, 2000 },
			       { 10000 * MS, 1 * MS, 2000 },
			       { 15000 * MS, 1 * MS, 2000 } },
			     20 * NSEC_PER_SEC },
	/* Idle, then 20 times the limit from 0.1 s before a window edge to 0.1 s after. */
	[PATTERN_EDGE] = { "burst across a window edge",
			   { { 10900 * MS, MS / 2, 400 } },
			   20 * NSEC_PER_SEC },
	/* A tenth of the limit for 10 s, then ten times it for 10 s. */
	[PATTERN_SLOW_THEN_FLOOD] = { "slow source, then a flood",
				      { { 0, 100 * MS, 100 }, { 10000 * MS, 1 * MS, 10000 } },
				      20 * NSEC_PER_SEC },
};
/* clang-format on */

static size_t pattern_packets(const struct replay_pattern *p)
{
	size_t n = 0;
	int i;

	for (i = 0; i < REPLAY_PHASES_MAX; i++)
		n += p->phases[i].count;
	return n;
}

int replay_run(const struct settings *s, const struct replay_pattern *p, struct replay_result *r)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.13", .payload = 18 };
	struct fixture fx;
	struct frame f;
	uint64_t k, t;
	int i, err;

	r->offered = pattern_packets(p);
	r->passed = 0;
	r->passed_at = calloc(r->offered ? r->offered : 1, sizeof(*r->passed_at));
	if (!r->passed_at)
		return -ENOMEM;
	frame_build(&f, &spec);
	err = fixture_open_test_clock(&fx, s, 64);
	if (err) {
		replay_free(r);
		return err;
	}
	for (i = 0; i < REPLAY_PHASES_MAX && !err; i++) {
		for (k = 0; k < p->phases[i].count; k++) {
			t = p->phases[i].at_ns + k * p->phases[i].gap_ns;
			fixture_set_clock(&fx, REPLAY_START_NS + t);
			err = fixture_run(&fx, f.data, f.len, 1);
			if (err < 0)
				break;
			if (err == XDP_PASS)
				r->passed_at[r->passed++] = t;
			err = 0;
		}
	}
	fixture_close(&fx);
	if (err)
		replay_free(r);
	return err;
}

void replay_free(struct replay_result *r)
{
	free(r->passed_at);
	r->passed_at = NULL;
}

uint64_t replay_max_in_window(const struct replay_result *r, uint64_t window_ns)
{
	size_t lo = 0, hi, best = 0;

	/* Two pointers: the packets in [passed_at[lo], passed_at[lo] + window). */
	for (hi = 0; hi < r->passed; hi++) {
		while (r->passed_at[hi] - r->passed_at[lo] >= window_ns)
			lo++;
		if (hi - lo + 1 > best)
			best = hi - lo + 1;
	}
	return best;
}

double replay_mean_rate(const struct replay_result *r, const struct replay_pattern *p)
{
	return (double)r->passed * NSEC_PER_SEC / (double)p->length_ns;
}
