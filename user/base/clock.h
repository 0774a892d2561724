/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time as the commands measure it: CLOCK_MONOTONIC, in nanoseconds; and
 * the wall clock, for moments people read (when a change was made).
 */
#ifndef SLUICE_BASE_CLOCK_H
#define SLUICE_BASE_CLOCK_H

#include <stdint.h>

#define NSEC_PER_SEC 1000000000ULL

uint64_t monotonic_ns(void);
/* CLOCK_REALTIME: nanoseconds since 1970 (UTC). */
uint64_t realtime_ns(void);
/*
 * CLOCK_BOOTTIME: nanoseconds since boot, suspend included. System-wide and
 * never stepped (NTP, settimeofday): ages that two processes compare.
 */
uint64_t boottime_ns(void);

#endif /* SLUICE_BASE_CLOCK_H */
