// SPDX-License-Identifier: GPL-2.0
/* A policy in memory: building fixed-point slots, comparing, validating. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include "window.h"
#include "base/clock.h"
#include "values/words.h"
#include "policy/policy.h"

/* TATs stay below 2^62 so max(TAT, now) + cost can never wrap. */
#define LIMIT_MAX (1ULL << 62)
/* Largest frame a byte rate must be able to cost (multi-buffer included). */
#define FRAME_BYTES_MAX (1ULL << 18)
/* Default burst of a byte rate: one second of it, but room for 64 kB. */
#define BYTE_BURST_MIN 65536
/*
 * A full-size Ethernet frame (1500-byte MTU): the least a byte window must
 * hold. A GCRA burst has no such floor when typed: a rule for small packets
 * (DNS) may want less; untyped, it is at least BYTE_BURST_MIN.
 */
#define FRAME_FULL_BYTES 1514U
/*
 * Rounding: a packet's cost rounds up to whole meter units (1/16 ns), so
 * it costs at most this many thousandths more than exact, and the long-run
 * rate stays within 0.1% under the configured one, never above: a packet
 * rate may cost no less than 999 units (at most 16M/s), a byte rate no less
 * than that for its smallest frame (at most 7680mbit/s).
 */
#define ROUNDING_PER_MILLE   1
#define FRAME_BYTES_ACCURATE 60

/*
 * How messages name a limiter: by the options that set its rate and burst,
 * as the CLI spells them (a config file says the same without the dashes).
 * An aggregate is named whole first, "--aggregate /24=5/s: ".
 */
struct limiter_name {
	const char *prefix;
	const char *rate;
	const char *burst;
};

static const struct limiter_name main_limiter = { "", "--rate", "--burst" };
static const struct limiter_name overflow_limiter = { "", "--overflow-rate", "its burst" };

/*
 * Points *why at a message made like printf and returns err. The text lives
 * until the thread's next refusal: callers print it straight away.
 */
__attribute__((format(printf, 3, 4))) static int refuse(int err, const char **why, const char *fmt,
							...)
{
	static _Thread_local char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*why = msg;
	return err;
}

/* A rate, burst, or CIDR as the operator would type it, for messages. */
struct spelled {
	char text[64];
};

static struct spelled rate_text(const struct rate *r)
{
	struct spelled out;

	format_rate(out.text, sizeof(out.text), r);
	return out;
}

static struct spelled burst_text(uint64_t value, bool bytes)
{
	struct spelled out;

	format_burst(out.text, sizeof(out.text), &(struct burst){ value, bytes });
	return out;
}

static struct spelled cidr_text(const struct cidr *c)
{
	struct spelled out;

	format_cidr(out.text, sizeof(out.text), c);
	return out;
}

void settings_default(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->action = SLUICE_ACTION_DROP;
	s->ipv4_prefix = SLUICE_DEFAULT_IPV4_PREFIX;
	s->ipv6_prefix = SLUICE_DEFAULT_IPV6_PREFIX;
}

uint64_t jiffy_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return UINT64_MAX;
	return (uint64_t)res.tv_sec * NSEC_PER_SEC + (uint64_t)res.tv_nsec;
}

static void masks_build(struct sluice_policy *p)
{
	int i;

	p->ipv4_mask = prefix_mask(p->ipv4_prefix);
	for (i = 0; i < 4; i++)
		p->ipv6_mask[i] = prefix_mask((int)p->ipv6_prefix - 32 * i);
}

/* Amount per second, for default bursts (0 below one per second). */
static uint64_t amount_per_second(const struct rate *r)
{
	return r->amount / (r->period_ns / NSEC_PER_SEC);
}

/*
 * Above max_per_sec (packets, or bytes for a bandwidth), exactly, whatever
 * the period: the documented bounds hold, not what rounding lets past them.
 */
static bool rate_above(const struct rate *r, uint64_t max_per_sec)
{
	unsigned __int128 max = (unsigned __int128)max_per_sec * r->period_ns;

	if (r->unit == SLUICE_UNIT_BITS)
		max *= 8;
	return (unsigned __int128)r->amount * NSEC_PER_SEC > max;
}

/* The burst is more than the bucket's limit can hold at this rate. */
static int burst_too_large(const struct limiter_name *n, const struct settings *s, uint64_t max,
			   const char **why)
{
	if (!s->burst.value)
		return refuse(-ERANGE, why, "%s%s %s is too slow for its default burst", n->prefix,
			      n->rate, rate_text(&s->rate).text);
	return refuse(-ERANGE, why, "%s%s %s is too large for %s %s (at most %s)", n->prefix,
		      n->burst, burst_text(s->burst.value, s->burst.bytes).text, n->rate,
		      rate_text(&s->rate).text, burst_text(max, s->burst.bytes).text);
}

static int meter_packets(struct sluice_policy *p, const struct settings *s,
			 const struct limiter_name *n, const char **why)
{
	uint64_t period = s->rate.period_ns << SLUICE_TIME_SHIFT;
	uint64_t burst = s->burst.value;

	if (s->burst.bytes)
		return refuse(-EINVAL, why,
			      "%s%s %s in bytes needs a byte rate (such as 10mbit/s), not %s %s",
			      n->prefix, n->burst, burst_text(burst, true).text, n->rate,
			      rate_text(&s->rate).text);
	if (!burst)
		burst = amount_per_second(&s->rate) ?: 1;
	/* T >= 999 units: rounding T up loses at most 0.1% of the rate. */
	if (rate_above(&s->rate, RATE_METERED_MAX_PER_SEC) ||
	    period < (1000 / ROUNDING_PER_MILLE - 1) * s->rate.amount)
		return refuse(-ERANGE, why,
			      "%s%s %s is too high to meter within 0.1%% (at most %lluM/s)",
			      n->prefix, n->rate, rate_text(&s->rate).text,
			      (unsigned long long)(RATE_METERED_MAX_PER_SEC / 1000000));
	/* Round T up: never admit faster than asked. */
	p->interval = (period + s->rate.amount - 1) / s->rate.amount;
	if (burst > LIMIT_MAX / p->interval)
		return burst_too_large(n, s, LIMIT_MAX / p->interval, why);
	p->limit = burst * p->interval;
	p->burst = burst;
	return 0;
}

/*
 * Whether the smallest frame's cost, rounded up twice (the per-byte
 * interval, then the frame's whole units), stays within 0.1% of exact:
 * (1 + len * (interval - exact)) / (len * exact) <= 1/999 in units of
 * 2^-SLUICE_BYTE_SHIFT, with exact = period / amount. Larger frames round
 * less.
 */
static bool bytes_accurate(unsigned __int128 period, uint64_t amount, unsigned __int128 interval)
{
	unsigned __int128 len = FRAME_BYTES_ACCURATE;
	unsigned __int128 excess = (1U << SLUICE_BYTE_SHIFT) * (unsigned __int128)amount +
				   len * (interval * amount - period);

	return excess * (1000 / ROUNDING_PER_MILLE - 1) <= len * period;
}

/*
 * The lowest bandwidth a limiter meters: a frame of FRAME_BYTES_MAX must
 * cost no more than LIMIT_MAX, at most 2^44 units per byte, in bits per
 * second (rounded up).
 */
static uint64_t bits_per_second_min(void)
{
	uint64_t unit_max = LIMIT_MAX / FRAME_BYTES_MAX;
	unsigned __int128 scaled = (unsigned __int128)8 * NSEC_PER_SEC
				   << (SLUICE_TIME_SHIFT + SLUICE_BYTE_SHIFT);

	return (uint64_t)((scaled + unit_max - 1) / unit_max);
}

static int meter_bytes(struct sluice_policy *p, const struct settings *s,
		       const struct limiter_name *n, const char **why)
{
	unsigned __int128 period = (unsigned __int128)s->rate.period_ns
				   << (SLUICE_TIME_SHIFT + SLUICE_BYTE_SHIFT);
	unsigned __int128 interval, limit;
	uint64_t burst = s->burst.value, bytes_per_second;

	if (burst && !s->burst.bytes)
		return refuse(-EINVAL, why,
			      "%s%s %s needs a burst in bytes (such as 64kB), not %s %s", n->prefix,
			      n->rate, rate_text(&s->rate).text, n->burst,
			      burst_text(burst, false).text);
	if (s->rate.unit == SLUICE_UNIT_BITS)
		period *= 8;
	interval = (period + s->rate.amount - 1) / s->rate.amount;
	if (interval * FRAME_BYTES_MAX > LIMIT_MAX)
		return refuse(-ERANGE, why, "%s%s %s is too low to meter (at least %llubit/s)",
			      n->prefix, n->rate, rate_text(&s->rate).text,
			      (unsigned long long)bits_per_second_min());
	if (rate_above(&s->rate, BYTE_RATE_METERED_MAX_PER_SEC) ||
	    !bytes_accurate(period, s->rate.amount, interval))
		return refuse(-ERANGE, why,
			      "%s%s %s is too high to meter within 0.1%% (at most %llumbit/s, "
			      "%lluMB/s)",
			      n->prefix, n->rate, rate_text(&s->rate).text,
			      (unsigned long long)(8 * BYTE_RATE_METERED_MAX_PER_SEC / 1000000),
			      (unsigned long long)(BYTE_RATE_METERED_MAX_PER_SEC / 1000000));
	bytes_per_second = amount_per_second(&s->rate) / (s->rate.unit == SLUICE_UNIT_BITS ? 8 : 1);
	if (!burst)
		burst = bytes_per_second > BYTE_BURST_MIN ? bytes_per_second : BYTE_BURST_MIN;
	/* Rounded up like a packet's cost: a frame of exactly the burst passes. */
	limit = (interval * burst + (1U << SLUICE_BYTE_SHIFT) - 1) >> SLUICE_BYTE_SHIFT;
	if (limit > LIMIT_MAX)
		return burst_too_large(
			n, s,
			(uint64_t)(((unsigned __int128)LIMIT_MAX << SLUICE_BYTE_SHIFT) / interval),
			why);
	p->interval = (uint64_t)interval;
	p->limit = (uint64_t)limit;
	p->burst = burst;
	p->flags |= SLUICE_POL_BYTES;
	return 0;
}

static struct spelled duration_text(uint64_t ns)
{
	struct spelled out;

	format_duration(out.text, sizeof(out.text), ns);
	return out;
}

/* Bits needed for v: 0 for 0. */
static unsigned int bit_length(uint64_t v)
{
	return v ? 64 - (unsigned int)__builtin_clzll(v) : 0;
}

/* Options a window algorithm has no use for: refused, not ignored. */
static int window_refuses(const struct settings *s, const char **why)
{
	const char *alg = algorithm_name(s->algorithm);

	if (s->burst.value)
		return refuse(-EINVAL, why,
			      "--burst does not apply to --algorithm %s: the limit per window is "
			      "--rate times --window",
			      alg);
	if (s->warmup_ns)
		return refuse(-EINVAL, why, "--warmup needs --algorithm gcra, not --algorithm %s",
			      alg);
	if (s->initial.value)
		return refuse(-EINVAL, why,
			      "--initial-burst does not apply to --algorithm %s: a new source "
			      "starts with an empty window",
			      alg);
	return 0;
}

/* The cost per window, rate x window, in packets or bytes; 0 and refused when not whole. */
static int window_limit(const struct settings *s, uint64_t window_ns, uint64_t *limit,
			const char **why)
{
	unsigned __int128 amount = (unsigned __int128)s->rate.amount * window_ns;
	unsigned __int128 per =
		(unsigned __int128)s->rate.period_ns * (s->rate.unit == SLUICE_UNIT_BITS ? 8 : 1);
	bool bytes = s->rate.unit != SLUICE_UNIT_PACKETS;

	if (amount % per || !(amount / per))
		return refuse(-EINVAL, why,
			      "--rate %s over a window of %s is not a whole number of %s (%.3f)",
			      rate_text(&s->rate).text, duration_text(window_ns).text,
			      bytes ? "bytes" : "packets", (double)amount / (double)per);
	if (amount / per > UINT64_MAX / 4)
		return refuse(-ERANGE, why, "--rate %s over a window of %s is too large",
			      rate_text(&s->rate).text, duration_text(window_ns).text);
	*limit = (uint64_t)(amount / per);
	return 0;
}

/*
 * The sliding window's bits per count: two counts below the window's
 * length in meter units (window.h), at most WINDOW_BITS_MAX each.
 */
static unsigned int sliding_bits(uint64_t window)
{
	unsigned int bits = 0;

	while (bits < WINDOW_BITS_MAX && 2 * (bits + 1) < 64 &&
	       (1ULL << (2 * (bits + 1))) <= window)
		bits++;
	return bits;
}

/* The largest cost per window the slot can count. */
static uint64_t window_count_max(uint8_t algorithm, uint64_t window)
{
	if (algorithm == SLUICE_METER_FIXED_WINDOW)
		return window - 1;
	return (1ULL << sliding_bits(window)) - 1;
}

/*
 * A byte window smaller than a full-size frame would never pass one:
 * refused, naming the least rate that fits one in the window.
 */
static int window_too_small(const struct settings *s, uint64_t window_ns, uint64_t limit,
			    const char **why)
{
	unsigned __int128 per =
		(unsigned __int128)s->rate.period_ns * (s->rate.unit == SLUICE_UNIT_BITS ? 8 : 1);
	struct rate least = s->rate;

	least.amount = (uint64_t)((FRAME_FULL_BYTES * per + window_ns - 1) / window_ns);
	return refuse(-EINVAL, why,
		      "--rate %s is %llu bytes per %s window, less than one full-size frame "
		      "(%u bytes): at least --rate %s for that window",
		      rate_text(&s->rate).text, (unsigned long long)limit,
		      duration_text(window_ns).text, FRAME_FULL_BYTES, rate_text(&least).text);
}

static int meter_window(struct sluice_policy *p, const struct settings *s, const char **why)
{
	uint64_t window_ns = settings_window_ns(s), limit = 0, max;
	uint64_t window = window_ns << SLUICE_TIME_SHIFT;
	bool bytes = s->rate.unit != SLUICE_UNIT_PACKETS;
	int err;

	err = window_refuses(s, why);
	if (!err && window_ns % (NSEC_PER_SEC / 1000))
		err = refuse(-EINVAL, why, "--window %s is not a whole number of milliseconds",
			     duration_text(window_ns).text);
	if (!err)
		err = window_limit(s, window_ns, &limit, why);
	if (err)
		return err;
	if (bytes && limit < FRAME_FULL_BYTES)
		return window_too_small(s, window_ns, limit, why);
	max = window_count_max(s->algorithm, window);
	if (limit > max)
		return refuse(-ERANGE, why,
			      "--rate %s makes %llu %s per %s window, more than --algorithm %s "
			      "counts (at most %llu for that window)",
			      rate_text(&s->rate).text, (unsigned long long)limit,
			      bytes ? "bytes" : "packets", duration_text(window_ns).text,
			      algorithm_name(s->algorithm), (unsigned long long)max);
	p->meter = s->algorithm;
	p->window_ms = (uint32_t)(window_ns / (NSEC_PER_SEC / 1000));
	p->window_ns = s->window_ns;
	p->limit = limit;
	p->burst = limit;
	/* One unit costs 1: unit_cost() then gives the packet, or its bytes. */
	p->interval = bytes ? 1ULL << SLUICE_BYTE_SHIFT : 1;
	p->flags |= bytes ? SLUICE_POL_BYTES : 0;
	if (s->algorithm == SLUICE_METER_SLIDING_WINDOW)
		p->state_bits = (uint8_t)sliding_bits(window);
	return 0;
}

/*
 * GCRA with a warm-up (include/warmup.h): stores up to warmup / T permits,
 * packed under a next-free moment kept to 2^bits meter units, which must
 * stay within 0.1% of T.
 */
static int meter_warmup(struct sluice_policy *p, const struct settings *s, const char **why)
{
	uint64_t warmup = s->warmup_ns << SLUICE_TIME_SHIFT, max;
	unsigned int bits, bits_max = bit_length(p->interval / (1000 / ROUNDING_PER_MILLE)) - 1;

	if (s->rate.unit != SLUICE_UNIT_PACKETS)
		return refuse(-EINVAL, why, "--warmup needs a packet rate, not --rate %s",
			      rate_text(&s->rate).text);
	if (s->burst.value || s->initial.value)
		return refuse(-EINVAL, why,
			      "--%s does not apply with --warmup: a warming source is paced, "
			      "its stored allowance is --warmup times --rate",
			      s->burst.value ? "burst" : "initial-burst");
	max = warmup / p->interval;
	bits = bit_length(max);
	/* Within 0.1%, max^2 <= warmup / 1000 < 2^41: it always fits 32 bits. */
	if (max < 2)
		return refuse(-EINVAL, why, "--warmup %s is shorter than two packets at --rate %s",
			      duration_text(s->warmup_ns).text, rate_text(&s->rate).text);
	if (p->interval < 1000 / ROUNDING_PER_MILLE || bits > bits_max)
		return refuse(-ERANGE, why,
			      "--warmup %s at --rate %s stores %llu packets, more than a warm-up "
			      "packs within 0.1%% at that rate (at most %llu)",
			      duration_text(s->warmup_ns).text, rate_text(&s->rate).text,
			      (unsigned long long)max,
			      p->interval < 1000 ? 0ULL
						 : (unsigned long long)((1ULL << bits_max) - 1));
	p->meter = SLUICE_METER_WARMUP;
	p->state_bits = (uint8_t)bits;
	p->warm_max = (uint32_t)max;
	p->warmup_ns = s->warmup_ns;
	/* No burst: a packet conforms once its moment has come. */
	p->limit = p->interval;
	p->burst = 1;
	return 0;
}

/* The source's own slot: GCRA (with a warm-up, maybe) or a window. */
static int meter_build(struct sluice_policy *p, const struct settings *s, const char **why)
{
	int err;

	if (s->algorithm != SLUICE_METER_GCRA)
		return meter_window(p, s, why);
	if (s->window_ns)
		return refuse(-EINVAL, why,
			      "--window %s needs a window algorithm (--algorithm fixed-window or "
			      "sliding-window)",
			      duration_text(s->window_ns).text);
	err = s->rate.unit == SLUICE_UNIT_PACKETS ? meter_packets(p, s, &main_limiter, why)
						  : meter_bytes(p, s, &main_limiter, why);
	if (!err && s->warmup_ns)
		err = meter_warmup(p, s, why);
	return err;
}

static int check_action(const struct settings *s, const char **why)
{
	bool marks = s->mark_dscp || s->mark_ecn;
	char dscp[16] = "";

	if (s->action == SLUICE_ACTION_MARK && !marks)
		return refuse(-EINVAL, why, "--action mark needs --dscp or --ecn");
	if (s->action == SLUICE_ACTION_MARK || !marks)
		return 0;
	snprintf(dscp, sizeof(dscp), "--dscp %u", s->dscp);
	return refuse(-EINVAL, why, "%s%s%s go%s with --action mark, not --action %s",
		      s->mark_dscp ? dscp : "", s->mark_dscp && s->mark_ecn ? " and " : "",
		      s->mark_ecn ? "--ecn" : "", s->mark_dscp && s->mark_ecn ? "" : "es",
		      action_name(s->action));
}

/* ", not --proto udp", or nothing when no protocol was given. */
static const char *proto_given(const struct match *m)
{
	static _Thread_local char text[32];

	if (!m->proto)
		return "";
	snprintf(text, sizeof(text), ", not --proto %s", proto_name(m->proto));
	return text;
}

/* "--dport 53" or "--sport 1-1023" needs TCP or UDP, whose headers have ports. */
static int check_ports(const char *name, uint16_t lo, uint16_t hi, const struct match *m,
		       const char **why)
{
	char ports[16];

	if (!hi || m->proto == IPPROTO_TCP || m->proto == IPPROTO_UDP)
		return 0;
	snprintf(ports, sizeof(ports), lo == hi ? "%u" : "%u-%u", lo, hi);
	return refuse(-EINVAL, why, "--%s %s needs --proto tcp or udp%s", name, ports,
		      proto_given(m));
}

static int check_match(const struct match *m, const char **why)
{
	char text[48];
	int err;

	if (m->syn && m->proto != IPPROTO_TCP)
		return refuse(-EINVAL, why, "--syn needs --proto tcp%s", proto_given(m));
	err = check_ports("dport", m->dport_lo, m->dport_hi, m, why);
	if (!err)
		err = check_ports("sport", m->sport_lo, m->sport_hi, m, why);
	if (err)
		return err;
	if (m->tcp_flags.mask && m->proto != IPPROTO_TCP) {
		format_tcp_flags(text, sizeof(text), &m->tcp_flags);
		return refuse(-EINVAL, why, "--tcp-flags %s needs --proto tcp%s", text,
			      proto_given(m));
	}
	if (m->icmp.type_given && m->proto != IPPROTO_ICMP && m->proto != IPPROTO_ICMPV6) {
		format_icmp_type(text, sizeof(text), &m->icmp);
		return refuse(-EINVAL, why, "--icmp-type %s needs --proto icmp or icmpv6%s", text,
			      proto_given(m));
	}
	if (m->dst.family && m->dst.family != m->cidr.family)
		return refuse(-EINVAL, why, "--dst %s is not of the family of the rule's %s",
			      cidr_text(&m->dst).text, cidr_text(&m->cidr).text);
	return 0;
}

/* The match classes into p, with their SLUICE_POL_MATCH_* bits. */
static void classes_build(struct sluice_policy *p, const struct match *m)
{
	int i;

	p->sport_lo = m->sport_lo;
	p->sport_hi = m->sport_hi;
	p->flags |= m->sport_hi ? SLUICE_POL_MATCH_SPORT : 0;
	p->len_lo = m->len_lo;
	p->len_hi = m->len_hi;
	p->flags |= m->len_hi ? SLUICE_POL_MATCH_LENGTH : 0;
	p->tcp_flags_mask = m->tcp_flags.mask;
	p->tcp_flags = m->tcp_flags.value;
	p->flags |= m->tcp_flags.mask ? SLUICE_POL_MATCH_TCP_FLAGS : 0;
	p->icmp_type = m->icmp.type;
	p->icmp_code = m->icmp.code;
	p->flags |= m->icmp.type_given ? SLUICE_POL_MATCH_ICMP_TYPE : 0;
	p->flags |= m->icmp.code_given ? SLUICE_POL_MATCH_ICMP_CODE : 0;
	if (!m->dst.family)
		return;
	p->flags |= SLUICE_POL_MATCH_DST;
	p->dst_len = m->dst.len;
	for (i = 0; i < 4; i++) {
		p->dst_mask[i] = prefix_mask((int)m->dst.len - 32 * i);
		p->dst[i] = m->dst.addr[i] & p->dst_mask[i];
	}
}

/* What classes_build wrote, back into m. */
static void classes_settings(const struct sluice_policy *p, struct match *m)
{
	if (p->flags & SLUICE_POL_MATCH_SPORT) {
		m->sport_lo = p->sport_lo;
		m->sport_hi = p->sport_hi;
	}
	if (p->flags & SLUICE_POL_MATCH_LENGTH) {
		m->len_lo = p->len_lo;
		m->len_hi = p->len_hi;
	}
	if (p->flags & SLUICE_POL_MATCH_TCP_FLAGS) {
		m->tcp_flags.mask = p->tcp_flags_mask;
		m->tcp_flags.value = p->tcp_flags;
	}
	m->icmp.type_given = !!(p->flags & SLUICE_POL_MATCH_ICMP_TYPE);
	m->icmp.code_given = !!(p->flags & SLUICE_POL_MATCH_ICMP_CODE);
	m->icmp.type = m->icmp.type_given ? p->icmp_type : 0;
	m->icmp.code = m->icmp.code_given ? p->icmp_code : 0;
	if (p->flags & SLUICE_POL_MATCH_DST) {
		m->dst.family = p->family;
		m->dst.len = p->dst_len;
		memcpy(m->dst.addr, p->dst, sizeof(m->dst.addr));
	}
}

/*
 * A rule's CIDR fixes its family: options only the other family has are
 * contradictions, refused rather than silently meaningless.
 */
static int check_family(const struct settings *s, const struct match *m, const char **why)
{
	bool v4 = m->cidr.family == SLUICE_FAMILY_IPV4;
	struct spelled cidr = cidr_text(&m->cidr);

	if (v4 && m->proto == IPPROTO_ICMPV6)
		return refuse(-EINVAL, why,
			      "--proto icmpv6 never matches an IPv4 rule, %s (use --proto icmp)",
			      cidr.text);
	if (!v4 && m->proto == IPPROTO_ICMP)
		return refuse(-EINVAL, why,
			      "--proto icmp never matches an IPv6 rule, %s (use --proto icmpv6)",
			      cidr.text);
	if (v4 && (s->ipv6_prefix_given || s->ipv6_prefix != SLUICE_DEFAULT_IPV6_PREFIX))
		return refuse(-EINVAL, why,
			      "--ipv6-prefix %u does not apply to an IPv4 rule, %s (use "
			      "--ipv4-prefix)",
			      s->ipv6_prefix, cidr.text);
	if (!v4 && (s->ipv4_prefix_given || s->ipv4_prefix != SLUICE_DEFAULT_IPV4_PREFIX))
		return refuse(-EINVAL, why,
			      "--ipv4-prefix %u does not apply to an IPv6 rule, %s (use "
			      "--ipv6-prefix)",
			      s->ipv4_prefix, cidr.text);
	return 0;
}

static const char *const key_kind_names[] = { "src", "dst", "pair" };

const char *key_kind_word(uint8_t kind)
{
	return key_kind_names[kind <= KEY_PAIR ? kind : KEY_SRC];
}

uint8_t policy_key_kind(const struct sluice_policy *p)
{
	return p->flags & SLUICE_POL_KEY_PAIR  ? KEY_PAIR
	       : p->flags & SLUICE_POL_KEY_DST ? KEY_DST
					       : KEY_SRC;
}

/*
 * --key dst or pair: the bucket is a destination's or a pair's, not a
 * source's, so what is about a source's own bucket does not apply; and an
 * IPv6 pair keeps 64 bits of each address, exactly (struct sluice_key).
 */
static int check_keys(const struct settings *s, const struct match *m, const char **why)
{
	const char *kind = key_kind_word(s->key_kind);
	const char *on = s->key_kind == KEY_DST ? "destination" : "pair";
	bool v6 = !m || m->cidr.family == SLUICE_FAMILY_IPV6;

	if (s->key_kind == KEY_SRC)
		return 0;
	if (s->n_aggregates)
		return refuse(
			-EINVAL, why,
			"--aggregate limits prefixes of the source, and --key %s keys buckets "
			"on the %s",
			kind, on);
	if (s->prove != PROVE_OFF)
		return refuse(-EINVAL, why,
			      "--prove gives a proven source its bucket, and --key %s keys buckets "
			      "on the %s",
			      kind, on);
	if (s->key_kind == KEY_PAIR && v6 && s->ipv6_prefix > 64)
		return refuse(-EINVAL, why,
			      "--key pair keeps 64 bits of each IPv6 address: --ipv6-prefix %u is "
			      "too long (64 or less)",
			      s->ipv6_prefix);
	return 0;
}

/* T and limit of a packet rate with a burst of one second of it (for admission). */
static void packet_gcra(const struct rate *r, __u64 *interval, __u64 *limit)
{
	uint64_t period = r->period_ns << SLUICE_TIME_SHIFT;
	uint64_t burst = amount_per_second(r) ?: 1;

	*interval = (period + r->amount - 1) / r->amount;
	*limit = burst * *interval;
}

/* --initial-burst is part of the burst: in its unit, and no more than all of it. */
static int check_initial(const struct sluice_policy *p, const struct settings *s, const char **why)
{
	bool bytes = p->flags & SLUICE_POL_BYTES;
	struct spelled burst = burst_text(p->burst, bytes);

	if (s->initial.bytes != bytes)
		return refuse(-EINVAL, why, "--initial-burst %s is in %s, the burst (%s) in %s",
			      burst_text(s->initial.value, s->initial.bytes).text,
			      s->initial.bytes ? "bytes" : "packets", burst.text,
			      bytes ? "bytes" : "packets");
	if (s->initial.value <= p->burst)
		return 0;
	if (s->burst.value)
		return refuse(-EINVAL, why, "--initial-burst %s is more than --burst %s",
			      burst_text(s->initial.value, bytes).text, burst.text);
	return refuse(-EINVAL, why,
		      "--initial-burst %s is more than the default burst, %s (for --rate %s)",
		      burst_text(s->initial.value, bytes).text, burst.text,
		      rate_text(&s->rate).text);
}

/* A budget of new buckets (--new-sources, --proven-sources) as a GCRA; 0 amount: the default. */
static int budget_build(const char *opt, struct rate r, uint64_t per_sec, __u64 *interval,
			__u64 *limit, const char **why)
{
	if (!r.amount) {
		r.amount = per_sec;
		r.period_ns = NSEC_PER_SEC;
		r.unit = SLUICE_UNIT_PACKETS;
	}
	if (r.unit != SLUICE_UNIT_PACKETS)
		return refuse(-EINVAL, why,
			      "--%s %s is a bandwidth: it takes a rate of sources (such as 10k/s)",
			      opt, rate_text(&r).text);
	/* The admission bucket keeps the limits' promise: within 0.1%, never over. */
	if (rate_above(&r, RATE_METERED_MAX_PER_SEC) ||
	    (r.period_ns << SLUICE_TIME_SHIFT) < (1000 / ROUNDING_PER_MILLE - 1) * r.amount)
		return refuse(-ERANGE, why,
			      "--%s %s is too high to meter within 0.1%% (at most %lluM/s)", opt,
			      rate_text(&r).text,
			      (unsigned long long)(RATE_METERED_MAX_PER_SEC / 1000000));
	packet_gcra(&r, interval, limit);
	return 0;
}

/* --prove: only where TCP SYNs can reach the rule, and with its own budget. */
static int prove_build(struct sluice_policy *p, const struct settings *s, const char **why)
{
	int err;

	if (s->prove == PROVE_OFF) {
		if (s->proven_sources.amount)
			return refuse(-EINVAL, why,
				      "--proven-sources %s needs --prove tcp or tcp-always",
				      rate_text(&s->proven_sources).text);
		return 0;
	}
	err = budget_build("proven-sources", s->proven_sources, DEFAULT_PROVEN_SOURCES_PER_SEC,
			   &p->prove_interval, &p->prove_limit, why);
	if (err)
		return err;
	p->flags |= SLUICE_POL_PROVE_TCP;
	p->flags |= s->prove == PROVE_TCP_ALWAYS ? SLUICE_POL_PROVE_ALWAYS : 0;
	p->proven_amount = s->proven_sources.amount;
	p->proven_period_ns = s->proven_sources.period_ns;
	return 0;
}

static int pressure_build(struct sluice_policy *p, const struct settings *s, const char **why)
{
	struct sluice_policy over = { 0 };
	struct settings o;
	int err;

	err = budget_build("new-sources", s->new_sources, DEFAULT_NEW_SOURCES_PER_SEC,
			   &p->admit_interval, &p->admit_limit, why);
	if (err)
		return err;

	/* The overflow bucket meters like the rule itself, at its own rate. */
	o = *s;
	if (s->overflow.amount) {
		if ((s->overflow.unit == SLUICE_UNIT_PACKETS) !=
		    (s->rate.unit == SLUICE_UNIT_PACKETS))
			return refuse(
				-EINVAL, why,
				"--overflow-rate %s must count what --rate %s counts (packets "
				"or bandwidth)",
				rate_text(&s->overflow).text, rate_text(&s->rate).text);
		o.rate = s->overflow;
		o.burst.value = 0;
		o.burst.bytes = false;
	}
	err = o.rate.unit == SLUICE_UNIT_PACKETS ? meter_packets(&over, &o, &overflow_limiter, why)
						 : meter_bytes(&over, &o, &overflow_limiter, why);
	if (err)
		return err;
	p->overflow_interval = over.interval;
	p->overflow_limit = over.limit;

	/* A new bucket holds `initial` of its burst: its TAT starts ahead. */
	if (s->initial.value) {
		err = check_initial(p, s, why);
		if (err)
			return err;
		/* Rounded as the limit is: initial-burst = burst is the whole bucket. */
		p->initial_offset =
			p->limit - (p->flags & SLUICE_POL_BYTES ? (s->initial.value * p->interval +
								   (1U << SLUICE_BYTE_SHIFT) - 1) >>
									  SLUICE_BYTE_SHIFT
								: s->initial.value * p->interval);
	}
	err = prove_build(p, s, why);
	if (err)
		return err;
	p->new_sources_amount = s->new_sources.amount;
	p->new_sources_period_ns = s->new_sources.period_ns;
	p->overflow_amount = s->overflow.amount;
	p->overflow_period_ns = s->overflow.period_ns;
	p->overflow_unit = s->overflow.unit;
	p->initial_burst = s->initial.value;
	p->flags |= s->on_full_pass ? SLUICE_POL_FAIL_OPEN : 0;
	return 0;
}

/* The family an aggregate limits: as typed, the rule's, or for the default by length. */
static uint8_t aggregate_family(const struct aggregate *a, uint8_t rule_family)
{
	if (a->family)
		return a->family;
	if (rule_family != SLUICE_FAMILY_ANY)
		return rule_family;
	return a->prefix_len <= 32 ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
}

static const char *family_name(uint8_t family)
{
	return family == SLUICE_FAMILY_IPV4 ? "IPv4" : "IPv6";
}

/* s->aggregates[n], built into out, against the rule and the aggregates before it. */
static int aggregate_check(const struct sluice_policy *p, const struct sluice_aggregate *out,
			   const struct settings *s, const struct match *m, unsigned int n,
			   const char **why)
{
	bool v4 = out->family == SLUICE_FAMILY_IPV4;
	unsigned int source_prefix = v4 ? p->ipv4_prefix : p->ipv6_prefix;
	char typed[96], other[96];
	unsigned int i;

	format_aggregate(typed, sizeof(typed), &s->aggregates[n]);
	if (m && out->family != m->cidr.family)
		return refuse(-EINVAL, why,
			      "--aggregate %s is %s: an aggregate must be of the rule's address "
			      "family (%s is %s)",
			      typed, family_name(out->family), cidr_text(&m->cidr).text,
			      family_name(m->cidr.family));
	if (!out->prefix_len)
		return refuse(-EINVAL, why, "--aggregate %s: the prefix length must be at least 1",
			      typed);
	if (out->prefix_len > (v4 ? 32 : 128))
		return refuse(-ERANGE, why,
			      "--aggregate %s: the prefix length is too long for IPv4 (at most 32)",
			      typed);
	if (out->prefix_len >= source_prefix)
		return refuse(-EINVAL, why,
			      "--aggregate %s must be wider than the source prefix, --%s-prefix %u",
			      typed, v4 ? "ipv4" : "ipv6", source_prefix);
	for (i = 0; i < n; i++) {
		if (p->aggregates[i].family == out->family &&
		    p->aggregates[i].prefix_len == out->prefix_len) {
			format_aggregate(other, sizeof(other), &s->aggregates[i]);
			return refuse(-EINVAL, why,
				      "--aggregate %s and --aggregate %s are on the same prefix "
				      "length",
				      other, typed);
		}
	}
	return 0;
}

/* One aggregate, metered like a limiter of its own rate and burst. */
static int aggregate_build(struct sluice_policy *p, const struct settings *rule,
			   const struct match *m, unsigned int n, const char **why)
{
	const struct aggregate *a = &rule->aggregates[n];
	struct sluice_aggregate *out = &p->aggregates[n];
	struct limiter_name name = { NULL, "rate", "burst" };
	struct sluice_policy meter = { 0 };
	char prefix[112], typed[96];
	struct settings s;
	int err, i;

	out->family = aggregate_family(a, m ? m->cidr.family : SLUICE_FAMILY_ANY);
	out->prefix_len = a->prefix_len;
	err = aggregate_check(p, out, rule, m, n, why);
	if (err)
		return err;
	settings_default(&s);
	s.rate = a->rate;
	s.burst = a->burst;
	format_aggregate(typed, sizeof(typed), a);
	snprintf(prefix, sizeof(prefix), "--aggregate %s: ", typed);
	name.prefix = prefix;
	err = a->rate.unit == SLUICE_UNIT_PACKETS ? meter_packets(&meter, &s, &name, why)
						  : meter_bytes(&meter, &s, &name, why);
	if (err)
		return err;
	out->interval = meter.interval;
	out->limit = meter.limit;
	out->burst = meter.burst;
	out->rate_amount = a->rate.amount;
	out->rate_period_ns = a->rate.period_ns;
	out->rate_unit = a->rate.unit;
	out->typed = (a->family ? SLUICE_AGG_FAMILY : 0) | (a->burst.value ? SLUICE_AGG_BURST : 0);
	if (out->family == SLUICE_FAMILY_IPV4)
		out->mask[0] = prefix_mask(out->prefix_len);
	else
		for (i = 0; i < 4; i++)
			out->mask[i] = prefix_mask((int)out->prefix_len - 32 * i);
	return 0;
}

static int aggregates_build(struct sluice_policy *p, const struct settings *s,
			    const struct match *m, const char **why)
{
	unsigned int i;
	int err;

	if (s->n_aggregates > SLUICE_MAX_AGGREGATES)
		return refuse(-E2BIG, why, "at most %d --aggregate per rule, not %u",
			      SLUICE_MAX_AGGREGATES, s->n_aggregates);
	for (i = 0; i < s->n_aggregates; i++) {
		err = aggregate_build(p, s, m, i, why);
		if (err)
			return err;
	}
	p->n_aggregates = (uint8_t)s->n_aggregates;
	return 0;
}

static void aggregates_settings(const struct sluice_policy *p, struct settings *s)
{
	const struct sluice_aggregate *in;
	struct aggregate *a;
	unsigned int i;

	s->n_aggregates =
		p->n_aggregates < SLUICE_MAX_AGGREGATES ? p->n_aggregates : SLUICE_MAX_AGGREGATES;
	for (i = 0; i < s->n_aggregates; i++) {
		in = &p->aggregates[i];
		a = &s->aggregates[i];
		memset(a, 0, sizeof(*a));
		a->family = in->typed & SLUICE_AGG_FAMILY ? in->family : 0;
		a->prefix_len = in->prefix_len;
		a->rate.amount = in->rate_amount;
		a->rate.period_ns = in->rate_period_ns;
		a->rate.unit = in->rate_unit;
		if (in->typed & SLUICE_AGG_BURST) {
			a->burst.value = in->burst;
			a->burst.bytes = in->rate_unit != SLUICE_UNIT_PACKETS;
		}
	}
}

static bool aggregate_same(const struct aggregate *x, const struct aggregate *y)
{
	return x->rate.amount == y->rate.amount && x->rate.period_ns == y->rate.period_ns &&
	       x->rate.unit == y->rate.unit && x->burst.value == y->burst.value &&
	       x->burst.bytes == y->burst.bytes;
}

/* The aggregate of s on like's family and prefix length, or NULL. */
static const struct aggregate *aggregate_on(const struct settings *s, const struct aggregate *like)
{
	unsigned int i;

	for (i = 0; i < s->n_aggregates && i < SLUICE_MAX_AGGREGATES; i++)
		if (s->aggregates[i].family == like->family &&
		    s->aggregates[i].prefix_len == like->prefix_len)
			return &s->aggregates[i];
	return NULL;
}

/*
 * The same aggregates in any order: each limits a prefix length of its
 * own, and what a later one refuses the earlier give back, so their order
 * means nothing. A rule whose file lists them in another order keeps its
 * id, and so its buckets.
 */
static bool aggregates_equal(const struct settings *a, const struct settings *b)
{
	const struct aggregate *y;
	unsigned int i;

	if (a->n_aggregates != b->n_aggregates)
		return false;
	for (i = 0; i < a->n_aggregates && i < SLUICE_MAX_AGGREGATES; i++) {
		y = aggregate_on(b, &a->aggregates[i]);
		if (!y || !aggregate_same(&a->aggregates[i], y))
			return false;
	}
	return true;
}

int policy_build(struct sluice_policy *p, const struct settings *s, const struct match *m,
		 uint16_t id, const char **why)
{
	int err;

	memset(p, 0, sizeof(*p));
	if (!s->rate.amount || !s->rate.period_ns)
		return refuse(-EINVAL, why, "--rate must be greater than zero");
	err = check_action(s, why);
	if (!err && m)
		err = check_match(m, why);
	if (!err && m)
		err = check_family(s, m, why);
	if (!err)
		err = check_keys(s, m, why);
	if (!err && m && s->prove && m->proto && m->proto != IPPROTO_TCP)
		err = refuse(-EINVAL, why,
			     "--prove answers TCP SYNs, and this rule matches --proto %s only",
			     proto_name(m->proto));
	if (!err)
		err = meter_build(p, s, why);
	if (!err)
		err = pressure_build(p, s, why);
	if (err)
		return err;

	p->rate_amount = s->rate.amount;
	p->rate_period_ns = s->rate.period_ns;
	p->rate_unit = s->rate.unit;
	p->flags |= s->burst.value ? SLUICE_POL_BURST_EXPLICIT : 0;
	p->flags |= s->mark_dscp ? SLUICE_POL_MARK_DSCP : 0;
	p->flags |= s->mark_ecn ? SLUICE_POL_MARK_ECN : 0;
	p->flags |= s->key_kind == KEY_DST ? SLUICE_POL_KEY_DST : 0;
	p->flags |= s->key_kind == KEY_PAIR ? SLUICE_POL_KEY_PAIR : 0;
	p->id = id;
	p->action = (uint8_t)s->action;
	p->dscp = s->dscp;
	p->ipv4_prefix = (uint8_t)s->ipv4_prefix;
	p->ipv6_prefix = (uint8_t)s->ipv6_prefix;
	masks_build(p);
	err = aggregates_build(p, s, m, why) ?: ban_build(p, s, why);
	if (err)
		return err;
	if (m) {
		p->family = m->cidr.family;
		p->cidr_len = m->cidr.len;
		memcpy(p->cidr, m->cidr.addr, sizeof(p->cidr));
		p->proto = m->proto;
		p->dport_lo = m->dport_lo;
		p->dport_hi = m->dport_hi;
		p->flags |= m->syn ? SLUICE_POL_MATCH_SYN : 0;
		classes_build(p, m);
	}
	return 0;
}

void policy_settings(const struct sluice_policy *p, struct settings *s, struct match *m)
{
	settings_default(s);
	s->rate.amount = p->rate_amount;
	s->rate.period_ns = p->rate_period_ns;
	s->rate.unit = p->rate_unit;
	s->algorithm = p->meter == SLUICE_METER_WARMUP ? SLUICE_METER_GCRA : p->meter;
	s->window_ns = p->window_ns;
	s->warmup_ns = p->warmup_ns;
	if (p->flags & SLUICE_POL_BURST_EXPLICIT) {
		s->burst.value = p->burst;
		s->burst.bytes = !!(p->flags & SLUICE_POL_BYTES);
	}
	s->action = p->action;
	s->dscp = p->dscp;
	s->mark_dscp = !!(p->flags & SLUICE_POL_MARK_DSCP);
	s->mark_ecn = !!(p->flags & SLUICE_POL_MARK_ECN);
	s->ipv4_prefix = p->ipv4_prefix;
	s->ipv6_prefix = p->ipv6_prefix;
	s->key_kind = policy_key_kind(p);
	s->new_sources.amount = p->new_sources_amount;
	s->new_sources.period_ns = p->new_sources_period_ns;
	s->overflow.amount = p->overflow_amount;
	s->overflow.period_ns = p->overflow_period_ns;
	s->overflow.unit = p->overflow_unit;
	s->initial.value = p->initial_burst;
	s->initial.bytes = p->initial_burst && (p->flags & SLUICE_POL_BYTES);
	s->on_full_pass = !!(p->flags & SLUICE_POL_FAIL_OPEN);
	s->prove = !(p->flags & SLUICE_POL_PROVE_TCP)	? PROVE_OFF
		   : p->flags & SLUICE_POL_PROVE_ALWAYS ? PROVE_TCP_ALWAYS
							: PROVE_TCP;
	s->proven_sources.amount = p->proven_amount;
	s->proven_sources.period_ns = p->proven_period_ns;
	aggregates_settings(p, s);
	ban_settings(p, s);
	if (!m)
		return;
	memset(m, 0, sizeof(*m));
	m->cidr.family = p->family;
	m->cidr.len = p->cidr_len;
	memcpy(m->cidr.addr, p->cidr, sizeof(m->cidr.addr));
	m->proto = p->proto;
	m->dport_lo = p->dport_lo;
	m->dport_hi = p->dport_hi;
	m->syn = !!(p->flags & SLUICE_POL_MATCH_SYN);
	classes_settings(p, m);
}

bool match_equal(const struct match *a, const struct match *b)
{
	return a->cidr.family == b->cidr.family && a->cidr.len == b->cidr.len &&
	       !memcmp(a->cidr.addr, b->cidr.addr, sizeof(a->cidr.addr)) && a->proto == b->proto &&
	       a->dport_lo == b->dport_lo && a->dport_hi == b->dport_hi && a->syn == b->syn &&
	       a->sport_lo == b->sport_lo && a->sport_hi == b->sport_hi &&
	       a->tcp_flags.mask == b->tcp_flags.mask && a->tcp_flags.value == b->tcp_flags.value &&
	       a->icmp.type_given == b->icmp.type_given && a->icmp.type == b->icmp.type &&
	       a->icmp.code_given == b->icmp.code_given && a->icmp.code == b->icmp.code &&
	       a->len_lo == b->len_lo && a->len_hi == b->len_hi && a->dst.family == b->dst.family &&
	       a->dst.len == b->dst.len && !memcmp(a->dst.addr, b->dst.addr, sizeof(a->dst.addr));
}

bool settings_equal(const struct settings *a, const struct settings *b)
{
	return a->rate.amount == b->rate.amount && a->rate.period_ns == b->rate.period_ns &&
	       a->rate.unit == b->rate.unit && a->burst.value == b->burst.value &&
	       a->algorithm == b->algorithm && a->window_ns == b->window_ns &&
	       a->warmup_ns == b->warmup_ns && a->burst.bytes == b->burst.bytes &&
	       a->action == b->action && a->dscp == b->dscp && a->mark_dscp == b->mark_dscp &&
	       a->mark_ecn == b->mark_ecn && a->ipv4_prefix == b->ipv4_prefix &&
	       a->ipv6_prefix == b->ipv6_prefix && a->key_kind == b->key_kind &&
	       a->new_sources.amount == b->new_sources.amount &&
	       a->new_sources.period_ns == b->new_sources.period_ns &&
	       a->overflow.amount == b->overflow.amount &&
	       a->overflow.period_ns == b->overflow.period_ns &&
	       a->overflow.unit == b->overflow.unit && a->initial.value == b->initial.value &&
	       a->on_full_pass == b->on_full_pass && a->prove == b->prove &&
	       a->proven_sources.amount == b->proven_sources.amount &&
	       a->proven_sources.period_ns == b->proven_sources.period_ns &&
	       aggregates_equal(a, b) && ban_settings_equal(a, b);
}

int doc_find_rule(const struct policy_doc *doc, const struct match *m)
{
	int i;

	for (i = 0; i < doc->n_rules; i++)
		if (match_equal(&doc->rules[i].match, m))
			return i;
	return -1;
}

bool policy_meter_same(const struct sluice_policy *old, const struct sluice_policy *new)
{
	if (old->meter != new->meter)
		return false;
	switch (new->meter) {
	case SLUICE_METER_GCRA:
		return true;
	case SLUICE_METER_WARMUP:
		return old->interval == new->interval && old->warm_max == new->warm_max &&
		       old->state_bits == new->state_bits;
	}
	return old->window_ms == new->window_ms && old->state_bits == new->state_bits &&
	       (old->flags & SLUICE_POL_BYTES) == (new->flags &SLUICE_POL_BYTES);
}

void doc_init(struct policy_doc *doc)
{
	memset(doc, 0, sizeof(*doc));
	settings_default(&doc->dflt);
	doc->attach.max_sources = SLUICE_DEFAULT_MAX_SOURCES;
	doc->next_id = 1;
}

void doc_free(struct policy_doc *doc)
{
	free(doc->allow.items);
	free(doc->deny.items);
	doc->allow.items = doc->deny.items = NULL;
	doc->allow.count = doc->deny.count = 0;
	doc->allow.capacity = doc->deny.capacity = 0;
}

static bool cidr_equal(const struct cidr *a, const struct cidr *b)
{
	return a->family == b->family && a->len == b->len &&
	       !memcmp(a->addr, b->addr, sizeof(a->addr));
}

int cidr_list_add_until(struct cidr_list *l, const struct cidr *c, uint64_t expires_ns)
{
	struct list_entry *grown;

	if (l->count == l->capacity) {
		size_t cap = l->capacity ? 2 * l->capacity : 64;

		grown = realloc(l->items, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		l->items = grown;
		l->capacity = cap;
	}
	l->items[l->count++] = (struct list_entry){ *c, expires_ns };
	return 0;
}

int cidr_list_add(struct cidr_list *l, const struct cidr *c)
{
	return cidr_list_add_until(l, c, 0);
}

uint64_t expiry_later(uint64_t a, uint64_t b)
{
	return !a || !b ? 0 : a > b ? a : b;
}

bool entry_expired(const struct list_entry *e, uint64_t now_ns)
{
	return e->expires_ns && e->expires_ns <= now_ns;
}

int cidr_cmp(const struct cidr *a, const struct cidr *b)
{
	int d;

	if (a->family != b->family)
		return a->family - b->family;
	d = memcmp(a->addr, b->addr, sizeof(a->addr));
	return d ? d : a->len - b->len;
}

/* Entries by CIDR alone (the CIDR leads struct list_entry). */
static int entry_cmp(const void *x, const void *y)
{
	return cidr_cmp(&((const struct list_entry *)x)->cidr,
			&((const struct list_entry *)y)->cidr);
}

void cidr_list_sort(struct cidr_list *l)
{
	struct list_entry *kept;
	size_t i, n = 0;

	if (!l->count)
		return;
	qsort(l->items, l->count, sizeof(*l->items), entry_cmp);
	for (i = 1; i < l->count; i++) {
		kept = &l->items[n];
		if (cidr_equal(&kept->cidr, &l->items[i].cidr))
			kept->expires_ns = expiry_later(kept->expires_ns, l->items[i].expires_ns);
		else
			l->items[++n] = l->items[i];
	}
	l->count = n + 1;
}

bool cidr_list_has(const struct cidr_list *l, const struct cidr *c)
{
	const struct list_entry key = { .cidr = *c };

	return l->count && bsearch(&key, l->items, l->count, sizeof(*l->items), entry_cmp);
}

bool cidr_list_equal(const struct cidr_list *a, const struct cidr_list *b)
{
	size_t i;

	if (a->count != b->count)
		return false;
	for (i = 0; i < a->count; i++)
		if (!cidr_equal(&a->items[i].cidr, &b->items[i].cidr) ||
		    a->items[i].expires_ns != b->items[i].expires_ns)
			return false;
	return true;
}

/* An entry of both lists: add keeps the later expiry, remove drops it. */
static int merge_both(const struct list_entry *x, const struct list_entry *y, bool add,
		      struct cidr_list *out)
{
	return add ? cidr_list_add_until(out, &x->cidr, expiry_later(x->expires_ns, y->expires_ns))
		   : 0;
}

int cidr_list_merge(const struct cidr_list *a, const struct cidr_list *b, bool add,
		    struct cidr_list *out, size_t *missing)
{
	size_t i = 0, j = 0;
	int d, err = 0;

	memset(out, 0, sizeof(*out));
	while (!err && (i < a->count || j < b->count)) {
		d = i == a->count ? 1 : j == b->count ? -1 : entry_cmp(&a->items[i], &b->items[j]);
		if (d < 0) {
			err = cidr_list_add_until(out, &a->items[i].cidr, a->items[i].expires_ns);
			i++;
		} else if (d == 0) {
			err = merge_both(&a->items[i++], &b->items[j++], add, out);
		} else if (add) {
			err = cidr_list_add_until(out, &b->items[j].cidr, b->items[j].expires_ns);
			j++;
		} else {
			*missing = j;
			err = -ENOENT;
		}
	}
	if (err) {
		free(out->items);
		memset(out, 0, sizeof(*out));
	}
	return err;
}

bool cidr_contains(const struct cidr *outer, const struct cidr *inner)
{
	int i;

	if (outer->family != inner->family || outer->len > inner->len)
		return false;
	for (i = 0; i < 4; i++)
		if ((inner->addr[i] & prefix_mask((int)outer->len - 32 * i)) != outer->addr[i])
			return false;
	return true;
}

/*
 * How narrowly a rule's class picks packets: the narrower wins a tie. A
 * protocol 1; a destination port, a source port, a length, a destination
 * or an ICMP type 2 each (its code 1 more); SYN or TCP flags 4 each.
 */
static int l4_specificity(const struct match *m)
{
	return (m->syn ? 4 : 0) + (m->dport_hi ? 2 : 0) + (m->proto ? 1 : 0) +
	       (m->sport_hi ? 2 : 0) + (m->tcp_flags.mask ? 4 : 0) + (m->icmp.type_given ? 2 : 0) +
	       (m->icmp.code_given ? 1 : 0) + (m->len_hi ? 2 : 0) + (m->dst.family ? 2 : 0);
}

/* Orders rule a before rule b when a is more specific (then by position). */
static bool rule_before(const struct policy_doc *doc, int a, int b)
{
	const struct match *x = &doc->rules[a].match, *y = &doc->rules[b].match;

	if (x->cidr.len != y->cidr.len)
		return x->cidr.len > y->cidr.len;
	if (l4_specificity(x) != l4_specificity(y))
		return l4_specificity(x) > l4_specificity(y);
	return a < b;
}

int doc_group(const struct policy_doc *doc, const struct cidr *c, int *members)
{
	int i, j, n = 0, tmp;

	for (i = 0; i < doc->n_rules; i++) {
		if (!cidr_contains(&doc->rules[i].match.cidr, c))
			continue;
		if (n == SLUICE_MAX_CANDIDATES)
			return -E2BIG;
		members[n++] = i;
	}
	/* Insertion sort: groups are at most SLUICE_MAX_CANDIDATES long. */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && rule_before(doc, members[j], members[j - 1]); j--) {
			tmp = members[j];
			members[j] = members[j - 1];
			members[j - 1] = tmp;
		}
	return n;
}

int doc_set_default(struct policy_doc *doc, const struct settings *s, const char **why)
{
	struct sluice_policy p;
	int err = policy_build(&p, s, NULL, 0, why);

	if (err)
		return err;
	doc->dflt = *s;
	doc->dflt_policy = p;
	return 0;
}

int doc_add_rule(struct policy_doc *doc, const struct settings *s, const struct match *m,
		 const char **why)
{
	struct rule *r = &doc->rules[doc->n_rules];
	int err;

	if (doc->n_rules == SLUICE_MAX_POLICIES - 1)
		return refuse(-E2BIG, why, "too many rules (at most %d)", SLUICE_MAX_POLICIES - 1);
	err = policy_build(&r->policy, s, m, 0, why);
	if (err)
		return err;
	r->settings = *s;
	r->match = *m;
	r->id = 0;
	doc->n_rules++;
	return 0;
}

int doc_provers(const struct policy_doc *doc)
{
	int i, n = doc->dflt.prove != PROVE_OFF;

	for (i = 0; i < doc->n_rules; i++)
		n += doc->rules[i].settings.prove != PROVE_OFF;
	return n;
}

int doc_validate(const struct policy_doc *doc, const char **why)
{
	int members[SLUICE_MAX_CANDIDATES];
	int i;

	/* Compiled when set (doc_set_default, doc_add_rule): a rate is never 0 there. */
	if (!doc->dflt_policy.rate_amount)
		return refuse(-EINVAL, why, "--rate must be greater than zero");
	for (i = 0; i < doc->n_rules; i++)
		if (doc_group(doc, &doc->rules[i].match.cidr, members) < 0)
			return refuse(-E2BIG, why, "more than %d rules cover the sources of %s",
				      SLUICE_MAX_CANDIDATES,
				      cidr_text(&doc->rules[i].match.cidr).text);
	return 0;
}

int doc_rule_index(const struct policy_doc *doc, uint16_t policy)
{
	int i;

	if (policy == doc->dflt_id)
		return -1;
	for (i = 0; i < doc->n_rules; i++)
		if (doc->rules[i].id == policy)
			return i;
	return -2;
}

int rule_policy(const struct policy_doc *doc, uint16_t policy, struct sluice_policy *p)
{
	int i = doc_rule_index(doc, policy);

	if (i == -2)
		return -ENOENT;
	*p = i < 0 ? doc->dflt_policy : doc->rules[i].policy;
	p->id = policy;
	return 0;
}
