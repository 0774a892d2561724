// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "values/number.h"

/* Decimal digits only: no sign, no spaces, no hex, no overflow. */
int parse_digits(const char **s, uint64_t *out, const char **why)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9') {
		*why = "expected a number";
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			*why = "number is too large";
			return -ERANGE;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return 0;
}
