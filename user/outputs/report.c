// SPDX-License-Identifier: GPL-2.0
/* One description per report, written as text or as JSON (see report.h). */
#include <stdio.h>
#include <string.h>
#include "outputs/report.h"

void report_text(struct report *r, FILE *out)
{
	r->j = NULL;
	r->out = out;
	r->mid_line = false;
	r->overrun = 0;
}

void report_json(struct report *r, struct json *j)
{
	r->j = j;
	r->out = j->out;
	r->mid_line = false;
	r->overrun = 0;
}

void report_start(struct report *r, struct json *j, bool json)
{
	json_init(j, stdout);
	if (json)
		report_json(r, j);
	else
		report_text(r, stdout);
}

int report_end(struct report *r)
{
	return r->j ? json_finish(r->j) : 0;
}

/* Text of a field with fmt, when it has one in text. */
#define REPORT_TEXT(r, fmt, ...)                               \
	do {                                                   \
		if (!(r)->j && (fmt)) {                        \
			fprintf((r)->out, (fmt), __VA_ARGS__); \
			(r)->mid_line = true;                  \
		}                                              \
	} while (0)

void report_string(struct report *r, const char *key, const char *fmt, const char *value)
{
	if (r->j && key)
		json_string(r->j, key, value);
	REPORT_TEXT(r, fmt, value);
}

void report_ifname(struct report *r, const char *fmt, const char *ifname)
{
	if (r->j)
		json_ifname(r->j, ifname);
	REPORT_TEXT(r, fmt, ifname);
}

void report_name(struct report *r, const char *key, const char *fmt, const char *name)
{
	if (r->j && key)
		json_name(r->j, key, name);
	REPORT_TEXT(r, fmt, name);
}

void report_u64(struct report *r, const char *key, const char *fmt, uint64_t value)
{
	if (r->j && key)
		json_u64(r->j, key, value);
	REPORT_TEXT(r, fmt, (unsigned long long)value);
}

void report_rate(struct report *r, const char *key, const char *fmt, double value, int decimals,
		 bool known)
{
	if (r->j && key && known)
		json_double(r->j, key, value, decimals);
	else if (r->j && key)
		json_null(r->j, key);
	else if (known)
		REPORT_TEXT(r, fmt, value);
}

void report_element(struct report *r, const char *fmt, const char *value)
{
	if (r->j)
		json_string(r->j, NULL, value);
	REPORT_TEXT(r, fmt, value);
}

void report_bool(struct report *r, const char *key, const char *fmt, bool value)
{
	if (r->j && key)
		json_bool(r->j, key, value);
	REPORT_TEXT(r, fmt, value ? "yes" : "no");
}

void report_null(struct report *r, const char *key)
{
	if (r->j)
		json_null(r->j, key);
}

void report_open(struct report *r, const char *key)
{
	if (r->j)
		json_object_begin(r->j, key);
}

void report_close(struct report *r)
{
	if (r->j)
		json_object_end(r->j);
}

void report_list_open(struct report *r, const char *key)
{
	if (r->j)
		json_array_begin(r->j, key);
}

void report_list_close(struct report *r)
{
	if (r->j)
		json_array_end(r->j);
}

void report_eol(struct report *r)
{
	if (!r->j)
		fputc('\n', r->out);
	r->mid_line = false;
	r->overrun = 0;
}

/* Text cells after the first of a line are set off by a space. */
static void cell_sep(struct report *r)
{
	if (r->mid_line)
		fputc(' ', r->out);
	r->mid_line = true;
}

void report_header(struct report *r, const struct report_col *cols, int n)
{
	int i;

	for (i = 0; i < n && !r->j; i++)
		report_cell_text(r, &cols[i], cols[i].header);
}

/*
 * A cell wider than its column takes the padding of the cells after it,
 * as far as they have some, so that the columns line up again.
 */
static void cell_print(struct report *r, int width, const char *text)
{
	int wide = width < 0 ? -width : width, len = (int)strlen(text);
	int room = wide - r->overrun;

	if (room < len)
		room = len;
	r->overrun += room - wide;
	cell_sep(r);
	fprintf(r->out, "%*s", width < 0 ? -room : room, text);
}

void report_cell_text(struct report *r, const struct report_col *c, const char *text)
{
	if (!r->j)
		cell_print(r, c->width, text);
}

void report_cell_u64(struct report *r, const struct report_col *c, uint64_t value)
{
	char text[24];

	if (r->j) {
		json_u64(r->j, c->key, value);
		return;
	}
	snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
	cell_print(r, c->width, text);
}

void report_cell_string(struct report *r, const struct report_col *c, const char *value)
{
	if (r->j)
		json_string(r->j, c->key, value);
	else
		report_cell_text(r, c, value);
}

void report_cell_ifname(struct report *r, const struct report_col *c, const char *ifname)
{
	if (r->j)
		json_ifname(r->j, ifname);
	else
		report_cell_text(r, c, ifname);
}

void report_cell_optional(struct report *r, const struct report_col *c, const char *value)
{
	if (r->j && !value)
		json_null(r->j, c->key);
	else if (value)
		report_cell_string(r, c, value);
	else if (c->unknown)
		report_cell_text(r, c, c->unknown);
}

void report_cell_rate(struct report *r, const struct report_col *c, double value, bool known)
{
	if (r->j && known)
		json_double(r->j, c->key, value, 3);
	else if (r->j)
		json_null(r->j, c->key);
	else if (!known && c->unknown)
		report_cell_text(r, c, c->unknown);
	else if (known) {
		char text[64];

		snprintf(text, sizeof(text), "%.*f", c->decimals, value);
		cell_print(r, c->width, text);
	}
}
