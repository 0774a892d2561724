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

/*
 * What a packet took from its aggregates, carried across the three steps
 * below. The steps are global functions, which the verifier checks once
 * each: inlined, it checked every combination of their outcomes in the
 * caller, and Linux 6.1's verifier (Debian 12's) ran out of its million
 * instructions doing so. The step lives in per-CPU scratch (maps.h), not
 * on the caller's stack.
 */
struct aggregates_step {
	struct table_op op;  /* scratch */
	__u64 now;	     /* in */
	__u64 admissible_at; /* out: when the refusing bucket could take a packet (0: unknown) */
	__u32 taken;	     /* bit i: aggregate i charged, to give back if refused later */
	__u32 missing;	     /* bit i: aggregate i to create once the source passed */
};

_Static_assert(sizeof(struct aggregates_step) <= SCRATCH_BYTES, "scratch too small");

/* This CPU's step, emptied, for a packet metered at now; NULL never in practice. */
static __always_inline struct aggregates_step *aggregates_step_get(__u64 now)
{
	__u32 entry = SCRATCH_AGGREGATES;
	struct aggregates_step *s = bpf_map_lookup_elem(&scratch, &entry);

	if (s) {
		s->now = now;
		s->admissible_at = 0;
		s->taken = 0;
		s->missing = 0;
	}
	return s;
}

static __always_inline void aggregate_key(struct sluice_key *key, const struct packet *pkt,
					  const struct sluice_aggregate *a, __u16 id)
{
	*(__u32 *)key = sluice_key_head(a->family, a->prefix_len, id);
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
	/* The key is built in place: a copy on this frame would take the
	 * call chain's stack past 512 bytes. */
	aggregate_key(&op->key, pkt, a, p->id);
	table_op_place(op, cfg, &op->key, TABLE_AGGREGATES, cfg->aggregate_sets);
	table_op_at(op, now);
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

static __always_inline void aggregates_give_back(struct xdp_md *ctx, const struct packet *pkt,
						 const struct sluice_policy *p,
						 const struct sluice_config *cfg,
						 struct aggregates_step *s)
{
	int i;

#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		if (!(s->taken & (1U << i)))
			continue;
		aggregate_op(&s->op, ctx, pkt, p, cfg, &p->aggregates[i], s->now);
		table_refund(&s->op);
	}
	s->taken = 0;
}

/* Gives back what the packet took from its aggregates (s->taken). */
__attribute__((noinline)) int aggregates_refund(struct xdp_md *ctx, const struct packet *pkt,
						const struct sluice_policy *p,
						const struct sluice_config *cfg,
						struct aggregates_step *s)
{
	if (!pkt || !p || !cfg || !s)
		return 0;
	aggregates_give_back(ctx, pkt, p, cfg, s);
	return 0;
}

/*
 * Takes this packet from each aggregate bucket of its family that exists,
 * noting in s what it took and which have no bucket yet. On a refusal it
 * gives all back and returns METER_OVER, with s->admissible_at the earliest
 * moment the refusing bucket could take a packet again (0: unknown). A
 * packet that could not fit even a new bucket is refused here.
 */
__attribute__((noinline)) int aggregates_take(struct xdp_md *ctx, const struct packet *pkt,
					      const struct sluice_policy *p,
					      const struct sluice_config *cfg,
					      struct aggregates_step *s)
{
	const struct sluice_aggregate *a;
	int i, ret;

	if (!pkt || !p || !cfg || !s)
		return METER_OVER;
	s->admissible_at = 0;
#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		a = &p->aggregates[i];
		if (i >= p->n_aggregates || a->family != pkt->family)
			continue;
		aggregate_op(&s->op, ctx, pkt, p, cfg, a, s->now);
		ret = meter_settled(ctx, table_meter(&s->op));
		if (ret == METER_CONFORMS) {
			s->taken |= 1U << i;
			continue;
		}
		if (ret == TABLE_MISSING && s->op.cost <= s->op.limit) {
			s->missing |= 1U << i;
			continue;
		}
		if (ret == METER_OVER)
			s->admissible_at = aggregate_admissible_at(&s->op, a);
		goto refused;
	}
	return METER_CONFORMS;
refused:
	aggregates_give_back(ctx, pkt, p, cfg, s);
	return METER_OVER;
}

/*
 * Gives each of the packet's aggregates still without a bucket a new one,
 * full but for this packet. METER_OVER when one refuses the packet (another
 * CPU made it first), or has no room and --on-full says drop, with
 * s->admissible_at as above; the caller gives back what was taken.
 */
__attribute__((noinline)) int aggregates_create(struct xdp_md *ctx, const struct packet *pkt,
						const struct sluice_policy *p,
						const struct sluice_config *cfg,
						struct aggregates_step *s)
{
	const struct sluice_aggregate *a;
	int i, ret;

	if (!pkt || !p || !cfg || !s)
		return METER_OVER;
	s->admissible_at = 0;
#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		if (!(s->missing & (1U << i)))
			continue;
		a = &p->aggregates[i];
		aggregate_op(&s->op, ctx, pkt, p, cfg, a, s->now);
		s->op.fresh.tat = s->now + s->op.cost;
		s->op.fresh.passed = 1;
		s->op.fresh.dropped = 0;
		ret = meter_settled(ctx, table_insert_or_meter(&s->op));
		if (ret == TABLE_NEW || ret == TABLE_REPLACED || ret == METER_CONFORMS) {
			s->taken |= 1U << i;
			continue;
		}
		if (ret == TABLE_FULL) {
			stats_count(ctx, SLUICE_CNT_INSERT_FULL);
			if (p->flags & SLUICE_POL_FAIL_OPEN)
				continue;
		}
		if (ret == METER_OVER)
			s->admissible_at = aggregate_admissible_at(&s->op, a);
		return METER_OVER;
	}
	return METER_CONFORMS;
}

#endif /* SLUICE_BPF_AGGREGATE_H */
