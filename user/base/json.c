// SPDX-License-Identifier: GPL-2.0
/* The streaming JSON writer. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/json.h"
#include "base/utf8.h"

static void json_escaped(FILE *out, const char *s)
{
	size_t len;

	fputc('"', out);
	for (; *s; s += len) {
		unsigned char c = (unsigned char)*s;

		if (!utf8_next(s, &len))
			fputs(UTF8_REPLACEMENT, out);
		else if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fwrite(s, 1, len, out);
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

/* Comma and key before any value; false after a mistake, when nothing more is written. */
static bool json_prefix(struct json *j, const char *key)
{
	if (j->err)
		return false;
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	json_newline(j, j->depth);
	j->need_comma[j->depth] = true;
	if (key) {
		json_escaped(j->out, key);
		fputs(pretty ? ": " : ":", j->out);
	}
	return true;
}

void json_init(struct json *j, FILE *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

static void json_open(struct json *j, const char *key, char bracket)
{
	if (!j->err && j->depth == JSON_MAX_DEPTH)
		j->err = -E2BIG;
	if (!json_prefix(j, key))
		return;
	fputc(bracket, j->out);
	j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct json *j, char bracket)
{
	bool empty = !j->need_comma[j->depth];

	if (!j->err && !j->depth)
		j->err = -EINVAL;
	if (j->err)
		return;
	if (!empty)
		json_newline(j, j->depth - 1);
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
	if (json_prefix(j, key))
		json_escaped(j->out, value);
}

/* "hex_key": the bytes of name in hex, when name is not valid UTF-8. */
static void json_hex(struct json *j, const char *hex_key, const char *name)
{
	const char *p;

	if (utf8_valid(name) || !json_prefix(j, hex_key))
		return;
	fputc('"', j->out);
	for (p = name; *p; p++)
		fprintf(j->out, "%02x", (unsigned char)*p);
	fputc('"', j->out);
}

void json_name(struct json *j, const char *key, const char *name)
{
	char hex_key[128];

	json_string(j, key, name);
	if (!key)
		return;
	snprintf(hex_key, sizeof(hex_key), "%s_hex", key);
	json_hex(j, hex_key, name);
}

void json_ifname(struct json *j, const char *ifname)
{
	json_string(j, "interface", ifname);
	json_hex(j, "ifname_hex", ifname);
}

void json_u64(struct json *j, const char *key, uint64_t value)
{
	if (json_prefix(j, key))
		fprintf(j->out, "%llu", (unsigned long long)value);
}

void json_bool(struct json *j, const char *key, bool value)
{
	if (json_prefix(j, key))
		fputs(value ? "true" : "false", j->out);
}

void json_double(struct json *j, const char *key, double value, int decimals)
{
	/* JSON has no NaN or infinity. */
	if (!isfinite(value)) {
		json_null(j, key);
		return;
	}
	if (json_prefix(j, key))
		fprintf(j->out, "%.*f", decimals, value);
}

void json_null(struct json *j, const char *key)
{
	if (json_prefix(j, key))
		fputs("null", j->out);
}

int json_finish(struct json *j)
{
	if (!j->err && j->depth)
		j->err = -EINVAL;
	if (!j->err)
		fputc('\n', j->out);
	fflush(j->out);
	return j->err;
}
