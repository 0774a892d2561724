/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A loaded, unattached sluice program for BPF_PROG_TEST_RUN tests: either
 * the test-clock build (time set by the test) or the production build.
 */
#ifndef SLUICE_TEST_FIXTURE_H
#define SLUICE_TEST_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"
#include "policy/policy.h"
#include "pins/state.h"
#include "pins/sync.h"
#include "maps/policy_maps.h"
#include "frames.h"

struct sluice;
struct sluice_test;

struct fixture {
	struct sluice *real;
	struct sluice_test *test;
	int prog_fd;
	struct state st;       /* the maps, as a pinned interface would have them */
	struct sync_prog sync; /* the test build's own sync program: a change's debt cap */
	void *hot_map;	       /* every CPU's over-limit cache, mapped (fixture_hot_forget) */
	size_t hot_bytes;
};

/* Loads the test-clock build with these default settings; 0 or -errno. */
int fixture_open_test_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources);
/* The same with a whole policy (rules, lists). */
int fixture_open_policy(struct fixture *fx, struct policy_doc *doc, uint32_t max_sources);
/* A policy from config-file text, through the parser `sluice apply` uses. */
int doc_from_conf_text(const char *text, struct policy_doc *doc);
/* The same with a policy in config-file text ("default rate 10/s ..."), the clock at now_ns. */
int fixture_open_conf(struct fixture *fx, const char *text, uint32_t max_sources, uint64_t now_ns);
/*
 * The policy the fixture's maps hold, loaded into doc (initialised here;
 * the caller frees it) and written as `show` writes it: a string to free,
 * or NULL with *err set.
 */
char *fixture_show(struct fixture *fx, struct policy_doc *doc, int *err);
/* How many of n copies of spec's frame pass, one run each; -1 when it cannot be built. */
int fixture_passes(struct fixture *fx, const struct frame_spec *spec, int n);
/* Loads the production build (real clock) this kernel runs (pins/datapath.h). */
int fixture_open_real_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources);
/* The same in the build asked: the default (Linux 6.2+), or with compat Linux 6.1's. */
int fixture_open_build(struct fixture *fx, const struct settings *s, uint32_t max_sources,
		       bool compat);
void fixture_close(struct fixture *fx);

/* Replaces the default settings, as `sluice set` does. */
int fixture_configure(struct fixture *fx, const struct settings *s);
/* Replaces the whole policy, as `sluice apply` does. */
int fixture_store(struct fixture *fx, struct policy_doc *doc);
void fixture_set_clock(struct fixture *fx, uint64_t now_ns);
/* Runs one frame `repeat` times; returns the last XDP verdict or -errno. */
int fixture_run(struct fixture *fx, const void *data, size_t len, uint32_t repeat);
/* The same once, copying the frame as the program left it into out. */
int fixture_run_out(struct fixture *fx, const void *data, size_t len, void *out, size_t out_len);
int fixture_stats(struct fixture *fx, struct sluice_stats *sum);
/* One counter's packets, summed over CPUs (0 when unreadable). */
uint64_t fixture_counter(struct fixture *fx, enum sluice_counter which);
/* Number of buckets; key's bucket (0, or -ENOENT), and whether it has one. */
int fixture_bucket_count(struct fixture *fx);
int fixture_bucket(struct fixture *fx, const struct sluice_key *key, struct sluice_bucket *b);
int fixture_has_bucket(struct fixture *fx, const struct sluice_key *key);
/* The way of key's bucket and its set (*set, *s a copy of it), found as the datapath does; or -1.
 */
int fixture_bucket_way(struct fixture *fx, const struct sluice_key *key, __u32 *set,
		       struct sluice_set *s);

/* Keeps the calling thread on one CPU, for tests that hammer from every CPU; 0 or an errno. */
int pin_thread_to_cpu(int cpu);
/*
 * Keeps the calling process on the CPU it runs on, so that a per-CPU
 * map's entry at that CPU is the one the runs used: the CPU, or -1.
 * back_to_every_cpu restores the affinity it had.
 */
int stay_on_this_cpu(void);
void back_to_every_cpu(void);
/* A copy of cpu's over-limit cache (2 MiB: free it), or NULL. */
struct sluice_hot *fixture_hot(struct fixture *fx, int cpu);
/* cpu's over-limit cache head, copied to *head: 0 or -errno. */
int fixture_hot_head(struct fixture *fx, int cpu, struct sluice_hot_head *head);

/*
 * Empties every CPU's over-limit cache, keeping each head (seeds, jiffy
 * reference): the next packet of any source takes the full path, to the
 * table. 0 or -errno.
 */
int fixture_hot_forget(struct fixture *fx);
/* Sets the jiffies alone, to those of moment ns (fixture_set_clock keeps them in step). */
void fixture_set_jiffies_at(struct fixture *fx, uint64_t ns);
/* How far the early clock (bpf/clock.h, clock_early) trails the test's time: 0 unless set. */
void fixture_set_early_lag(struct fixture *fx, uint64_t lag_ns);

/* A rate of `packets` per second with the default everything else. */
void settings_per_second(struct settings *s, uint64_t packets, uint64_t burst);

#endif /* SLUICE_TEST_FIXTURE_H */
