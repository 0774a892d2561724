/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source table read from userspace: one row per tracked source, with
 * the over-limit packets the per-CPU caches still hold for it added in.
 * Sets are read in batches, a thousand per system call, without their
 * locks; reading changes nothing.
 */
#ifndef SLUICE_SOURCES_H
#define SLUICE_SOURCES_H

#include <stddef.h>
#include <stdint.h>
#include "sluice.h"

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

/* read_ns: CLOCK_MONOTONIC when the bucket was read (the table takes a while). */
typedef int (*bucket_fn)(const struct sluice_key *key, const struct sluice_bucket *b,
			 uint64_t read_ns, void *ctx);

/* Calls fn on every bucket of the table; stops at fn's first error. */
int sources_walk(int buckets_fd, bucket_fn fn, void *ctx);
/* Key's bucket, found where the datapath would put it; -ENOENT if none. */
int sources_find(int buckets_fd, const struct sluice_config *cfg, const struct sluice_key *key,
		 struct sluice_bucket *b);
/* Number of buckets in the table. */
int sources_count(int buckets_fd, uint64_t *n);
/* Every bucket, with the pending counts of the per-CPU `hot` map added. */
int sources_read(int buckets_fd, int hot_fd, struct source_table *t);
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

/* The key as a prefix: "192.0.2.0/24", "2001:db8::/64". */
void key_format(const struct sluice_key *key, char *buf, size_t len);

#endif /* SLUICE_SOURCES_H */
