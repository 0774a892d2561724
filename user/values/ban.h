/* SPDX-License-Identifier: GPL-2.0 */
/* The penalty box's values: --ban-after N[/PERIOD] and --ban-escalate FACTOR. */
#ifndef SLUICE_VALUES_BAN_H
#define SLUICE_VALUES_BAN_H

#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "base/clock.h"

/* --ban-after: more than `count` refusals within `period_ns` bans; count 0: no ban. */
struct ban_after {
	uint64_t count;
	uint64_t period_ns; /* 0 as typed without a period: BAN_PERIOD_DEFAULT_NS */
};

/* The refusals a period counts at most (sluice.h), so the most N may be. */
#define BAN_AFTER_MAX (SLUICE_BAN_COUNT_MAX - 1)
/* The datapath counts periods in milliseconds. */
#define BAN_PERIOD_MIN_NS     (NSEC_PER_SEC / 1000)
#define BAN_PERIOD_MAX_NS     (86400 * NSEC_PER_SEC)
#define BAN_PERIOD_DEFAULT_NS NSEC_PER_SEC
/* A ban's lengths (--ban-for, --ban-max, --ban-memory): 1s to 365 days, so escalation fits 64 bits.
 */
#define BAN_LENGTH_MIN_NS NSEC_PER_SEC
#define BAN_LENGTH_MAX_NS (365 * 86400 * NSEC_PER_SEC)
/* --ban-escalate: 1 to 100, in thousandths. */
#define BAN_ESCALATE_MIN 1000
#define BAN_ESCALATE_MAX 100000

/* "1500" or "1500/10s" (also 1.5k/10s); "none": no ban (count 0). */
int parse_ban_after(const char *s, struct ban_after *out, const char **why);
/* "1500/10s", always with its period. */
void format_ban_after(char *buf, size_t len, const struct ban_after *b);
/* "2", "1.5": a factor of 1 to 100 with up to three places, in thousandths. */
int parse_factor(const char *s, uint32_t *milli, const char **why);
void format_factor(char *buf, size_t len, uint32_t milli);

#endif /* SLUICE_VALUES_BAN_H */
