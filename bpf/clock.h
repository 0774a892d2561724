/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Meter time: nanoseconds << SLUICE_TIME_SHIFT. A test build
 * (-DSLUICE_TEST_CLOCK) reads time from a global the test sets, so meter
 * tests are exact and independent of the wall clock.
 */
#ifndef SLUICE_BPF_CLOCK_H
#define SLUICE_BPF_CLOCK_H

#include <bpf/bpf_helpers.h>
#include "sluice.h"

#ifdef SLUICE_TEST_CLOCK
volatile __u64 test_now_ns;

static __always_inline __u64 clock_precise(void)
{
	return test_now_ns << SLUICE_TIME_SHIFT;
}

static __always_inline __u64 clock_coarse(void)
{
	return test_now_ns << SLUICE_TIME_SHIFT;
}
#else
static __always_inline __u64 clock_precise(void)
{
	return bpf_ktime_get_ns() << SLUICE_TIME_SHIFT;
}

/* Half the cost of the precise clock, but up to one tick (4 ms) behind. */
static __always_inline __u64 clock_coarse(void)
{
	return bpf_ktime_get_coarse_ns() << SLUICE_TIME_SHIFT;
}
#endif

#endif /* SLUICE_BPF_CLOCK_H */
