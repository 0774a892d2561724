/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-key GCRA, exact across CPUs: one TAT per key in the source table
 * (table.h), advanced by compare-and-swap, so every CPU meters the same
 * bucket. A per-CPU negative cache answers repeated over-limit packets
 * without the configuration, the table or the clock (hot.h).
 *
 * Each bucket also counts its packets for `sluice top`, one atomic add per
 * packet that reaches it. Packets the cache refuses are counted in the
 * cache entry (plain per-CPU) and added to the bucket later in one go, so
 * the fast path stays free of shared writes.
 */
#ifndef SLUICE_BPF_METER_H
#define SLUICE_BPF_METER_H

#include "act.h"
#include "aggregate.h"
#include "ban.h"
#include "bucket.h"
#include "clock.h"
#include "hot.h"
#include "prove.h"
#include "table.h"

/* struct table_op.charged: what meter_source charged for a packet it passed. */
enum source_charge {
	CHARGED_BUCKET,	  /* the source's own bucket */
	CHARGED_NONE,	  /* nothing: no room for its bucket, --on-full pass */
	CHARGED_OVERFLOW, /* its rule's overflow bucket */
};

/*
 * One step of a rule's shared bucket (admission, overflow): refused by the
 * op's reading, or else by the early clock, when either can tell
 * (gcra_refuses_early); otherwise stepped at the precise moment, read now
 * if the op has none. METER_CONFORMS or METER_OVER.
 */
static __always_inline int shared_take(struct xdp_md *ctx, struct table_op *op, __u64 *tatp,
				       __u64 cost, __u64 limit)
{
	__u64 early, tat;

	/* Read once a packet: admission and the overflow bucket may both ask. */
	if (!op_has_reading(op) && !op->early)
		op->early = clock_early();
	early = op_has_reading(op) ? op->now : op->early;

	if (gcra_refuses_early(tatp, early, cost, limit))
		return METER_OVER;
	table_op_clock(op);
	return meter_settled(ctx, gcra_take(tatp, op->now, cost, limit, &tat));
}

/*
 * A source refused a bucket: charged to the rule's shared overflow bucket,
 * never passed unmetered. Under a spoofed flood that bucket refuses nearly
 * every packet, most of them without the precise clock.
 */
static __always_inline int meter_overflow(struct xdp_md *ctx, struct packet *pkt,
					  const struct sluice_policy *p,
					  struct sluice_admission *adm, struct table_op *op)
{
	__u64 cost = unit_cost(ctx, p->overflow_interval, p->flags & SLUICE_POL_BYTES);
	int ret;

	op->charged = CHARGED_OVERFLOW;
	ret = shared_take(ctx, op, &adm->overflow_tat, cost, p->overflow_limit);
	pkt->overflow = ret == METER_CONFORMS ? PKT_OVERFLOW_PASSED : PKT_OVERFLOW_DROPPED;
	return ret;
}

/* Whether CPU cache c's gate was shut for rule under the live configuration (at some moment). */
static __always_inline int gate_shut_for(const struct sluice_hot *c, __u32 rule)
{
	return c->head.shut_early && c->head.shut_rule == rule &&
	       c->head.shut_generation == config_generation;
}

/*
 * The shut gate (sluice_hot_head.shut_*): whether this CPU saw rule p's
 * new-source budget and overflow bucket both refuse at the early clock's
 * present moment, read into op->early here as shared_take would. Both
 * refuse by that moment anyway (gcra_refuses_early), and within it their
 * TATs only move on, but for a refund of what another CPU's packet took,
 * which the gate keeps refused until the tick ends (design.md, the early
 * clock's bound). So it spares a spoofed flood's packets the two steps,
 * one tick at a time. Not for a packet that asks another budget or
 * answers (--prove), nor once the op read the precise clock.
 */
static __always_inline int gate_shut(struct table_op *op, const struct packet *pkt,
				     const struct sluice_policy *p)
{
	struct sluice_hot *c;

	if (pkt->prove || op_has_reading(op))
		return 0;
	c = hot_cpu();
	if (!c || !gate_shut_for(c, p->id))
		return 0;
	if (!op->early)
		op->early = clock_early();
	return c->head.shut_early == op->early;
}

/*
 * Whether op's key certainly has no bucket while this CPU's gate for rule
 * is shut: meter_new_source_at would refuse it at its first step. Asked
 * before the call into the table, a spoofed flood's packets past the
 * budget skip that call, the cache's pending refusals taken and given
 * back, and the gate's second look-up. The filter's words answer most;
 * one they leave is looked for in its sets' tag lines alone (table_holds),
 * not the six lines a set's meter step touches: once a long flood has
 * filled the table, the filter leaves half of its forged sources. The
 * early clock last: a known source does not need it.
 */
__attribute__((noinline)) int gate_refuses_new(const struct table_op *op, __u32 rule)
{
	const struct sluice_hot *c = hot_cpu();
	int may;

	if (!op || !c || !gate_shut_for(c, rule))
		return 0;
	may = table_may_hold(op);
	if (may && table_holds(op, may))
		return 0;
	return c->head.shut_early == clock_early();
}

/*
 * The same, refused and charged as meter_new_source_at's gate does. Only
 * where nothing comes before a source's own bucket (no aggregate) and the
 * gate holds: no precise reading yet, no answer (--prove).
 */
static __always_inline int meter_shut_out(struct packet *pkt, const struct table_op *op,
					  const struct sluice_policy *p)
{
	if (op_has_reading(op) || pkt->prove || !gate_refuses_new(op, p->id))
		return 0;
	pkt->overflow = PKT_OVERFLOW_DROPPED;
	return 1;
}

/*
 * After both steps refused a packet: shuts the gate for the rest of the
 * tick when both refuse even the cheapest packet by the early clock, as
 * they would any new source's (the budget's cost is per source).
 */
static __always_inline void gate_note(const struct table_op *op, const struct packet *pkt,
				      const struct sluice_policy *p, struct sluice_admission *adm)
{
	struct sluice_hot *c;

	if (pkt->prove || op_has_reading(op) || !op->early)
		return;
	if (!gcra_refuses_early(&adm->admit_tat, op->early, p->admit_interval, p->admit_limit) ||
	    !gcra_refuses_early(&adm->overflow_tat, op->early,
				unit_cost_min(p->overflow_interval, p->flags & SLUICE_POL_BYTES),
				p->overflow_limit))
		return;
	c = hot_cpu();
	if (!c)
		return;
	c->head.shut_early = op->early;
	c->head.shut_rule = p->id;
	c->head.shut_generation = config_generation;
}

/*
 * The sets' lines of a new source this CPU will likely admit, loaded
 * before the clock: the clock's ordered read then waits for their misses
 * together with the cache's line and the filter's words, rather than the
 * insert missing after it. Likely while this CPU's last new source was
 * admitted (the head's hint; admission_remember). Past the budget, under
 * a spoofed flood, it was not, and the filter keeps sparing the table.
 */
static __always_inline void admission_touch(const struct table_op *op)
{
	struct sluice_hot *c = hot_cpu();

	if (c && !c->head.admit_refused)
		table_touch(op, TABLE_BOTH_SETS);
}

/* The hint admission_touch reads, written only when it changes. */
static __always_inline void admission_remember(int admitted)
{
	struct sluice_hot *c = hot_cpu();

	if (c && c->head.admit_refused != (__u8)!admitted)
		c->head.admit_refused = !admitted;
}

/*
 * A new bucket's slot after this packet, and whether it passed: a GCRA
 * bucket starts with the initial burst, any other slot from zero (an
 * empty window, or a cold warm-up).
 */
static __always_inline int slot_fresh(const struct table_op *op, const struct sluice_policy *p,
				      __u64 *slot)
{
	__u64 start = op->now + p->initial_offset;
	int conforms;

	if (p->meter != SLUICE_METER_GCRA) {
		*slot = slot_step(op, 0);
		return *slot != 0;
	}
	conforms = op->cost + p->initial_offset <= p->limit;
	*slot = conforms ? start + op->cost : start;
	return conforms;
}

/*
 * Which budget gives a new source its bucket: a RST whose cookie checked
 * out (prove.h) spends the rule's proven-source budget, which forged
 * sources cannot reach; any other packet the new-source budget. Chosen
 * by offset, not by branch: every branch in here the verifier walks for
 * each of the paths that lead to it.
 */
#define PROVE_GCRA_DELTA                                            \
	(__builtin_offsetof(struct sluice_policy, prove_interval) - \
	 __builtin_offsetof(struct sluice_policy, admit_interval))
/* Each budget's limit follows its interval; the proven TAT is two words past the other. */
_Static_assert(__builtin_offsetof(struct sluice_policy, admit_limit) ==
			       __builtin_offsetof(struct sluice_policy, admit_interval) + 8 &&
		       __builtin_offsetof(struct sluice_policy, prove_limit) ==
			       __builtin_offsetof(struct sluice_policy, prove_interval) + 8,
	       "meter_budget reads a budget as interval, then limit");
_Static_assert(__builtin_offsetof(struct sluice_admission, proven_tat) ==
		       __builtin_offsetof(struct sluice_admission, admit_tat) + 2 * 8,
	       "meter_budget finds the proven TAT two words past admit_tat");
static __always_inline int meter_budget(struct xdp_md *ctx, const struct packet *pkt,
					struct table_op *op, const struct sluice_policy *p,
					struct sluice_admission *adm)
{
	__u32 proven = pkt->prove & PKT_PROVEN & (p->flags / SLUICE_POL_PROVE_TCP);
	const __u64 *gcra =
		(const __u64 *)((const __u8 *)&p->admit_interval + proven * PROVE_GCRA_DELTA);
	int conforms;

	admission_touch(op);
	/* The budget: refused early under a flood past it, admitted only at the precise moment. */
	conforms = shared_take(ctx, op, &adm->admit_tat + proven * 2, gcra[0], gcra[1]) ==
		   METER_CONFORMS;
	admission_remember(conforms);
	return conforms;
}

/*
 * A source seen for the first time: refused at once while this CPU's gate
 * for the rule is shut (gate_shut). Else, admitted within the rule's
 * new-source budget (or, proven, its proven-source budget), it gets a
 * bucket holding the initial burst, metered with this packet (and counted
 * in it, with the refusals the cache held for it, op->pending, which is
 * then 0); refused, it goes to the overflow bucket, or its SYN is answered
 * with a cookie (--prove). A set full of buckets that still hold state
 * takes no one: --on-full.
 */
static __always_inline int meter_new_source_at(struct xdp_md *ctx, struct packet *pkt,
					       struct table_op *op, const struct sluice_policy *p)
{
	struct sluice_admission *adm;
	__u32 id = p->id;
	int conforms;
	int ret;

	if (gate_shut(op, pkt, p)) {
		op->charged = CHARGED_OVERFLOW;
		pkt->overflow = PKT_OVERFLOW_DROPPED;
		return METER_OVER;
	}
	adm = bpf_map_lookup_elem(&admission, &id);
	if (!adm)
		return METER_OVER;
	if (pkt->prove & PKT_PROVE_ALWAYS)
		return METER_PROVE;
	if (!meter_budget(ctx, pkt, op, p, adm)) {
		if (pkt->prove & PKT_PROVE_PAST_BUDGET)
			return METER_PROVE;
		ret = meter_overflow(ctx, pkt, p, adm, op);
		if (ret == METER_OVER)
			gate_note(op, pkt, p, adm);
		return ret;
	}
	conforms = slot_fresh(op, p, &op->fresh.tat);
	op->fresh.passed = conforms;
	op->fresh.dropped = !conforms + op->pending;
	ret = table_insert_or_meter(op);
	switch (ret) {
	case TABLE_FULL:
		stats_count(ctx, SLUICE_CNT_INSERT_FULL);
		op->charged = CHARGED_NONE;
		return p->flags & SLUICE_POL_FAIL_OPEN ? METER_CONFORMS : METER_OVER;
	case TABLE_REPLACED:
		stats_count(ctx, SLUICE_CNT_EVICTED);
		/* fall through */
	case TABLE_NEW:
		op->pending = 0;
		stats_count(ctx, SLUICE_CNT_NEW_SOURCE);
		return conforms ? METER_CONFORMS : METER_OVER;
	case TABLE_MISSING: /* the way another CPU gave it changed hands again */
		return METER_OVER;
	}
	/* Another CPU made it first; metered there (op->pending included). */
	op->pending = 0;
	return meter_settled(ctx, ret);
}

/*
 * The same; refusals that found no bucket go back to the cache, at one
 * call site (each call of a global function costs the verifier dearly).
 */
static __always_inline int meter_new_source(struct xdp_md *ctx, struct packet *pkt,
					    struct table_op *op, const struct sluice_policy *p,
					    union sluice_hot_line *h)
{
	int ret = meter_new_source_at(ctx, pkt, op, p);

	hot_give_back(h, op);
	op->pending = 0;
	return ret;
}

/* How the policy meters a source's slot (table_op's slot fields). */
static __always_inline void slot_meter_of(struct table_op *op, const struct sluice_policy *p)
{
	op->limit = p->limit;
	op->window = p->meter == SLUICE_METER_WARMUP ? p->warm_max : p->window_ms;
	op->kind = p->meter;
	op->bits = p->state_bits;
}

/*
 * A packet of a source the cache held, passed at its moment: the cache
 * learns the source's next moment now, or the source's next packet would
 * take the full path only to be refused. The slot a pass leaves is the one
 * the next refusal would (a GCRA debt is capped only past a burst), so the
 * moment is as exact. Not under aggregates: hot_remember may spend op on
 * another key's refusals, and a refund may still need it (meter_packet).
 */
static __always_inline int meter_refreshes(const union sluice_hot_line *h, const struct packet *pkt,
					   const struct sluice_policy *p, int ret)
{
	return ret == METER_CONFORMS && h && !p->n_aggregates && hot_holds_addr(h, pkt);
}

/* The source's own bucket, created through admission when new. */
static __always_inline int meter_source(struct xdp_md *ctx, struct packet *pkt,
					const struct sluice_policy *p, __u32 index,
					const struct sluice_config *cfg, union sluice_hot_line *h,
					struct table_op *op)
{
	int bytes = p->flags & SLUICE_POL_BYTES;
	__u64 slot, admissible_at, banned_until = 0;
	int ret;

	op->cost = unit_cost(ctx, p->interval, bytes);
	slot_meter_of(op, p);
	op->pending = hot_take_pending(h, &op->key);
	ret = table_meter(op);
	if (ret == TABLE_MISSING)
		return meter_new_source(ctx, pkt, op, p, h);
	/* The key's own bucket's refusals, the cache's included: toward its ban. */
	if (p->flags & SLUICE_POL_BAN)
		banned_until = ban_note(ctx, op, p, ret == METER_OVER);
	op->pending = 0; /* in the bucket's count now */
	if (ret == METER_OVER || meter_refreshes(h, pkt, p, ret)) {
		slot = ret == METER_OVER ? op->over_tat : op->stepped_to;
		/* A bandwidth may take the smallest frame sooner than this one. */
		admissible_at =
			op->kind == SLUICE_METER_GCRA
				? gcra_admissible_at(slot, op->now,
						     unit_cost_min(p->interval, bytes), p->limit)
				: slot_admissible(op, slot, unit_cost_min(p->interval, bytes));
		/* A ban imposed here ends the entry, not the bucket's moment. */
		hot_remember(h, pkt, p, index, cfg, banned_until ?: admissible_at, op,
			     banned_until ? SLUICE_HOT_BANNED : 0);
	}
	return meter_settled(ctx, ret);
}

/*
 * Gives back what meter_source charged for a packet it passed and a new
 * aggregate bucket then refused: to the source's own bucket, found by key
 * (moving the packet to its dropped count), or to the rule's overflow
 * bucket, which the rule's refused sources share.
 */
static __always_inline void meter_source_refund(struct xdp_md *ctx, const struct sluice_policy *p,
						struct table_op *op)
{
	struct sluice_admission *adm;
	__u32 id = p->id;

	if (op->charged == CHARGED_BUCKET) {
		table_refund(op);
		return;
	}
	if (op->charged != CHARGED_OVERFLOW)
		return;
	adm = bpf_map_lookup_elem(&admission, &id);
	if (adm)
		tat_refund(&adm->overflow_tat, op->now,
			   unit_cost(ctx, p->overflow_interval, p->flags & SLUICE_POL_BYTES));
}

/* A packet an aggregate refused: a drop of its source, if it has a bucket. */
static __always_inline void meter_aggregate_refused(const struct packet *pkt,
						    const struct sluice_policy *p, __u32 index,
						    const struct sluice_config *cfg,
						    union sluice_hot_line *h, __u64 admissible_at,
						    struct table_op *op)
{
	op->pending = 1 + hot_take_pending(h, &op->key);
	if (table_add_dropped(op))
		op->pending = 0;
	hot_remember(h, pkt, p, index, cfg, admissible_at, op, 0);
}

/*
 * The full decision, once the fast path could not answer; now may be 0
 * (unread). The rule's aggregates that have a bucket come first, then the
 * source's own bucket, then new buckets for the other aggregates
 * (aggregate.h says why); a packet refused at any step gets back what the
 * earlier ones took.
 */
static __always_inline int meter_packet(struct xdp_md *ctx, struct packet *pkt,
					const struct sluice_key *key, const struct sluice_policy *p,
					__u32 index, const struct sluice_config *cfg,
					union sluice_hot_line *h, __u64 now)
{
	struct table_op *op = scratch_op(SCRATCH_SOURCE);
	struct aggregates_step *agg;
	int ret;

	if (!op)
		return METER_OVER;
	table_op_init(op, cfg, key);
	table_op_at(op, now);
	if (!p->n_aggregates)
		return meter_shut_out(pkt, op, p) ? METER_OVER
						  : meter_source(ctx, pkt, p, index, cfg, h, op);
	table_op_clock(op);
	agg = aggregates_step_get(op->now);
	if (!agg)
		return METER_OVER;
	if (aggregates_take(ctx, pkt, p, cfg, agg) != METER_CONFORMS) {
		meter_aggregate_refused(pkt, p, index, cfg, h, agg->admissible_at, op);
		return METER_OVER;
	}
	ret = meter_source(ctx, pkt, p, index, cfg, h, op);
	if (ret == METER_CONFORMS && agg->missing &&
	    aggregates_create(ctx, pkt, p, cfg, agg) != METER_CONFORMS) {
		meter_source_refund(ctx, p, op);
		if (agg->admissible_at)
			hot_remember(h, pkt, p, index, cfg, agg->admissible_at, op, 0);
		ret = METER_OVER;
	}
	if (ret != METER_CONFORMS)
		aggregates_refund(ctx, pkt, p, cfg, agg);
	return ret;
}

#endif /* SLUICE_BPF_METER_H */
