// SPDX-License-Identifier: GPL-2.0
/*
 * The meter under a clock the test controls. For several rate and burst
 * pairs, an arrival pattern is replayed through the XDP program and through
 * a plain token bucket written here in exact integer arithmetic; the number
 * of packets passed must agree to the packet.
 */
#include <linux/bpf.h>
#include <stdio.h>
#include "fixture.h"
#include "gcra.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

/*
 * Reference token bucket, in units of 1/(packets) ns so every quantity is
 * an integer: a packet costs period_ns units, time refills `packets` units
 * per ns, and the bucket holds burst packets.
 */
struct reference {
	__uint128_t level, cap, cost, refill_per_ns;
	uint64_t last_ns;
};

static void reference_init(struct reference *r, const struct settings *s, uint64_t burst,
			   uint64_t start_ns)
{
	r->cost = s->rate.period_ns;
	r->refill_per_ns = s->rate.amount;
	r->cap = (__uint128_t)burst * r->cost;
	r->level = r->cap; /* a new source starts full */
	r->last_ns = start_ns;
}

static int reference_admit(struct reference *r, uint64_t now_ns)
{
	r->level += (__uint128_t)(now_ns - r->last_ns) * r->refill_per_ns;
	if (r->level > r->cap)
		r->level = r->cap;
	r->last_ns = now_ns;
	if (r->level < r->cost)
		return 0;
	r->level -= r->cost;
	return 1;
}

/* What the meter should say: exact GCRA on the policy's own numbers. */
struct exact_gcra {
	uint64_t tat, interval, limit;
	bool bytes;
};

static bool exact_admit(struct exact_gcra *g, uint64_t now_ns, size_t len)
{
	__u64 cost = g->bytes ? gcra_bytes_cost(len, g->interval) : g->interval, next;

	if (!gcra_conforms(g->tat, now_ns << SLUICE_TIME_SHIFT, cost, g->limit, &next))
		return false;
	g->tat = next;
	return true;
}

struct meter_case {
	const char *name;
	uint64_t packets, period_ns, burst; /* burst 0: the default */
	uint64_t gap_ns;		    /* between arrivals */
	uint64_t arrivals;
	uint64_t idle_every, idle_ns; /* a pause after every idle_every arrivals */
};

/* clang-format off: one case per entry */
static const struct meter_case meter_cases[] = {
	{ "10/s burst 5, 1 ms apart for 10 s", 10, NSEC_PER_SEC, 5, 1000000, 10000 },
	{ "1000/s default burst, 100 us apart", 1000, NSEC_PER_SEC, 0, 100000, 50000 },
	{ "3/s burst 1 (inexact interval)", 3, NSEC_PER_SEC, 1, 7000000, 3000 },
	{ "30/m burst 2, idle gaps refill", 30, 60 * NSEC_PER_SEC, 2, 50000000, 2000, 100,
	  9000000000ULL },
	{ "2/h burst 3", 2, 3600 * NSEC_PER_SEC, 3, 60 * NSEC_PER_SEC, 600 },
	{ "1M/s burst 100, 250 ns apart", 1000000, NSEC_PER_SEC, 100, 250, 200000 },
	{ "7k/s burst 50, bursts and pauses", 7000, NSEC_PER_SEC, 50, 10000, 40000, 500, 20000000 },
};
/* clang-format on */

/* How a case is replayed besides its arrivals. */
struct replay_mode {
	/*
	 * The over-limit cache emptied before every packet, so each one is
	 * decided from the table, where a refusal of a low rate is made
	 * certain by jiffies before the clock.
	 */
	bool table_path;
	/*
	 * The jiffies counter stalling: a virtual machine's timekeeping vCPU
	 * preempted by its host, until another CPU catches the counter up
	 * (stall_jiffies).
	 */
	bool jiffies_stall;
};

/*
 * Jiffies that stop for 6 ticks every 197 ms, then catch up: the counter
 * trails the clock by up to 6 ticks, as when the kernel's other CPUs take
 * 5 of their own ticks to notice a stall.
 */
static void stall_jiffies(struct fixture *fx, uint64_t now)
{
	uint64_t into = now % (197 * NSEC_PER_SEC / 1000);

	fixture_set_jiffies_at(fx, into < 6 * jiffy_ns() ? now - into : now);
}

static void run_meter_case(const struct meter_case *c, struct replay_mode mode)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.7", .payload = 18 };
	uint64_t i, now = 1000 * NSEC_PER_SEC, got = 0, want = 0, differ = 0, first = 0;
	struct sluice_policy cfg;
	struct reference ref;
	struct exact_gcra g = { 0 };
	bool passed;
	struct fixture fx;
	struct settings s;
	const char *why;
	struct frame f;

	settings_default(&s);
	s.rate.amount = c->packets;
	s.rate.period_ns = c->period_ns;
	s.burst.value = c->burst;
	frame_build(&f, &spec);
	if (policy_build(&cfg, &s, NULL, 0, &why) || fixture_open_test_clock(&fx, &s, 64)) {
		check(false, c->name, "cannot load");
		return;
	}
	reference_init(&ref, &s, cfg.burst, now);
	g.interval = cfg.interval;
	g.limit = cfg.limit;
	for (i = 0; i < c->arrivals; i++) {
		fixture_set_clock(&fx, now);
		if (mode.jiffies_stall)
			stall_jiffies(&fx, now);
		if (mode.table_path && fixture_hot_forget(&fx))
			break;
		passed = fixture_run(&fx, f.data, f.len, 1) == XDP_PASS;
		got += passed;
		want += reference_admit(&ref, now);
		if (passed != exact_admit(&g, now, f.len) && !differ++)
			first = i;
		now += c->gap_ns;
		if (c->idle_every && (i + 1) % c->idle_every == 0)
			now += c->idle_ns;
	}
	check(!differ && got == want && got > cfg.burst && i == c->arrivals, c->name,
	      "%s%s: passed %llu, reference %llu, %llu verdicts not exact GCRA's (first: arrival %llu), "
	      "after %llu of %llu arrivals",
	      mode.table_path ? "from the table" : "with the cache",
	      mode.jiffies_stall ? ", jiffies stalling" : "", (unsigned long long)got,
	      (unsigned long long)want, (unsigned long long)differ, (unsigned long long)first,
	      (unsigned long long)i, (unsigned long long)c->arrivals);
	fixture_close(&fx);
}

/*
 * Loads the test-clock build limiting to `packets`/s with `burst`, and
 * builds the frame of spec; false (reported under name) when it cannot.
 */
static bool open_per_second(struct fixture *fx, struct frame *f, const struct frame_spec *spec,
			    uint64_t packets, uint64_t burst, const char *name)
{
	struct settings s;

	settings_per_second(&s, packets, burst);
	frame_build(f, spec);
	if (fixture_open_test_clock(fx, &s, 64)) {
		check(false, name, "cannot load");
		return false;
	}
	return true;
}

/*
 * The table path refuses a source before its moment's jiffy bound without
 * the clock: with jiffies held back (beyond any lag the kernel's have), a
 * packet the precise clock would pass is still refused; in step, it passes.
 * The cache is emptied before each packet, so the table decides.
 */
static void case_table_refusal_by_jiffies(void)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.9", .payload = 18 };
	const uint64_t t0 = 100 * NSEC_PER_SEC;
	int first, refused, held_back, in_step, forget_err = 0;
	struct fixture fx;
	struct frame f;

	if (!open_per_second(&fx, &f, &spec, 1, 1, "table refusal by jiffies"))
		return;
	fixture_set_clock(&fx, t0);
	first = fixture_run(&fx, f.data, f.len, 1);
	forget_err |= fixture_hot_forget(&fx);
	fixture_set_clock(&fx, t0 + NSEC_PER_SEC / 2);
	refused = fixture_run(&fx, f.data, f.len, 1);
	forget_err |= fixture_hot_forget(&fx);
	fixture_set_clock(&fx, t0 + 2 * NSEC_PER_SEC);
	fixture_set_jiffies_at(&fx, t0 + NSEC_PER_SEC / 2);
	held_back = fixture_run(&fx, f.data, f.len, 1);
	forget_err |= fixture_hot_forget(&fx);
	fixture_set_clock(&fx, t0 + 2 * NSEC_PER_SEC);
	in_step = fixture_run(&fx, f.data, f.len, 1);
	check(!forget_err && first == XDP_PASS && refused == XDP_DROP && held_back == XDP_DROP &&
		      in_step == XDP_PASS,
	      "the table refuses from jiffies alone while they say not yet, then the clock passes",
	      "verdicts %d %d %d %d (want 2 1 1 2), emptying the cache %s", first, refused,
	      held_back, in_step, forget_err ? "failed" : "worked");
	fixture_close(&fx);
}

/* A flood of n packets at one instant passes exactly the burst. */
static void case_burst_at_one_instant(void)
{
	struct frame_spec spec = { .family = 6, .src = "2001:db8::77", .payload = 18 };
	struct sluice_stats st = {};
	struct fixture fx;
	struct frame f;

	if (!open_per_second(&fx, &f, &spec, 100, 37, "burst at one instant"))
		return;
	fixture_set_clock(&fx, 5 * NSEC_PER_SEC);
	fixture_run(&fx, f.data, f.len, 1000);
	fixture_stats(&fx, &st);
	check(st.c[SLUICE_CNT_PASSED].packets == 37 && st.c[SLUICE_CNT_DROPPED].packets == 963,
	      "burst of 37 at one instant passes 37", "passed %llu dropped %llu",
	      (unsigned long long)st.c[SLUICE_CNT_PASSED].packets,
	      (unsigned long long)st.c[SLUICE_CNT_DROPPED].packets);
	fixture_close(&fx);
}

/*
 * `set` keeps bucket state, rebased under the new rate, and that takes
 * effect at once even for a key the per-CPU over-limit cache remembers:
 * 1/s burst 1 drained (its TAT a second ahead), then 1000/s burst 1, is
 * as drained under the new rate, full again a millisecond later, where the
 * cache would still refuse it for a second.
 */
static void case_set_keeps_state(void)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.8", .payload = 18 };
	int before, cached, at_change, after_ms, again;
	struct fixture fx;
	struct settings s;
	struct frame f;

	if (!open_per_second(&fx, &f, &spec, 1, 1, "set keeps bucket state"))
		return;
	fixture_set_clock(&fx, 10 * NSEC_PER_SEC);
	before = fixture_run(&fx, f.data, f.len, 1);
	cached = fixture_run(&fx, f.data, f.len, 1);
	settings_per_second(&s, 1000, 1);
	fixture_configure(&fx, &s);
	at_change = fixture_run(&fx, f.data, f.len, 1);
	fixture_set_clock(&fx, 10 * NSEC_PER_SEC + NSEC_PER_SEC / 1000);
	after_ms = fixture_run(&fx, f.data, f.len, 1);
	again = fixture_run(&fx, f.data, f.len, 1);
	check(before == XDP_PASS && cached == XDP_DROP && at_change == XDP_DROP &&
		      after_ms == XDP_PASS && again == XDP_DROP && fixture_bucket_count(&fx) == 1,
	      "set keeps bucket state, rebased, and invalidates the over-limit cache",
	      "verdicts %d %d %d %d %d", before, cached, at_change, after_ms, again);
	fixture_close(&fx);
}

/* A small deterministic generator: sequences are the same on every run. */
static uint64_t lcg_next(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/* Gaps spread from 1 us to about a minute, log-uniform. */
static uint64_t gap_ns(uint64_t *rng)
{
	return (1000ULL << (lcg_next(rng) % 26)) + lcg_next(rng) % 1000;
}

struct alone_case {
	const char *name;
	const char *conf;
	bool aggregate; /* the limit under test is the first aggregate's */
};

/*
 * One source alone, so no other source's packet ever passes in between:
 * with the per-CPU over-limit cache in play, each packet's verdict must
 * still be the exact GCRA's. Mixed frame sizes and idle gaps; after a gap
 * that refilled the bucket, the next packet must pass.
 */
static void run_alone_case(const struct alone_case *c)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.9" };
	uint64_t now = 100 * NSEC_PER_SEC, rng = 7, before, i, wrong = 0, passed = 0;
	struct exact_gcra g = { 0 };
	struct sluice_policy p;
	struct policy_doc doc;
	struct fixture fx;
	const char *why;
	struct frame f;
	bool want, got;

	if (doc_from_conf_text(c->conf, &doc) || policy_build(&p, &doc.dflt, NULL, 0, &why) ||
	    fixture_open_conf(&fx, c->conf, 64, now)) {
		check(false, c->name, "cannot load");
		return;
	}
	doc_free(&doc);
	g.interval = c->aggregate ? p.aggregates[0].interval : p.interval;
	g.limit = c->aggregate ? p.aggregates[0].limit : p.limit;
	g.bytes = c->aggregate ? p.aggregates[0].rate_unit != SLUICE_UNIT_PACKETS
			       : !!(p.flags & SLUICE_POL_BYTES);
	for (i = 0; i < 400; i++) {
		/* Runs of back-to-back frames into the limit, then an idle gap. */
		if (i % 8 == 0)
			now += gap_ns(&rng);
		else
			now += 1000;
		spec.payload = 18 + lcg_next(&rng) % 1400;
		frame_build(&f, &spec);
		fixture_set_clock(&fx, now);
		before = fixture_counter(&fx, SLUICE_CNT_PASSED);
		fixture_run(&fx, f.data, f.len, 1);
		got = fixture_counter(&fx, SLUICE_CNT_PASSED) > before;
		want = exact_admit(&g, now, f.len);
		wrong += got != want;
		passed += got;
	}
	check(wrong == 0 && passed > 50 && passed < 350, c->name,
	      "%llu of 400 verdicts differ from exact GCRA (%llu passed)",
	      (unsigned long long)wrong, (unsigned long long)passed);
	fixture_close(&fx);
}

/* clang-format off: one case per entry */
static const struct alone_case alone_cases[] = {
	{ "byte rate alone, drop: every verdict exact after idle gaps",
	  "default rate 8mbit/s burst 3000B\n" },
	{ "byte rate alone, dry run: every verdict exact after idle gaps",
	  "default rate 8mbit/s burst 3000B action dry-run\n" },
	{ "byte rate alone, mark: every verdict exact after idle gaps",
	  "default rate 8mbit/s burst 3000B action mark dscp 10\n" },
	{ "byte aggregate alone, drop: every verdict exact after idle gaps",
	  "default rate 1M/s burst 1000000 aggregate /24=8mbit/s,burst=3000B\n", true },
	{ "byte aggregate alone, dry run: every verdict exact after idle gaps",
	  "default rate 1M/s burst 1000000 action dry-run aggregate /24=8mbit/s,burst=3000B\n",
	  true },
	{ "packet rate alone: every verdict exact after idle gaps", "default rate 2k/s burst 3\n" },
	{ "packet aggregate alone: every verdict exact after idle gaps",
	  "default rate 1M/s burst 1000000 aggregate /24=2k/s,burst=3\n", true },
};
/* clang-format on */

/* Replaces the live policy with conf's: only its default, as `sluice set` does, or whole. */
static int change_policy(struct fixture *fx, const char *conf, bool set_only)
{
	struct policy_doc doc;
	int err = doc_from_conf_text(conf, &doc);

	if (!err)
		err = set_only ? fixture_configure(fx, &doc.dflt) : fixture_store(fx, &doc);
	doc_free(&doc);
	return err;
}

struct debt_case {
	const char *name;
	const char *before, *after; /* deep debt under before, 100/s after */
	bool set_only;
	bool new_sources; /* each packet from a new source: the overflow bucket's debt */
	int fresh;	  /* 1: the change gives fresh buckets (another meter shape: a new id) */
	/*
	 * 1: capped at the change (the sync program, docs/design.md), so it
	 * refills from then: the first pass comes one new interval after the
	 * change. 0: capped at the next packet, one interval after it.
	 */
	int at_change;
};

/*
 * A bucket deep in debt under a slow policy (1/h) meets a fast one (100/s,
 * burst 1): its debt is capped at the new burst, so after its first packet
 * under the new policy it waits one new interval (10 ms), then runs at the
 * new rate, with no credit beyond it. Packets every millisecond for 40 ms.
 * A meter of another shape gets a new id, so fresh buckets: it passes at once.
 */
static void run_debt_case(const struct debt_case *c)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.20", .payload = 18 };
	uint64_t now = 10 * NSEC_PER_SEC, before_passed, passed = 0;
	int i, first = -1, flood = 0;
	struct fixture fx;
	struct frame f;
	char src[32];

	if (fixture_open_conf(&fx, c->before, 64, now)) {
		check(false, c->name, "cannot load");
		return;
	}
	/* Into debt: one passes, the rest are refused (and cached). */
	for (i = 0; i < 5; i++) {
		snprintf(src, sizeof(src), "198.51.100.%d", c->new_sources ? 20 + i : 20);
		spec.src = src;
		frame_build(&f, &spec);
		flood += fixture_run(&fx, f.data, f.len, 1) == XDP_PASS;
	}
	if (change_policy(&fx, c->after, c->set_only)) {
		check(false, c->name, "cannot change the policy");
		fixture_close(&fx);
		return;
	}
	for (i = 0; i < 40; i++) {
		now += 1000000;
		fixture_set_clock(&fx, now);
		snprintf(src, sizeof(src), "198.51.100.%d", c->new_sources ? 100 + i : 20);
		spec.src = src;
		frame_build(&f, &spec);
		before_passed = fixture_counter(&fx, SLUICE_CNT_PASSED);
		fixture_run(&fx, f.data, f.len, 1);
		if (fixture_counter(&fx, SLUICE_CNT_PASSED) > before_passed) {
			passed++;
			if (first < 0)
				first = i;
		}
	}
	/*
	 * Capped at the change: passes at 10, 20, 30 and 40 ms after it; at
	 * the first packet: 10, 20 and 30 ms after that. No more, no sooner.
	 */
	check(flood <= 2 &&
		      first == (c->fresh       ? 0
				: c->at_change ? 9
					       : 10) &&
		      passed == 3 + (uint64_t)(c->fresh || c->at_change),
	      c->name,
	      "%d passed in the flood; after the change the first pass was packet %d, %llu passed",
	      flood, first, (unsigned long long)passed);
	fixture_close(&fx);
}

/* clang-format off: one case per entry */
static const struct debt_case debt_cases[] = {
	{ "set: debt under 1/h capped at the 100/s burst, at the change",
	  "default rate 1/h burst 1\n", "default rate 100/s burst 1\n", true, false, 0, 1 },
	{ "apply: debt under 1/h capped at the 100/s burst, at the change",
	  "default rate 1/h burst 1\n", "default rate 100/s burst 1\n", false, false, 0, 1 },
	{ "apply, rule: debt under 1/h capped at the 100/s burst, at the change",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/h burst 1\n",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 100/s burst 1\n", false, false,
	  0, 1 },
	{ "apply, rule: aggregate debt under 1/h capped at the 100/s burst, at the change",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1M/s burst 1000 aggregate /24=1/h,burst=1\n",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1M/s burst 1000 aggregate /24=100/s,burst=1\n",
	  false, false, 0, 1 },
	{ "apply, rule: overflow bucket debt under 1/h capped at the 100/s burst",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/s burst 1 new-sources 1/h overflow-rate 1/h\n",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/s burst 1 new-sources 1/h overflow-rate 100/s\n",
	  false, true, 0, 1 },
	{ "apply, rule: admission debt under 1/h capped at the 100/s burst",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/s burst 1 new-sources 1/h overflow-rate 1/h\n",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/s burst 1 new-sources 100/s overflow-rate 1/h\n",
	  false, true, 0, 1 },
	{ "apply, rule: a fixed window of 1/h to gcra 100/s gets a new id, starts afresh",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 1/h algorithm fixed-window\n",
	  "default rate 1M/s burst 1000\nrule 198.51.100.0/24 rate 100/s burst 1\n", false, false,
	  1 },
	{ "set: overflow bucket debt under 1/h capped at the 100/s burst",
	  "default rate 1/s burst 1 new-sources 1/h overflow-rate 1/h\n",
	  "default rate 1/s burst 1 new-sources 1/h overflow-rate 100/s\n", true, true, 0, 1 },
	{ "set: admission debt under 1/h capped at the 100/s burst",
	  "default rate 1/s burst 1 new-sources 1/h overflow-rate 1/h\n",
	  "default rate 1/s burst 1 new-sources 100/s overflow-rate 1/h\n", true, true, 0, 1 },
};
/* clang-format on */

struct accuracy_case {
	const char *name;
	const char *conf;
	uint64_t frame_len; /* 60 to FRAME_MAX */
	uint64_t gap_ns;    /* offered faster than the rate */
	uint64_t arrivals;
};

/*
 * Long runs at the edges of the accepted range, under the test clock: the
 * packets passed must be at least 99.9% of rate x time and at most
 * burst + rate x time.
 */
static void run_accuracy_case(const struct accuracy_case *c)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.30" };
	uint64_t now = 1000 * NSEC_PER_SEC, start = now, i, passed;
	long double rate, ceiling, floor_;
	struct sluice_policy p;
	struct policy_doc doc;
	struct fixture fx;
	const char *why;
	struct frame f;

	spec.payload = c->frame_len - 42;
	frame_build(&f, &spec);
	if (doc_from_conf_text(c->conf, &doc) || policy_build(&p, &doc.dflt, NULL, 0, &why) ||
	    f.len != c->frame_len || fixture_open_conf(&fx, c->conf, 64, now)) {
		check(false, c->name, "cannot load");
		return;
	}
	/* Packets per second. */
	rate = (long double)doc.dflt.rate.amount * NSEC_PER_SEC / doc.dflt.rate.period_ns;
	if (doc.dflt.rate.unit == SLUICE_UNIT_BITS)
		rate /= 8;
	if (doc.dflt.rate.unit != SLUICE_UNIT_PACKETS)
		rate /= (long double)c->frame_len;
	doc_free(&doc);
	for (i = 0; i < c->arrivals; i++) {
		fixture_set_clock(&fx, now);
		fixture_run(&fx, f.data, f.len, 1);
		now += c->gap_ns;
	}
	passed = fixture_counter(&fx, SLUICE_CNT_PASSED);
	/* The last arrival was at now - gap. */
	ceiling = (long double)p.burst / (p.flags & SLUICE_POL_BYTES ? c->frame_len : 1) +
		  rate * (now - c->gap_ns - start) / NSEC_PER_SEC;
	floor_ = 0.999L * rate * (now - c->gap_ns - start) / NSEC_PER_SEC;
	check(passed <= ceiling && passed >= floor_, c->name,
	      "passed %llu, want %.1Lf to %.1Lf (%.5Lf of rate x time)", (unsigned long long)passed,
	      floor_, ceiling, passed / (floor_ / 0.999L));
	fixture_close(&fx);
}

/* clang-format off: one case per entry */
static const struct accuracy_case accuracy_cases[] = {
	{ "16M/s, the fastest packet rate: 99.9% to 100% over 1.5 ms",
	  "default rate 16M/s burst 2\n", 60, 50, 30000 },
	{ "15999999/s (T rounds up most, 1001 for 1000.00006): 99.9% to 100% over 1.5 ms",
	  "default rate 15999999/s burst 2\n", 60, 50, 30000 },
	{ "1/h, the slowest packet rate: 99.9% to 100% over 2000 h", "default rate 1/h burst 2\n",
	  60, 600 * NSEC_PER_SEC, 12000 },
	{ "7/h: 99.9% to 100% over 2000 h", "default rate 7/h burst 2\n", 60, 300 * NSEC_PER_SEC,
	  24000 },
	{ "7680mbit/s, 60-byte frames: 99.9% to 100% over 1.5 ms",
	  "default rate 7680mbit/s burst 120B\n", 60, 50, 30000 },
	{ "7679999999bit/s, 61-byte frames: 99.9% to 100% over 1.5 ms",
	  "default rate 7679999999bit/s burst 122B\n", 61, 50, 30000 },
	{ "7680mbit/s, 1500-byte frames: 99.9% to 100% over 30 ms",
	  "default rate 7680mbit/s burst 3000B\n", 1500, 1000, 30000 },
	{ "480bit/s, the slowest bandwidth, 60-byte frames: 99.9% to 100% over 10^4 s",
	  "default rate 480bit/s burst 120B\n", 60, 500000000, 20000 },
	{ "7kB/m, 1000-byte frames: 99.9% to 100% over 10^5 s", "default rate 7kB/m burst 2000B\n",
	  1000, 5000000000ULL, 20000 },
};
/* clang-format on */

/*
 * A frame of exactly the byte burst fits a full bucket, for rates whose
 * per-byte interval is inexact too; one byte more never does.
 */
static void case_frame_of_burst(void)
{
	static const char *const rates[] = { "3mbit/s", "12345kbit/s", "7680mbit/s", "77kB/s",
					     "480bit/s" };
	static const unsigned int bursts[] = { 60, 1234, 4000 };
	struct frame_spec spec = { .family = 4, .src = "198.51.100.40" };
	struct fixture fx;
	struct frame f;
	char conf[128];
	size_t r, b;
	int bad = 0, tried = 0, first, refill, over;

	for (r = 0; r < sizeof(rates) / sizeof(rates[0]); r++) {
		for (b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
			snprintf(conf, sizeof(conf), "default rate %s burst %uB\n", rates[r],
				 bursts[b]);
			if (fixture_open_conf(&fx, conf, 64, 100 * NSEC_PER_SEC)) {
				bad++;
				continue;
			}
			spec.payload = bursts[b] - 42;
			frame_build(&f, &spec);
			first = fixture_run(&fx, f.data, f.len, 1);
			/* Refilled after a day; one byte more than the burst never fits. */
			fixture_set_clock(&fx, 100 * NSEC_PER_SEC + 86400 * NSEC_PER_SEC);
			refill = fixture_run(&fx, f.data, f.len, 1);
			spec.payload++;
			frame_build(&f, &spec);
			fixture_set_clock(&fx, 100 * NSEC_PER_SEC + 2 * 86400 * NSEC_PER_SEC);
			over = fixture_run(&fx, f.data, f.len, 1);
			bad += first != XDP_PASS || refill != XDP_PASS || over != XDP_DROP;
			tried++;
			fixture_close(&fx);
		}
	}
	check(!bad && tried == 15, "a frame of exactly the byte burst passes, one byte more never",
	      "%d of %d rate and burst pairs wrong", bad, tried);
}

void suite_meter(void)
{
	size_t i;

	for (i = 0; i < sizeof(meter_cases) / sizeof(meter_cases[0]); i++) {
		run_meter_case(&meter_cases[i], (struct replay_mode){ .jiffies_stall = false });
		run_meter_case(&meter_cases[i], (struct replay_mode){ .jiffies_stall = true });
	}
	/* Low rates, whose refusals jiffies make certain (emptying costs 4 MiB a packet). */
	for (i = 0; i < sizeof(meter_cases) / sizeof(meter_cases[0]); i++) {
		if (meter_cases[i].packets * NSEC_PER_SEC / meter_cases[i].period_ns > 10)
			continue;
		run_meter_case(&meter_cases[i], (struct replay_mode){ .table_path = true });
		run_meter_case(&meter_cases[i],
			       (struct replay_mode){ .table_path = true, .jiffies_stall = true });
	}
	case_table_refusal_by_jiffies();
	case_burst_at_one_instant();
	case_set_keeps_state();
	for (i = 0; i < sizeof(alone_cases) / sizeof(alone_cases[0]); i++)
		run_alone_case(&alone_cases[i]);
	for (i = 0; i < sizeof(debt_cases) / sizeof(debt_cases[0]); i++)
		run_debt_case(&debt_cases[i]);
	for (i = 0; i < sizeof(accuracy_cases) / sizeof(accuracy_cases[0]); i++)
		run_accuracy_case(&accuracy_cases[i]);
	case_frame_of_burst();
}
