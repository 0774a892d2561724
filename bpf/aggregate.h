/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Prefix aggregates (--aggregate /24=5000/s): besides its own bucket, a
 * packet must fit the bucket of each wider prefix its rule limits, shared
 * by every source in that prefix. They are taken first, so a network that
 * spreads its flood over many addresses is refused before its sources
 * reach the source table. What a later bucket refuses is given back, so a
 * dropped packet never spends a neighbour's allowance.
 */
#ifndef SLUICE_BPF_AGGREGATE_H
#define SLUICE_BPF_AGGREGATE_H

#include "bucket.h"
#include "classify.h"
#include "maps.h"

/* The aggregate TATs a packet has taken from, to give back if it is refused later. */
struct aggregates_taken {
	__u64 *tat[SLUICE_MAX_AGGREGATES];
	__u64 cost[SLUICE_MAX_AGGREGATES];
};

static __always_inline void aggregate_key(struct sluice_key *key, const struct packet *pkt,
					  const struct sluice_aggregate *a, __u16 id)
{
	*(__u32 *)key = key_head(a->family, a->prefix_len, id);
	key->addr[0] = pkt->addr[0] & a->mask[0];
	key->addr[1] = pkt->addr[1] & a->mask[1];
	key->addr[2] = pkt->addr[2] & a->mask[2];
	key->addr[3] = pkt->addr[3] & a->mask[3];
}

/* The aggregate's TAT, created full on first sight; NULL with *err when it cannot be. */
static __always_inline __u64 *aggregate_tat(const struct sluice_key *key, long *err)
{
	__u64 *tat = bpf_map_lookup_elem(&aggregates, key);
	__u64 full = 0;

	if (tat)
		return tat;
	*err = bpf_map_update_elem(&aggregates, key, &full, BPF_NOEXIST);
	if (*err && *err != -EEXIST)
		return NULL;
	*err = -ENOENT; /* evicted again before we looked */
	return bpf_map_lookup_elem(&aggregates, key);
}

static __always_inline void aggregates_refund(struct aggregates_taken *t)
{
	int i;

#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++)
		if (t->tat[i])
			__sync_fetch_and_sub(t->tat[i], t->cost[i]);
}

/*
 * Takes this packet from each aggregate bucket of its family, recording
 * what it took in *t. On a refusal it gives all of it back and returns
 * METER_OVER, with *admissible_at the earliest moment the refusing bucket
 * could take a packet again (0: unknown; the cache ignores a moment past).
 */
static __always_inline int aggregates_take(struct xdp_md *ctx, const struct packet *pkt,
					   const struct sluice_policy *p, __u64 now,
					   struct aggregates_taken *t, __u64 *admissible_at)
{
	const struct sluice_aggregate *a;
	struct sluice_key key;
	__u64 *tatp, tat;
	long err;
	int i, bytes;

	*admissible_at = 0;
#pragma unroll
	for (i = 0; i < SLUICE_MAX_AGGREGATES; i++) {
		a = &p->aggregates[i];
		if (i >= p->n_aggregates || a->family != pkt->family)
			continue;
		aggregate_key(&key, pkt, a, p->id);
		tatp = aggregate_tat(&key, &err);
		if (!tatp) {
			if (meter_insert_failed(ctx, p, err) == METER_CONFORMS)
				continue;
			goto refused;
		}
		bytes = a->rate_unit != SLUICE_UNIT_PACKETS;
		t->cost[i] = unit_cost(ctx, a->interval, bytes);
		switch (meter_settled(ctx, gcra_take(tatp, now, t->cost[i], a->limit, &tat))) {
		case METER_CONFORMS:
			break;
		case METER_OVER:
			/* A bandwidth may take the smallest frame sooner than this one. */
			*admissible_at = gcra_admissible_at(
				tat, now, unit_cost_min(a->interval, bytes), a->limit);
			/* fall through */
		default:
			goto refused;
		}
		t->tat[i] = tatp;
	}
	return METER_CONFORMS;
refused:
	aggregates_refund(t);
	return METER_OVER;
}

#endif /* SLUICE_BPF_AGGREGATE_H */
