// SPDX-License-Identifier: GPL-2.0
/* Amounts with units: rates, bursts, counts and durations, parsed and formatted. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "values/number.h"
#include "values/rate.h"

struct unit {
	const char *name;
	uint64_t value;
	uint8_t kind; /* enum sluice_rate_unit */
};

/* Amount suffixes: packets, bits and bytes, SI multipliers, spelled apart. */
static const struct unit amounts[] = {
	{ "", 1, SLUICE_UNIT_PACKETS },		  { "k", 1000, SLUICE_UNIT_PACKETS },
	{ "M", 1000000, SLUICE_UNIT_PACKETS },	  { "bit", 1, SLUICE_UNIT_BITS },
	{ "kbit", 1000, SLUICE_UNIT_BITS },	  { "mbit", 1000000, SLUICE_UNIT_BITS },
	{ "Mbit", 1000000, SLUICE_UNIT_BITS },	  { "gbit", 1000000000, SLUICE_UNIT_BITS },
	{ "Gbit", 1000000000, SLUICE_UNIT_BITS }, { "B", 1, SLUICE_UNIT_BYTES },
	{ "kB", 1000, SLUICE_UNIT_BYTES },	  { "MB", 1000000, SLUICE_UNIT_BYTES },
	{ "GB", 1000000000, SLUICE_UNIT_BYTES },  { NULL, 0, 0 },
};

static const struct unit periods[] = {
	{ "s", NSEC_PER_SEC, 0 },
	{ "m", 60 * NSEC_PER_SEC, 0 },
	{ "h", 3600 * NSEC_PER_SEC, 0 },
	{ NULL, 0, 0 },
};

static const struct unit *unit_find(const struct unit *table, const char *s, size_t len)
{
	for (; table->name; table++)
		if (strlen(table->name) == len && !strncmp(table->name, s, len))
			return table;
	return NULL;
}

/* NUMBER with a suffix from `amounts`, running up to `end`. */
static int parse_amount(const char *s, const char *end, uint64_t *out, const struct unit **unit,
			const char **why)
{
	uint64_t v;
	int err;

	err = parse_digits(&s, &v, why);
	if (err)
		return err;
	*unit = unit_find(amounts, s, (size_t)(end - s));
	if (!*unit) {
		*why = "unknown unit (packets: k, M; bits: kbit, mbit, gbit; bytes: B, kB, MB, GB)";
		return -EINVAL;
	}
	if (v > UINT64_MAX / (*unit)->value) {
		*why = "number is too large";
		return -ERANGE;
	}
	*out = v * (*unit)->value;
	return 0;
}

/* Counts take the packet multipliers k and M only. */
static int parse_scaled(const char *s, const char *end, uint64_t *out, const char **why)
{
	const struct unit *unit;
	int err;

	err = parse_amount(s, end, out, &unit, why);
	if (!err && unit->kind != SLUICE_UNIT_PACKETS) {
		*why = "expected a plain number (k and M allowed)";
		return -EINVAL;
	}
	return err;
}

int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why)
{
	static char msg[96];
	uint64_t v;
	int err;

	err = parse_scaled(s, s + strlen(s), &v, why);
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

/* Whole seconds to nanoseconds, refusing what would overflow. */
static int seconds_to_ns(uint64_t whole, uint64_t *ns, const char **why)
{
	if (whole > UINT64_MAX / NSEC_PER_SEC / 2) {
		*why = "number is too large";
		return -ERANGE;
	}
	*ns = whole * NSEC_PER_SEC;
	return 0;
}

int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why)
{
	static char msg[96];
	uint64_t whole, ns, scale = NSEC_PER_SEC / 10;
	int err;

	err = parse_digits(&s, &whole, why);
	if (!err)
		err = seconds_to_ns(whole, &ns, why);
	if (err)
		return err;
	if (*s == '.' && s[1]) {
		/* Up to nanoseconds; a digit beyond is a mistake, not rounding. */
		for (s++; *s >= '0' && *s <= '9' && scale; s++, scale /= 10)
			ns += (uint64_t)(*s - '0') * scale;
	}
	if (*s) {
		*why = "expected seconds, e.g. 1 or 0.5";
		return -EINVAL;
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

/* The largest suffix of `kind` that divides v exactly, so it parses back. */
static const struct unit *unit_exact(uint64_t v, uint8_t kind)
{
	const struct unit *u, *best = NULL;

	for (u = amounts; u->name; u++)
		if (u->kind == kind && !(v % u->value) && (!best || u->value > best->value) &&
		    (kind != SLUICE_UNIT_BITS || islower(u->name[0]) || u->name[0] == 'b'))
			best = u;
	return best;
}

int parse_rate(const char *s, struct rate *rate, const char **why)
{
	const struct unit *period, *unit;
	uint64_t amount, per_second_max;
	const char *slash;
	int err;

	slash = strchr(s, '/');
	if (!slash) {
		*why = "expected AMOUNT/UNIT, e.g. 500/s, 30/m, 10k/s, 10mbit/s, 500kB/s";
		return -EINVAL;
	}
	err = parse_amount(s, slash, &amount, &unit, why);
	if (err)
		return err;
	period = unit_find(periods, slash + 1, strlen(slash + 1));
	if (!period) {
		*why = "unknown time unit (use s, m or h)";
		return -EINVAL;
	}
	if (!amount) {
		*why = "rate must be greater than zero";
		return -EINVAL;
	}
	per_second_max = unit->kind == SLUICE_UNIT_PACKETS ? RATE_MAX_PER_SEC
			 : unit->kind == SLUICE_UNIT_BITS  ? 8 * BYTE_RATE_MAX_PER_SEC
							   : BYTE_RATE_MAX_PER_SEC;
	if (amount / (period->value / NSEC_PER_SEC) > per_second_max) {
		*why = unit->kind == SLUICE_UNIT_PACKETS ? "rate is too high (at most 1000M/s)"
							 : "rate is too high (at most 1000gbit/s)";
		return -ERANGE;
	}
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

	err = parse_amount(s, s + strlen(s), &v, &unit, why);
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
	const struct unit *period = periods, *u = unit_exact(rate->amount, rate->unit);

	while (period->name && period->value != rate->period_ns)
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
