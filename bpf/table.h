/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source table (struct sluice_set in sluice.h): finding and metering a
 * source's bucket in its two sets, and giving a new source a way, each
 * step under one set's spin lock. Nothing in a locked section calls a
 * helper; the callers count what happened once the lock is released.
 *
 * The three operations are global functions, so the verifier checks each
 * once on its own instead of once for every path that reaches it; BPF
 * functions take at most five arguments, hence struct table_op.
 *
 * A lookup tries the first set, then the second. Two CPUs inserting the
 * same brand-new source at the same moment could each pick a different
 * set; the first set's copy then serves the source and the other idles
 * out. Flow hashing sends one source's packets to one CPU, so in practice
 * this needs a source to spread over queues on its very first packets.
 */
#ifndef SLUICE_BPF_TABLE_H
#define SLUICE_BPF_TABLE_H

#include <errno.h>
#include "bucket.h"
#include "maps.h"
#include "table_hash.h"

#define WAY_NONE SLUICE_SET_WAYS
/* Bounds a way index for the verifier; WAYS is a power of two. */
#define WAY(w) ((w) & (SLUICE_SET_WAYS - 1))

/* Outcomes besides METER_CONFORMS and METER_OVER. */
enum table_result {
	TABLE_MISSING = METER_OVER + 1, /* no bucket for the key */
	TABLE_FULL,			/* every way of both sets still holds state */
	TABLE_NEW,			/* given an empty way */
	TABLE_REPLACED,			/* given the way of an idle, refilled bucket */
};

/* One operation on a key's bucket: where it may live, and what to do. */
struct table_op {
	struct sluice_key key;
	__u32 tag;	/* the key's tag in either set */
	__u32 set[2];	/* its two sets (maybe the same) */
	__u32 pad;
	__u64 now;
	__u64 cost;	/* of this packet, for meter and insert */
	__u64 limit;
	__u64 pending;	/* earlier refusals to add to the bucket's count */
	__u64 over_tat; /* out: the TAT that refused the packet */
	struct sluice_bucket fresh; /* insert: the new bucket */
};

static __always_inline void table_op_init(struct table_op *op, const struct sluice_config *cfg,
					  const struct sluice_key *key)
{
	__u64 hash = table_hash(key, cfg->table_seed);

	op->key = *key;
	op->tag = table_tag_of(hash);
	op->set[0] = table_set_of(hash, cfg->table_sets);
	op->set[1] = table_set2_of(hash, cfg->table_sets);
	op->pending = 0;
	op->over_tat = 0;
}

static __always_inline int key_same(const struct sluice_key *a, const struct sluice_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/*
 * Whether set s may hold the tag: read unlocked, to lock only the set that
 * can hold the key. A key that is there keeps its tag until it is replaced.
 */
static __always_inline int set_may_hold(const struct sluice_set *s, __u32 tag)
{
	__u32 w;

#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++)
		if (s->tag[w] == tag)
			return 1;
	return 0;
}

/* The way holding key, or WAY_NONE. The set must be locked. */
static __always_inline __u32 set_find(const struct sluice_set *s, __u32 tag,
				      const struct sluice_key *key)
{
	__u32 w;

#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++)
		if (s->tag[w] == tag && key_same(&s->way[w].key, key))
			return w;
	return WAY_NONE;
}

/*
 * The way a new source may take: an empty one, else the one idle longest
 * if its bucket has refilled (TAT not after now), else WAY_NONE. Exact
 * with the set locked.
 */
static __always_inline __u32 set_victim(const struct sluice_set *s, __u64 now)
{
	__u64 oldest = now + 1;
	__u32 w, victim = WAY_NONE;

#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++) {
		if (!s->tag[w])
			return w;
		if (s->tat[w] < oldest) {
			oldest = s->tat[w];
			victim = w;
		}
	}
	return victim;
}

/*
 * Ways a new source could take now: idle and refilled, empty ones included
 * (their TAT is 0). A hint, read unlocked. Branch-free: (now - tat) >> 63
 * is 1 exactly when tat is after now (times are far below 2^63).
 */
static __always_inline __u32 set_room(const struct sluice_set *s, __u64 now)
{
	__u64 room = SLUICE_SET_WAYS;
	__u32 w;

#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++)
		room -= (now - s->tat[w]) >> 63;
	return (__u32)room;
}

/*
 * One GCRA step on way w of a locked set: a plain read and write suffice.
 * The op's pending refusals are added whatever the outcome.
 */
static __always_inline int way_meter(struct sluice_set *s, __u32 w, struct table_op *op)
{
	struct sluice_way *way = &s->way[WAY(w)];
	__u64 tat = s->tat[WAY(w)], next;

	way->dropped += op->pending;
	if (gcra_conforms(tat, op->now, op->cost, op->limit, &next)) {
		s->tat[WAY(w)] = next;
		way->passed++;
		return METER_CONFORMS;
	}
	op->over_tat = tat;
	way->dropped++;
	return METER_OVER;
}

/* Meters the key's bucket if set s holds it: METER_* or TABLE_MISSING. */
static __always_inline int set_meter(struct sluice_set *s, struct table_op *op)
{
	int ret = TABLE_MISSING;
	__u32 w;

	bpf_spin_lock(&s->lock);
	w = set_find(s, op->tag, &op->key);
	if (w != WAY_NONE)
		ret = way_meter(s, w, op);
	bpf_spin_unlock(&s->lock);
	return ret;
}

/*
 * Meters the key's bucket with op->cost, adding op->pending to its count:
 * METER_CONFORMS, METER_OVER (with op->over_tat), or TABLE_MISSING.
 */
__attribute__((noinline)) int table_meter(struct table_op *op)
{
	struct sluice_set *s;
	int ret = TABLE_MISSING;
	int i;

	if (!op)
		return TABLE_MISSING;
	for (i = 0; i < 2 && ret == TABLE_MISSING; i++) {
		s = bpf_map_lookup_elem(&buckets, &op->set[i]);
		if (s && set_may_hold(s, op->tag))
			ret = set_meter(s, op);
	}
	return ret;
}

/*
 * Gives the key a way of set s holding op->fresh: TABLE_NEW,
 * TABLE_REPLACED or TABLE_FULL. When another CPU gave it one there first,
 * meters that bucket instead and returns METER_CONFORMS or METER_OVER.
 */
static __always_inline int set_insert(struct sluice_set *s, struct table_op *op)
{
	struct sluice_way *way;
	int ret;
	__u32 w;

	bpf_spin_lock(&s->lock);
	w = set_find(s, op->tag, &op->key);
	if (w != WAY_NONE) {
		ret = way_meter(s, w, op);
		goto out;
	}
	w = set_victim(s, op->now);
	if (w == WAY_NONE) {
		ret = TABLE_FULL;
		goto out;
	}
	ret = s->tag[WAY(w)] ? TABLE_REPLACED : TABLE_NEW;
	s->tag[WAY(w)] = op->tag;
	s->tat[WAY(w)] = op->fresh.tat;
	way = &s->way[WAY(w)];
	way->key = op->key;
	way->passed = op->fresh.passed;
	way->dropped = op->fresh.dropped;
out:
	bpf_spin_unlock(&s->lock);
	return ret;
}

/* The same in the emptier of the key's two sets, else in the other. */
__attribute__((noinline)) int table_insert(struct table_op *op)
{
	struct sluice_set *first, *second;
	__u32 order;
	int ret;

	if (!op)
		return TABLE_FULL;
	first = bpf_map_lookup_elem(&buckets, &op->set[0]);
	second = bpf_map_lookup_elem(&buckets, &op->set[1]);
	if (!first || !second)
		return TABLE_FULL;
	order = set_room(second, op->now) > set_room(first, op->now);
	ret = set_insert(order ? second : first, op);
	if (ret != TABLE_FULL || op->set[0] == op->set[1])
		return ret;
	return set_insert(order ? first : second, op);
}

/* Adds op->pending refusals to the key's bucket, if it still has one. */
__attribute__((noinline)) int table_add_dropped(struct table_op *op)
{
	struct sluice_set *s;
	__u32 w = WAY_NONE;
	int i;

	if (!op)
		return 0;
	for (i = 0; i < 2 && w == WAY_NONE; i++) {
		s = bpf_map_lookup_elem(&buckets, &op->set[i]);
		if (!s || !set_may_hold(s, op->tag))
			continue;
		bpf_spin_lock(&s->lock);
		w = set_find(s, op->tag, &op->key);
		if (w != WAY_NONE)
			s->way[WAY(w)].dropped += op->pending;
		bpf_spin_unlock(&s->lock);
	}
	return w != WAY_NONE;
}

#endif /* SLUICE_BPF_TABLE_H */
