/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whole jiffies in a wait, without a division: the over-limit cache's
 * "certainly not yet" (bpf/clock.h, clock_jiffy_after) multiplies the wait
 * by a reciprocal of the tick userspace computed once (jiffy_recip_of,
 * for sluice_config.jiffy_recip). Pure inline functions, so native tests
 * check the datapath's arithmetic against an exact one.
 */
#ifndef SLUICE_JIFFY_H
#define SLUICE_JIFFY_H

#include <linux/types.h>
#include "sluice.h"

_Static_assert(SLUICE_JIFFY_WAIT_MAX *SLUICE_JIFFY_RECIP_MAX / SLUICE_JIFFY_RECIP_MAX ==
		       SLUICE_JIFFY_WAIT_MAX,
	       "the longest wait times the largest reciprocal fits in 64 bits");

/*
 * The reciprocal of a tick of tick_ns: 2^SLUICE_JIFFY_RECIP_SHIFT per tick
 * in meter time, rounded down, so jiffy_ticks never counts a tick too
 * many; at most SLUICE_JIFFY_RECIP_MAX (a shorter tick than any HZ gives
 * is counted as that one: fewer ticks, still never too many). 0, which
 * turns the jiffy bound off, for no tick or one of a second or more.
 */
static inline __u64 jiffy_recip_of(__u64 tick_ns)
{
	__u64 recip;

	if (!tick_ns || tick_ns >= 1000000000ULL)
		return 0;
	recip = (1ULL << SLUICE_JIFFY_RECIP_SHIFT) / (tick_ns << SLUICE_TIME_SHIFT);
	return recip < SLUICE_JIFFY_RECIP_MAX ? recip : SLUICE_JIFFY_RECIP_MAX;
}

/*
 * Whole ticks in `wait` meter time (at most SLUICE_JIFFY_WAIT_MAX of it),
 * given a reciprocal from jiffy_recip_of: never more than floor(wait /
 * tick), and (the reciprocal not capped) at most one fewer, as the
 * reciprocal's rounding costs under wait / 2^48 < 1 tick. wait * recip
 * fits in 64 bits, by the two caps.
 */
static inline __u64 jiffy_ticks(__u64 wait, __u64 recip)
{
	if (wait > SLUICE_JIFFY_WAIT_MAX)
		wait = SLUICE_JIFFY_WAIT_MAX;
	return (wait * recip) >> SLUICE_JIFFY_RECIP_SHIFT;
}

#endif /* SLUICE_JIFFY_H */
