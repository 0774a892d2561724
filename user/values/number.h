/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every parser in values/ returns 0 or a negative errno and, on error,
 * points *why at a short explanation.
 */
#ifndef SLUICE_VALUES_NUMBER_H
#define SLUICE_VALUES_NUMBER_H

#include <stdint.h>

/* Decimal digits at *s, advanced past them: no sign, no spaces, no hex, no overflow. */
int parse_digits(const char **s, uint64_t *out, const char **why);

#endif /* SLUICE_VALUES_NUMBER_H */
