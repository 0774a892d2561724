// SPDX-License-Identifier: GPL-2.0
/*
 * The set tables (sources and aggregates) read from userspace: every bucket
 * in batches of sets, without their locks, or one key where the datapath
 * would put it. A way keeps no key: it is read back from the way's set,
 * tag and ext, or from its key way (include/table_hash.h). Reading changes
 * nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "table_hash.h"
#include "base/clock.h"
#include "maps/table.h"

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

typedef int (*set_fn)(const struct sluice_set *set, __u32 index, uint64_t read_ns, void *arg);

/* Calls fn on every set, a batch at a time; stops at fn's first error. */
static int sets_each(int buckets_fd, set_fn fn, void *arg)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct sluice_set *sets = calloc(BATCH_SETS, sizeof(*sets));
	__u32 *keys = calloc(BATCH_SETS, sizeof(*keys));
	__u32 in = 0, out = 0, count, i;
	bool first = true, done = false;
	uint64_t read_ns;
	int err = keys && sets ? 0 : -ENOMEM;

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
			err = fn(&sets[i], keys[i], read_ns, arg);
		in = out;
		first = false;
	}
	free(keys);
	free(sets);
	return err;
}

static void way_bucket(const struct sluice_set *set, int w, struct sluice_bucket *b)
{
	b->tat = set->ways.tat[w];
	b->passed = set->ways.count[w].passed;
	b->dropped = set->ways.count[w].dropped;
}

/* What a walk needs to turn ways back into keys: the seeds and the table's size. */
struct walk {
	const __u64 *seed;
	__u32 sets;
	bucket_fn fn;
	void *ctx;
};

static int set_walk(const struct sluice_set *set, __u32 index, uint64_t read_ns, void *arg)
{
	const struct walk *wk = arg;
	struct sluice_bucket b;
	struct sluice_key key;
	int w, err = 0;

	for (w = 0; !err && w < SLUICE_SET_WAYS; w++) {
		if (table_key_at(&key, set, index, w, wk->seed, wk->sets))
			continue;
		way_bucket(set, w, &b);
		err = wk->fn(&key, &b, read_ns, wk->ctx);
	}
	return err;
}

/*
 * Calls fn on every bucket. The sets are read without their locks: a
 * bucket being metered may read a packet behind, and a pair changing
 * hands is skipped.
 */
int table_walk(int buckets_fd, const __u64 seed[3], bucket_fn fn, void *ctx)
{
	struct walk wk = { .seed = seed, .fn = fn, .ctx = ctx };
	int err = table_check(buckets_fd, &wk.sets);

	return err ?: sets_each(buckets_fd, set_walk, &wk);
}

static int set_find(int buckets_fd, const struct sluice_config *cfg, __u32 index,
		    const struct sluice_key *key, struct sluice_bucket *b)
{
	struct sluice_set set;
	struct sluice_key found;
	int w;

	if (bpf_map_lookup_elem(buckets_fd, &index, &set))
		return -errno;
	for (w = 0; w < SLUICE_SET_WAYS; w++) {
		if (table_key_at(&found, &set, index, w, cfg->table_seed, cfg->table_sets))
			continue;
		if (!memcmp(&found, key, sizeof(*key))) {
			way_bucket(&set, w, b);
			return 0;
		}
	}
	return -ENOENT;
}

int table_lookup(int buckets_fd, const struct sluice_config *cfg, const struct sluice_key *key,
		 struct sluice_bucket *b)
{
	struct table_place pl;
	int err;

	table_place(&pl, key, cfg->table_seed, cfg->table_sets);
	err = set_find(buckets_fd, cfg, pl.set[0], key, b);
	if (err == -ENOENT)
		err = set_find(buckets_fd, cfg, pl.set[1], key, b);
	return err;
}

/* Buckets in the set: ways holding one, whatever their key (a key way holds none). */
static int set_count(const struct sluice_set *set, __u32 index, uint64_t read_ns, void *arg)
{
	int w;

	(void)index;
	(void)read_ns;
	for (w = 0; w < SLUICE_SET_WAYS; w++)
		*(uint64_t *)arg += set->ways.tag[w] && set->ways.ext[w] != SLUICE_EXT_KEY;
	return 0;
}

int table_count(int buckets_fd, uint64_t *n)
{
	__u32 sets;
	int err = table_check(buckets_fd, &sets);

	*n = 0;
	return err ?: sets_each(buckets_fd, set_count, n);
}
