// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "metrics.h"
#include "sources.h"
#include "table_hash.h"

/* Sets read per system call. */
#define BATCH_SETS 1024

/* A table pinned by another layout would be read as garbage: refuse it. */
static int table_check(int buckets_fd, __u32 *sets)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(buckets_fd, &info, &len))
		return -errno;
	if (info.key_size != sizeof(__u32) || info.value_size != sizeof(struct sluice_set))
		return -EPROTO;
	*sets = info.max_entries;
	return 0;
}

static void way_bucket(const struct sluice_set *set, int w, struct sluice_bucket *b)
{
	b->tat = set->tat[w];
	b->passed = set->way[w].passed;
	b->dropped = set->way[w].dropped;
}

static int set_walk(const struct sluice_set *set, uint64_t read_ns, bucket_fn fn, void *ctx)
{
	struct sluice_bucket b;
	int w, err = 0;

	for (w = 0; !err && w < SLUICE_SET_WAYS; w++) {
		if (!set->tag[w])
			continue;
		way_bucket(set, w, &b);
		err = fn(&set->way[w].key, &b, read_ns, ctx);
	}
	return err;
}

/*
 * Calls fn on every bucket, a batch of sets at a time. The sets are read
 * without their locks: a bucket being metered may read a packet behind.
 */
int sources_walk(int buckets_fd, bucket_fn fn, void *ctx)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct sluice_set *sets = NULL;
	__u32 n_sets, in = 0, out = 0, count, i, *keys = NULL;
	bool first = true, done = false;
	uint64_t read_ns;
	int err;

	err = table_check(buckets_fd, &n_sets);
	if (err)
		return err;
	keys = calloc(BATCH_SETS, sizeof(*keys));
	sets = calloc(BATCH_SETS, sizeof(*sets));
	if (!keys || !sets)
		err = -ENOMEM;
	while (!err && !done) {
		count = BATCH_SETS;
		err = bpf_map_lookup_batch(buckets_fd, first ? NULL : &in, &out, keys, sets, &count,
					   &opts);
		if (err == -ENOENT) {
			done = true;
			err = 0;
		}
		read_ns = monotonic_ns();
		for (i = 0; !err && i < count; i++)
			err = set_walk(&sets[i], read_ns, fn, ctx);
		in = out;
		first = false;
	}
	free(keys);
	free(sets);
	return err;
}

static int set_find(int buckets_fd, __u32 index, __u32 tag, const struct sluice_key *key,
		    struct sluice_bucket *b)
{
	struct sluice_set set;
	int w;

	if (bpf_map_lookup_elem(buckets_fd, &index, &set))
		return -errno;
	for (w = 0; w < SLUICE_SET_WAYS; w++) {
		if (set.tag[w] == tag && !memcmp(&set.way[w].key, key, sizeof(*key))) {
			way_bucket(&set, w, b);
			return 0;
		}
	}
	return -ENOENT;
}

int sources_find(int buckets_fd, const struct sluice_config *cfg, const struct sluice_key *key,
		 struct sluice_bucket *b)
{
	__u64 hash = table_hash(key, cfg->table_seed);
	__u32 tag = table_tag_of(hash);
	int err;

	err = set_find(buckets_fd, table_set_of(hash, cfg->table_sets), tag, key, b);
	if (err == -ENOENT)
		err = set_find(buckets_fd, table_set2_of(hash, cfg->table_sets), tag, key, b);
	return err;
}

static int count_one(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		     void *ctx)
{
	(void)key;
	(void)b;
	(void)read_ns;
	(*(uint64_t *)ctx)++;
	return 0;
}

int sources_count(int buckets_fd, uint64_t *n)
{
	*n = 0;
	return sources_walk(buckets_fd, count_one, n);
}

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

/* The per-CPU caches' counts not yet in a bucket, sorted by key; returns how many. */
static int pending_read(int hot_fd, struct pending **out)
{
	struct sluice_hot *hot;
	struct pending *p;
	int ncpu, cpu, k = 0;
	__u32 zero = 0;

	ncpu = libbpf_num_possible_cpus();
	if (ncpu < 0)
		return ncpu;
	hot = calloc((size_t)ncpu, sizeof(*hot));
	p = calloc((size_t)ncpu, sizeof(*p));
	if (!hot || !p) {
		k = -ENOMEM;
	} else if (bpf_map_lookup_elem(hot_fd, &zero, hot)) {
		k = -errno;
	} else {
		for (cpu = 0; cpu < ncpu; cpu++)
			if (hot[cpu].pending)
				p[k++] = (struct pending){ hot[cpu].key, hot[cpu].pending };
		qsort(p, (size_t)k, sizeof(*p), key_cmp);
	}
	free(hot);
	if (k <= 0)
		free(p);
	*out = k > 0 ? p : NULL;
	return k;
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
		/* Two CPUs may hold the same source: add every entry for it. */
		for (; hit && hit > p && !key_cmp(hit - 1, &t->rows[i].key); hit--)
			;
		for (; hit && hit < p + k && !key_cmp(hit, &t->rows[i].key); hit++)
			t->rows[i].b.dropped += hit->n;
	}
	free(p);
	return 0;
}

int sources_read(int buckets_fd, int hot_fd, struct source_table *t)
{
	int err;

	memset(t, 0, sizeof(*t));
	err = sources_walk(buckets_fd, keep_one, t);
	if (!err)
		err = pending_add(hot_fd, t);
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

void key_format(const struct sluice_key *key, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	int af = key->family == SLUICE_FAMILY_IPV6 ? AF_INET6 : AF_INET;

	inet_ntop(af, key->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, key->prefix_len);
}
