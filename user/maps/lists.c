// SPDX-License-Identifier: GPL-2.0
/*
 * The allow and deny lists in their tries: read back, written as a set, and
 * changed in place of the whole list (list_update).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/fault.h"
#include "maps/config.h"
#include "maps/lists.h"
#include "maps/tries.h"

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

/* The entries of one set of a trie that are live at now_ns; expired ones count as absent. */
static int list_collect(const struct list_trie *t, const union lpm_key *keys, size_t n,
			uint64_t now_ns, struct cidr_list *live)
{
	struct list_entry e;
	size_t i;
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		err = entry_of(t, &keys[i], &e);
		if (!err && !entry_expired(&e, now_ns))
			err = cidr_list_add_until(live, &e.cidr, e.expires_ns);
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
		err = list_collect(t, keys, n, now_ns, l);
	free(keys);
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

int lists_load(const struct policy_maps *m, __u32 set, uint64_t now_ns, struct policy_doc *doc)
{
	struct list_trie tries[4];
	size_t i;
	int err = 0;

	list_tries(m, tries);
	for (i = 0; !err && i < 4; i++)
		err = list_load(&tries[i], set, now_ns, tries[i].deny ? &doc->deny : &doc->allow);
	cidr_list_sort(&doc->allow);
	cidr_list_sort(&doc->deny);
	return err;
}

/* The trie holding list entry c: allow or deny, by its family. */
int list_fd(const struct policy_maps *m, bool deny, const struct cidr *c)
{
	bool v4 = c->family == SLUICE_FAMILY_IPV4;

	return deny ? (v4 ? m->deny_v4 : m->deny_v6) : (v4 ? m->allow_v4 : m->allow_v6);
}

/* The SLUICE_LIST_* bit of entry c's trie. */
__u32 list_bit(bool deny, const struct cidr *c)
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

int lists_clear(const struct policy_maps *m, __u32 set)
{
	int fds[] = { m->allow_v4, m->allow_v6, m->deny_v4, m->deny_v6 };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(fds) / sizeof(fds[0]); i++)
		err = trie_clear(fds[i], set);
	return err;
}

/*
 * Writes doc's lists into the idle set. It is emptied first, as an import
 * killed midway leaves entries there that must never be published; on
 * failure it is emptied again, so a full trie never outlives the command.
 */
int write_lists(const struct policy_maps *m, const struct policy_doc *doc, __u32 set,
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
 * Like policy_store, for the lists alone: rules and their counters stay.
 * The idle set was emptied by lists_take; once the new set is published,
 * the old one is made its copy (lists_mirror).
 */
static int lists_store(const struct policy_maps *m, const struct policy_doc *doc)
{
	struct sluice_config cfg;
	int err;

	err = lists_fit(m, doc, NULL, 0);
	if (!err)
		err = config_load(m, &cfg);
	if (err)
		return err;
	cfg.list_set = !cfg.list_set;
	err = write_lists(m, doc, cfg.list_set, &cfg, true);
	if (!err)
		err = config_write(m, &cfg);
	if (err)
		return err;
	fault_point(FAULT_LISTS_AFTER_FLIP, SIGKILL);
	return lists_mirror(m, cfg.list_set);
}

/* One trie's walk: its live set into the lists, its idle set deleted. */
static int trie_take(const struct list_trie *t, __u32 live_set, uint64_t now_ns,
		     struct policy_doc *taken)
{
	struct key_vec live = { 0 }, idle = { 0 };
	size_t k;
	int err;

	err = trie_walk(t->fd, live_set, &live, &idle);
	if (!err)
		err = list_collect(t, live.keys, live.n, now_ns,
				   t->deny ? &taken->deny : &taken->allow);
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
static int lists_take(const struct policy_maps *m, __u32 live_set, struct policy_doc *taken)
{
	struct list_trie tries[4];
	uint64_t now_ns = monotonic_ns();
	size_t i;
	int err = 0;

	list_tries(m, tries);
	for (i = 0; !err && i < 4; i++)
		err = trie_take(&tries[i], live_set, now_ns, taken);
	cidr_list_sort(&taken->allow);
	cidr_list_sort(&taken->deny);
	return err;
}

/*
 * The whole list written again (a deny entry that encloses others, or a
 * list near its capacity): linear in the list, expired entries pruned.
 */
static int list_rewrite(const struct policy_maps *m, struct list_change *c)
{
	struct policy_doc taken, next;
	struct cidr_list merged = { 0 }, *live;
	struct sluice_config cfg;
	int err;

	doc_init(&taken);
	live = c->deny ? &taken.deny : &taken.allow;
	err = config_load(m, &cfg);
	if (!err)
		err = lists_unmirror(m);
	if (!err)
		err = lists_take(m, cfg.list_set, &taken);
	if (!err)
		err = cidr_list_merge(live, c->items, c->add, &merged, &c->missing);
	/* Adding only what is there already, as long, changes nothing: no new generation. */
	if (err || cidr_list_equal(&merged, live))
		goto out;
	next = taken;
	*(c->deny ? &next.deny : &next.allow) = merged;
	err = lists_fit(m, &next, c->why, sizeof(c->why));
	if (!err)
		err = lists_store(m, &next);
out:
	/* lists_take emptied the idle set: it is made a copy again, even when nothing changed. */
	if (!lists_mirrored(m))
		err = lists_repair(m) ?: err;
	free(merged.items);
	doc_free(&taken);
	return err;
}

int list_update(const struct policy_maps *m, struct list_change *c)
{
	int err;

	c->why[0] = '\0';
	cidr_list_sort(c->items);
	err = list_replay(m, c);
	return err == -EAGAIN ? list_rewrite(m, c) : err;
}
