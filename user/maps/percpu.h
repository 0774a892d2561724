/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_MAPS_PERCPU_H
#define SLUICE_MAPS_PERCPU_H

#include "sluice.h"

/* Sums the per-CPU counters (of entry index, for the per-rule array). */
int stats_read(int stats_fd, struct sluice_stats *sum);
int stats_read_at(int fd, __u32 index, struct sluice_stats *sum);
/* Zeroes entry index on every CPU. */
int stats_clear_at(int fd, __u32 index);

#endif /* SLUICE_MAPS_PERCPU_H */
