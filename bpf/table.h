/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The set tables (struct sluice_set in sluice.h): finding and metering a
 * key's bucket in its two sets, giving a new key a way, and giving back
 * what a refused packet took. Two tables share this code: the source table
 * (map `buckets`) and the aggregate table (map `aggregates`); the op says
 * which.
 *
 * Metering takes no lock: it finds the way by tag and key, and advances
 * its TAT by compare-and-swap, like every other bucket. Giving a way to a
 * new source takes the set's spin lock, so two sources never race for one
 * way; nothing in the locked section calls a helper. A way changes hands
 * in an order metering can check: its tag is cleared (atomically, a full
 * barrier), its TAT replaced by compare-and-swap only if it is still the
 * idle value seen, then the key and counts written, then the new tag set.
 * A meter step that advanced a TAT re-reads the tag and key: if the way
 * changed hands meanwhile, it gives the cost back and finds no bucket.
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

#include <linux/errno.h> /* not glibc's: -target bpf would pull in its 32-bit stubs */
#include "bucket.h"
#include "slot.h"
#include "maps.h"
#include "table_hash.h"

#define WAY_NONE SLUICE_SET_WAYS
/* Bounds a way index for the verifier; WAYS is a power of two. */
#define WAY(w) ((w) & (SLUICE_SET_WAYS - 1))

/* Outcomes besides METER_CONFORMS and METER_OVER. */
enum table_result {
	TABLE_MISSING = METER_CONTENDED + 1, /* no bucket for the key */
	TABLE_FULL,			     /* every way of both sets still holds state */
	TABLE_NEW,			     /* given an empty way */
	TABLE_REPLACED,			     /* given the way of an idle, refilled bucket */
	TABLE_EXISTS,			     /* another CPU gave the key a way first */
};

/* struct table_op.table: the map of sets the key lives in. */
enum table_id {
	TABLE_SOURCES,	  /* `buckets` */
	TABLE_AGGREGATES, /* `aggregates` */
};

/* One operation on a key's bucket: where it may live, and what to do. */
struct table_op {
	struct sluice_key key;
	__u32 tag;    /* the key's tag in either set */
	__u32 set[2]; /* its two sets (maybe the same) */
	__u8 table;   /* enum table_id */
	__u8 charged; /* meter.h: what a passed packet was charged, to give back */
	/* How the bucket's slot is metered (include/slot.h): GCRA for aggregates. */
	__u8 kind;
	__u8 bits;
	__u32 window; /* windows: W in milliseconds; warm-up: permits stored at most */
	__u64 now;
	__u64 cost; /* of this packet, for meter and insert */
	__u64 limit;
	__u64 pending;		    /* earlier refusals to add to the bucket's count */
	__u64 over_tat;		    /* out: the TAT that refused the packet */
	__u64 stepped_from;	    /* out: the slot a passed packet's step started from */
	struct sluice_bucket fresh; /* insert: the new bucket */
};

/* Places key in a table of `sets` sets, hashed with the configuration's seeds. */
static __always_inline void table_op_place(struct table_op *op, const struct sluice_config *cfg,
					   const struct sluice_key *key, __u8 table, __u32 sets)
{
	__u64 hash = table_hash(key, cfg->table_seed);

	op->key = *key;
	op->tag = table_tag_of(hash);
	op->set[0] = table_set_of(hash, sets);
	op->set[1] = table_set2_of(hash, sets);
	op->table = table;
	op->charged = 0;
	op->kind = SLUICE_METER_GCRA;
	op->pending = 0;
	op->over_tat = 0;
	op->stepped_from = 0; /* a new way's slot starts from 0 */
}

/* An op on a source's bucket. */
static __always_inline void table_op_init(struct table_op *op, const struct sluice_config *cfg,
					  const struct sluice_key *key)
{
	table_op_place(op, cfg, key, TABLE_SOURCES, cfg->table_sets);
}

/*
 * Set i of the op's key in its table. Two lookups, not one on a chosen map,
 * which the verifier could not inline: the empty asm keeps the compiler
 * from merging them. The index is copied to the stack: before Linux 6.2 a
 * map key must be there (or in a packet or map value), not in the memory
 * a global function's pointer argument points to.
 */
static __always_inline struct sluice_set *table_set(const struct table_op *op, int i)
{
	__u32 index = op->set[i];
	struct sluice_set *s;

	if (op->table == TABLE_AGGREGATES) {
		s = bpf_map_lookup_elem(&aggregates, &index);
		asm volatile("" ::: "memory");
		return s;
	}
	return bpf_map_lookup_elem(&buckets, &index);
}

static __always_inline int key_same(const struct sluice_key *a, const struct sluice_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

/*
 * The way holding key, or WAY_NONE: the tags first, then the key of a way
 * whose tag matches. Exact with the set locked; without, a way changing
 * hands at that moment may be missed, which the caller's checks absorb.
 */
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
 * if its bucket has refilled (TAT not after now), else WAY_NONE. The set
 * must be locked (meter steps may still advance a TAT; way_take checks).
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

/* Whether way w still holds the op's key: read after the TAT, whose changes it fences. */
static __always_inline int way_owned(const struct sluice_set *s, __u32 w, const struct table_op *op)
{
	return *(volatile const __u32 *)&s->tag[WAY(w)] == op->tag &&
	       key_same(&s->way[WAY(w)].key, &op->key);
}

/*
 * The op's pending refusals, plus this packet when over, to the way's count.
 * Not exact if the way changes hands between way_owned() and here (its
 * source returning just as its idle way is given away): then these land on
 * the next owner's count, or are overwritten. README "Known limits".
 */
static __always_inline void way_count(struct sluice_way *way, __u64 passed, __u64 dropped)
{
	if (passed)
		__sync_fetch_and_add(&way->passed, passed);
	if (dropped)
		__sync_fetch_and_add(&way->dropped, dropped);
}

/* The op's slot_meter, for the pure functions of include/slot.h. */
static __always_inline void slot_meter_of_op(struct slot_meter *m, const struct table_op *op)
{
	m->limit = op->limit;
	m->window = op->kind == SLUICE_METER_WARMUP ? op->window : op->window * WINDOW_UNITS_PER_MS;
	m->kind = op->kind;
	m->bits = op->bits;
}

/*
 * The slot after op's packet conforms, or 0 when it does not, for a kind
 * given as a constant where the caller knows it (the switch in slot_next
 * then folds away; table_meter_kind).
 */
static __always_inline __u64 slot_next_of(const struct table_op *op, __u64 slot, __u8 kind)
{
	struct slot_meter m = {};

	slot_meter_of_op(&m, op);
	m.kind = kind;
	return slot_next(&m, slot, op->now, op->cost);
}

/*
 * The algorithms besides GCRA off the table's meter step (a new source's
 * first step, a warm-up's undo, a refusal's moment), each a global
 * function: the verifier checks them once, not on every path that uses
 * them, and they keep the callers' stack small. slot_step: the slot after
 * op's packet conforms, or 0 when it does not (no window or warm-up slot is
 * 0 after a packet).
 */
__attribute__((noinline)) __u64 slot_step(const struct table_op *op, __u64 slot)
{
	return op ? slot_next_of(op, slot, op->kind) : 0;
}

/* No later than the first moment a packet of cost may conform, after a refusal left slot. */
__attribute__((noinline)) __u64 slot_admissible(const struct table_op *op, __u64 slot, __u64 cost)
{
	struct slot_meter m = {};

	if (!op)
		return 0;
	slot_meter_of_op(&m, op);
	return slot_admissible_at(&m, slot, op->now, cost);
}

/* The slot with op->cost given back (slot_refunded). */
__attribute__((noinline)) __u64 slot_given_back(const struct table_op *op, __u64 slot)
{
	struct slot_meter m = {};

	if (!op)
		return slot;
	slot_meter_of_op(&m, op);
	return slot_refunded(&m, slot, op->now, op->cost);
}

/*
 * Undoes a step that charged the way's next owner. A TAT takes the cost
 * back whatever happened since; another slot packs counts, so it gets back
 * the value it had only if nothing changed it since (else it stays charged).
 */
static __always_inline void way_uncharge(__u64 *slotp, __u64 was, __u64 charged,
					 const struct table_op *op, __u8 kind)
{
	if (kind == SLUICE_METER_GCRA)
		__sync_fetch_and_sub(slotp, op->cost);
	else
		__sync_val_compare_and_swap(slotp, charged, was);
}

/*
 * A fleet agent runs: the debt a source's TAT may carry past its burst
 * (what other hosts owe), else 0. The one load the fleet adds per packet
 * when no agent runs.
 */
static __always_inline __u64 fleet_owed(const struct table_op *op, __u8 kind)
{
	if (kind != SLUICE_METER_GCRA || op->now >= fleet_hint.live_until ||
	    op->table != TABLE_SOURCES)
		return 0;
	return fleet_hint.debt_max;
}

/*
 * Counts a passed packet into its way's usage this period, and hands the
 * source to the agent when that crosses its share. A plain update: two
 * CPUs racing may lose a packet's units, which only delays a hint.
 */
__attribute__((noinline)) int fleet_note(struct sluice_way *way, const struct table_op *op)
{
	struct sluice_fleet_candidate *c;
	__u32 tag, used, was, v;

	if (!way || !op)
		return 0;
	tag = (__u32)(op->now >> (fleet_hint.period_shift & 63)) & 0xff;
	v = way->fleet_usage;
	was = v >> 24 == tag ? v & 0xffffff : 0;
	used = was + (__u32)(op->cost >> (fleet_hint.cost_shift & 63)) + 1;
	if (used > 0xffffff || used < was)
		used = 0xffffff;
	way->fleet_usage = tag << 24 | used;
	if (was >= fleet_hint.share_units || used < fleet_hint.share_units)
		return 0;
	c = bpf_ringbuf_reserve(&fleet_ring, sizeof(*c), 0);
	if (!c)
		return 0;
	c->key = op->key;
	c->units = used;
	c->passed = way->passed;
	c->cost = op->cost;
	bpf_ringbuf_submit(c, 0);
	return 1;
}

/*
 * One meter step on way w of set s, without the lock: METER_CONFORMS,
 * METER_OVER (op->over_tat: the TAT the refusal left), METER_CONTENDED,
 * or TABLE_MISSING when the way changed hands under it. kind is op->kind,
 * as a constant (table_meter_kind).
 */
static __always_inline int way_meter(struct sluice_set *s, __u32 w, struct table_op *op, __u8 kind)
{
	struct sluice_way *way = &s->way[WAY(w)];
	__u64 *tatp = &s->tat[WAY(w)], tat, next;
	__u64 owed = fleet_owed(op, kind);
	int i, fresh = 0;

	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (kind != SLUICE_METER_GCRA)
			next = slot_next_of(op, tat, kind);
		if (kind == SLUICE_METER_GCRA
			    ? !gcra_conforms_owing(tat, op->now, op->cost, op->limit, owed, &next)
			    : !next) {
			if (!way_owned(s, w, op))
				return TABLE_MISSING;
			/*
			 * GCRA debt past one burst (a policy change) is capped once, for
			 * good; past what a fleet may owe, with an agent.
			 */
			next = kind == SLUICE_METER_GCRA
				       ? gcra_refused(tat, op->now, op->limit + owed)
				       : tat;
			/* Never lower a TAT from a stale clock (bucket.h, clock_refresh). */
			if (next != tat && !fresh) {
				op->now = clock_refresh(op->now);
				fresh = 1;
				continue;
			}
			if (next != tat && __sync_val_compare_and_swap(tatp, tat, next) != tat)
				continue;
			way_count(way, 0, 1 + op->pending);
			op->over_tat = next;
			return METER_OVER;
		}
		if (__sync_val_compare_and_swap(tatp, tat, next) != tat)
			continue;
		if (!way_owned(s, w, op)) {
			/* Charged to the way's next owner: give it back. */
			way_uncharge(tatp, tat, next, op, kind);
			return TABLE_MISSING;
		}
		op->stepped_from = tat;
		way_count(way, 1, op->pending);
		if (owed)
			fleet_note(way, op);
		return METER_CONFORMS;
	}
	/* Never admit what we could not account for. */
	way_count(way, 0, 1 + op->pending);
	return METER_CONTENDED;
}

/* table_meter's body for one kind of slot. */
static __always_inline int table_meter_kind(struct table_op *op, __u8 kind)
{
	struct sluice_set *s;
	int ret = TABLE_MISSING;
	__u32 w;
	int i;

	/* Unrolled: as a loop, one path through both sets is too many jumps for the verifier. */
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (ret != TABLE_MISSING)
			break;
		s = table_set(op, i);
		if (!s)
			continue;
		w = set_find(s, op->tag, &op->key);
		if (w != WAY_NONE)
			ret = way_meter(s, w, op, kind);
	}
	return ret;
}

/*
 * One global function per kind of slot, each with its arithmetic inline:
 * a packet makes one call whatever its algorithm (a second call, into the
 * window arithmetic, cost a window ~8 ns more than GCRA), and the verifier
 * checks each on its own, not every kind on every path.
 */
__attribute__((noinline)) int table_meter_gcra(struct table_op *op)
{
	return op ? table_meter_kind(op, SLUICE_METER_GCRA) : TABLE_MISSING;
}

__attribute__((noinline)) int table_meter_fixed(struct table_op *op)
{
	return op ? table_meter_kind(op, SLUICE_METER_FIXED_WINDOW) : TABLE_MISSING;
}

__attribute__((noinline)) int table_meter_sliding(struct table_op *op)
{
	return op ? table_meter_kind(op, SLUICE_METER_SLIDING_WINDOW) : TABLE_MISSING;
}

__attribute__((noinline)) int table_meter_warmup(struct table_op *op)
{
	return op ? table_meter_kind(op, SLUICE_METER_WARMUP) : TABLE_MISSING;
}

/*
 * Meters the key's bucket with op->cost, adding op->pending to its count:
 * METER_CONFORMS, METER_OVER (with op->over_tat), METER_CONTENDED, or
 * TABLE_MISSING.
 */
static __always_inline int table_meter(struct table_op *op)
{
	switch (op->kind) {
	case SLUICE_METER_FIXED_WINDOW:
		return table_meter_fixed(op);
	case SLUICE_METER_SLIDING_WINDOW:
		return table_meter_sliding(op);
	case SLUICE_METER_WARMUP:
		return table_meter_warmup(op);
	}
	return table_meter_gcra(op);
}

/*
 * Gives way w of locked set s, empty or idle, to the op's key: clears its
 * tag, replaces the idle TAT it saw unless a meter step got there first,
 * then writes the key and counts and publishes the new tag.
 */
static __always_inline int way_take(struct sluice_set *s, __u32 w, struct table_op *op)
{
	__u32 old_tag = s->tag[WAY(w)];
	__u64 seen = *(volatile __u64 *)&s->tat[WAY(w)];
	struct sluice_way *way;

	/* A meter step may have charged it since set_victim looked. */
	if (old_tag && seen > op->now)
		return TABLE_FULL;
	__sync_lock_test_and_set(&s->tag[WAY(w)], 0);
	if (__sync_val_compare_and_swap(&s->tat[WAY(w)], seen, op->fresh.tat) != seen) {
		/* Its source came back: the bucket holds state again. */
		__sync_lock_test_and_set(&s->tag[WAY(w)], old_tag);
		return TABLE_FULL;
	}
	way = &s->way[WAY(w)];
	way->key = op->key;
	way->passed = op->fresh.passed;
	way->dropped = op->fresh.dropped;
	__sync_lock_test_and_set(&s->tag[WAY(w)], op->tag);
	return old_tag ? TABLE_REPLACED : TABLE_NEW;
}

/*
 * Gives the key a way of set s holding op->fresh: TABLE_NEW,
 * TABLE_REPLACED, TABLE_FULL, or TABLE_EXISTS with *found the way another
 * CPU gave it first.
 */
static __always_inline int set_insert(struct sluice_set *s, struct table_op *op, __u32 *found)
{
	int ret = TABLE_FULL;
	__u32 w;

	bpf_spin_lock(&s->lock);
	*found = set_find(s, op->tag, &op->key);
	if (*found != WAY_NONE) {
		ret = TABLE_EXISTS;
		goto out;
	}
	w = set_victim(s, op->now);
	if (w != WAY_NONE)
		ret = way_take(s, w, op);
out:
	bpf_spin_unlock(&s->lock);
	return ret;
}

/*
 * The same in the emptier of the key's two sets, else in the other:
 * TABLE_NEW, TABLE_REPLACED, TABLE_FULL or TABLE_EXISTS.
 */
__attribute__((noinline)) int table_insert(struct table_op *op)
{
	struct sluice_set *first, *second, *swap;
	__u32 found;
	int ret;

	if (!op)
		return TABLE_FULL;
	first = table_set(op, 0);
	second = table_set(op, 1);
	if (!first || !second)
		return TABLE_FULL;
	if (set_room(second, op->now) > set_room(first, op->now)) {
		swap = first;
		first = second;
		second = swap;
	}
	ret = set_insert(first, op, &found);
	if (ret == TABLE_FULL && op->set[0] != op->set[1]) {
		first = second;
		ret = set_insert(first, op, &found);
	}
	return ret;
}

/*
 * table_insert, and when another CPU gave the key a way first, a meter
 * step there: METER_CONFORMS or METER_OVER, or TABLE_MISSING if that way
 * changed hands again. Metered by a second call rather than inside the
 * insert, so no call chain holds both the insert's frame and a slot
 * step's (the verifier's 512-byte stack covers the whole chain).
 */
static __always_inline int table_insert_or_meter(struct table_op *op)
{
	int ret = table_insert(op);

	return ret == TABLE_EXISTS ? table_meter(op) : ret;
}

/*
 * The set holding the key's bucket, with *w its way, or NULL: a plain
 * lookup, for steps that need no second try when a way changes hands.
 */
static __always_inline struct sluice_set *table_find(struct table_op *op, __u32 *w)
{
	struct sluice_set *s;
	int i;

	for (i = 0; i < 2; i++) {
		s = table_set(op, i);
		if (!s)
			continue;
		*w = set_find(s, op->tag, &op->key);
		if (*w != WAY_NONE)
			return s;
	}
	return NULL;
}

/* Adds op->pending refusals to the key's bucket, if it still has one. */
__attribute__((noinline)) int table_add_dropped(struct table_op *op)
{
	struct sluice_set *s;
	__u32 w;

	if (!op)
		return 0;
	s = table_find(op, &w);
	if (!s)
		return 0;
	way_count(&s->way[WAY(w)], 0, op->pending);
	return 1;
}

/* A refund contended this often in a row is abandoned (the bucket stays charged). */
#define REFUND_CAS_TRIES 64

/*
 * Gives cost back to a shared TAT by compare-and-swap, never below now: a
 * TAT in the past is a full bucket already, so a refund gives back at most
 * what the bucket lacks, and never wraps. Returns what it gave (0: nothing
 * lacked, or contended throughout: the bucket stays charged, stricter).
 */
static __always_inline __u64 tat_refund(__u64 *tatp, __u64 now, __u64 cost)
{
	__u64 tat, next;
	int i;

	for (i = 0; i < REFUND_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (tat <= now)
			return 0;
		next = tat - now > cost ? tat - cost : now;
		if (__sync_val_compare_and_swap(tatp, tat, next) == tat)
			return tat - next;
	}
	return 0;
}

/*
 * Gives op->cost back to a source's slot by compare-and-swap, as its
 * algorithm allows (slot_refunded). Returns what it gave, 0 as tat_refund.
 */
static __always_inline __u64 slot_refund(__u64 *slotp, const struct table_op *op)
{
	__u64 slot, next;
	int i;

	/*
	 * A warm-up's step cannot be subtracted (what a permit cost depends on
	 * what was stored): it is undone whole, if nothing stepped since. The
	 * step is recomputed from the slot it started at, with the same now
	 * and cost; else the source keeps it, stricter.
	 */
	if (op->kind == SLUICE_METER_WARMUP) {
		next = slot_step(op, op->stepped_from);
		return next && __sync_val_compare_and_swap(slotp, next, op->stepped_from) == next
			       ? next - op->stepped_from
			       : 0;
	}

	for (i = 0; i < REFUND_CAS_TRIES; i++) {
		slot = *(volatile __u64 *)slotp;
		next = slot_given_back(op, slot);
		if (next == slot)
			return 0;
		if (__sync_val_compare_and_swap(slotp, slot, next) == slot)
			return slot - next;
	}
	return 0;
}

/*
 * Gives op->cost back to way w of set s, without the lock, and moves the
 * packet from the way's passed count to its dropped count. If the way
 * changed hands meanwhile, what the refund gave its next owner is taken
 * back. Returns 1 when the way still held the key.
 */
static __always_inline int way_refund(struct sluice_set *s, __u32 w, struct table_op *op)
{
	struct sluice_way *way = &s->way[WAY(w)];
	__u64 given = slot_refund(&s->tat[WAY(w)], op);

	if (!way_owned(s, w, op)) {
		if (given)
			__sync_fetch_and_add(&s->tat[WAY(w)], given);
		return 0;
	}
	__sync_fetch_and_sub(&way->passed, 1);
	way_count(way, 0, 1);
	return 1;
}

/*
 * Gives op->cost back to the key's bucket, found by key and tag: a refund
 * never lands on another key's bucket, even when the way it was taken from
 * has changed hands since. 1 when it found the key's bucket, else 0.
 */
__attribute__((noinline)) int table_refund(struct table_op *op)
{
	struct sluice_set *s;
	__u32 w;

	if (!op)
		return 0;
	s = table_find(op, &w);
	return s ? way_refund(s, w, op) : 0;
}

/*
 * The fleet's sync step (bpf/fleet.h) on the key's bucket, with the same
 * compare-and-swap metering uses: READ fills op->fresh (passed, and the
 * TAT ahead of now in tat); ADVANCE moves the TAT to at least now + arg,
 * never back; CHARGE adds arg to it, from now at the earliest. Fleet debt
 * may run past the burst (gcra_conforms_owing keeps it). Returns 1 when
 * the key has a bucket, else 0.
 */
__attribute__((noinline)) int table_fleet_step(struct table_op *op, __u32 fleet_op, __u64 arg)
{
	struct sluice_set *s;
	__u64 *tatp, tat, next;
	__u32 w;
	int i;

	if (!op)
		return 0;
	s = table_find(op, &w);
	if (!s)
		return 0;
	tatp = &s->tat[WAY(w)];
	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (fleet_op == SLUICE_FLEET_ADVANCE)
			next = tat > op->now + arg ? tat : op->now + arg;
		else if (fleet_op == SLUICE_FLEET_CHARGE)
			next = (tat > op->now ? tat : op->now) + arg;
		else
			next = tat;
		if (next == tat || __sync_val_compare_and_swap(tatp, tat, next) == tat)
			break;
	}
	if (!way_owned(s, w, op)) {
		/* Changed hands meanwhile: not this key's to move. */
		if (next != tat)
			__sync_val_compare_and_swap(tatp, next, tat);
		return 0;
	}
	op->fresh.passed = s->way[WAY(w)].passed;
	op->fresh.tat = next > op->now ? next - op->now : 0;
	return 1;
}

#endif /* SLUICE_BPF_TABLE_H */
