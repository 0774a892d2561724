// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "hot_key.h"
#include "reads/sources.h"

static int keep_one(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		    void *ctx)
{
	struct source_table *t = ctx;
	struct source_row *rows;
	size_t cap;

	if (t->n == t->cap) {
		cap = t->cap ? t->cap * 2 : 1024;
		rows = realloc(t->rows, cap * sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		t->rows = rows;
		t->cap = cap;
	}
	t->rows[t->n].key = *key;
	t->rows[t->n].b = *b;
	t->rows[t->n].read_ns = read_ns;
	t->n++;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sluice_key));
}

struct pending {
	struct sluice_key key; /* first, so a key compares like an entry */
	uint64_t n;
};

static int hot_walk_line(int cpu, const union sluice_hot_line *line, int ways, hot_walk_fn fn,
			 void *ctx)
{
	struct sluice_key key;
	__u32 n;
	int w, err;

	for (w = 0; w < ways; w++) {
		n = SLUICE_HOT_PENDING(line->way[w].count);
		if (!line->way[w].flags || !n)
			continue;
		hot_key_of(line, w, &key);
		err = fn(cpu, &key, n, ctx);
		if (err)
			return err;
	}
	return 0;
}

static int hot_walk_cpu(int cpu, const struct sluice_hot *c, hot_walk_fn fn, void *ctx)
{
	int i, err = 0;

	/* IPv4 sets of two ways, then IPv6 lines of one source. */
	for (i = 0; !err && i < 2 * SLUICE_HOT_SETS; i++)
		err = hot_walk_line(cpu, &c->line[i], i < SLUICE_HOT_SETS ? 2 : 1, fn, ctx);
	return err;
}

int hot_walk(int hot_fd, hot_walk_fn fn, void *ctx)
{
	struct sluice_hot *c = malloc(sizeof(*c));
	int ncpu = libbpf_num_possible_cpus(), err = 0;
	__u32 cpu;

	if (!c)
		return -ENOMEM;
	if (ncpu < 0)
		err = ncpu;
	for (cpu = 0; !err && cpu < (__u32)ncpu; cpu++) {
		if (bpf_map_lookup_elem(hot_fd, &cpu, c))
			err = errno == ENOENT ? 0 : -errno; /* fewer values than CPUs */
		else
			err = hot_walk_cpu((int)cpu, c, fn, ctx);
	}
	free(c);
	return err;
}

struct pending_list {
	struct pending *p;
	size_t n, cap;
};

static int pending_keep(int cpu, const struct sluice_key *key, uint64_t n, void *ctx)
{
	struct pending_list *l = ctx;
	struct pending *p;
	size_t cap;

	(void)cpu;
	if (l->n == l->cap) {
		cap = l->cap ? l->cap * 2 : 64;
		p = realloc(l->p, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->p = p;
		l->cap = cap;
	}
	l->p[l->n++] = (struct pending){ *key, n };
	return 0;
}

/* The per-CPU caches' counts not yet in a bucket, sorted by key; returns how many. */
static int pending_read(int hot_fd, struct pending **out)
{
	struct pending_list l = { 0 };
	int err = hot_walk(hot_fd, pending_keep, &l);

	if (err || !l.n) {
		free(l.p);
		*out = NULL;
		return err;
	}
	qsort(l.p, l.n, sizeof(*l.p), key_cmp);
	*out = l.p;
	return (int)l.n;
}

/* Adds the over-limit packets each CPU's cache has not yet handed to a bucket. */
static int pending_add(int hot_fd, struct source_table *t)
{
	struct pending *p, *hit;
	size_t i;
	int k;

	k = pending_read(hot_fd, &p);
	if (k <= 0)
		return k;
	for (i = 0; i < t->n; i++) {
		hit = bsearch(&t->rows[i].key, p, (size_t)k, sizeof(*p), key_cmp);
		/* Many entries may hold the key (CPUs, sources of one prefix): add each. */
		for (; hit && hit > p && !key_cmp(hit - 1, &t->rows[i].key); hit--)
			;
		for (; hit && hit < p + k && !key_cmp(hit, &t->rows[i].key); hit++)
			t->rows[i].b.dropped += hit->n;
	}
	free(p);
	return 0;
}

int sources_read(const struct policy_maps *m, struct source_table *t)
{
	struct sluice_config cfg;
	int err;

	memset(t, 0, sizeof(*t));
	err = config_read(m, &cfg);
	err = err ?: table_walk(m->buckets, cfg.table_seed, keep_one, t);
	if (!err)
		err = pending_add(m->hot, t);
	t->time_ns = monotonic_ns();
	if (err)
		sources_free(t);
	return err;
}

/* A key's five words mixed into one (the multiplier is the 64-bit golden ratio). */
static uint64_t key_hash(const struct sluice_key *key)
{
	const __u32 *w = (const __u32 *)key;
	uint64_t h = 0;
	int i;

	for (i = 0; i < (int)(sizeof(*key) / sizeof(*w)); i++)
		h = (h ^ w[i]) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

int sources_index(const struct source_table *t, struct source_index *ix)
{
	size_t cap = 16, i, slot;

	/* At most half full, so probes stay short. */
	while (cap < 2 * t->n)
		cap *= 2;
	ix->slots = calloc(cap, sizeof(*ix->slots));
	if (!ix->slots)
		return -ENOMEM;
	ix->mask = cap - 1;
	ix->t = t;
	for (i = 0; i < t->n; i++) {
		slot = key_hash(&t->rows[i].key) & ix->mask;
		while (ix->slots[slot])
			slot = (slot + 1) & ix->mask;
		ix->slots[slot] = i + 1;
	}
	return 0;
}

const struct source_row *sources_lookup(const struct source_index *ix, const struct sluice_key *key)
{
	size_t slot = key_hash(key) & ix->mask;
	const struct source_row *row;

	for (; ix->slots[slot]; slot = (slot + 1) & ix->mask) {
		row = &ix->t->rows[ix->slots[slot] - 1];
		if (!key_cmp(&row->key, key))
			return row;
	}
	return NULL;
}

void sources_index_free(struct source_index *ix)
{
	free(ix->slots);
	ix->slots = NULL;
}

void sources_free(struct source_table *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

bool source_proven(int proven_fd, const struct sluice_key *key)
{
	struct sluice_proven mark;

	return proven_fd >= 0 && !bpf_map_lookup_elem(proven_fd, key, &mark);
}
