// SPDX-License-Identifier: GPL-2.0
/*
 * Reading and writing a policy in the datapath's maps. Policies and rules
 * live in two sets, as do allow and deny entries; a change fills the idle
 * set and flips the configuration to it in one write, so no packet ever
 * sees half of a policy.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "base/fault.h"
#include "jiffy.h"
#include "maps/debt.h"
#include "maps/ids.h"
#include "maps/policy_maps.h"
#include "maps/bans.h"
#include "maps/percpu.h"
#include "maps/slots.h"
#include "maps/tries.h"
#include "pins/cookies.h"
#include "pins/sync.h"

static int policy_load_rules(const struct policy_maps *m, const struct sluice_config *cfg,
			     struct policy_doc *doc)
{
	struct sluice_policy p;
	struct rule *r;
	__u32 slot;
	int err;

	err = slot_read(m, cfg->policy_set, 0, &p);
	if (err)
		return err;
	policy_settings(&p, &doc->dflt, NULL);
	doc->dflt_policy = p;
	doc->dflt_id = p.id;
	for (slot = 1; slot < SLUICE_MAX_POLICIES; slot++) {
		err = slot_read(m, cfg->policy_set, slot, &p);
		if (err)
			return err;
		if (p.family == SLUICE_FAMILY_ANY)
			continue;
		r = &doc->rules[doc->n_rules++];
		policy_settings(&p, &r->settings, &r->match);
		r->policy = p;
		r->id = p.id;
	}
	doc->next_id = cfg->next_policy_id ?: 1;
	doc->ids_wrapped = cfg->ids_wrapped;
	return 0;
}

/* Reads what cfg names into arg; `reset` empties arg for another try. */
struct set_reader {
	int (*read)(const struct policy_maps *m, const struct sluice_config *cfg, void *arg);
	void (*reset)(void *arg);
	void *arg;
};

/* One try: -EAGAIN when a writer published another configuration meanwhile. */
static int read_once(const struct policy_maps *m, struct sluice_config *cfg,
		     const struct set_reader *r)
{
	struct sluice_config after;
	int err;

	err = config_load(m, cfg);
	if (err)
		return err;
	err = r->read(m, cfg, r->arg);
	if (config_load(m, &after) || after.generation != cfg->generation)
		return -EAGAIN;
	return err;
}

/* Optimistic tries before a reader waits for the writers instead. */
#define READ_TRIES 4

/*
 * Writers never change the sets the live configuration names: they fill
 * the idle ones, publish a configuration of a new generation, and only
 * then clear the old sets. So a read that finds the same generation before
 * and after saw one configuration, whole. A reader outpaced by writers
 * retries, then takes the command lock shared, which no writer holds.
 */
static int read_consistent(const struct policy_maps *m, struct sluice_config *cfg,
			   const struct set_reader *r)
{
	int i, err, lock_fd;

	for (i = 0; i < READ_TRIES; i++) {
		err = read_once(m, cfg, r);
		if (err != -EAGAIN)
			return err;
		r->reset(r->arg);
	}
	if (state_lock_held()) /* then no writer runs: never happens */
		return -EAGAIN;
	lock_fd = state_lock(LOCK_SH);
	if (lock_fd < 0)
		return lock_fd;
	err = read_once(m, cfg, r);
	state_unlock(lock_fd);
	return err;
}

struct doc_read {
	struct policy_doc *doc;
	bool lists;
	struct sluice_stats *counts; /* with each slot's counters, or NULL */
};

/*
 * The counters of cfg's slots, the default's and each rule's. Read within
 * the generation check: a set is cleared and rewritten only after a flip
 * away from it, so counters read there belong to the rules read.
 */
static int counts_read(const struct policy_maps *m, const struct sluice_config *cfg,
		       const struct policy_doc *doc, struct sluice_stats *counts)
{
	__u32 slot;
	int err = 0;

	fault_point(FAULT_COUNTERS_AFTER_POLICY, SIGSTOP);
	for (slot = 0; !err && slot <= (__u32)doc->n_rules; slot++)
		err = stats_read_at(m->rule_stats, cfg->policy_set * SLUICE_MAX_POLICIES + slot,
				    &counts[slot]);
	return err;
}

static int doc_read(const struct policy_maps *m, const struct sluice_config *cfg, void *arg)
{
	struct doc_read *dr = arg;
	int err;

	err = policy_load_rules(m, cfg, dr->doc);
	if (!err && dr->lists)
		err = lists_load(m, cfg->list_set, monotonic_ns(), dr->doc);
	if (!err && dr->counts)
		err = counts_read(m, cfg, dr->doc, dr->counts);
	return err;
}

static void doc_reset(void *arg)
{
	struct doc_read *dr = arg;

	doc_free(dr->doc);
	doc_init(dr->doc);
}

int policy_load_cfg(const struct policy_maps *m, struct policy_doc *doc, bool lists,
		    struct sluice_config *cfg)
{
	struct doc_read dr = { .doc = doc, .lists = lists };
	struct set_reader r = { .read = doc_read, .reset = doc_reset, .arg = &dr };

	doc_init(doc);
	return read_consistent(m, cfg, &r);
}

int policy_load_counts(const struct policy_maps *m, struct policy_doc *doc,
		       struct sluice_config *cfg, struct sluice_stats *counts)
{
	struct doc_read dr = { .doc = doc, .counts = counts };
	struct set_reader r = { .read = doc_read, .reset = doc_reset, .arg = &dr };

	doc_init(doc);
	return read_consistent(m, cfg, &r);
}

int policy_load(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct sluice_config cfg;

	return policy_load_cfg(m, doc, lists, &cfg);
}

/* One trie entry per distinct rule CIDR, naming its candidates in order. */
static int write_rule_tries(const struct policy_maps *m, const struct policy_doc *doc, __u32 set,
			    struct sluice_config *cfg)
{
	int members[SLUICE_MAX_CANDIDATES];
	struct sluice_rule_group group;
	union lpm_key key;
	int i, j, n, fd;

	cfg->rules_v4 = cfg->rules_v6 = 0;
	cfg->provers = (__u32)doc_provers(doc);
	cfg->matches = 0;
	/* Nor a destination while every policy keys on sources. */
	cfg->key_kinds = !!(doc->dflt_policy.flags & SLUICE_POL_KEYS);
	for (i = 0; i < doc->n_rules; i++) {
		const struct cidr *c = &doc->rules[i].match.cidr;

		/* The datapath reads no match class while no rule has one. */
		cfg->matches |= (__u16)(doc->rules[i].policy.flags & SLUICE_POL_MATCH_CLASS);
		cfg->key_kinds += !!(doc->rules[i].policy.flags & SLUICE_POL_KEYS);
		if (c->family == SLUICE_FAMILY_IPV4)
			cfg->rules_v4++;
		else
			cfg->rules_v6++;
		n = doc_group(doc, c, members);
		if (n < 0)
			return n;
		memset(&group, 0, sizeof(group));
		group.count = (__u32)n;
		for (j = 0; j < n; j++)
			group.slots[j] = (__u32)members[j] + 1;
		lpm_key_of(&key, c, set);
		fd = c->family == SLUICE_FAMILY_IPV4 ? m->rules_v4 : m->rules_v6;
		if (bpf_map_update_elem(fd, &key, &group, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int rules_clear(const struct policy_maps *m, __u32 set)
{
	int err = trie_clear(m->rules_v4, set);

	return err ? err : trie_clear(m->rules_v6, set);
}

/* The new sets written, made live, and the old ones left as they must be. */
static int policy_flip(const struct policy_maps *m, struct policy_doc *doc,
		       const struct policy_doc *live, struct sluice_config *cfg, bool lists)
{
	__u32 old_rules = cfg->policy_set, old_lists = cfg->list_set;
	struct debt_plan *plan = NULL;
	int err;

	cfg->policy_set = !old_rules;
	err = rules_clear(m, cfg->policy_set);
	if (!err)
		err = write_slots(m, doc, cfg->policy_set);
	if (!err)
		err = write_rule_tries(m, doc, cfg->policy_set, cfg);
	if (!err && lists) {
		cfg->list_set = !old_lists;
		err = lists_unmirror(m);
		if (!err)
			err = write_lists(m, doc, cfg->list_set, cfg, false);
	}
	/* Read while packets still meet the old configuration. */
	if (!err)
		err = debt_plan_make(m, doc, live, cfg, &plan);
	if (!err) {
		cfg->next_policy_id = doc->next_id;
		cfg->ids_wrapped = doc->ids_wrapped;
		err = config_write(m, cfg);
	}
	/* No packet holds the old configuration now: rebase its buckets, free the old sets. */
	if (!err)
		err = debt_plan_apply(plan);
	/* Bans follow their rule, to a new id if it got one; those of rules gone go. */
	if (!err)
		err = bans_carry(m->bans, doc, live);
	if (!err)
		err = rules_clear(m, old_rules);
	/* The old list set becomes a copy of the new, so a list change can replay on it. */
	if (!err && lists)
		err = lists_mirror(m, cfg->list_set);
	debt_plan_free(plan);
	return err;
}

int policy_store(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct policy_doc live = { 0 };
	struct sluice_config cfg;
	int err;

	if (lists) {
		/* Sorted without duplicates, each entry is counted once. */
		cidr_list_sort(&doc->allow);
		cidr_list_sort(&doc->deny);
	}
	err = lists ? lists_fit(m, doc, NULL, 0) : 0;
	if (!err)
		err = config_load(m, &cfg);
	if (!err)
		err = policy_load_rules(m, &cfg, &live);
	if (!err)
		err = assign_ids(m, doc, &live);
	if (!err)
		err = policy_flip(m, doc, &live, &cfg, lists);
	return err;
}

/* The set tables' shapes, and random hash seeds fixed for the life of the state. */
static int table_config(int buckets_fd, int aggregates_fd, struct sluice_config *cfg)
{
	int err = map_entries(buckets_fd, &cfg->table_sets);

	if (!err)
		err = map_entries(aggregates_fd, &cfg->aggregate_sets);
	if (err)
		return err;
	if (getrandom(cfg->table_seed, sizeof(cfg->table_seed), 0) != sizeof(cfg->table_seed))
		return -EIO;
	return 0;
}

/*
 * Every CPU's over-limit cache gets the seeds that place its sources (the
 * table's) and the jiffy reciprocal, before the first configuration: the
 * datapath never changes them, so no entry is ever placed by other seeds.
 */
static int hot_create(int hot_fd, const struct sluice_config *cfg)
{
	struct sluice_hot *c = calloc(1, sizeof(*c));
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u32 cpu;

	if (!c)
		return -ENOMEM;
	memcpy(c->head.seed, cfg->table_seed, sizeof(c->head.seed));
	c->head.jiffy_recip = cfg->jiffy_recip;
	if (ncpu < 0)
		err = ncpu;
	for (cpu = 0; !err && cpu < (__u32)ncpu; cpu++)
		if (bpf_map_update_elem(hot_fd, &cpu, c, BPF_ANY))
			err = -errno;
	free(c);
	return err;
}

int policy_create(const struct policy_maps *m, uint64_t max_sources, struct policy_doc *doc)
{
	struct sluice_config cfg = { 0 };
	int err;

	err = table_config(m->buckets, m->aggregates, &cfg);
	if (err)
		return err;
	cfg.layout_version = SLUICE_LAYOUT_VERSION;
	cfg.max_sources = (__u32)max_sources;
	cfg.next_policy_id = 1;
	cfg.jiffy_recip = jiffy_recip_of(jiffy_ns());
	err = hot_create(m->hot, &cfg) ?: config_write(m, &cfg);
	return err ? err : policy_store(m, doc, true);
}

static int default_read(const struct policy_maps *m, const struct sluice_config *cfg, void *arg)
{
	return slot_read(m, cfg->policy_set, 0, arg);
}

static void nothing_to_reset(void *arg)
{
	(void)arg;
}

int policy_default(const struct policy_maps *m, struct sluice_config *cfg, struct sluice_policy *p)
{
	struct set_reader r = { .read = default_read, .reset = nothing_to_reset, .arg = p };

	return read_consistent(m, cfg, &r);
}

int policy_load_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists)
{
	int err = policy_load(&st->maps, doc, lists);

	return err ? fail_state(cmd, err, st->ifname, "read the policy") : EXIT_OK;
}

/* Would storing doc change the settings of a limiter it keeps (and so maybe rebase its buckets)? */
static bool settings_change(const struct policy_maps *m, const struct policy_doc *doc)
{
	struct policy_doc *live = malloc(sizeof(*live));
	bool change = !live || policy_load(m, live, false) || debt_rebase_wanted(doc, live);

	if (live)
		doc_free(live);
	free(live);
	return change;
}

int policy_store_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists)
{
	struct sync_prog sp;
	const char *why;
	int err;

	if (prove_refusal(doc, &why))
		return fail_input(cmd, "%s", why);
	/* Loaded only for a cap to make; without it, debt is capped at each next packet. */
	if (settings_change(&st->maps, doc) && !sync_open(st, &sp))
		st->maps.sync = &sp;
	err = policy_store(&st->maps, doc, lists);
	if (st->maps.sync)
		sync_close(&sp);
	st->maps.sync = NULL;

	if (err)
		return fail_runtime(cmd, err, "cannot write the policy of %s", st->ifname);
	return EXIT_OK;
}
