/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A report written once, field by field: each call writes its field to the
 * JSON writer when the report is JSON (under key) and as text otherwise
 * (with fmt), as iproute2's print_uint(PRINT_ANY, ...) does. A NULL key
 * writes text only, a NULL fmt JSON only: for the few fields the two forms
 * show differently. Tables name their columns once (struct report_col):
 * the text header, each row's cells and their JSON keys come from them.
 */
#ifndef SLUICE_OUTPUTS_REPORT_H
#define SLUICE_OUTPUTS_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include "base/json.h"

struct report {
	struct json *j; /* NULL: text on out */
	FILE *out;
	bool mid_line; /* text: a cell after this one is set off by a space */
	int overrun;   /* text: columns the line's cells have run past their grid */
};

/* One column of a table. */
struct report_col {
	const char *key;     /* its JSON key; NULL: text only */
	const char *header;  /* its text header */
	int width;	     /* text width; negative: left-aligned */
	int decimals;	     /* text decimals of a rate (JSON has 3) */
	const char *unknown; /* text of an unknown value; NULL: none */
};

void report_text(struct report *r, FILE *out);
void report_json(struct report *r, struct json *j);
/* A report on stdout: JSON through j (which it initialises) or text. */
void report_start(struct report *r, struct json *j, bool json);
/* Ends it: 0, or the JSON writer's error (see json_finish). */
int report_end(struct report *r);

void report_string(struct report *r, const char *key, const char *fmt, const char *value);
/* The interface: "interface" (see json_ifname), or text with fmt. */
void report_ifname(struct report *r, const char *fmt, const char *ifname);
/* A name that may not be UTF-8: key, and key_hex (see json_name), or text with fmt. */
void report_name(struct report *r, const char *key, const char *fmt, const char *name);
void report_u64(struct report *r, const char *key, const char *fmt, uint64_t value);
/* A rate: "key": value (JSON decimals) or null when unknown; text only when known. */
void report_rate(struct report *r, const char *key, const char *fmt, double value, int decimals,
		 bool known);
/* A string element of an array in JSON; text with fmt. */
void report_element(struct report *r, const char *fmt, const char *value);
void report_bool(struct report *r, const char *key, const char *fmt, bool value);
void report_null(struct report *r, const char *key);
/* An object (JSON) or nothing (text); key is NULL inside arrays. */
void report_open(struct report *r, const char *key);
void report_close(struct report *r);
/* An array (JSON) or nothing (text). */
void report_list_open(struct report *r, const char *key);
void report_list_close(struct report *r);
/* A line break in text, nothing in JSON. */
void report_eol(struct report *r);

/* The text header of columns, each in its width, set off by spaces. */
void report_header(struct report *r, const struct report_col *cols, int n);
/* A cell: "key": value in JSON, the value in the column's width in text. */
void report_cell_u64(struct report *r, const struct report_col *c, uint64_t value);
void report_cell_string(struct report *r, const struct report_col *c, const char *value);
/* A rate: null in JSON when unknown; in text the column's unknown, if any. */
void report_cell_rate(struct report *r, const struct report_col *c, double value, bool known);
/* The interface's cell: "interface" and "ifname_hex" in JSON (see json_ifname). */
void report_cell_ifname(struct report *r, const struct report_col *c, const char *ifname);
/* A string or, when value is NULL, null in JSON and the column's unknown in text. */
void report_cell_optional(struct report *r, const struct report_col *c, const char *value);
/* A cell in text only: its JSON is written apart, when the forms differ. */
void report_cell_text(struct report *r, const struct report_col *c, const char *text);

#endif /* SLUICE_OUTPUTS_REPORT_H */
