/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Three clocks. Meter time is nanoseconds << SLUICE_TIME_SHIFT from
 * bpf_ktime_get_ns(), the largest single cost of the datapath. Jiffies cost
 * one load (the verifier inlines bpf_jiffies64) but tick only every 4 ms:
 * the over-limit cache uses them only to say "certainly not yet". The
 * early clock (CLOCK_MONOTONIC_COARSE) is the moment of the last tick, read
 * from memory without the hardware clock: shared buckets use it only to
 * say "not even then" (bucket.h, gcra_refuses_early). A test build
 * (-DSLUICE_TEST_CLOCK) reads them from globals the test sets, so meter
 * tests are exact and repeatable.
 */
#ifndef SLUICE_BPF_CLOCK_H
#define SLUICE_BPF_CLOCK_H

#include <bpf/bpf_helpers.h>
#include "jiffy.h"
#include "sluice.h"

#ifdef SLUICE_TEST_CLOCK
volatile __u64 test_now_ns;
volatile __u64 test_jiffies;
volatile __u64 test_early_lag_ns; /* how far the early clock trails test_now_ns */

static __always_inline __u64 clock_now(void)
{
	return test_now_ns << SLUICE_TIME_SHIFT;
}

static __always_inline __u64 clock_jiffies(void)
{
	return test_jiffies;
}

static __always_inline __u64 clock_ns(void)
{
	return test_now_ns;
}

static __always_inline __u64 clock_early(void)
{
	__u64 now = test_now_ns, lag = test_early_lag_ns;

	return (now > lag ? now - lag : 0) << SLUICE_TIME_SHIFT;
}
#else
static __always_inline __u64 clock_now(void)
{
	return bpf_ktime_get_ns() << SLUICE_TIME_SHIFT;
}

static __always_inline __u64 clock_jiffies(void)
{
	return bpf_jiffies64();
}

/* CLOCK_MONOTONIC nanoseconds, the clock of timed deny entries. */
static __always_inline __u64 clock_ns(void)
{
	return bpf_ktime_get_ns();
}

/*
 * Meter time as of this CPU's view of the last tick: up to a tick behind
 * clock_now() (more while ticks stall), for a few loads instead of the
 * hardware clock's read, which in a virtual machine is the dearer part.
 */
static __always_inline __u64 clock_early(void)
{
	return bpf_ktime_get_coarse_ns() << SLUICE_TIME_SHIFT;
}
#endif

/*
 * Ticks the jiffies counter may trail the clock by. One CPU advances it at
 * its tick; when that CPU stalls (a virtual machine's vCPU preempted by its
 * host, stop_machine()), another CPU catches it up at the fifth of its own
 * ticks that finds it unchanged (MAX_STALLED_JIFFIES, kernel/time/
 * tick-sched.c). So up to 6 ticks, and a tick may begin between a reading
 * and the jiffy read after it: 7, and one more of margin.
 */
#define CLOCK_JIFFY_LAG 8

/*
 * A jiffy before which `wait` meter time from a reference moment certainly
 * has not passed, given `jiffy`, read just after that moment, when the
 * jiffy began at or before the moment: jiffy + floor(wait / tick), less
 * the counter's lag (CLOCK_JIFFY_LAG). The floor comes from a reciprocal
 * userspace computed (no division; include/jiffy.h). Returns 0 when the wait is too short
 * to tell.
 */
static __always_inline __u64 clock_jiffy_after(__u64 jiffy, __u64 wait, __u64 jiffy_recip)
{
	__u64 ticks = jiffy_ticks(wait, jiffy_recip);

	return ticks > CLOCK_JIFFY_LAG ? jiffy + ticks - CLOCK_JIFFY_LAG : 0;
}

/*
 * A jiffy before which the moment `at` certainly has not come, from a
 * CPU's reference moment (the over-limit cache's head: a precise reading
 * and the jiffy read after it). 0: cannot tell.
 */
static __always_inline __u64 clock_jiffy_bound(const struct sluice_hot_head *hd, __u64 at)
{
	if (at <= hd->ref_now)
		return 0;
	return clock_jiffy_after(hd->ref_jiffy, at - hd->ref_now, hd->jiffy_recip);
}

/*
 * Makes a precise reading hd's reference moment, with the jiffy read just
 * after it, once a tick: the reference stays within a tick of the last
 * reading, for the jiffy bounds, without a store per packet.
 */
static __always_inline void clock_ref_note(struct sluice_hot_head *hd, __u64 now)
{
	__u64 jiffy = clock_jiffies();

	if (jiffy != hd->ref_jiffy) {
		hd->ref_now = now;
		hd->ref_jiffy = jiffy;
	}
}

#endif /* SLUICE_BPF_CLOCK_H */
