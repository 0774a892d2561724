// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the userspace parsers, from tables of good and bad input. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "args.h"
#include "harness.h"
#include "policy.h"
#include "unit.h"

struct rate_case {
	const char *in;
	int err;
	uint64_t packets, period_ns;
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
		check(err == c->err &&
			      (err || (r.packets == c->packets && r.period_ns == c->period_ns)),
		      name, "got %d (%s) %llu/%lluns", err, err ? why : "",
		      (unsigned long long)r.packets, (unsigned long long)r.period_ns);
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
	check(parse_action("mark", &v, &why) == -EINVAL, "action mark is unknown here",
	      "unexpected result");
	check(parse_action("DROP", &v, &why) == -EINVAL, "action is case-sensitive",
	      "unexpected result");
	check(!parse_mode("native", &v, &why) && !parse_mode("generic", &v, &why),
	      "modes native and generic", "unexpected result");
	check(parse_mode("offload", &v, &why) == -EINVAL, "mode offload is refused",
	      "unexpected result");
}

/* The fixed-point numbers the datapath gets. */
static void test_config_build(void)
{
	struct sluice_config cfg;
	struct settings s;
	const char *why;

	settings_default(&s);
	parse_rate("500/s", &s.rate, &why);
	check(!config_build(&cfg, &s, &why) && cfg.burst == 500 &&
		      cfg.interval == (2000000ULL << SLUICE_TIME_SHIFT) &&
		      cfg.tolerance == 499 * cfg.interval && cfg.ipv4_mask == 0xffffffff,
	      "500/s: T = 2 ms, default burst 500", "burst %llu interval %llu",
	      (unsigned long long)cfg.burst, (unsigned long long)cfg.interval);

	parse_rate("3/s", &s.rate, &why);
	check(!config_build(&cfg, &s, &why) && cfg.interval == 5333333334ULL && cfg.burst == 3,
	      "3/s: T rounds up to 333333333.375 ns", "interval %llu",
	      (unsigned long long)cfg.interval);

	parse_rate("30/m", &s.rate, &why);
	check(!config_build(&cfg, &s, &why) && cfg.burst == 1 && cfg.tolerance == 0,
	      "30/m: default burst is at least 1", "burst %llu", (unsigned long long)cfg.burst);

	parse_rate("1/h", &s.rate, &why);
	s.burst = BURST_MAX;
	check(config_build(&cfg, &s, &why) == -ERANGE, "1/h with burst 1e9 overflows: refused",
	      "unexpected result");

	settings_default(&s);
	parse_rate("1/s", &s.rate, &why);
	s.ipv4_prefix = 20;
	s.ipv6_prefix = 56;
	config_build(&cfg, &s, &why);
	check(cfg.ipv4_mask == htonl(0xfffff000) && cfg.ipv6_mask[0] == 0xffffffff &&
		      cfg.ipv6_mask[1] == htonl(0xffffff00) && !cfg.ipv6_mask[2] &&
		      !cfg.ipv6_mask[3],
	      "masks for /20 and /56", "v4 %08x v6[1] %08x", cfg.ipv4_mask, cfg.ipv6_mask[1]);
}

int main(void)
{
	test_rates();
	test_counts();
	test_prefixes();
	test_words();
	test_config_build();
	suite_output();
	return harness_finish();
}
