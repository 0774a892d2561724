/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU over-limit cache (struct sluice_hot in sluice.h): answers
 * repeat offenders without the configuration, the policy, the table or,
 * mostly, the clock. A source is looked for in one of two 64-byte lines,
 * chosen by a keyed hash of its address, and matched exactly: full address,
 * L4 class and configuration generation, so it never answers for another
 * source.
 *
 * A live entry (its source still over its limit) is never displaced: a
 * source that finds both ways of both its lines live takes the full path,
 * and a line then keeps serving the two it holds instead of thrashing.
 */
#ifndef SLUICE_BPF_HOT_H
#define SLUICE_BPF_HOT_H

#include "act.h"
#include "clock.h"
#include "hot_key.h"
#include "parse.h"
#include "table.h"

#define HOT_MATCH_FLAGS (SLUICE_HOT_IPV4 | SLUICE_HOT_IPV6 | SLUICE_HOT_TCP_SYN)
/* sluice_hot_head.last: a way's offset in the lines, a multiple of 32 */
#define HOT_LAST_MASK ((2 * SLUICE_HOT_SETS * sizeof(union sluice_hot_line) - 1) & ~31U)

static __always_inline int hot_ways(__u8 family)
{
	return family == SLUICE_FAMILY_IPV4 ? 2 : 1;
}

/*
 * The indexes of the packet's source's two lines in c. The compiler makes
 * hot_line_of's sum an OR of two bounded values, whose bounds Linux 6.1's
 * verifier (Debian 12's) drops; an AND it cannot take out restores them.
 */
static __always_inline void hot_indexes(const struct sluice_hot *c, const struct packet *pkt,
					__u32 *first, __u32 *second)
{
	__u64 hash = hot_hash(pkt->family, pkt->addr, c->head.seed);
	__u64 i = hot_line_of(pkt->family, hash);
	__u64 j = hot_line2_of(pkt->family, hash);

	asm volatile("%[i] &= %[m]" : [i] "+r"(i) : [m] "i"(2 * SLUICE_HOT_SETS - 1));
	asm volatile("%[j] &= %[m]" : [j] "+r"(j) : [m] "i"(2 * SLUICE_HOT_SETS - 1));
	*first = (__u32)i;
	*second = (__u32)j;
}

/* A way of line holds a source of the packet's address (an IPv6 line's second way is its tail). */
static __always_inline int hot_holds_addr(const union sluice_hot_line *line,
					  const struct packet *pkt)
{
	return line->way[0].addr == pkt->addr[0] || line->way[1].addr == pkt->addr[0];
}

/*
 * A way certainly free to take: empty, of an older configuration, or past
 * its moment at the last full decision on this CPU (meter time only moves
 * on). Where a new entry goes is all it decides: hot_remember checks again
 * against the precise clock.
 */
static __always_inline int hot_way_free(const struct sluice_hot_way *e,
					const struct sluice_hot_head *hd)
{
	return !e->flags || e->generation != config_generation || e->admissible_at <= hd->ref_now;
}

static __always_inline int hot_has_room(const union sluice_hot_line *line, const struct packet *pkt,
					const struct sluice_hot_head *hd)
{
	return hot_way_free(&line->way[0], hd) ||
	       (pkt->family == SLUICE_FAMILY_IPV4 && hot_way_free(&line->way[1], hd));
}

/*
 * The line of the packet's source: the first of its two lines that holds a
 * source of its address or has room, else the first. A source is placed in
 * its second line only while others hold its first live, so a packet of a
 * source the cache does not know, a forged one, reads one line while the
 * cache has room. Once its first line has room again, a source held in its
 * second is placed anew in its first; the older entry then only costs
 * room, never a count (its pending refusals still reach its bucket).
 */
static __always_inline union sluice_hot_line *hot_line_for(struct sluice_hot *c,
							   const struct packet *pkt)
{
	union sluice_hot_line *first, *second;
	__u32 i, j;

	hot_indexes(c, pkt, &i, &j);
	first = &c->line[i];
	if (hot_holds_addr(first, pkt) || hot_has_room(first, pkt, &c->head))
		return first;
	second = &c->line[j];
	if (hot_holds_addr(second, pkt) || hot_has_room(second, pkt, &c->head))
		return second;
	return first;
}

/* IPv4 1, IPv6 2 (bit 1 of the family tells them apart), and SYN 4: without a branch. */
static __always_inline __u8 hot_flags_of(const struct packet *pkt)
{
	return (__u8)((((pkt->family >> 1) & 1) + SLUICE_HOT_IPV4) |
		      (pkt->tcp_syn & 1) * SLUICE_HOT_TCP_SYN);
}

/* Way w holds this packet's source and L4 class exactly as they came (any generation). */
static __always_inline int hot_is_source(const union sluice_hot_line *line, int w,
					 const struct packet *pkt)
{
	const struct sluice_hot_way *e = &line->way[w & 1];

	if ((e->flags & HOT_MATCH_FLAGS) != hot_flags_of(pkt) || e->addr != pkt->addr[0] ||
	    e->proto != pkt->proto || e->dport != pkt->dport)
		return 0;
	return pkt->family == SLUICE_FAMILY_IPV4 ||
	       (line->v6.tail.addr[0] == pkt->addr[1] && line->v6.tail.addr[1] == pkt->addr[2] &&
		line->v6.tail.addr[2] == pkt->addr[3]);
}

/* The way answering for this packet under the live configuration, or -1. */
static __always_inline int hot_find(const union sluice_hot_line *line, const struct packet *pkt)
{
	if (hot_is_source(line, 0, pkt) && line->way[0].generation == config_generation)
		return 0;
	if (pkt->family == SLUICE_FAMILY_IPV4 && hot_is_source(line, 1, pkt) &&
	    line->way[1].generation == config_generation)
		return 1;
	return -1;
}

/* What hot_answer returns when it refuses nothing. */
enum hot_no_answer {
	HOT_NOT_HELD = -1, /* no entry of the packet's source */
	HOT_HELD = -2,	   /* the source's entry, at its moment or with a full count */
};

/*
 * The way of line refusing this repeat offender, still over its limit, or
 * enum hot_no_answer. Jiffies answer most such packets with one load; only
 * near the moment the source may conform again does it take the precise
 * clock, which it hands on in *now (0 when not read) for the full
 * decision. A packet it refuses is counted in the entry; a full count
 * leaves the packet to the full path, which hands the count to the
 * bucket. Inline: as a global function (verified once, like the cold ones
 * below) its call and the packet's copy cost 10,000 sources over their
 * limits a sixth of their time, where the verifier's budget has room for
 * it.
 */
static __always_inline int hot_answer(union sluice_hot_line *line, const struct sluice_hot_head *hd,
				      const struct packet *pkt, __u64 *now)
{
	struct sluice_hot_way *e;
	int w;

	*now = 0;
	w = hot_find(line, pkt);
	if (w < 0)
		return HOT_NOT_HELD;
	e = &line->way[w & 1];
	if (SLUICE_HOT_PENDING(e->count) >= SLUICE_HOT_PENDING_MAX - 1)
		return HOT_HELD;
	if (clock_jiffies() >= clock_jiffy_bound(hd, e->admissible_at)) {
		*now = clock_now();
		if (*now >= e->admissible_at)
			return HOT_HELD;
	}
	e->count++;
	return w;
}

/*
 * The entry stored last, when it is this packet's source: 1 when it is
 * still over its limit (counted in the entry), else 0 with the precise
 * clock in *now if it was read (0 if not); its line goes to *h, as it is
 * the source's own. -1: another source's, so the line must be found.
 * The one source of a flood is answered inline, from the head and one
 * line, with no call and no hash.
 */
static __always_inline int hot_last(struct sluice_hot *c, const struct packet *pkt,
				    union sluice_hot_line **h, __u64 *now)
{
	__u32 off = c->head.last & HOT_LAST_MASK;
	union sluice_hot_line *line = (void *)c->line + (off & ~63U);
	struct sluice_hot_way *e = (void *)c->line + off;

	if (!hot_is_source(line, (int)(off >> 5), pkt) || e->generation != config_generation)
		return -1;
	*h = line;
	if (SLUICE_HOT_PENDING(e->count) >= SLUICE_HOT_PENDING_MAX - 1)
		return 0;
	if (clock_jiffies() >= c->head.last_jiffy) {
		*now = clock_now();
		if (*now >= e->admissible_at)
			return 0;
	}
	e->count++;
	return 1;
}

/*
 * When the cache answers almost nothing, as when a million sources each
 * come back long after others took their entries, or under a spoofed
 * flood, its line is a miss that every packet waits for, and its writes
 * push the table's lines out of the CPU's caches. The head weighs its
 * answers against its misses (sluice_hot_head.unanswered); past the mark
 * the cache is looked up, and written, only by one packet in
 * SLUICE_HOT_PROBE_EVERY: the full path, exact without it, decides the
 * others. The probes' answers (and the last source's, looked up either
 * way: hot_last) bring it back once they are a few percent of lookups.
 */
_Static_assert(SLUICE_HOT_STEP_ASIDE_AFTER < 65536, "sluice_hot_head.unanswered is 16 bits");
_Static_assert((SLUICE_HOT_PROBE_EVERY & (SLUICE_HOT_PROBE_EVERY - 1)) == 0 &&
		       SLUICE_HOT_PROBE_EVERY <= 256,
	       "a probe is every SLUICE_HOT_PROBE_EVERY values of an 8-bit counter");

/* Whether this packet skips the cache: it has stepped aside and this is no probe. */
static __always_inline int hot_steps_aside(struct sluice_hot_head *hd)
{
	if (hd->unanswered < SLUICE_HOT_STEP_ASIDE_AFTER)
		return 0;
	return ++hd->probe & (SLUICE_HOT_PROBE_EVERY - 1);
}

/* Weighs a lookup's outcome in, writing the head only when that changes it. */
static __always_inline void hot_note_answer(struct sluice_hot_head *hd, int answered)
{
	__u16 n = hd->unanswered;

	/* The answered case first and short: it is every packet of a flood the cache holds. */
	if (answered) {
		if (n)
			hd->unanswered =
				n > SLUICE_HOT_ANSWER_WEIGHT ? n - SLUICE_HOT_ANSWER_WEIGHT : 0;
		return;
	}
	if (n < SLUICE_HOT_STEP_ASIDE_AFTER)
		hd->unanswered = n + 1;
}

/*
 * The fast path: the entry refusing this packet, or NULL. The source's
 * line goes to *h and the CPU's head to *hd, for the full path (NULL: no
 * cache), and the precise clock to *now if it was read (else 0).
 */
static __always_inline struct sluice_hot_way *hot_still_over(const struct packet *pkt,
							     union sluice_hot_line **h,
							     struct sluice_hot_head **hd,
							     __u64 *now)
{
	struct sluice_hot *c = hot_cpu();
	__u64 t = 0;
	int w;

	*h = NULL;
	*hd = NULL;
	*now = 0;
	if (!c)
		return NULL;
	*hd = &c->head;
	w = hot_last(c, pkt, h, now);
	if (w > 0)
		hot_note_answer(&c->head, 1);
	if (w >= 0)
		return w ? (void *)c->line + (c->head.last & HOT_LAST_MASK) : NULL;
	if (hot_steps_aside(&c->head))
		return NULL;
	*h = hot_line_for(c, pkt);
	/* A line of other sources has no answer for this one. */
	w = hot_holds_addr(*h, pkt) ? hot_answer(*h, *hd, pkt, &t) : HOT_NOT_HELD;
	/*
	 * A source held at its moment weighs neither way: the full path
	 * refreshes its entry through *h. Counted as a miss, the moments of
	 * sources that flood in step (each source's next moment one interval
	 * on) shut the cache, whose entries then go stale.
	 */
	if (w != HOT_HELD)
		hot_note_answer(&c->head, w >= 0);
	*now = t;
	return w < 0 ? NULL : &(*h)->way[w & 1];
}

/*
 * A ban's packet the entry answered: counted banned, and not pending for
 * the bucket (hot_answer counted it there), which its packets never reach
 * (ban.h), nor toward the key's next ban. Here, not in hot_answer: a
 * source over its limit pays nothing for it.
 */
static __always_inline void hot_banned(struct xdp_md *ctx, struct sluice_hot_way *e)
{
	e->count--;
	stats_count(ctx, SLUICE_CNT_BANNED);
}

/* What to do with a packet an entry refused, and the rule it counts under. */
static __always_inline void hot_verdict_of(struct sluice_verdict *v, const struct sluice_hot_way *e)
{
	v->action = e->verdict >> 6;
	v->dscp = e->verdict & 0x3f;
	v->mark_dscp = !!(e->flags & SLUICE_HOT_MARK_DSCP);
	v->mark_ecn = !!(e->flags & SLUICE_HOT_MARK_ECN);
}

static __always_inline __u32 hot_rule_slot(const struct sluice_hot_way *e)
{
	return e->rule_slot + (e->flags & SLUICE_HOT_RULE_SET1 ? SLUICE_MAX_POLICIES : 0);
}

/*
 * The cold operations below are global functions, verified once each: the
 * program is near the verifier's budget, and inlined at every call site
 * their branches would multiply its states. They are given copies: the
 * verifier forgets what it knew of stack memory a global function was
 * given (the packet's family, an op's table), so nothing it still needs.
 */

/* The way of line whose refusals belong to key (with some, if `held`), or -1. */
static __always_inline int hot_way_of_key(const union sluice_hot_line *line,
					  const struct sluice_key *key, int held)
{
	struct sluice_key k;
	int w;

	for (w = 0; w < hot_ways(key->family); w++) {
		if (!line->way[w].flags || (held && !SLUICE_HOT_PENDING(line->way[w].count)))
			continue;
		hot_key_of(line, w, &k);
		if (key_same(&k, key))
			return w;
	}
	return -1;
}

/* Takes the pending refusals of key from line. */
__attribute__((noinline)) __u64 hot_take_from(union sluice_hot_line *line,
					      const struct sluice_key *key)
{
	__u32 n;
	int w;

	if (!line || !key)
		return 0;
	w = hot_way_of_key(line, key, 1);
	if (w < 0)
		return 0;
	n = SLUICE_HOT_PENDING(line->way[w & 1].count);
	line->way[w & 1].count -= n;
	return n;
}

/*
 * Whether way w may hold refusals of key: some pending, and the first
 * word of its source within the key's prefix. Inline, so that a line
 * holding other sources' entries costs no call (a line of IPv6 reads its
 * tail as a second way, which holds none).
 */
static __always_inline int hot_may_hold(const union sluice_hot_line *line, int w,
					const struct sluice_key *key)
{
	const struct sluice_hot_way *e = &line->way[w & 1];

	return SLUICE_HOT_PENDING(e->count) &&
	       !((e->addr ^ key->addr[0]) & hot_mask_word(key->prefix_len));
}

/* Pending refusals of key in the packet's line: they ride on key's own update. */
static __always_inline __u64 hot_take_pending(union sluice_hot_line *line,
					      const struct sluice_key *key)
{
	struct sluice_key k;

	if (!line || !(hot_may_hold(line, 0, key) || hot_may_hold(line, 1, key)))
		return 0;
	k = *key;
	return hot_take_from(line, &k);
}

/* Gives n refusals of key back to a way of line holding key, with room for them. */
__attribute__((noinline)) int hot_give_back_to(union sluice_hot_line *line,
					       const struct sluice_key *key, __u64 n)
{
	struct sluice_key k;
	int w;

	if (!line || !key)
		return 0;
	for (w = 0; w < hot_ways(key->family); w++) {
		if (!line->way[w].flags ||
		    SLUICE_HOT_PENDING(line->way[w].count) + n > SLUICE_HOT_PENDING_MAX)
			continue;
		hot_key_of(line, w, &k);
		if (key_same(&k, key)) {
			line->way[w].count += (__u32)n;
			return 1;
		}
	}
	return 0;
}

/*
 * Pending refusals taken for op's key that found no bucket after all: back
 * to a way of the key with room (the one they came from has it).
 */
static __always_inline void hot_give_back(union sluice_hot_line *line, const struct table_op *op)
{
	struct sluice_key k;

	if (!line || !op->pending)
		return;
	k = op->key;
	hot_give_back_to(line, &k, op->pending);
}

static __always_inline int hot_live(const struct sluice_hot_way *e, __u64 now)
{
	return e->flags && e->generation == config_generation && e->admissible_at > now;
}

/*
 * Whether hot_victim may find a way for the packet's source: a way not
 * live, or one whose source's first word is the packet's. Inline, so that
 * a set held live by other sources costs no call.
 */
static __always_inline int hot_may_take(const union sluice_hot_line *line, const struct packet *pkt,
					__u64 now)
{
	int v4 = pkt->family == SLUICE_FAMILY_IPV4;

	return !hot_live(&line->way[0], now) || line->way[0].addr == pkt->addr[0] ||
	       (v4 && (!hot_live(&line->way[1], now) || line->way[1].addr == pkt->addr[0]));
}

/*
 * Where to remember the packet's source: its own way (never two), else a
 * way holding nothing live; -1 when other sources hold them all, live.
 */
__attribute__((noinline)) int hot_victim(const union sluice_hot_line *line,
					 const struct packet *pkt, __u64 now)
{
	int n, w;

	if (!line || !pkt)
		return -1;
	n = hot_ways(pkt->family);
	for (w = 0; w < n; w++)
		if (hot_is_source(line, w, pkt))
			return w;
	for (w = 0; w < n; w++)
		if (!hot_live(&line->way[w], now))
			return w;
	return -1;
}

/*
 * Way w takes entry e (and for IPv6 the rest of pkt's address). Returns
 * the refusals it held for another bucket, whose key goes to *held; those
 * of e's own key stay, added to e's.
 */
__attribute__((noinline)) __u32 hot_store(union sluice_hot_line *line, int w,
					  const struct sluice_hot_way *e, const struct packet *pkt,
					  struct sluice_key *held)
{
	struct sluice_key k;
	__u32 n;

	if (!line || !e || !pkt || !held)
		return 0;
	n = line->way[w & 1].flags ? SLUICE_HOT_PENDING(line->way[w & 1].count) : 0;
	if (n)
		hot_key_of(line, w, held);
	line->way[w & 1] = *e;
	if (pkt->family == SLUICE_FAMILY_IPV6) {
		line->v6.tail.addr[0] = pkt->addr[1];
		line->v6.tail.addr[1] = pkt->addr[2];
		line->v6.tail.addr[2] = pkt->addr[3];
	}
	if (!n)
		return 0;
	hot_key_of(line, w, &k);
	if (key_same(&k, held) && SLUICE_HOT_PENDING(e->count) + n <= SLUICE_HOT_PENDING_MAX) {
		line->way[w & 1].count += n;
		return 0;
	}
	return n;
}

/* The entry for key's source, over its limit until admissible_at, with `pending` refusals. */
static __always_inline void hot_entry_of(struct sluice_hot_way *e, const struct packet *pkt,
					 const struct sluice_policy *p, __u32 index,
					 __u64 generation, const struct sluice_key *key,
					 __u64 pending, __u64 admissible_at)
{
	e->admissible_at = admissible_at;
	e->generation = generation;
	e->addr = pkt->addr[0];
	e->dport = pkt->dport;
	e->policy = key->policy;
	e->count = (__u32)pending | (__u32)key->prefix_len << 24;
	e->proto = pkt->proto;
	/* Shifts, not branches: each branch here would be explored at every call site. */
	e->flags = hot_flags_of(pkt) | ((index / SLUICE_MAX_POLICIES) & 1) * SLUICE_HOT_RULE_SET1 |
		   ((p->flags / SLUICE_POL_MARK_DSCP) & 1) * SLUICE_HOT_MARK_DSCP |
		   ((p->flags / SLUICE_POL_MARK_ECN) & 1) * SLUICE_HOT_MARK_ECN;
	e->verdict = (__u8)(p->action << 6 | (p->dscp & 0x3f));
	e->rule_slot = (__u8)index;
}

/* Makes way w of line, the packet's source's, the entry stored last (hot_last). */
static __always_inline void hot_note_last(struct sluice_hot *c, const union sluice_hot_line *line,
					  const struct packet *pkt, int w, __u64 admissible_at)
{
	__u32 i, j;

	hot_indexes(c, pkt, &i, &j);
	if (line != &c->line[i])
		i = j;
	c->head.last = i * sizeof(*line) + (w & 1) * sizeof(line->way[0]);
	c->head.last_jiffy = clock_jiffy_bound(&c->head, admissible_at);
}

/*
 * Remembers op's over-limit source until the earliest moment it may
 * conform again, if that is still to come: the cache must never refuse
 * what the full decision would pass. op->pending holds refusals of op's
 * key that found no bucket: the entry keeps them for the bucket to come.
 * The refusals of another key the way held go to their bucket, carried
 * by op, which is spent. `banned` (SLUICE_HOT_BANNED or 0): the moment is
 * the end of the ban this refusal imposed (ban.h).
 */
static __always_inline void hot_remember(union sluice_hot_line *line, const struct packet *pkt,
					 const struct sluice_policy *p, __u32 index,
					 const struct sluice_config *cfg, __u64 admissible_at,
					 struct table_op *op, __u8 banned)
{
	struct sluice_key held = {};
	struct sluice_hot_way e;
	struct sluice_hot *c;
	struct packet copy;
	__u32 pending;
	int w;

	if (!line)
		return;
	if (admissible_at <= op->now || !hot_may_take(line, pkt, op->now)) {
		hot_give_back(line, op);
		return;
	}
	copy = *pkt;
	w = hot_victim(line, &copy, op->now);
	c = hot_cpu();
	if (w < 0 || !c) {
		hot_give_back(line, op);
		return;
	}
	/* The reference of the jiffy bound: now, and the jiffy read after it. */
	if (!op->now_floor) {
		c->head.ref_now = op->now;
		c->head.ref_jiffy = clock_jiffies();
	}
	hot_entry_of(&e, pkt, p, index, cfg->generation, &op->key, op->pending, admissible_at);
	e.flags |= banned;
	pending = hot_store(line, w, &e, &copy, &held);
	hot_note_last(c, line, pkt, w, admissible_at);
	if (pending) {
		table_op_init(op, cfg, &held);
		op->pending = pending;
		table_add_dropped(op);
	}
}

/*
 * Where a ban may go without carrying refusals anywhere: the source's own
 * way under the ban's configuration (what it holds pending is its key's,
 * and stays in it), else a way with nothing live and none pending. -1:
 * none. `now` may trail the clock: a way live then is only spared.
 */
static __always_inline int hot_ban_way(const union sluice_hot_line *line, const struct packet *pkt,
				       __u64 generation, __u64 now)
{
	int n = hot_ways(pkt->family), w;

	for (w = 0; w < n; w++)
		if (hot_is_source(line, w, pkt) && line->way[w].generation == generation)
			return w;
	for (w = 0; w < n; w++)
		if (!hot_live(&line->way[w], now) && !SLUICE_HOT_PENDING(line->way[w].count))
			return w;
	return -1;
}

/*
 * Remembers a banned source, entry e (flagged SLUICE_HOT_BANNED, until its
 * ban ends), so that its flood is answered as a repeat offender's is: from
 * its line, by the jiffies, without the configuration, the key or the
 * bans' hash. A ban lifted early (deny del, deny flush) publishes a new
 * generation, which ends the entry with it.
 */
__attribute__((noinline)) int hot_remember_ban(union sluice_hot_line *line,
					       const struct packet *pkt,
					       const struct sluice_hot_way *e)
{
	struct sluice_key held = {};
	struct sluice_hot *c = hot_cpu();
	int w;

	if (!line || !pkt || !e || !c)
		return 0;
	w = hot_ban_way(line, pkt, e->generation, c->head.ref_now);
	if (w < 0)
		return 0;
	hot_store(line, w, e, pkt, &held);
	hot_note_last(c, line, pkt, w, e->admissible_at);
	return 1;
}

/* A banned source's entry, remembered in its line h (NULL: the cache has no say). */
static __always_inline void hot_ban(union sluice_hot_line *h, const struct packet *pkt,
				    const struct sluice_key *key, const struct sluice_policy *p,
				    __u32 index, __u64 generation, __u64 until)
{
	struct sluice_hot_way e;

	if (!h)
		return;
	hot_entry_of(&e, pkt, p, index, generation, key, 0, until);
	e.flags |= SLUICE_HOT_BANNED;
	hot_remember_ban(h, pkt, &e);
}

#endif /* SLUICE_BPF_HOT_H */
