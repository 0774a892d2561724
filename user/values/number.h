/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every parser in values/ returns 0 or a negative errno and, on error,
 * points *why at a short explanation.
 */
#ifndef SLUICE_VALUES_NUMBER_H
#define SLUICE_VALUES_NUMBER_H

#include <stdint.h>

/* Digits after the point a decimal may have: nanoseconds, or 1 bit of a gbit. */
#define DECIMAL_PLACES_MAX 9

/* A decimal as typed, whole.fraction: the fraction is fraction / 10^places. */
struct decimal {
	uint64_t whole;
	uint64_t fraction;
	unsigned int places;
};

/* Decimal digits at *s, advanced past them: no sign, no spaces, no hex, no overflow. */
int parse_digits(const char **s, uint64_t *out, const char **why);
/*
 * N or LOW-HIGH, each 1-65535, low to high (ports, frame lengths): else
 * *why is shape (-EINVAL) or range (-ERANGE).
 */
int parse_u16_range(const char *s, uint16_t *lo, uint16_t *hi, const char *shape,
		    const char *range, const char **why);
/*
 * DIGITS[.DIGITS] at *s, advanced past it: no sign, no exponent, a digit on
 * both sides of the point, at most DECIMAL_PLACES_MAX after it.
 */
int parse_decimal(const char **s, struct decimal *d, const char **why);
/* d times scale, exactly: -ERANGE past 64 bits, -EDOM when it is not a whole number. */
int decimal_scale(const struct decimal *d, uint64_t scale, uint64_t *out);

#endif /* SLUICE_VALUES_NUMBER_H */
