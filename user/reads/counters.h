/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What each datapath counter means, in one table that every output reads
 * (stats, --watch, --json, Prometheus, the exporter), and timed samples of
 * the counters from which rates are taken: per-CPU sums and CLOCK_MONOTONIC
 * timestamps, two samples a known interval apart.
 */
#ifndef SLUICE_READS_COUNTERS_H
#define SLUICE_READS_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"
#include "pins/state.h"

enum counter_kind {
	COUNTER_TRAFFIC, /* an outcome: every packet lands in exactly one of these */
	COUNTER_TABLE,	 /* an event of the bucket table, also counted as traffic */
};

struct counter_info {
	const char *name;   /* JSON key and table row: "would_drop" */
	const char *metric; /* Prometheus family stem: sluice_<metric>_packets_total */
	const char *reason; /* value of the `reason` label, NULL for none */
	const char *help;   /* one line, for --help and Prometheus HELP */
	enum counter_kind kind;
	bool per_rule; /* counted per rule as well */
};

/* Indexed by enum sluice_counter: a new counter needs one row here. */
extern const struct counter_info counter_info[SLUICE_CNT_MAX];

/* A rule's CIDR, a space and its class (MATCH_TEXT_MAX). */
#define RULE_NAME_MAX (64 + 256)

/* One rule's counters; only the counters flagged per_rule are filled. */
struct rule_counts {
	char name[RULE_NAME_MAX];
	struct sluice_counter_pair c[SLUICE_CNT_MAX];
};

/* Everything the counter outputs show, read at one moment. */
struct sample {
	uint64_t time_ns; /* CLOCK_MONOTONIC, taken as the counters were read */
	struct sluice_stats sum;
	struct rule_counts *rules; /* the default rule first */
	int nrules;
	uint64_t sources;     /* buckets in the table now */
	uint64_t capacity;    /* most buckets the table holds: every way of every set */
	uint64_t max_sources; /* what attach was given; the table has room to spare */
	/* The configuration the rules were read from: its generation, and when it was made. */
	uint64_t generation;
	uint64_t changed_at_ns; /* CLOCK_REALTIME */
	/* The set of rule slots they were read from: a policy change writes the other afresh. */
	uint32_t policy_set;
};

int sample_read(const struct state *st, struct sample *s);
/* All but `sources`, which walks the whole table (left 0): for callers that cache it. */
int sample_read_counters(const struct state *st, struct sample *s);
void sample_free(struct sample *s);

/*
 * Events per second of a counter between two readings dt_ns apart. A
 * counter that went back was reset (detached and attached again): it
 * counts from zero.
 */
double per_second(uint64_t now, uint64_t before, uint64_t dt_ns);

#endif /* SLUICE_READS_COUNTERS_H */
