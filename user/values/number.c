// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include "values/number.h"

/* Decimal digits only: no sign, no spaces, no hex, no overflow. */
int parse_digits(const char **s, uint64_t *out, const char **why)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9') {
		*why = *p == '.'   ? "expected a digit before the point (0.5, not .5)"
		       : *p == '-' ? "must not be negative"
				   : "expected a number";
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

int parse_decimal(const char **s, struct decimal *d, const char **why)
{
	const char *p = *s;
	int err;

	d->fraction = 0;
	d->places = 0;
	err = parse_digits(&p, &d->whole, why);
	if (err)
		return err;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9') {
			*why = "expected a digit after the point";
			return -EINVAL;
		}
		/* Beyond the last place a digit is a mistake, not something to round. */
		for (p++; *p >= '0' && *p <= '9'; p++, d->places++) {
			if (d->places == DECIMAL_PLACES_MAX) {
				*why = "at most 9 digits after the point";
				return -EINVAL;
			}
			d->fraction = d->fraction * 10 + (uint64_t)(*p - '0');
		}
	}
	*s = p;
	return 0;
}

int decimal_scale(const struct decimal *d, uint64_t scale, uint64_t *out)
{
	unsigned __int128 part = (unsigned __int128)d->fraction * scale;
	uint64_t ten_to_places = 1;
	unsigned int i;

	for (i = 0; i < d->places; i++)
		ten_to_places *= 10;
	if (part % ten_to_places)
		return -EDOM;
	part /= ten_to_places;
	part += (unsigned __int128)d->whole * scale;
	if (part > UINT64_MAX)
		return -ERANGE;
	*out = (uint64_t)part;
	return 0;
}

int parse_u16_range(const char *s, uint16_t *lo, uint16_t *hi, const char *shape, const char *range,
		    const char **why)
{
	uint64_t a, b;
	int err;

	err = parse_digits(&s, &a, why);
	if (err)
		return err;
	b = a;
	if (*s == '-') {
		s++;
		err = parse_digits(&s, &b, why);
		if (err)
			return err;
	}
	if (*s) {
		*why = shape;
		return -EINVAL;
	}
	if (!a || b > UINT16_MAX || b < a) {
		*why = range;
		return -ERANGE;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}
