// SPDX-License-Identifier: GPL-2.0
/*
 * The set tables (sources and aggregates) read from userspace: every bucket
 * in batches of sets, without their locks, or one key where the datapath
 * would put it. Reading changes nothing.
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
int table_walk(int buckets_fd, bucket_fn fn, void *ctx)
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

int table_lookup(int buckets_fd, const struct sluice_config *cfg, const struct sluice_key *key,
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

int table_count(int buckets_fd, uint64_t *n)
{
	*n = 0;
	return table_walk(buckets_fd, count_one, n);
}
