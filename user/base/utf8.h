/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 as Unicode defines it well-formed (no overlongs, no surrogates,
 * nothing past U+10FFFF): interface names are bytes, JSON is UTF-8.
 */
#ifndef SLUICE_BASE_UTF8_H
#define SLUICE_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* U+FFFD REPLACEMENT CHARACTER, in UTF-8. */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/*
 * The character at s: true and its length (1-4) when well-formed, else
 * false and the length of its maximal ill-formed subpart (at least 1), the
 * bytes one U+FFFD stands for (Unicode 15, 3.9, "U+FFFD Substitution of
 * Maximal Subparts"). s is NUL-terminated and not at its end.
 */
bool utf8_next(const char *s, size_t *len);
bool utf8_valid(const char *s);

#endif /* SLUICE_BASE_UTF8_H */
