// SPDX-License-Identifier: GPL-2.0
/* Well-formed UTF-8, by the table of well-formed byte sequences (Unicode 3.9, table 3-7). */
#include <stdint.h>
#include "base/utf8.h"

/* The bytes a lead byte may be followed by: its length, and its second byte's range. */
struct lead {
	uint8_t len;
	uint8_t lo, hi;
};

static struct lead lead_of(unsigned char c)
{
	if (c < 0x80)
		return (struct lead){ 1, 0, 0 };
	if (c >= 0xc2 && c <= 0xdf)
		return (struct lead){ 2, 0x80, 0xbf };
	if (c == 0xe0) /* not overlong */
		return (struct lead){ 3, 0xa0, 0xbf };
	if (c == 0xed) /* not a surrogate */
		return (struct lead){ 3, 0x80, 0x9f };
	if (c >= 0xe1 && c <= 0xef)
		return (struct lead){ 3, 0x80, 0xbf };
	if (c == 0xf0) /* not overlong */
		return (struct lead){ 4, 0x90, 0xbf };
	if (c >= 0xf1 && c <= 0xf3)
		return (struct lead){ 4, 0x80, 0xbf };
	if (c == 0xf4) /* not past U+10FFFF */
		return (struct lead){ 4, 0x80, 0x8f };
	/* A continuation byte, C0, C1 (always overlong) or F5-FF: never a lead. */
	return (struct lead){ 0, 0, 0 };
}

bool utf8_next(const char *s, size_t *len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct lead l = lead_of(p[0]);
	size_t i;

	if (l.len <= 1) {
		*len = 1;
		return l.len == 1;
	}
	/* The NUL terminator fails every range: nothing is read past it. */
	if (p[1] < l.lo || p[1] > l.hi) {
		*len = 1;
		return false;
	}
	for (i = 2; i < l.len; i++) {
		if (p[i] < 0x80 || p[i] > 0xbf) {
			*len = i;
			return false;
		}
	}
	*len = l.len;
	return true;
}

bool utf8_valid(const char *s)
{
	size_t len;

	for (; *s; s += len)
		if (!utf8_next(s, &len))
			return false;
	return true;
}
