/* SPDX-License-Identifier: GPL-2.0 */
/* Per-CPU counters: plain adds, summed by userspace. */
#ifndef SLUICE_BPF_STATS_H
#define SLUICE_BPF_STATS_H

#include "maps.h"

static __always_inline struct sluice_stats *stats_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stats, &zero);
}

static __always_inline void stats_count(struct sluice_stats *st, enum sluice_counter which,
					__u64 bytes)
{
	st->c[which].packets++;
	st->c[which].bytes += bytes;
}

#endif /* SLUICE_BPF_STATS_H */
