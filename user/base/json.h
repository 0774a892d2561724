/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small streaming JSON writer: it tracks nesting and commas, so callers
 * only say what comes next. key is NULL inside arrays. Strings come out as
 * valid UTF-8 whatever goes in. A mistake (nesting past JSON_MAX_DEPTH, an
 * end with nothing open) stops all further output and json_finish() says so.
 */
#ifndef SLUICE_BASE_JSON_H
#define SLUICE_BASE_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Objects and arrays open at once, at most. */
#define JSON_MAX_DEPTH 8

struct json {
	FILE *out;
	int depth;
	int err; /* the first mistake, a negative errno: nothing is written after it */
	bool need_comma[JSON_MAX_DEPTH + 1];
};

/* Indented output from now on (-p/--pretty), for every writer of the process. */
void json_pretty(bool on);
void json_init(struct json *j, FILE *out);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
/* Bytes that are not well-formed UTF-8 come out as U+FFFD. */
void json_string(struct json *j, const char *key, const char *value);
/*
 * A name made of bytes, such as an interface's: "key": the name as a
 * string, and when it is not valid UTF-8 (so the string had to replace
 * some of it) also "key_hex": its bytes in hex, to tell names apart.
 * Inside arrays (key NULL) only the string.
 */
void json_name(struct json *j, const char *key, const char *name);
/* An interface name: "interface", and "ifname_hex" when it is not UTF-8. */
void json_ifname(struct json *j, const char *ifname);
void json_u64(struct json *j, const char *key, uint64_t value);
void json_bool(struct json *j, const char *key, bool value);
/* A number with `decimals` digits after the point (rates). */
void json_double(struct json *j, const char *key, double value, int decimals);
void json_null(struct json *j, const char *key);
/*
 * Ends the document with a newline and flushes it. Returns 0, or the
 * first mistake: -E2BIG for nesting past JSON_MAX_DEPTH, -EINVAL for
 * unbalanced ends; then the output is incomplete and the caller fails.
 */
int json_finish(struct json *j);

#endif /* SLUICE_BASE_JSON_H */
