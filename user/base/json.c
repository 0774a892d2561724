// SPDX-License-Identifier: GPL-2.0
/* The streaming JSON writer. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/json.h"

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

/* -p/--pretty: every value on its own line, indented two spaces a level. */
static bool pretty;

void json_pretty(bool on)
{
	pretty = on;
}

static void json_newline(struct json *j, int depth)
{
	if (pretty && j->depth > 0)
		fprintf(j->out, "\n%*s", 2 * depth, "");
}

/* Comma and key before any value. */
static void json_prefix(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	json_newline(j, j->depth);
	j->need_comma[j->depth] = true;
	if (key) {
		json_escaped(j->out, key);
		fputs(pretty ? ": " : ":", j->out);
	}
}

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
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
	bool empty = !j->need_comma[j->depth];

	if (!empty)
		json_newline(j, j->depth - 1);
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
