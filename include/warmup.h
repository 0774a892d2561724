/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GCRA with a warm-up, as pure inline functions (gcra.h says why): Guava's
 * SmoothWarmingUp on one 8-byte slot, advanced by one compare-and-swap.
 *
 * A source stores allowance while idle, one permit per stable interval I,
 * up to `max` (warm-up duration / I); a new source starts with all of it,
 * cold. A packet conforms once the next-free moment has come, takes one
 * stored permit and moves the next-free moment on by what that permit
 * costs: I while at most max / 2 are stored, rising linearly to 3 I when
 * all are (the integral over the permit, so the whole ramp from cold to
 * warm takes exactly the warm-up duration). Refused packets change nothing.
 *
 * slot = next-free moment rounded up to a multiple of 2^bits (meter
 * units), ORed with the stored permits (max < 2^bits). Rounding up only
 * ever delays, by less than 2^bits per packet; userspace keeps that within
 * 0.1% of I. A slot at or before now may be forgotten (bpf/table.h): the
 * source then starts cold again, which is stricter, never looser. A zero
 * slot reads as cold.
 */
#ifndef SLUICE_WARMUP_H
#define SLUICE_WARMUP_H

#include <linux/types.h>

/*
 * What taking a permit costs with `stored` permits stored: I up to max / 2,
 * then I + (2 I / max) (2 stored - 1 - max), the cost over the permit's
 * width on a line from I at max / 2 to 3 I at max.
 */
static inline __u64 warmup_cost(__u64 stored, __u64 interval, __u64 max)
{
	if (2 * stored <= max + 1)
		return interval;
	return interval + 2 * interval * (2 * stored - 1 - max) / max;
}

/* The next-free moment in a slot. */
static inline __u64 warmup_free(__u64 slot, __u32 bits)
{
	return slot & ~((1ULL << bits) - 1);
}

/* The slot after a packet conforms, or 0 when it does not (a slot is never 0 after one). */
static inline __u64 warmup_next(__u64 slot, __u64 now, __u64 interval, __u64 max, __u32 bits)
{
	__u64 mask = (1ULL << bits) - 1;
	__u64 free = slot & ~mask, stored = slot & mask, gained;

	if (free > now)
		return 0;
	/* Idle since free: a permit per whole interval, the remainder kept. A new slot is cold. */
	gained = slot ? (now - free) / interval : max;
	if (stored + gained >= max) {
		stored = max;
		free = now;
	} else {
		stored += gained;
		free += gained * interval;
	}
	free += warmup_cost(stored, interval, max);
	if (stored)
		stored--;
	return ((free + mask) & ~mask) | stored;
}

#endif /* SLUICE_WARMUP_H */
