// SPDX-License-Identifier: GPL-2.0
/*
 * The reference model (model.h): token buckets as levels, and a source's
 * windows and warm-up as counts and permits, from the definitions.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"

enum bucket_kind {
	BUCKET_SOURCE,
	BUCKET_AGGREGATE,
	BUCKET_ADMISSION,
	BUCKET_OVERFLOW,
};

/*
 * The previous window's count weighs (1 - f) of itself, f the elapsed
 * fraction of the current window, with the weight counted in whole steps of
 * 2^8 meter units (16 ns) and rounded up, so that it never weighs less than
 * exact (docs/algorithms.md, window.h's comment). Windows are whole
 * milliseconds, a whole number of steps.
 */
#define WEIGHT_STEP 256

/*
 * A token bucket: level tokens (meter time units) at time `last`, with
 * capacity `limit`. The level may be below zero only when a policy change
 * kept a debt larger than the new burst (MODEL_DEBT_KEPT). A source whose
 * rule meters by window or warm-up (meter) keeps its counts or permits
 * instead.
 */
struct model_bucket {
	uint8_t kind, family, prefix_len;
	uint8_t keyed; /* a source's: what it is keyed on (MODEL_KEY_*); 0 for the others */
	uint8_t meter; /* enum sluice_meter: SLUICE_METER_GCRA for all but sources */
	unsigned int instance;
	/* The source (or a prefix's) masked, then for a destination or pair key the destination. */
	uint32_t addr[8];
	__int128 level;
	uint64_t last, limit;
	/*
	 * An aggregate's bucket whose rule dropped its prefix length: should
	 * the rule limit it again, the change finds no old limit to scale by,
	 * and keeps its TAT (capped, as any debt past the burst).
	 */
	bool orphan;
	/* Windows: what was counted in window `window_index` and the one before it. */
	bool counted;
	uint64_t window_index, prev_count, cur_count;
	/* Warm-up: the next-free moment and the permits stored by then. */
	uint64_t free_at, stored;
};

static const char *const verdict_names[] = {
	[MV_PASS] = "pass",   [MV_DROP] = "drop", [MV_WOULD] = "would-drop", [MV_MARK] = "mark",
	[MV_ALLOW] = "allow", [MV_DENY] = "deny", [MV_ERROR] = "error",
};

const char *model_verdict_name(enum model_verdict v)
{
	return v <= MV_ERROR ? verdict_names[v] : "?";
}

void model_init(struct model *m, enum model_debt debt)
{
	memset(m, 0, sizeof(*m));
	m->debt = debt;
	/* Far from the caller's rule instances. */
	m->default_instance = 1U << 30;
	m->last_meter = -1;
}

void model_forget(struct model *m)
{
	m->n_buckets = 0;
}

void model_free(struct model *m)
{
	free(m->allow);
	free(m->deny);
	free(m->buckets);
	memset(m, 0, sizeof(*m));
}

/* Word i of a prefix mask of `bits` bits, network byte order. */
static uint32_t mask_word(int bits, int i)
{
	bits -= 32 * i;
	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffffU;
	return htonl(0xffffffffU << (32 - bits));
}

static void mask_addr(uint32_t *out, const uint32_t *addr, int family, int bits)
{
	int i;

	for (i = 0; i < 4; i++)
		out[i] = family == 4 && i ? 0 : addr[i] & mask_word(bits, i);
}

static bool prefix_holds(const uint32_t *net, int len, int family, const uint32_t *addr,
			 int addr_family)
{
	int i;

	if (family != addr_family)
		return false;
	for (i = 0; i < 4; i++)
		if ((addr[i] & mask_word(len, i)) != (net[i] & mask_word(len, i)))
			return false;
	return true;
}

uint64_t model_cost(const struct model_limiter *l, uint32_t len)
{
	unsigned __int128 c;

	if (!l->bytes)
		return l->interval;
	/* Whole frame in bytes, rounded up: never charge less than the frame. */
	c = (unsigned __int128)len * l->interval;
	return (uint64_t)((c + (1U << SLUICE_BYTE_SHIFT) - 1) >> SLUICE_BYTE_SHIFT);
}

/* level * to / from, rounded toward minus infinity. */
static __int128 level_scaled(__int128 level, uint64_t to, uint64_t from)
{
	__int128 p = level * (__int128)to, q = p / (__int128)from;

	return q * (__int128)from > p ? q - 1 : q;
}

/*
 * Refills b to now, then moves it under a capacity of `limit` keeping the
 * share of its capacity it holds; touch: a packet meets it (where
 * MODEL_DEBT_CAP_AT_TOUCH caps debt).
 */
static void bucket_refresh(struct model *m, struct model_bucket *b, uint64_t limit, uint64_t now,
			   bool touch)
{
	if (b->meter != SLUICE_METER_GCRA)
		return;
	if (now > b->last) {
		b->level += now - b->last;
		if (b->level > (__int128)b->limit)
			b->level = b->limit;
		b->last = now;
	}
	if (limit != b->limit) {
		/* The same share of the bucket, rounded down (toward less left). */
		b->level = b->orphan ? (__int128)limit - ((__int128)b->limit - b->level)
				     : level_scaled(b->level, limit, b->limit);
		b->limit = limit;
		if (m->debt == MODEL_DEBT_CAP_AT_CHANGE && b->level < 0)
			b->level = 0;
	}
	if (touch && m->debt == MODEL_DEBT_CAP_AT_TOUCH && b->level < 0)
		b->level = 0;
}

static struct model_bucket *bucket_find(struct model *m, int kind, int keyed, unsigned int instance,
					int family, int prefix_len, const uint32_t *addr)
{
	size_t i;

	for (i = 0; i < m->n_buckets; i++) {
		struct model_bucket *b = &m->buckets[i];

		if (b->kind == kind && b->keyed == keyed && b->instance == instance &&
		    b->family == family && b->prefix_len == prefix_len &&
		    !memcmp(b->addr, addr, sizeof(b->addr)))
			return b;
	}
	return NULL;
}

/* Room for a packet's new buckets, so pointers stay valid while it is metered. */
static int bucket_reserve(struct model *m, size_t more)
{
	struct model_bucket *grown;
	size_t cap;

	if (m->n_buckets + more <= m->cap_buckets)
		return 0;
	cap = m->cap_buckets ? 2 * m->cap_buckets : 256;
	grown = realloc(m->buckets, cap * sizeof(*grown));
	if (!grown)
		return -1;
	m->buckets = grown;
	m->cap_buckets = cap;
	return 0;
}

/* The bucket, refreshed to now under limit; created holding `initial` if new. */
static struct model_bucket *bucket_get(struct model *m, int kind, int keyed, unsigned int instance,
				       int family, int prefix_len, const uint32_t *addr,
				       uint64_t limit, uint64_t initial, uint64_t now)
{
	struct model_bucket *b = bucket_find(m, kind, keyed, instance, family, prefix_len, addr);

	if (b) {
		bucket_refresh(m, b, limit, now, true);
		return b;
	}
	b = &m->buckets[m->n_buckets++];
	memset(b, 0, sizeof(*b));
	b->kind = (uint8_t)kind;
	b->keyed = (uint8_t)keyed;
	b->instance = instance;
	b->family = (uint8_t)family;
	b->prefix_len = (uint8_t)prefix_len;
	memcpy(b->addr, addr, sizeof(b->addr));
	b->level = initial;
	b->limit = limit;
	b->last = now;
	return b;
}

static const struct model_rule *rule_of_instance(const struct model *m, unsigned int instance)
{
	int i;

	for (i = 0; i < m->n_rules; i++)
		if (m->rules[i].instance == instance)
			return &m->rules[i];
	return NULL;
}

/* The capacity bucket b has under rule r, or 0 when r no longer meters it. */
static uint64_t bucket_limit_under(const struct model_bucket *b, const struct model_rule *r)
{
	int i;

	switch (b->kind) {
	case BUCKET_SOURCE:
		return r->own.limit;
	case BUCKET_ADMISSION:
		return r->admit.limit;
	case BUCKET_OVERFLOW:
		return r->overflow.limit;
	}
	for (i = 0; i < r->n_aggregates; i++)
		if (r->agg[i].family == b->family && r->agg[i].prefix_len == b->prefix_len)
			return r->agg[i].lim.limit;
	return 0;
}

static int cidrs_copy(struct model_cidr **out, size_t *n_out, const struct model_cidr *in, size_t n)
{
	free(*out);
	*out = NULL;
	*n_out = 0;
	if (!n)
		return 0;
	*out = malloc(n * sizeof(*in));
	if (!*out)
		return -1;
	memcpy(*out, in, n * sizeof(*in));
	*n_out = n;
	return 0;
}

bool model_meter_same(const struct model_rule *a, const struct model_rule *b)
{
	if (a->meter != b->meter)
		return false;
	switch (a->meter) {
	case SLUICE_METER_FIXED_WINDOW:
	case SLUICE_METER_SLIDING_WINDOW:
		return a->window == b->window && a->own.bytes == b->own.bytes;
	case SLUICE_METER_WARMUP:
		return a->own.interval == b->own.interval && a->warm_max == b->warm_max;
	}
	return true;
}

int model_set_policy(struct model *m, const struct model_rule *rules, int n,
		     const struct model_cidr *allow, size_t n_allow, const struct model_cidr *deny,
		     size_t n_deny, uint64_t now)
{
	const struct model_rule *r;
	size_t i, kept = 0;
	uint64_t limit;
	int fresh = 0;

	if (n < 1 || n > SLUICE_MAX_POLICIES)
		return -1;
	/* A default of another shape would read its sources' state otherwise: it starts afresh. */
	if (m->n_rules && !model_meter_same(&m->rules[0], &rules[0])) {
		m->default_instance++;
		fresh = 1;
	}
	memcpy(m->rules, rules, (size_t)n * sizeof(*rules));
	m->rules[0].instance = m->default_instance;
	m->n_rules = n;
	/* A kept bucket keeps its TAT under its instance's new parameters. */
	for (i = 0; i < m->n_buckets; i++) {
		struct model_bucket *b = &m->buckets[i];

		r = rule_of_instance(m, b->instance);
		if (!r)
			continue;
		limit = bucket_limit_under(b, r);
		bucket_refresh(m, b, limit ? limit : b->limit, now, false);
		b->orphan = !limit;
		m->buckets[kept++] = *b;
	}
	m->n_buckets = kept;
	if (cidrs_copy(&m->allow, &m->n_allow, allow, n_allow) ||
	    cidrs_copy(&m->deny, &m->n_deny, deny, n_deny))
		return -1;
	return fresh;
}

static bool list_holds(const struct model_cidr *l, size_t n, const struct model_packet *pkt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (prefix_holds(l[i].addr, l[i].len, l[i].family, pkt->addr, pkt->family))
			return true;
	return false;
}

/*
 * sluice(8): a protocol 1; a destination port, a source port, a length, a
 * destination or an ICMP type 2 each, its code 1 more; SYN or TCP flags 4.
 */
static int l4_specificity(const struct model_rule *r)
{
	return (r->syn ? 4 : 0) + (r->dport_hi ? 2 : 0) + (r->proto ? 1 : 0) +
	       (r->sport_hi ? 2 : 0) + (r->tcp_mask ? 4 : 0) + (r->icmp_type_on ? 2 : 0) +
	       (r->icmp_code_on ? 1 : 0) + (r->len_hi ? 2 : 0) + (r->dst_on ? 2 : 0);
}

/* The match classes of sluice(8), each as it is defined there. */
static bool classes_take(const struct model_rule *r, const struct model_packet *pkt)
{
	uint32_t len = pkt->len > 65535 ? 65535 : pkt->len;

	if (r->sport_hi && (pkt->sport < r->sport_lo || pkt->sport > r->sport_hi))
		return false;
	if (r->tcp_mask && (pkt->tcp_flags & r->tcp_mask) != r->tcp_value)
		return false;
	if (r->icmp_type_on && pkt->icmp_type != r->icmp_type)
		return false;
	if (r->icmp_code_on && pkt->icmp_code != r->icmp_code)
		return false;
	if (r->len_hi && (len < r->len_lo || len > r->len_hi))
		return false;
	return !r->dst_on || prefix_holds(r->dst, r->dst_len, r->family, pkt->dst, pkt->family);
}

static bool rule_takes(const struct model_rule *r, const struct model_packet *pkt)
{
	if (!prefix_holds(r->cidr, r->cidr_len, r->family, pkt->addr, pkt->family))
		return false;
	if (r->proto && r->proto != pkt->proto)
		return false;
	if (r->dport_hi && (pkt->dport < r->dport_lo || pkt->dport > r->dport_hi))
		return false;
	if (r->syn && !pkt->syn)
		return false;
	return classes_take(r, pkt);
}

/* The longest CIDR holding the source, then the narrowest class, then the first. */
static const struct model_rule *classify(const struct model *m, const struct model_packet *pkt)
{
	const struct model_rule *best = &m->rules[0], *r;
	bool found = false;
	int i;

	for (i = 1; i < m->n_rules; i++) {
		r = &m->rules[i];
		if (!rule_takes(r, pkt))
			continue;
		if (!found || r->cidr_len > best->cidr_len ||
		    (r->cidr_len == best->cidr_len && l4_specificity(r) > l4_specificity(best))) {
			best = r;
			found = true;
		}
	}
	return best;
}

/* Takes cost from a bucket if it holds that much; a refused packet takes nothing. */
static bool bucket_has(const struct model_bucket *b, uint64_t cost)
{
	return b->level >= (__int128)cost;
}

/* A window source's counts in now's window and the window before it. */
static void window_counts(const struct model_bucket *b, const struct model_rule *r, uint64_t now,
			  uint64_t *prev, uint64_t *cur)
{
	uint64_t k = now / r->window;

	*prev = 0;
	*cur = 0;
	if (!b->counted)
		return;
	if (b->window_index == k) {
		*prev = b->prev_count;
		*cur = b->cur_count;
	} else if (b->window_index + 1 == k) {
		*prev = b->cur_count;
	}
}

/*
 * Sliding window: prev * (1 - f) + cur + cost <= limit, f the elapsed
 * fraction of now's window. Times W / WEIGHT_STEP, in integers:
 * prev * ceil(left / WEIGHT_STEP) <= (limit - cur - cost) * W / WEIGHT_STEP,
 * left the time to the window's end.
 */
static bool sliding_fits(uint64_t prev, uint64_t cur, uint64_t cost, uint64_t limit, uint64_t now,
			 uint64_t window)
{
	uint64_t left = (now / window + 1) * window - now;
	unsigned __int128 weight = (left + WEIGHT_STEP - 1) / WEIGHT_STEP;

	if (cur + cost > limit)
		return false;
	return (unsigned __int128)prev * weight <=
	       (unsigned __int128)(limit - cur - cost) * (window / WEIGHT_STEP);
}

/* A fixed window or sliding-window counter: does cost fit, and if so it is counted. */
static bool window_step(struct model_bucket *b, const struct model_rule *r, uint64_t now,
			uint64_t cost)
{
	uint64_t prev, cur;

	window_counts(b, r, now, &prev, &cur);
	if (r->meter == SLUICE_METER_FIXED_WINDOW
		    ? cur + cost > r->own.limit
		    : !sliding_fits(prev, cur, cost, r->own.limit, now, r->window))
		return false;
	b->counted = true;
	b->window_index = now / r->window;
	b->prev_count = prev;
	b->cur_count = cur + cost;
	return true;
}

/* Bits that hold every count up to v. */
static unsigned int bits_holding(uint64_t v)
{
	unsigned int bits = 0;

	while (bits < 64 && (v >> bits))
		bits++;
	return bits;
}

/*
 * Guava's SmoothWarmingUp, cold factor 3 (docs/algorithms.md, the
 * comment of warmup.h): a permit stored per whole stable interval I idle,
 * up to M; a packet passes once the next-free moment has come, takes a
 * permit, and moves the moment on by what that permit costs: the line from
 * I at M / 2 stored to 3 I at M, taken at the permit's middle (stored - 1/2,
 * which for a permit wholly above M / 2 is its integral), rounded down;
 * then the moment is rounded up to a whole multiple of 2^bits meter units,
 * bits the fewest that hold M.
 */
static bool warmup_step(struct model_bucket *b, const struct model_rule *r, uint64_t now)
{
	uint64_t I = r->own.interval, M = r->warm_max, free_at = b->free_at, stored = b->stored;
	uint64_t idle, grain = 1ULL << bits_holding(M);
	unsigned __int128 cost = I;

	if (free_at > now)
		return false;
	idle = (now - free_at) / I;
	if (idle >= M || stored + idle >= M) {
		stored = M;
		free_at = now;
	} else {
		stored += idle;
		free_at += idle * I;
	}
	/* Middle of the permit above M / 2: 2 stored - 1 > M. */
	if (2 * stored > M + 1)
		cost = I + (unsigned __int128)2 * I * (2 * stored - 1 - M) / M;
	free_at += (uint64_t)cost;
	if (stored)
		stored--;
	b->free_at = (free_at + grain - 1) / grain * grain;
	b->stored = stored;
	return true;
}

/* A source's own meter: does the packet fit, and if so it is taken. */
static bool source_step(struct model_bucket *b, const struct model_rule *r, uint64_t now,
			uint64_t cost)
{
	switch (b->meter) {
	case SLUICE_METER_FIXED_WINDOW:
	case SLUICE_METER_SLIDING_WINDOW:
		return window_step(b, r, now, cost);
	case SLUICE_METER_WARMUP:
		return warmup_step(b, r, now);
	}
	if (b->level < (__int128)cost)
		return false;
	b->level -= cost;
	return true;
}

/* A new source's own meter: an empty window, or a cold warm-up (every permit stored). */
static void source_start(struct model_bucket *b, const struct model_rule *r)
{
	b->meter = r->meter;
	b->stored = r->warm_max;
}

/*
 * What a rule's own bucket is keyed on, by definition: the source masked
 * to the rule's prefix; or the destination so masked; or both (a pair's
 * IPv6 prefix is at most 64, which the model need not know).
 */
static void source_key(uint32_t key[8], const struct model_rule *r, const struct model_packet *pkt,
		       int prefix)
{
	memset(key, 0, 8 * sizeof(key[0]));
	if (r->key != MODEL_KEY_DST)
		mask_addr(key, pkt->addr, pkt->family, prefix);
	if (r->key != MODEL_KEY_SRC)
		mask_addr(key + 4, pkt->dst, pkt->family, prefix);
}

/* Does the packet fit all of its buckets? If so, it is taken from all of them. */
static bool meter(struct model *m, const struct model_rule *r, const struct model_packet *pkt,
		  uint64_t now)
{
	struct model_bucket *agg[SLUICE_MAX_AGGREGATES], *b;
	uint64_t agg_cost[SLUICE_MAX_AGGREGATES], cost;
	int prefix = pkt->family == 4 ? r->ipv4_prefix : r->ipv6_prefix;
	uint32_t key[8] = { 0 }, zero[8] = { 0 };
	int i, n = 0;

	if (bucket_reserve(m, SLUICE_MAX_AGGREGATES + 3))
		return false;
	for (i = 0; i < r->n_aggregates; i++) {
		const struct model_aggregate *a = &r->agg[i];

		if (a->family != pkt->family)
			continue;
		mask_addr(key, pkt->addr, a->family, a->prefix_len);
		b = bucket_get(m, BUCKET_AGGREGATE, 0, r->instance, a->family, a->prefix_len, key,
			       a->lim.limit, a->lim.limit, now);
		agg_cost[n] = model_cost(&a->lim, pkt->len);
		agg[n++] = b;
	}
	for (i = 0; i < n; i++)
		if (!bucket_has(agg[i], agg_cost[i]))
			return false;

	source_key(key, r, pkt, prefix);
	b = bucket_find(m, BUCKET_SOURCE, r->key, r->instance, pkt->family, prefix, key);
	cost = model_cost(&r->own, pkt->len);
	if (b) {
		bucket_refresh(m, b, r->own.limit, now, true);
	} else {
		/* New: a bucket holding `initial` within the admission budget, else overflow. */
		struct model_bucket *adm = bucket_get(m, BUCKET_ADMISSION, 0, r->instance, 0, 0,
						      zero, r->admit.limit, r->admit.limit, now);

		if (bucket_has(adm, r->admit.interval)) {
			adm->level -= r->admit.interval;
			b = bucket_get(m, BUCKET_SOURCE, r->key, r->instance, pkt->family, prefix,
				       key, r->own.limit, r->initial, now);
			source_start(b, r);
		} else {
			b = bucket_get(m, BUCKET_OVERFLOW, 0, r->instance, 0, 0, zero,
				       r->overflow.limit, r->overflow.limit, now);
			cost = model_cost(&r->overflow, pkt->len);
		}
	}
	if (!source_step(b, r, now, cost))
		return false;
	for (i = 0; i < n; i++)
		agg[i]->level -= agg_cost[i];
	return true;
}

/* Over the limit: the rule's action. */
static enum model_verdict over(const struct model_rule *r, const struct model_packet *pkt,
			       uint8_t *tos_out)
{
	uint8_t tos = pkt->tos;

	if (r->action == SLUICE_ACTION_DRY_RUN)
		return MV_WOULD;
	if (r->action != SLUICE_ACTION_MARK)
		return MV_DROP;
	if (r->mark_ecn) {
		/* Congestion Experienced needs an ECN-capable packet; else a router drops. */
		if (!(tos & 0x03))
			return MV_DROP;
		tos |= 0x03;
	}
	if (r->mark_dscp)
		tos = (uint8_t)(r->dscp << 2 | (tos & 0x03));
	*tos_out = tos;
	return MV_MARK;
}

enum model_verdict model_packet(struct model *m, const struct model_packet *pkt, uint64_t now,
				uint8_t *tos_out)
{
	const struct model_rule *r;

	*tos_out = pkt->tos;
	m->last_meter = -1;
	if (list_holds(m->deny, m->n_deny, pkt))
		return MV_DENY;
	if (list_holds(m->allow, m->n_allow, pkt))
		return MV_ALLOW;
	r = classify(m, pkt);
	m->last_meter = r->meter;
	if (meter(m, r, pkt, now))
		return MV_PASS;
	return over(r, pkt, tos_out);
}

/*
 * A byte bucket holds exactly what a frame of `burst` bytes costs, so such a
 * frame passes a full bucket: the capacity is the burst in bytes, costed
 * like a frame (rounded up), not the limit rounded down.
 */
static uint64_t capacity(const struct model_limiter *l, uint64_t burst)
{
	return l->bytes ? model_cost(l, (uint32_t)burst) : burst * l->interval;
}

/* The match classes a policy slot names, each only under its flag. */
static void model_classes_from_policy(struct model_rule *r, const struct sluice_policy *p)
{
	if (p->flags & SLUICE_POL_MATCH_SPORT) {
		r->sport_lo = p->sport_lo;
		r->sport_hi = p->sport_hi;
	}
	if (p->flags & SLUICE_POL_MATCH_TCP_FLAGS) {
		r->tcp_mask = p->tcp_flags_mask;
		r->tcp_value = p->tcp_flags;
	}
	r->icmp_type_on = p->flags & SLUICE_POL_MATCH_ICMP_TYPE;
	r->icmp_code_on = p->flags & SLUICE_POL_MATCH_ICMP_CODE;
	r->icmp_type = p->icmp_type;
	r->icmp_code = p->icmp_code;
	if (p->flags & SLUICE_POL_MATCH_LENGTH) {
		r->len_lo = p->len_lo;
		r->len_hi = p->len_hi;
	}
	r->dst_on = p->flags & SLUICE_POL_MATCH_DST;
	r->dst_len = p->dst_len;
	memcpy(r->dst, p->dst, sizeof(r->dst));
}

void model_rule_from_policy(struct model_rule *r, const struct sluice_policy *p, bool is_default,
			    unsigned int instance, bool stored_limits)
{
	bool bytes = p->flags & SLUICE_POL_BYTES;
	int i;

	memset(r, 0, sizeof(*r));
	r->instance = instance;
	r->is_default = is_default;
	if (!is_default) {
		r->family = p->family;
		r->cidr_len = p->cidr_len;
		memcpy(r->cidr, p->cidr, sizeof(r->cidr));
		r->proto = p->proto;
		r->dport_lo = p->dport_lo;
		r->dport_hi = p->dport_hi;
		r->syn = p->flags & SLUICE_POL_MATCH_SYN;
		model_classes_from_policy(r, p);
	}
	r->ipv4_prefix = p->ipv4_prefix;
	r->ipv6_prefix = p->ipv6_prefix;
	r->key = p->flags & SLUICE_POL_KEY_PAIR	 ? MODEL_KEY_PAIR
		 : p->flags & SLUICE_POL_KEY_DST ? MODEL_KEY_DST
						 : MODEL_KEY_SRC;
	r->own = (struct model_limiter){ p->interval, 0, bytes };
	r->own.limit = stored_limits ? p->limit : capacity(&r->own, p->burst);
	r->admit = (struct model_limiter){ p->admit_interval, p->admit_limit, false };
	/* The overflow bucket's burst is derived and not kept: its limit as computed. */
	r->overflow = (struct model_limiter){ p->overflow_interval, p->overflow_limit, bytes };
	r->initial = p->initial_burst ? capacity(&r->own, p->initial_burst) : r->own.limit;
	if (stored_limits)
		r->initial = p->limit - p->initial_offset;
	r->n_aggregates = p->n_aggregates;
	for (i = 0; i < p->n_aggregates && i < SLUICE_MAX_AGGREGATES; i++) {
		const struct sluice_aggregate *a = &p->aggregates[i];

		r->agg[i].family = a->family;
		r->agg[i].prefix_len = a->prefix_len;
		r->agg[i].lim = (struct model_limiter){ a->interval, 0,
							a->rate_unit != SLUICE_UNIT_PACKETS };
		r->agg[i].lim.limit = stored_limits ? a->limit : capacity(&r->agg[i].lim, a->burst);
	}
	r->meter = p->meter;
	r->window = (uint64_t)p->window_ms * (1000000ULL << SLUICE_TIME_SHIFT);
	r->warm_max = p->meter == SLUICE_METER_WARMUP ? p->warm_max : 0;
	r->action = p->action;
	r->dscp = p->dscp;
	r->mark_dscp = p->flags & SLUICE_POL_MARK_DSCP;
	r->mark_ecn = p->flags & SLUICE_POL_MARK_ECN;
}
