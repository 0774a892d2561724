// SPDX-License-Identifier: GPL-2.0
/* Amounts with units: rates, bursts, counts and durations, parsed and formatted. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "values/number.h"
#include "values/rate.h"

struct unit {
	const char *name;
	uint64_t value;
	uint8_t kind; /* enum sluice_rate_unit */
	bool alias;   /* parsed, never printed: format uses the first spelling */
};

/* Amount suffixes: packets, bits and bytes, SI multipliers, spelled apart. */
static const struct unit amounts[] = {
	{ "", 1, SLUICE_UNIT_PACKETS, false },
	{ "k", 1000, SLUICE_UNIT_PACKETS, false },
	{ "K", 1000, SLUICE_UNIT_PACKETS, true },
	{ "M", 1000000, SLUICE_UNIT_PACKETS, false },
	{ "bit", 1, SLUICE_UNIT_BITS, false },
	{ "kbit", 1000, SLUICE_UNIT_BITS, false },
	{ "Kbit", 1000, SLUICE_UNIT_BITS, true },
	{ "mbit", 1000000, SLUICE_UNIT_BITS, false },
	{ "Mbit", 1000000, SLUICE_UNIT_BITS, true },
	{ "gbit", 1000000000, SLUICE_UNIT_BITS, false },
	{ "Gbit", 1000000000, SLUICE_UNIT_BITS, true },
	{ "B", 1, SLUICE_UNIT_BYTES, false },
	{ "kB", 1000, SLUICE_UNIT_BYTES, false },
	{ "KB", 1000, SLUICE_UNIT_BYTES, true },
	{ "MB", 1000000, SLUICE_UNIT_BYTES, false },
	{ "GB", 1000000000, SLUICE_UNIT_BYTES, false },
	{ NULL, 0, 0, false },
};

static const char *const kind_nouns[] = {
	[SLUICE_UNIT_PACKETS] = "packets",
	[SLUICE_UNIT_BITS] = "bits",
	[SLUICE_UNIT_BYTES] = "bytes",
};

#define MINUTE_NS (60 * NSEC_PER_SEC)
#define HOUR_NS	  (60 * MINUTE_NS)
#define DAY_NS	  (24 * HOUR_NS)
/* A rate's period is one of the time units from a second to an hour. */
#define PERIOD_MIN_NS NSEC_PER_SEC
#define PERIOD_MAX_NS HOUR_NS

/*
 * The one list of time units, durations' and rates' periods alike, largest
 * first, each unit's other spellings after it. sluice.conf(5) lists it
 * (sluice-docgen reads it through time_unit_at).
 */
static const struct unit time_units[] = {
	{ "d", DAY_NS, 0, false },
	{ "day", DAY_NS, 0, true },
	{ "h", HOUR_NS, 0, false },
	{ "hour", HOUR_NS, 0, true },
	{ "m", MINUTE_NS, 0, false },
	{ "min", MINUTE_NS, 0, true },
	{ "minute", MINUTE_NS, 0, true },
	{ "s", NSEC_PER_SEC, 0, false },
	{ "sec", NSEC_PER_SEC, 0, true },
	{ "second", NSEC_PER_SEC, 0, true },
	{ "ms", 1000000, 0, false },
	{ "us", 1000, 0, false },
	{ NULL, 0, 0, false },
};

const char *time_unit_at(size_t i, uint64_t *ns, bool *alias, bool *period)
{
	if (i >= sizeof(time_units) / sizeof(time_units[0]) - 1)
		return NULL;
	*ns = time_units[i].value;
	*alias = time_units[i].alias;
	*period = *ns >= PERIOD_MIN_NS && *ns <= PERIOD_MAX_NS;
	return time_units[i].name;
}

static const struct unit *unit_find(const struct unit *table, const char *s, size_t len)
{
	for (; table->name; table++)
		if (strlen(table->name) == len && !strncmp(table->name, s, len))
			return table;
	return NULL;
}

/* "1.5 is not a whole number of packets": the amount as typed, and what it counts. */
static int not_whole(const char *s, const char *end, const char *noun, const char **why)
{
	static char msg[96];
	int len = end - s > 32 ? 32 : (int)(end - s);

	snprintf(msg, sizeof(msg), "%.*s%s is not a whole number%s%s", len, s,
		 len < end - s ? "..." : "", noun ? " of " : "", noun ?: "");
	*why = msg;
	return -EINVAL;
}

/*
 * A decimal with a suffix from `amounts`, running up to `end`, exact to the
 * unit: 1.5k is 1500 packets, 1.0005k is refused. A count takes the packet
 * multipliers only, and counts things other than packets.
 */
/* A decimal, then a suffix from table running up to end; `unknown` says what was expected. */
static int decimal_with_unit(const char *s, const char *end, const struct unit *table,
			     const char *unknown, struct decimal *d, const struct unit **unit,
			     const char **why)
{
	const char *p = s;
	int err;

	err = parse_decimal(&p, d, why);
	if (err)
		return err;
	*unit = unit_find(table, p, (size_t)(end - p));
	if (!*unit) {
		*why = unknown;
		return -EINVAL;
	}
	return 0;
}

static int parse_amount(const char *s, const char *end, bool count, uint64_t *out,
			const struct unit **unit, const char **why)
{
	struct decimal d;
	int err;

	err = decimal_with_unit(
		s, end, amounts,
		count ? "expected a number (k and M allowed)"
		      : "unknown unit (packets: k, M; bits: kbit, mbit, gbit; bytes: B, kB, MB, GB)",
		&d, unit, why);
	if (err)
		return err;
	if (count && (*unit)->kind != SLUICE_UNIT_PACKETS) {
		*why = "expected a plain number (k and M allowed)";
		return -EINVAL;
	}
	err = decimal_scale(&d, (*unit)->value, out);
	if (err == -EDOM)
		return not_whole(s, end, count ? NULL : kind_nouns[(*unit)->kind], why);
	if (err)
		*why = "number is too large";
	return err;
}

int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why)
{
	static char msg[96];
	const struct unit *unit;
	uint64_t v;
	int err;

	err = parse_amount(s, s + strlen(s), true, &v, &unit, why);
	if (err)
		return err;
	if (v < min || v > max) {
		snprintf(msg, sizeof(msg), "must be between %llu and %llu", (unsigned long long)min,
			 (unsigned long long)max);
		*why = msg;
		return -ERANGE;
	}
	*out = v;
	return 0;
}

int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why)
{
	static char msg[96];
	struct decimal d;
	uint64_t ns;
	int err;

	err = parse_decimal(&s, &d, why);
	if (err)
		return err;
	if (*s) {
		*why = "expected seconds, e.g. 1 or 0.5";
		return -EINVAL;
	}
	/* Nine places are whole nanoseconds: only overflow can fail. */
	if (decimal_scale(&d, NSEC_PER_SEC, &ns)) {
		*why = "number is too large";
		return -ERANGE;
	}
	if (ns < min_ns || ns > max_ns) {
		snprintf(msg, sizeof(msg), "must be between %g and %g seconds",
			 (double)min_ns / NSEC_PER_SEC, (double)max_ns / NSEC_PER_SEC);
		*why = msg;
		return -ERANGE;
	}
	*out = ns;
	return 0;
}

/* The largest printed suffix of `kind` that divides v exactly, so it parses back. */
static const struct unit *unit_exact(uint64_t v, uint8_t kind)
{
	const struct unit *u, *best = NULL;

	for (u = amounts; u->name; u++)
		if (u->kind == kind && !u->alias && !(v % u->value) &&
		    (!best || u->value > best->value))
			best = u;
	return best;
}

/*
 * Past these no option takes a rate. The limits a rate meters are lower
 * (policy.c, --new-sources included): the message names them, the bound
 * here only keeps the arithmetic safe until policy.c refuses.
 */
static int rate_check_max(uint64_t amount, const struct unit *period, const struct unit *unit,
			  const char **why)
{
	static char msg[128];
	uint64_t max = unit->kind == SLUICE_UNIT_PACKETS ? RATE_MAX_PER_SEC
		       : unit->kind == SLUICE_UNIT_BITS	 ? 8 * BYTE_RATE_MAX_PER_SEC
							 : BYTE_RATE_MAX_PER_SEC;

	if (amount / (period->value / NSEC_PER_SEC) <= max)
		return 0;
	if (unit->kind == SLUICE_UNIT_PACKETS)
		snprintf(msg, sizeof(msg), "rate is too high (sluice meters at most %lluM/s)",
			 (unsigned long long)(RATE_METERED_MAX_PER_SEC / 1000000));
	else
		snprintf(msg, sizeof(msg),
			 "bandwidth is too high (a limit meters at most %llumbit/s, %lluMB/s)",
			 (unsigned long long)(8 * BYTE_RATE_METERED_MAX_PER_SEC / 1000000),
			 (unsigned long long)(BYTE_RATE_METERED_MAX_PER_SEC / 1000000));
	*why = msg;
	return -ERANGE;
}

int parse_rate(const char *s, struct rate *rate, const char **why)
{
	const struct unit *period, *unit;
	const char *slash;
	uint64_t amount;
	int err;

	slash = strchr(s, '/');
	if (!slash) {
		*why = "expected AMOUNT/UNIT, e.g. 500/s, 30/m, 10k/s, 10mbit/s, 500kB/s";
		return -EINVAL;
	}
	err = parse_amount(s, slash, false, &amount, &unit, why);
	if (err)
		return err;
	period = unit_find(time_units, slash + 1, strlen(slash + 1));
	if (!period || period->value < PERIOD_MIN_NS || period->value > PERIOD_MAX_NS) {
		*why = "unknown time unit (use s, m or h)";
		return -EINVAL;
	}
	if (!amount) {
		*why = "rate must be greater than zero";
		return -EINVAL;
	}
	err = rate_check_max(amount, period, unit, why);
	if (err)
		return err;
	rate->amount = amount;
	rate->period_ns = period->value;
	rate->unit = unit->kind;
	return 0;
}

int parse_burst(const char *s, struct burst *burst, const char **why)
{
	const struct unit *unit;
	uint64_t v;
	int err;

	err = parse_amount(s, s + strlen(s), false, &v, &unit, why);
	if (err)
		return err;
	if (unit->kind == SLUICE_UNIT_BITS) {
		*why = "a burst is in packets or bytes (B, kB, MB, GB), not bits";
		return -EINVAL;
	}
	burst->bytes = unit->kind == SLUICE_UNIT_BYTES;
	if (!v || v > (burst->bytes ? BURST_BYTES_MAX : BURST_MAX)) {
		*why = burst->bytes ? "must be between 1B and 1099511627776B"
				    : "must be between 1 and 1000000000";
		return -ERANGE;
	}
	burst->value = v;
	return 0;
}

void format_rate(char *buf, unsigned long len, const struct rate *rate)
{
	const struct unit *period = time_units, *u = unit_exact(rate->amount, rate->unit);

	while (period->name && (period->alias || period->value != rate->period_ns))
		period++;
	snprintf(buf, len, "%llu%s/%s", (unsigned long long)(rate->amount / u->value), u->name,
		 period->name ? period->name : "?");
}

void format_burst(char *buf, unsigned long len, const struct burst *burst)
{
	const struct unit *u =
		unit_exact(burst->value, burst->bytes ? SLUICE_UNIT_BYTES : SLUICE_UNIT_PACKETS);

	snprintf(buf, len, "%llu%s", (unsigned long long)(burst->value / u->value), u->name);
}

/*
 * One part of a duration at *p, a decimal and its unit ("1.5h"), to ns,
 * advanced past it. The unit runs up to the next digit.
 */
static int duration_part(const char **p, uint64_t *ns, const struct unit **unit, const char **why)
{
	const char *end;
	struct decimal d;
	int err;

	err = parse_decimal(p, &d, why);
	if (err)
		return err;
	for (end = *p; *end && (*end < '0' || *end > '9'); end++)
		;
	*unit = unit_find(time_units, *p, (size_t)(end - *p));
	if (!*unit) {
		*why = "expected a duration with its unit: us, ms, s, m, h or d (such as 10s or "
		       "1m30s)";
		return -EINVAL;
	}
	*p = end;
	err = decimal_scale(&d, (*unit)->value, ns);
	if (err == -ERANGE)
		*why = "number is too large";
	return err;
}

static int duration_range(uint64_t ns, uint64_t min_ns, uint64_t max_ns, const char **why)
{
	static char msg[96];
	char bound[32];

	if (ns >= min_ns && ns <= max_ns)
		return 0;
	format_duration(bound, sizeof(bound), ns < min_ns ? min_ns : max_ns);
	snprintf(msg, sizeof(msg), "must be at %s %s", ns < min_ns ? "least" : "most", bound);
	*why = msg;
	return -ERANGE;
}

int parse_duration(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why)
{
	const struct unit *unit, *last = NULL;
	const char *p = s;
	uint64_t part, ns = 0;
	int err;

	do {
		err = duration_part(&p, &part, &unit, why);
		if (err == -EDOM)
			return not_whole(s, s + strlen(s), "microseconds", why);
		if (err)
			return err;
		if (last && unit->value >= last->value) {
			*why = "units go largest first, each once (such as 1h30m)";
			return -EINVAL;
		}
		last = unit;
		if (ns > UINT64_MAX - part) {
			*why = "number is too large";
			return -ERANGE;
		}
		ns += part;
	} while (*p);
	/* The microsecond is the smallest unit: a duration is a whole number of them. */
	if (ns % 1000)
		return not_whole(s, s + strlen(s), "microseconds", why);
	err = duration_range(ns, min_ns, max_ns, why);
	if (!err)
		*out = ns;
	return err;
}

/* "5", "5.25": v in units of `unit` ns (a power of ten), the fraction without trailing zeros. */
static int format_fraction(char *buf, size_t len, uint64_t v, uint64_t unit, const char *name)
{
	uint64_t frac = v % unit, scale;
	int places = 0;

	if (!frac)
		return snprintf(buf, len, "%llu%s", (unsigned long long)(v / unit), name);
	for (scale = unit; scale > 1; scale /= 10)
		places++;
	for (; !(frac % 10); frac /= 10)
		places--;
	return snprintf(buf, len, "%llu.%0*llu%s", (unsigned long long)(v / unit), places,
			(unsigned long long)frac, name);
}

void format_duration(char *buf, unsigned long len, uint64_t ns)
{
	const struct unit *u;
	size_t used = 0;
	int n;

	if (!ns) {
		snprintf(buf, len, "0s");
		return;
	}
	/* Under a second: ms or us, with a fraction if need be (1.5ms). */
	if (ns < NSEC_PER_SEC) {
		if (ns >= 1000000)
			format_fraction(buf, len, ns, 1000000, "ms");
		else if (ns >= 1000)
			format_fraction(buf, len, ns, 1000, "us");
		else
			snprintf(buf, len, "%lluns", (unsigned long long)ns);
		return;
	}
	/* Days, hours and minutes whole, then seconds with their fraction: 1d2h3m4.5s. */
	buf[0] = '\0';
	for (u = time_units; u->value >= MINUTE_NS && used < len; u++) {
		if (u->alias || ns < u->value)
			continue;
		n = snprintf(buf + used, len - used, "%llu%s", (unsigned long long)(ns / u->value),
			     u->name);
		used += n > 0 ? (size_t)n : 0;
		ns %= u->value;
	}
	if (ns && used < len)
		format_fraction(buf + used, len - used, ns, NSEC_PER_SEC, "s");
}

static void format_utc_seconds(char *buf, unsigned long len, time_t t)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

void format_utc(char *buf, unsigned long len, uint64_t unix_ns)
{
	format_utc_seconds(buf, len, (time_t)(unix_ns / NSEC_PER_SEC));
}

int ban_length_check(uint64_t ns, const char **why)
{
	static char msg[64];
	char most[32];

	if (ns <= BAN_MAX_NS)
		return 0;
	format_duration(most, sizeof(most), BAN_MAX_NS);
	snprintf(msg, sizeof(msg), "a deny entry lasts at most %s", most);
	*why = msg;
	return -ERANGE;
}

int parse_utc(const char *s, uint64_t *unix_ns, const char **why)
{
	struct tm tm = { 0 };
	char again[32];
	time_t t = -1;
	int end = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &end) == 6 &&
	    !s[end] && tm.tm_year >= 1970) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		t = timegm(&tm);
	}
	/* timegm takes February 31 and sscanf single digits: only format_utc's spelling parses. */
	if (t >= 0)
		format_utc_seconds(again, sizeof(again), t);
	if (t < 0 || strcmp(again, s)) {
		*why = "expected a UTC time as YYYY-MM-DDTHH:MM:SSZ, e.g. 2026-12-01T10:45:07Z";
		return -EINVAL;
	}
	if ((uint64_t)t > UINT64_MAX / NSEC_PER_SEC) {
		*why = "too far in the future";
		return -ERANGE;
	}
	*unix_ns = (uint64_t)t * NSEC_PER_SEC;
	return 0;
}
