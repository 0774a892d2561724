// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "values/ban.h"
#include "values/rate.h"

int parse_ban_after(const char *s, struct ban_after *out, const char **why)
{
	const char *slash = strchr(s, '/');
	struct ban_after b = { 0 };
	char count[64];
	int err;

	if (!strcmp(s, "none")) {
		*out = b;
		return 0;
	}
	if (slash && (size_t)(slash - s) >= sizeof(count)) {
		*why = "expected N or N/PERIOD, such as 1500/10s";
		return -EINVAL;
	}
	snprintf(count, sizeof(count), "%.*s", slash ? (int)(slash - s) : (int)strlen(s), s);
	err = parse_count(count, 1, BAN_AFTER_MAX, &b.count, why);
	if (!err && slash)
		err = parse_duration(slash + 1, BAN_PERIOD_MIN_NS, BAN_PERIOD_MAX_NS, &b.period_ns,
				     why);
	if (err)
		return err;
	*out = b;
	return 0;
}

void format_ban_after(char *buf, size_t len, const struct ban_after *b)
{
	char period[32];

	format_duration(period, sizeof(period), b->period_ns ?: BAN_PERIOD_DEFAULT_NS);
	snprintf(buf, len, "%llu/%s", (unsigned long long)b->count, period);
}

int parse_factor(const char *s, uint32_t *milli, const char **why)
{
	uint64_t whole = 0, frac = 0;
	int places = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9' && whole <= BAN_ESCALATE_MAX; p++)
		whole = whole * 10 + (uint64_t)(*p - '0');
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9' && places < 3; p++, places++)
			frac = frac * 10 + (uint64_t)(*p - '0');
	if (*p || p[-1] == '.')
		goto bad;
	for (; places < 3; places++)
		frac *= 10;
	whole = whole * 1000 + frac;
	if (whole < BAN_ESCALATE_MIN || whole > BAN_ESCALATE_MAX) {
		*why = "must be between 1 and 100";
		return -ERANGE;
	}
	*milli = (uint32_t)whole;
	return 0;
bad:
	*why = "expected a factor such as 2 or 1.5 (at most three places)";
	return -EINVAL;
}

void format_factor(char *buf, size_t len, uint32_t milli)
{
	int n = snprintf(buf, len, "%u.%03u", milli / 1000, milli % 1000);

	/* 1.500 is 1.5, 2.000 is 2 */
	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && (size_t)n < len && buf[n - 1] == '.')
		buf[--n] = '\0';
}
