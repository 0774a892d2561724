// SPDX-License-Identifier: GPL-2.0
/* One reply's bytes, checked against the caps (resp.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include "fleet/resp.h"

void resp_scan_reset(struct resp_scan *s)
{
	memset(s, 0, sizeof(*s));
}

/*
 * Where the line at p ends (its \r\n, after the type byte): 0 while it is
 * not all here, -EPROTO when it runs past RESP_LINE_MAX.
 */
static ssize_t line_end(const char *p, size_t avail)
{
	size_t max = avail < RESP_LINE_MAX ? avail : RESP_LINE_MAX, i;

	for (i = 1; i + 1 < max; i++)
		if (p[i] == '\r' && p[i + 1] == '\n')
			return (ssize_t)i;
	return avail >= RESP_LINE_MAX ? -EPROTO : 0;
}

/*
 * A number of n bytes as Redis writes them: digits, after a '-' or not,
 * no leading zero (hiredis refuses one), no wider than a long long.
 */
static int number_parse(const char *p, size_t n, long long *v)
{
	unsigned long long acc = 0;
	bool neg = n && p[0] == '-';
	size_t i = neg;

	if (i == n || n - i > 19 || (p[i] == '0' && (n - i > 1 || neg)))
		return -EPROTO;
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EPROTO;
		acc = acc * 10 + (unsigned long long)(p[i] - '0');
	}
	if (acc > LLONG_MAX)
		return -EPROTO;
	*v = neg ? -(long long)acc : (long long)acc;
	return 0;
}

static int array_open(struct resp_scan *s, long long n)
{
	if (s->depth == RESP_DEPTH_MAX || s->elements + (size_t)n > RESP_ELEMENTS_MAX)
		return -EPROTO;
	s->elements += (size_t)n;
	s->left[s->depth++] = (uint32_t)n;
	return 0;
}

/* A bulk string whose header ends at eol: its whole length, 0 while not all here. */
static ssize_t bulk_scan(const char *p, size_t avail, ssize_t eol, long long n)
{
	size_t need = (size_t)eol + 2 + (size_t)n + 2;

	if (n == -1)
		return eol + 2;
	if (avail < need)
		return 0;
	if (p[need - 2] != '\r' || p[need - 1] != '\n')
		return -EPROTO;
	return (ssize_t)need;
}

/*
 * One item at p: its length once whole (an array's header alone, the
 * array opened), 0 while more bytes are needed, or -EPROTO.
 */
static ssize_t item_scan(struct resp_scan *s, const char *p, size_t avail, bool *opened)
{
	ssize_t eol = line_end(p, avail);
	long long n = 0;

	if (eol <= 0)
		return eol;
	if (p[0] == '+' || p[0] == '-')
		return eol + 2;
	if ((p[0] != ':' && p[0] != '$' && p[0] != '*') || number_parse(p + 1, (size_t)eol - 1, &n))
		return -EPROTO;
	if (p[0] == ':')
		return eol + 2;
	if (p[0] == '$')
		return n < -1 || n > RESP_BULK_MAX ? -EPROTO : bulk_scan(p, avail, eol, n);
	if (n < -1 || n > RESP_ARRAY_MAX)
		return -EPROTO;
	*opened = n > 0;
	return n > 0 && array_open(s, n) ? -EPROTO : eol + 2;
}

/* An item ended: true when it was the reply's last. */
static bool item_done(struct resp_scan *s)
{
	while (s->depth > 0) {
		if (--s->left[s->depth - 1] > 0)
			return false;
		s->depth--;
	}
	return true;
}

ssize_t resp_scan(struct resp_scan *s, const char *buf, size_t len)
{
	bool opened;
	ssize_t n;

	while (s->pos < len) {
		opened = false;
		n = item_scan(s, buf + s->pos, len - s->pos, &opened);
		if (n <= 0)
			return n;
		if (s->pos + (size_t)n > RESP_REPLY_MAX)
			return -EPROTO;
		s->pos += (size_t)n;
		if (!opened && item_done(s))
			return (ssize_t)s->pos;
	}
	return 0;
}
