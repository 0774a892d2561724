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

/* U+FEFF as the first character of a file: a byte order mark, no part of the text. */
#define UTF8_BOM "\xef\xbb\xbf"

/*
 * in as a person can read it back, into out (len bytes, cut to fit, always
 * terminated): every character that shows nothing or moves the text
 * (controls, format characters such as U+FEFF and U+200B, spaces other than
 * U+0020) written \uXXXX (\UXXXXXXXX past U+FFFF), an ASCII control or a
 * byte that is no UTF-8 \xNN; all else as it is. For messages that quote
 * input.
 */
void utf8_visible(char *out, size_t len, const char *in);

#endif /* SLUICE_BASE_UTF8_H */
