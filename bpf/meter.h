/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-key GCRA, exact across CPUs: one TAT per key, advanced by
 * compare-and-swap, so every CPU meters the same bucket. A per-CPU negative
 * cache answers repeated over-limit packets without touching the hash map.
 */
#ifndef SLUICE_BPF_METER_H
#define SLUICE_BPF_METER_H

#include <errno.h>
#include "gcra.h"
#include "clock.h"
#include "stats.h"

/* A TAT contended this often in a row is judged over the limit. */
#define METER_CAS_TRIES 8

enum meter_verdict {
	METER_CONFORMS,
	METER_OVER,
};

static __always_inline int key_equal(const struct sluice_key *a, const struct sluice_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

static __always_inline struct hot_entry *hot_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hot, &zero);
}

static __always_inline void hot_remember(struct hot_entry *h, const struct sluice_key *key,
					 const struct sluice_config *cfg, __u64 tat)
{
	h->key = *key;
	h->generation = cfg->generation;
	h->admissible_at = gcra_admissible_at(tat, cfg->tolerance);
}

/* Finds the key's bucket, creating a full one on first sight. */
static __always_inline struct sluice_bucket *bucket_get(const struct sluice_key *key,
							const struct sluice_config *cfg,
							__u64 now, struct sluice_stats *st,
							__u64 bytes, int *created)
{
	struct sluice_bucket fresh = { .tat = now + cfg->interval };
	struct sluice_bucket *b;
	long err;

	*created = 0;
	b = bpf_map_lookup_elem(&buckets, key);
	if (b)
		return b;

	/* A new source starts full; its first packet is the one we meter. */
	err = bpf_map_update_elem(&buckets, key, &fresh, BPF_NOEXIST);
	if (!err) {
		stats_count(st, SLUICE_CNT_NEW_SOURCE, bytes);
		*created = 1;
		return NULL;
	}
	/* Another CPU inserted it first: meter against theirs. */
	if (err == -EEXIST)
		b = bpf_map_lookup_elem(&buckets, key);
	if (!b)
		stats_count(st, SLUICE_CNT_INSERT_FAILED, bytes);
	return b;
}

static __always_inline int meter_bucket(struct sluice_bucket *b, const struct sluice_key *key,
					const struct sluice_config *cfg, __u64 now,
					struct hot_entry *h)
{
	__u64 tat, next;
	int i;

	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)&b->tat;
		if (!gcra_conforms(tat, now, cfg->interval, cfg->tolerance, &next)) {
			hot_remember(h, key, cfg, tat);
			return METER_OVER;
		}
		if (__sync_val_compare_and_swap(&b->tat, tat, next) == tat)
			return METER_CONFORMS;
	}
	/* Never admit what we could not account for. */
	return METER_OVER;
}

static __always_inline int meter_packet(const struct sluice_key *key,
					const struct sluice_config *cfg,
					struct sluice_stats *st, __u64 bytes)
{
	struct sluice_bucket *b;
	struct hot_entry *h;
	int hot_hit, created;
	__u64 now;

	h = hot_get();
	if (!h)
		return METER_CONFORMS;
	hot_hit = h->generation == cfg->generation && key_equal(&h->key, key);
	if (hot_hit && cfg->coarse_clock_ok && clock_coarse() < h->admissible_at)
		return METER_OVER;

	now = clock_precise();
	if (hot_hit && now < h->admissible_at)
		return METER_OVER;

	b = bucket_get(key, cfg, now, st, bytes, &created);
	if (!b)
		return METER_CONFORMS; /* created full, or failed open (counted) */
	return meter_bucket(b, key, cfg, now, h);
}

#endif /* SLUICE_BPF_METER_H */
