// SPDX-License-Identifier: GPL-2.0
/*
 * Table pressure under the test clock: the new-source budget, the shared
 * overflow bucket of refused sources, the initial burst of new buckets, and
 * a table too small for its sources: buckets that still hold state are
 * never given away, idle ones are, and --on-full decides the rest.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text/conf.h"
#include "text/options.h"
#include "table_hash.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)

/* Any other limiter option, through the option table as the CLI applies it. */
static void option_set(struct settings *s, const char *name, const char *value)
{
	struct cli_args a;
	const char *why;

	cli_args_init(&a, CMD_RULE);
	a.settings = *s;
	option_apply(&a, (enum option_id)option_find(name), value, &why);
	*s = a.settings;
}

/* The defaults with rate, burst and the options opts (pairs, NULL-ended). */
static void settings_of(struct settings *s, const char *rate, const char *burst,
			const char *opts[][2])
{
	const char *why;
	int i;

	settings_default(s);
	parse_rate(rate, &s->rate, &why);
	parse_burst(burst, &s->burst, &why);
	for (i = 0; opts && opts[i][0]; i++) {
		if (!strcmp(opts[i][0], "new-sources"))
			parse_rate(opts[i][1], &s->new_sources, &why);
		else if (!strcmp(opts[i][0], "overflow-rate"))
			parse_rate(opts[i][1], &s->overflow, &why);
		else if (!strcmp(opts[i][0], "initial-burst"))
			parse_burst(opts[i][1], &s->initial, &why);
		else
			option_set(s, opts[i][0], opts[i][1]);
	}
}

static int open_table(struct fixture *fx, const char *rate, const char *burst,
		      const char *opts[][2], uint32_t max_sources)
{
	struct settings s;

	settings_of(&s, rate, burst, opts);
	if (fixture_open_test_clock(fx, &s, max_sources))
		return -1;
	fixture_set_clock(fx, NOW_NS);
	return 0;
}

static int open_settings(struct fixture *fx, const char *rate, const char *burst,
			 const char *opts[][2])
{
	return open_table(fx, rate, burst, opts, 1024);
}

/* One packet from each of n sources 10.20.x.y; returns how many passed. */
static int spray(struct fixture *fx, int first, int n)
{
	struct frame_spec spec = { .family = 4, .payload = 18 };
	char addr[32];
	struct frame f;
	int i, passed = 0;

	for (i = first; i < first + n; i++) {
		snprintf(addr, sizeof(addr), "10.20.%d.%d", i / 250, i % 250 + 1);
		spec.src = addr;
		frame_build(&f, &spec);
		passed += fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
	}
	return passed;
}

static void case_budget_and_overflow(void)
{
	const char *opts[][2] = { { "new-sources", "5/s" }, { NULL, NULL } };
	struct fixture fx;
	int passed, later;

	if (open_settings(&fx, "1/s", "2", opts)) {
		check(false, "new-source budget", "cannot load");
		return;
	}
	/* 5 admitted (their first packet passes), 15 refused: 2 pass the overflow bucket. */
	passed = spray(&fx, 0, 20);
	check(passed == 7 && fixture_counter(&fx, SLUICE_CNT_NEW_SOURCE) == 5 &&
		      fixture_counter(&fx, SLUICE_CNT_REFUSED) == 15 &&
		      fixture_counter(&fx, SLUICE_CNT_OVERFLOW_PASSED) == 2 &&
		      fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED) == 13 &&
		      fixture_bucket_count(&fx) == 5,
	      "20 new sources against a budget of 5/s: 5 buckets, 15 refused, 2 overflow passes",
	      "passed %d new %llu refused %llu overflow %llu/%llu buckets %d", passed,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_NEW_SOURCE),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_REFUSED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_OVERFLOW_PASSED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED),
	      fixture_bucket_count(&fx));
	check(fixture_counter(&fx, SLUICE_CNT_PASSED) == 7 &&
		      fixture_counter(&fx, SLUICE_CNT_DROPPED) == 13,
	      "refused packets are counted as passed or dropped too, never unmetered",
	      "passed %llu dropped %llu",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_PASSED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_DROPPED));
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	later = spray(&fx, 20, 20);
	check(fixture_bucket_count(&fx) == 10 && later == 6,
	      "a second later: 5 more admitted, the overflow bucket refilled by 1",
	      "buckets %d passed %d (want 10, 6)", fixture_bucket_count(&fx), later);
	fixture_close(&fx);
}

/*
 * The early clock may refuse for the shared buckets, never admit: with it
 * a second behind, a spent budget stays spent; half a second behind, it
 * lets 2 of the 5 new sources a precise clock would; once it catches up,
 * the other 3 and the overflow bucket's packet come, and no more.
 */
static void case_early_clock(void)
{
	const char *opts[][2] = { { "new-sources", "5/s" }, { NULL, NULL } };
	int passed[3], buckets[3];
	struct fixture fx;
	int i;

	if (open_settings(&fx, "1/s", "2", opts)) {
		check(false, "early clock", "cannot load");
		return;
	}
	spray(&fx, 0, 20); /* 5 admitted, 2 overflow passes: both buckets spent */
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	for (i = 0; i < 3; i++) {
		fixture_set_early_lag(&fx, NSEC_PER_SEC * (2 - i) / 2);
		passed[i] = spray(&fx, 20 + 10 * i, 10);
		buckets[i] = fixture_bucket_count(&fx);
	}
	check(passed[0] == 0 && buckets[0] == 5,
	      "an early clock a second behind refuses every new source of a spent budget",
	      "passed %d, buckets %d (want 0, 5)", passed[0], buckets[0]);
	check(passed[1] == 2 && buckets[1] == 7,
	      "half a second behind: 2 of the 5 new sources the precise clock would admit",
	      "passed %d, buckets %d (want 2, 7)", passed[1], buckets[1]);
	check(passed[2] == 4 && buckets[2] == 10 &&
		      fixture_counter(&fx, SLUICE_CNT_OVERFLOW_PASSED) == 3,
	      "caught up: the other 3 and one overflow packet, the second's whole budget",
	      "passed %d, buckets %d, overflow passes %llu (want 4, 10, 3)", passed[2], buckets[2],
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_OVERFLOW_PASSED));
	fixture_close(&fx);
}

static void case_overflow_rate(void)
{
	const char *opts[][2] = { { "new-sources", "1/s" },
				  { "overflow-rate", "3/s" },
				  { NULL, NULL } };
	struct fixture fx;
	int passed;

	if (open_settings(&fx, "100/s", "100", opts)) {
		check(false, "overflow rate", "cannot load");
		return;
	}
	passed = spray(&fx, 0, 50);
	check(passed == 1 + 3, "overflow-rate 3/s: refused sources share 3 packets",
	      "passed %d (want 4)", passed);
	fixture_close(&fx);
}

static void case_initial_burst(void)
{
	const char *opts[][2] = { { "initial-burst", "2" }, { NULL, NULL } };
	struct frame_spec spec = { .family = 4, .src = "10.30.0.1", .payload = 18 };
	struct fixture fx;
	struct frame f;
	int i, first = 0, later = 0;

	if (open_settings(&fx, "10/s", "10", opts)) {
		check(false, "initial burst", "cannot load");
		return;
	}
	frame_build(&f, &spec);
	for (i = 0; i < 20; i++)
		first += fixture_run(&fx, f.data, f.len, 1) == XDP_PASS;
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	for (i = 0; i < 20; i++)
		later += fixture_run(&fx, f.data, f.len, 1) == XDP_PASS;
	check(first == 2 && later == 10,
	      "initial-burst 2: a new source starts with 2, then refills to the full burst",
	      "first %d (want 2), a second later %d (want 10)", first, later);
	fixture_close(&fx);
}

/* Whether each of n sources 10.20.x.y from `first` still has its bucket. */
static int buckets_kept(struct fixture *fx, int first, int n)
{
	struct sluice_key key = { .family = SLUICE_FAMILY_IPV4, .prefix_len = 32 };
	char addr[32];
	int i, kept = 0;

	for (i = first; i < first + n; i++) {
		snprintf(addr, sizeof(addr), "10.20.%d.%d", i / 250, i % 250 + 1);
		inet_pton(AF_INET, addr, key.addr);
		kept += fixture_has_bucket(fx, &key);
	}
	return kept;
}

/*
 * A table of 16 ways (2 sets) meets 40 sources at 1/s, burst 1: each
 * bucket holds state for a second after its packet, so none may be given
 * away; the sources left out are counted, and --on-full decides them.
 */
static void case_full_table(const char *on_full)
{
	const char *opts[][2] = { { "on-full", on_full }, { NULL, NULL } };
	bool pass = !strcmp(on_full, "pass");
	uint64_t made, full;
	struct fixture fx;
	int passed, kept;

	if (open_table(&fx, "1/s", "1", opts, 8)) {
		check(false, "full table", "cannot load");
		return;
	}
	passed = spray(&fx, 0, 40);
	made = fixture_counter(&fx, SLUICE_CNT_NEW_SOURCE);
	full = fixture_counter(&fx, SLUICE_CNT_INSERT_FULL);
	kept = buckets_kept(&fx, 0, 40);
	check(made + full == 40 && made <= 16 && made >= 8 && (uint64_t)kept == made &&
		      fixture_counter(&fx, SLUICE_CNT_EVICTED) == 0 &&
		      (uint64_t)passed == (pass ? 40 : made),
	      pass ? "full table, --on-full pass: live buckets kept, the rest counted and passed"
		   : "full table, --on-full drop: live buckets kept, the rest counted and dropped",
	      "%llu buckets made (%d found), %llu full, %d passed, %llu evicted",
	      (unsigned long long)made, kept, (unsigned long long)full, passed,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_EVICTED));
	/* A second on, every bucket has refilled: forgetting one loses nothing. */
	fixture_set_clock(&fx, NOW_NS + 2 * NSEC_PER_SEC);
	spray(&fx, 100, 1);
	check(fixture_counter(&fx, SLUICE_CNT_EVICTED) == 1 && buckets_kept(&fx, 100, 1) == 1 &&
		      fixture_bucket_count(&fx) == (int)made,
	      "once refilled, an idle bucket is given to a new source",
	      "evicted %llu, new source kept %d, buckets %d (want %llu)",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_EVICTED),
	      buckets_kept(&fx, 100, 1), fixture_bucket_count(&fx), (unsigned long long)made);
	fixture_close(&fx);
}

/* Spray's sources from first to first + n, in ten rounds a second apart from NOW_NS + at. */
static int spray_over_time(struct fixture *fx, uint64_t at, int first, int n)
{
	int round, passed = 0;

	for (round = 0; round < 10; round++) {
		fixture_set_clock(fx, NOW_NS + at + round * NSEC_PER_SEC);
		passed += spray(fx, first + n * round / 10, n * (round + 1) / 10 - n * round / 10);
	}
	return passed;
}

/*
 * Sources at 1000/s fill 70% of a table whose IPv4 keys are inline, in
 * rounds a second apart: each round's sources find the earlier rounds'
 * buckets refilled, free to be given away, but a new source takes an
 * empty way of either of its sets first. Two choices leave none of them
 * both sets full at that load: no bucket is given away, and none of the
 * sources, back later, needs a new one (and the new-source budget with
 * it). Taking a refilled way of the first set while the second had empty
 * ones gave thousands away.
 */
static void case_empty_ways_first(void)
{
	const char *opts[][2] = { { "new-sources", "1000000/s" }, { NULL, NULL } };
	const __u32 max_sources = 50000;
	int n = (int)(table_buckets_of(table_sets_for(max_sources)) * 7 / 10);
	uint64_t made, evicted, made_again;
	struct fixture fx;
	int passed;

	if (open_table(&fx, "1000/s", "100", opts, max_sources)) {
		check(false, "empty ways first", "cannot load");
		return;
	}
	passed = spray_over_time(&fx, 0, 0, n);
	made = fixture_counter(&fx, SLUICE_CNT_NEW_SOURCE);
	evicted = fixture_counter(&fx, SLUICE_CNT_EVICTED);
	check(passed == n && made == (uint64_t)n && evicted == 0 && fixture_bucket_count(&fx) == n,
	      "a table 70% full of refilled buckets: each new source took an empty way",
	      "%d sources: %d passed, %llu buckets made, %d held, %llu given away", n, passed,
	      (unsigned long long)made, fixture_bucket_count(&fx), (unsigned long long)evicted);
	passed = spray_over_time(&fx, 20 * NSEC_PER_SEC, 0, n);
	made_again = fixture_counter(&fx, SLUICE_CNT_NEW_SOURCE) - made;
	check(passed == n && made_again == 0,
	      "a table 70% full of refilled buckets: its sources, back, find their buckets",
	      "%d passed of %d, %llu needed a new bucket", passed, n,
	      (unsigned long long)made_again);
	fixture_close(&fx);
}

/* This CPU's admission hint (sluice_hot_head.admit_refused), or -1. */
static int admission_hint(struct fixture *fx, int cpu)
{
	struct sluice_hot_head hd;

	return fixture_hot_head(fx, cpu, &hd) ? -1 : hd.admit_refused;
}

/*
 * The hint that has a CPU load a new source's sets before the clock
 * follows that CPU's last admission, and decides nothing: the budget's
 * refusals and admissions are those of case_budget_and_overflow.
 */
static void case_admission_hint(int cpu)
{
	const char *opts[][2] = { { "new-sources", "5/s" }, { NULL, NULL } };
	int admitted, refused, again, passed[3];
	struct fixture fx;

	if (open_settings(&fx, "1/s", "2", opts)) {
		check(false, "admission hint", "cannot load");
		return;
	}
	passed[0] = spray(&fx, 0, 5);
	admitted = admission_hint(&fx, cpu);
	passed[1] = spray(&fx, 5, 15);
	refused = admission_hint(&fx, cpu);
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	passed[2] = spray(&fx, 20, 1);
	again = admission_hint(&fx, cpu);
	check(admitted == 0 && refused == 1 && again == 0,
	      "a CPU's admission hint follows its last new source: admitted 0, refused 1",
	      "after 5 admitted %d, after 15 refused %d, after one admitted a second later %d",
	      admitted, refused, again);
	check(passed[0] == 5 && passed[1] == 2 && passed[2] == 1 && fixture_bucket_count(&fx) == 6,
	      "the hint decides nothing: 5 admitted, 15 refused (2 pass the overflow), then 1",
	      "passed %d, %d, %d; buckets %d", passed[0], passed[1], passed[2],
	      fixture_bucket_count(&fx));
	fixture_close(&fx);
}

/* This CPU's shut gate (sluice_hot_head.shut_*): its moment, or 0 (and -1 when unreadable). */
static int64_t gate_moment(struct fixture *fx, int cpu, __u64 *generation)
{
	struct sluice_hot_head hd;

	if (fixture_hot_head(fx, cpu, &hd))
		return -1;
	if (generation)
		*generation = hd.shut_generation;
	return (int64_t)hd.shut_early;
}

/*
 * A CPU that saw the budget and the overflow bucket both refuse shuts its
 * gate for the early clock's moment: the rule's next new sources are
 * refused without the two steps, counted as the steps would count them,
 * and the gate opens when the early clock moves on or the configuration
 * changes. The verdicts are case_budget_and_overflow's.
 */
static void case_shut_gate(int cpu)
{
	const char *opts[][2] = { { "new-sources", "5/s" }, { NULL, NULL } };
	uint64_t refused, dropped;
	int64_t open, shut, moved, again;
	__u64 gen_before = 0, gen_after = 0;
	int passed[3], buckets, known;
	struct settings s;
	struct fixture fx;

	if (open_settings(&fx, "1/s", "2", opts)) {
		check(false, "shut gate", "cannot load");
		return;
	}
	open = gate_moment(&fx, cpu, NULL);
	passed[0] = spray(&fx, 0, 20);
	shut = gate_moment(&fx, cpu, &gen_before);
	refused = fixture_counter(&fx, SLUICE_CNT_REFUSED);
	dropped = fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED);
	passed[1] = spray(&fx, 20, 10);
	buckets = fixture_bucket_count(&fx);
	check(open == 0 && shut > 0 && passed[0] == 7 && passed[1] == 0 && buckets == 5 &&
		      fixture_counter(&fx, SLUICE_CNT_REFUSED) == refused + 10 &&
		      fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED) == dropped + 10,
	      "both shared buckets spent: the gate shuts, and the next 10 are refused and "
	      "counted as the steps would",
	      "gate %lld then %lld; passed %d then %d; buckets %d; refused +%llu, overflow "
	      "drops +%llu (want 10, 10)",
	      (long long)open, (long long)shut, passed[0], passed[1], buckets,
	      (unsigned long long)(fixture_counter(&fx, SLUICE_CNT_REFUSED) - refused),
	      (unsigned long long)(fixture_counter(&fx, SLUICE_CNT_OVERFLOW_DROPPED) - dropped));
	/* The gate refuses only sources the filter knows to have no bucket. */
	known = spray(&fx, 0, 5);
	check(known == 5 && gate_moment(&fx, cpu, NULL) == shut,
	      "while it is shut, the 5 sources with a bucket are metered by it: each passes again",
	      "passed %d of 5; gate %lld (was %lld)", known, (long long)gate_moment(&fx, cpu, NULL),
	      (long long)shut);
	settings_of(&s, "1/s", "2", opts);
	if (fixture_configure(&fx, &s)) {
		check(false, "shut gate", "cannot configure again");
		fixture_close(&fx);
		return;
	}
	spray(&fx, 30, 1);
	again = gate_moment(&fx, cpu, &gen_after);
	check(again == shut && gen_after != gen_before,
	      "a configuration change opens the gate: the steps run again and shut it anew",
	      "gate %lld (was %lld), generation %llu (was %llu)", (long long)again, (long long)shut,
	      (unsigned long long)gen_after, (unsigned long long)gen_before);
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	passed[2] = spray(&fx, 40, 20);
	moved = gate_moment(&fx, cpu, NULL);
	check(passed[2] == 6 && fixture_bucket_count(&fx) == 10 && moved > shut,
	      "a second later the gate is open: 5 admitted, the overflow bucket's 1, shut again",
	      "passed %d, buckets %d (want 6, 10); gate %lld (was %lld)", passed[2],
	      fixture_bucket_count(&fx), (long long)moved, (long long)shut);
	fixture_close(&fx);
}

/*
 * The same gate over a table whose IPv4 keys are inline (its tag and ext
 * are the key): while it is shut, a source the filter may know is looked
 * for in its sets' tag lines alone (table_holds), and one with a bucket
 * found there is metered by it, never refused as new.
 */
static void case_shut_gate_inline(int cpu)
{
	const char *opts[][2] = { { "new-sources", "5/s" }, { NULL, NULL } };
	int64_t shut;
	int passed, known;
	struct fixture fx;

	if (open_table(&fx, "1/s", "2", opts, 100000)) {
		check(false, "shut gate, keys inline", "cannot load");
		return;
	}
	passed = spray(&fx, 0, 20);
	shut = gate_moment(&fx, cpu, NULL);
	known = spray(&fx, 0, 5);
	check(table_inline(table_sets_for(100000)) && passed == 7 && shut > 0 && known == 5 &&
		      fixture_bucket_count(&fx) == 5 && gate_moment(&fx, cpu, NULL) == shut,
	      "keys inline: while the gate is shut, the 5 sources with a bucket pass again",
	      "passed %d of 20 then %d of 5 (want 7, 5); buckets %d; gate %lld then %lld", passed,
	      known, fixture_bucket_count(&fx), (long long)shut,
	      (long long)gate_moment(&fx, cpu, NULL));
	fixture_close(&fx);
}

void suite_pressure(void)
{
	int cpu;

	case_budget_and_overflow();
	case_early_clock();
	case_overflow_rate();
	case_initial_burst();
	case_full_table("drop");
	case_full_table("pass");
	case_empty_ways_first();
	cpu = stay_on_this_cpu();
	if (cpu < 0) {
		check(false, "admission hint", "cannot stay on one CPU");
		return;
	}
	case_admission_hint(cpu);
	case_shut_gate(cpu);
	case_shut_gate_inline(cpu);
	back_to_every_cpu();
}
