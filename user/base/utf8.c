// SPDX-License-Identifier: GPL-2.0
/* Well-formed UTF-8, by the table of well-formed byte sequences (Unicode 3.9, table 3-7). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

/* The code point of a well-formed character of len bytes. */
static uint32_t utf8_code_point(const unsigned char *p, size_t len)
{
	static const unsigned char lead_bits[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = p[0] & lead_bits[len];
	size_t i;

	for (i = 1; i < len; i++)
		cp = cp << 6 | (p[i] & 0x3f);
	return cp;
}

/* Characters that print as nothing, as a blank, or change the text around them. */
static bool invisible(uint32_t cp)
{
	static const struct {
		uint32_t lo, hi;
	} ranges[] = {
		{ 0x00, 0x1f },	    { 0x7f, 0xa0 },	  { 0xad, 0xad },	{ 0x34f, 0x34f },
		{ 0x61c, 0x61c },   { 0x115f, 0x1160 },	  { 0x17b4, 0x17b5 },	{ 0x180b, 0x180f },
		{ 0x2000, 0x200f }, { 0x2028, 0x202f },	  { 0x205f, 0x206f },	{ 0x3000, 0x3000 },
		{ 0x3164, 0x3164 }, { 0xfe00, 0xfe0f },	  { 0xfeff, 0xfeff },	{ 0xffa0, 0xffa0 },
		{ 0xfff0, 0xfffb }, { 0x1d173, 0x1d17a }, { 0xe0000, 0xe0fff },
	};
	size_t i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
		if (cp >= ranges[i].lo && cp <= ranges[i].hi)
			return true;
	return false;
}

void utf8_visible(char *out, size_t len, const char *in)
{
	const unsigned char *p = (const unsigned char *)in;
	size_t used = 0, n;
	char one[16];
	uint32_t cp;
	int w;

	if (!len)
		return;
	for (; *p; p += n) {
		if (!utf8_next((const char *)p, &n)) {
			w = snprintf(one, sizeof(one), "\\x%02x", p[0]);
			n = 1;
		} else if (n == 1 && !invisible(p[0])) {
			w = snprintf(one, sizeof(one), "%c", p[0]);
		} else if (!invisible(cp = utf8_code_point(p, n))) {
			w = snprintf(one, sizeof(one), "%.*s", (int)n, (const char *)p);
		} else {
			w = snprintf(one, sizeof(one),
				     cp < 0x80	   ? "\\x%02x"
				     : cp > 0xffff ? "\\U%08x"
						   : "\\u%04x",
				     (unsigned int)cp);
		}
		if (used + (size_t)w >= len)
			break;
		memcpy(out + used, one, (size_t)w);
		used += (size_t)w;
	}
	out[used] = '\0';
}
