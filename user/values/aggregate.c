// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "values/aggregate.h"
#include "values/cidr.h"

#define AGGREGATE_SYNTAX "expected [ipv4|ipv6]/LEN=RATE[,burst=N], such as /24=5000/s"

/* "ipv4/", "ipv6/" or "/": the family spelled out, if it was. */
static int parse_aggregate_family(const char **s, uint8_t *family, const char **why)
{
	*family = 0;
	if (!strncmp(*s, "ipv4/", 5) || !strncmp(*s, "ipv6/", 5)) {
		*family = (*s)[3] == '4' ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
		*s += 4;
	}
	if (**s != '/') {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	(*s)++;
	return 0;
}

int parse_aggregate(const char *s, struct aggregate *agg, const char **why)
{
	char rate[64], prefix[8];
	const char *eq, *comma;
	unsigned int len;
	int err;

	memset(agg, 0, sizeof(*agg));
	err = parse_aggregate_family(&s, &agg->family, why);
	if (err)
		return err;
	eq = strchr(s, '=');
	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(prefix)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	memcpy(prefix, s, (size_t)(eq - s));
	prefix[eq - s] = '\0';
	err = parse_prefix(prefix, agg->family == SLUICE_FAMILY_IPV4 ? 32 : 128, &len, why);
	if (err)
		return err;
	agg->prefix_len = (uint8_t)len;
	comma = strchr(eq + 1, ',');
	if (!comma)
		comma = eq + 1 + strlen(eq + 1);
	if ((size_t)(comma - eq - 1) >= sizeof(rate)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	memcpy(rate, eq + 1, (size_t)(comma - eq - 1));
	rate[comma - eq - 1] = '\0';
	err = parse_rate(rate, &agg->rate, why);
	if (err || !*comma)
		return err;
	if (strncmp(comma, ",burst=", 7)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	return parse_burst(comma + 7, &agg->burst, why);
}

void format_aggregate(char *buf, unsigned long len, const struct aggregate *agg)
{
	const char *family = agg->family == SLUICE_FAMILY_IPV4	 ? "ipv4"
			     : agg->family == SLUICE_FAMILY_IPV6 ? "ipv6"
								 : "";
	char rate[48], burst[48] = "";

	format_rate(rate, sizeof(rate), &agg->rate);
	if (agg->burst.value) {
		memcpy(burst, ",burst=", 8);
		format_burst(burst + 7, sizeof(burst) - 7, &agg->burst);
	}
	snprintf(buf, len, "%s/%u=%s%s", family, agg->prefix_len, rate, burst);
}
