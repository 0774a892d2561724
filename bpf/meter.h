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

#include "act.h"
#include "aggregate.h"
#include "bucket.h"
#include "clock.h"

static __always_inline struct sluice_hot *hot_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&hot, &zero);
}

/*
 * The cached entry is about this packet's source and L4 class (which pick
 * the same policy again) under the live configuration.
 */
static __always_inline int hot_matches(const struct sluice_hot *h, const struct packet *pkt)
{
	return h->generation == config_generation && h->family == pkt->family &&
	       h->src[0] == pkt->addr[0] && h->src[1] == pkt->addr[1] &&
	       h->src[2] == pkt->addr[2] && h->src[3] == pkt->addr[3] && h->proto == pkt->proto &&
	       h->dport == pkt->dport && h->tcp_syn == pkt->tcp_syn;
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

/* Remembers an over-limit source until the earliest moment it may conform again. */
static __always_inline void hot_remember(struct sluice_hot *h, const struct packet *pkt,
					 const struct sluice_key *key,
					 const struct sluice_policy *p, __u32 index,
					 const struct sluice_config *cfg, __u64 admissible_at,
					 __u64 now)
{
	hot_flush(h);
	h->src[0] = pkt->addr[0];
	h->src[1] = pkt->addr[1];
	h->src[2] = pkt->addr[2];
	h->src[3] = pkt->addr[3];
	h->family = pkt->family;
	h->proto = pkt->proto;
	h->tcp_syn = pkt->tcp_syn;
	h->dport = pkt->dport;
	verdict_of(&h->verdict, p);
	h->rule_slot = (__u16)index;
	h->generation = cfg->generation;
	h->admissible_at = admissible_at;
	h->admissible_jiffy = clock_jiffy_before(admissible_at - now, cfg->jiffy_recip);
	h->key = *key;
}

/*
 * A source refused a bucket: charged to the rule's shared overflow bucket,
 * never passed unmetered.
 */
static __always_inline int meter_overflow(struct xdp_md *ctx, const struct sluice_policy *p,
					  struct sluice_admission *adm, __u64 now)
{
	__u64 tat;

	stats_count(ctx, SLUICE_CNT_REFUSED);
	if (gcra_take(&adm->overflow_tat, now,
		      unit_cost(ctx, p->overflow_interval, p->flags & SLUICE_POL_BYTES),
		      p->overflow_limit, &tat) ==
	    METER_CONFORMS) {
		stats_count(ctx, SLUICE_CNT_OVERFLOW_PASSED);
		return METER_CONFORMS;
	}
	stats_count(ctx, SLUICE_CNT_OVERFLOW_DROPPED);
	return METER_OVER;
}

/*
 * A source seen for the first time: admitted within the rule's new-source
 * budget, it gets a bucket holding the initial burst, metered with this
 * packet (and counted in it); refused, it goes to the overflow bucket.
 * Returns -EEXIST when another CPU created the bucket first.
 */
static __always_inline int meter_new_source(struct xdp_md *ctx, const struct sluice_key *key,
					    const struct sluice_policy *p, __u64 now, __u64 cost)
{
	__u32 id = p->id;
	struct sluice_admission *adm = bpf_map_lookup_elem(&admission, &id);
	__u64 start = now + p->initial_offset, tat;
	int conforms = cost + p->initial_offset <= p->limit;
	struct sluice_bucket fresh = {
		.tat = conforms ? start + cost : start,
		.passed = conforms,
		.dropped = !conforms,
	};
	long err;

	if (!adm)
		return METER_OVER;
	if (gcra_take(&adm->admit_tat, now, p->admit_interval, p->admit_limit, &tat) !=
	    METER_CONFORMS)
		return meter_overflow(ctx, p, adm, now);
	err = bpf_map_update_elem(&buckets, key, &fresh, BPF_NOEXIST);
	if (err == -EEXIST)
		return -EEXIST;
	if (err)
		return meter_insert_failed(ctx, p, err);
	stats_count(ctx, SLUICE_CNT_NEW_SOURCE);
	return conforms ? METER_CONFORMS : METER_OVER;
}

/* The source's own bucket, created through admission when new. */
static __always_inline int meter_source(struct xdp_md *ctx, const struct packet *pkt,
					const struct sluice_key *key, const struct sluice_policy *p,
					__u32 index, const struct sluice_config *cfg,
					struct sluice_hot *h, __u64 now)
{
	int bytes = p->flags & SLUICE_POL_BYTES;
	__u64 cost = unit_cost(ctx, p->interval, bytes), tat;
	struct sluice_bucket *b = bpf_map_lookup_elem(&buckets, key);
	int ret;

	if (!b) {
		ret = meter_new_source(ctx, key, p, now, cost);
		if (ret != -EEXIST)
			return ret;
		b = bpf_map_lookup_elem(&buckets, key);
		if (!b)
			return meter_insert_failed(ctx, p, -ENOENT);
	}
	if (gcra_take(&b->tat, now, cost, p->limit, &tat) == METER_CONFORMS) {
		__sync_fetch_and_add(&b->passed, 1);
		return METER_CONFORMS;
	}
	__sync_fetch_and_add(&b->dropped, 1 + hot_take_pending(h, key));
	/* A bandwidth may take a smaller packet sooner: assume none. */
	if (h && tat)
		hot_remember(h, pkt, key, p, index, cfg,
			     gcra_admissible_at(tat, bytes ? 0 : cost, p->limit), now);
	return METER_OVER;
}

/* A packet an aggregate refused: a drop of its source, if it has a bucket. */
static __always_inline void meter_aggregate_refused(const struct packet *pkt,
						    const struct sluice_key *key,
						    const struct sluice_policy *p, __u32 index,
						    const struct sluice_config *cfg,
						    struct sluice_hot *h, __u64 admissible_at,
						    __u64 now)
{
	struct sluice_bucket *b = bpf_map_lookup_elem(&buckets, key);

	if (b)
		__sync_fetch_and_add(&b->dropped, 1 + hot_take_pending(h, key));
	if (h && admissible_at)
		hot_remember(h, pkt, key, p, index, cfg, admissible_at, now);
}

/*
 * The full decision, once the fast path could not answer; now may be 0
 * (unread). The aggregates of the rule come first, then the source's own
 * bucket; either outcome costs the source's bucket one atomic add for `top`.
 */
static __always_inline int meter_packet(struct xdp_md *ctx, const struct packet *pkt,
					const struct sluice_key *key, const struct sluice_policy *p,
					__u32 index, const struct sluice_config *cfg,
					struct sluice_hot *h, __u64 now)
{
	struct aggregates_taken taken = {};
	__u64 admissible_at;
	int ret;

	if (!now)
		now = clock_now();
	if (!p->n_aggregates)
		return meter_source(ctx, pkt, key, p, index, cfg, h, now);
	if (aggregates_take(ctx, pkt, p, now, &taken, &admissible_at) != METER_CONFORMS) {
		meter_aggregate_refused(pkt, key, p, index, cfg, h, admissible_at, now);
		return METER_OVER;
	}
	ret = meter_source(ctx, pkt, key, p, index, cfg, h, now);
	if (ret != METER_CONFORMS)
		aggregates_refund(&taken);
	return ret;
}

#endif /* SLUICE_BPF_METER_H */
