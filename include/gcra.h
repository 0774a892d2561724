/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GCRA metering math as pure inline functions: no helpers, no clock reads.
 * The same code runs in the XDP program and in native unit tests.
 *
 * One theoretical arrival time (TAT) per key is a whole token bucket. A
 * packet costs `cost` (the emission interval T for packet rates, its length
 * times the per-byte interval for byte rates); the bucket holds `limit`,
 * a burst's worth of cost. A packet at time `now` conforms iff
 * max(TAT, now) + cost - now <= limit, and then TAT advances to
 * max(TAT, now) + cost. For packet rates this is the textbook
 * max(TAT, now) - now <= tau with tau = (burst - 1) * T.
 *
 * Debt is capped at one burst: a packet first meets min(TAT, now + limit).
 * Under one policy the TAT never passes now + limit; it can only after a
 * policy change with a smaller limit (set, apply, a reused rule id), and
 * then the source counts as exactly empty under the new policy, waiting at
 * most one packet's cost. A refused packet stores that cap (gcra_refused),
 * so the wait starts once; otherwise a refusal writes nothing. The cap is
 * where debt may reach past the burst: a fleet sharing debt keeps what the
 * other hosts owe (gcra_conforms_owing, docs/fleet.md).
 */
#ifndef SLUICE_GCRA_H
#define SLUICE_GCRA_H

#include <linux/types.h>
#include "sluice.h"

/* Ethernet and a bare IPv4 header: the smallest frame that reaches a meter. */
#define GCRA_FRAME_MIN 34

/*
 * What len bytes cost at a per-byte interval (SLUICE_BYTE_SHIFT fraction
 * bits), rounded up as userspace rounds a burst into its limit. len is at
 * most 2^18 and interval 2^44 (user/policy.c), so the product fits.
 */
static inline __u64 gcra_bytes_cost(__u64 len, __u64 interval)
{
	return (len * interval + (1ULL << SLUICE_BYTE_SHIFT) - 1) >> SLUICE_BYTE_SHIFT;
}

/* The TAT a packet at now meets: no more than one burst of debt. */
static inline __u64 gcra_capped(__u64 tat, __u64 now, __u64 limit)
{
	return tat > now + limit ? now + limit : tat;
}

/*
 * gcra_conforms with `owed` more debt kept past the burst: the debt other
 * hosts of a fleet ran up (sluice_fleet_hint.debt_max), which a refusal
 * must not forget. 0 without a fleet.
 */
static inline int gcra_conforms_owing(__u64 tat, __u64 now, __u64 cost, __u64 limit, __u64 owed,
				      __u64 *next_tat)
{
	__u64 base = gcra_capped(tat, now, limit + owed);

	if (base < now)
		base = now;
	if (base - now + cost > limit)
		return 0;
	*next_tat = base + cost;
	return 1;
}

/* Returns 1 and sets *next_tat when the packet conforms, else 0. */
static inline int gcra_conforms(__u64 tat, __u64 now, __u64 cost, __u64 limit, __u64 *next_tat)
{
	return gcra_conforms_owing(tat, now, cost, limit, 0, next_tat);
}

/*
 * A change's rebase of one bucket (SLUICE_FLEET_CAP ops): the TAT the
 * change's walk computed for it, to, while it still is the one the walk
 * read, was (0: none); else, moved by a packet since, its debt capped at
 * max.
 */
static inline __u64 gcra_rebased(__u64 tat, __u64 now, __u64 max, __u64 was, __u64 to)
{
	if (was && tat == was)
		return to;
	return gcra_capped(tat, now, max);
}

/* What a refused packet leaves in the TAT: its cap, when the debt was deeper. */
static inline __u64 gcra_refused(__u64 tat, __u64 now, __u64 limit)
{
	return gcra_capped(tat, now, limit);
}

/*
 * First moment at which a packet of `cost` can conform again, given the TAT
 * a refusal at now left (gcra_refused): later TATs only make it later.
 */
static inline __u64 gcra_admissible_at(__u64 tat, __u64 now, __u64 cost, __u64 limit)
{
	__u64 base = gcra_capped(tat, now, limit);

	return base + cost > limit ? base + cost - limit : 0;
}

#endif /* SLUICE_GCRA_H */
