/* SPDX-License-Identifier: GPL-2.0 */
/* Time as the commands measure it: CLOCK_MONOTONIC, in nanoseconds. */
#ifndef SLUICE_BASE_CLOCK_H
#define SLUICE_BASE_CLOCK_H

#include <stdint.h>

#define NSEC_PER_SEC 1000000000ULL

uint64_t monotonic_ns(void);

#endif /* SLUICE_BASE_CLOCK_H */
