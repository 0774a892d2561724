/* SPDX-License-Identifier: GPL-2.0 */
/* The set tables, sources and aggregates, read as the datapath lays them out. */
#ifndef SLUICE_MAPS_TABLE_H
#define SLUICE_MAPS_TABLE_H

#include <stdint.h>
#include "sluice.h"

/* read_ns: CLOCK_MONOTONIC when the bucket was read (the table takes a while). */
typedef int (*bucket_fn)(const struct sluice_key *key, const struct sluice_bucket *b,
			 uint64_t read_ns, void *ctx);

/* Calls fn on every bucket of the table (seed: the configuration's); stops at fn's first error. */
int table_walk(int buckets_fd, const __u64 seed[3], bucket_fn fn, void *ctx);
/* Key's bucket, found where the datapath would put it; -ENOENT if none. */
int table_lookup(int buckets_fd, const struct sluice_config *cfg, const struct sluice_key *key,
		 struct sluice_bucket *b);
/* Number of buckets in the table. */
int table_count(int buckets_fd, uint64_t *n);

#endif /* SLUICE_MAPS_TABLE_H */
