// SPDX-License-Identifier: GPL-2.0
/*
 * Reading and writing a policy in the datapath's maps. Policies and rules
 * live in two sets, as do allow and deny entries; a change fills the idle
 * set and flips the configuration to it in one write, so no packet ever
 * sees half of a policy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "table_hash.h"
#include "base/clock.h"
#include "base/errors.h"
#include "jiffy.h"
#include "maps/percpu.h"
#include "maps/policy_maps.h"
#include "maps/table.h"
#include "pins/cookies.h"
#include "pins/sync.h"

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

struct key_vec {
	union lpm_key *keys;
	size_t n, cap;
};

static int key_push(struct key_vec *v, const union lpm_key *k)
{
	union lpm_key *grown;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		grown = realloc(v->keys, v->cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		v->keys = grown;
	}
	v->keys[v->n++] = *k;
	return 0;
}

/*
 * The keys of one set of a trie, and (if other is not NULL) those of the
 * other set, in one walk. An LPM trie's get_next_key restarts from the
 * first key when the previous one is gone, so keys are collected before
 * any is deleted. On failure the caller frees what was collected.
 */
static int trie_walk(int fd, __u32 set, struct key_vec *in, struct key_vec *other)
{
	union lpm_key key, next;
	void *prev = NULL;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.v4.set == set)
			err = key_push(in, &key);
		else if (other)
			err = key_push(other, &key);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	return err;
}

static int trie_keys(int fd, __u32 set, union lpm_key **keys, size_t *n)
{
	struct key_vec v = { 0 };
	int err = trie_walk(fd, set, &v, NULL);

	if (err)
		free(v.keys);
	*keys = err ? NULL : v.keys;
	*n = err ? 0 : v.n;
	return err;
}

/* A list trie: its fd, the family of its keys, and whether its values are struct sluice_deny. */
struct list_trie {
	int fd, family;
	bool deny;
};

/* A trie key's entry: its CIDR and, in a deny trie, its own expiry. */
static int entry_of(const struct list_trie *t, const union lpm_key *k, struct list_entry *e)
{
	struct sluice_deny value;

	cidr_of(&e->cidr, k, t->family);
	e->expires_ns = 0;
	if (!t->deny)
		return 0;
	if (bpf_map_lookup_elem(t->fd, k, &value))
		return -errno;
	e->expires_ns = value.expires_ns;
	return 0;
}

/*
 * The entries of one set of a trie that are live at now_ns; expired ones
 * count as absent, and go into expired if it is not NULL.
 */
static int list_collect(const struct list_trie *t, const union lpm_key *keys, size_t n,
			uint64_t now_ns, struct cidr_list *live, struct cidr_list *expired)
{
	struct list_entry e;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		err = entry_of(t, &keys[i], &e);
		if (!err && !entry_expired(&e, now_ns))
			err = cidr_list_add_until(live, &e.cidr, e.expires_ns);
		else if (!err && expired)
			err = cidr_list_add(expired, &e.cidr);
	}
	return err;
}

static int list_load(const struct list_trie *t, __u32 set, uint64_t now_ns, struct cidr_list *l)
{
	union lpm_key *keys;
	size_t n;
	int err;

	err = trie_keys(t->fd, set, &keys, &n);
	if (!err)
		err = list_collect(t, keys, n, now_ns, l, NULL);
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

static int config_load(const struct policy_maps *m, struct sluice_config *cfg)
{
	int err = config_read(m, cfg);

	if (!err && cfg->layout_version != SLUICE_LAYOUT_VERSION)
		return -EPROTO;
	return err;
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

/* The four list tries: allow v4 and v6, then deny v4 and v6. */
static void list_tries(const struct policy_maps *m, struct list_trie tries[4])
{
	tries[0] = (struct list_trie){ m->allow_v4, SLUICE_FAMILY_IPV4, false };
	tries[1] = (struct list_trie){ m->allow_v6, SLUICE_FAMILY_IPV6, false };
	tries[2] = (struct list_trie){ m->deny_v4, SLUICE_FAMILY_IPV4, true };
	tries[3] = (struct list_trie){ m->deny_v6, SLUICE_FAMILY_IPV6, true };
}

struct doc_read {
	struct policy_doc *doc;
	bool lists;
};

static int doc_read(const struct policy_maps *m, const struct sluice_config *cfg, void *arg)
{
	struct doc_read *dr = arg;
	struct policy_doc *doc = dr->doc;
	struct list_trie tries[4];
	uint64_t now_ns = monotonic_ns();
	size_t i;
	int err;

	err = policy_load_rules(m, cfg, doc);
	if (err || !dr->lists)
		return err;
	list_tries(m, tries);
	for (i = 0; !err && i < 4; i++)
		err = list_load(&tries[i], cfg->list_set, now_ns,
				tries[i].deny ? &doc->deny : &doc->allow);
	cidr_list_sort(&doc->allow);
	cidr_list_sort(&doc->deny);
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

int policy_load(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct sluice_config cfg;

	return policy_load_cfg(m, doc, lists, &cfg);
}

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

static int slots_in_use(const struct policy_maps *m, struct ids_used *u)
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
			if (!slot || p.family != SLUICE_FAMILY_ANY)
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
 * meter reads a slot as the old one wrote it (policy_meter_same).
 */
static bool default_keeps_id(const struct policy_doc *doc, const struct policy_doc *live)
{
	/* Fresh maps have no default yet: it starts as 0. */
	if (!live->dflt.rate.amount)
		return true;
	return policy_meter_same(&live->dflt_policy, &doc->dflt_policy);
}

/*
 * A rule keeps its id, and so its buckets, when the live policy has the same
 * rule unchanged; anything else gets a free id. The default keeps its id
 * unless its meter changes shape (default_keeps_id).
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
	doc->dflt_id = live->dflt_id;
	err = slots_in_use(m, u);
	if (!err && !default_keeps_id(doc, live))
		err = id_next(m, doc, u, &doc->dflt_id) ?: id_reset(m, doc->dflt_id);
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

/* What slot holds for doc: its compiled policy with its id, or zeros past the rules. */
static int slot_policy(const struct policy_doc *doc, __u32 slot, struct sluice_policy *p)
{
	const struct rule *r = slot ? &doc->rules[slot - 1] : NULL;

	memset(p, 0, sizeof(*p));
	if ((int)slot > doc->n_rules)
		return 0;
	*p = r ? r->policy : doc->dflt_policy;
	p->id = r ? r->id : doc->dflt_id;
	/* policy_build refuses a rate of 0: this limiter was never compiled. */
	return p->rate_amount ? 0 : -EINVAL;
}

/* Slot 0 is the default, rule i is slot i + 1; unused slots are zeroed. */
static int write_slots(const struct policy_maps *m, const struct policy_doc *doc, __u32 set)
{
	struct sluice_policy p;
	__u32 slot;
	int err;

	for (slot = 0; slot < SLUICE_MAX_POLICIES; slot++) {
		err = slot_policy(doc, slot, &p) ?: slot_write(m, set, slot, &p);
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
	cfg->provers = (__u32)doc_provers(doc);
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

/* The trie holding list entry c: allow or deny, by its family. */
static int list_fd(const struct policy_maps *m, bool deny, const struct cidr *c)
{
	bool v4 = c->family == SLUICE_FAMILY_IPV4;

	return deny ? (v4 ? m->deny_v4 : m->deny_v6) : (v4 ? m->allow_v4 : m->allow_v6);
}

/* The SLUICE_LIST_* bit of entry c's trie. */
static __u32 list_bit(bool deny, const struct cidr *c)
{
	bool v4 = c->family == SLUICE_FAMILY_IPV4;

	return deny ? (v4 ? SLUICE_LIST_DENY_V4 : SLUICE_LIST_DENY_V6)
		    : (v4 ? SLUICE_LIST_ALLOW_V4 : SLUICE_LIST_ALLOW_V6);
}

static int allow_write(const struct policy_maps *m, const struct cidr_list *l, __u32 set,
		       __u32 *present)
{
	union lpm_key key;
	__u8 one = 1;
	size_t i;

	for (i = 0; i < l->count; i++) {
		lpm_key_of(&key, &l->items[i].cidr, set);
		if (bpf_map_update_elem(list_fd(m, false, &l->items[i].cidr), &key, &one, BPF_ANY))
			return -errno;
		*present |= list_bit(false, &l->items[i].cidr);
	}
	return 0;
}

/* Nested CIDRs have strictly longer prefixes: at most 129 enclose one another. */
#define DENY_CHAIN_MAX 129

/*
 * The deny list with each entry's denied_until: the latest expiry of
 * itself and the entries enclosing it (struct sluice_deny). Sorted, an
 * entry comes after the entries enclosing it, the shorter first, so the
 * chain of entries enclosing the current one is a stack.
 */
static int deny_write(const struct policy_maps *m, const struct cidr_list *l, __u32 set,
		      __u32 *present)
{
	const struct cidr *chain[DENY_CHAIN_MAX];
	uint64_t until[DENY_CHAIN_MAX];
	struct sluice_deny value;
	union lpm_key key;
	size_t i, depth = 0;

	for (i = 0; i < l->count; i++) {
		const struct list_entry *e = &l->items[i];

		while (depth && !cidr_contains(chain[depth - 1], &e->cidr))
			depth--;
		if (depth == DENY_CHAIN_MAX)
			return -EINVAL; /* not sorted without duplicates */
		value.expires_ns = e->expires_ns;
		value.denied_until_ns =
			depth ? expiry_later(until[depth - 1], e->expires_ns) : e->expires_ns;
		chain[depth] = &e->cidr;
		until[depth++] = value.denied_until_ns;
		lpm_key_of(&key, &e->cidr, set);
		if (bpf_map_update_elem(list_fd(m, true, &e->cidr), &key, &value, BPF_ANY))
			return -errno;
		*present |= list_bit(true, &e->cidr);
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

/*
 * Writes doc's lists into the idle set. It is emptied first, as an import
 * killed midway leaves entries there that must never be published; on
 * failure it is emptied again, so a full trie never outlives the command.
 */
static int write_lists(const struct policy_maps *m, const struct policy_doc *doc, __u32 set,
		       struct sluice_config *cfg, bool emptied)
{
	int err;

	cfg->lists = 0;
	err = emptied ? 0 : lists_clear(m, set);
	if (!err)
		err = allow_write(m, &doc->allow, set, &cfg->lists);
	if (!err)
		err = deny_write(m, &doc->deny, set, &cfg->lists);
	if (err) {
		lists_clear(m, set);
		return err;
	}
	/*
	 * The lists are sorted without duplicates: one entry each. Timed deny
	 * entries count until a later change prunes them.
	 */
	cfg->allow_count = (__u32)doc->allow.count;
	cfg->deny_count = (__u32)doc->deny.count;
	return 0;
}

/* A map's max_entries, as sized at load. */
static int map_entries(int fd, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*entries = info.max_entries;
	return 0;
}

/* Entries one set of a trie may hold: half the trie, so a new set fits beside the live one. */
static int trie_set_capacity(int fd, size_t *capacity)
{
	__u32 entries = 0;
	int err = map_entries(fd, &entries);

	*capacity = entries / 2;
	return err;
}

static size_t count_family(const struct cidr_list *l, int family)
{
	size_t i, n = 0;

	for (i = 0; i < l->count; i++)
		n += l->items[i].cidr.family == family;
	return n;
}

int lists_fit(const struct policy_maps *m, const struct policy_doc *doc, char *why, size_t len)
{
	const struct {
		const char *name;
		const struct cidr_list *list;
		int family, fd;
	} tries[] = {
		{ "allow", &doc->allow, SLUICE_FAMILY_IPV4, m->allow_v4 },
		{ "allow", &doc->allow, SLUICE_FAMILY_IPV6, m->allow_v6 },
		{ "deny", &doc->deny, SLUICE_FAMILY_IPV4, m->deny_v4 },
		{ "deny", &doc->deny, SLUICE_FAMILY_IPV6, m->deny_v6 },
	};
	size_t i, n, capacity = 0;
	int err;

	for (i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
		err = trie_set_capacity(tries[i].fd, &capacity);
		if (err)
			return err;
		n = count_family(tries[i].list, tries[i].family);
		if (n > capacity) {
			if (why)
				snprintf(why, len,
					 "the %s list would hold %zu IPv%d entries, more than the "
					 "%zu it can",
					 tries[i].name, n, tries[i].family, capacity);
			return -ENOSPC;
		}
	}
	return 0;
}

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
static int default_debt_cap(const struct policy_maps *m, const struct policy_doc *doc,
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

int policy_store(const struct policy_maps *m, struct policy_doc *doc, bool lists)
{
	struct policy_doc live = { 0 };
	struct sluice_config cfg;
	__u32 old_rules, old_lists;
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
		err = write_lists(m, doc, cfg.list_set, &cfg, false);
	}
	if (err)
		return err;
	cfg.next_policy_id = doc->next_id;
	cfg.ids_wrapped = doc->ids_wrapped;
	err = config_write(m, &cfg);
	if (err)
		return err;

	/* No packet holds the old configuration now: cap its debt, free the old sets. */
	err = default_debt_cap(m, doc, &live, &cfg);
	if (!err)
		err = rules_clear(m, old_rules);
	if (!err && lists)
		err = lists_clear(m, old_lists);
	return err;
}

static int list_delete(const struct policy_maps *m, bool deny, const struct cidr_list *l, __u32 set)
{
	union lpm_key key;
	size_t i;

	for (i = 0; i < l->count; i++) {
		lpm_key_of(&key, &l->items[i].cidr, set);
		if (bpf_map_delete_elem(list_fd(m, deny, &l->items[i].cidr), &key) &&
		    errno != ENOENT)
			return -errno;
	}
	return 0;
}

/* What a list change read under the lock: the live lists, and deny entries expired since. */
struct lists_taken {
	struct policy_doc live;
	struct cidr_list expired;
};

/*
 * Like policy_store, for the lists alone: rules and their counters stay.
 * taken holds what lists_take read under the lock (which emptied the idle
 * set): what the old set holds, expired entries included, deleted by key
 * once published (no walk of the tries).
 */
static int lists_store(const struct policy_maps *m, const struct policy_doc *doc,
		       const struct lists_taken *taken)
{
	struct sluice_config cfg;
	__u32 old_lists;
	int err;

	err = lists_fit(m, doc, NULL, 0);
	if (!err)
		err = config_load(m, &cfg);
	if (err)
		return err;
	old_lists = cfg.list_set;
	cfg.list_set = !old_lists;
	err = write_lists(m, doc, cfg.list_set, &cfg, true);
	if (!err)
		err = config_write(m, &cfg);
	if (!err)
		err = list_delete(m, false, &taken->live.allow, old_lists);
	if (!err)
		err = list_delete(m, true, &taken->live.deny, old_lists);
	return err ? err : list_delete(m, true, &taken->expired, old_lists);
}

/* One trie's walk: its live set into the lists, its idle set deleted. */
static int trie_take(const struct list_trie *t, __u32 live_set, uint64_t now_ns,
		     struct lists_taken *taken)
{
	struct key_vec live = { 0 }, idle = { 0 };
	size_t k;
	int err;

	err = trie_walk(t->fd, live_set, &live, &idle);
	if (!err)
		err = list_collect(t, live.keys, live.n, now_ns,
				   t->deny ? &taken->live.deny : &taken->live.allow,
				   &taken->expired);
	for (k = 0; !err && k < idle.n; k++)
		if (bpf_map_delete_elem(t->fd, &idle.keys[k]) && errno != ENOENT)
			err = -errno;
	free(live.keys);
	free(idle.keys);
	return err;
}

/*
 * Under the lock: the live lists, and the idle set emptied (an import
 * killed midway may have left entries there), in one walk per trie.
 * Expired deny entries are left out, so the change prunes them.
 */
static int lists_take(const struct policy_maps *m, __u32 live_set, struct lists_taken *taken)
{
	struct list_trie tries[4];
	uint64_t now_ns = monotonic_ns();
	size_t i;
	int err = 0;

	list_tries(m, tries);
	for (i = 0; !err && i < 4; i++)
		err = trie_take(&tries[i], live_set, now_ns, taken);
	cidr_list_sort(&taken->live.allow);
	cidr_list_sort(&taken->live.deny);
	return err;
}

int list_update(const struct policy_maps *m, struct list_change *c)
{
	struct lists_taken taken = { 0 };
	struct cidr_list merged = { 0 }, *live;
	struct policy_doc next;
	struct sluice_config cfg;
	int err;

	c->why[0] = '\0';
	doc_init(&taken.live);
	live = c->deny ? &taken.live.deny : &taken.live.allow;
	err = config_load(m, &cfg);
	if (!err)
		err = lists_take(m, cfg.list_set, &taken);
	if (err)
		goto out;
	cidr_list_sort(c->items);
	err = cidr_list_merge(live, c->items, c->add, &merged, &c->missing);
	/* Adding only what is there already, as long, changes nothing: no new generation. */
	if (err || cidr_list_equal(&merged, live))
		goto out;
	next = taken.live;
	*(c->deny ? &next.deny : &next.allow) = merged;
	err = lists_fit(m, &next, c->why, sizeof(c->why));
	if (!err)
		err = lists_store(m, &next, &taken);
out:
	free(merged.items);
	free(taken.expired.items);
	doc_free(&taken.live);
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

/* The inner map currently in the config slot. */
/*
 * The live configuration's map: its pin (config_live), which read
 * permission opens, or for state pinned before it existed, the slot of the
 * map-in-map, which only CAP_SYS_ADMIN may open by id.
 */
static int config_slot_fd(const struct policy_maps *m)
{
	__u32 zero = 0, inner_id;
	int fd;

	if (m->dir >= 0) {
		fd = state_pin_open_at(m->dir, SLUICE_PIN_CONFIG_LIVE);
		if (fd != -ENOENT)
			return fd;
	}
	if (bpf_map_lookup_elem(m->config, &zero, &inner_id))
		return -errno;
	fd = bpf_map_get_fd_by_id(inner_id);
	return fd < 0 ? -errno : fd;
}

int table_max_sources(const struct policy_maps *m, const struct sluice_config *cfg,
		      uint64_t *max_sources)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	*max_sources = cfg->max_sources;
	if (*max_sources)
		return 0;
	if (bpf_obj_get_info_by_fd(m->buckets, &info, &len))
		return -errno;
	*max_sources = table_sources_of(info.max_entries);
	return 0;
}

int config_read(const struct policy_maps *m, struct sluice_config *cfg)
{
	struct bpf_map_info info = {};
	__u32 zero = 0, len = sizeof(info);
	int fd, err = 0;

	fd = config_slot_fd(m);
	if (fd < 0)
		return fd;
	/* State pinned by a sluice of another layout: never read past our struct. */
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	else if (info.value_size != sizeof(*cfg))
		err = -EPROTO;
	else if (bpf_map_lookup_elem(fd, &zero, cfg))
		err = -errno;
	close(fd);
	return err;
}

int config_layout(const struct policy_maps *m, __u32 *layout)
{
	struct bpf_map_info info = {};
	__u32 zero = 0, len = sizeof(info);
	void *value = NULL;
	int fd, err = 0;

	fd = config_slot_fd(m);
	if (fd < 0)
		return fd;
	/* Every layout's configuration begins with its version: read it at any size. */
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		err = -errno;
	else if (info.value_size < sizeof(*layout) || !(value = calloc(1, info.value_size)))
		err = info.value_size < sizeof(*layout) ? -EPROTO : -ENOMEM;
	else if (bpf_map_lookup_elem(fd, &zero, value))
		err = -errno;
	else
		memcpy(layout, value, sizeof(*layout));
	free(value);
	close(fd);
	return err;
}

/* The slot the datapath reads, swapped to fd; with its pin staged first, so that fails alone. */
static int config_swap(const struct policy_maps *m, int fd)
{
	__u32 zero = 0;
	int err;

	if (m->dir < 0)
		return bpf_map_update_elem(m->config, &zero, &fd, BPF_ANY) ? -errno : 0;
	err = state_pin_stage(m->dir, fd, SLUICE_PIN_CONFIG_LIVE);
	if (err)
		return err;
	err = bpf_map_update_elem(m->config, &zero, &fd, BPF_ANY) ? -errno : 0;
	return state_pin_commit(m->dir, SLUICE_PIN_CONFIG_LIVE, !err) ?: err;
}

/*
 * A configuration's map is written once and never changed (not frozen:
 * the tests rewrite one in place to stand for an older layout): a reader
 * who opened it (by pin, or the datapath through the slot) reads one
 * generation whole. It is swapped into the slot and pinned over the
 * last one before the writer touches the sets the old one names.
 */
static int config_publish(const struct policy_maps *m, const struct sluice_config *cfg)
{
	__u32 zero = 0;
	int fd, err = 0;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sluice_config", sizeof(__u32), sizeof(*cfg), 1,
			    NULL);
	if (fd < 0)
		return -errno;
	if (bpf_map_update_elem(fd, &zero, cfg, BPF_ANY))
		err = -errno;
	if (!err)
		err = config_swap(m, fd);
	close(fd);
	return err;
}

int config_write(const struct policy_maps *m, struct sluice_config *cfg)
{
	struct sluice_config old = {};
	__u32 zero = 0;
	int err;

	/* A freshly loaded program has an empty slot: generation 0. */
	err = config_read(m, &old);
	if (err && err != -ENOENT)
		return err;
	cfg->generation = old.generation + 1;
	cfg->changed_at_ns = realtime_ns();
	if (bpf_map_update_elem(m->generation, &zero, &cfg->generation, BPF_ANY))
		return -errno;
	return config_publish(m, cfg);
}

int config_republish(const struct policy_maps *m)
{
	struct sluice_config cfg;
	int err = config_load(m, &cfg);

	return err ?: config_write(m, &cfg);
}

int policy_load_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists)
{
	int err = policy_load(&st->maps, doc, lists);

	return err ? fail_state(cmd, err, st->ifname, "read the policy") : EXIT_OK;
}

/* Would storing doc change the live default's settings (and so maybe cap its debt)? */
static bool default_changes(const struct policy_maps *m, const struct policy_doc *doc)
{
	struct sluice_config cfg;
	struct sluice_policy p;
	struct settings live;

	if (policy_default(m, &cfg, &p))
		return true;
	policy_settings(&p, &live, NULL);
	return !settings_equal(&live, &doc->dflt);
}

int policy_store_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists)
{
	struct sync_prog sp;
	const char *why;
	int err;

	if (prove_refusal(doc, &why))
		return fail_input(cmd, "%s", why);
	/* Loaded only for a cap to make; without it, debt is capped at each next packet. */
	if (default_changes(&st->maps, doc) && !sync_open(st, &sp))
		st->maps.sync = &sp;
	err = policy_store(&st->maps, doc, lists);
	if (st->maps.sync)
		sync_close(&sp);
	st->maps.sync = NULL;

	if (err)
		return fail_runtime(cmd, err, "cannot write the policy of %s", st->ifname);
	return EXIT_OK;
}
