// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include "args.h"
#include "output.h"

/* Room for any message we print; longer ones are cut, never overflowed. */
#define ERROR_MAX 512

static bool json_errors;

void output_json_errors(bool on)
{
	json_errors = on;
}

static void error_emit(const char *cmd, const char *msg)
{
	struct json j;

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

/* Formats and emits one error; err != 0 appends its strerror. */
static void error_vline(const char *cmd, int err, const char *fmt, va_list ap)
{
	char msg[ERROR_MAX];
	int n;

	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (err && n >= 0 && (size_t)n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - (size_t)n, ": %s", strerror(err < 0 ? -err : err));
	error_emit(cmd, msg);
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

int fail_state(const char *cmd, int err, const char *ifname, const char *doing)
{
	if (err == -EPROTO)
		return fail_runtime(cmd, 0,
				    "the pinned state of %s has another layout (another version of "
				    "sluice attached it): run 'sluice detach %s' and attach again",
				    ifname, ifname);
	return fail_runtime(cmd, err, "cannot %s of %s", doing, ifname);
}

int require_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	error_line(cmd, "must be run as root (needs CAP_BPF and CAP_NET_ADMIN)");
	return EXIT_FAILURE_RUNTIME;
}

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

static void json_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* Comma and key before any value. */
static void json_prefix(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	j->need_comma[j->depth] = true;
	if (key) {
		json_escaped(j->out, key);
		fputc(':', j->out);
	}
}

static void json_open(struct json *j, const char *key, char bracket)
{
	json_prefix(j, key);
	fputc(bracket, j->out);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct json *j, char bracket)
{
	if (j->depth > 0)
		j->depth--;
	fputc(bracket, j->out);
}

void json_object_begin(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

void json_object_end(struct json *j)
{
	json_close(j, '}');
}

void json_array_begin(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

void json_array_end(struct json *j)
{
	json_close(j, ']');
}

void json_string(struct json *j, const char *key, const char *value)
{
	json_prefix(j, key);
	json_escaped(j->out, value);
}

void json_u64(struct json *j, const char *key, uint64_t value)
{
	json_prefix(j, key);
	fprintf(j->out, "%llu", (unsigned long long)value);
}

void json_bool(struct json *j, const char *key, bool value)
{
	json_prefix(j, key);
	fputs(value ? "true" : "false", j->out);
}

void json_double(struct json *j, const char *key, double value, int decimals)
{
	/* JSON has no NaN or infinity. */
	if (!isfinite(value)) {
		json_null(j, key);
		return;
	}
	json_prefix(j, key);
	fprintf(j->out, "%.*f", decimals, value);
}

void json_null(struct json *j, const char *key)
{
	json_prefix(j, key);
	fputs("null", j->out);
}

void json_finish(struct json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}
