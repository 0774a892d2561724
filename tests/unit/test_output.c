// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the observability pieces: interval and listen-address
 * parsers, rates, the counter table, the JSON writer, JSON errors and the
 * Prometheus writer, each against exact expected text.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "values/listen.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "harness.h"
#include "reads/counters.h"
#include "base/errors.h"
#include "base/json.h"
#include "base/utf8.h"
#include "base/version.h"
#include "outputs/audit.h"
#include "outputs/prom.h"
#include "fleet/report.h"
#include "pins/state.h"
#include "unit.h"

/* The layout version as the exposition spells it. */
#define STR_(x) #x
#define STR(x)	STR_(x)

struct seconds_case {
	const char *in;
	int err;
	uint64_t ns;
};

/* clang-format off: one case per line; the range is 0.1 s to 3600 s */
static const struct seconds_case seconds_cases[] = {
	{ "1", 0, 1000000000 },
	{ "0.5", 0, 500000000 },
	{ "0.1", 0, 100000000 },
	{ "2.25", 0, 2250000000 },
	{ "3600", 0, 3600000000000 },
	{ "1.000000001", 0, 1000000001 },
	{ "0.05", -ERANGE },
	{ "0", -ERANGE },
	{ "3601", -ERANGE },
	{ "1.0000000001", -EINVAL },
	{ "1.", -EINVAL },
	{ ".5", -EINVAL },
	{ "-1", -EINVAL },
	{ "1s", -EINVAL },
	{ "1e3", -EINVAL },
	{ "", -EINVAL },
	{ "99999999999999999999", -ERANGE },
};
/* clang-format on */

static void test_seconds(void)
{
	const char *why = "";
	char name[96];
	uint64_t ns;
	size_t i;
	int err;

	for (i = 0; i < sizeof(seconds_cases) / sizeof(seconds_cases[0]); i++) {
		const struct seconds_case *c = &seconds_cases[i];

		ns = 0;
		err = parse_seconds(c->in, NSEC_PER_SEC / 10, 3600 * NSEC_PER_SEC, &ns, &why);
		snprintf(name, sizeof(name), "seconds '%s'", c->in);
		check(err == c->err && (err || ns == c->ns), name, "got %d (%s) %llu ns", err,
		      err ? why : "", (unsigned long long)ns);
	}
}

struct listen_case {
	const char *in;
	int err;
	int family;
	const char *addr;
	unsigned int port;
};

/* clang-format off: one case per line */
static const struct listen_case listen_cases[] = {
	{ "127.0.0.1:9723", 0, AF_INET, "127.0.0.1", 9723 },
	{ "0.0.0.0:0", 0, AF_INET, "0.0.0.0", 0 },
	{ "[::1]:80", 0, AF_INET6, "::1", 80 },
	{ "[2001:db8::5]:65535", 0, AF_INET6, "2001:db8::5", 65535 },
	{ "127.0.0.1", -EINVAL },
	{ "127.0.0.1:", -EINVAL },
	{ "127.0.0.1:65536", -EINVAL },
	{ "127.0.0.1:-1", -EINVAL },
	{ "127.0.0.1:80x", -EINVAL },
	{ "localhost:80", -EINVAL },
	{ "::1:80", -EINVAL },
	{ "[::1]80", -EINVAL },
	{ "[127.0.0.1]:80", -EINVAL },
	{ "[::1:80", -EINVAL },
	{ ":80", -EINVAL },
	{ "", -EINVAL },
};
/* clang-format on */

static int listen_matches(const struct sockaddr_storage *ss, const struct listen_case *c)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN] = "";

	if (ss->ss_family != c->family)
		return 0;
	if (c->family == AF_INET6)
		return inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host)) &&
		       !strcmp(host, c->addr) && ntohs(in6->sin6_port) == c->port;
	return inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host)) && !strcmp(host, c->addr) &&
	       ntohs(in->sin_port) == c->port;
}

static void test_listen(void)
{
	struct sockaddr_storage ss;
	const char *why = "";
	char name[96];
	size_t i;
	int err;

	for (i = 0; i < sizeof(listen_cases) / sizeof(listen_cases[0]); i++) {
		const struct listen_case *c = &listen_cases[i];

		err = parse_listen(c->in, &ss, &why);
		snprintf(name, sizeof(name), "listen '%s'", c->in);
		check(err == c->err && (err || listen_matches(&ss, c)), name, "got %d (%s)", err,
		      err ? why : "");
	}
}

static void test_rates(void)
{
	check(per_second(1500, 500, NSEC_PER_SEC / 2) == 2000.0, "1000 events in 0.5 s: 2000/s",
	      "got %f", per_second(1500, 500, NSEC_PER_SEC / 2));
	check(per_second(300, 1000, NSEC_PER_SEC) == 300.0,
	      "a counter that went back restarts from zero", "got %f",
	      per_second(300, 1000, NSEC_PER_SEC));
	check(per_second(5, 1, 0) == 0.0, "no interval: rate 0", "got %f", per_second(5, 1, 0));
}

/* Prometheus metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; ours are lower snake case. */
static int metric_name_ok(const char *s)
{
	if (!s || !*s || (*s >= '0' && *s <= '9'))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static void test_counter_table(void)
{
	int i, bad = -1;

	for (i = 0; i < SLUICE_CNT_MAX && bad < 0; i++)
		if (!counter_info[i].name || !metric_name_ok(counter_info[i].metric) ||
		    !counter_info[i].help || !*counter_info[i].help ||
		    strchr(counter_info[i].help, '\n') || strchr(counter_info[i].help, '\\'))
			bad = i;
	check(bad < 0, "every counter has a name, a valid metric and one line of help",
	      "counter %d is incomplete", bad);
}

/* Runs fn with stdout captured into buf. */
void capture_stdout(void (*fn)(void *), void *arg, char *buf, size_t len)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	size_t n = 0;

	fflush(stdout);
	if (tmp && saved >= 0 && dup2(fileno(tmp), STDOUT_FILENO) >= 0) {
		fn(arg);
		fflush(stdout);
		dup2(saved, STDOUT_FILENO);
		rewind(tmp);
		n = fread(buf, 1, len - 1, tmp);
	}
	buf[n] = '\0';
	if (saved >= 0)
		close(saved);
	if (tmp)
		fclose(tmp);
}

static void write_json(void *arg)
{
	struct json j;

	(void)arg;
	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "s", "a\"b\\c\n\x01");
	json_double(&j, "d", 2.5, 3);
	json_double(&j, "nan", NAN, 3);
	json_null(&j, "n");
	json_array_begin(&j, "a");
	json_u64(&j, NULL, 18446744073709551615ULL);
	json_bool(&j, NULL, false);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void write_error(void *arg)
{
	output_json_errors(true);
	fail_input((const char *)arg, "%s is not \"attached\"", "eth9");
	output_json_errors(false);
}

static void test_json(void)
{
	const char *want_json = "{\"s\":\"a\\\"b\\\\c\\u000a\\u0001\",\"d\":2.500,\"nan\":null,"
				"\"n\":null,\"a\":[18446744073709551615,false]}\n";
	const char *want_error =
		"{\"command\":\"stats\",\"error\":\"eth9 is not \\\"attached\\\"\"}\n";
	char out[512];

	capture_stdout(write_json, NULL, out, sizeof(out));
	check(!strcmp(out, want_json), "JSON writer: escapes, numbers, null, nesting", "got %s",
	      out);
	capture_stdout(write_error, "stats", out, sizeof(out));
	check(!strcmp(out, want_error), "with --json an error is one JSON object on stdout",
	      "got %s", out);
}

/* Messages quote input: what shows nothing there is written so it shows. */
static const struct {
	const char *in, *out;
} visible_cases[] = {
	{ "attach", "attach" },
	{ "caf\xc3\xa9 \xe2\x82\xac", "caf\xc3\xa9 \xe2\x82\xac" }, /* visible UTF-8 stays */
	{ "\xef\xbb\xbf"
	  "attach",
	  "\\ufeffattach" },		       /* a byte order mark */
	{ "rate\xe2\x80\x8b", "rate\\u200b" }, /* zero width space */
	{ "a\xe2\x80\xae"
	  "b",
	  "a\\u202eb" },		   /* right-to-left override */
	{ "5/s\xc2\xa0", "5/s\\u00a0" },   /* no-break space */
	{ "x\xc2\x85", "x\\u0085" },	   /* a C1 control */
	{ "1/s\x1b[31m", "1/s\\x1b[31m" }, /* an ASCII control */
	{ "a\tb\nc\x7f", "a\\x09b\\x0ac\\x7f" },
	{ "et\xffh", "et\\xffh" },	       /* not UTF-8 */
	{ "\xf3\xa0\x80\x81", "\\U000e0001" }, /* a tag character */
};

static void write_invisible_error(void *arg)
{
	output_json_errors(true);
	fail_input("apply", "unknown statement '%s'", (const char *)arg);
	output_json_errors(false);
}

static void test_visible(void)
{
	char out[128], name[96];
	size_t i;

	for (i = 0; i < sizeof(visible_cases) / sizeof(visible_cases[0]); i++) {
		utf8_visible(out, sizeof(out), visible_cases[i].in);
		snprintf(name, sizeof(name), "utf8_visible: '%s'", visible_cases[i].out);
		check(!strcmp(out, visible_cases[i].out), name, "got '%s'", out);
	}
	utf8_visible(out, 8,
		     "abc\xe2\x80\x8b"
		     "def");
	check(!strcmp(out, "abc"), "utf8_visible cuts before an escape that does not fit",
	      "got '%s'", out);
	capture_stdout(write_invisible_error,
		       "\xef\xbb\xbf"
		       "attach",
		       out, sizeof(out));
	check(!strcmp(out, "{\"command\":\"apply\",\"error\":\"unknown statement "
			   "'\\\\ufeffattach'\"}\n"),
	      "an error shows the byte order mark it quotes", "got %s", out);
}

/* The strings of an object written with json_string and json_name, as text. */
static int json_text(char **text, void (*fn)(struct json *, const void *), const void *arg)
{
	struct json j;
	size_t len;
	FILE *out;
	int err;

	*text = NULL;
	out = open_memstream(text, &len);
	if (!out)
		return -ENOMEM;
	json_init(&j, out);
	fn(&j, arg);
	err = json_finish(&j);
	fclose(out);
	return err;
}

static void write_one_string(struct json *j, const void *arg)
{
	json_array_begin(j, NULL);
	json_string(j, NULL, arg);
	json_array_end(j);
}

#define FFFD "\xef\xbf\xbd"

/* clang-format off: input bytes, then the JSON array holding them */
static const struct {
	const char *in, *out;
} utf8_cases[] = {
	{ "caf\xc3\xa9", "[\"caf\xc3\xa9\"]\n" },
	{ "\xe2\x82\xac \xf0\x9f\x98\x80", "[\"\xe2\x82\xac \xf0\x9f\x98\x80\"]\n" },
	{ "\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf",
	  "[\"\xed\x9f\xbf\xee\x80\x80\xf4\x8f\xbf\xbf\"]\n" },
	{ "\x01\xc3\xa9\"", "[\"\\u0001\xc3\xa9\\\"\"]\n" },
	{ "\xc0\xaf", "[\"" FFFD FFFD "\"]\n" },		   /* overlong '/' */
	{ "\xe0\x80\xaf", "[\"" FFFD FFFD FFFD "\"]\n" },	   /* overlong, 3 bytes */
	{ "\xf0\x80\x80\xaf", "[\"" FFFD FFFD FFFD FFFD "\"]\n" }, /* overlong, 4 bytes */
	{ "\xed\xa0\x80", "[\"" FFFD FFFD FFFD "\"]\n" },	   /* surrogate U+D800 */
	{ "\xf4\x90\x80\x80", "[\"" FFFD FFFD FFFD FFFD "\"]\n" }, /* U+110000 */
	{ "\xf5\x80", "[\"" FFFD FFFD "\"]\n" },
	{ "\xff", "[\"" FFFD "\"]\n" },
	{ "\x80", "[\"" FFFD "\"]\n" },
	{ "a\xc3", "[\"a" FFFD "\"]\n" }, /* cut short at the end */
	{ "\xe2\x82"
	  "a",
	  "[\"" FFFD "a\"]\n" }, /* one U+FFFD for the cut sequence */
	{ "\xf0\x9f\x98"
	  "x\xc3\xa9",
	  "[\"" FFFD "x\xc3\xa9\"]\n" },
	{ "\xe2\x82\xe2\x82\xac", "[\"" FFFD "\xe2\x82\xac\"]\n" },
};
/* clang-format on */

static void test_json_utf8(void)
{
	char name[64], *text;
	size_t i;
	int err;

	for (i = 0; i < sizeof(utf8_cases) / sizeof(utf8_cases[0]); i++) {
		err = json_text(&text, write_one_string, utf8_cases[i].in);
		snprintf(name, sizeof(name), "JSON string #%zu: %s", i,
			 utf8_valid(utf8_cases[i].in) ? "UTF-8 passes unchanged"
						      : "U+FFFD for each bad sequence");
		check(!err && text && !strcmp(text, utf8_cases[i].out), name, "got %d %s", err,
		      text ? text : "(null)");
		free(text);
	}
	check(utf8_valid("") && utf8_valid("eth0") && utf8_valid("caf\xc3\xa9") &&
		      !utf8_valid("et\xffh") && !utf8_valid("\xed\xa0\x80") &&
		      !utf8_valid("\xc3") && !utf8_valid("\xf4\x90\x80\x80"),
	      "utf8_valid: well-formed UTF-8 only", "unexpected result");
}

static void write_names(struct json *j, const void *arg)
{
	(void)arg;
	json_object_begin(j, NULL);
	json_name(j, "ifname", "eth0");
	json_name(j, "peer", "caf\xc3\xa9");
	json_name(j, "odd", "et\xff\x01h");
	json_array_begin(j, "all");
	json_name(j, NULL, "et\xffh");
	json_array_end(j);
	json_object_end(j);
}

static void test_json_name(void)
{
	const char *want = "{\"ifname\":\"eth0\",\"peer\":\"caf\xc3\xa9\",\"odd\":\"et" FFFD
			   "\\u0001h\",\"odd_hex\":\"6574ff0168\",\"all\":[\"et" FFFD "h\"]}\n";
	char *text;
	int err;

	err = json_text(&text, write_names, NULL);
	check(!err && text && !strcmp(text, want),
	      "json_name: KEY_hex with the raw bytes only when the name is not UTF-8", "got %d %s",
	      err, text ? text : "(null)");
	free(text);
}

static void write_nested(struct json *j, const void *arg)
{
	int i, levels = *(const int *)arg;

	json_object_begin(j, NULL);
	for (i = 1; i < levels; i++)
		json_array_begin(j, i == 1 ? "a" : NULL);
	json_u64(j, NULL, 1);
	for (i = 1; i < levels; i++)
		json_array_end(j);
	json_u64(j, "after", 2);
	json_object_end(j);
}

static void write_unbalanced(struct json *j, const void *arg)
{
	(void)arg;
	json_array_begin(j, NULL);
	json_array_end(j);
	json_array_end(j);
	json_u64(j, NULL, 7);
}

static void write_unclosed(struct json *j, const void *arg)
{
	(void)arg;
	json_object_begin(j, NULL);
	json_u64(j, "x", 1);
}

static void test_json_depth(void)
{
	int levels = JSON_MAX_DEPTH, err;
	char *text;

	err = json_text(&text, write_nested, &levels);
	check(!err && text && !strcmp(text, "{\"a\":[[[[[[[1]]]]]]],\"after\":2}\n"),
	      "JSON: nesting JSON_MAX_DEPTH deep is written", "got %d %s", err,
	      text ? text : "(null)");
	free(text);
	levels = JSON_MAX_DEPTH + 1;
	err = json_text(&text, write_nested, &levels);
	check(err == -E2BIG && text && !strcmp(text, "{\"a\":[[[[[[["),
	      "JSON: nesting past JSON_MAX_DEPTH is an error, and nothing more is written",
	      "got %d %s", err, text ? text : "(null)");
	free(text);
	err = json_text(&text, write_unbalanced, NULL);
	check(err == -EINVAL && text && !strcmp(text, "[]"),
	      "JSON: an end with nothing open is an error, and stops the output", "got %d %s", err,
	      text ? text : "(null)");
	free(text);
	err = json_text(&text, write_unclosed, NULL);
	check(err == -EINVAL && text && !strcmp(text, "{\"x\":1"),
	      "JSON: finishing with an object open is an error", "got %d %s", err,
	      text ? text : "(null)");
	free(text);
}

static void sample_fake(struct sample *s, struct rule_counts *rule)
{
	memset(s, 0, sizeof(*s));
	memset(rule, 0, sizeof(*rule));
	snprintf(rule->name, sizeof(rule->name), "default");
	s->sum.c[SLUICE_CNT_PASSED].packets = 7;
	s->sum.c[SLUICE_CNT_DROPPED].packets = 11;
	s->sum.c[SLUICE_CNT_DROPPED].bytes = 704;
	s->sum.c[SLUICE_CNT_NEW_SOURCE].packets = 3;
	rule->c[SLUICE_CNT_PASSED] = s->sum.c[SLUICE_CNT_PASSED];
	rule->c[SLUICE_CNT_DROPPED] = s->sum.c[SLUICE_CNT_DROPPED];
	s->rules = rule;
	s->nrules = 1;
	s->sources = 3;
	s->capacity = 1000;
}

static int occurrences(const char *text, const char *what)
{
	int n = 0;

	for (; (text = strstr(text, what)); text += strlen(what))
		n++;
	return n;
}

/* The label names of a series line, "interface,rule", into names; false when garbled. */
static bool series_labels(const char *line, char *names, size_t len)
{
	const char *p = strchr(line, '{');
	size_t used = 0;

	names[0] = '\0';
	if (!p)
		return strchr(line, ' ') != NULL;
	for (p++; *p && *p != '}';) {
		const char *eq = strchr(p, '=');

		if (!eq || eq[1] != '"' || used + (size_t)(eq - p) + 2 > len)
			return false;
		used += (size_t)snprintf(names + used, len - used, "%s%.*s", used ? "," : "",
					 (int)(eq - p), p);
		for (p = eq + 2; *p && *p != '"'; p++)
			if (*p == '\\' && p[1])
				p++;
		if (*p != '"')
			return false;
		p++;
		if (*p == ',')
			p++;
	}
	return *p == '}';
}

/*
 * Every series follows its family's TYPE line, and all series of a family
 * carry the same label names. Returns the first offending line, or NULL.
 */
static const char *label_sets_differ(char *text, char *why, size_t len)
{
	char family[128] = "", first[128] = "", names[128];
	bool seen = false;
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "# TYPE %127s", family) == 1) {
			seen = false;
			continue;
		}
		if (line[0] == '#')
			continue;
		if (strncmp(line, family, strlen(family)) ||
		    (line[strlen(family)] != '{' && line[strlen(family)] != ' ')) {
			snprintf(why, len, "a series outside its family %s", family);
			return line;
		}
		if (!series_labels(line, names, sizeof(names))) {
			snprintf(why, len, "garbled labels");
			return line;
		}
		if (seen && strcmp(names, first)) {
			snprintf(why, len, "labels %s, the family's first series %s", names, first);
			return line;
		}
		snprintf(first, sizeof(first), "%s", names);
		seen = true;
	}
	return NULL;
}

/* The text of the HELP line of family name, or "". */
static const char *help_of(const char *text, const char *name, char *buf, size_t len)
{
	char head[160];
	const char *p, *end;

	snprintf(head, sizeof(head), "# HELP %s ", name);
	p = strstr(text, head);
	buf[0] = '\0';
	if (!p)
		return buf;
	p += strlen(head);
	end = strchr(p, '\n');
	snprintf(buf, len, "%.*s", (int)(end ? end - p : (long)strlen(p)), p);
	return buf;
}

/* Counters in one family are counted alike (all per rule or none) and told apart by reason. */
static void test_counter_families(void)
{
	int i, k, bad = -1;

	for (i = 0; i < SLUICE_CNT_MAX && bad < 0; i++)
		for (k = i + 1; k < SLUICE_CNT_MAX && bad < 0; k++)
			if (!strcmp(counter_info[i].metric, counter_info[k].metric) &&
			    (counter_info[i].kind != counter_info[k].kind ||
			     counter_info[i].per_rule != counter_info[k].per_rule ||
			     !counter_info[i].reason || !counter_info[k].reason ||
			     !strcmp(counter_info[i].reason, counter_info[k].reason)))
				bad = i;
	check(bad < 0,
	      "counters sharing a metric share kind and rule label, each with its own reason",
	      "counter %d and a later one of metric %s", bad,
	      bad < 0 ? "" : counter_info[bad].metric);
}

static char *prom_text(const struct prom_iface *ifs, int n, const uint64_t *walks)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&text, &len);
	if (!out)
		return NULL;
	prom_write(out, ifs, n);
	if (walks)
		prom_write_walks(out, ifs, walks, n);
	fclose(out);
	return text;
}

/* promtool's own lint of the text: names, HELP, TYPE, duplicates, label sets. */
static void check_promtool(const char *text)
{
	char path[] = "/tmp/sluice-test-prom.XXXXXX", cmd[160];
	int fd = mkstemp(path), status = -1;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (access("/usr/bin/promtool", X_OK)) {
		check(false, "Prometheus: promtool check metrics passes",
		      "/usr/bin/promtool is missing (make deps installs prometheus)");
		if (f)
			fclose(f);
		if (fd >= 0)
			unlink(path);
		return;
	}
	if (f) {
		fputs(text, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "/usr/bin/promtool check metrics <%s >/dev/null 2>&1",
			 path);
		status = system(cmd);
	}
	check(status == 0, "Prometheus: promtool check metrics passes", "promtool status %d",
	      status);
	if (fd >= 0)
		unlink(path);
}

static void test_prometheus(void)
{
	struct prom_iface ifs[4];
	struct rule_counts rules[3];
	struct sample s[3];
	uint64_t walks[4] = { 5, 6, 0, 7 };
	char why[160], help[1024], *text, *copy;
	const char *bad;

	sample_fake(&s[0], &rules[0]);
	sample_fake(&s[1], &rules[1]);
	sample_fake(&s[2], &rules[2]);
	s[0].sum.c[SLUICE_CNT_DENIED].packets = 5;
	s[0].sum.c[SLUICE_CNT_DENIED].bytes = 320;
	s[1].sum.c[SLUICE_CNT_NEW_SOURCE].packets = 4;
	s[0].generation = 42;
	s[0].changed_at_ns = 1764585907999999999ULL;
	ifs[0] = (struct prom_iface){ "eth0", &s[0], true };
	ifs[1] = (struct prom_iface){ "we\"ird", &s[1], false };
	ifs[2] = (struct prom_iface){ "gone0", NULL, false };
	ifs[3] = (struct prom_iface){ "et\xffh", &s[2], true };
	text = prom_text(ifs, 4, walks);
	if (!text) {
		check(false, "Prometheus writer", "open_memstream failed");
		return;
	}
	check(strstr(text, "# HELP sluice_dropped_packets_total Packets over their source's "
			   "limit, dropped.\n# TYPE sluice_dropped_packets_total counter\n"
			   "sluice_dropped_packets_total{interface=\"eth0\",rule=\"default\","
			   "reason=\"rate\"} 11\n") != NULL,
	      "Prometheus: HELP, TYPE, then series with interface, rule and reason labels", "%s",
	      text);
	check(strstr(text, "sluice_dropped_bytes_total{interface=\"eth0\",rule=\"default\","
			   "reason=\"rate\"} 704\n") != NULL,
	      "Prometheus: bytes as their own counter family", "%s", text);
	check(strstr(text, "sluice_denied_packets_total{interface=\"eth0\"} 5\n") != NULL &&
		      strstr(text, "sluice_denied_bytes_total{interface=\"eth0\"} 320\n") != NULL &&
		      !strstr(text, "reason=\"deny\""),
	      "Prometheus: deny-list drops are a family of their own, without a rule", "%s", text);
	check(strstr(text, "sluice_new_sources_total{interface=\"we\\\"ird\"} 4\n") != NULL,
	      "Prometheus: label values escaped; table events without bytes", "%s", text);
	check(strstr(text, "sluice_sources{interface=\"et" FFFD "h\"} 3\n") != NULL,
	      "Prometheus: a name that is not UTF-8 has U+FFFD in its label", "%s", text);
	check(strstr(text, "sluice_attached{interface=\"eth0\"} 1\nsluice_attached{interface="
			   "\"we\\\"ird\"} 0\n") != NULL &&
		      strstr(text, "sluice_sources_capacity{interface=\"eth0\"} 1000\n") != NULL,
	      "Prometheus: gauges for table size and attachment", "%s", text);
	check(strstr(text, "sluice_up{interface=\"eth0\"} 1\nsluice_up{interface=\"we\\\"ird\"} "
			   "0\nsluice_up{interface=\"gone0\"} 0\nsluice_up{interface=\"et" FFFD
			   "h\"} 1\n") != NULL,
	      "Prometheus: sluice_up 1 when read and running, 0 when stale or unreadable", "%s",
	      text);
	check(occurrences(text, "\"gone0\"") == 1,
	      "Prometheus: an interface that could not be read has sluice_up 0 and nothing else",
	      "%d series", occurrences(text, "\"gone0\""));
	check(strstr(text,
		     "# TYPE sluice_build_info gauge\nsluice_build_info{version=\"" SLUICE_VERSION
		     "\",layout=\"" STR(SLUICE_LAYOUT_VERSION) "\"} 1\n") != NULL &&
		      occurrences(text, "sluice_build_info{") == 1,
	      "Prometheus: sluice_build_info with the version and state layout, once", "%s", text);
	check(strstr(text,
		     "sluice_exporter_table_walks_total{interface=\"eth0\"} 5\n"
		     "sluice_exporter_table_walks_total{interface=\"we\\\"ird\"} 6\n"
		     "sluice_exporter_table_walks_total{interface=\"et" FFFD "h\"} 7\n") != NULL,
	      "Prometheus: table walks per interface read", "%s", text);
	check(strstr(text, "# TYPE sluice_config_generation gauge\n"
			   "sluice_config_generation{interface=\"eth0\"} 42\n"
			   "sluice_config_generation{interface=\"we\\\"ird\"} 0\n") != NULL &&
		      strstr(text,
			     "# TYPE sluice_config_last_change_timestamp_seconds gauge\n"
			     "sluice_config_last_change_timestamp_seconds{interface=\"eth0\"} "
			     "1764585907\n") != NULL &&
		      !strstr(text, "sluice_config_generation{interface=\"gone0\"}"),
	      "Prometheus: the configuration's generation and last change, per interface read",
	      "%s", text);
	help_of(text, "sluice_insert_failed_total", help, sizeof(help));
	check(strstr(help, "error: Buckets that could not be created (not for memory)") &&
		      strstr(help,
			     " nomem: Buckets that could not be created for lack of memory") &&
		      strstr(help, " full: Buckets not created"),
	      "Prometheus: a family of several reasons says what each counts", "HELP %s", help);
	help_of(text, "sluice_overflow_total", help, sizeof(help));
	check(strstr(help, "passed: Packets of refused sources the overflow bucket passed.") &&
		      strstr(help, " dropped: Packets of refused sources the overflow bucket held"),
	      "Prometheus: the overflow family's HELP names both reasons", "HELP %s", help);
	check(occurrences(text, "# TYPE sluice_passed_packets_total ") == 1 &&
		      occurrences(text, "# HELP ") == occurrences(text, "# TYPE ") &&
		      strstr(text, "# TYPE sluice_passed_packets_total") <
			      strstr(text, "sluice_passed_packets_total{"),
	      "Prometheus: one HELP and TYPE per family, before its series", "%s", text);
	check_promtool(text);
	copy = strdup(text);
	why[0] = '\0';
	bad = copy ? label_sets_differ(copy, why, sizeof(why)) : "no memory";
	check(!bad, "Prometheus: every series of a family carries the same label names", "%s: %s",
	      why, bad);
	free(copy);
	free(text);
}

/*
 * The fleet's families, which the exporter writes after prom_write's, name
 * each interface as every label does: a name may hold a quote or a
 * backslash, and bytes that are no UTF-8. None of these has an agent.
 */
static void test_prometheus_fleet(void)
{
	const char names[3][16] = { "eth0", "we\"ird\\", "et\xffh" };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	out = open_memstream(&text, &len);
	if (!out) {
		check(false, "Prometheus: the fleet's families", "open_memstream failed");
		return;
	}
	fleet_report_prom(out, names, 3);
	fclose(out);
	check(strstr(text, "sluice_fleet_up{interface=\"eth0\"} 0\n"
			   "sluice_fleet_up{interface=\"we\\\"ird\\\\\"} 0\n"
			   "sluice_fleet_up{interface=\"et" FFFD "h\"} 0\n") != NULL,
	      "Prometheus: the fleet's families escape interface names as every label does", "%s",
	      text);
	check_promtool(text);
	free(text);
}

/* A policy whose default has rate (packets per second). */
static void audit_doc(struct policy_doc *doc, uint64_t rate)
{
	doc_init(doc);
	settings_default(&doc->dflt);
	doc->dflt.rate.amount = rate;
	doc->dflt.rate.period_ns = 1000000000ULL;
	doc->dflt.rate.unit = SLUICE_UNIT_PACKETS;
}

static void audit_snap(struct audit_snapshot *s, struct policy_doc *doc, uint64_t generation)
{
	memset(s, 0, sizeof(*s));
	s->present = true;
	s->read = doc != NULL;
	s->prog_id = 7;
	s->group = STATE_NO_GROUP;
	s->doc = doc;
	s->cfg.generation = generation;
	s->cfg.layout_version = SLUICE_LAYOUT_VERSION;
}

static bool printable_ascii(const char *line)
{
	for (; *line; line++)
		if ((unsigned char)*line < 0x20 || (unsigned char)*line > 0x7e)
			return false;
	return true;
}

static void audit_line(char *line, size_t len, char **argv, int argc,
		       const struct audit_snapshot *a, const struct audit_snapshot *b)
{
	struct audit_event e = {
		.ifname = argv[argc > 3 && !strcmp(argv[2], "add") ? 3 : 2],
		.command = argv[1],
		.verb = argc > 3 && !strcmp(argv[2], "add") ? "add" : NULL,
		.argc = argc,
		.argv = argv,
		.who = { .uid = 0, .euid = 0, .login_uid = AUDIT_LOGIN_UID_UNSET },
		.before = a,
		.after = b,
	};

	audit_format(line, len, &e);
}

static void test_audit(void)
{
	static struct policy_doc d100, d200;
	static char *big_argv[20004];
	struct audit_snapshot a, b, none = { 0 };
	char line[AUDIT_LINE_MAX], *huge;
	char *set_argv[] = { "sluice", "set", "slh1", "--rate", "200/s" };
	char *odd_argv[] = { "sluice", "allow", "add",	"sl\th1", "1.2.3.4\n",
			     "it's",   "a\\b",	"\xff", "" };
	struct audit_event e = {
		.ifname = "slh1",
		.command = "set",
		.argc = 5,
		.argv = set_argv,
		.who = { .uid = 0, .euid = 0, .login_uid = 1000, .sudo_user = "al\nice" },
		.before = &a,
		.after = &b,
	};
	int i;

	audit_doc(&d100, 100);
	audit_doc(&d200, 200);
	audit_snap(&a, &d100, 4);
	audit_snap(&b, &d200, 5);
	audit_format(line, sizeof(line), &e);
	check(!strcmp(line, "slh1: set by uid 0, SUDO_USER 'al\\x0aice', login uid 1000: "
			    "rate 100/s -> 200/s; generation 4 -> 5; command: sluice set slh1 "
			    "--rate 200/s"),
	      "audit: set says who (SUDO_USER escaped), old -> new and the generation", "%s", line);
	check(audit_changed(&a, &b) && !audit_changed(&a, &a),
	      "audit: a change is a new generation; the same one is none", "%s", line);

	b.doc = &d100;
	b.cfg.deny_count = 20000;
	audit_line(line, sizeof(line), odd_argv, 9, &a, &b);
	check(strstr(line, ": deny 0 -> 20000 entries (+20000); generation 4 -> 5; ") &&
		      strstr(line, "command: sluice allow add 'sl\\x09h1' '1.2.3.4\\x0a' 'it\\'s' "
				   "'a\\\\b' '\\xff' ''") &&
		      !strncmp(line, "'sl\\x09h1': allow add by uid 0: ", 32) &&
		      printable_ascii(line),
	      "audit: list counts; every argument quoted so no control byte reaches the log", "%s",
	      line);

	big_argv[0] = "sluice", big_argv[1] = "deny", big_argv[2] = "add", big_argv[3] = "slh1";
	for (i = 4; i < 20004; i++)
		big_argv[i] = "198.51.100.0/24";
	audit_line(line, sizeof(line), big_argv, 20004, &a, &b);
	check(strlen(line) < AUDIT_LINE_MAX && strstr(line, "more arguments)") &&
		      strstr(line, "deny 0 -> 20000 entries (+20000)"),
	      "audit: 20000 CIDRs on the command line are summarised, not logged", "%zu: %s",
	      strlen(line), line);

	huge = malloc(1 << 20);
	if (huge) {
		memset(huge, 'x', (1 << 20) - 1);
		huge[(1 << 20) - 1] = '\0';
		big_argv[4] = huge;
		audit_line(line, sizeof(line), big_argv, 5, &a, &b);
		check(strlen(line) < AUDIT_LINE_MAX && strstr(line, "xxx...") &&
			      printable_ascii(line),
		      "audit: a megabyte argument is cut", "%zu bytes", strlen(line));
		free(huge);
	}

	/* attach --replace changing only the group: no new generation, still a change. */
	audit_snap(&b, &d100, 4);
	b.group = 0;
	audit_line(line, sizeof(line), set_argv, 5, &a, &b);
	check(audit_changed(&a, &b) && strstr(line, ": group none -> root; generation 4 -> 4; "),
	      "audit: a group changed in place is a change, said old -> new", "%s", line);

	audit_snap(&b, &d100, 2);
	audit_line(line, sizeof(line), set_argv, 5, &none, &b);
	check(strstr(line, ": attached, program 7, rate 100/s, rules 0, allow 0 entries, "
			   "deny 0 entries; generation none -> 2; ") != NULL &&
		      audit_changed(&none, &b),
	      "audit: attach says what it made", "%s", line);
	audit_line(line, sizeof(line), set_argv, 5, &b, &none);
	check(strstr(line, ": detached (was program 7); generation 2 -> none; ") != NULL &&
		      audit_changed(&b, &none) && !audit_changed(&none, &none),
	      "audit: detach says what went", "%s", line);
	doc_free(&d100);
	doc_free(&d200);
}

void suite_output(void)
{
	test_seconds();
	test_listen();
	test_rates();
	test_counter_table();
	test_counter_families();
	test_json();
	test_json_utf8();
	test_visible();
	test_json_name();
	test_json_depth();
	test_prometheus();
	test_prometheus_fleet();
	test_audit();
}
