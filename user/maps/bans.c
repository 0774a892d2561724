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

static bool key_overlaps(const struct sluice_key *key, const struct cidr *c)
{
	struct cidr k;

	ban_key_cidr(key, &k);
	return cidr_contains(&k, c) || cidr_contains(c, &k);
}

struct lift_ctx {
	const struct cidr_list *l;
	int count;
};

/* Whether the key overlaps a CIDR of l, each such one counted when there are counts. */
static bool key_overlaps_any(const struct sluice_key *key, const struct cidr_list *l, int *counts)
{
	bool any = false;
	size_t i;

	for (i = 0; i < l->count; i++) {
		if (!key_overlaps(key, &l->items[i].cidr))
			continue;
		any = true;
		if (!counts)
			break;
		counts[i]++;
	}
	return any;
}

static int lift_one(int fd, const struct sluice_key *key, const struct sluice_ban *b, void *ctx)
{
	struct lift_ctx *l = ctx;

	(void)b;
	if (!key_overlaps_any(key, l->l, NULL))
		return 0;
	if (bpf_map_delete_elem(fd, key) && errno != ENOENT)
		return -errno;
	l->count++;
	return 0;
}

int bans_lift(int fd, const struct cidr_list *l)
{
	struct lift_ctx c = { .l = l };
	int err = bans_walk(fd, lift_one, &c);

	return err ?: c.count;
}

void bans_overlapping(const struct ban_list *bans, const struct cidr_list *l, int *counts)
{
	size_t i;

	if (l->count)
		memset(counts, 0, l->count * sizeof(*counts));
	for (i = 0; i < bans->count; i++)
		key_overlaps_any(&bans->items[i].key, l, counts);
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
	 * An id of doc is a rule unchanged (assign_ids), or one made after the
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
