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
 * Takes cost from a shared TAT by compare-and-swap, retried on contention.
 * When over, *over_tat is the TAT the refusal left (debt capped, gcra.h).
 */
static __always_inline int gcra_take(__u64 *tatp, __u64 now, __u64 cost, __u64 limit,
				     __u64 *over_tat)
{
	__u64 tat, next;
	int i;

	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (gcra_conforms(tat, now, cost, limit, &next)) {
			if (__sync_val_compare_and_swap(tatp, tat, next) == tat)
				return METER_CONFORMS;
			continue;
		}
		next = gcra_refused(tat, now, limit);
		if (next == tat || __sync_val_compare_and_swap(tatp, tat, next) == tat) {
			*over_tat = next;
			return METER_OVER;
		}
	}
	/* Never admit what we could not account for. */
	return METER_CONTENDED;
}

/* A step that lost its races is refused, and counted as contended. */
static __always_inline int meter_settled(struct xdp_md *ctx, int ret)
{
	if (ret != METER_CONTENDED)
		return ret;
	stats_count(ctx, SLUICE_CNT_CONTENDED);
	return METER_OVER;
}

/* A failed bucket insert, counted by cause; --on-full says pass or drop. */
static __always_inline int meter_insert_failed(struct xdp_md *ctx, const struct sluice_policy *p,
					       long err)
{
	stats_count(ctx, err == -ENOMEM ? SLUICE_CNT_INSERT_NOMEM : SLUICE_CNT_INSERT_FAILED);
	return p->flags & SLUICE_POL_FAIL_OPEN ? METER_CONFORMS : METER_OVER;
}

#endif /* SLUICE_BPF_BUCKET_H */
