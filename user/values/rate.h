/* SPDX-License-Identifier: GPL-2.0 */
/* Amounts with units, parsed and formatted side by side: rates, bursts, counts, durations. */
#ifndef SLUICE_VALUES_RATE_H
#define SLUICE_VALUES_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"
#include "base/clock.h"

/*
 * `amount` units per `period_ns`, exactly as typed: 30/m is 30 packets per
 * 60 s, 10mbit/s is 10,000,000 bits per second.
 */
struct rate {
	uint64_t amount;
	uint64_t period_ns;
	uint8_t unit; /* enum sluice_rate_unit */
};

/* A burst as typed: a count of packets, or bytes when it had a byte suffix. */
struct burst {
	uint64_t value; /* 0: derive from the rate */
	bool bytes;
};

/*
 * Highest packet rate parsed, one packet per nanosecond; what meters it
 * (a limit or --new-sources) refuses above RATE_METERED_MAX_PER_SEC.
 */
#define RATE_MAX_PER_SEC 1000000000ULL
/* Highest byte rate parsed, 1 Tbit/s; a limit meters at most BYTE_RATE_METERED_MAX_PER_SEC. */
#define BYTE_RATE_MAX_PER_SEC 125000000000ULL
/* Highest rates metered within 0.1% (user/policy/policy.c), --new-sources included. */
#define RATE_METERED_MAX_PER_SEC      16000000ULL
#define BYTE_RATE_METERED_MAX_PER_SEC 960000000ULL
#define BURST_MAX		      1000000000ULL
#define BURST_BYTES_MAX		      (1ULL << 40)
#define MAX_SOURCES_MAX		      100000000ULL

/*
 * Amounts may have a fraction, exact to the unit: 1.5k/s, 2.5mbit/s, 1.5kB;
 * 1.5/s is refused (not a whole number of packets). Periods: s, sec, second,
 * m, min, minute, h, hour. k and K, kbit and Kbit, kB and KB are the same.
 */
int parse_rate(const char *s, struct rate *rate, const char **why);
int parse_burst(const char *s, struct burst *burst, const char **why);
/* A whole number, with k or M if wanted (1.5k is 1500), from min to max. */
int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why);
/* Seconds with an optional fraction ("1", "0.25"), to nanoseconds. */
int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why);
/*
 * A duration: a number with a time unit, us to d, or several, largest unit
 * first, each once; each number may have a fraction: 10s, 1.5m, 250ms,
 * 1h30m, 2d12h. Exact to the microsecond, from min_ns to max_ns.
 */
int parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out,
		   const char **why);
/*
 * The one way durations are printed, exactly and as parse_duration reads
 * them back: days, hours and minutes whole, then seconds with a fraction
 * (90s is 1m30s, 5400s 1h30m, 1.5s 1.5s); under a second in ms or us (250ms).
 */
void format_duration(char *buf, unsigned long len, uint64_t ns);
/*
 * The time units durations and rate periods spell, largest first, each
 * unit's other spellings (alias) after it; period: a rate may be per this
 * unit. Index i from 0 until NULL.
 */
const char *time_unit_at(size_t i, uint64_t *ns, bool *alias, bool *period);

/*
 * The longest a deny entry lasts from when it is made, by --timeout or by
 * `until` in a file: ten years, so an expiry, on either clock and rounded
 * to the second, stays far from overflowing.
 */
#define BAN_MAX_NS (3650 * 86400 * NSEC_PER_SEC)
/* The one check of a ban's length: -ERANGE past BAN_MAX_NS, *why saying the most. */
int ban_length_check(uint64_t ns, const char **why);
/*
 * An RFC 3339 moment in UTC to the second, as format_utc prints it, to ns
 * since 1970; -ERANGE past what 64 bits of nanoseconds hold (2554).
 */
int parse_utc(const char *s, uint64_t *unix_ns, const char **why);

/* Canonical spellings that parse back to the same value: lowercase k, kbit, kB; s, m, h. */
void format_rate(char *buf, unsigned long len, const struct rate *rate);
void format_burst(char *buf, unsigned long len, const struct burst *burst);
/* A wall-clock moment (ns since 1970) in RFC 3339, UTC, to the second: 2026-12-01T10:45:07Z. */
void format_utc(char *buf, unsigned long len, uint64_t unix_ns);

#endif /* SLUICE_VALUES_RATE_H */
