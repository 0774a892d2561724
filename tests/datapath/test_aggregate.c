// SPDX-License-Identifier: GPL-2.0
/*
 * Prefix aggregates under the test clock: each wider prefix shares one
 * bucket, per family and per rule; a packet its own bucket refuses gives
 * back what it took from the aggregate; and the aggregate refills at its
 * own rate.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)

static int send_from(struct fixture *fx, const char *src)
{
	struct frame_spec spec = { .family = src[0] == '2' ? 6 : 4, .src = src, .payload = 18 };
	struct frame f;

	frame_build(&f, &spec);
	return fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
}

/* One packet from each of n sources printf(fmt, i); returns how many passed. */
static int spray(struct fixture *fx, const char *fmt, int first, int n)
{
	char addr[64];
	int i, passed = 0;

	for (i = first; i < first + n; i++) {
		snprintf(addr, sizeof(addr), fmt, i);
		passed += send_from(fx, addr);
	}
	return passed;
}

static void case_ipv4_slash24(void)
{
	struct fixture fx;
	int a, b, later;

	if (fixture_open_conf(&fx, "default rate 100/s aggregate /24=10/s,burst=10\n", 4096,
			      NOW_NS)) {
		check(false, "aggregate /24", "cannot load");
		return;
	}
	a = spray(&fx, "10.40.1.%d", 1, 50);
	b = spray(&fx, "10.40.2.%d", 1, 50);
	check(a == 10 && b == 10, "/24=10/s burst 10: 10 of 50 sources pass in each /24",
	      "10.40.1.0/24 passed %d, 10.40.2.0/24 passed %d (want 10 each)", a, b);
	check(fixture_counter(&fx, SLUICE_CNT_DROPPED) == 80 &&
		      fixture_counter(&fx, SLUICE_CNT_PASSED) == 20,
	      "what an aggregate refuses is counted as dropped", "passed %llu dropped %llu",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_PASSED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_DROPPED));
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC / 2);
	later = spray(&fx, "10.40.1.%d", 51, 50);
	check(later == 5, "half a second later the /24 has refilled by 5", "passed %d (want 5)",
	      later);
	fixture_close(&fx);
}

/*
 * Two sources over their own limit, alternating so that the per-CPU cache
 * never answers for them: every packet reaches the aggregate and must give
 * it back when its own bucket refuses.
 */
static void case_refund(void)
{
	struct fixture fx;
	int i, own = 0, rest;

	if (fixture_open_conf(&fx, "default rate 2/s burst 2 aggregate /24=10/s,burst=10\n", 4096,
			      NOW_NS)) {
		check(false, "aggregate refund", "cannot load");
		return;
	}
	for (i = 0; i < 20; i++) {
		own += send_from(&fx, "10.41.0.1");
		own += send_from(&fx, "10.41.0.2");
	}
	rest = spray(&fx, "10.41.0.%d", 3, 10);
	check(own == 4 && rest == 6,
	      "packets a source's own bucket refuses do not spend the aggregate",
	      "the two heavy sources passed %d (want 4), then 6 of 10 others passed %d", own, rest);
	fixture_close(&fx);
}

static void case_ipv6_and_families(void)
{
	struct fixture fx;
	int v6, v4, other;

	if (fixture_open_conf(&fx, "default rate 100/s aggregate /48=5/s,burst=5\n", 4096,
			      NOW_NS)) {
		check(false, "aggregate /48", "cannot load");
		return;
	}
	v6 = spray(&fx, "2001:db8:1:%x::1", 1, 20);
	other = spray(&fx, "2001:db8:2:%x::1", 1, 20);
	v4 = spray(&fx, "10.42.0.%d", 1, 20);
	check(v6 == 5 && other == 5 && v4 == 20,
	      "/48=5/s: 5 of 20 /64 sources pass per /48; IPv4 has no aggregate",
	      "2001:db8:1::/48 %d, 2001:db8:2::/48 %d (want 5), IPv4 %d (want 20)", v6, other, v4);
	fixture_close(&fx);
}

static void case_rule_scope(void)
{
	struct fixture fx;
	int inside, outside, two;

	if (fixture_open_conf(&fx,
			      "default rate 100/s\n"
			      "rule 10.50.0.0/16 rate 100/s aggregate /16=3/s,burst=3 "
			      "aggregate /24=2/s,burst=2\n",
			      4096, NOW_NS)) {
		check(false, "rule aggregates", "cannot load");
		return;
	}
	inside = spray(&fx, "10.50.1.%d", 1, 10);
	two = spray(&fx, "10.50.2.%d", 1, 10);
	outside = spray(&fx, "10.51.0.%d", 1, 10);
	check(inside == 2 && two == 1 && outside == 10,
	      "a rule's /16 and /24 both apply, to its sources only",
	      "10.50.1.0/24 %d (want 2: its /24), 10.50.2.0/24 %d (want 1: the /16's last), "
	      "outside %d (want 10)",
	      inside, two, outside);
	fixture_close(&fx);
}

static void case_byte_aggregate(void)
{
	struct frame_spec spec = { .family = 4, .src = "10.43.0.1", .payload = 18 };
	struct fixture fx;
	struct frame f;
	int passed, fit;

	frame_build(&f, &spec);
	fit = (int)(1000 / f.len);
	if (fixture_open_conf(&fx, "default rate 1000/s aggregate /24=8000bit/s,burst=1000B\n",
			      4096, NOW_NS)) {
		check(false, "byte aggregate", "cannot load");
		return;
	}
	passed = spray(&fx, "10.43.0.%d", 1, 40);
	check(passed == fit, "a bandwidth aggregate charges whole frames",
	      "passed %d (want %d of %zu bytes in 1000)", passed, fit, f.len);
	fixture_close(&fx);
}

void suite_aggregate(void)
{
	case_ipv4_slash24();
	case_refund();
	case_ipv6_and_families();
	case_rule_scope();
	case_byte_aggregate();
}
