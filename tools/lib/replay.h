/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Traffic patterns replayed through the real datapath (BPF_PROG_TEST_RUN,
 * test clock): one source's arrival times, the verdict of each, and what
 * an operator would measure of the admitted packets. tools/replay/replay.c prints
 * the table of docs/algorithms.md from it; tests/datapath/test_algorithms.c
 * asserts each algorithm's bounds with it.
 */
#ifndef SLUICE_TEST_REPLAY_H
#define SLUICE_TEST_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include "policy/policy.h"

/* Replays start here: a whole number of every window used. */
#define REPLAY_START_NS (1000 * NSEC_PER_SEC)

/* One pattern: `count` packets `gap_ns` apart from `at_ns`, then the next phase. */
struct replay_phase {
	uint64_t at_ns; /* after REPLAY_START_NS */
	uint64_t gap_ns;
	uint64_t count;
};

#define REPLAY_PHASES_MAX 8

struct replay_pattern {
	const char *name;
	struct replay_phase phases[REPLAY_PHASES_MAX];
	uint64_t length_ns; /* the mean admitted rate is over this */
};

/* The patterns of issue 13, for a limit of 100 per second: see replay.c. */
enum replay_pattern_id {
	PATTERN_STEADY,
	PATTERN_ON_OFF,
	PATTERN_EDGE,
	PATTERN_SLOW_THEN_FLOOD,
	PATTERN_COUNT,
};

extern const struct replay_pattern replay_patterns[PATTERN_COUNT];

struct replay_result {
	uint64_t *passed_at; /* ns after REPLAY_START_NS, in order */
	size_t passed, offered;
};

/* Runs pattern p through a fresh test-clock program with settings s; 0 or -errno. */
int replay_run(const struct settings *s, const struct replay_pattern *p, struct replay_result *r);
void replay_free(struct replay_result *r);
/* The most packets passed in any window [t, t + window_ns). */
uint64_t replay_max_in_window(const struct replay_result *r, uint64_t window_ns);
/* Admitted packets per second over the pattern's length. */
double replay_mean_rate(const struct replay_result *r, const struct replay_pattern *p);

#endif /* SLUICE_TEST_REPLAY_H */
