// SPDX-License-Identifier: GPL-2.0
/*
 * Prefix aggregates under the test clock: each wider prefix shares one
 * bucket, per family and per rule; a packet its own bucket refuses gives
 * back what it took from the aggregate; and the aggregate refills at its
 * own rate. The aggregate table (1024 buckets at 4096 sources) never gives
 * away a bucket that still holds state, whatever a spoofer cycles through
 * it; when it is full, --on-full decides and the refused packet spends
 * nothing; and forged sources refused admission create no buckets in it.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include "fixture.h"
#include "table_hash.h"
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

/* One packet from each of n sources in n distinct /24s, a.(i / 256).(i % 256).1. */
static int spray_prefixes(struct fixture *fx, int a, int first, int n, bool *passed_each)
{
	char addr[64];
	int i, pass, passed = 0;

	for (i = first; i < first + n; i++) {
		snprintf(addr, sizeof(addr), "%d.%d.%d.1", a, i / 256, i % 256);
		pass = send_from(fx, addr);
		if (passed_each)
			passed_each[i] = pass;
		passed += pass;
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

#define SPOOFED 3000 /* prefixes: more than the aggregate table holds (aggregate_buckets) */

/* The buckets the aggregate table of --max-sources holds. */
static __u32 aggregate_buckets(__u64 max_sources)
{
	return (__u32)table_buckets_of(table_aggregate_sets_for(max_sources));
}

/*
 * A limited /24 against a spoofer cycling more prefixes than the aggregate
 * table holds: its bucket still holds state, so it is never given away and
 * never comes back full. The spoofer's prefixes that find no room are
 * counted in insert_full and dropped (--on-full drop). Then a second of
 * churn: the spoofer's buckets idle out and are given away, the /24's
 * never, and it passes exactly its rate.
 */
static void case_spoofer_cycling_prefixes(void)
{
	uint64_t full;
	struct fixture fx;
	int drained, after, spoofed, later = 0, i;
	char addr[64];

	if (fixture_open_conf(&fx, "default rate 100/s aggregate /24=10/s,burst=10\n", 4096,
			      NOW_NS)) {
		check(false, "spoofer cycling prefixes", "cannot load");
		return;
	}
	drained = spray(&fx, "10.60.1.%d", 1, 20);
	spoofed = spray_prefixes(&fx, 11, 0, SPOOFED, NULL);
	full = fixture_counter(&fx, SLUICE_CNT_INSERT_FULL);
	after = spray(&fx, "10.60.1.%d", 21, 20);
	check(drained == 10 && after == 0,
	      "a spoofer cycling 3000 prefixes through the aggregate table never resets a limited /24",
	      "the /24 passed %d of 20 (want 10), then %d of 20 after the spoofer (want 0)",
	      drained, after);
	check(spoofed < (int)aggregate_buckets(4096) && full == (uint64_t)(SPOOFED - spoofed),
	      "a prefix that finds the aggregate table full is counted in insert_full, --on-full drop",
	      "%d of %d spoofed prefixes passed (want under %u: the table's buckets), insert_full %llu",
	      spoofed, SPOOFED, aggregate_buckets(4096), (unsigned long long)full);

	/* One second: a new prefix every 1/3000 s, the /24 every tenth packet. */
	for (i = 0; i < SPOOFED; i++) {
		fixture_set_clock(&fx, NOW_NS + (uint64_t)(i + 1) * NSEC_PER_SEC / SPOOFED);
		spray_prefixes(&fx, 12, i, 1, NULL);
		if (i % 10 != 9)
			continue;
		snprintf(addr, sizeof(addr), "10.60.1.%d", 41 + i / 10 % 200);
		later += send_from(&fx, addr);
	}
	check(later >= 9 && later <= 11,
	      "through a second of churn the limited /24 passes its rate, 10/s, no more",
	      "passed %d (want 10 +- 1)", later);
	fixture_close(&fx);
}

/*
 * A full aggregate table, --on-full drop: a rule's packets for a /24 that
 * finds no room are refused after their source's own bucket and the rule's
 * /8 passed them, and get both back; no other prefix gains anything, and
 * none wraps (each spoofed prefix passes again once refilled).
 */
static void case_full_table_spends_nothing(void)
{
	static bool had_bucket[SPOOFED];
	struct fixture fx;
	int first, own, slash8, again, refilled = 0, expected = 0, i;
	uint64_t full0, full;

	if (fixture_open_conf(&fx,
			      "default rate 100/s aggregate /24=1000/s,burst=1\n"
			      "rule 10.0.0.0/8 rate 5/s burst 5 aggregate /8=10000/s,burst=12 "
			      "aggregate /24=100/s,burst=100\n",
			      4096, NOW_NS)) {
		check(false, "full aggregate table", "cannot load");
		return;
	}
	first = send_from(&fx, "10.0.0.1"); /* the rule's /8 and 10.0.0.0/24 get buckets */
	spray_prefixes(&fx, 11, 0, SPOOFED, had_bucket); /* the default's */
	full0 = fixture_counter(&fx, SLUICE_CNT_INSERT_FULL);
	own = 0;
	for (i = 0; i < 10; i++)
		own += send_from(&fx, "10.1.1.1"); /* 10.1.1.0/24 finds no room */
	full = fixture_counter(&fx, SLUICE_CNT_INSERT_FULL) - full0;
	slash8 = spray(&fx, "10.0.0.%d", 2, 15);
	again = spray_prefixes(&fx, 11, 0, SPOOFED, NULL);
	check(first == 1 && own == 0 && full == 10 && slash8 == 11 && again == 0,
	      "a packet refused for want of room gives the aggregates it took back, to them only",
	      "first %d (want 1), 10.1.1.1 passed %d (want 0), insert_full +%llu (want 10); then "
	      "the /8 passed %d of 15 (want its 11 left); the spoofed prefixes again %d (want 0)",
	      first, own, (unsigned long long)full, slash8, again);

	/* 2 ms on: the spoofed buckets have refilled, so the table has room again. */
	fixture_set_clock(&fx, NOW_NS + 2 * NSEC_PER_SEC / 1000);
	own = 0;
	for (i = 0; i < 6; i++)
		own += send_from(&fx, "10.1.1.1");
	check(own == 5, "... and its source's own bucket back: its whole burst is left",
	      "10.1.1.1 passed %d of 6 (want its burst, 5)", own);
	for (i = 0; i < 200; i++) {
		expected += had_bucket[i];
		refilled += had_bucket[i] && spray_prefixes(&fx, 11, i, 1, NULL);
	}
	check(expected > 150 && refilled == expected,
	      "no spoofed prefix's bucket wrapped: each passes again once refilled",
	      "%d of %d passed again", refilled, expected);
	fixture_close(&fx);
}

/*
 * The same under a warm-up, whose step is undone whole: a cold source's
 * packets that the full table refuses leave it cold, so once there is room
 * its first packet passes at once and the next waits the cold interval (3
 * times the stable one). Kept, the step would hold it back 30 ms.
 */
static void case_full_table_undoes_warmup(void)
{
	struct fixture fx;
	int own, later;

	if (fixture_open_conf(
		    &fx,
		    "default rate 100/s aggregate /24=1000/s,burst=1\n"
		    "rule 10.0.0.0/8 rate 100/s warmup 1s aggregate /24=100/s,burst=100\n",
		    4096, NOW_NS)) {
		check(false, "full aggregate table, warm-up", "cannot load");
		return;
	}
	spray_prefixes(&fx, 11, 0, SPOOFED, NULL);
	own = 0;
	for (int i = 0; i < 5; i++)
		own += send_from(&fx, "10.1.1.1"); /* 10.1.1.0/24 finds no room */
	fixture_set_clock(&fx, NOW_NS + 2 * NSEC_PER_SEC / 1000);
	later = send_from(&fx, "10.1.1.1");
	later += send_from(&fx, "10.1.1.1");
	check(own == 0 && later == 1,
	      "a warm-up step the full aggregate table refused is undone: the source is still cold",
	      "10.1.1.1 passed %d of 5 with no room (want 0), then %d of 2 at once (want 1)", own,
	      later);
	fixture_close(&fx);
}

/*
 * The same for a source the rule's admission refused: the packet its
 * overflow bucket passed, and the full table then refused, gives the
 * overflow bucket back, which the rule's other refused sources share.
 */
static void case_full_table_spends_no_overflow(void)
{
	struct fixture fx;
	int first, own, others;
	uint64_t full0;

	if (fixture_open_conf(&fx,
			      "default rate 100/s aggregate /24=1000/s,burst=1\n"
			      "rule 10.0.0.0/8 rate 100/s new-sources 1/s overflow-rate 2/s "
			      "aggregate /24=100/s,burst=100\n",
			      4096, NOW_NS)) {
		check(false, "full aggregate table, overflow", "cannot load");
		return;
	}
	first = send_from(&fx, "10.0.0.1"); /* admitted: the budget is spent */
	spray_prefixes(&fx, 11, 0, SPOOFED, NULL);
	full0 = fixture_counter(&fx, SLUICE_CNT_INSERT_FULL);
	own = spray(&fx, "10.1.1.%d", 1, 5); /* refused admission; 10.1.1.0/24 finds no room */
	others = spray(&fx, "10.0.0.%d", 2, 5);
	check(first == 1 && own == 0 && fixture_counter(&fx, SLUICE_CNT_INSERT_FULL) - full0 == 5 &&
		      others == 2,
	      "... and a refused source's packet gives the rule's overflow bucket back",
	      "first %d (want 1), 10.1.1.0/24 passed %d (want 0), insert_full +%llu (want 5); "
	      "then refused sources in 10.0.0.0/24 passed %d (want the overflow's 2)",
	      first, own,
	      (unsigned long long)(fixture_counter(&fx, SLUICE_CNT_INSERT_FULL) - full0), others);
	fixture_close(&fx);
}

/*
 * The order: an aggregate bucket is created only for a packet its source's
 * own bucket passed, so forged sources the rule's admission refuses cannot
 * fill the aggregate table, and another rule's new prefix still finds room.
 */
static void case_refused_sources_create_nothing(void)
{
	struct fixture fx;
	int spoofed, legit;

	if (fixture_open_conf(&fx,
			      "default rate 100/s new-sources 5/s overflow-rate 1/s "
			      "aggregate /24=1/s,burst=1\n"
			      "rule 10.99.0.0/16 rate 100/s aggregate /24=1/s,burst=1\n",
			      4096, NOW_NS)) {
		check(false, "refused sources", "cannot load");
		return;
	}
	spoofed = spray_prefixes(&fx, 11, 0, SPOOFED, NULL);
	legit = spray(&fx, "10.99.%d.1", 1, 50);
	check(spoofed <= 6 && legit == 50 && fixture_counter(&fx, SLUICE_CNT_INSERT_FULL) == 0,
	      "forged sources refused admission create no aggregate buckets: new prefixes find room",
	      "spoofed passed %d (want at most 5 admitted + 1 overflow), then 50 new /24s of "
	      "another rule passed %d, insert_full %llu (want 0)",
	      spoofed, legit, (unsigned long long)fixture_counter(&fx, SLUICE_CNT_INSERT_FULL));
	fixture_close(&fx);
}

void suite_aggregate(void)
{
	case_ipv4_slash24();
	case_refund();
	case_ipv6_and_families();
	case_rule_scope();
	case_byte_aggregate();
	case_spoofer_cycling_prefixes();
	case_full_table_spends_nothing();
	case_full_table_undoes_warmup();
	case_full_table_spends_no_overflow();
	case_refused_sources_create_nothing();
}
