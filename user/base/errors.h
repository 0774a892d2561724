/* SPDX-License-Identifier: GPL-2.0 */
/* Human tables, JSON, and the one-line error messages every command uses. */
#ifndef SLUICE_OUTPUT_H
#define SLUICE_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Errors are one line: "sluice CMD: MESSAGE" on stderr, or, once
 * output_json_errors(true) was called (any --json on the command line),
 * {"command":"CMD","error":"MESSAGE"} on stdout, so a caller that asked for
 * JSON always gets JSON. cmd may be NULL (no command yet).
 */
void output_json_errors(bool on);
void error_line(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "sluice CMD: MESSAGE" and returns EXIT_BAD_INPUT. */
int fail_input(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "sluice CMD: MESSAGE: strerror(-err)" (no suffix for err 0); EXIT_FAILURE_RUNTIME. */
int fail_runtime(const char *cmd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A failed read of IFACE's pinned state ("cannot DOING of IFACE: ..."), with
 * advice when the state has another layout (-EPROTO); EXIT_FAILURE_RUNTIME.
 */
int fail_state(const char *cmd, int err, const char *ifname, const char *doing);
/* Fails unless we run as root; returns 0 or an exit status. */
int require_root(const char *cmd);

/*
 * A small streaming JSON writer: it tracks nesting and commas, so callers
 * only say what comes next. key is NULL inside arrays.
 */
#define JSON_MAX_DEPTH 8

struct json {
	FILE *out;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

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

#endif /* SLUICE_OUTPUT_H */
