/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The set tables (struct sluice_set in sluice.h): finding and metering a
 * key's bucket in its two sets, giving a new key a way, and giving back
 * what a refused packet took. Two tables share this code: the source table
 * (map `buckets`) and the aggregate table (map `aggregates`); the op says
 * which.
 *
 * Metering takes no lock: it finds the way by tag and ext (and, for a
 * paired key, the key way after it), and advances its TAT by
 * compare-and-swap, like every other bucket. Giving a way to a new source
 * takes the set's spin lock, so two sources never race for one way;
 * nothing in the locked section calls a helper. A way changes hands in an
 * order metering can check: its tag is cleared (atomically, a full
 * barrier), its TAT replaced by compare-and-swap only if it is still the
 * idle value seen, then its counts, ext and key way written, then the new
 * tag set. A meter step that advanced a TAT re-reads the tag, ext and key
 * way: if the way changed hands meanwhile, it gives the cost back and
 * finds no bucket.
 *
 * The operations, and the searches of a set (set_find, set_victim), are
 * global functions, so the verifier checks each once on its own instead of
 * once for every path (and every way) that reaches it; BPF functions take
 * at most five arguments, hence struct table_op. The searches read the
 * set without its lock, since no call is allowed under one.
 *
 * A lookup tries the first set, then the second. Two CPUs inserting the
 * same brand-new source at the same moment could each give it a way; the
 * one lookups find first then serves the source and the other idles out.
 * Flow hashing sends one source's packets to one CPU, so in practice this
 * needs a source to spread over queues on its very first packets.
 */
#ifndef SLUICE_BPF_TABLE_H
#define SLUICE_BPF_TABLE_H

#include <linux/errno.h> /* not glibc's: -target bpf would pull in its 32-bit stubs */
#include "bucket.h"
#include "slot.h"
#include "maps.h"
#include "table_hash.h"

#define WAY_NONE SLUICE_SET_WAYS

/*
 * A way index bounded for the verifier, which may have lost track of it
 * across merged paths; in asm, so the compiler cannot drop the check.
 */
static __always_inline __u32 WAY(__u32 w)
{
	asm volatile("if %[w] < %[n] goto +1; %[w] = 0" : [w] "+r"(w) : [n] "i"(SLUICE_SET_WAYS));
	return w;
}

/* A key way's TAT: later than any now, so no step, room count or victim choice takes it. */
#define KEY_WAY_TAT ((1ULL << 63) - 1)

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
	__u32 tag;    /* its way's tag in set[i] is tag | i (table_place) */
	__u32 set[2]; /* its two sets (maybe the same) */
	__u8 ext;     /* its way's ext; SLUICE_EXT_PAIRED: the key is in a key way */
	__u8 table;   /* enum table_id */
	__u8 charged; /* meter.h: what a passed packet was charged, to give back */
	/* How the bucket's slot is metered (include/slot.h): GCRA for aggregates. */
	__u8 kind;
	__u8 bits;
	__u32 window; /* windows: W in milliseconds; warm-up: permits stored at most */
	/* now is a moment before the packet, not a reading (way_over_by_jiffies) */
	__u8 now_floor;
	__u64 now;
	__u64 early; /* the early clock once read (clock_early), else 0 */
	__u64 cost;  /* of this packet, for meter and insert */
	__u64 limit;
	__u64 pending;		    /* earlier refusals to add to the bucket's count */
	__u64 over_tat;		    /* out: the TAT that refused the packet */
	__u64 stepped_from;	    /* out: the slot a passed packet's step started from */
	__u64 stepped_to;	    /* out: and the slot it left */
	struct sluice_bucket fresh; /* insert: the new bucket */
};

_Static_assert(sizeof(struct table_op) <= SCRATCH_BYTES, "scratch too small");

/*
 * This CPU's table op for the source's bucket (scratch entry): off the
 * stack, whose 512 bytes (Linux 6.1 counts each frame rounded up to 32)
 * the main program shares with the aggregate steps, the table operations
 * and the set searches they call.
 */
static __always_inline struct table_op *scratch_op(__u32 entry)
{
	return bpf_map_lookup_elem(&scratch, &entry);
}

/* Places key in a table of `sets` sets, hashed with the configuration's seeds. */
static __always_inline void table_op_place(struct table_op *op, const struct sluice_config *cfg,
					   const struct sluice_key *key, __u8 table, __u32 sets)
{
	struct table_place pl;

	table_place(&pl, key, cfg->table_seed, sets);
	op->key = *key;
	op->tag = pl.tag;
	op->ext = pl.ext;
	op->set[0] = pl.set[0];
	op->set[1] = pl.set[1];
	op->table = table;
	op->charged = 0;
	op->kind = SLUICE_METER_GCRA;
	op->pending = 0;
	op->over_tat = 0;
	op->stepped_from = 0; /* a new way's slot starts from 0 */
	op->early = 0;
}

/* An op on a source's bucket. */
static __always_inline void table_op_init(struct table_op *op, const struct sluice_config *cfg,
					  const struct sluice_key *key)
{
	table_op_place(op, cfg, key, TABLE_SOURCES, cfg->table_sets);
}

/* This CPU's over-limit cache (NULL when it has none); its head keeps the jiffy reference. */
static __always_inline struct sluice_hot *hot_cpu(void)
{
	__u32 cpu = bpf_get_smp_processor_id();

	return bpf_map_lookup_elem(&hot, &cpu);
}

/* The op's meter time: a reading made before it (0: none yet, read on first use). */
static __always_inline void table_op_at(struct table_op *op, __u64 now)
{
	op->now = now;
	op->now_floor = 0;
}

/* Whether the op's now is a precise reading (not 0, nor a moment before it: now_floor). */
static __always_inline int op_has_reading(const struct table_op *op)
{
	return op->now && !op->now_floor;
}

/*
 * The op's meter time, read when first needed: the read waits for every
 * load before it (rdtsc is ordered), so it comes after the loads that
 * decide whether it is needed at all (the cache's line, the filter's
 * words) are under way together, rather than between them. The reading
 * becomes this CPU's jiffy reference once a tick (clock_ref_note).
 */
static __always_inline void table_op_clock(struct table_op *op)
{
	struct sluice_hot *c;

	if (op_has_reading(op))
		return;
	op->now = clock_now();
	op->now_floor = 0;
	c = hot_cpu();
	if (c)
		clock_ref_note(&c->head, op->now);
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

/*
 * The source table's filter (map `buckets_filter`): a word per set with
 * table_filter_bits() of each bucket way's tag. Only the holder of a set's
 * lock writes its word: it sets a new tag's bits before publishing the tag,
 * and recomputes the word from the set's tags once the way has changed
 * hands (set_insert). So the word has the bits of every tag a reader can
 * find, and a key with a bit clear in each of its sets' words has no
 * bucket. The aggregate table has no filter (NULL).
 */
static __always_inline __u32 *table_filter_word(const struct table_op *op, int i)
{
	__u32 set = op->set[i & 1], index = set / SLUICE_FILTER_SETS;
	struct sluice_filter *f;

	if (op->table != TABLE_SOURCES)
		return NULL;
	f = bpf_map_lookup_elem(&buckets_filter, &index);
	return f ? &f->mask[set % SLUICE_FILTER_SETS] : NULL;
}

/* A mask of the op's sets, bit i for set i (table_may_hold, table_touch): both of them. */
#define TABLE_BOTH_SETS 3

/* Which of the op's sets may hold its key: bit i for set i (both, without a filter). */
static __always_inline int table_may_hold(const struct table_op *op)
{
	__u32 bits = table_filter_bits(op->tag);
	__u32 *first = table_filter_word(op, 0), *second = table_filter_word(op, 1);

	return (!first || (*first & bits) == bits) | (!second || (*second & bits) == bits) << 1;
}

/*
 * A set's filter word from its ways, without a branch: the bits of each
 * bucket way (tag bit 31 set; a key way's ext is SLUICE_EXT_KEY, which
 * (ext + 1) >> 8 picks out).
 */
static __always_inline __u32 set_filter_of(const struct sluice_ways *ws)
{
	__u32 mask = 0, tag, bucket, w;

#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++) {
		tag = ws->tag[w];
		bucket = (tag >> 31) & (((ws->ext[w] + 1U) >> 8) ^ 1U);
		mask |= table_filter_bits(tag) & -bucket;
	}
	return mask;
}

/* Whether two keys are the same (the over-limit cache's, too). */
static __always_inline int key_same(const struct sluice_key *a, const struct sluice_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3] && x[4] == y[4];
}

static __always_inline int op_paired(const struct table_op *op)
{
	return op->ext & SLUICE_EXT_PAIRED;
}

/* Whether way k (odd) is the key way of the op's key: its head as tag, its address as count. */
static __always_inline int key_way_holds(const struct sluice_ways *ws, __u32 k,
					 const struct table_op *op)
{
	const struct sluice_key_way *kw = (const void *)&ws->count[WAY(k)];

	return ws->ext[WAY(k)] == SLUICE_EXT_KEY && ws->tag[WAY(k)] == *(const __u32 *)&op->key &&
	       kw->addr[0] == op->key.addr[0] && kw->addr[1] == op->key.addr[1] &&
	       kw->addr[2] == op->key.addr[2] && kw->addr[3] == op->key.addr[3];
}

/*
 * The way holding the key in a set, its set i, or WAY_NONE: for an inline
 * key the tag and ext are the key; a paired one lives in an even way and
 * is confirmed by the key way after it. Read without the lock: a way
 * changing hands at that moment may be missed, which the callers' checks
 * absorb. A global function, so the verifier checks the search once, and
 * its callers see one way index rather than a path for each way.
 */
__attribute__((noinline)) __u32 set_find(const struct sluice_ways *ws, int i,
					 const struct table_op *op)
{
	__u32 tag, w;

	if (!ws || !op)
		return WAY_NONE;
	tag = op->tag | (__u32)i;
	if (!op_paired(op)) {
#pragma unroll
		for (w = 0; w < SLUICE_SET_WAYS; w++)
			if (ws->tag[w] == tag && ws->ext[w] == op->ext)
				return w;
		return WAY_NONE;
	}
#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w += 2)
		if (ws->tag[w] == tag && ws->ext[w] == op->ext && key_way_holds(ws, w + 1, op))
			return w;
	return WAY_NONE;
}

/* Whether way w may go to a new source: empty, or its bucket refilled (a key way never is). */
static __always_inline int way_free(const struct sluice_ways *ws, __u32 w, __u64 now)
{
	return !ws->tag[WAY(w)] || ws->tat[WAY(w)] <= now;
}

/*
 * The way a new source may take: an empty one, else the one idle longest
 * if its bucket has refilled (TAT not after now), else WAY_NONE; for a
 * paired key, an even way with the one after it (a key way goes with the
 * bucket before it). Read without the lock, a global function as
 * set_find: the way is taken under the lock only if it is still free
 * (way_take, pair_take).
 */
__attribute__((noinline)) __u32 set_victim(const struct sluice_ways *ws, __u64 now, int paired)
{
	__u64 oldest = now + 1, age;
	__u32 w, victim = WAY_NONE;

	if (!ws)
		return WAY_NONE;
	if (!paired) {
#pragma nounroll
		for (w = 0; w < SLUICE_SET_WAYS; w++) {
			if (!ws->tag[w])
				return w;
			if (ws->tat[w] < oldest) {
				oldest = ws->tat[w];
				victim = w;
			}
		}
		return victim;
	}
#pragma nounroll
	for (w = 0; w < SLUICE_SET_WAYS; w += 2) {
		if (!way_free(ws, w, now) ||
		    !(way_free(ws, w + 1, now) || ws->ext[w + 1] == SLUICE_EXT_KEY))
			continue;
		if (!ws->tag[w] && !ws->tag[w + 1])
			return w;
		age = ws->tag[w] ? ws->tat[w] : 0;
		if (ws->tag[w + 1] && ws->ext[w + 1] != SLUICE_EXT_KEY && ws->tat[w + 1] > age)
			age = ws->tat[w + 1];
		if (age < oldest) {
			oldest = age;
			victim = w;
		}
	}
	return victim;
}

/* set_room: an empty way outweighs every refilled one a set can hold. */
#define ROOM_EMPTY_WEIGHT (SLUICE_SET_WAYS + 1)

/*
 * The room a new source finds in a set, a hint read unlocked: its empty
 * ways first, then the ways it could take now (idle and refilled, empty
 * ones included: their TAT is 0); 0 when it has none. Empty ways come
 * first: forgetting a refilled bucket loses nothing of its meter, but its
 * source, likely still sending, then needs a new bucket, and with it the
 * new-source budget that a flood may have spent. Branch-free: (now - tat)
 * >> 63 is 1 exactly when tat is after now (times are far below 2^63), and
 * (tag - 1) >> 63 exactly when the tag is 0.
 */
__attribute__((noinline)) __u32 set_room(const struct sluice_ways *ws, __u64 now)
{
	__u64 free = SLUICE_SET_WAYS, empty = 0;
	__u32 w;

	if (!ws)
		return 0;
#pragma unroll
	for (w = 0; w < SLUICE_SET_WAYS; w++) {
		free -= (now - ws->tat[w]) >> 63;
		empty += ((__u64)ws->tag[w] - 1) >> 63;
	}
	return (__u32)(empty * ROOM_EMPTY_WEIGHT + free);
}

/*
 * Whether way w of set s, the op's set i, still holds the op's key: read
 * after the TAT, whose changes it fences.
 */
static __always_inline int way_owned(const struct sluice_set *s, int i, __u32 w,
				     const struct table_op *op)
{
	return *(volatile const __u32 *)&s->ways.tag[WAY(w)] == (op->tag | (__u32)i) &&
	       s->ways.ext[WAY(w)] == op->ext &&
	       (!op_paired(op) || key_way_holds(&s->ways, WAY(w) | 1, op));
}

/*
 * The op's pending refusals, plus this packet when over, to the way's count.
 * Not exact if the way changes hands between way_owned() and here (its
 * source returning just as its idle way is given away): then these land on
 * the next owner's count, or are overwritten. README "Known limits".
 */
static __always_inline void way_count(struct sluice_count *count, __u64 passed, __u64 dropped)
{
	if (passed)
		__sync_fetch_and_add(&count->passed, passed);
	if (dropped)
		__sync_fetch_and_add(&count->dropped, dropped);
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
 * Counts a passed packet into its way's usage this period (map
 * `fleet_usage`, a word per way), and hands the source to the agent when
 * that crosses its share. A plain update: two CPUs racing may lose a
 * packet's units, which only delays a hint.
 */
__attribute__((noinline)) int fleet_note(const struct sluice_count *count, __u32 set, __u32 w,
					 const struct table_op *op)
{
	struct sluice_fleet_candidate *c;
	struct sluice_fleet_usage *set_usage;
	__u32 tag, used, was, v, *usage;

	if (!count || !op)
		return 0;
	set_usage = bpf_map_lookup_elem(&fleet_usage, &set);
	if (!set_usage)
		return 0;
	usage = &set_usage->way[WAY(w)];
	tag = (__u32)(op->now >> (fleet_hint.period_shift & 63)) & 0xff;
	v = *usage;
	was = v >> 24 == tag ? v & 0xffffff : 0;
	used = was + (__u32)(op->cost >> (fleet_hint.cost_shift & 63)) + 1;
	if (used > 0xffffff || used < was)
		used = 0xffffff;
	*usage = tag << 24 | used;
	if (was >= fleet_hint.share_units || used < fleet_hint.share_units)
		return 0;
	c = bpf_ringbuf_reserve(&fleet_ring, sizeof(*c), 0);
	if (!c)
		return 0;
	c->key = op->key;
	c->units = used;
	c->passed = count->passed;
	c->cost = op->cost;
	bpf_ringbuf_submit(c, 0);
	return 1;
}

/* way_try: the TAT moved under the step; try again. */
#define WAY_RETRY (-1)

/*
 * One try of a meter step on way w of set s, the op's set i: a result of
 * way_meter, or WAY_RETRY. A function of its own, so that way_meter's loop
 * is only "try, then again": the loop's one way back is then its
 * conditional jump, which Linux 6.1 requires (it refuses a loop closed by
 * falling through into its first instruction, a layout the compiler chose
 * for the longer loop; tests/build/bpf_linux61.py checks every loop).
 */
static __always_inline int way_try(struct sluice_set *s, int i, __u32 w, struct table_op *op,
				   __u8 kind, __u64 owed, int *fresh)
{
	struct sluice_count *way = &s->ways.count[WAY(w)];
	__u64 *tatp = &s->ways.tat[WAY(w)], tat, next;

	tat = *(volatile __u64 *)tatp;
	if (kind != SLUICE_METER_GCRA)
		next = slot_next_of(op, tat, kind);
	if (kind == SLUICE_METER_GCRA
		    ? !gcra_conforms_owing(tat, op->now, op->cost, op->limit, owed, &next)
		    : !next) {
		if (!way_owned(s, i, w, op))
			return TABLE_MISSING;
		/*
		 * GCRA debt past one burst (a policy change) is capped once, for
		 * good; past what a fleet may owe, with an agent.
		 */
		next = kind == SLUICE_METER_GCRA ? gcra_refused(tat, op->now, op->limit + owed)
						 : tat;
		/* Never lower a TAT from a stale clock (bucket.h, clock_refresh). */
		if (next != tat && !*fresh) {
			op->now = clock_refresh(op->now);
			*fresh = 1;
			return WAY_RETRY;
		}
		if (next != tat && __sync_val_compare_and_swap(tatp, tat, next) != tat)
			return WAY_RETRY;
		way_count(way, 0, 1 + op->pending);
		op->over_tat = next;
		return METER_OVER;
	}
	if (__sync_val_compare_and_swap(tatp, tat, next) != tat)
		return WAY_RETRY;
	if (!way_owned(s, i, w, op)) {
		/* Charged to the way's next owner: give it back. */
		way_uncharge(tatp, tat, next, op, kind);
		return TABLE_MISSING;
	}
	op->stepped_from = tat;
	op->stepped_to = next;
	way_count(way, 1, op->pending);
	if (owed)
		fleet_note(way, op->set[i & 1], w, op);
	return METER_CONFORMS;
}

/*
 * A refusal that jiffies make certain, taken before the clock, the largest
 * cost of a step: the moment the TAT lets this packet conform is ticks
 * past this CPU's reference moment (clock_jiffy_bound), as it is for a
 * source at a low rate past its burst. The reference is no later than now,
 * so a TAT within a burst of it carries no debt to cap; a deeper one (a
 * policy change), or one a live fleet may owe past the burst, leaves the
 * decision to the clock. The op's now is then the reference, a moment
 * before the packet (now_floor), which is all a refusal's cache entry
 * needs. METER_OVER, TABLE_MISSING, or WAY_RETRY when not certain.
 */
static __always_inline int way_over_by_jiffies(struct sluice_set *s, int i, __u32 w,
					       struct table_op *op)
{
	__u64 tat = *(volatile __u64 *)&s->ways.tat[WAY(w)];
	struct sluice_hot *c = hot_cpu();
	__u64 ref;

	if (!c)
		return WAY_RETRY;
	ref = c->head.ref_now;
	if (!ref || ref < fleet_hint.live_until || tat > ref + op->limit ||
	    tat + op->cost <= op->limit)
		return WAY_RETRY;
	if (clock_jiffies() >= clock_jiffy_bound(&c->head, tat + op->cost - op->limit))
		return WAY_RETRY;
	if (!way_owned(s, i, w, op))
		return TABLE_MISSING;
	way_count(&s->ways.count[WAY(w)], 0, 1 + op->pending);
	op->over_tat = tat;
	op->now = ref;
	op->now_floor = 1;
	return METER_OVER;
}

/*
 * One meter step on way w of set s, the op's set i, without the lock:
 * METER_CONFORMS, METER_OVER (op->over_tat: the TAT the refusal left),
 * METER_CONTENDED, or TABLE_MISSING when the way changed hands under it.
 * kind is op->kind, as a constant (table_meter_kind).
 */
static __always_inline int way_meter(struct sluice_set *s, int i, __u32 w, struct table_op *op,
				     __u8 kind)
{
	__u64 owed;
	int tries, fresh = 0, ret;

	if (kind == SLUICE_METER_GCRA && !op->now) {
		ret = way_over_by_jiffies(s, i, w, op);
		if (ret != WAY_RETRY)
			return ret;
	}
	table_op_clock(op);
	owed = fleet_owed(op, kind);

	for (tries = 0; tries < METER_CAS_TRIES; tries++) {
		ret = way_try(s, i, w, op, kind, owed, &fresh);
		if (ret != WAY_RETRY)
			return ret;
	}
	/* Never admit what we could not account for. */
	way_count(&s->ways.count[WAY(w)], 0, 1 + op->pending);
	return METER_CONTENDED;
}

/*
 * Loads a byte of each of a set's six lines, and drops it. BPF has no
 * prefetch instruction, but nothing waits for these loads: the cache
 * misses of the lines a meter step or an insert reads next (tags, then a
 * TAT and a count) overlap, rather than following one another.
 */
static __always_inline void set_touch(const struct sluice_set *s)
{
	asm volatile("r0 = *(u8 *)(%[s] + 0)\n"
		     "r0 = *(u8 *)(%[s] + 64)\n"
		     "r0 = *(u8 *)(%[s] + 128)\n"
		     "r0 = *(u8 *)(%[s] + 192)\n"
		     "r0 = *(u8 *)(%[s] + 256)\n"
		     "r0 = *(u8 *)(%[s] + 320)\n" ::[s] "r"(s)
		     : "r0");
}

_Static_assert(sizeof(struct sluice_set) == 6 * 64, "set_touch touches six lines");

/*
 * The op's sets in mask `which` (bit i: set i), touched (set_touch). The
 * search looks them up again: the array lookups are inline, and carrying
 * both pointers across the search costs the verifier a fifth more states.
 */
static __always_inline void table_touch(const struct table_op *op, int which)
{
	struct sluice_set *s;

	if (which & 1) {
		s = table_set(op, 0);
		if (s)
			set_touch(s);
	}
	if (which & 2) {
		s = table_set(op, 1);
		if (s)
			set_touch(s);
	}
}

/*
 * Whether a set in mask `may` holds op's key, found as table_meter finds
 * it: for an inline key its sets' tag lines alone (line 0: tags and ext),
 * for a paired one its key way's line too.
 */
static __always_inline int table_holds(const struct table_op *op, int may)
{
	struct sluice_set *s;
	int i;

#pragma unroll
	for (i = 0; i < 2; i++) {
		if (!(may & (1 << i)))
			continue;
		s = table_set(op, i);
		if (s && set_find(&s->ways, i, op) < WAY_NONE)
			return 1;
	}
	return 0;
}

/* table_meter's body for one kind of slot. */
static __always_inline int table_meter_kind(struct table_op *op, __u8 kind)
{
	int may = table_may_hold(op), ret = TABLE_MISSING;
	struct sluice_set *s;
	__u32 w;
	int i;

	/* A source the filter does not know: no line of the table is read. */
	if (!may)
		return TABLE_MISSING;
	/*
	 * Only the sets the filter leaves: a known source's bucket is in one,
	 * and the other's six lines would hold up retirement as long as its
	 * own. An insert touches both itself.
	 */
	table_touch(op, may);
	/* Unrolled: as a loop, one path through both sets is too many jumps for the verifier. */
#pragma unroll
	for (i = 0; i < 2; i++) {
		if (ret != TABLE_MISSING)
			break;
		if (!(may & (1 << i)))
			continue;
		s = table_set(op, i);
		if (!s)
			continue;
		w = set_find(&s->ways, i, op);
		if (w < WAY_NONE)
			ret = way_meter(s, i, w, op, kind);
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

/* Gives key way k back, with the bucket before it gone: empty, so any key may take it. */
static __always_inline void key_way_release(struct sluice_set *s, __u32 k)
{
	__sync_lock_test_and_set(&s->ways.tag[WAY(k)], 0);
	s->ways.ext[WAY(k)] = 0;
	s->ways.tat[WAY(k)] = 0;
}

/* Writes the op's key into key way k, whose tag is clear. */
static __always_inline void key_way_write(struct sluice_set *s, __u32 k, const struct table_op *op)
{
	struct sluice_key_way *kw = (void *)&s->ways.count[WAY(k)];

	kw->addr[0] = op->key.addr[0];
	kw->addr[1] = op->key.addr[1];
	kw->addr[2] = op->key.addr[2];
	kw->addr[3] = op->key.addr[3];
	s->ways.ext[WAY(k)] = SLUICE_EXT_KEY;
	__sync_lock_test_and_set(&s->ways.tag[WAY(k)], *(const __u32 *)&op->key);
}

/*
 * Way w's TAT, seen idle, replaced by the new bucket's unless a meter step
 * got there first; then its counts and ext, and (published last) its tag.
 */
static __always_inline int way_fill(struct sluice_set *s, __u32 w, __u64 seen,
				    const struct table_op *op)
{
	struct sluice_count *count = &s->ways.count[WAY(w)];

	if (__sync_val_compare_and_swap(&s->ways.tat[WAY(w)], seen, op->fresh.tat) != seen)
		return 0;
	count->passed = op->fresh.passed;
	count->dropped = op->fresh.dropped;
	s->ways.ext[WAY(w)] = op->ext;
	return 1;
}

/*
 * Gives way w of locked set s (the op's set i), empty or idle, to an
 * inline key: clears its tag, replaces the idle TAT it saw unless a meter
 * step got there first, then writes the rest and publishes the new tag. A
 * paired bucket given away this way takes its key way with it.
 */
static __always_inline int way_take(struct sluice_set *s, int i, __u32 w, struct table_op *op)
{
	__u32 old_tag = s->ways.tag[WAY(w)];
	__u64 seen = *(volatile __u64 *)&s->ways.tat[WAY(w)];
	int had_key_way = old_tag && (s->ways.ext[WAY(w)] & SLUICE_EXT_PAIRED) && !(w & 1);

	/* A meter step may have charged it since set_victim looked. */
	if (old_tag && seen > op->now)
		return TABLE_FULL;
	__sync_lock_test_and_set(&s->ways.tag[WAY(w)], 0);
	if (!way_fill(s, w, seen, op)) {
		/* Its source came back: the bucket holds state again. */
		__sync_lock_test_and_set(&s->ways.tag[WAY(w)], old_tag);
		return TABLE_FULL;
	}
	if (had_key_way)
		key_way_release(s, w + 1);
	__sync_lock_test_and_set(&s->ways.tag[WAY(w)], op->tag | (__u32)i);
	return old_tag ? TABLE_REPLACED : TABLE_NEW;
}

/*
 * The same for a paired key, in ways w (even) and w + 1: both tags
 * cleared, the second way's TAT (unless it is already the key way of the
 * bucket in w) and then the first's replaced by compare-and-swap, each
 * only if still idle; then the key way written, then the bucket's tag.
 */
static __always_inline int pair_take(struct sluice_set *s, int i, __u32 w, struct table_op *op)
{
	__u32 old_tag = s->ways.tag[WAY(w)], old_key_tag = s->ways.tag[WAY(w + 1)];
	__u64 seen = *(volatile __u64 *)&s->ways.tat[WAY(w)];
	__u64 seen_key = *(volatile __u64 *)&s->ways.tat[WAY(w + 1)];
	int was_key_way = old_key_tag && s->ways.ext[WAY(w + 1)] == SLUICE_EXT_KEY;

	if ((old_tag && seen > op->now) || (old_key_tag && !was_key_way && seen_key > op->now))
		return TABLE_FULL;
	__sync_lock_test_and_set(&s->ways.tag[WAY(w)], 0);
	__sync_lock_test_and_set(&s->ways.tag[WAY(w + 1)], 0);
	if (!was_key_way && __sync_val_compare_and_swap(&s->ways.tat[WAY(w + 1)], seen_key,
							KEY_WAY_TAT) != seen_key)
		goto taken_back;
	if (!way_fill(s, w, seen, op)) {
		if (!was_key_way)
			__sync_val_compare_and_swap(&s->ways.tat[WAY(w + 1)], KEY_WAY_TAT,
						    seen_key);
		goto taken_back;
	}
	key_way_write(s, w + 1, op);
	__sync_lock_test_and_set(&s->ways.tag[WAY(w)], op->tag | (__u32)i);
	return old_tag || old_key_tag ? TABLE_REPLACED : TABLE_NEW;
taken_back:
	/* A source came back: its bucket holds state again. */
	__sync_lock_test_and_set(&s->ways.tag[WAY(w + 1)], old_key_tag);
	__sync_lock_test_and_set(&s->ways.tag[WAY(w)], old_tag);
	return TABLE_FULL;
}

/*
 * Gives way w of set s (the op's set i), found free without the lock, to
 * the key, under the lock: TABLE_NEW, TABLE_REPLACED, or TABLE_FULL when
 * it is no longer free. Nothing in the locked section calls a function
 * (the verifier allows none): the search for a way is done before. The
 * set's filter word has the new tag's bits before the tag is published,
 * and is recomputed from the ways after.
 */
static __always_inline int set_insert(struct sluice_set *s, int i, struct table_op *op, __u32 w)
{
	/* Looked up before the lock, under which no helper may be called. */
	__u32 *filter = table_filter_word(op, i);
	int ret;

	bpf_spin_lock(&s->lock);
	if (filter)
		*filter |= table_filter_bits(op->tag);
	ret = op_paired(op) ? pair_take(s, i, WAY(w) & ~1U, op) : way_take(s, i, WAY(w), op);
	if (filter)
		*filter = set_filter_of(&s->ways);
	bpf_spin_unlock(&s->lock);
	return ret;
}

/* Tries at a set's free ways that other CPUs keep taking first. */
#define INSERT_TRIES 4

/*
 * Clears way w's fleet usage (map `fleet_usage`, fleet_note) when it goes
 * to a new source of set i, which would otherwise start the period with
 * the last one's. After the tag is published: a packet of the new source
 * noted on another CPU in between is lost, which only delays a hint, as
 * in fleet_note. A global function, verified once, outside the insert;
 * called only while an agent runs, as fleet_note is, so a host without
 * one never reads the word's line.
 */
__attribute__((noinline)) int fleet_usage_clear(const struct table_op *op, int i, __u32 w)
{
	struct sluice_fleet_usage *u;
	__u32 set;

	if (!op || op->table != TABLE_SOURCES)
		return 0;
	set = op->set[i & 1];
	u = bpf_map_lookup_elem(&fleet_usage, &set);
	if (!u)
		return 0;
	u->way[WAY(op_paired(op) ? w & ~1U : w)] = 0;
	return 1;
}

/*
 * Gives the key a way holding op->fresh, in the one of its two sets with
 * more empty ways (more refilled ones, when neither has an empty one),
 * else in the other: TABLE_NEW, TABLE_REPLACED, TABLE_FULL, or
 * TABLE_EXISTS when another CPU gave it one first. Two CPUs giving a
 * brand-new key a way at the same moment may each take one; the way
 * lookups find first then serves it, and the other idles out.
 */
__attribute__((noinline)) int table_insert(struct table_op *op)
{
	struct sluice_set *first, *second, *s;
	int ret = TABLE_FULL, i = 0, tries, moved = 0;
	__u32 w, room[2];

	if (!op)
		return TABLE_FULL;
	first = table_set(op, 0);
	second = table_set(op, 1);
	if (!first || !second)
		return TABLE_FULL;
	/* The filter may have spared the meter step these misses: overlap them now. */
	set_touch(first);
	set_touch(second);
	room[0] = set_room(&first->ways, op->now);
	room[1] = set_room(&second->ways, op->now);
	/* No way of either set is free, so neither has a victim: full, unless the key is there. */
	if (!room[0] && !room[1]) {
		if (set_find(&first->ways, 0, op) == WAY_NONE &&
		    set_find(&second->ways, 1, op) == WAY_NONE)
			return TABLE_FULL;
		return TABLE_EXISTS;
	}
	if (room[1] > room[0])
		i = 1;
#pragma nounroll
	for (tries = 0; tries < INSERT_TRIES; tries++) {
		s = i ? second : first;
		if (set_find(&s->ways, i, op) < WAY_NONE)
			return TABLE_EXISTS;
		w = set_victim(&s->ways, op->now, op_paired(op));
		if (w < WAY_NONE) {
			ret = set_insert(s, i, op, w);
			if (ret != TABLE_FULL) {
				if (op->now < fleet_hint.live_until)
					fleet_usage_clear(op, i, w);
				return ret;
			}
			continue; /* taken meanwhile: look again */
		}
		if (moved || op->set[0] == op->set[1])
			return TABLE_FULL;
		moved = 1;
		i = !i;
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
 * The set holding the key's bucket, with *w its way and *i which of the
 * key's sets it is, or NULL: a plain lookup, for steps that need no second
 * try when a way changes hands.
 */
static __always_inline struct sluice_set *table_find(struct table_op *op, __u32 *w, int *i)
{
	struct sluice_set *s;

	for (*i = 0; *i < 2; (*i)++) {
		s = table_set(op, *i);
		if (!s)
			continue;
		*w = set_find(&s->ways, *i, op);
		if (*w < WAY_NONE)
			return s;
	}
	return NULL;
}

/* Adds op->pending refusals to the key's bucket, if it still has one. */
__attribute__((noinline)) int table_add_dropped(struct table_op *op)
{
	struct sluice_set *s;
	__u32 w;
	int i;

	if (!op)
		return 0;
	s = table_find(op, &w, &i);
	if (!s)
		return 0;
	way_count(&s->ways.count[WAY(w)], 0, op->pending);
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
static __always_inline int way_refund(struct sluice_set *s, int i, __u32 w, struct table_op *op)
{
	struct sluice_count *way = &s->ways.count[WAY(w)];
	__u64 given = slot_refund(&s->ways.tat[WAY(w)], op);

	if (!way_owned(s, i, w, op)) {
		if (given)
			__sync_fetch_and_add(&s->ways.tat[WAY(w)], given);
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
	int i;

	if (!op)
		return 0;
	s = table_find(op, &w, &i);
	return s ? way_refund(s, i, w, op) : 0;
}

#ifdef SLUICE_TEST_CLOCK
/*
 * Compare-and-swaps of the fleet's sync step that a rival meter step beats,
 * moving the TAT one unit between the step's read and its swap: the test
 * sets it, so a step can lose every race, deterministically.
 */
volatile __u32 test_fleet_rivals;

static __always_inline void fleet_rival_step(__u64 *tatp)
{
	if (test_fleet_rivals) {
		test_fleet_rivals--;
		__sync_fetch_and_add(tatp, 1);
	}
}
#else
static __always_inline void fleet_rival_step(__u64 *tatp)
{
	(void)tatp;
}
#endif

/*
 * The fleet's sync step (bpf/fleet.h) on the key's bucket, with the same
 * compare-and-swap metering uses: READ fills op->fresh (passed, and the
 * TAT ahead of now in tat); ADVANCE moves the TAT to at least now + arg,
 * never back; CHARGE adds arg to it, from now at the earliest; CAP sets it
 * to `to` if it still is `was`, else lowers it to now + arg if later (a
 * change's rebase and debt cap, user/maps/debt.c). Fleet debt
 * may run past the burst (gcra_conforms_owing keeps it). Returns 1 when
 * the key has a bucket and the step is done, 0 when it has none, and
 * SLUICE_FLEET_CONTENDED when every compare-and-swap lost a race to a
 * meter step: nothing was written (op->fresh untouched), the agent tries
 * again.
 */
__attribute__((noinline)) int table_fleet_step(struct table_op *op, __u32 fleet_op, __u64 arg,
					       __u64 was, __u64 to)
{
	struct sluice_set *s;
	__u64 *tatp, tat, next;
	__u32 w;
	int i, set_i;

	if (!op)
		return 0;
	s = table_find(op, &w, &set_i);
	if (!s)
		return 0;
	tatp = &s->ways.tat[WAY(w)];
	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		if (fleet_op == SLUICE_FLEET_ADVANCE)
			next = tat > op->now + arg ? tat : op->now + arg;
		else if (fleet_op == SLUICE_FLEET_CHARGE)
			next = (tat > op->now ? tat : op->now) + arg;
		else if (fleet_op == SLUICE_FLEET_CAP)
			next = gcra_rebased(tat, op->now, arg, was, to);
		else
			next = tat;
		if (next == tat)
			break;
		fleet_rival_step(tatp);
		if (__sync_val_compare_and_swap(tatp, tat, next) == tat)
			break;
	}
	if (!way_owned(s, set_i, w, op)) {
		/* Changed hands meanwhile: not this key's to move. */
		if (i < METER_CAS_TRIES && next != tat)
			__sync_val_compare_and_swap(tatp, next, tat);
		return 0;
	}
	if (i == METER_CAS_TRIES)
		return SLUICE_FLEET_CONTENDED;
	op->fresh.passed = s->ways.count[WAY(w)].passed;
	op->fresh.tat = next > op->now ? next - op->now : 0;
	return 1;
}

#endif /* SLUICE_BPF_TABLE_H */
