/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The penalty box (--ban-after, struct sluice_ban in sluice.h), decided
 * here, in the datapath, so it holds under a flood that starves
 * userspace. Only refusals of a key's own bucket count toward its ban
 * (meter.h calls ban_note where the bucket refuses, with the refusals the
 * over-limit cache answered for it since): a source that stays under its
 * own limit is never banned, whatever forged packets of other sources do
 * to the rule's shared overflow and new-source budgets. A banned key's
 * packets get the rule's over-limit action before its bucket is touched.
 *
 * Both are global functions, verified once, and called only for a rule
 * with a ban: other rules pay one flag test. Each looks its key up from a
 * copy on its own stack: Linux 6.1 takes a map key only from the stack or
 * a map value, not from memory a global function was handed.
 */
#ifndef SLUICE_BPF_BAN_H
#define SLUICE_BPF_BAN_H

#include "clock.h"
#include "hot.h"
#include "maps.h"
#include "stats.h"
#include "table.h"

#define BAN_NS_PER_MS 1000000ULL
/* Tries at the window word against other CPUs' refusals of the same key. */
#define BAN_CAS_TRIES 4

/*
 * The end of the key's ban in meter time, or 0 when none holds now. A ban
 * lasts seconds, so the jiffies, against this CPU's reference moment (its
 * over-limit cache's head), nearly always say "certainly not over yet"
 * without the hardware clock, the dearest part of a banned flood's
 * packet. Else the precise clock.
 */
__attribute__((noinline)) __u64 ban_until(const struct sluice_key *key)
{
	const struct sluice_hot *c = hot_cpu();
	const struct sluice_ban *b;
	struct sluice_key k;
	__u64 until, bound;

	if (!key)
		return 0;
	k = *key;
	b = bpf_map_lookup_elem(&bans, &k);
	if (!b)
		return 0;
	until = b->banned_until_ns;
	/* A head without a precise reading yet has no reference moment. */
	if (c && c->head.ref_now) {
		bound = clock_jiffy_bound(&c->head, until << SLUICE_TIME_SHIFT);
		if (bound && clock_jiffies() < bound)
			return until << SLUICE_TIME_SHIFT;
	}
	return clock_ns() < until ? until << SLUICE_TIME_SHIFT : 0;
}

/*
 * The ban the key earns now: a repeat (the last one ended less than
 * ban_memory_ns ago) lasts the last one's length times the factor, up to
 * ban_max_ns; anything else ban_for_ns. Written by the one CPU whose
 * refusals crossed ban_after (ban_note).
 */
static __always_inline void ban_impose(struct sluice_ban *b, const struct sluice_policy *p,
				       __u64 now, __u64 refused)
{
	int repeat = b->banned_at_ns && now < b->banned_until_ns + p->ban_memory_ns;
	__u64 length = p->ban_for_ns;

	/* userspace bounds ban_max_ns (365 days) and the factor (100): no overflow */
	if (repeat)
		length = b->length_ns / 1000 * p->ban_escalate_milli;
	if (length > p->ban_max_ns)
		length = p->ban_max_ns;
	if (length < p->ban_for_ns)
		length = p->ban_for_ns;
	b->level = repeat ? b->level + 1 : 1;
	b->length_ns = length;
	b->refused = refused;
	b->period_ns = p->ban_period_ns;
	b->banned_at_ns = now;
	b->banned_until_ns = now + length;
	b->bans++;
	/* The next ban is earned afresh, after this one. */
	__sync_lock_test_and_set(&b->window, 0);
}

/*
 * Adds `refused` refusals to the key's period, starting a new period when
 * the last one is over: the new word, or 0 when other CPUs kept winning
 * (their refusals then count, these do not: a ban is at worst late).
 */
static __always_inline __u64 ban_count(struct sluice_ban *b, __u64 now_ms, __u64 period_ms,
				       __u64 refused, __u64 *before)
{
	__u64 old, start, count, sum;
	int tries;

#pragma unroll
	for (tries = 0; tries < BAN_CAS_TRIES; tries++) {
		old = b->window;
		start = old >> SLUICE_BAN_COUNT_BITS;
		count = old & SLUICE_BAN_COUNT_MAX;
		if (!old || now_ms >= start + period_ms) {
			start = now_ms;
			count = 0;
		}
		sum = count + refused;
		if (sum > SLUICE_BAN_COUNT_MAX)
			sum = SLUICE_BAN_COUNT_MAX;
		if (__sync_val_compare_and_swap(&b->window, old,
						start << SLUICE_BAN_COUNT_BITS | sum) == old) {
			*before = count;
			return sum;
		}
	}
	return 0;
}

/*
 * The key's own bucket refused op->pending packets (the cache's, now in
 * the bucket's count) and this one if `over`: counted toward its ban, and
 * the key banned by the CPU whose refusals crossed ban_after within the
 * period. Returns the end of the ban it imposed in meter time, or 0.
 */
__attribute__((noinline)) __u64 ban_note(struct xdp_md *ctx, struct table_op *op,
					 const struct sluice_policy *p, int over)
{
	struct sluice_ban fresh = {};
	struct sluice_ban *b;
	struct sluice_key key;
	__u64 refused, now, sum, before = 0;

	if (!op || !p)
		return 0;
	refused = op->pending + (over != 0);
	if (!refused)
		return 0;
	now = clock_ns();
	key = op->key;
	b = bpf_map_lookup_elem(&bans, &key);
	if (!b) {
		bpf_map_update_elem(&bans, &key, &fresh, BPF_NOEXIST);
		b = bpf_map_lookup_elem(&bans, &key);
		if (!b)
			return 0;
	}
	sum = ban_count(b, now / BAN_NS_PER_MS, p->ban_period_ns / BAN_NS_PER_MS, refused, &before);
	/* Only the refusals that cross ban_after ban, and never a key already banned. */
	if (before > p->ban_after || sum <= p->ban_after || now < b->banned_until_ns)
		return 0;
	ban_impose(b, p, now, sum);
	stats_count(ctx, SLUICE_CNT_BANS);
	return b->banned_until_ns << SLUICE_TIME_SHIFT;
}

#endif /* SLUICE_BPF_BAN_H */
