// SPDX-License-Identifier: GPL-2.0
/*
 * Whole jiffies in a wait (include/jiffy.h), as the over-limit cache's
 * jiffy bound computes them (bpf/clock.h, clock_jiffy_after), against
 * exact 128-bit arithmetic, at every HZ Linux offers where the cache runs
 * (100, 250, 300, 1000) and at alpha's 1024 and 1200: the reciprocal
 * userspace computes for the tick (jiffy_recip_of, policy_create), and
 * the ticks for waits from 0 to the cap and far past it.
 */
#include <stdint.h>
#include <stdio.h>
#include "harness.h"
#include "jiffy.h"
#include "policy/policy.h"
#include "unit.h"

typedef unsigned __int128 u128;

/* The kernel's TICK_NSEC, which clock_getres(CLOCK_MONOTONIC_COARSE) reports. */
static uint64_t tick_nsec(uint64_t hz)
{
	return (1000000000ULL + hz / 2) / hz;
}

/* What one wait must give: no wrap, never a tick too many, at most one too few. */
struct tally {
	uint64_t tried, wrapped, too_many, too_few, first_bad;
};

static void tally_wait(struct tally *t, uint64_t wait, uint64_t recip, uint64_t tick)
{
	uint64_t capped = wait < SLUICE_JIFFY_WAIT_MAX ? wait : SLUICE_JIFFY_WAIT_MAX;
	uint64_t got = jiffy_ticks(wait, recip);
	u128 exact = ((u128)capped * recip) >> SLUICE_JIFFY_RECIP_SHIFT;
	uint64_t truth = capped / tick;
	int bad = got != exact || got > truth || got + 1 < truth;

	t->tried++;
	t->wrapped += got != exact;
	t->too_many += got > truth;
	t->too_few += got + 1 < truth;
	if (bad && !t->first_bad)
		t->first_bad = wait;
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Every whole tick up to the cap and three past it, each +-1 unit; then far past it. */
static void sweep(struct tally *t, uint64_t recip, uint64_t tick)
{
	static const uint64_t far[] = { 1ULL << 40, 1ULL << 41,	      1ULL << 50,
					1ULL << 63, 1048576000000ULL, ~0ULL };
	uint64_t k, last = SLUICE_JIFFY_WAIT_MAX / tick + 3;
	int i;

	for (k = 0; k <= last; k++) {
		tally_wait(t, k * tick, recip, tick);
		tally_wait(t, k * tick + 1, recip, tick);
		if (k)
			tally_wait(t, k * tick - 1, recip, tick);
	}
	for (i = -2; i <= 2; i++)
		tally_wait(t, SLUICE_JIFFY_WAIT_MAX + (uint64_t)(int64_t)i, recip, tick);
	for (i = 0; i < (int)(sizeof(far) / sizeof(far[0])); i++)
		tally_wait(t, far[i], recip, tick);
	for (i = 0; i < 100000; i++)
		tally_wait(t, next_random() >> (next_random() % 64), recip, tick);
}

static void test_hz(uint64_t hz)
{
	uint64_t tick_ns = tick_nsec(hz), tick = tick_ns << SLUICE_TIME_SHIFT;
	uint64_t recip = jiffy_recip_of(tick_ns);
	struct tally t = {};
	char name[96];

	snprintf(name, sizeof(name), "HZ=%llu: the reciprocal is 2^48 / tick, rounded down",
		 (unsigned long long)hz);
	check(recip == (1ULL << SLUICE_JIFFY_RECIP_SHIFT) / tick && recip <= SLUICE_JIFFY_RECIP_MAX,
	      name, "%llu for a tick of %llu ns", (unsigned long long)recip,
	      (unsigned long long)tick_ns);
	sweep(&t, recip, tick);
	snprintf(name, sizeof(name),
		 "HZ=%llu: %llu waits to the cap and past it, ticks as exact 128-bit arithmetic",
		 (unsigned long long)hz, (unsigned long long)t.tried);
	check(!t.first_bad, name,
	      "%llu wrapped, %llu a tick too many, %llu over one too few; first at wait %llu "
	      "(%.1f s)",
	      (unsigned long long)t.wrapped, (unsigned long long)t.too_many,
	      (unsigned long long)t.too_few, (unsigned long long)t.first_bad,
	      (double)(t.first_bad >> SLUICE_TIME_SHIFT) / 1e9);
}

/*
 * A tick shorter than the reciprocal's cap allows (HZ 12288, which a few
 * architectures let one set, and 1 us): capped, fewer ticks, never more.
 */
static void test_short_tick(uint64_t tick_ns)
{
	uint64_t tick = tick_ns << SLUICE_TIME_SHIFT, recip = jiffy_recip_of(tick_ns);
	uint64_t i, wait, capped, too_many = 0;
	char name[96];

	snprintf(name, sizeof(name),
		 "a %llu ns tick: the reciprocal is capped, never a tick too many",
		 (unsigned long long)tick_ns);
	for (i = 0; i < 100000; i++) {
		wait = next_random() >> (next_random() % 64);
		capped = wait < SLUICE_JIFFY_WAIT_MAX ? wait : SLUICE_JIFFY_WAIT_MAX;
		too_many += jiffy_ticks(wait, recip) > capped / tick;
	}
	too_many += jiffy_ticks(SLUICE_JIFFY_WAIT_MAX, recip) > SLUICE_JIFFY_WAIT_MAX / tick;
	check(recip == SLUICE_JIFFY_RECIP_MAX && !too_many, name, "reciprocal %llu, %llu too many",
	      (unsigned long long)recip, (unsigned long long)too_many);
}

static void test_no_tick(void)
{
	uint64_t here = jiffy_recip_of(jiffy_ns());

	check(!jiffy_recip_of(0) && !jiffy_recip_of(1000000000ULL) && !jiffy_recip_of(~0ULL),
	      "no tick, or one of a second or more (clock_getres failed): no jiffy bound",
	      "%llu %llu %llu", (unsigned long long)jiffy_recip_of(0),
	      (unsigned long long)jiffy_recip_of(1000000000ULL),
	      (unsigned long long)jiffy_recip_of(~0ULL));
	check(here && here == (1ULL << SLUICE_JIFFY_RECIP_SHIFT) /
				      (jiffy_ns() << SLUICE_TIME_SHIFT),
	      "this kernel's tick gets its exact reciprocal", "%llu for %llu ns",
	      (unsigned long long)here, (unsigned long long)jiffy_ns());
}

void suite_jiffy(void)
{
	static const uint64_t hz[] = { 100, 250, 300, 1000, 1024, 1200 };
	int i;

	for (i = 0; i < (int)(sizeof(hz) / sizeof(hz[0])); i++)
		test_hz(hz[i]);
	test_short_tick(tick_nsec(12288));
	test_short_tick(1000);
	test_no_tick();
}
