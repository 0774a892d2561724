// SPDX-License-Identifier: GPL-2.0
/*
 * Rule ids, the bucket id spaces: kept by a limiter whose meter keeps its
 * shape, given anew (never to an id whose buckets still hold state) to any
 * other.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "maps/config.h"
#include "maps/slots.h"
#include "maps/table.h"

/*
 * Rule ids a new rule may not get: 0 (the default's first) and every
 * policy's in both sets of slots (the set being replaced may still be in use). Once
 * the ids have wrapped, also those whose buckets a retired rule left in
 * the source or aggregate table: a bucket that still holds state would
 * hand its debt to the new rule, and even a refilled one would skip the
 * new rule's initial burst and new-source budget.
 */
enum id_state {
	ID_FREE,
	ID_QUIET, /* buckets left, all refilled: given only when no id is free */
	ID_HELD,  /* buckets that still hold state, or a rule in a set of slots */
};

struct ids_used {
	uint8_t state[1 << 16];
	bool walked; /* the tables' buckets are in state */
};

/*
 * Marks the ids in either set of slots held. Maps where a slot holds an id
 * at or past next_id break what saves the walk: they are marked wrapped
 * for good, so that once the id has left the slots, its buckets still keep
 * it from a new rule.
 */
static int slots_in_use(const struct policy_maps *m, struct policy_doc *doc, struct ids_used *u)
{
	struct sluice_policy p;
	__u32 set, slot;
	int err;

	u->state[0] = ID_HELD;
	for (set = 0; set < 2; set++) {
		for (slot = 0; slot < SLUICE_MAX_POLICIES; slot++) {
			err = slot_read(m, set, slot, &p);
			if (err)
				return err;
			/* Slot 0, the default, is never empty. */
			if (slot && p.family == SLUICE_FAMILY_ANY)
				continue;
			u->state[p.id] = ID_HELD;
			doc->ids_wrapped |= p.id >= doc->next_id;
		}
	}
	return 0;
}

static int bucket_id(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		     void *ctx)
{
	struct ids_used *u = ctx;
	uint8_t held = b->tat > (read_ns << SLUICE_TIME_SHIFT) ? ID_HELD : ID_QUIET;

	if (u->state[key->policy] < held)
		u->state[key->policy] = held;
	return 0;
}

/* Before the first wrap no id past next_id was ever given, so no walk is needed. */
static int ids_walk(const struct policy_maps *m, struct ids_used *u)
{
	struct sluice_config cfg;
	int err;

	if (u->walked)
		return 0;
	u->walked = true;
	err = config_read(m, &cfg);
	err = err ?: table_walk(m->buckets, cfg.table_seed, bucket_id, u);
	return err ?: table_walk(m->aggregates, cfg.table_seed, bucket_id, u);
}

/*
 * The next id at or after *next in the best state there is: free, else
 * quiet. At most 2 * 255 ids are in slots, so one is always free or
 * quiet unless live buckets hold all 65535 others. Passing 65535 marks
 * the ids wrapped for good.
 */
static int id_next(const struct policy_maps *m, struct policy_doc *doc, struct ids_used *u,
		   uint16_t *id)
{
	uint32_t tried;
	uint8_t want;
	int err;

	for (want = ID_FREE; want <= ID_QUIET; want++) {
		for (tried = 0; tried < (1U << 16); tried++) {
			*id = doc->next_id++;
			if (!doc->next_id)
				doc->ids_wrapped = true;
			err = doc->ids_wrapped ? ids_walk(m, u) : 0;
			if (err)
				return err;
			if (u->state[*id] == want) {
				u->state[*id] = ID_HELD;
				return 0;
			}
		}
	}
	return -ENOSPC;
}

/* A rule id given anew starts with full admission and overflow buckets. */
static int id_reset(const struct policy_maps *m, uint16_t id)
{
	struct sluice_admission fresh = { 0 };
	__u32 key = id;

	return bpf_map_update_elem(m->admission, &key, &fresh, BPF_ANY) ? -errno : 0;
}

/*
 * Does the default keep its id, and so its buckets? Only while the new
 * meter reads a slot as the old one wrote it (policy_meter_same), whatever
 * else changed: its buckets are then rebased at the change (debt_plan_make).
 * So does a rule (rule_kept_from).
 */
static bool default_keeps_id(const struct policy_doc *doc, const struct policy_doc *live)
{
	/* Fresh maps have no default yet: it starts as 0. */
	if (!live->dflt.rate.amount)
		return true;
	return policy_meter_same(&live->dflt_policy, &doc->dflt_policy);
}

/* The live rule whose id r keeps: the same match, a meter of the same shape; or -1. */
static int rule_kept_from(const struct policy_doc *live, const struct rule *r)
{
	int j = doc_find_rule(live, &r->match);

	return j >= 0 && policy_meter_same(&live->rules[j].policy, &r->policy) ? j : -1;
}

/*
 * The default and each rule of the same match as a live one keep their id
 * while their meter keeps its shape (default_keeps_id, rule_kept_from);
 * anything else gets a free id, with fresh admission and overflow buckets.
 */
int assign_ids(const struct policy_maps *m, struct policy_doc *doc, const struct policy_doc *live)
{
	struct ids_used *u = malloc(sizeof(*u));
	int i, j, err;

	if (!u)
		return -ENOMEM;
	memset(u, 0, sizeof(*u));
	doc->next_id = live->next_id;
	doc->ids_wrapped = live->ids_wrapped;
	doc->dflt_id = live->dflt_id;
	err = slots_in_use(m, doc, u);
	if (!err && !default_keeps_id(doc, live))
		err = id_next(m, doc, u, &doc->dflt_id) ?: id_reset(m, doc->dflt_id);
	for (i = 0; !err && i < doc->n_rules; i++) {
		struct rule *r = &doc->rules[i];

		j = rule_kept_from(live, r);
		if (j >= 0) {
			r->id = live->rules[j].id;
			continue;
		}
		err = id_next(m, doc, u, &r->id) ?: id_reset(m, r->id);
	}
	free(u);
	return err;
}
