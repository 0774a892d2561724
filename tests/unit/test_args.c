// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the userspace parsers, from tables of good and bad input. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "values/iface.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "gcra.h"
#include "harness.h"
#include "policy/policy.h"
#include <stdbool.h>
#include "unit.h"

struct rate_case {
	const char *in;
	int err;
	uint64_t amount, period_ns;
	uint8_t unit;
};

/* clang-format off: one case per line */
static const struct rate_case rate_cases[] = {
	{ "500/s", 0, 500, NSEC_PER_SEC },
	{ "30/m", 0, 30, 60 * NSEC_PER_SEC },
	{ "2/h", 0, 2, 3600 * NSEC_PER_SEC },
	{ "10k/s", 0, 10000, NSEC_PER_SEC },
	{ "3M/s", 0, 3000000, NSEC_PER_SEC },
	{ "1000M/s", 0, 1000000000, NSEC_PER_SEC },
	{ "1/h", 0, 1, 3600 * NSEC_PER_SEC },
	{ "0/s", -EINVAL },
	{ "0k/m", -EINVAL },
	{ "-5/s", -EINVAL },
	{ "+5/s", -EINVAL },
	{ "5", -EINVAL },
	{ "5/", -EINVAL },
	{ "/s", -EINVAL },
	{ "5/d", -EINVAL },
	{ "5/sec", -EINVAL },
	{ "5x/s", -EINVAL },
	{ "5K/s", -EINVAL },
	{ "5.5/s", -EINVAL },
	{ " 5/s", -EINVAL },
	{ "5 /s", -EINVAL },
	{ "0x10/s", -EINVAL },
	{ "", -EINVAL },
	{ "10mbit/s", 0, 10000000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "1gbit/s", 0, 1000000000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "1Gbit/s", 0, 1000000000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "500kB/s", 0, 500000, NSEC_PER_SEC, SLUICE_UNIT_BYTES },
	{ "64bit/m", 0, 64, 60 * NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "2MB/h", 0, 2000000, 3600 * NSEC_PER_SEC, SLUICE_UNIT_BYTES },
	{ "10Mb/s", -EINVAL },
	{ "10kb/s", -EINVAL },
	{ "10mB/s", -EINVAL },
	{ "0kbit/s", -EINVAL },
	{ "2000gbit/s", -ERANGE },
	{ "1001M/s", -ERANGE },
	{ "99999999999999999999/s", -ERANGE },
	{ "18446744073709551615M/s", -ERANGE },
};
/* clang-format on */

struct count_case {
	const char *in;
	uint64_t min, max;
	int err;
	uint64_t value;
};

/* clang-format off: one case per line */
static const struct count_case count_cases[] = {
	{ "1", 1, 100, 0, 1 },	       { "100", 1, 100, 0, 100 },
	{ "2k", 1, 1000000, 0, 2000 }, { "1M", 1, 1000000, 0, 1000000 },
	{ "0", 1, 100, -ERANGE },      { "101", 1, 100, -ERANGE },
	{ "2M", 1, 1000000, -ERANGE }, { "-1", 1, 100, -EINVAL },
	{ "1.5", 1, 100, -EINVAL },    { "abc", 1, 100, -EINVAL },
	{ "", 1, 100, -EINVAL },       { "18446744073709551616", 1, UINT64_MAX, -ERANGE },
};
/* clang-format on */

struct prefix_case {
	const char *in;
	unsigned int max;
	int err;
	unsigned int value;
};

/* clang-format off: one case per line */
static const struct prefix_case prefix_cases[] = {
	{ "32", 32, 0, 32 },	 { "/24", 32, 0, 24 },	{ "0", 32, 0, 0 },
	{ "128", 128, 0, 128 },	 { "64", 128, 0, 64 },	{ "33", 32, -ERANGE },
	{ "129", 128, -ERANGE }, { "-1", 32, -EINVAL }, { "24x", 32, -EINVAL },
	{ "", 32, -EINVAL },	 { "/", 32, -EINVAL },	{ "4294967296", 32, -ERANGE },
};
/* clang-format on */

static void test_rates(void)
{
	struct rate r;
	const char *why = NULL;
	char name[96];
	size_t i;
	int err;

	for (i = 0; i < sizeof(rate_cases) / sizeof(rate_cases[0]); i++) {
		const struct rate_case *c = &rate_cases[i];

		memset(&r, 0, sizeof(r));
		err = parse_rate(c->in, &r, &why);
		snprintf(name, sizeof(name), "rate '%s'", c->in);
		check(err == c->err && (err || (r.amount == c->amount &&
						r.period_ns == c->period_ns && r.unit == c->unit)),
		      name, "got %d (%s) %llu/%lluns unit %u", err, err ? why : "",
		      (unsigned long long)r.amount, (unsigned long long)r.period_ns, r.unit);
	}
}

static void test_counts(void)
{
	const char *why = NULL;
	char name[96];
	uint64_t v;
	size_t i;
	int err;

	for (i = 0; i < sizeof(count_cases) / sizeof(count_cases[0]); i++) {
		const struct count_case *c = &count_cases[i];

		v = 0;
		err = parse_count(c->in, c->min, c->max, &v, &why);
		snprintf(name, sizeof(name), "count '%s' in [%llu, %llu]", c->in,
			 (unsigned long long)c->min, (unsigned long long)c->max);
		check(err == c->err && (err || v == c->value), name, "got %d %llu", err,
		      (unsigned long long)v);
	}
}

static void test_prefixes(void)
{
	const char *why = NULL;
	unsigned int v;
	char name[96];
	size_t i;
	int err;

	for (i = 0; i < sizeof(prefix_cases) / sizeof(prefix_cases[0]); i++) {
		const struct prefix_case *c = &prefix_cases[i];

		v = 999;
		err = parse_prefix(c->in, c->max, &v, &why);
		snprintf(name, sizeof(name), "prefix '%s' up to %u", c->in, c->max);
		check(err == c->err && (err || v == c->value), name, "got %d %u", err, v);
	}
}

static void test_words(void)
{
	const char *why;
	uint32_t v = 0;

	check(!parse_action("drop", &v, &why) && v == SLUICE_ACTION_DROP, "action drop",
	      "unexpected result");
	check(!parse_action("dry-run", &v, &why) && v == SLUICE_ACTION_DRY_RUN, "action dry-run",
	      "unexpected result");
	check(!parse_action("mark", &v, &why) && v == SLUICE_ACTION_MARK, "action mark",
	      "unexpected result");
	check(parse_action("DROP", &v, &why) == -EINVAL, "action is case-sensitive",
	      "unexpected result");
	check(!parse_mode("native", &v, &why) && !parse_mode("generic", &v, &why),
	      "modes native and generic", "unexpected result");
	check(parse_mode("offload", &v, &why) == -EINVAL, "mode offload is refused",
	      "unexpected result");
}

struct burst_case {
	const char *in;
	int err;
	uint64_t value;
	bool bytes;
};

/* clang-format off: one case per line */
static const struct burst_case burst_cases[] = {
	{ "1", 0, 1, false },	    { "2k", 0, 2000, false },	 { "64kB", 0, 64000, true },
	{ "1500B", 0, 1500, true }, { "1MB", 0, 1000000, true }, { "0", -ERANGE },
	{ "0kB", -ERANGE },	    { "8kbit", -EINVAL },	 { "64KB", -EINVAL },
	{ "lots", -EINVAL },	    { "2000M", -ERANGE },
};
/* clang-format on */

static void test_bursts(void)
{
	const char *why = NULL;
	struct burst b;
	char name[96];
	size_t i;
	int err;

	for (i = 0; i < sizeof(burst_cases) / sizeof(burst_cases[0]); i++) {
		const struct burst_case *c = &burst_cases[i];

		memset(&b, 0, sizeof(b));
		err = parse_burst(c->in, &b, &why);
		snprintf(name, sizeof(name), "burst '%s'", c->in);
		check(err == c->err && (err || (b.value == c->value && b.bytes == c->bytes)), name,
		      "got %d %llu %d", err, (unsigned long long)b.value, b.bytes);
	}
}

struct aggregate_case {
	const char *in;
	int err;
	const char *canonical; /* format_aggregate's spelling */
	uint8_t family, prefix_len;
};

/* clang-format off: one case per line */
static const struct aggregate_case aggregate_cases[] = {
	{ "/24=5000/s", 0, "/24=5k/s", 0, 24 },
	{ "/48=20000/s", 0, "/48=20k/s", 0, 48 },
	{ "ipv6/24=1k/s,burst=500", 0, "ipv6/24=1k/s,burst=500", SLUICE_FAMILY_IPV6, 24 },
	{ "ipv4/16=10mbit/s,burst=64kB", 0, "ipv4/16=10mbit/s,burst=64kB", SLUICE_FAMILY_IPV4, 16 },
	{ "/0=1/s", 0, "/0=1/s", 0, 0 },
	{ "ipv4/33=1/s", -ERANGE },
	{ "/129=1/s", -ERANGE },
	{ "24=1/s", -EINVAL },
	{ "/24", -EINVAL },
	{ "/=1/s", -EINVAL },
	{ "/24=", -EINVAL },
	{ "/24=0/s", -EINVAL },
	{ "/24=1/s,", -EINVAL },
	{ "/24=1/s,burst=0", -ERANGE },
	{ "/24=1/s,rate=2", -EINVAL },
	{ "ipv5/24=1/s", -EINVAL },
	{ "/2x=1/s", -EINVAL },
};
/* clang-format on */

static void test_aggregates(void)
{
	const char *why = NULL;
	struct aggregate a;
	char name[96], out[96];
	size_t i;
	int err;

	for (i = 0; i < sizeof(aggregate_cases) / sizeof(aggregate_cases[0]); i++) {
		const struct aggregate_case *c = &aggregate_cases[i];

		err = parse_aggregate(c->in, &a, &why);
		out[0] = '\0';
		if (!err)
			format_aggregate(out, sizeof(out), &a);
		snprintf(name, sizeof(name), "aggregate '%s'", c->in);
		check(err == c->err &&
			      (err || (!strcmp(out, c->canonical) && a.family == c->family &&
				       a.prefix_len == c->prefix_len)),
		      name, "got %d '%s' (%s)", err, out, err ? why : "");
	}
}

struct cidr_case {
	const char *in;
	int err;
	const char *canonical;
	bool host_bits;
};

/* clang-format off: one case per line */
static const struct cidr_case cidr_cases[] = {
	{ "10.0.0.0/8", 0, "10.0.0.0/8", false },
	{ "10.1.2.3/8", 0, "10.0.0.0/8", true },
	{ "192.0.2.7", 0, "192.0.2.7/32", false },
	{ "0.0.0.0/0", 0, "0.0.0.0/0", false },
	{ "2001:db8::/32", 0, "2001:db8::/32", false },
	{ "2001:db8::1/32", 0, "2001:db8::/32", true },
	{ "2001:db8:ffff::/33", 0, "2001:db8:8000::/33", true },
	{ "::/0", 0, "::/0", false },
	{ "2001:db8::1", 0, "2001:db8::1/128", false },
	{ "10.0.0.0/33", -ERANGE },
	{ "2001:db8::/129", -ERANGE },
	{ "10.0.0/8", -EINVAL },
	{ "10.0.0.0/", -EINVAL },
	{ "10.0.0.0/x", -EINVAL },
	{ "host.example", -EINVAL },
	{ "", -EINVAL },
	{ "10.0.0.256/32", -EINVAL },
};
/* clang-format on */

static void test_cidrs(void)
{
	const char *why = NULL;
	bool host_bits;
	struct cidr c;
	char name[96], out[64];
	size_t i;
	int err;

	for (i = 0; i < sizeof(cidr_cases) / sizeof(cidr_cases[0]); i++) {
		const struct cidr_case *k = &cidr_cases[i];

		err = parse_cidr(k->in, &c, &host_bits, &why);
		out[0] = '\0';
		if (!err)
			format_cidr(out, sizeof(out), &c);
		snprintf(name, sizeof(name), "cidr '%s'", k->in);
		check(err == k->err &&
			      (err || (!strcmp(out, k->canonical) && host_bits == k->host_bits)),
		      name, "got %d '%s' host bits %d", err, out, host_bits);
	}
}

static void test_ports_and_protos(void)
{
	uint16_t lo = 0, hi = 0;
	const char *why;
	uint8_t proto = 0;

	check(!parse_port_range("22", &lo, &hi, &why) && lo == 22 && hi == 22, "dport 22", "%u-%u",
	      lo, hi);
	check(!parse_port_range("1024-65535", &lo, &hi, &why) && lo == 1024 && hi == 65535,
	      "dport 1024-65535", "%u-%u", lo, hi);
	check(parse_port_range("0", &lo, &hi, &why) == -ERANGE, "dport 0 is refused",
	      "unexpected result");
	check(parse_port_range("80-22", &lo, &hi, &why) == -ERANGE, "dport 80-22 is refused",
	      "unexpected result");
	check(parse_port_range("65536", &lo, &hi, &why) == -ERANGE, "dport 65536 is refused",
	      "unexpected result");
	check(parse_port_range("22-", &lo, &hi, &why) == -EINVAL, "dport 22- is refused",
	      "unexpected result");
	check(parse_port_range("ssh", &lo, &hi, &why) == -EINVAL, "dport ssh is refused",
	      "unexpected result");
	check(!parse_proto("tcp", &proto, &why) && proto == 6, "proto tcp", "%u", proto);
	check(!parse_proto("icmpv6", &proto, &why) && proto == 58, "proto icmpv6", "%u", proto);
	check(parse_proto("sctp", &proto, &why) == -EINVAL, "proto sctp is refused",
	      "unexpected result");
}

static void build(struct sluice_policy *p, const char *rate, const char *burst, int *err)
{
	struct settings s;
	const char *why;

	settings_default(&s);
	parse_rate(rate, &s.rate, &why);
	if (burst)
		parse_burst(burst, &s.burst, &why);
	*err = policy_build(p, &s, NULL, 0, &why);
}

/* The fixed-point numbers the datapath gets. */
static void test_policy_build(void)
{
	struct sluice_policy p;
	struct settings s;
	const char *why;
	int err;

	build(&p, "500/s", NULL, &err);
	check(!err && p.burst == 500 && p.interval == (2000000ULL << SLUICE_TIME_SHIFT) &&
		      p.limit == 500 * p.interval && p.ipv4_mask == 0xffffffff,
	      "500/s: T = 2 ms, default burst 500", "burst %llu interval %llu",
	      (unsigned long long)p.burst, (unsigned long long)p.interval);
	build(&p, "3/s", NULL, &err);
	check(!err && p.interval == 5333333334ULL && p.burst == 3,
	      "3/s: T rounds up to 333333333.375 ns", "interval %llu",
	      (unsigned long long)p.interval);
	build(&p, "30/m", NULL, &err);
	check(!err && p.burst == 1 && p.limit == p.interval, "30/m: default burst is at least 1",
	      "burst %llu", (unsigned long long)p.burst);
	build(&p, "1/h", "1000000000", &err);
	check(err == -ERANGE, "1/h with burst 1e9 overflows: refused", "err %d", err);
	build(&p, "8mbit/s", "64kB", &err);
	/* 1 MB/s: 1000 ns per byte, in 1/16 ns, with 16 fraction bits. */
	check(!err && (p.flags & SLUICE_POL_BYTES) &&
		      p.interval == (1000ULL << (SLUICE_TIME_SHIFT + SLUICE_BYTE_SHIFT)) &&
		      p.burst == 64000 && p.limit == 64000ULL * 1000 * 16,
	      "8mbit/s burst 64kB: 1000 ns per byte", "interval %llu limit %llu",
	      (unsigned long long)p.interval, (unsigned long long)p.limit);
	build(&p, "500kB/s", NULL, &err);
	check(!err && p.burst == 500000, "500kB/s: default burst is one second", "burst %llu",
	      (unsigned long long)p.burst);
	build(&p, "10kbit/s", NULL, &err);
	check(!err && p.burst == 65536, "10kbit/s: default burst at least 64 KiB", "burst %llu",
	      (unsigned long long)p.burst);
	build(&p, "1bit/h", NULL, &err);
	check(err == -ERANGE, "1bit/h is too low to meter: refused", "err %d", err);
	build(&p, "100/s", "64kB", &err);
	check(err == -EINVAL, "a burst in bytes with a packet rate: refused", "err %d", err);

	settings_default(&s);
	parse_rate("1/s", &s.rate, &why);
	s.ipv4_prefix = 20;
	s.ipv6_prefix = 56;
	policy_build(&p, &s, NULL, 0, &why);
	check(p.ipv4_mask == htonl(0xfffff000) && p.ipv6_mask[0] == 0xffffffff &&
		      p.ipv6_mask[1] == htonl(0xffffff00) && !p.ipv6_mask[2] && !p.ipv6_mask[3],
	      "masks for /20 and /56", "v4 %08x v6[1] %08x", p.ipv4_mask, p.ipv6_mask[1]);
	s.action = SLUICE_ACTION_MARK;
	check(policy_build(&p, &s, NULL, 0, &why) == -EINVAL, "mark without dscp or ecn: refused",
	      "unexpected result");
	s.mark_ecn = true;
	check(!policy_build(&p, &s, NULL, 0, &why) && (p.flags & SLUICE_POL_MARK_ECN),
	      "mark with ecn", "unexpected result");
}

/*
 * Long-run admitted rate over configured, for a frame of len bytes (0: a
 * packet rate): exact cost over the cost the datapath charges.
 */
static long double admitted_share(const struct sluice_policy *p, const struct rate *r, uint64_t len)
{
	long double period = (long double)r->period_ns * (1 << SLUICE_TIME_SHIFT);

	if (!len)
		return period / r->amount / (long double)p->interval;
	if (r->unit == SLUICE_UNIT_BITS)
		period *= 8;
	return period * (long double)len / r->amount /
	       (long double)gcra_bytes_cost(len, p->interval);
}

/*
 * Across the accepted range, rounding keeps the long-run rate within 0.1%
 * under the configured one and never above (frames of 60 bytes and up for
 * bandwidths), and a frame of exactly the burst fits the bucket. Rates past
 * the range are refused.
 */
static void test_rounding(void)
{
	static const char *const units[] = { "/s", "/m", "/h", "bit/s", "B/s", "kB/m", "bit/h" };
	uint64_t amount, worst_len = 0, len, bad = 0, tried = 0, burst_bad = 0;
	long double share, worst = 2;
	struct sluice_policy p;
	struct settings s;
	char text[64], burst[32];
	const char *why;
	size_t u;
	int err;

	for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		for (amount = 1; amount < 200000000000ULL; amount = amount * 13 / 7 + 1) {
			settings_default(&s);
			snprintf(text, sizeof(text), "%llu%s", (unsigned long long)amount,
				 units[u]);
			if (parse_rate(text, &s.rate, &why))
				continue;
			if (s.rate.unit != SLUICE_UNIT_PACKETS) {
				snprintf(burst, sizeof(burst), "%lluB",
					 (unsigned long long)(60 + amount % 9000));
				parse_burst(burst, &s.burst, &why);
			}
			if (policy_build(&p, &s, NULL, 0, &why))
				continue;
			tried++;
			for (len = s.rate.unit == SLUICE_UNIT_PACKETS ? 0 : 60; len <= 9000;
			     len += len < 200 ? 1 : 97) {
				share = admitted_share(&p, &s.rate, len);
				bad += share < 0.999L || share > 1;
				if (share < worst) {
					worst = share;
					worst_len = len;
				}
				if (!len)
					break;
			}
			if (s.rate.unit != SLUICE_UNIT_PACKETS)
				burst_bad += gcra_bytes_cost(p.burst, p.interval) > p.limit;
		}
	}
	check(tried > 100 && !bad && !burst_bad,
	      "rounding: every accepted rate admits 99.9% to 100% of its rate; a burst-sized frame fits",
	      "%llu (rate, frame) pairs out of range in %llu rates, %llu refuse a burst-sized frame; worst %.6Lf at %llu bytes",
	      (unsigned long long)bad, (unsigned long long)tried, (unsigned long long)burst_bad,
	      worst, (unsigned long long)worst_len);

	build(&p, "16M/s", "100", &err);
	check(!err, "16M/s is metered", "err %d", err);
	build(&p, "17M/s", "100", &err);
	check(err == -ERANGE, "17M/s is too fast to meter within 0.1%: refused", "err %d", err);
	build(&p, "999M/s", "100", &err);
	check(err == -ERANGE, "999M/s: refused", "err %d", err);
	build(&p, "7680mbit/s", "64kB", &err);
	check(!err, "7680mbit/s is metered", "err %d", err);
	build(&p, "7700mbit/s", "64kB", &err);
	check(err == -ERANGE, "7700mbit/s: refused", "err %d", err);
	build(&p, "100gbit/s", "64kB", &err);
	check(err == -ERANGE, "100gbit/s: refused", "err %d", err);
}

/* The kernel's dev_valid_name(): what may become a path under bpffs. */
static void test_ifnames(void)
{
	static const struct {
		const char *in;
		bool ok;
	} cases[] = {
		{ "eth0", true },
		{ "a", true },
		{ "abcdefghijklmno", true },
		{ "br-lan.10", true },
		{ "...", true },
		{ "a..", true },
		{ "veth@x", true },
		{ "", false },
		{ ".", false },
		{ "..", false },
		{ "abcdefghijklmnop", false },
		{ "../x", false },
		{ "a/b", false },
		{ "/", false },
		{ "eth0:attaching", false },
		{ "a:b", false },
		{ "a b", false },
		{ " a", false },
		{ "a\tb", false },
		{ "a\nb", false },
		{ "a\vb", false },
		{ "a\fb", false },
		{ "a\rb", false },
		{ "a\240b", false }, /* Latin-1 no-break space */
	};
	const char *why;
	char name[64];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool ok = !ifname_check(cases[i].in, &why);

		snprintf(name, sizeof(name), "interface name #%zu %s", i,
			 cases[i].ok ? "accepted" : "refused");
		check(ok == cases[i].ok && (ok || why), name, "got %s", ok ? "accepted" : why);
	}
}

int main(void)
{
	test_ifnames();
	test_rates();
	test_counts();
	test_prefixes();
	test_words();
	test_bursts();
	test_aggregates();
	test_cidrs();
	test_ports_and_protos();
	test_policy_build();
	test_rounding();
	suite_output();
	suite_options();
	return harness_finish();
}
