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
 * max(TAT, now) - now <= tau with tau = (burst - 1) * T. A packet that does
 * not conform writes nothing.
 */
#ifndef SLUICE_GCRA_H
#define SLUICE_GCRA_H

#include <linux/types.h>

/* Returns 1 and sets *next_tat when the packet conforms, else 0. */
static inline int gcra_conforms(__u64 tat, __u64 now, __u64 cost, __u64 limit, __u64 *next_tat)
{
	__u64 base = tat > now ? tat : now;

	if (base - now + cost > limit)
		return 0;
	*next_tat = base + cost;
	return 1;
}

/* First moment at which a packet of `cost` can conform again, given the TAT. */
static inline __u64 gcra_admissible_at(__u64 tat, __u64 cost, __u64 limit)
{
	return tat + cost > limit ? tat + cost - limit : 0;
}

#endif /* SLUICE_GCRA_H */
