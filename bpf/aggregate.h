/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prefix aggregates (--aggregate /24=5000/s): besides its own bucket, a
 * packet must fit the bucket of each wider prefix its rule limits, shared
 * by every source in that prefix. These buckets live in the aggregate
 * table, a set table like the source table and metered by the same code
 * (table.h), so a bucket that still holds state is never given away.
 *
 * Order. Aggregates that have a bucket are taken first, so a network that
 * spreads its flood over many addresses is refused before its sources
 * reach the source table. A prefix without a bucket gets one only once the
 * source's own bucket (and so the rule's new-source admission) has passed
 * the packet: forged sources cycling through prefixes then create
 * aggregate buckets no faster than admission and the overflow bucket let
 * them through, and cannot fill the table with buckets that still hold
 * state. When the table has no room, --on-full decides (insert_full).
 *
 * Refunds. What a later bucket refuses is given back, by key through the
 * table (table_refund), so a dropped packet never spends a neighbour's
 * allowance, and a refund never lands on another prefix nor wraps a TAT.
 */
#ifndef SLUICE_BPF_AGGREGATE_H
#define SLUICE_BPF_AGGREGATE_H

#include "bucket.h"
#include "classify.h"
#include "maps.h"
#include "table.h"

/* Which of a packet's aggregates it has taken from, and which have no bucket yet. */
struct aggregates_taken {
	__u32 taken;   /* bit i: aggregate i charged, to give back if refused later */
	__u32 missing; /* bit i: aggregate i to create once the source passed */
};

static __always_inline void aggregate_key(struct sluice_key *key, const struct packet *pkt,
					  const struct sluice_aggregate *a, __u16 id)
{
	*(__u32 *)key = key_head(a->family, a->prefix_len, id);
	key->addr[0] = pkt->addr[0] & a->mask[0];
	key->addr[1] = pkt->addr[1] & a->mask[1];
	key->addr[2] = pkt->addr[2] & a->mask[2];
	key->addr[3] = pkt->addr[3] & a->mask[3];
}

/* Readies op for aggregate a's bucket of this packet, costing it the packet. */
static __always_inline void aggregate_op(struct table_op *op, struct xdp_md *ctx,
					 const struct packet *pkt, const struct sluice_policy *p,
					 const struct sluice_config *cfg,
					 const struct sluice_aggregate *a, __u64 now)
{
	struct sluice_key key;

	aggregate_key(&key, pkt, a, p->id);
	table_op_place(op, cfg, &key, TABLE_AGGREGATES, cfg->aggregate_sets);
	op->now = now;
	op->cost = unit_cost(ctx, a->interval, a->rate_unit != SLUICE_UNIT_PACKETS);
	op->limit = a->limit;
}

/* The earliest moment the aggregate that refused op could take a packet (0: unknown). */
static __always_inline __u64 aggregate_admissible_at(const struct table_op *op,
						     const struct sluice_aggregate *a)
{
	if (!op->over_tat)
		return 0;
	/* A bandwidth may take the smallest frame sooner than this one. */
	return gcra_admissible_at(op->over_tat, op->now,
				  unit_cost_min(a->interval, a->rate_unit != SLUICE_UNIT_PACKETS),
				  a->limit);
}

/* Gives back what the packet took from its aggregates; op is scratch. */
static __always_inline void aggregates_refund(struct xdp_md *ctx, const struct packet *pkt,
					      const struct sluice_policy *p,
					      const struct sluice_config *cfg, __u64 now,
					      struct aggregates_taken *t, struct table_op *op)
{
	int i;

#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		if (!(t->taken & (1U << i)))
			continue;
		aggregate_op(op, ctx, pkt, p, cfg, &p->aggregates[i], now);
		table_refund(op);
	}
	t->taken = 0;
}

/*
 * Takes this packet from each aggregate bucket of its family that exists,
 * noting in *t what it took and which have no bucket yet. On a refusal it
 * gives all back and returns METER_OVER, with *admissible_at the earliest
 * moment the refusing bucket could take a packet again (0: unknown). A
 * packet that could not fit even a new bucket is refused here. op is
 * scratch.
 */
static __always_inline int aggregates_take(struct xdp_md *ctx, const struct packet *pkt,
					   const struct sluice_policy *p,
					   const struct sluice_config *cfg, __u64 now,
					   struct aggregates_taken *t, __u64 *admissible_at,
					   struct table_op *op)
{
	const struct sluice_aggregate *a;
	int i, ret;

	*admissible_at = 0;
#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		a = &p->aggregates[i];
		if (i >= p->n_aggregates || a->family != pkt->family)
			continue;
		aggregate_op(op, ctx, pkt, p, cfg, a, now);
		ret = meter_settled(ctx, table_meter(op));
		if (ret == METER_CONFORMS) {
			t->taken |= 1U << i;
			continue;
		}
		if (ret == TABLE_MISSING && op->cost <= op->limit) {
			t->missing |= 1U << i;
			continue;
		}
		if (ret == METER_OVER)
			*admissible_at = aggregate_admissible_at(op, a);
		goto refused;
	}
	return METER_CONFORMS;
refused:
	aggregates_refund(ctx, pkt, p, cfg, now, t, op);
	return METER_OVER;
}

/*
 * Gives each of the packet's aggregates still without a bucket a new one,
 * full but for this packet. METER_OVER when one refuses the packet (another
 * CPU made it first), or has no room and --on-full says drop, with
 * *admissible_at as above; the caller gives back what was taken. op is
 * scratch.
 */
static __always_inline int aggregates_create(struct xdp_md *ctx, const struct packet *pkt,
					     const struct sluice_policy *p,
					     const struct sluice_config *cfg, __u64 now,
					     struct aggregates_taken *t, __u64 *admissible_at,
					     struct table_op *op)
{
	const struct sluice_aggregate *a;
	int i, ret;

	*admissible_at = 0;
#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		if (!(t->missing & (1U << i)))
			continue;
		a = &p->aggregates[i];
		aggregate_op(op, ctx, pkt, p, cfg, a, now);
		op->fresh.tat = now + op->cost;
		op->fresh.passed = 1;
		op->fresh.dropped = 0;
		ret = meter_settled(ctx, table_insert_or_meter(op));
		if (ret == TABLE_NEW || ret == TABLE_REPLACED || ret == METER_CONFORMS) {
			t->taken |= 1U << i;
			continue;
		}
		if (ret == TABLE_FULL) {
			stats_count(ctx, SLUICE_CNT_INSERT_FULL);
			if (p->flags & SLUICE_POL_FAIL_OPEN)
				continue;
		}
		if (ret == METER_OVER)
			*admissible_at = aggregate_admissible_at(op, a);
		return METER_OVER;
	}
	return METER_CONFORMS;
}

#endif /* SLUICE_BPF_AGGREGATE_H */
