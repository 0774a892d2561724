// SPDX-License-Identifier: GPL-2.0
/* One-line errors, as text on stderr or as JSON on stdout, and what commands say. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errors.h"
#include "base/json.h"
#include "base/utf8.h"

/* Room for any message we print; longer ones are cut, never overflowed. */
#define ERROR_MAX 512

static bool json_errors;

void output_json_errors(bool on)
{
	json_errors = on;
}

/* What commands said, kept with JSON asked for; a longer account is cut. */
static char said[2048];

void output_say(const char *fmt, ...)
{
	size_t used = strlen(said);
	va_list ap;

	va_start(ap, fmt);
	if (!json_errors)
		vprintf(fmt, ap);
	else
		vsnprintf(said + used, sizeof(said) - used, fmt, ap);
	va_end(ap);
}

const char *output_said(void)
{
	return said;
}

/*
 * Warnings wait for the command's end: bad input found after one (a CIDR
 * with host bits, then a bad one) gets its one error line alone.
 */
static char *warnings;
static size_t warnings_len;
static FILE *warnings_kept;

static void warnings_end(bool print)
{
	if (!warnings_kept)
		return;
	fclose(warnings_kept);
	if (print)
		fwrite(warnings, 1, warnings_len, stderr);
	free(warnings);
	warnings = NULL;
	warnings_len = 0;
	warnings_kept = NULL;
}

static void error_emit(const char *cmd, const char *msg)
{
	struct json j;

	warnings_end(false);
	if (!json_errors) {
		fprintf(stderr, "sluice%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", msg);
		return;
	}
	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	if (cmd)
		json_string(&j, "command", cmd);
	json_string(&j, "error", msg);
	json_object_end(&j);
	json_finish(&j);
}

/*
 * Formats and emits one error; err != 0 appends its strerror. Messages
 * quote what was typed or read: an invisible character in it is written
 * so it shows (\ufeff), and a control character cannot break the line.
 */
static void error_vline(const char *cmd, int err, const char *fmt, va_list ap)
{
	char msg[ERROR_MAX], shown[ERROR_MAX];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(err < 0 ? -err : err));
	utf8_visible(shown, sizeof(shown), msg);
	error_emit(cmd, shown);
}

void warning_line(const char *fmt, ...)
{
	char msg[ERROR_MAX], shown[ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_visible(shown, sizeof(shown), msg);
	if (!warnings_kept)
		warnings_kept = open_memstream(&warnings, &warnings_len);
	fprintf(warnings_kept ? warnings_kept : stderr, "%s\n", shown);
}

void warnings_flush(void)
{
	warnings_end(true);
}

void error_line(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vline(cmd, 0, fmt, ap);
	va_end(ap);
}

int fail_input(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vline(cmd, 0, fmt, ap);
	va_end(ap);
	return EXIT_BAD_INPUT;
}

int fail_runtime(const char *cmd, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	error_vline(cmd, err, fmt, ap);
	va_end(ap);
	return EXIT_FAILURE_RUNTIME;
}

int fail_json(const char *cmd, int err)
{
	return err ? fail_runtime(cmd, err, "cannot write the JSON document") : EXIT_OK;
}
