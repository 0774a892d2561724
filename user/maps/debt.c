// SPDX-License-Identifier: GPL-2.0
/*
 * A limiter that keeps its id across a change of its settings (the default
 * or a rule) caps the debt its buckets carry: no bucket owes more than the
 * new burst after the change (docs/design.md, "What a change does
 * to a source's state").
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "maps/slots.h"
#include "maps/table.h"
#include "pins/sync.h"

/*
 * A change's debt cap (docs/design.md): the buckets of each limiter that
 * kept its id with new settings, more than a new burst (and what a live
 * fleet may owe) ahead, found in one read of each table and capped by the
 * sync program, with the datapath's own clock and compare-and-swap: a TAT
 * written since the change is never lowered.
 */
struct debt_walk {
	const struct policy_maps *m;
	struct sluice_policy p[SLUICE_MAX_POLICIES]; /* the changed limiters, compiled */
	int n;
	uint16_t at[1 << 16]; /* by id: 1 + its index in p, 0 for a limiter not changed */
	__u32 op;	      /* SLUICE_FLEET_CAP or _CAP_AGGREGATE */
	__u64 now;	      /* meter time when the walk began */
	__u64 owed;	      /* what a live fleet lets a source owe past its burst */
	struct sluice_fleet_batch b;
};

static int debt_flush(struct debt_walk *dw)
{
	int err = dw->b.count ? sync_run(dw->m->sync, &dw->b) : 0;

	dw->b.count = 0;
	return err;
}

static int debt_add(struct debt_walk *dw, const struct sluice_key *key, __u32 op, __u64 max)
{
	struct sluice_fleet_entry *e = &dw->b.e[dw->b.count++];

	memset(e, 0, sizeof(*e));
	e->key = *key;
	e->op = op;
	e->arg = max;
	return dw->b.count == SLUICE_FLEET_BATCH ? debt_flush(dw) : 0;
}

/*
 * How far past now a bucket of a changed limiter may stay: its burst; 0 if
 * no changed limiter has it, or its slot holds a window's or a warm-up's
 * counts rather than a TAT.
 */
static __u64 debt_max(const struct debt_walk *dw, const struct sluice_key *key)
{
	const struct sluice_aggregate *a;
	const struct sluice_policy *p;

	if (!dw->at[key->policy])
		return 0;
	p = &dw->p[dw->at[key->policy] - 1];
	if (dw->op == SLUICE_FLEET_CAP)
		return p->meter == SLUICE_METER_GCRA ? p->limit + dw->owed : 0;
	for (a = p->aggregates; a < p->aggregates + p->n_aggregates; a++)
		if (a->family == key->family && a->prefix_len == key->prefix_len)
			return a->limit;
	return 0;
}

static int debt_visit(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		      void *ctx)
{
	struct debt_walk *dw = ctx;
	__u64 max = debt_max(dw, key);

	(void)read_ns;
	if (!max || b->tat <= dw->now + max)
		return 0;
	return debt_add(dw, key, dw->op, max);
}

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

/* Which tables hold buckets of the changed limiters: a GCRA's own, any one's aggregates. */
static void debt_tables(const struct debt_walk *dw, bool *sources, bool *aggregates)
{
	int i;

	*sources = *aggregates = false;
	for (i = 0; i < dw->n; i++) {
		*sources |= dw->p[i].meter == SLUICE_METER_GCRA;
		*aggregates |= dw->p[i].n_aggregates > 0;
	}
}

/* Every bucket of the changed limiters: their own, their aggregates', admission and overflow. */
static int debt_cap_all(struct debt_walk *dw, const struct sluice_config *cfg)
{
	struct sluice_key rule = { 0 };
	bool sources, aggregates;
	int i, err = 0;

	debt_tables(dw, &sources, &aggregates);
	if (sources) {
		dw->op = SLUICE_FLEET_CAP;
		err = table_walk(dw->m->buckets, cfg->table_seed, debt_visit, dw);
	}
	if (!err && aggregates) {
		dw->op = SLUICE_FLEET_CAP_AGGREGATE;
		err = debt_flush(dw)
			      ?: table_walk(dw->m->aggregates, cfg->table_seed, debt_visit, dw);
	}
	for (i = 0; !err && i < dw->n; i++) {
		rule.policy = dw->p[i].id;
		err = debt_add(dw, &rule, SLUICE_FLEET_CAP_ADMIT, dw->p[i].admit_limit)
			      ?: debt_add(dw, &rule, SLUICE_FLEET_CAP_OVERFLOW,
					  dw->p[i].overflow_limit);
	}
	return err ?: debt_flush(dw);
}

/*
 * The live settings of the limiter at doc's slot (the default, or the rule
 * of its match) and, in *id, its live id; NULL when there is none.
 */
static const struct settings *live_settings(const struct policy_doc *doc,
					    const struct policy_doc *live, __u32 slot, uint16_t *id)
{
	int j;

	if (!slot) {
		*id = live->dflt_id;
		/* Fresh maps have no default yet. */
		return live->dflt.rate.amount ? &live->dflt : NULL;
	}
	j = doc_find_rule(live, &doc->rules[slot - 1].match);
	*id = j < 0 ? 0 : live->rules[j].id;
	return j < 0 ? NULL : &live->rules[j].settings;
}

static const struct settings *slot_settings(const struct policy_doc *doc, __u32 slot)
{
	return slot ? &doc->rules[slot - 1].settings : &doc->dflt;
}

/* Does doc's limiter at slot meet a live one of other settings (whatever its id)? */
static bool slot_changes(const struct policy_doc *doc, const struct policy_doc *live, __u32 slot,
			 uint16_t *id)
{
	const struct settings *was = live_settings(doc, live, slot, id);

	return was && !settings_equal(was, slot_settings(doc, slot));
}

bool debt_cap_wanted(const struct policy_doc *doc, const struct policy_doc *live)
{
	uint16_t id;
	__u32 slot;

	for (slot = 0; slot <= (__u32)doc->n_rules; slot++)
		if (slot_changes(doc, live, slot, &id))
			return true;
	return false;
}

/* The limiters of doc that kept their id (assign_ids) with new settings, into dw. */
static int debt_changed(struct debt_walk *dw, const struct policy_doc *doc,
			const struct policy_doc *live)
{
	struct sluice_policy *p;
	uint16_t id;
	__u32 slot;
	int err;

	for (slot = 0; slot <= (__u32)doc->n_rules; slot++) {
		p = &dw->p[dw->n];
		if (!slot_changes(doc, live, slot, &id))
			continue;
		err = slot_policy(doc, slot, p);
		if (err)
			return err;
		if (p->id == id)
			dw->at[p->id] = (uint16_t)++dw->n;
	}
	return 0;
}

/*
 * After a change that kept the ids of limiters with new limits: debt past
 * the new bursts is capped now, not at each source's next packet, so the
 * time that passes after the change refills them.
 */
int changed_debt_cap(const struct policy_maps *m, const struct policy_doc *doc,
		     const struct policy_doc *live, const struct sluice_config *cfg)
{
	struct debt_walk *dw;
	int err;

	if (!m->sync || !debt_cap_wanted(doc, live))
		return 0;
	dw = calloc(1, sizeof(*dw));
	if (!dw)
		return -ENOMEM;
	dw->m = m;
	err = debt_changed(dw, doc, live);
	dw->now = datapath_now(m);
	dw->owed = fleet_owed_now(m, dw->now);
	if (!err && dw->n)
		err = debt_cap_all(dw, cfg);
	free(dw);
	return err;
}
