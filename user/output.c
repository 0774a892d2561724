// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include "args.h"
#include "output.h"

int fail_input(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluice %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_BAD_INPUT;
}

int fail_runtime(const char *cmd, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluice %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", strerror(err < 0 ? -err : err));
	return EXIT_FAILURE_RUNTIME;
}

int require_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	fprintf(stderr, "sluice %s: must be run as root (needs CAP_BPF and CAP_NET_ADMIN)\n", cmd);
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

void json_finish(struct json *j)
{
	fputc('\n', j->out);
	fflush(j->out);
}
