/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One GCRA step on a TAT that every CPU shares, and what a packet costs it.
 * Source, overflow and aggregate buckets all meter through here.
 */
#ifndef SLUICE_BPF_BUCKET_H
#define SLUICE_BPF_BUCKET_H

#include <linux/errno.h> /* not glibc's: -target bpf would pull in its 32-bit stubs */
#include "gcra.h"
#include "parse.h"
#include "stats.h"

/* A TAT contended this often in a row is refused, and counted (SLUICE_CNT_CONTENDED). */
#define METER_CAS_TRIES 8

enum meter_verdict {
	METER_CONFORMS,
	METER_OVER,
	METER_CONTENDED, /* lost METER_CAS_TRIES races in a row: refused, not judged */
	METER_PROVE,	 /* a SYN with no bucket, to answer with a cookie (prove.h) */
};

/*
 * What this packet costs a bucket of the given interval: one interval for a
 * packet rate, or its whole frame in bytes for a bandwidth.
 */
static __always_inline __u64 unit_cost(struct xdp_md *ctx, __u64 interval, int bytes)
{
	return bytes ? gcra_bytes_cost(frame_len(ctx), interval) : interval;
}

/* The least any packet costs the bucket: when the over-limit cache may let one through. */
static __always_inline __u64 unit_cost_min(__u64 interval, int bytes)
{
	return bytes ? gcra_bytes_cost(GCRA_FRAME_MIN, interval) : interval;
}

/*
 * The clock again, for a step about to lower a TAT (the debt cap, gcra.h).
 * Under one policy a TAT passes now + limit only when now is stale: this
 * packet was held up between its clock read and the step (an interrupt, a
 * preempted vCPU) while other CPUs advanced the TAT from later reads.
 * Capping from the stale now would hand back that delay's worth of
 * allowance; the step is retried from a fresh read instead, which a cap
 * that is due (a policy change) survives.
 */
static __always_inline __u64 clock_refresh(__u64 now)
{
	__u64 fresh = clock_now();

	return fresh > now ? fresh : now;
}

/*
 * Takes cost from a shared TAT by compare-and-swap, retried on contention.
 * When over, *over_tat is the TAT the refusal left (debt capped, gcra.h).
 */
static __always_inline int gcra_take(__u64 *tatp, __u64 now, __u64 cost, __u64 limit,
				     __u64 *over_tat)
{
	__u64 tat, next;
	int i, fresh = 0;

	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (gcra_conforms(tat, now, cost, limit, &next)) {
			if (__sync_val_compare_and_swap(tatp, tat, next) == tat)
				return METER_CONFORMS;
			continue;
		}
		next = gcra_refused(tat, now, limit);
		if (next != tat && !fresh) {
			now = clock_refresh(now);
			fresh = 1;
			continue;
		}
		if (next == tat || __sync_val_compare_and_swap(tatp, tat, next) == tat) {
			*over_tat = next;
			return METER_OVER;
		}
	}
	/* Never admit what we could not account for. */
	return METER_CONTENDED;
}

/*
 * Whether a shared bucket refuses this packet even by `early`, a reading
 * from before the packet (clock_early), with nothing to write: its debt is
 * within the cap then, and so at any later moment. Such a refusal needs no
 * precise clock. It never passes a packet the bucket would refuse; it may
 * refuse one the bucket would pass by now, that is pass the budget up to a
 * tick late, never past it. Admission and overflow buckets take it, where
 * a spoofed flood refuses nearly every packet: the full step (gcra_take)
 * decides the rest.
 */
static __always_inline int gcra_refuses_early(const __u64 *tatp, __u64 early, __u64 cost,
					      __u64 limit)
{
	__u64 tat = *(volatile const __u64 *)tatp, next;

	return tat <= early + limit && !gcra_conforms(tat, early, cost, limit, &next);
}

/* A step that lost its races is refused, and counted as contended. */
static __always_inline int meter_settled(struct xdp_md *ctx, int ret)
{
	if (ret != METER_CONTENDED)
		return ret;
	stats_count(ctx, SLUICE_CNT_CONTENDED);
	return METER_OVER;
}

#endif /* SLUICE_BPF_BUCKET_H */
