/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One meter step on a source's 8-byte slot, for whichever algorithm its
 * policy names: GCRA (gcra.h), GCRA with a warm-up (warmup.h), a fixed
 * window or a sliding-window counter (window.h). Pure inline functions, so
 * native tests and the replay tool run the datapath's arithmetic.
 */
#ifndef SLUICE_SLOT_H
#define SLUICE_SLOT_H

#include <linux/types.h>
#include "gcra.h"
#include "sluice.h"
#include "warmup.h"
#include "window.h"

/* Userspace has no __always_inline; the BPF side's comes from bpf_helpers.h. */
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* How a slot is metered: from struct sluice_policy. */
struct slot_meter {
	__u64 limit;  /* GCRA: a burst's worth of cost; windows: cost per window */
	__u64 window; /* windows: W in meter units; warm-up: permits stored at most */
	__u8 kind;    /* enum sluice_meter */
	__u8 bits;    /* sliding window: bits per count; warm-up: bits of stored permits */
	__u8 pad[6];
};

/* How policy p meters its sources' slots. */
static inline void slot_meter_of_policy(struct slot_meter *m, const struct sluice_policy *p)
{
	m->limit = p->limit;
	m->window = p->meter == SLUICE_METER_WARMUP ? p->warm_max
						    : (__u64)p->window_ms * WINDOW_UNITS_PER_MS;
	m->kind = p->meter;
	m->bits = p->state_bits;
}

/*
 * The slot after a packet of cost conforms at now, or 0 when it does not,
 * for the algorithms besides GCRA (none leaves a slot of 0 after a packet).
 * Under a warm-up, cost is the stable interval (packet rates only).
 */
/* Always inline: with the kind constant (bpf/table.h), the other cases fold away. */
static __always_inline __u64 slot_next(const struct slot_meter *m, __u64 slot, __u64 now,
				       __u64 cost)
{
	switch (m->kind) {
	case SLUICE_METER_FIXED_WINDOW:
		return fixed_next(slot, now, cost, m->limit, m->window);
	case SLUICE_METER_SLIDING_WINDOW:
		return sliding_next(slot, now, cost, m->limit, m->window, m->bits);
	case SLUICE_METER_WARMUP:
		return warmup_next(slot, now, cost, m->window, m->bits);
	}
	return 0;
}

/* No later than the first moment a packet of cost may conform, after a refusal left slot. */
static inline __u64 slot_admissible_at(const struct slot_meter *m, __u64 slot, __u64 now,
				       __u64 cost)
{
	switch (m->kind) {
	case SLUICE_METER_FIXED_WINDOW:
		return fixed_admissible_at(slot, now, cost, m->limit, m->window);
	case SLUICE_METER_SLIDING_WINDOW:
		return sliding_admissible_at(slot, now, cost, m->limit, m->window, m->bits);
	case SLUICE_METER_WARMUP:
		return warmup_free(slot, m->bits);
	}
	return gcra_admissible_at(slot, now, cost, m->limit);
}

/*
 * The slot with cost given back, or slot itself when there is nothing to
 * give: a GCRA TAT never below now (a full bucket), a window's count only
 * in the window that took it. A warm-up's step cannot be given back by
 * amount; the datapath undoes it whole instead (bpf/table.h, slot_refund).
 */
static inline __u64 slot_refunded(const struct slot_meter *m, __u64 slot, __u64 now, __u64 cost)
{
	struct sliding_counts c;
	__u64 end;

	switch (m->kind) {
	case SLUICE_METER_FIXED_WINDOW:
		end = window_end(now, m->window);
		return fixed_count(slot, end) >= cost ? slot - cost : slot;
	case SLUICE_METER_SLIDING_WINDOW:
		sliding_read(slot, now, m->window, m->bits, &c);
		return slot >= c.base && c.cur >= cost ? slot - cost : slot;
	case SLUICE_METER_WARMUP:
		return slot;
	}
	if (slot <= now)
		return slot;
	return slot - now > cost ? slot - cost : now;
}

#endif /* SLUICE_SLOT_H */
