/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Window counters as pure inline functions, like gcra.h: the same code in
 * the XDP program and in native tests. Both keep a source's whole state in
 * the 8-byte slot a GCRA TAT uses, advanced by one compare-and-swap.
 *
 * Windows are aligned to meter time: window k is [k * W, (k + 1) * W). A
 * slot always holds a time at or after which its state is forgettable plus
 * a packed count below W, so the table's test for an idle way (slot <= now,
 * bpf/table.h) holds for every algorithm, and a zero slot (a new way)
 * reads as an empty window.
 *
 * Fixed window: slot = (k + 1) * W + count, the window's end plus the cost
 * admitted in it. The count must stay below W (in meter units, 1/16 ns).
 *
 * Sliding-window counter (the weighted estimate Cloudflare describes):
 * slot = (k + 2) * W + (prev << bits) + cur, with prev the count of window
 * k - 1 and cur that of window k; the state is forgettable once window
 * k + 2 begins. A packet at elapsed fraction f of window k conforms when
 * prev * (1 - f) + cur + cost <= limit. Both counts take `bits` bits, so
 * 2^(2 * bits) <= W and the count is at most 2^bits - 1; bits is at most
 * WINDOW_BITS_MAX, and the weight is taken in units of 2^WINDOW_SHIFT meter
 * units (16 ns), so the products below fit 64 bits for windows up to a day.
 *
 * Windows are whole milliseconds, so the datapath carries one in 32 bits.
 */
#ifndef SLUICE_WINDOW_H
#define SLUICE_WINDOW_H

#include <linux/types.h>
#include "sluice.h"

#define WINDOW_BITS_MAX 20
/* W >> WINDOW_SHIFT stays below 2^43 for a day: prev * left and room * w fit 64 bits. */
#define WINDOW_SHIFT 8
/* Meter units per millisecond of window: a multiple of 2^WINDOW_SHIFT. */
#define WINDOW_UNITS_PER_MS (1000000ULL << SLUICE_TIME_SHIFT)

/* The end of the window that holds now. */
static inline __u64 window_end(__u64 now, __u64 window)
{
	return (now / window + 1) * window;
}

/* The cost a fixed window has admitted in now's window (ending at end). */
static inline __u64 fixed_count(__u64 slot, __u64 end)
{
	return slot >= end ? slot - end : 0;
}

/* The slot after a packet of cost conforms, or 0 when it does not (a slot is never 0 after one). */
static inline __u64 fixed_next(__u64 slot, __u64 now, __u64 cost, __u64 limit, __u64 window)
{
	__u64 end = window_end(now, window);
	__u64 count = fixed_count(slot, end);

	return count + cost > limit ? 0 : end + count + cost;
}

/* A refused packet may conform again when the next window begins (or now, if a smaller one fits).
 */
static inline __u64 fixed_admissible_at(__u64 slot, __u64 now, __u64 cost, __u64 limit,
					__u64 window)
{
	__u64 end = window_end(now, window);

	return fixed_count(slot, end) + cost > limit ? end : 0;
}

/* A sliding window's two counts as of now's window, which starts at *start. */
struct sliding_counts {
	__u64 prev;
	__u64 cur;
	__u64 start;
	__u64 base; /* the slot of now's window with both counts zero */
};

static inline void sliding_read(__u64 slot, __u64 now, __u64 window, __u32 bits,
				struct sliding_counts *c)
{
	__u64 mask = (1ULL << bits) - 1;

	c->start = now / window * window;
	c->base = c->start + 2 * window;
	c->prev = 0;
	c->cur = 0;
	if (slot >= c->base) {
		c->prev = (slot - c->base) >> bits;
		c->cur = (slot - c->base) & mask;
	} else if (slot >= c->base - window) {
		/* Written in the window before: its current count is now the previous. */
		c->prev = (slot - (c->base - window)) & mask;
	}
}

/*
 * prev * (1 - f) + cur + cost <= limit, with (1 - f) = (start + W - now) / W
 * in units of 2^WINDOW_SHIFT, rounded up: prev never weighs less than exact.
 */
static inline int sliding_fits(const struct sliding_counts *c, __u64 now, __u64 cost, __u64 limit,
			       __u64 window)
{
	__u64 left = (c->start + window - now + (1ULL << WINDOW_SHIFT) - 1) >> WINDOW_SHIFT;

	if (c->cur + cost > limit)
		return 0;
	return c->prev * left <= (limit - c->cur - cost) * (window >> WINDOW_SHIFT);
}

/* The slot after a packet of cost conforms, or 0 when it does not. */
static inline __u64 sliding_next(__u64 slot, __u64 now, __u64 cost, __u64 limit, __u64 window,
				 __u32 bits)
{
	struct sliding_counts c;

	sliding_read(slot, now, window, bits, &c);
	if (!sliding_fits(&c, now, cost, limit, window))
		return 0;
	return c.base + (c.prev << bits) + c.cur + cost;
}

/*
 * No later than the first moment a packet of `cost` may conform, 0 if it
 * fits now: the estimate only falls as prev's weight does, until the
 * window ends.
 */
static inline __u64 sliding_admissible_at(__u64 slot, __u64 now, __u64 cost, __u64 limit,
					  __u64 window, __u32 bits)
{
	struct sliding_counts c;
	__u64 room, left_max;

	sliding_read(slot, now, window, bits, &c);
	if (c.cur + cost > limit)
		return c.start + window;
	/* Nothing to weigh: it fits now (a pass asks too, meter_refreshes). */
	if (!c.prev)
		return 0;
	room = limit - c.cur - cost;
	/* It fits once the rounded-up weight is at most room * w / prev. */
	left_max = (room * (window >> WINDOW_SHIFT) / c.prev) << WINDOW_SHIFT;
	return left_max >= window ? 0 : c.start + window - left_max;
}

#endif /* SLUICE_WINDOW_H */
