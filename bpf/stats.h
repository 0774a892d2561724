/* SPDX-License-Identifier: GPL-2.0 */
/* Per-CPU counters: plain adds, summed by userspace. */
#ifndef SLUICE_BPF_STATS_H
#define SLUICE_BPF_STATS_H

#include "frame.h"
#include "maps.h"
#include "parse.h"

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

/* Adds the packet to the overflow bucket's counters, if it asked that bucket (PKT_OVERFLOW_*). */
static __always_inline void stats_add_overflow(struct sluice_stats *st, const struct packet *pkt,
					       __u64 bytes)
{
	if (!pkt->overflow)
		return;
	stats_add(st, SLUICE_CNT_REFUSED, bytes);
	stats_add(st,
		  pkt->overflow == PKT_OVERFLOW_PASSED ? SLUICE_CNT_OVERFLOW_PASSED
						       : SLUICE_CNT_OVERFLOW_DROPPED,
		  bytes);
}

/*
 * Counts one metered packet for the interface and for its rule's slot,
 * with what the overflow bucket made of it: one lookup and one length for
 * all of them, which a spoofed flood pays on every packet.
 */
static __always_inline void stats_count_rule(struct xdp_md *ctx, const struct packet *pkt,
					     __u32 slot, enum sluice_counter which)
{
	__u64 bytes = frame_len(ctx);
	struct sluice_stats *st;
	__u32 zero = 0;

	st = bpf_map_lookup_elem(&stats, &zero);
	if (st) {
		stats_add(st, which, bytes);
		stats_add_overflow(st, pkt, bytes);
	}
	st = bpf_map_lookup_elem(&rule_stats, &slot);
	if (st)
		stats_add(st, which, bytes);
}

#endif /* SLUICE_BPF_STATS_H */
