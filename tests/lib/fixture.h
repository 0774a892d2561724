/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A loaded, unattached sluice program for BPF_PROG_TEST_RUN tests: either
 * the test-clock build (time set by the test) or the production build.
 */
#ifndef SLUICE_TEST_FIXTURE_H
#define SLUICE_TEST_FIXTURE_H

#include <stdint.h>
#include "sluice.h"
#include "policy.h"

struct sluice;
struct sluice_test;

struct fixture {
	struct sluice *real;
	struct sluice_test *test;
	int prog_fd;
	int config_fd;
	int stats_fd;
	int buckets_fd;
	int generation_fd;
	int hot_fd;
};

/* Loads the test-clock build with these settings; 0 or -errno. */
int fixture_open_test_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources);
/* Loads the production build (real clock). */
int fixture_open_real_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources);
void fixture_close(struct fixture *fx);

/* Replaces the configuration, as `sluice set` does. */
int fixture_configure(struct fixture *fx, const struct settings *s);
void fixture_set_clock(struct fixture *fx, uint64_t now_ns);
/* Runs one frame `repeat` times; returns the last XDP verdict or -errno. */
int fixture_run(struct fixture *fx, const void *data, size_t len, uint32_t repeat);
int fixture_stats(struct fixture *fx, struct sluice_stats *sum);
/* Number of buckets, and whether one exists for key. */
int fixture_bucket_count(struct fixture *fx);
int fixture_has_bucket(struct fixture *fx, const struct sluice_key *key);

/* A rate of `packets` per second with the default everything else. */
void settings_per_second(struct settings *s, uint64_t packets, uint64_t burst);

#endif /* SLUICE_TEST_FIXTURE_H */
