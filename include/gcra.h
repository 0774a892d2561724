/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GCRA metering math as pure inline functions: no helpers, no clock reads.
 * The same code runs in the XDP program and in native unit tests.
 *
 * One theoretical arrival time (TAT) per key is a whole token bucket. With
 * emission interval T and tolerance tau = (burst - 1) * T, a packet at time
 * `now` conforms iff max(TAT, now) - now <= tau, and then TAT advances to
 * max(TAT, now) + T. A non-conforming packet writes nothing.
 */
#ifndef SLUICE_GCRA_H
#define SLUICE_GCRA_H

#include <linux/types.h>

/* Returns 1 and sets *next_tat when the packet conforms, else 0. */
static inline int gcra_conforms(__u64 tat, __u64 now, __u64 interval, __u64 tolerance,
				__u64 *next_tat)
{
	__u64 base = tat > now ? tat : now;

	if (base - now > tolerance)
		return 0;
	*next_tat = base + interval;
	return 1;
}

/* First moment at which a packet can conform again, given the TAT. */
static inline __u64 gcra_admissible_at(__u64 tat, __u64 tolerance)
{
	return tat > tolerance ? tat - tolerance : 0;
}

#endif /* SLUICE_GCRA_H */
