// SPDX-License-Identifier: GPL-2.0
/*
 * Reading and writing a policy in the datapath's maps. Policies and rules
 * live in two sets, as do allow and deny entries; a change fills the idle
 * set and flips the configuration to it in one write, so no packet ever
 * sees half of a policy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <bpf/bpf.h>
#include "policy.h"
#include "sources.h"
#include "state.h"

/* Either trie key, seen as bytes: prefixlen and set lead both. */
union lpm_key {
	struct sluice_lpm_v4 v4;
	struct sluice_lpm_v6 v6;
};

static void lpm_key_of(union lpm_key *k, const struct cidr *c, __u32 set)
{
	memset(k, 0, sizeof(*k));
	if (c->family == SLUICE_FAMILY_IPV4) {
		k->v4.prefixlen = 32 + c->len;
		k->v4.set = set;
		k->v4.addr = c->addr[0];
		return;
	}
	k->v6.prefixlen = 32 + c->len;
	k->v6.set = set;
	memcpy(k->v6.addr, c->addr, sizeof(k->v6.addr));
}

static void cidr_of(struct cidr *c, const union lpm_key *k, int family)
{
	memset(c, 0, sizeof(*c));
	c->family = (uint8_t)family;
	c->len = (uint8_t)(k->v4.prefixlen - 32);
	if (family == SLUICE_FAMILY_IPV4)
		c->addr[0] = k->v4.addr;
	else
		memcpy(c->addr, k->v6.addr, sizeof(c->addr));
}

/*
 * The keys of one set of a trie. An LPM trie's get_next_key restarts from
 * the first key when the previous one is gone, so keys are collected
 * before any is deleted.
 */
static int trie_keys(int fd, __u32 set, union lpm_key **keys, size_t *n)
{
	union lpm_key key, next, *grown;
	size_t cap = 0;
	void *prev = NULL;

	*keys = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.v4.set != set)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			grown = realloc(*keys, cap * sizeof(*grown));
			if (!grown) {
				free(*keys);
				return -ENOMEM;
			}
			*keys = grown;
		}
		(*keys)[(*n)++] = key;
	}
	return errno == ENOENT ? 0 : -errno;
}

static int list_load(int fd, int family, __u32 set, struct cidr_list *l)
{
	union lpm_key *keys;
	struct cidr c;
	size_t i, n;
	int err;

	err = trie_keys(fd, set, &keys, &n);
	for (i = 0; !err && i < n; i++) {
		cidr_of(&c, &keys[i], family);
		err = cidr_list_add(l, &c);
	}
	free(keys);
	return err;
}

/* Empties one set of a trie. */
static int trie_clear(int fd, __u32 set)
{
	union lpm_key *keys;
	size_t i, n;
	int err;

	err = trie_keys(fd, set, &keys, &n);
	for (i = 0; !err && i < n; i++)
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT)
			err = -errno;
	free(keys);
	return err;
}

static int slot_read(const struct policy_maps *m, __u32 set, __u32 slot, struct sluice_policy *p)
{
	__u32 index = set * SLUICE_MAX_POLICIES + slot;

	return bpf_map_lookup_elem(m->policies, &index, p) ? -errno : 0;
}

static int slot_write(const struct policy_maps *m, __u32 set, __u32 slot,
		      const struct sluice_policy *p)
{
	__u32 index = set * SLUICE_MAX_POLICIES + slot;

	return bpf_map_update_elem(m->policies, &index, p, BPF_ANY) ? -errno : 0;
}

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
	for (slot = 1; slot < SLUICE_MAX_POLICIES; slot++) {
		err = slot_read(m, cfg->policy_set, slot, &p);
		if (err)
			return err;
		if (p.family == SLUICE_FAMILY_ANY)
			continue;
		r = &doc->rules[doc->n_rules++];
		policy_settings(&p, &r->settings, &r->match);
		r->id = p.id;
	}
	doc->next_id = cfg->next_policy_id ?: 1;
	doc->ids_wrapped = cfg->ids_wrapped;
	return 0;
}

static int config_load(const struct policy_maps *m, struct sluice_config *cfg)
{
	int err = config_read(m->config, cfg);

	if (!err && cfg->layout_version != SLUICE_LAYOUT_VERSION)
		return -EPROTO;
	return err;
}

int policy_load(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct sluice_config cfg;
	int err;

	doc_init(doc);
	err = config_load(m, &cfg);
	if (!err)
		err = policy_load_rules(m, &cfg, doc);
	if (err || !lists)
		return err;
	if (!err)
		err = list_load(m->allow_v4, SLUICE_FAMILY_IPV4, cfg.list_set, &doc->allow);
	if (!err)
		err = list_load(m->allow_v6, SLUICE_FAMILY_IPV6, cfg.list_set, &doc->allow);
	if (!err)
		err = list_load(m->deny_v4, SLUICE_FAMILY_IPV4, cfg.list_set, &doc->deny);
	if (!err)
		err = list_load(m->deny_v6, SLUICE_FAMILY_IPV6, cfg.list_set, &doc->deny);
	cidr_list_sort(&doc->allow);
	cidr_list_sort(&doc->deny);
	return err;
}

/*
 * Rule ids a new rule may not get: 0 (the default's) and every rule's in
 * both sets of slots (the set being replaced may still be in use). Once
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

static int slots_in_use(const struct policy_maps *m, struct ids_used *u)
{
	struct sluice_policy p;
	__u32 set, slot;
	int err;

	u->state[0] = ID_HELD;
	for (set = 0; set < 2; set++) {
		for (slot = 1; slot < SLUICE_MAX_POLICIES; slot++) {
			err = slot_read(m, set, slot, &p);
			if (err)
				return err;
			if (p.family != SLUICE_FAMILY_ANY)
				u->state[p.id] = ID_HELD;
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
	int err;

	if (u->walked)
		return 0;
	u->walked = true;
	err = sources_walk(m->buckets, bucket_id, u);
	return err ?: sources_walk(m->aggregates, bucket_id, u);
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
 * A rule keeps its id, and so its buckets, when the live policy has the same
 * rule unchanged; anything else gets a free id (0 stays the default's).
 */
static int assign_ids(const struct policy_maps *m, struct policy_doc *doc,
		      const struct policy_doc *live)
{
	struct ids_used *u = malloc(sizeof(*u));
	int i, j, err;

	if (!u)
		return -ENOMEM;
	memset(u, 0, sizeof(*u));
	doc->next_id = live->next_id;
	doc->ids_wrapped = live->ids_wrapped;
	err = slots_in_use(m, u);
	for (i = 0; !err && i < doc->n_rules; i++) {
		struct rule *r = &doc->rules[i];

		j = doc_find_rule(live, &r->match);
		if (j >= 0 && settings_equal(&live->rules[j].settings, &r->settings)) {
			r->id = live->rules[j].id;
			continue;
		}
		err = id_next(m, doc, u, &r->id) ?: id_reset(m, r->id);
	}
	free(u);
	return err;
}

/* Slot 0 is the default, rule i is slot i + 1; unused slots are zeroed. */
static int write_slots(const struct policy_maps *m, const struct policy_doc *doc, __u32 set)
{
	struct sluice_policy p;
	const char *why;
	__u32 slot;
	int err;

	for (slot = 0; slot < SLUICE_MAX_POLICIES; slot++) {
		memset(&p, 0, sizeof(p));
		if (slot == 0)
			err = policy_build(&p, &doc->dflt, NULL, 0, &why);
		else if ((int)slot <= doc->n_rules)
			err = policy_build(&p, &doc->rules[slot - 1].settings,
					   &doc->rules[slot - 1].match, doc->rules[slot - 1].id,
					   &why);
		else
			err = 0;
		if (!err)
			err = slot_write(m, set, slot, &p);
		/* The slot's counts belonged to whatever it held before. */
		if (!err)
			err = stats_clear_at(m->rule_stats, set * SLUICE_MAX_POLICIES + slot);
		if (err)
			return err;
	}
	return 0;
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
	for (i = 0; i < doc->n_rules; i++) {
		const struct cidr *c = &doc->rules[i].match.cidr;

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

static int list_write(const struct policy_maps *m, bool deny, const struct cidr_list *l, __u32 set,
		      __u32 *present)
{
	union lpm_key key;
	__u8 one = 1;
	size_t i;
	int fd;

	for (i = 0; i < l->count; i++) {
		bool v4 = l->items[i].family == SLUICE_FAMILY_IPV4;

		fd = deny ? (v4 ? m->deny_v4 : m->deny_v6) : (v4 ? m->allow_v4 : m->allow_v6);
		lpm_key_of(&key, &l->items[i], set);
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY))
			return -errno;
		*present |= deny ? (v4 ? SLUICE_LIST_DENY_V4 : SLUICE_LIST_DENY_V6)
				 : (v4 ? SLUICE_LIST_ALLOW_V4 : SLUICE_LIST_ALLOW_V6);
	}
	return 0;
}

static int lists_clear(const struct policy_maps *m, __u32 set)
{
	int fds[] = { m->allow_v4, m->allow_v6, m->deny_v4, m->deny_v6 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(fds) / sizeof(fds[0]); i++)
		err = trie_clear(fds[i], set);
	return err;
}

static int rules_clear(const struct policy_maps *m, __u32 set)
{
	int err = trie_clear(m->rules_v4, set);

	return err ? err : trie_clear(m->rules_v6, set);
}

static int write_lists(const struct policy_maps *m, const struct policy_doc *doc, __u32 set,
		       __u32 *present)
{
	int err;

	*present = 0;
	err = lists_clear(m, set);
	if (!err)
		err = list_write(m, false, &doc->allow, set, present);
	if (!err)
		err = list_write(m, true, &doc->deny, set, present);
	return err;
}

int policy_store(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct policy_doc live = { 0 };
	struct sluice_config cfg;
	__u32 old_rules, old_lists;
	int err;

	err = config_load(m, &cfg);
	if (!err)
		err = policy_load_rules(m, &cfg, &live);
	if (!err)
		err = assign_ids(m, doc, &live);
	if (err)
		return err;
	old_rules = cfg.policy_set;
	old_lists = cfg.list_set;
	cfg.policy_set = !old_rules;

	err = rules_clear(m, cfg.policy_set);
	if (!err)
		err = write_slots(m, doc, cfg.policy_set);
	if (!err)
		err = write_rule_tries(m, doc, cfg.policy_set, &cfg);
	if (!err && lists) {
		cfg.list_set = !old_lists;
		err = write_lists(m, doc, cfg.list_set, &cfg.lists);
	}
	if (err)
		return err;
	cfg.next_policy_id = doc->next_id;
	cfg.ids_wrapped = doc->ids_wrapped;
	err = config_write(m->config, m->generation, &cfg);
	if (err)
		return err;

	/* No packet holds the old configuration now: free the old sets. */
	err = rules_clear(m, old_rules);
	if (!err && lists)
		err = lists_clear(m, old_lists);
	return err;
}

/* Does one set of the trie hold any entry? */
static bool trie_has(int fd, __u32 set)
{
	union lpm_key key, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (next.v4.set == set)
			return true;
		key = next;
		prev = &key;
	}
	return false;
}

int list_update(const struct policy_maps *m, bool deny, const struct cidr *items, size_t n,
		bool add)
{
	int fd4 = deny ? m->deny_v4 : m->allow_v4, fd6 = deny ? m->deny_v6 : m->allow_v6;
	__u32 bit4 = deny ? SLUICE_LIST_DENY_V4 : SLUICE_LIST_ALLOW_V4;
	__u32 bit6 = deny ? SLUICE_LIST_DENY_V6 : SLUICE_LIST_ALLOW_V6;
	struct sluice_config cfg;
	union lpm_key key;
	__u8 one = 1;
	size_t i;
	int err;

	err = config_load(m, &cfg);
	for (i = 0; !err && i < n; i++) {
		int fd = items[i].family == SLUICE_FAMILY_IPV4 ? fd4 : fd6;

		lpm_key_of(&key, &items[i], cfg.list_set);
		if (add ? bpf_map_update_elem(fd, &key, &one, BPF_ANY)
			: (bpf_map_delete_elem(fd, &key) && errno != ENOENT))
			err = -errno;
	}
	if (err)
		return err;
	/* Retire cached verdicts and tell the datapath which tries to search. */
	cfg.lists &= ~(bit4 | bit6);
	cfg.lists |= trie_has(fd4, cfg.list_set) ? bit4 : 0;
	cfg.lists |= trie_has(fd6, cfg.list_set) ? bit6 : 0;
	return config_write(m->config, m->generation, &cfg);
}

/* The sets of a set table (sources or aggregates), as sized at load. */
static int table_sets(int fd, __u32 *sets)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*sets = info.max_entries;
	return 0;
}

/* The set tables' shapes, and random hash seeds fixed for the life of the state. */
static int table_config(int buckets_fd, int aggregates_fd, struct sluice_config *cfg)
{
	int err = table_sets(buckets_fd, &cfg->table_sets);

	if (!err)
		err = table_sets(aggregates_fd, &cfg->aggregate_sets);
	if (err)
		return err;
	if (getrandom(cfg->table_seed, sizeof(cfg->table_seed), 0) != sizeof(cfg->table_seed))
		return -EIO;
	return 0;
}

int policy_create(const struct policy_maps *m, uint64_t max_sources, struct policy_doc *doc)
{
	struct sluice_config cfg = { 0 };
	uint64_t tick = jiffy_ns() << SLUICE_TIME_SHIFT;
	int err;

	err = table_config(m->buckets, m->aggregates, &cfg);
	if (err)
		return err;
	cfg.layout_version = SLUICE_LAYOUT_VERSION;
	cfg.max_sources = (__u32)max_sources;
	cfg.next_policy_id = 1;
	if (tick < (NSEC_PER_SEC << SLUICE_TIME_SHIFT))
		cfg.jiffy_recip = (1ULL << SLUICE_JIFFY_RECIP_SHIFT) / tick;
	err = config_write(m->config, m->generation, &cfg);
	return err ? err : policy_store(m, doc, true);
}

int policy_default(const struct policy_maps *m, struct sluice_config *cfg, struct sluice_policy *p)
{
	int err = config_load(m, cfg);

	return err ? err : slot_read(m, cfg->policy_set, 0, p);
}
