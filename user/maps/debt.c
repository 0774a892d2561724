// SPDX-License-Identifier: GPL-2.0
/*
 * A changed default caps the debt its buckets carry: no bucket owes more
 * than the new burst after the change (docs/design.md, "What a change does
 * to a source's state").
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "maps/slots.h"
#include "maps/table.h"
#include "pins/sync.h"

/*
 * A change's debt cap (docs/design.md): the default's buckets more than a
 * new burst (and what a live fleet may owe) ahead, found in a read of the
 * tables and capped by the sync program, with the datapath's own clock and
 * compare-and-swap: a TAT written since the change is never lowered.
 */
struct debt_walk {
	const struct policy_maps *m;
	const struct sluice_policy *p;
	__u32 op;   /* SLUICE_FLEET_CAP or _CAP_AGGREGATE */
	__u64 now;  /* meter time when the walk began */
	__u64 owed; /* what a live fleet lets a source owe past its burst */
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

/* How far past now a bucket of the default may stay: its burst; 0 if not the default's. */
static __u64 debt_max(const struct debt_walk *dw, const struct sluice_key *key)
{
	const struct sluice_aggregate *a;

	if (key->policy != dw->p->id)
		return 0;
	if (dw->op == SLUICE_FLEET_CAP)
		return dw->p->limit + dw->owed;
	for (a = dw->p->aggregates; a < dw->p->aggregates + dw->p->n_aggregates; a++)
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

/* Every bucket of the default: its own (GCRA only), its aggregates', admission and overflow. */
static int debt_cap_all(struct debt_walk *dw, const struct sluice_config *cfg)
{
	const struct sluice_policy *p = dw->p;
	struct sluice_key rule = { .policy = p->id };
	int err = 0;

	if (p->meter == SLUICE_METER_GCRA) {
		dw->op = SLUICE_FLEET_CAP;
		err = table_walk(dw->m->buckets, cfg->table_seed, debt_visit, dw);
	}
	if (!err && p->n_aggregates) {
		dw->op = SLUICE_FLEET_CAP_AGGREGATE;
		err = debt_flush(dw)
			      ?: table_walk(dw->m->aggregates, cfg->table_seed, debt_visit, dw);
	}
	err = err ?: debt_add(dw, &rule, SLUICE_FLEET_CAP_ADMIT, p->admit_limit);
	err = err ?: debt_add(dw, &rule, SLUICE_FLEET_CAP_OVERFLOW, p->overflow_limit);
	return err ?: debt_flush(dw);
}

/*
 * After a change of the default's limits that kept its buckets: debt
 * past the new bursts is capped now, not at each source's next packet, so
 * the time that passes after the change refills them.
 */
int default_debt_cap(const struct policy_maps *m, const struct policy_doc *doc,
		     const struct policy_doc *live, const struct sluice_config *cfg)
{
	struct sluice_policy p;
	struct debt_walk *dw;
	int err;

	if (!m->sync || !live->dflt.rate.amount || doc->dflt_id != live->dflt_id ||
	    settings_equal(&doc->dflt, &live->dflt))
		return 0;
	err = slot_policy(doc, 0, &p);
	dw = err ? NULL : calloc(1, sizeof(*dw));
	if (!dw)
		return err ?: -ENOMEM;
	dw->m = m;
	dw->p = &p;
	dw->now = datapath_now(m);
	dw->owed = fleet_owed_now(m, dw->now);
	err = debt_cap_all(dw, cfg);
	free(dw);
	return err;
}
