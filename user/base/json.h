/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer: it tracks nesting and commas, so callers
 * only say what comes next. key is NULL inside arrays.
 */
#ifndef SLUICE_BASE_JSON_H
#define SLUICE_BASE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 8

struct json {
	FILE *out;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

/* Indented output from now on (-p/--pretty), for every writer of the process. */
void json_pretty(bool on);
void json_init(struct json *j, FILE *out);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *value);
void json_u64(struct json *j, const char *key, uint64_t value);
void json_bool(struct json *j, const char *key, bool value);
/* A number with `decimals` digits after the point (rates). */
void json_double(struct json *j, const char *key, double value, int decimals);
void json_null(struct json *j, const char *key);
/* Ends the document with a newline. */
void json_finish(struct json *j);

#endif /* SLUICE_BASE_JSON_H */
