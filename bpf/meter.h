/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-key GCRA, exact across CPUs: one TAT per key, advanced by
 * compare-and-swap, so every CPU meters the same bucket. A per-CPU negative
 * cache answers repeated over-limit packets without the configuration, the
 * hash map or the clock.
 *
 * Each bucket also counts its packets for `sluice top`, at the price of one
 * atomic add per packet that reaches it. Packets the cache refuses are
 * counted in the cache entry (plain per-CPU) and added to the bucket later
 * in one go, so the fast path stays free of shared writes.
 */
#ifndef SLUICE_BPF_METER_H
#define SLUICE_BPF_METER_H

#include <errno.h>
#include "gcra.h"
#include "clock.h"
#include "parse.h"
#include "stats.h"

/* A TAT contended this often in a row is judged over the limit. */
#define METER_CAS_TRIES 8

enum meter_verdict {
	METER_CONFORMS,
	METER_OVER,
};

static __always_inline struct sluice_hot *hot_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hot, &zero);
}

/* The cached entry is about this packet's source, under the live configuration. */
static __always_inline int hot_matches(const struct sluice_hot *h, const struct packet *pkt)
{
	return h->generation == config_generation && h->family == pkt->family &&
	       h->src[0] == pkt->addr[0] && h->src[1] == pkt->addr[1] &&
	       h->src[2] == pkt->addr[2] && h->src[3] == pkt->addr[3];
}

/*
 * The fast path: is this a repeat offender, still over its limit? Jiffies
 * answer most such packets with one load; only near the moment the source
 * may conform again does it take the precise clock, which it hands on in
 * *now (0 when not read) for the full decision. A packet it refuses is
 * counted against its source in the entry.
 */
static __always_inline int hot_still_over(struct sluice_hot *h, const struct packet *pkt,
					  __u64 *now)
{
	*now = 0;
	if (!h || !hot_matches(h, pkt))
		return 0;
	if (clock_jiffies() >= h->admissible_jiffy) {
		*now = clock_now();
		if (*now >= h->admissible_at)
			return 0;
	}
	h->pending++;
	return 1;
}

static __always_inline int key_same(const struct sluice_key *a, const struct sluice_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/* The entry's pending refusals when they belong to key: they ride on key's own add. */
static __always_inline __u64 hot_take_pending(struct sluice_hot *h, const struct sluice_key *key)
{
	__u64 n;

	if (!h || !h->pending || !key_same(&h->key, key))
		return 0;
	n = h->pending;
	h->pending = 0;
	return n;
}

/* Hands the entry's pending refusals to their bucket before the entry changes hands. */
static __always_inline void hot_flush(struct sluice_hot *h)
{
	struct sluice_bucket *b;

	if (!h->pending)
		return;
	b = bpf_map_lookup_elem(&buckets, &h->key);
	if (b)
		__sync_fetch_and_add(&b->dropped, h->pending);
	/* An evicted source is forgotten, its count with it. */
	h->pending = 0;
}

/* Remembers an over-limit source until the moment it may conform again. */
static __always_inline void hot_remember(struct sluice_hot *h, const struct packet *pkt,
					 const struct sluice_key *key,
					 const struct sluice_config *cfg, __u64 tat, __u64 now)
{
	__u64 admissible_at = gcra_admissible_at(tat, cfg->tolerance);

	hot_flush(h);
	h->src[0] = pkt->addr[0];
	h->src[1] = pkt->addr[1];
	h->src[2] = pkt->addr[2];
	h->src[3] = pkt->addr[3];
	h->family = pkt->family;
	h->action = (__u8)cfg->action;
	h->generation = cfg->generation;
	h->admissible_at = admissible_at;
	h->admissible_jiffy = clock_jiffy_before(admissible_at - now, cfg->jiffy_recip);
	h->key = *key;
}

/* Finds the key's bucket, or creates it full and returns NULL (the packet conforms). */
static __always_inline struct sluice_bucket *bucket_get(struct xdp_md *ctx,
							const struct sluice_key *key,
							const struct sluice_config *cfg, __u64 now)
{
	struct sluice_bucket fresh = { .tat = now + cfg->interval, .passed = 1 };
	struct sluice_bucket *b;
	long err;

	b = bpf_map_lookup_elem(&buckets, key);
	if (b)
		return b;

	/* A new source starts full; its first packet is the one we meter. */
	err = bpf_map_update_elem(&buckets, key, &fresh, BPF_NOEXIST);
	if (!err) {
		stats_count(ctx, SLUICE_CNT_NEW_SOURCE);
		return NULL;
	}
	/* Another CPU inserted it first: meter against theirs. */
	if (err == -EEXIST)
		b = bpf_map_lookup_elem(&buckets, key);
	if (!b)
		stats_count(ctx, SLUICE_CNT_INSERT_FAILED);
	return b;
}

static __always_inline int meter_bucket(struct sluice_bucket *b, const struct sluice_config *cfg,
					__u64 now, __u64 *over_tat)
{
	__u64 tat, next;
	int i;

	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)&b->tat;
		if (!gcra_conforms(tat, now, cfg->interval, cfg->tolerance, &next)) {
			*over_tat = tat;
			return METER_OVER;
		}
		if (__sync_val_compare_and_swap(&b->tat, tat, next) == tat)
			return METER_CONFORMS;
	}
	/* Never admit what we could not account for. */
	*over_tat = 0;
	return METER_OVER;
}

/*
 * The full decision, once the fast path could not answer; now may be 0
 * (unread). Either outcome costs the bucket one atomic add for `top`.
 */
static __always_inline int meter_packet(struct xdp_md *ctx, const struct packet *pkt,
					const struct sluice_key *key,
					const struct sluice_config *cfg, struct sluice_hot *h,
					__u64 now)
{
	struct sluice_bucket *b;
	__u64 tat;

	if (!now)
		now = clock_now();
	b = bucket_get(ctx, key, cfg, now);
	if (!b)
		return METER_CONFORMS; /* created full, or failed open (counted) */
	if (meter_bucket(b, cfg, now, &tat) == METER_CONFORMS) {
		__sync_fetch_and_add(&b->passed, 1);
		return METER_CONFORMS;
	}
	__sync_fetch_and_add(&b->dropped, 1 + hot_take_pending(h, key));
	if (h && tat)
		hot_remember(h, pkt, key, cfg, tat, now);
	return METER_OVER;
}

#endif /* SLUICE_BPF_METER_H */
