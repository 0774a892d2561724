// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the userspace parsers, from tables of good and bad input. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/if_link.h>
#include "values/iface.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "text/conf.h"
#include "text/options.h"
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
	{ "5/sec", 0, 5, NSEC_PER_SEC },
	{ "5/second", 0, 5, NSEC_PER_SEC },
	{ "30/min", 0, 30, 60 * NSEC_PER_SEC },
	{ "30/minute", 0, 30, 60 * NSEC_PER_SEC },
	{ "2/hour", 0, 2, 3600 * NSEC_PER_SEC },
	{ "5/secs", -EINVAL },
	{ "5/S", -EINVAL },
	{ "5/Min", -EINVAL },
	{ "5/hours", -EINVAL },
	{ "5x/s", -EINVAL },
	{ "5K/s", 0, 5000, NSEC_PER_SEC },
	{ "5kk/s", -EINVAL },
	{ "5KK/s", -EINVAL },
	{ "1.5k/s", 0, 1500, NSEC_PER_SEC },
	{ "1.5K/s", 0, 1500, NSEC_PER_SEC },
	{ "0.5M/s", 0, 500000, NSEC_PER_SEC },
	{ "1.000001M/s", 0, 1000001, NSEC_PER_SEC },
	{ "2.50k/m", 0, 2500, 60 * NSEC_PER_SEC },
	{ "1.5/s", -EINVAL },
	{ "1.0005k/s", -EINVAL },
	{ "1.0000005M/s", -EINVAL },
	{ "1.0000000000k/s", -EINVAL },
	{ ".5k/s", -EINVAL },
	{ "1.k/s", -EINVAL },
	{ "1..5k/s", -EINVAL },
	{ "1.5.0k/s", -EINVAL },
	{ "1e3/s", -EINVAL },
	{ "1.5e3/s", -EINVAL },
	{ "-1.5k/s", -EINVAL },
	{ "+1.5k/s", -EINVAL },
	{ "1,5k/s", -EINVAL },
	{ "0.0k/s", -EINVAL },
	{ "0.0004k/s", -EINVAL },
	{ "1000.000001M/s", -ERANGE },
	{ "18446744073709551.616k/s", -ERANGE },
	{ "18446744073709551615.5k/s", -ERANGE },
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
	{ "2.5mbit/s", 0, 2500000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "0.000000001gbit/s", 0, 1, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "5Kbit/s", 0, 5000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "2.5Mbit/s", 0, 2500000, NSEC_PER_SEC, SLUICE_UNIT_BITS },
	{ "5KB/s", 0, 5000, NSEC_PER_SEC, SLUICE_UNIT_BYTES },
	{ "1.5kB/min", 0, 1500, 60 * NSEC_PER_SEC, SLUICE_UNIT_BYTES },
	{ "1.5bit/s", -EINVAL },
	{ "0.0000000001gbit/s", -EINVAL },
	{ "10KBit/s", -EINVAL },
	{ "10Kb/s", -EINVAL },
	{ "10Mb/s", -EINVAL },
	{ "10kb/s", -EINVAL },
	{ "10mB/s", -EINVAL },
	{ "0kbit/s", -EINVAL },
	{ "2000gbit/s", -ERANGE },
	{ "1001M/s", -ERANGE },
	{ "99999999999999999999/s", -ERANGE },
	{ "18446744073709551615M/s", -ERANGE },
	{ "1000.5gbit/s", -ERANGE },
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
	{ "1", 1, 100, 0, 1 },
	{ "100", 1, 100, 0, 100 },
	{ "2k", 1, 1000000, 0, 2000 },
	{ "1M", 1, 1000000, 0, 1000000 },
	{ "0", 1, 100, -ERANGE },
	{ "101", 1, 100, -ERANGE },
	{ "2M", 1, 1000000, -ERANGE },
	{ "-1", 1, 100, -EINVAL },
	{ "1.5", 1, 100, -EINVAL },
	{ "abc", 1, 100, -EINVAL },
	{ "", 1, 100, -EINVAL },
	{ "18446744073709551616", 1, UINT64_MAX, -ERANGE },
	{ "1.5k", 1, 1000000, 0, 1500 },
	{ "2K", 1, 1000000, 0, 2000 },
	{ "0.001M", 1, 1000000, 0, 1000 },
	{ "2.5M", 1, 100000000, 0, 2500000 },
	{ "1.0005k", 1, 1000000, -EINVAL },
	{ "1.5kB", 1, 1000000, -EINVAL },
	{ "1.0000000001k", 1, 1000000, -EINVAL },
	{ ".5k", 1, 1000000, -EINVAL },
	{ "1.5e3", 1, 1000000, -EINVAL },
	{ "18446744073709551.616k", 1, UINT64_MAX, -ERANGE },
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

/* Every accepted rate formats to a spelling that parses back to it. */
static void test_rate_round_trips(void)
{
	struct rate r, back;
	const char *why = "";
	size_t i, bad = 0, tried = 0;
	char text[64], name[160] = "";

	for (i = 0; i < sizeof(rate_cases) / sizeof(rate_cases[0]); i++) {
		if (rate_cases[i].err || parse_rate(rate_cases[i].in, &r, &why))
			continue;
		tried++;
		format_rate(text, sizeof(text), &r);
		memset(&back, 0xff, sizeof(back));
		if (parse_rate(text, &back, &why) || back.amount != r.amount ||
		    back.period_ns != r.period_ns || back.unit != r.unit) {
			if (!bad++)
				snprintf(name, sizeof(name), "'%s' formats as '%s'",
					 rate_cases[i].in, text);
		}
	}
	check(tried > 20 && !bad, "every accepted rate formats to a spelling that parses back",
	      "%zu of %zu do not, first %s", bad, tried, name);
}

/* Familiar spellings in, the canonical one out. */
static const struct {
	const char *in, *out;
} canonical_rates[] = {
	{ "1.5k/s", "1500/s" },	     { "1.5K/s", "1500/s" },   { "5K/s", "5k/s" },
	{ "0.5M/s", "500k/s" },	     { "30/minute", "30/m" },  { "2/hour", "2/h" },
	{ "5/sec", "5/s" },	     { "5Kbit/s", "5kbit/s" }, { "2.5Mbit/s", "2500kbit/s" },
	{ "1Gbit/s", "1gbit/s" },    { "5KB/s", "5kB/s" },     { "1.5kB/min", "1500B/m" },
	{ "2.000k/second", "2k/s" },
};

static void test_rate_spellings(void)
{
	const char *why = "";
	char name[96], text[64];
	struct rate r;
	size_t i;
	int err;

	for (i = 0; i < sizeof(canonical_rates) / sizeof(canonical_rates[0]); i++) {
		text[0] = '\0';
		err = parse_rate(canonical_rates[i].in, &r, &why);
		if (!err)
			format_rate(text, sizeof(text), &r);
		snprintf(name, sizeof(name), "rate '%s' shows as '%s'", canonical_rates[i].in,
			 canonical_rates[i].out);
		check(!err && !strcmp(text, canonical_rates[i].out), name, "got %d (%s) '%s'", err,
		      err ? why : "", text);
	}
}

/* Refusals say why, naming what was typed. */
static const struct {
	const char *in, *says;
} rate_refusals[] = {
	{ "1.5/s", "1.5 is not a whole number of packets" },
	{ "1.0005k/s", "1.0005k is not a whole number of packets" },
	{ "1.5bit/s", "1.5bit is not a whole number of bits" },
	{ "0.0005kB/s", "0.0005kB is not a whole number of bytes" },
	{ "1.0000000001k/s", "at most 9 digits after the point" },
	{ ".5k/s", "0.5, not .5" },
	{ "1.k/s", "a digit after the point" },
	{ "2000M/s", "rate is too high (sluice meters at most 16M/s)" },
	{ "2000gbit/s", "a limit meters at most 7680mbit/s, 960MB/s" },
	{ "5/d", "use s, m or h" },
	{ "-5/s", "must not be negative" },
	{ "5/s ", "use s, m or h" },
};

static void test_rate_refusals(void)
{
	const char *why = "";
	char name[96];
	struct rate r;
	size_t i;
	int err;

	for (i = 0; i < sizeof(rate_refusals) / sizeof(rate_refusals[0]); i++) {
		why = "";
		err = parse_rate(rate_refusals[i].in, &r, &why);
		snprintf(name, sizeof(name), "rate '%s' is refused: %s", rate_refusals[i].in,
			 rate_refusals[i].says);
		check(err && strstr(why, rate_refusals[i].says), name, "got %d (%s)", err, why);
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
	why = "";
	check(parse_count("1.5", 1, 100, &v, &why) == -EINVAL &&
		      !strcmp(why, "1.5 is not a whole number"),
	      "count '1.5' is refused: not a whole number", "got '%s'", why);
}

/*
 * --timeout: a duration with its unit, or several largest first, parsed,
 * then formatted as show and list print it; every spelling sluice.conf(5)
 * lists, and nothing else.
 */
static const struct {
	const char *in;
	int err;
	uint64_t ns;
	const char *canonical; /* NULL when refused */
} duration_cases[] = {
	{ "90s", 0, 90 * NSEC_PER_SEC, "1m30s" },
	{ "60s", 0, 60 * NSEC_PER_SEC, "1m" },
	{ "10m", 0, 600 * NSEC_PER_SEC, "10m" },
	{ "1h", 0, 3600 * NSEC_PER_SEC, "1h" },
	{ "1.5h", 0, 5400 * NSEC_PER_SEC, "1h30m" },
	{ "2d", 0, 2 * 86400 * NSEC_PER_SEC, "2d" },
	{ "48h", 0, 2 * 86400 * NSEC_PER_SEC, "2d" },
	{ "1.5s", 0, 1500000000ULL, "1.5s" },
	{ "1s", 0, NSEC_PER_SEC, "1s" },
	{ "3650d", 0, 3650 * 86400 * NSEC_PER_SEC, "3650d" },
	{ "3590s", 0, 3590 * NSEC_PER_SEC, "59m50s" },
	{ "1h30m", 0, 5400 * NSEC_PER_SEC, "1h30m" },
	{ "2d12h", 0, 60 * 3600 * NSEC_PER_SEC, "2d12h" },
	{ "1d1s", 0, 86401 * NSEC_PER_SEC, "1d1s" },
	{ "1h0.5s", 0, 3600500000000ULL, "1h0.5s" },
	{ "1s500ms", 0, 1500000000ULL, "1.5s" },
	{ "1s250us", 0, 1000250000ULL, "1.00025s" },
	{ "3649d23h59m59s", 0, (3650 * 86400 - 1) * NSEC_PER_SEC, "3649d23h59m59s" },
	/* The other spellings of a unit, as for rates' periods. */
	{ "3min", 0, 180 * NSEC_PER_SEC, "3m" },
	{ "10minute", 0, 600 * NSEC_PER_SEC, "10m" },
	{ "1day", 0, 86400 * NSEC_PER_SEC, "1d" },
	{ "2hour", 0, 7200 * NSEC_PER_SEC, "2h" },
	{ "5sec", 0, 5 * NSEC_PER_SEC, "5s" },
	{ "5second", 0, 5 * NSEC_PER_SEC, "5s" },
	{ "1min30sec", 0, 90 * NSEC_PER_SEC, "1m30s" },
	{ "0", -EINVAL, 0, NULL },
	{ "0s", -ERANGE, 0, NULL },
	{ "0.999999999s", -ERANGE, 0, NULL },
	{ "-5m", -EINVAL, 0, NULL },
	{ "10", -EINVAL, 0, NULL },
	{ "10x", -EINVAL, 0, NULL },
	{ "", -EINVAL, 0, NULL },
	{ "3651d", -ERANGE, 0, NULL },
	{ "3650d1s", -ERANGE, 0, NULL },
	{ "99999999999999999999s", -EINVAL, 0, NULL },
	{ "999999999999d", -ERANGE, 0, NULL },
	{ "200000000000d200000000000d", -ERANGE, 0, NULL },
	{ "1e3s", -EINVAL, 0, NULL },
	{ " 5s", -EINVAL, 0, NULL },
	{ "5s ", -EINVAL, 0, NULL },
	/* Not units sluice documents: plurals, abbreviations, weeks. */
	{ "10mins", -EINVAL, 0, NULL },
	{ "2hours", -EINVAL, 0, NULL },
	{ "1hr", -EINVAL, 0, NULL },
	{ "1w", -EINVAL, 0, NULL },
	{ "5S", -EINVAL, 0, NULL },
	{ "5ns", -EINVAL, 0, NULL },
	/* Parts go largest first, each unit once. */
	{ "30m1h", -EINVAL, 0, NULL },
	{ "1m1m", -EINVAL, 0, NULL },
	{ "1m1min", -EINVAL, 0, NULL },
	{ "1h-5m", -EINVAL, 0, NULL },
	{ "1h 5m", -EINVAL, 0, NULL },
	{ "1.0000005s", -EINVAL, 0, NULL },
};

/* Whatever format_duration prints of a whole number of microseconds parses back to it. */
static void test_duration_round_trip(void)
{
	static const uint64_t edges[] = { 1000,
					  999000,
					  1000000,
					  1001000,
					  NSEC_PER_SEC - 1000,
					  NSEC_PER_SEC,
					  59 * NSEC_PER_SEC + 999999000,
					  BAN_MAX_NS,
					  UINT64_MAX / 1000 * 1000 };
	uint64_t x = 88172645463325252ULL, ns, back;
	const char *why = "";
	char out[64];
	int i, bad = 0;

	for (i = 0; i < 20000; i++) {
		if (i < (int)(sizeof(edges) / sizeof(edges[0]))) {
			ns = edges[i];
		} else {
			/* xorshift64; a random scale, so every unit gets its turn */
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			ns = (x >> (x % 50)) / 1000 * 1000;
		}
		if (!ns)
			continue;
		format_duration(out, sizeof(out), ns);
		if (parse_duration(out, 0, UINT64_MAX, &back, &why) || back != ns) {
			if (!bad++)
				check(false, "every duration printed parses back to itself",
				      "%llu printed '%s', read %llu (%s)", (unsigned long long)ns,
				      out, (unsigned long long)back, why);
		}
	}
	if (!bad)
		check(true, "every duration printed parses back to itself", " ");
}

static void test_durations(void)
{
	const char *why = "";
	struct cli_args a;
	char name[96], out[32];
	uint64_t ns;
	size_t i;
	int err;

	for (i = 0; i < sizeof(duration_cases) / sizeof(duration_cases[0]); i++) {
		cli_args_init(&a, CMD_DENY);
		ns = 0;
		out[0] = '\0';
		err = option_apply(&a, OPT_TIMEOUT, duration_cases[i].in, &why);
		ns = a.cmd.list.timeout_ns;
		if (!err)
			format_duration(out, sizeof(out), ns);
		snprintf(name, sizeof(name), "duration '%s'%s%s", duration_cases[i].in,
			 err ? " refused" : " is ", err ? "" : out);
		check((err < 0) == (duration_cases[i].err < 0) &&
			      (err || (ns == duration_cases[i].ns &&
				       !strcmp(out, duration_cases[i].canonical))),
		      name, "got %d %llu '%s' (%s)", err, (unsigned long long)ns, out,
		      err ? why : "");
	}
	check(parse_rate("5/d", &(struct rate){ 0 }, &why) == -EINVAL,
	      "a rate per day is still refused: days are for durations", "%s", why);
	test_duration_round_trip();
	cli_args_init(&a, CMD_DENY);
	err = option_apply(&a, OPT_TIMEOUT, "3651d", &why);
	check(err == -ERANGE && !strcmp(why, "a deny entry lasts at most 3650d"),
	      "--timeout 3651d: the one ban limit says the most", "%d '%s'", err, why);
}

/* until TIME: RFC 3339 UTC to the second, exactly as format_utc prints it. */
static void test_utc(void)
{
	static const char *const refused[] = {
		"2030-02-31T00:00:00Z",
		"2030-1-01T00:00:00Z",
		"2030-01-01 00:00:00Z",
		"2030-01-01T00:00:00",
		"2030-01-01T00:00:00+01:00",
		"1969-12-31T23:59:59Z",
		"2030-01-01T24:00:00Z",
		"tomorrow",
		"",
	};
	const char *why = "";
	char back[32];
	uint64_t ns = 0;
	size_t i;

	check(!parse_utc("2026-12-01T10:45:07Z", &ns, &why) && ns == 1796121907ULL * NSEC_PER_SEC,
	      "until 2026-12-01T10:45:07Z is 1796121907 s since 1970", "got %llu (%s)",
	      (unsigned long long)ns, why);
	format_utc(back, sizeof(back), ns);
	check(!strcmp(back, "2026-12-01T10:45:07Z"), "format_utc spells it back the same", "%s",
	      back);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		check(parse_utc(refused[i], &ns, &why) == -EINVAL, "until: a bad time is refused",
		      "'%s' was taken", refused[i]);
	check(!parse_utc("2554-07-21T23:34:33Z", &ns, &why) && ns == 18446744073ULL * NSEC_PER_SEC,
	      "until 2554-07-21T23:34:33Z is the last second 64 bits of ns hold", "got %llu (%s)",
	      (unsigned long long)ns, why);
	check(parse_utc("2554-07-21T23:34:34Z", &ns, &why) == -ERANGE &&
		      parse_utc("9999-12-31T23:59:59Z", &ns, &why) == -ERANGE,
	      "until past 64 bits of ns is refused, not wrapped", "%s", why);
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
	v = 0;
	check(!parse_mode("skb", &v, &why) && v == XDP_FLAGS_SKB_MODE,
	      "mode skb is generic, as xdp-loader spells it", "flags %u", v);
	why = "";
	check(parse_mode("SKB", &v, &why) == -EINVAL && strstr(why, "native, generic or skb"),
	      "a refused mode lists native, generic or skb", "got '%s'", why);
}

/* clang-format off: one case per line */
static const struct {
	const char *in;
	int err;
	uint8_t dscp;
} dscp_cases[] = {
	{ "0", 0, 0 },	      { "46", 0, 46 },	   { "63", 0, 63 },
	{ "cs0", 0, 0 },      { "cs1", 0, 8 },	   { "CS7", 0, 56 },
	{ "af11", 0, 10 },    { "af12", 0, 12 },   { "af13", 0, 14 },
	{ "AF21", 0, 18 },    { "af32", 0, 28 },   { "Af43", 0, 38 },
	{ "ef", 0, 46 },      { "EF", 0, 46 },	   { "064", -EINVAL },
	{ "64", -EINVAL },    { "cs8", -EINVAL },  { "af14", -EINVAL },
	{ "af10", -EINVAL },  { "af51", -EINVAL }, { "af1", -EINVAL },
	{ "af111", -EINVAL }, { "e", -EINVAL },	   { "ef ", -EINVAL },
	{ " 1", -EINVAL },    { "-1", -EINVAL },   { "0x2e", -EINVAL },
	{ "", -EINVAL },      { "cs", -EINVAL },   { "99999999999999999999", -EINVAL },
};
/* clang-format on */

static void test_dscp(void)
{
	size_t i, named = 0, bad = 0;
	const char *why = "", *n;
	char name[64];
	uint8_t v, back;
	int err;

	for (i = 0; i < sizeof(dscp_cases) / sizeof(dscp_cases[0]); i++) {
		v = 0xff;
		why = "";
		err = parse_dscp(dscp_cases[i].in, &v, &why);
		snprintf(name, sizeof(name), "dscp '%s'", dscp_cases[i].in);
		check(err == dscp_cases[i].err && (err ? !!*why : v == dscp_cases[i].dscp), name,
		      "got %d (%s) %u", err, why, v);
	}
	/* Every named value parses back from its name; the rest have none. */
	for (v = 0; v <= DSCP_MAX; v++) {
		n = dscp_name(v);
		if (!n)
			continue;
		named++;
		bad += parse_dscp(n, &back, &why) || back != v;
	}
	check(named == 21 && !bad && !strcmp(dscp_name(46), "ef") &&
		      !strcmp(dscp_name(26), "af31") && !strcmp(dscp_name(0), "cs0") &&
		      !dscp_name(1) && !dscp_name(64),
	      "dscp_name: 21 classes, each parsing back to its value", "%zu named, %zu bad", named,
	      bad);
}

struct burst_case {
	const char *in;
	int err;
	uint64_t value;
	bool bytes;
};

/* clang-format off: one case per line */
static const struct burst_case burst_cases[] = {
	{ "1", 0, 1, false },
	{ "2k", 0, 2000, false },
	{ "64kB", 0, 64000, true },
	{ "1500B", 0, 1500, true },
	{ "1MB", 0, 1000000, true },
	{ "0", -ERANGE },
	{ "0kB", -ERANGE },
	{ "8kbit", -EINVAL },
	{ "64KB", 0, 64000, true },
	{ "lots", -EINVAL },
	{ "2000M", -ERANGE },
	{ "1.5kB", 0, 1500, true },
	{ "1.5k", 0, 1500, false },
	{ "1.5K", 0, 1500, false },
	{ "0.5MB", 0, 500000, true },
	{ "1.5", -EINVAL },
	{ "1.5B", -EINVAL },
	{ "1.2345kB", -EINVAL },
	{ "64kb", -EINVAL },
	{ "1.5kbit", -EINVAL },
	{ ".5kB", -EINVAL },
	{ "0.0kB", -ERANGE },
	{ "1099511627.776kB", 0, 1099511627776, true },
	{ "1099511627.777kB", -ERANGE },
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

/* Every accepted burst formats to a spelling that parses back to it. */
static void test_burst_round_trips(void)
{
	size_t i, bad = 0, tried = 0;
	char text[64], name[160] = "";
	const char *why = "";
	struct burst b, back;

	for (i = 0; i < sizeof(burst_cases) / sizeof(burst_cases[0]); i++) {
		if (burst_cases[i].err || parse_burst(burst_cases[i].in, &b, &why))
			continue;
		tried++;
		format_burst(text, sizeof(text), &b);
		memset(&back, 0, sizeof(back));
		if (parse_burst(text, &back, &why) || back.value != b.value ||
		    back.bytes != b.bytes) {
			if (!bad++)
				snprintf(name, sizeof(name), "'%s' formats as '%s'",
					 burst_cases[i].in, text);
		}
	}
	format_burst(text, sizeof(text), &(struct burst){ 64000, true });
	check(tried > 8 && !bad && !strcmp(text, "64kB"),
	      "every accepted burst formats to a spelling that parses back; 64KB shows as 64kB",
	      "%zu of %zu do not, first %s; 64000 bytes as '%s'", bad, tried, name, text);
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
 * Settings from "name value name flag ..." as a config file or the command
 * line gives them; then policy_build's message for them, or "" when built.
 */
static int build_message(const char *cidr, const char *options, char *msg, size_t len)
{
	char words[256], *word, *save = NULL;
	const char *why = "", *value;
	struct cli_args a;
	struct settings s;
	struct match m;
	bool host_bits;
	int err = 0, id;

	cli_args_init(&a, CMD_RULE);
	snprintf(words, sizeof(words), "%s", options);
	for (word = strtok_r(words, " ", &save); word && !err; word = strtok_r(NULL, " ", &save)) {
		id = option_find(word);
		if (id < 0) {
			why = "unknown option";
			err = -ENOENT;
			break;
		}
		value = option_table[id].metavar ? strtok_r(NULL, " ", &save) : NULL;
		err = option_apply(&a, (enum option_id)id, value, &why);
	}
	s = a.settings;
	m = a.match;
	if (!err && cidr)
		err = parse_cidr(cidr, &m.cidr, &host_bits, &why);
	if (err) {
		snprintf(msg, len, "options refused: %s", why);
		return -1;
	}
	err = policy_build(&(struct sluice_policy){ 0 }, &s, cidr ? &m : NULL, 1, &why);
	snprintf(msg, len, "%s", err ? why : "");
	return err;
}

/* Refusals name the options as the CLI spells them, with the values in conflict. */
static const struct {
	const char *cidr, *options, *says;
} policy_messages[] = {
	{ NULL, "rate 100/s action mark", "--action mark needs --dscp or --ecn" },
	{ NULL, "rate 100/s dscp 10", "--dscp 10 goes with --action mark, not --action drop" },
	{ NULL, "rate 100/s ecn", "--ecn goes with --action mark, not --action drop" },
	{ NULL, "rate 100/s action dry-run dscp 10 ecn",
	  "--dscp 10 and --ecn go with --action mark, not --action dry-run" },
	{ NULL, "rate 100/s burst 10 initial-burst 20",
	  "--initial-burst 20 is more than --burst 10" },
	{ NULL, "rate 1k/s initial-burst 2k",
	  "--initial-burst 2k is more than the default burst, 1k (for --rate 1k/s)" },
	{ NULL, "rate 100/s initial-burst 5kB",
	  "--initial-burst 5kB is in bytes, the burst (100) in packets" },
	{ NULL, "rate 100/s burst 64kB",
	  "--burst 64kB in bytes needs a byte rate (such as 10mbit/s), not --rate 100/s" },
	{ NULL, "rate 10mbit/s burst 100",
	  "--rate 10mbit/s needs a burst in bytes (such as 64kB), not --burst 100" },
	{ NULL, "rate 17M/s", "--rate 17M/s is too high to meter within 0.1% (at most 16M/s)" },
	/* The documented bounds themselves, not what rounding happens to allow past them. */
	{ NULL, "rate 16000001/s",
	  "--rate 16000001/s is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 960000001/m", "--rate 960000001/m is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 960M/m", "" },
	{ NULL, "rate 7681mbit/s burst 64kB",
	  "--rate 7681mbit/s is too high to meter within 0.1% (at most 7680mbit/s, 960MB/s)" },
	{ NULL, "rate 960000001B/s burst 64kB",
	  "--rate 960000001B/s is too high to meter within 0.1% (at most 7680mbit/s, 960MB/s)" },
	{ NULL, "rate 960MB/s", "" },
	{ NULL, "rate 100/s new-sources 16000001/s",
	  "--new-sources 16000001/s is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 7700mbit/s burst 64kB",
	  "--rate 7700mbit/s is too high to meter within 0.1% (at most 7680mbit/s, 960MB/s)" },
	{ NULL, "rate 476bit/s", "--rate 476bit/s is too low to meter (at least 477bit/s)" },
	{ NULL, "rate 477bit/s", "" },
	{ NULL, "rate 59B/s", "--rate 59B/s is too low to meter (at least 477bit/s)" },
	{ NULL, "rate 60B/s", "" },
	{ NULL, "rate 1/h burst 1000000000",
	  "--burst 1000M is too large for --rate 1/h (at most 80063)" },
	{ NULL, "rate 1/h burst 80063", "" },
	{ NULL, "rate 1kbit/s burst 100GB",
	  "--burst 100GB is too large for --rate 1kbit/s (at most 36028797018B)" },
	{ NULL, "rate 1kbit/s burst 36028797018B", "" },
	{ NULL, "rate 100/s new-sources 10mbit/s",
	  "--new-sources 10mbit/s is a bandwidth: it takes a rate of sources (such as 10k/s)" },
	{ NULL, "rate 100/s new-sources 16M/s", "" },
	{ NULL, "rate 100/s new-sources 17M/s",
	  "--new-sources 17M/s is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 100/s new-sources 999M/s",
	  "--new-sources 999M/s is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 100/s overflow-rate 10mbit/s",
	  "--overflow-rate 10mbit/s must count what --rate 100/s counts (packets or bandwidth)" },
	{ NULL, "rate 100/s overflow-rate 17M/s",
	  "--overflow-rate 17M/s is too high to meter within 0.1% (at most 16M/s)" },
	{ "10.0.0.0/8", "rate 1/s aggregate ipv6/48=5/s",
	  "--aggregate ipv6/48=5/s is IPv6: an aggregate must be of the rule's address family "
	  "(10.0.0.0/8 is IPv4)" },
	{ NULL, "rate 1/s aggregate /0=5/s",
	  "--aggregate /0=5/s: the prefix length must be at least 1" },
	{ "10.0.0.0/8", "rate 1/s aggregate /40=5/s",
	  "--aggregate /40=5/s: the prefix length is too long for IPv4 (at most 32)" },
	{ NULL, "rate 1/s ipv4-prefix 24 aggregate /24=5/s",
	  "--aggregate /24=5/s must be wider than the source prefix, --ipv4-prefix 24" },
	{ NULL, "rate 1/s aggregate /24=5/s aggregate /24=9/s",
	  "--aggregate /24=5/s and --aggregate /24=9/s are on the same prefix length" },
	{ NULL, "rate 1/s aggregate /24=17M/s",
	  "--aggregate /24=17M/s: rate 17M/s is too high to meter within 0.1% (at most 16M/s)" },
	{ NULL, "rate 1/s aggregate /24=5/s,burst=1kB",
	  "--aggregate /24=5/s,burst=1kB: burst 1kB in bytes needs a byte rate (such as "
	  "10mbit/s), not rate 5/s" },
	{ "10.0.0.0/8", "rate 1/s syn", "--syn needs --proto tcp" },
	{ "10.0.0.0/8", "rate 1/s proto udp syn", "--syn needs --proto tcp, not --proto udp" },
	{ "10.0.0.0/8", "rate 1/s proto icmp dport 1000-2000",
	  "--dport 1000-2000 needs --proto tcp or udp, not --proto icmp" },
	{ "10.0.0.0/8", "rate 1/s proto icmpv6",
	  "--proto icmpv6 never matches an IPv4 rule, 10.0.0.0/8 (use --proto icmp)" },
	{ "2001:db8::/32", "rate 1/s proto icmp",
	  "--proto icmp never matches an IPv6 rule, 2001:db8::/32 (use --proto icmpv6)" },
};

static void test_policy_messages(void)
{
	struct policy_doc doc;
	struct settings s;
	char msg[320], name[160];
	const char *why = "";
	size_t i;
	int err;

	for (i = 0; i < sizeof(policy_messages) / sizeof(policy_messages[0]); i++) {
		build_message(policy_messages[i].cidr, policy_messages[i].options, msg,
			      sizeof(msg));
		snprintf(name, sizeof(name), "'%s': %s", policy_messages[i].options,
			 *policy_messages[i].says ? policy_messages[i].says : "built");
		check(!strcmp(msg, policy_messages[i].says), name, "got '%s'", msg);
	}
	settings_default(&s);
	parse_rate("1/s", &s.rate, &why);
	s.n_aggregates = SLUICE_MAX_AGGREGATES + 1;
	err = policy_build(&(struct sluice_policy){ 0 }, &s, NULL, 0, &why);
	check(err == -E2BIG && !strcmp(why, "at most 4 --aggregate per rule, not 5"),
	      "five aggregates: at most 4 --aggregate per rule", "got %d '%s'", err, why);

	/* Seventeen classes of one CIDR: one source would have 17 candidates. */
	doc_init(&doc);
	settings_default(&s);
	parse_rate("1/s", &s.rate, &why);
	doc_set_default(&doc, &s, &why);
	for (i = 0; i <= SLUICE_MAX_CANDIDATES; i++) {
		struct match m = { .proto = IPPROTO_TCP };

		parse_cidr("10.0.0.0/8", &m.cidr, &(bool){ false }, &why);
		m.dport_lo = m.dport_hi = (uint16_t)(i + 1);
		doc_add_rule(&doc, &s, &m, &why);
	}
	why = "";
	err = doc_validate(&doc, &why);
	check(err == -E2BIG && !strcmp(why, "more than 16 rules cover the sources of 10.0.0.0/8"),
	      "17 rules over one source: refused, naming the CIDR", "got %d '%s'", err, why);
	doc_free(&doc);
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
	test_rate_round_trips();
	test_rate_spellings();
	test_rate_refusals();
	test_counts();
	test_durations();
	test_utc();
	test_prefixes();
	test_words();
	test_dscp();
	test_bursts();
	test_burst_round_trips();
	test_aggregates();
	test_cidrs();
	test_ports_and_protos();
	test_policy_build();
	test_policy_messages();
	test_rounding();
	suite_output();
	suite_options();
	suite_fleet();
	suite_placement();
	suite_jiffy();
	suite_report();
	suite_bans();
	return harness_finish();
}
