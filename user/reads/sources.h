/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source table read from userspace: one row per tracked source, with
 * the over-limit packets the per-CPU caches still hold for it added in.
 * Sets are read in batches, a thousand per system call, without their
 * locks; reading changes nothing.
 */
#ifndef SLUICE_READS_SOURCES_H
#define SLUICE_READS_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "maps/policy_maps.h"
#include "maps/table.h"

struct source_row {
	struct sluice_key key;
	struct sluice_bucket b; /* b.dropped includes the caches' pending counts */
	uint64_t read_ns;	/* CLOCK_MONOTONIC when its set was read */
};

struct source_table {
	struct source_row *rows; /* in table order */
	size_t n, cap;
	uint64_t time_ns; /* CLOCK_MONOTONIC when the read ended */
};

/*
 * Every entry of the per-CPU over-limit caches (map `hot`) holding
 * refusals not yet in a bucket: fn(cpu, the bucket's key, how many, ctx),
 * until fn returns non-zero, which is returned.
 */
typedef int (*hot_walk_fn)(int cpu, const struct sluice_key *key, uint64_t pending, void *ctx);
int hot_walk(int hot_fd, hot_walk_fn fn, void *ctx);

/* Every bucket, with the pending counts of the per-CPU `hot` map added. */
int sources_read(const struct policy_maps *m, struct source_table *t);
void sources_free(struct source_table *t);

/* Rows by key, to join two readings of the table in linear time. */
struct source_index {
	size_t *slots; /* row + 1, 0 for empty; open addressing */
	size_t mask;
	const struct source_table *t;
};

int sources_index(const struct source_table *t, struct source_index *ix);
const struct source_row *sources_lookup(const struct source_index *ix,
					const struct sluice_key *key);
void sources_index_free(struct source_index *ix);

/* Did the source of this bucket prove its address (--prove, map `proven` at proven_fd)? */
bool source_proven(int proven_fd, const struct sluice_key *key);

#endif /* SLUICE_READS_SOURCES_H */
