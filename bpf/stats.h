/* SPDX-License-Identifier: GPL-2.0 */
/* Per-CPU counters: plain adds, summed by userspace. */
#ifndef SLUICE_BPF_STATS_H
#define SLUICE_BPF_STATS_H

#include "maps.h"

/* The whole frame, fragments of a multi-buffer frame included. */
static __always_inline __u64 frame_len(struct xdp_md *ctx)
{
	return bpf_xdp_get_buff_len(ctx);
}

static __always_inline void stats_add(struct sluice_stats *st, enum sluice_counter which,
				      __u64 bytes)
{
	st->c[which].packets++;
	st->c[which].bytes += bytes;
}

/*
 * Counts one packet. The lookup is inlined by the verifier and cheaper than
 * keeping the pointer (and the length) alive across the whole program.
 */
static __always_inline void stats_count(struct xdp_md *ctx, enum sluice_counter which)
{
	struct sluice_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (st)
		stats_add(st, which, frame_len(ctx));
}

/* Counts one packet under two counters: one lookup, one length. */
static __always_inline void stats_count_two(struct xdp_md *ctx, enum sluice_counter first,
					    enum sluice_counter second)
{
	__u64 bytes = frame_len(ctx);
	struct sluice_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (st) {
		stats_add(st, first, bytes);
		stats_add(st, second, bytes);
	}
}

/* Counts one metered packet for the interface and for its rule's slot. */
static __always_inline void stats_count_rule(struct xdp_md *ctx, __u32 slot,
					     enum sluice_counter which)
{
	__u64 bytes = frame_len(ctx);
	struct sluice_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (st)
		stats_add(st, which, bytes);
	st = bpf_map_lookup_elem(&rule_stats, &slot);
	if (st)
		stats_add(st, which, bytes);
}

#endif /* SLUICE_BPF_STATS_H */
