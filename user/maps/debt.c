// SPDX-License-Identifier: GPL-2.0
/*
 * A limiter that keeps its id across a change of its settings (the default
 * or a rule) rebases the buckets it keeps: each keeps the share of its
 * burst it had, and none owes more than the new burst (docs/design.md,
 * "What a change does to a source's state").
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "maps/debt.h"
#include "maps/slots.h"
#include "maps/table.h"
#include "pins/sync.h"

/* One kind of bucket of a changed limiter: its burst's length before and after, in meter time. */
struct debt_limit {
	__u64 old_limit; /* 0: it had none of that kind (a cap alone) */
	__u64 new_limit;
	__u64 max; /* the most debt it keeps: its new burst, and what a live fleet may owe */
};

/* A changed limiter's kinds of bucket: indexes into debt_plan.limits. */
struct debt_limiter {
	struct sluice_policy p; /* compiled, as it now is */
	__u16 own, admit, overflow, proven;
	__u16 agg[SLUICE_MAX_AGGREGATES];
};

/* A bucket read in debt before the change. */
struct debt_mark {
	struct sluice_key key;
	__u8 op; /* SLUICE_FLEET_CAP* */
	__u8 pad;
	__u16 limit; /* index into debt_plan.limits */
	__u64 was;   /* its TAT then */
};

struct debt_plan {
	const struct policy_maps *m;
	struct debt_limiter lim[SLUICE_MAX_POLICIES];
	int n;
	uint16_t at[1 << 16]; /* by id: 1 + its index in lim, 0 for a limiter not changed */
	struct debt_limit limits[SLUICE_MAX_POLICIES *
				 (4 + SLUICE_MAX_AGGREGATES)]; /* own, admit, overflow, proven */
	int n_limits;
	__u8 op;    /* of the table being read */
	__u64 now;  /* meter time when the plan was made */
	__u64 owed; /* what a live fleet lets a source owe past its burst */
	struct debt_mark *marks;
	size_t n_marks, cap_marks;
};

static __u64 datapath_now(const struct policy_maps *m)
{
	return (m->now_ns ? m->now_ns() : monotonic_ns()) << SLUICE_TIME_SHIFT;
}

/* What a live fleet agent lets a source owe past its burst, as the datapath reads it. */
static __u64 fleet_owed_now(const struct policy_maps *m, __u64 now)
{
	struct sluice_fleet_hint hint;
	__u32 zero = 0;

	if (m->fleet < 0 || bpf_map_lookup_elem(m->fleet, &zero, &hint))
		return 0;
	return now < hint.live_until ? hint.debt_max : 0;
}

static __u16 limit_add(struct debt_plan *dp, __u64 old_limit, __u64 new_limit, __u64 max)
{
	dp->limits[dp->n_limits] = (struct debt_limit){ old_limit, new_limit, max };
	return (__u16)dp->n_limits++;
}

/* The live aggregate of a's family and prefix length, or NULL. */
static const struct sluice_aggregate *aggregate_of(const struct sluice_policy *live,
						   const struct sluice_aggregate *a)
{
	int i;

	for (i = 0; i < live->n_aggregates; i++)
		if (live->aggregates[i].family == a->family &&
		    live->aggregates[i].prefix_len == a->prefix_len)
			return &live->aggregates[i];
	return NULL;
}

/* A changed limiter, was its live self: its kinds of bucket and their bursts. */
static void limiter_add(struct debt_plan *dp, const struct sluice_policy *p,
			const struct sluice_policy *was)
{
	struct debt_limiter *l = &dp->lim[dp->n];
	const struct sluice_aggregate *a, *old;
	bool gcra = p->meter == SLUICE_METER_GCRA && was->meter == SLUICE_METER_GCRA;
	int i;

	l->p = *p;
	l->own = limit_add(dp, gcra ? was->limit : 0, p->limit, p->limit + dp->owed);
	l->admit = limit_add(dp, was->admit_limit, p->admit_limit, p->admit_limit);
	l->overflow = limit_add(dp, was->overflow_limit, p->overflow_limit, p->overflow_limit);
	l->proven = limit_add(dp, was->prove_limit, p->prove_limit, p->prove_limit);
	for (i = 0; i < p->n_aggregates; i++) {
		a = &p->aggregates[i];
		old = aggregate_of(was, a);
		l->agg[i] = limit_add(dp, old ? old->limit : 0, a->limit, a->limit);
	}
	dp->at[p->id] = (uint16_t)++dp->n;
}

/*
 * The live limiter of doc's slot (the default, or the rule of its match):
 * its settings, and in *was, if given, its compiled policy with its id;
 * NULL when there is none.
 */
static const struct settings *live_limiter(const struct policy_doc *doc,
					   const struct policy_doc *live, __u32 slot,
					   struct sluice_policy *was)
{
	const struct rule *r;
	int j;

	if (!slot) {
		/* Fresh maps have no default yet. */
		if (!live->dflt.rate.amount)
			return NULL;
		if (was) {
			*was = live->dflt_policy;
			was->id = live->dflt_id;
		}
		return &live->dflt;
	}
	j = doc_find_rule(live, &doc->rules[slot - 1].match);
	if (j < 0)
		return NULL;
	r = &live->rules[j];
	if (was) {
		*was = r->policy;
		was->id = r->id;
	}
	return &r->settings;
}

static const struct settings *slot_settings(const struct policy_doc *doc, __u32 slot)
{
	return slot ? &doc->rules[slot - 1].settings : &doc->dflt;
}

/*
 * Does doc's limiter at slot meet a live one of other settings (whatever
 * its id)? That one into *was, if given.
 */
static bool slot_changes(const struct policy_doc *doc, const struct policy_doc *live, __u32 slot,
			 struct sluice_policy *was)
{
	const struct settings *now = live_limiter(doc, live, slot, was);

	return now && !settings_equal(now, slot_settings(doc, slot));
}

bool debt_rebase_wanted(const struct policy_doc *doc, const struct policy_doc *live)
{
	__u32 slot;

	for (slot = 0; slot <= (__u32)doc->n_rules; slot++)
		if (slot_changes(doc, live, slot, NULL))
			return true;
	return false;
}

/* The limiters of doc that kept their id (assign_ids) with new settings, into dp. */
static int plan_limiters(struct debt_plan *dp, const struct policy_doc *doc,
			 const struct policy_doc *live)
{
	struct sluice_policy p, was;
	__u32 slot;
	int err;

	for (slot = 0; slot <= (__u32)doc->n_rules; slot++) {
		if (!slot_changes(doc, live, slot, &was))
			continue;
		err = slot_policy(doc, slot, &p);
		if (err)
			return err;
		if (p.id == was.id)
			limiter_add(dp, &p, &was);
	}
	return 0;
}

/* The kind of bucket key is of, in the table being read; NULL if no changed limiter has it. */
static const struct debt_limit *limit_of(const struct debt_plan *dp, const struct sluice_key *key,
					 __u16 *index)
{
	const struct debt_limiter *l;
	int i;

	if (!dp->at[key->policy])
		return NULL;
	l = &dp->lim[dp->at[key->policy] - 1];
	if (dp->op == SLUICE_FLEET_CAP) {
		if (l->p.meter != SLUICE_METER_GCRA)
			return NULL; /* a window's or a warm-up's counts: never capped */
		*index = l->own;
		return &dp->limits[*index];
	}
	for (i = 0; i < l->p.n_aggregates; i++)
		if (l->p.aggregates[i].family == key->family &&
		    l->p.aggregates[i].prefix_len == key->prefix_len) {
			*index = l->agg[i];
			return &dp->limits[*index];
		}
	return NULL;
}

static int mark_add(struct debt_plan *dp, const struct sluice_key *key, __u8 op, __u16 limit,
		    __u64 was)
{
	struct debt_mark *grown;
	size_t cap;

	if (dp->n_marks == dp->cap_marks) {
		cap = dp->cap_marks ? 2 * dp->cap_marks : 1024;
		grown = realloc(dp->marks, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		dp->marks = grown;
		dp->cap_marks = cap;
	}
	dp->marks[dp->n_marks++] =
		(struct debt_mark){ .key = *key, .op = op, .limit = limit, .was = was };
	return 0;
}

/* Whether a TAT read at the plan's moment is in debt that the change moves. */
static bool mark_wanted(const struct debt_plan *dp, const struct debt_limit *l, __u64 tat)
{
	if (tat <= dp->now)
		return false;
	return (l->old_limit && l->old_limit != l->new_limit) || tat - dp->now > l->max;
}

static int plan_visit(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		      void *ctx)
{
	struct debt_plan *dp = ctx;
	const struct debt_limit *l;
	__u16 index;

	(void)read_ns;
	l = limit_of(dp, key, &index);
	if (!l || !mark_wanted(dp, l, b->tat))
		return 0;
	return mark_add(dp, key, dp->op, index, b->tat);
}

/* Which tables hold buckets of the changed limiters: a GCRA's own, any one's aggregates. */
static void plan_tables(const struct debt_plan *dp, bool *sources, bool *aggregates)
{
	int i;

	*sources = *aggregates = false;
	for (i = 0; i < dp->n; i++) {
		*sources |= dp->lim[i].p.meter == SLUICE_METER_GCRA;
		*aggregates |= dp->lim[i].p.n_aggregates > 0;
	}
}

/* Each changed rule's admission, overflow and proven-source buckets, read as they are. */
static int plan_admission(struct debt_plan *dp)
{
	const struct debt_limiter *l;
	struct sluice_admission adm;
	struct sluice_key rule = { 0 };
	__u32 id;
	int i, err = 0;

	for (i = 0; !err && i < dp->n; i++) {
		l = &dp->lim[i];
		id = rule.policy = l->p.id;
		if (bpf_map_lookup_elem(dp->m->admission, &id, &adm))
			continue;
		if (mark_wanted(dp, &dp->limits[l->admit], adm.admit_tat))
			err = mark_add(dp, &rule, SLUICE_FLEET_CAP_ADMIT, l->admit, adm.admit_tat);
		if (!err && mark_wanted(dp, &dp->limits[l->overflow], adm.overflow_tat))
			err = mark_add(dp, &rule, SLUICE_FLEET_CAP_OVERFLOW, l->overflow,
				       adm.overflow_tat);
		if (!err && mark_wanted(dp, &dp->limits[l->proven], adm.proven_tat))
			err = mark_add(dp, &rule, SLUICE_FLEET_CAP_PROVEN, l->proven,
				       adm.proven_tat);
	}
	return err;
}

/* Every bucket of the changed limiters in debt: their own, their aggregates', admission, overflow.
 */
static int plan_read(struct debt_plan *dp, const struct sluice_config *cfg)
{
	bool sources, aggregates;
	int err = 0;

	plan_tables(dp, &sources, &aggregates);
	if (sources) {
		dp->op = SLUICE_FLEET_CAP;
		err = table_walk(dp->m->buckets, cfg->table_seed, plan_visit, dp);
	}
	if (!err && aggregates) {
		dp->op = SLUICE_FLEET_CAP_AGGREGATE;
		err = table_walk(dp->m->aggregates, cfg->table_seed, plan_visit, dp);
	}
	return err ?: plan_admission(dp);
}

int debt_plan_make(const struct policy_maps *m, const struct policy_doc *doc,
		   const struct policy_doc *live, const struct sluice_config *cfg,
		   struct debt_plan **plan)
{
	struct debt_plan *dp;
	int err;

	*plan = NULL;
	/* Loaded only when a limiter's settings change (debt_rebase_wanted). */
	if (!m->sync)
		return 0;
	dp = calloc(1, sizeof(*dp));
	if (!dp)
		return -ENOMEM;
	dp->m = m;
	dp->now = datapath_now(m);
	dp->owed = fleet_owed_now(m, dp->now);
	err = plan_limiters(dp, doc, live);
	if (!err && dp->n)
		err = plan_read(dp, cfg);
	if (err) {
		debt_plan_free(dp);
		return err;
	}
	*plan = dp;
	return 0;
}

/*
 * The debt a bucket keeps at now, `was` its TAT: the share of the old burst
 * it owed, of the new one, rounded up and no more than the most it keeps.
 */
static __u64 debt_rebased(const struct debt_limit *l, __u64 was, __u64 now)
{
	unsigned __int128 scaled;
	__u64 debt = was - now;

	if (l->old_limit && l->old_limit != l->new_limit) {
		scaled = ((unsigned __int128)debt * l->new_limit + l->old_limit - 1) / l->old_limit;
		return scaled < l->max ? (__u64)scaled : l->max;
	}
	return debt < l->max ? debt : l->max;
}

/* Marks [from, to) as one batch, rebased at the clock's present moment. */
static int apply_batch(const struct debt_plan *dp, size_t from, size_t to,
		       struct sluice_fleet_batch *b)
{
	const struct debt_mark *k;
	const struct debt_limit *l;
	__u64 now = datapath_now(dp->m);
	struct sluice_fleet_entry *e;

	memset(b, 0, sizeof(*b));
	for (; from < to; from++) {
		k = &dp->marks[from];
		/* Full again since: nothing to keep (a packet since is capped as it meets it). */
		if (k->was <= now)
			continue;
		l = &dp->limits[k->limit];
		e = &b->e[b->count++];
		e->key = k->key;
		e->op = k->op;
		e->arg = l->max;
		e->was_tat = k->was;
		e->to_tat = now + debt_rebased(l, k->was, now);
	}
	return b->count ? sync_run(dp->m->sync, b) : 0;
}

int debt_plan_apply(const struct debt_plan *dp)
{
	struct sluice_fleet_batch b;
	size_t i, end;
	int err = 0;

	for (i = 0; dp && !err && i < dp->n_marks; i = end) {
		end = i + SLUICE_FLEET_BATCH < dp->n_marks ? i + SLUICE_FLEET_BATCH : dp->n_marks;
		err = apply_batch(dp, i, end, &b);
	}
	return err;
}

void debt_plan_free(struct debt_plan *dp)
{
	if (dp)
		free(dp->marks);
	free(dp);
}
