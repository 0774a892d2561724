// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "maps/bans.h"
#include "values/rate.h"

void ban_key_cidr(const struct sluice_key *key, struct cidr *c)
{
	memset(c, 0, sizeof(*c));
	c->family = key->family;
	c->len = key->prefix_len;
	memcpy(c->addr, key->addr, sizeof(c->addr));
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_key));
}

/* The map's keys, all read before any is visited: a visit may delete or add entries. */
static int bans_keys(int fd, struct sluice_key **keys, size_t *n)
{
	struct sluice_key *k = NULL, *more, next;
	size_t cap = 0;

	*n = 0;
	*keys = NULL;
	while (!bpf_map_get_next_key(fd, *n ? &k[*n - 1] : NULL, &next)) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			more = realloc(k, cap * sizeof(*k));
			if (!more) {
				free(k);
				return -ENOMEM;
			}
			k = more;
		}
		k[(*n)++] = next;
	}
	*keys = k;
	return errno == ENOENT ? 0 : -errno;
}

/* Calls fn for every entry; fn may delete the entry it is given, or add others. */
static int bans_walk(int fd,
		     int (*fn)(int fd, const struct sluice_key *key, const struct sluice_ban *b,
			       void *ctx),
		     void *ctx)
{
	struct sluice_key *keys;
	struct sluice_ban b;
	size_t i, n;
	int err;

	if (fd < 0)
		return 0;
	err = bans_keys(fd, &keys, &n);
	for (i = 0; !err && i < n; i++)
		if (!bpf_map_lookup_elem(fd, &keys[i], &b)) /* else gone meanwhile */
			err = fn(fd, &keys[i], &b, ctx);
	free(keys);
	return err;
}

struct read_ctx {
	uint64_t now_ns;
	struct ban_list *out;
	size_t capacity;
};

static int read_one(int fd, const struct sluice_key *key, const struct sluice_ban *b, void *ctx)
{
	struct read_ctx *r = ctx;
	struct ban_entry *items;

	(void)fd;
	if (b->banned_until_ns <= r->now_ns)
		return 0;
	if (r->out->count == r->capacity) {
		r->capacity = r->capacity ? 2 * r->capacity : 16;
		items = realloc(r->out->items, r->capacity * sizeof(*items));
		if (!items)
			return -ENOMEM;
		r->out->items = items;
	}
	r->out->items[r->out->count].key = *key;
	r->out->items[r->out->count++].ban = *b;
	return 0;
}

int bans_read(int fd, uint64_t now_ns, struct ban_list *out)
{
	struct read_ctx r = { .now_ns = now_ns, .out = out };
	int err;

	memset(out, 0, sizeof(*out));
	err = bans_walk(fd, read_one, &r);
	if (err) {
		ban_list_free(out);
		return err;
	}
	if (out->count)
		qsort(out->items, out->count, sizeof(*out->items), key_cmp);
	return 0;
}

void ban_list_free(struct ban_list *l)
{
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* A CIDR of a list, and its place there. */
struct cidr_at {
	struct cidr c;
	size_t i;
};

/*
 * A list's CIDRs in address order, and the prefix lengths it has: the
 * CIDRs a key overlaps are found with a few searches, not by trying each
 * (65,536 bans against a deny list of 100,000 would be billions of tests).
 */
struct overlap_index {
	struct cidr_at *by_addr;
	size_t n;
	bool has_len[2][129]; /* [IPv6?][prefix length] */
};

static int cidr_at_cmp(const void *x, const void *y)
{
	return cidr_cmp(&((const struct cidr_at *)x)->c, &((const struct cidr_at *)y)->c);
}

static int overlap_index_build(struct overlap_index *x, const struct cidr_list *l)
{
	size_t i;

	memset(x, 0, sizeof(*x));
	x->by_addr = calloc(l->count ?: 1, sizeof(*x->by_addr));
	if (!x->by_addr)
		return -ENOMEM;
	for (i = 0; i < l->count; i++) {
		x->by_addr[i].c = l->items[i].cidr;
		x->by_addr[i].i = i;
		if (l->items[i].cidr.len <= 128)
			x->has_len[l->items[i].cidr.family == SLUICE_FAMILY_IPV6]
				  [l->items[i].cidr.len] = true;
	}
	x->n = l->count;
	qsort(x->by_addr, x->n, sizeof(*x->by_addr), cidr_at_cmp);
	return 0;
}

/* The first CIDR of the index not before c (x->n when none). */
static size_t overlap_lower_bound(const struct overlap_index *x, const struct cidr *c)
{
	size_t lo = 0, hi = x->n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (cidr_cmp(&x->by_addr[mid].c, c) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether c's address lies within k's block (c cut to k's length is k). */
static bool within(const struct cidr *k, const struct cidr *c)
{
	struct cidr cut;

	if (c->family != k->family)
		return false;
	cidr_cut(c, k->len, &cut);
	return !memcmp(cut.addr, k->addr, sizeof(cut.addr));
}

/*
 * Counts (counts[i]++, when given) each CIDR of the index that overlaps
 * key (one holds the other): those holding it are key cut to one
 * of the lengths the list has; those it holds, longer, are the run of
 * the list that starts within its block, in address order. Whether there
 * was one; without counts, at the first.
 */
static bool overlaps_of(const struct overlap_index *x, const struct cidr *key, int *counts)
{
	bool v6 = key->family == SLUICE_FAMILY_IPV6, any = false;
	struct cidr at, kc, *k = &kc;
	unsigned int len;
	size_t j;

	cidr_cut(key, key->len, &kc);
	for (len = 0; len <= k->len && len <= 128; len++) {
		if (!x->has_len[v6][len])
			continue;
		cidr_cut(k, len, &at);
		for (j = overlap_lower_bound(x, &at); j < x->n && !cidr_cmp(&x->by_addr[j].c, &at);
		     j++) {
			if (!counts)
				return true;
			counts[x->by_addr[j].i]++;
			any = true;
		}
	}
	at = *k;
	at.len = 0; /* before any CIDR at k's address */
	for (j = overlap_lower_bound(x, &at); j < x->n && within(k, &x->by_addr[j].c); j++) {
		if (x->by_addr[j].c.len <= k->len)
			continue; /* k itself, or one holding it: counted above */
		if (!counts)
			return true;
		counts[x->by_addr[j].i]++;
		any = true;
	}
	return any;
}

struct lift_ctx {
	const struct overlap_index *x;
	int count;
};

static int lift_one(int fd, const struct sluice_key *key, const struct sluice_ban *b, void *ctx)
{
	struct lift_ctx *l = ctx;
	struct cidr k;

	(void)b;
	ban_key_cidr(key, &k);
	if (!overlaps_of(l->x, &k, NULL))
		return 0;
	if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
		return -errno;
	l->count++;
	return 0;
}

int bans_lift(int fd, const struct cidr_list *l)
{
	struct overlap_index x;
	struct lift_ctx c = { .x = &x };
	int err = overlap_index_build(&x, l);

	if (!err)
		err = bans_walk(fd, lift_one, &c);
	free(x.by_addr);
	return err ?: c.count;
}

int bans_overlapping(const struct ban_list *bans, const struct cidr_list *l, int *counts)
{
	struct overlap_index x;
	struct cidr k;
	size_t i;
	int err = overlap_index_build(&x, l);

	if (err)
		return err;
	if (l->count)
		memset(counts, 0, l->count * sizeof(*counts));
	for (i = 0; i < bans->count; i++) {
		ban_key_cidr(&bans->items[i].key, &k);
		overlaps_of(&x, &k, counts);
	}
	free(x.by_addr);
	return 0;
}

struct carry_ctx {
	const struct policy_doc *doc, *live;
};

/* The compiled slot of the limiter with id in doc, or NULL. */
static const struct sluice_policy *slot_of(const struct policy_doc *doc, uint16_t id)
{
	int i = doc_rule_index(doc, id);

	if (i == -1)
		return &doc->dflt_policy;
	return i >= 0 ? &doc->rules[i].policy : NULL;
}

/* The id in doc of the limiter that had id in live: the same match, or the default. */
static int id_now(const struct carry_ctx *c, uint16_t id)
{
	int i = doc_rule_index(c->live, id), j;

	if (i == -1)
		return c->doc->dflt_id;
	if (i < 0)
		return -1;
	j = doc_find_rule(c->doc, &c->live->rules[i].match);
	return j < 0 ? -1 : c->doc->rules[j].id;
}

static bool still_bans(const struct sluice_policy *p, const struct sluice_key *key)
{
	if (!p || !(p->flags & SLUICE_POL_BAN))
		return false;
	return (key->family == SLUICE_FAMILY_IPV4 ? p->ipv4_prefix : p->ipv6_prefix) ==
	       key->prefix_len;
}

static int carry_one(int fd, const struct sluice_key *key, const struct sluice_ban *b, void *ctx)
{
	const struct carry_ctx *c = ctx;
	const struct sluice_policy *p = slot_of(c->doc, key->policy);
	struct sluice_key moved = *key;
	int id;

	/*
	 * An id of doc is the same limiter's (assign_ids keeps it while the
	 * meter keeps its shape, whatever else changed), or one made after the
	 * ban (ids of live rules are never given anew): keep it if it bans.
	 */
	if (p && still_bans(p, key))
		return 0;
	id = p ? -1 : id_now(c, key->policy);
	if (id >= 0 && still_bans(slot_of(c->doc, (uint16_t)id), key)) {
		moved.policy = (uint16_t)id;
		if (bpf_map_update_elem(fd, &moved, b, BPF_ANY))
			return -errno;
	}
	if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
		return -errno;
	return 0;
}

int bans_carry(int fd, const struct policy_doc *doc, const struct policy_doc *live)
{
	struct carry_ctx c = { .doc = doc, .live = live };

	return bans_walk(fd, carry_one, &c);
}

void ban_describe(char *buf, size_t len, const struct sluice_ban *b)
{
	char period[32], length[32];

	format_duration(period, sizeof(period), b->period_ns);
	format_duration(length, sizeof(length), b->length_ns);
	snprintf(buf, len, "%llu refused in %s, level %u, for %s", (unsigned long long)b->refused,
		 period, b->level, length);
}
