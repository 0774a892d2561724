/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Exit statuses, the one-line error messages every command uses, and the
 * lines a command says when it succeeds. The lowest layer of user/: it
 * includes nothing of sluice's.
 */
#ifndef SLUICE_BASE_ERRORS_H
#define SLUICE_BASE_ERRORS_H

#include <stdbool.h>

/* Exit statuses shared by every command. */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,
	EXIT_BAD_INPUT = 2,
};

/*
 * Errors are one line: "sluice CMD: MESSAGE" on stderr, or, once
 * output_json_errors(true) was called (any --json on the command line),
 * {"command":"CMD","error":"MESSAGE"} on stdout, so a caller that asked for
 * JSON always gets JSON. cmd may be NULL (no command yet).
 */
void output_json_errors(bool on);
void error_line(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * A warning line on stderr, whatever the output, its invisible characters
 * shown as errors'. Kept until warnings_flush(), the command's end; an
 * error line drops those kept, so that bad input gets one line alone.
 */
void warning_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warnings_flush(void);

/* Prints "sluice CMD: MESSAGE" and returns EXIT_BAD_INPUT. */
int fail_input(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints "sluice CMD: MESSAGE: strerror(-err)" (no suffix for err 0); EXIT_FAILURE_RUNTIME. */
int fail_runtime(const char *cmd, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A document the JSON writer refused (json_finish's error: nesting too
 * deep, unbalanced ends): one line, EXIT_FAILURE_RUNTIME; EXIT_OK for 0.
 */
int fail_json(const char *cmd, int err);

/*
 * A command's line saying what it did ("sluice: detached from eth1"), on
 * stdout; with JSON asked for, kept for the command's document instead
 * (output_said), so that stdout holds JSON alone.
 */
void output_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* What output_say kept, lines ending in '\n' ("" if nothing). */
const char *output_said(void);

#endif /* SLUICE_BASE_ERRORS_H */
