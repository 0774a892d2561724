// SPDX-License-Identifier: GPL-2.0
/*
 * The config file parser: good files round-trip through show's format,
 * and each class of error names its line and column and what was expected.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "base/clock.h"
#include "base/utf8.h"
#include "text/conf.h"
#include "harness.h"

static char path[] = "/tmp/sluice-test-conf.XXXXXX";

static int parse_text(const char *text, struct policy_doc *doc, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	fclose(f);
	err[0] = '\0';
	return conf_parse(path, doc, err, errlen);
}

struct error_case {
	const char *name;
	const char *text;
	const char *where; /* ":LINE:COL:" expected in the message, or NULL */
	const char *says;  /* a phrase the message must contain */
};

/* clang-format off: one case per entry */
static const struct error_case error_cases[] = {
	{ "unknown statement", "default rate 1/s\nlimit 10.0.0.0/8\n",
	  ":2:1:", "unknown statement 'limit'" },
	{ "missing default", "rule 10.0.0.0/8 rate 1/s\n", NULL, "missing a 'default" },
	{ "second default", "default rate 1/s\ndefault rate 2/s\n", ":2:1:", "second 'default'" },
	{ "default without rate", "default burst 5\n", ":1:1:", "expected 'rate RATE'" },
	{ "bad rate", "default rate 0/s\n", ":1:14:", "bad rate '0/s'" },
	{ "garbled rate", "default rate fast\n", ":1:14:", "bad rate 'fast'" },
	{ "missing value", "default rate\n", ":1:9:", "expected a value after 'rate'" },
	{ "unknown option", "default rate 1/s speed 9\n", ":1:18:", "unknown option 'speed'" },
	{ "match option on default", "default rate 1/s proto tcp\n",
	  ":1:18:", "unknown option 'proto'" },
	{ "bad CIDR", "default rate 1/s\nrule 10.0.0/8 rate 1/s\n",
	  ":2:6:", "bad CIDR '10.0.0/8'" },
	{ "prefix too long", "default rate 1/s\nrule 10.0.0.0/33 rate 1/s\n",
	  ":2:6:", "at most 32" },
	{ "IPv6 prefix too long", "default rate 1/s\ndeny 2001:db8::/129\n",
	  ":2:6:", "at most 128" },
	{ "rule without CIDR", "default rate 1/s\nrule\n", ":2:1:", "expected a CIDR" },
	{ "duplicate rule",
	  "default rate 1/s\nrule 10.0.0.0/8 rate 1/s\nrule 10.0.0.0/8 rate 2/s\n",
	  ":3:6:", "already exists" },
	{ "bad port range", "default rate 1/s\nrule 0.0.0.0/0 rate 1/s proto tcp dport 90-80\n",
	  ":2:41:", "bad dport '90-80'" },
	{ "syn without tcp", "default rate 1/s\nrule 0.0.0.0/0 rate 1/s syn\n",
	  ":2:1:", "--syn needs --proto tcp" },
	{ "dport without proto", "default rate 1/s\nrule 0.0.0.0/0 rate 1/s dport 22\n",
	  ":2:1:", "--dport 22 needs --proto tcp or udp" },
	{ "mark without dscp or ecn", "default rate 1/s action mark\n",
	  ":1:1:", "--action mark needs --dscp or --ecn" },
	{ "dscp out of range", "default rate 1/s action mark dscp 64\n",
	  ":1:35:", "bad dscp '64'" },
	{ "byte burst with packet rate", "default rate 1/s burst 64kB\n",
	  ":1:1:", "needs a byte rate" },
	{ "list entry with extra words", "default rate 1/s\nallow 10.0.0.0/8 now\n",
	  ":2:18:", "end of the line" },
	{ "unknown action", "default rate 1/s action reject\n", ":1:25:", "bad action 'reject'" },
	{ "bad aggregate", "default rate 1/s aggregate 24=5/s\n",
	  ":1:28:", "expected [ipv4|ipv6]/LEN=RATE" },
	{ "aggregate as narrow as the source", "default rate 1/s aggregate /32=5/s\n",
	  ":1:1:", "wider than the source prefix" },
	{ "aggregate of the other family",
	  "default rate 1/s\n"
	  "rule 10.0.0.0/8 rate 1/s aggregate ipv6/48=5/s\n",
	  ":2:1:", "the rule's address family" },
	{ "two aggregates on one length", "default rate 1/s aggregate /24=5/s aggregate /24=9/s\n",
	  ":1:1:", "same prefix length" },
	{ "five aggregates",
	  "default rate 1/s aggregate /8=1/s aggregate /12=1/s "
	  "aggregate /16=1/s aggregate /20=1/s aggregate /24=1/s\n",
	  ":1:99:", "at most 4 aggregates" },
	/* Algorithms: each contradiction on its own, named. */
	{ "unknown algorithm", "default rate 1/s algorithm token-bucket\n",
	  ":1:28:", "bad algorithm 'token-bucket'" },
	{ "window of 0", "default rate 1/s algorithm fixed-window window 0\n",
	  ":1:48:", "bad window '0'" },
	{ "window with gcra", "default rate 1/s window 10s\n", ":1:1:", "--window" },
	{ "burst with a window", "default rate 1/s algorithm fixed-window burst 10\n",
	  ":1:1:", "--burst" },
	{ "warmup with a window", "default rate 1/s algorithm sliding-window warmup 5s\n",
	  ":1:1:", "--warmup" },
	{ "burst with a warm-up", "default rate 1/s warmup 5s burst 4\n", ":1:1:", "--burst" },
	{ "limit per window past the packed maximum",
	  "default rate 1000000/s algorithm sliding-window window 1s\n", ":1:1:", "at most" },
	/* Options of the other address family than the rule's CIDR. */
	{ "icmpv6 on an IPv4 rule", "default rate 1/s\nrule 10.0.0.0/8 rate 1/s proto icmpv6\n",
	  ":2:1:", "icmpv6 never matches an IPv4 rule" },
	{ "icmp on an IPv6 rule", "default rate 1/s\nrule 2001:db8::/32 rate 1/s proto icmp\n",
	  ":2:1:", "icmp never matches an IPv6 rule" },
	{ "ipv6-prefix on an IPv4 rule",
	  "default rate 1/s\nrule 10.0.0.0/8 rate 1/s ipv6-prefix 56\n",
	  ":2:1:", "--ipv6-prefix 56 does not apply to an IPv4 rule, 10.0.0.0/8" },
	{ "ipv6-prefix at its default on an IPv4 rule",
	  "default rate 1/s\nrule 0.0.0.0/0 rate 1/s ipv6-prefix 64\n",
	  ":2:1:", "--ipv6-prefix 64 does not apply to an IPv4 rule, 0.0.0.0/0" },
	{ "ipv4-prefix on an IPv6 rule",
	  "default rate 1/s\nrule 2001:db8::/32 rate 1/s ipv4-prefix 24\n",
	  ":2:1:", "--ipv4-prefix 24 does not apply to an IPv6 rule, 2001:db8::/32" },
	{ "ipv4-prefix at its default on an IPv6 rule",
	  "default rate 1/s\nrule ::/0 rate 1/s ipv4-prefix 32\n",
	  ":2:1:", "--ipv4-prefix 32 does not apply to an IPv6 rule, ::/0" },
	{ "IPv4 aggregate on an IPv6 rule",
	  "default rate 1/s\nrule 2001:db8::/32 rate 1/s aggregate ipv4/24=5/s\n",
	  ":2:1:", "the rule's address family" },
	{ "aggregate /0 on the default", "default rate 1/s aggregate /0=5/s\n",
	  ":1:1:", "at least 1" },
	{ "aggregate ipv6/0 on the default", "default rate 1/s aggregate ipv6/0=5/s\n",
	  ":1:1:", "at least 1" },
	{ "aggregate /0 on a rule", "default rate 1/s\nrule 10.0.0.0/8 rate 1/s aggregate /0=5/s\n",
	  ":2:1:", "at least 1" },
	{ "aggregate /0 on an IPv6 rule",
	  "default rate 1/s\nrule 2001:db8::/32 rate 1/s aggregate ipv6/0=5/s\n",
	  ":2:1:", "at least 1" },
	{ "aggregate burst in bytes for packets", "default rate 1/s aggregate /24=5/s,burst=1kB\n",
	  ":1:1:", "needs a byte rate" },
	/* The attach statement: mode and max-sources, through the same option table. */
	{ "attach alone", "attach\ndefault rate 1/s\n",
	  ":1:1:", "expected an option after 'attach' (mode, max-sources, group)" },
	{ "second attach", "attach mode native\ndefault rate 1/s\nattach max-sources 5\n",
	  ":3:1:", "second 'attach'" },
	{ "bad mode", "attach mode offload\ndefault rate 1/s\n",
	  ":1:13:", "bad mode 'offload': expected native, generic or skb" },
	{ "max-sources 0", "default rate 1/s\nattach max-sources 0\n",
	  ":2:20:", "bad max-sources '0'" },
	{ "max-sources too large", "default rate 1/s\nattach max-sources 200M\n",
	  ":2:20:", "bad max-sources '200M'" },
	{ "max-sources without a value", "default rate 1/s\nattach max-sources\n",
	  ":2:8:", "expected a value after 'max-sources'" },
	{ "a limiter option in attach", "attach rate 5/s\ndefault rate 1/s\n",
	  ":1:8:", "unknown option 'rate' (expected mode, max-sources, group)" },
	{ "mode in default", "default rate 1/s mode native\n", ":1:18:", "unknown option 'mode'" },
	{ "an unknown option of a rule names every option of a rule, the last too",
	  "default rate 1/s\nrule 10.0.0.0/8 rate 1/s dest 10.1.0.0/16\n", ":2:26:",
	  "unknown option 'dest' (expected rate, algorithm, window, burst, warmup, action, dscp, "
	  "ecn, ipv4-prefix, ipv6-prefix, key, new-sources, overflow-rate, initial-burst, on-full, "
	  "prove, proven-sources, aggregate, ban-after, ban-for, ban-escalate, ban-memory, ban-max, "
	  "proto, dport, syn, sport, tcp-flags, icmp-type, length, dst)" },
	{ "max-sources in a rule", "default rate 1/s\nrule 10.0.0.0/8 rate 1/s max-sources 5\n",
	  ":2:26:", "unknown option 'max-sources'" },
	{ "attach and no default", "attach mode native\n", NULL, "missing a 'default" },
	{ "unknown statement names attach", "interface eth0\ndefault rate 1/s\n",
	  ":1:1:", "(expected attach, default, rule, allow or deny)" },
	{ "until without a time", "default rate 1/s\ndeny 10.0.0.0/8 until\n",
	  ":2:17:", "expected a time after 'until'" },
	{ "until with a bad time", "default rate 1/s\ndeny 10.0.0.0/8 until 2030-01-01\n",
	  ":2:23:", "bad time '2030-01-01': expected a UTC time" },
	{ "until with words after",
	  "default rate 1/s\ndeny 10.0.0.0/8 until 2030-01-01T00:00:00Z x\n",
	  ":2:44:", "expected the end of the line after the time" },
	{ "a word other than until", "default rate 1/s\ndeny 10.0.0.0/8 timeout 1h\n",
	  ":2:17:", "expected 'until TIME' or the end of the line" },
	{ "until on an allow entry",
	  "default rate 1/s\nallow 10.0.0.0/8 until 2030-01-01T00:00:00Z\n",
	  ":2:18:", "allow entries never expire" },
};
/* clang-format on */

static void test_errors(void)
{
	struct policy_doc doc;
	char err[512];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
		const struct error_case *c = &error_cases[i];

		ret = parse_text(c->text, &doc, err, sizeof(err));
		if (!ret)
			doc_free(&doc);
		check(ret && (!c->where || strstr(err, c->where)) && strstr(err, c->says), c->name,
		      "got %d: %s", ret, err);
	}
}

static const char complete[] =
	"# a complete policy\n"
	"default rate 500/s burst 1k ipv6-prefix 56 aggregate /48=20k/s aggregate ipv6/32=1M/s\n"
	"\n"
	"rule 10.0.0.0/8 rate 100/s   # comment after a statement\n"
	"rule 0.0.0.0/0 rate 5/m burst 3 proto tcp dport 22 syn\n"
	"rule 0.0.0.0/0 rate 2k/s proto tcp dport 443\n"
	"rule 2001:db8::/32 rate 10mbit/s burst 64kB action mark dscp 8 ecn\n"
	"rule 192.0.2.0/24 rate 1gbit/s action dry-run ipv4-prefix 24\n"
	"rule 172.16.0.0/12 rate 50/s aggregate /24=5000/s aggregate /16=20000/s,burst=40000\n"
	"rule 2001:db8:1::/48 rate 50/s aggregate /56=1000/s\n"
	"rule 198.18.0.0/15 rate 100/m algorithm fixed-window\n"
	"rule 198.20.0.0/16 rate 50/s algorithm sliding-window window 90s\n"
	"rule 100.64.0.0/10 rate 20/s warmup 1500ms\n"
	"rule 2001:db8:2::/48 rate 1mbit/s algorithm fixed-window window 250ms\n"
	"\tallow 198.51.100.0/24\n"
	"deny 203.0.113.0/24\n"
	"deny 2001:db8:bad::/48\n"
	"deny 192.0.2.64/26 until 2001-01-01T00:00:00Z # passed: no longer denies\n"
	"deny 2001:db8:beef::/48 until %s\n";

static const char canonical[] =
	"default rate 500/s burst 1k ipv6-prefix 56 aggregate /48=20k/s aggregate ipv6/32=1M/s\n"
	"rule 10.0.0.0/8 rate 100/s\n"
	"rule 0.0.0.0/0 rate 5/m burst 3 proto tcp dport 22 syn\n"
	"rule 0.0.0.0/0 rate 2k/s proto tcp dport 443\n"
	"rule 2001:db8::/32 rate 10mbit/s burst 64kB action mark dscp 8 ecn\n"
	"rule 192.0.2.0/24 rate 1gbit/s action dry-run ipv4-prefix 24\n"
	"rule 172.16.0.0/12 rate 50/s aggregate /24=5k/s aggregate /16=20k/s,burst=40k\n"
	"rule 2001:db8:1::/48 rate 50/s aggregate /56=1k/s\n"
	"rule 198.18.0.0/15 rate 100/m algorithm fixed-window\n"
	"rule 198.20.0.0/16 rate 50/s algorithm sliding-window window 1m30s\n"
	"rule 100.64.0.0/10 rate 20/s warmup 1.5s\n"
	"rule 2001:db8:2::/48 rate 1mbit/s algorithm fixed-window window 250ms\n"
	"allow 198.51.100.0/24\n"
	"deny 203.0.113.0/24\n"
	"deny 2001:db8:bad::/48\n"
	"deny 2001:db8:beef::/48 until %s\n";

/* The UTC moment from_now_ns ahead, as show prints it. */
static void utc_ahead(char *buf, size_t len, uint64_t from_now_ns)
{
	format_utc(buf, len, realtime_ns() + from_now_ns);
}

static void test_round_trip(void)
{
	char err[512], *out = NULL, *out2 = NULL, until[32], text[2048], want[2048];
	struct policy_doc doc, again;
	size_t len = 0, len2 = 0;
	FILE *mem;

	utc_ahead(until, sizeof(until), 365 * 86400 * NSEC_PER_SEC);
	snprintf(text, sizeof(text), complete, until);
	snprintf(want, sizeof(want), canonical, until);
	if (parse_text(text, &doc, err, sizeof(err))) {
		check(false, "a complete file parses", "%s", err);
		return;
	}
	check(doc.n_rules == 11 && doc.allow.count == 1 && doc.deny.count == 3,
	      "a complete file parses", "%d rules", doc.n_rules);
	mem = open_memstream(&out, &len);
	conf_write(mem, &doc);
	fclose(mem);
	check(!strcmp(out, want), "show prints the canonical form", "got:\n%s", out);
	doc_free(&doc);

	parse_text(out, &again, err, sizeof(err));
	mem = open_memstream(&out2, &len2);
	conf_write(mem, &again);
	fclose(mem);
	check(!strcmp(out, out2), "show -> apply -> show round-trips exactly", "got:\n%s", out2);
	doc_free(&again);
	free(out);
	free(out2);
}

/* show's text of doc, in a buffer the caller frees. */
static char *shown(const struct policy_doc *doc)
{
	char *out = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&out, &len);

	conf_write(mem, doc);
	fclose(mem);
	return out;
}

/* "deny 192.0.2.0/24 until TIME" for a ban ending from_now_ns ahead: its parse status. */
static int until_ahead(uint64_t from_now_ns, char *err, size_t errlen)
{
	char until[32], text[128];
	struct policy_doc doc;
	int ret;

	utc_ahead(until, sizeof(until), from_now_ns);
	snprintf(text, sizeof(text), "default rate 1/s\ndeny 192.0.2.0/24 until %s\n", until);
	ret = parse_text(text, &doc, err, errlen);
	if (!ret)
		doc_free(&doc);
	return ret;
}

/*
 * until has the limit of --timeout (BAN_MAX_NS from now, one check), however
 * far the time is, and show -> apply round-trips every ban it accepts: one
 * made as long as allowed, shown rounded to the second, applies back.
 */
static void test_until_limit(void)
{
	static const char *const far[] = {
		"2554-07-21T23:34:33Z", /* the last second 64 bits of ns hold */
		"2554-07-21T23:34:34Z", /* the first past it */
		"9999-12-31T23:59:59Z",
	};
	struct policy_doc doc = { 0 }, again;
	char err[512], text[160], *out, *out2;
	size_t i;
	int ret;

	ret = until_ahead(BAN_MAX_NS - 60 * NSEC_PER_SEC, err, sizeof(err));
	check(!ret, "until a minute short of 3650d ahead is accepted", "%d: %s", ret, err);
	ret = until_ahead(BAN_MAX_NS + 60 * NSEC_PER_SEC, err, sizeof(err));
	check(ret == -EINVAL && strstr(err, ":2:25: bad time '") &&
		      strstr(err, "': a deny entry lasts at most 3650d from now ("),
	      "until a minute past 3650d ahead is refused, as a longer --timeout is", "%d: %s", ret,
	      err);
	for (i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		snprintf(text, sizeof(text), "default rate 1/s\ndeny 192.0.2.0/24 until %s\n",
			 far[i]);
		ret = parse_text(text, &again, err, sizeof(err));
		if (!ret)
			doc_free(&again);
		check(ret == -EINVAL && strstr(err, ":2:25: bad time '") && strstr(err, far[i]),
		      "until far ahead is refused at its column, never wrapped into the past",
		      "%s: %d: %s", far[i], ret, err);
	}

	/* deny add --timeout 3650d, shown: its end rounded up to the second still applies. */
	doc_init(&doc);
	for (i = 0; i < 2; i++) {
		struct cidr c;

		parse_cidr(i ? "2001:db8::/32" : "192.0.2.0/24", &c, &(bool){ false },
			   &(const char *){ 0 });
		cidr_list_add_until(&doc.deny, &c, monotonic_ns() + BAN_MAX_NS - i);
	}
	parse_rate("1/s", &doc.dflt.rate, &(const char *){ 0 });
	out = shown(&doc);
	ret = parse_text(out, &again, err, sizeof(err));
	out2 = ret ? NULL : shown(&again);
	check(!ret && !strcmp(out, out2), "a ban of 3650d, shown, applies back to the same text",
	      "%d: %s\n%s\n%s", ret, err, out, out2 ? out2 : "");
	if (!ret)
		doc_free(&again);
	doc_free(&doc);
	free(out);
	free(out2);
}

/* The attach statement: parsed into doc->attach, printed first by show, and back. */
static void test_attach_statement(void)
{
	struct policy_doc doc;
	char err[512], *out = NULL;
	size_t len = 0;
	FILE *mem;

	if (parse_text("default rate 5/s\nattach max-sources 2k mode skb # generic\n", &doc, err,
		       sizeof(err))) {
		check(false, "an attach statement parses", "%s", err);
		return;
	}
	check(doc.attach.mode_given && doc.attach.xdp_flags && doc.attach.max_sources_given &&
		      doc.attach.max_sources == 2000,
	      "attach: mode and max-sources are read", "%llu",
	      (unsigned long long)doc.attach.max_sources);
	mem = open_memstream(&out, &len);
	conf_write(mem, &doc);
	fclose(mem);
	check(!strcmp(out, "attach mode generic max-sources 2000\ndefault rate 5/s\n"),
	      "show prints attach first, canonical", "got:\n%s", out);
	doc_free(&doc);
	free(out);

	parse_text("default rate 5/s\nattach max-sources 300\n", &doc, err, sizeof(err));
	check(!doc.attach.mode_given && doc.attach.max_sources_given &&
		      doc.attach.max_sources == 300,
	      "attach: only what is stated is given", " ");
	doc_free(&doc);
	parse_text("default rate 5/s\n", &doc, err, sizeof(err));
	check(!doc.attach.mode_given && !doc.attach.max_sources_given &&
		      doc.attach.max_sources == SLUICE_DEFAULT_MAX_SOURCES,
	      "no attach statement: nothing stated, the default max-sources", " ");
	mem = open_memstream(&out, &len);
	conf_write(mem, &doc);
	fclose(mem);
	check(!strcmp(out, "default rate 5/s\n"), "no attach statement: show prints none",
	      "got:\n%s", out);
	doc_free(&doc);
	free(out);
}

static void test_cidr_file(void)
{
	struct cidr_list l = { 0 };
	char err[512];
	FILE *f;
	int ret;

	f = fopen(path, "w");
	fputs("# list\n10.0.0.0/8\n\n  192.0.2.1   # one host\n2001:db8::/32\n", f);
	fclose(f);
	ret = cidr_file_parse(path, &l, err, sizeof(err));
	check(!ret && l.count == 3, "a CIDR list file with comments and blanks", "%d %zu", ret,
	      l.count);
	free(l.items);

	memset(&l, 0, sizeof(l));
	f = fopen(path, "w");
	fputs("10.0.0.0/8\n10.0.0.0/99\n", f);
	fclose(f);
	ret = cidr_file_parse(path, &l, err, sizeof(err));
	check(ret && strstr(err, ":2:1:"), "a bad CIDR in a list file names its line", "%s", err);
	free(l.items);
}

/* Writes len bytes (NULs included) to the scratch file. */
static void write_bytes(const char *bytes, size_t len)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fwrite(bytes, 1, len, f);
		fclose(f);
	}
}

/* "default rate 5/s" padded with blanks to exactly `chars` characters, then `end`. */
static size_t padded_line(char *buf, size_t chars, const char *end)
{
	size_t n = (size_t)sprintf(buf, "default rate 5/s");

	memset(buf + n, ' ', chars - n);
	strcpy(buf + chars, end);
	return chars + strlen(end);
}

/* Both parsers read lines alike: each case runs through conf_parse and cidr_file_parse. */
static int parse_both(const char *bytes, size_t len, bool conf, char *err, size_t errlen)
{
	struct cidr_list l = { 0 };
	struct policy_doc doc;
	int ret;

	write_bytes(bytes, len);
	memset(err, 0, errlen);
	if (conf) {
		ret = conf_parse(path, &doc, err, errlen);
		if (!ret)
			doc_free(&doc);
		return ret;
	}
	ret = cidr_file_parse(path, &l, err, errlen);
	free(l.items);
	return ret;
}

/* The longest line is LINE_MAX_CHARS = 4095 characters, newline not counted. */
static void test_line_length(void)
{
	static char buf[8192];
	char err[512];
	size_t len;
	int ret;

	len = padded_line(buf, 4095, "\n");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(!ret, "a line of exactly 4095 characters is accepted", "%d: %s", ret, err);
	len = padded_line(buf, 4095, "");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(!ret, "a last line of 4095 characters without a newline is accepted", "%d: %s", ret,
	      err);
	len = padded_line(buf, 4095, "\r\n");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(!ret, "4095 characters and CRLF are accepted (the CR is the newline's)", "%d: %s",
	      ret, err);
	len = padded_line(buf, 4095, "\r");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(!ret, "a last line of 4095 characters and a CR is accepted", "%d: %s", ret, err);
	len = padded_line(buf, 4095, "\r\r\n");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(ret && strstr(err, ":1:4096: line longer than 4095 characters"),
	      "4095 characters and two CRs before the newline are refused", "%d: %s", ret, err);
	len = padded_line(buf, 4096, "\n");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(ret && strstr(err, ":1:4096: line longer than 4095 characters"),
	      "a line of 4096 characters is refused at its column 4096", "%d: %s", ret, err);
	len = padded_line(buf, 4097, "");
	ret = parse_both(buf, len, true, err, sizeof(err));
	check(ret && strstr(err, ":1:4096: line longer than 4095 characters"),
	      "a line of 4097 characters is refused", "%d: %s", ret, err);
	memset(buf, ' ', 4096);
	memcpy(buf + 4096, "\n10.0.0.0/8\n", 12);
	ret = parse_both(buf, 4108, false, err, sizeof(err));
	check(ret && strstr(err, ":1:4096: line longer"),
	      "a list file's line of 4096 characters is refused", "%d: %s", ret, err);
}

/* A NUL byte is named as such, where it is, whatever the line's length. */
static void test_nul_bytes(void)
{
	static const char conf_nul[] = "default rate 5/s\nrule 10.0.0.0/8 rate 1/s\0\n";
	static const char list_nul[] = "10.0.0.0/8\n192.0\0.2.0/24\n";
	static char buf[8192];
	char err[512];
	int ret;

	ret = parse_both(conf_nul, sizeof(conf_nul) - 1, true, err, sizeof(err));
	check(ret && strstr(err, ":2:25: a NUL byte"), "a NUL byte in a short rule line", "%d: %s",
	      ret, err);
	ret = parse_both(list_nul, sizeof(list_nul) - 1, false, err, sizeof(err));
	check(ret && strstr(err, ":2:6: a NUL byte"), "a NUL byte in a list file", "%d: %s", ret,
	      err);
	ret = parse_both("\0", 1, true, err, sizeof(err));
	check(ret && strstr(err, ":1:1: a NUL byte"), "a lone NUL byte", "%d: %s", ret, err);
	memset(buf, 0, 6000);
	ret = parse_both(buf, 6000, true, err, sizeof(err));
	check(ret && strstr(err, ":1:1: a NUL byte"),
	      "a long run of NUL bytes is a NUL byte, not a long line", "%d: %s", ret, err);
}

/*
 * A UTF-8 byte order mark before the first line is skipped, by both parsers,
 * columns counting from after it; anywhere else it is a character like any
 * other; a UTF-16 one is named as such.
 */
static void test_bom(void)
{
	static const char conf[] = UTF8_BOM "default rate 5/s\nrule 10.0.0.0/8 rate 1/s\n";
	static const char bad[] = UTF8_BOM "default rate 1/x\n";
	static const char list[] = UTF8_BOM "10.0.0.0/8\n192.0.2.0/24\n";
	static const char later[] = "default rate 5/s\n" UTF8_BOM "rule 10.0.0.0/8 rate 1/s\n";
	static const char utf16[] = "\xff\xfe"
				    "d\0e\0f\0";
	char err[512];
	int ret;

	ret = parse_both(conf, sizeof(conf) - 1, true, err, sizeof(err));
	check(!ret, "a policy file that starts with a byte order mark is accepted", "%d: %s", ret,
	      err);
	ret = parse_both(bad, sizeof(bad) - 1, true, err, sizeof(err));
	check(ret && strstr(err, ":1:14: bad rate '1/x'"),
	      "after a byte order mark, columns count from the text", "%d: %s", ret, err);
	ret = parse_both(list, sizeof(list) - 1, false, err, sizeof(err));
	check(!ret, "a CIDR list that starts with a byte order mark is accepted", "%d: %s", ret,
	      err);
	ret = parse_both(later, sizeof(later) - 1, true, err, sizeof(err));
	check(ret && strstr(err, ":2:1: unknown statement '" UTF8_BOM "rule'"),
	      "a byte order mark on a later line is no statement", "%d: %s", ret, err);
	ret = parse_both(utf16, sizeof(utf16) - 1, true, err, sizeof(err));
	check(ret && strstr(err, ":1:1: a UTF-16 byte order mark (expected UTF-8 text)"),
	      "UTF-16 is named as such, not as a NUL byte", "%d: %s", ret, err);
}

/* Input that cannot be read: one message naming it and why, for both parsers. */
static void unreadable(const char *name, const char *file, const char *says)
{
	struct cidr_list l = { 0 };
	struct policy_doc doc;
	char err[512], want[256];
	bool conf_ok, list_ok;
	int ret;

	snprintf(want, sizeof(want), "%s: cannot read: %s",
		 strcmp(file, "-") ? file : "standard input", says);
	memset(err, 0, sizeof(err));
	ret = conf_parse(file, &doc, err, sizeof(err));
	conf_ok = ret && !strcmp(err, want);
	check(conf_ok, name, "config: %d: '%s' (want '%s')", ret, err, want);
	memset(err, 0, sizeof(err));
	ret = cidr_file_parse(file, &l, err, sizeof(err));
	free(l.items);
	list_ok = ret && !strcmp(err, want);
	check(list_ok, name, "list: %d: '%s' (want '%s')", ret, err, want);
}

static void test_unreadable(void)
{
	int saved;

	unreadable("a directory is refused with a message", "/tmp", "Is a directory");
	unreadable("/proc/self/mem is refused with a message", "/proc/self/mem",
		   "Input/output error");
	saved = dup(0);
	close(0);
	unreadable("a closed standard input is refused with a message", "-", "Bad file descriptor");
	clearerr(stdin);
	dup2(saved, 0);
	close(saved);
}

/* A sorted list of the CIDRs in a space-separated string. */
static void cidrs_of(const char *s, struct cidr_list *l)
{
	char buf[256], *tok, *save = NULL;
	const char *why;
	struct cidr c;
	bool host;

	memset(l, 0, sizeof(*l));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		if (!parse_cidr(tok, &c, &host, &why))
			cidr_list_add(l, &c);
	cidr_list_sort(l);
}

/* The list as text, space-separated, in its order. */
static const char *cidrs_text(const struct cidr_list *l)
{
	static char out[512];
	char one[64];
	size_t i;

	out[0] = '\0';
	for (i = 0; i < l->count; i++) {
		format_cidr(one, sizeof(one), &l->items[i].cidr);
		if (i)
			strncat(out, " ", sizeof(out) - strlen(out) - 1);
		strncat(out, one, sizeof(out) - strlen(out) - 1);
	}
	return out;
}

static void test_cidr_merge(void)
{
	struct cidr_list live, change, out;
	size_t missing = 99;
	int ret;

	cidrs_of("2001:db8::/32 192.0.2.1 10.0.0.0/8", &live);
	cidrs_of("198.51.100.0/24 10.0.0.0/8", &change);
	ret = cidr_list_merge(&live, &change, true, &out, &missing);
	check(!ret && !strcmp(cidrs_text(&out),
			      "10.0.0.0/8 192.0.2.1/32 198.51.100.0/24 2001:db8::/32"),
	      "add: the sorted union, each entry once", "%d: %s", ret, cidrs_text(&out));
	free(out.items);

	ret = cidr_list_merge(&live, &change, false, &out, &missing);
	check(ret == -ENOENT && missing == 1 && !out.items && !out.count,
	      "del of an entry not on the list: -ENOENT, its index, nothing made", "%d %zu", ret,
	      missing);
	free(change.items);

	cidrs_of("10.0.0.0/8 2001:db8::/32", &change);
	ret = cidr_list_merge(&live, &change, false, &out, &missing);
	check(!ret && !strcmp(cidrs_text(&out), "192.0.2.1/32"), "del: the difference", "%d: %s",
	      ret, cidrs_text(&out));
	free(out.items);
	free(change.items);

	ret = cidr_list_merge(&live, &live, false, &out, &missing);
	check(!ret && !out.count, "del of the whole list leaves it empty", "%d %zu", ret,
	      out.count);
	free(out.items);
	free(live.items);
}

static void test_cidr_list_has(void)
{
	struct cidr_list l, empty = { 0 };
	const char *why;
	struct cidr c;
	bool host;
	const char *probe[] = { "10.0.0.0/8", "2001:db8::/32", "192.0.2.1",
				"10.0.0.0/9", "2001:db8::/33", "192.0.2.2" };
	int i, found = 0;

	cidrs_of("2001:db8::/32 192.0.2.1 10.0.0.0/8 198.51.100.0/24", &l);
	for (i = 0; i < 6; i++)
		if (!parse_cidr(probe[i], &c, &host, &why) && cidr_list_has(&l, &c))
			found |= 1 << i;
	parse_cidr("10.0.0.0/8", &c, &host, &why);
	check(found == 7 && !cidr_list_has(&empty, &c),
	      "cidr_list_has: each entry, not a CIDR of another length, nor in an empty list",
	      "found %#x", found);
	free(l.items);
}

/* The expiry of entry i of l after merging change (expiry each) into live (expiry each). */
static uint64_t merged_expiry(uint64_t live_expiry, uint64_t change_expiry)
{
	struct cidr_list live = { 0 }, change = { 0 }, out = { 0 };
	size_t missing;
	uint64_t e = UINT64_MAX;

	cidrs_of("10.0.0.0/8", &live);
	cidrs_of("10.0.0.0/8", &change);
	live.items[0].expires_ns = live_expiry;
	change.items[0].expires_ns = change_expiry;
	if (!cidr_list_merge(&live, &change, true, &out, &missing) && out.count == 1)
		e = out.items[0].expires_ns;
	free(live.items);
	free(change.items);
	free(out.items);
	return e;
}

/* Adding an entry again never shortens it; a permanent add makes it permanent. */
static void test_cidr_merge_expiry(void)
{
	struct cidr_list l = { 0 }, same = { 0 };

	check(merged_expiry(100, 200) == 200, "add again, later: the entry is extended", "%s", "");
	check(merged_expiry(200, 100) == 200, "add again, sooner: the entry keeps the later", "%s",
	      "");
	check(merged_expiry(100, 0) == 0, "add again, permanent: the entry becomes permanent", "%s",
	      "");
	check(merged_expiry(0, 100) == 0, "add again, timed: a permanent entry stays so", "%s", "");
	cidrs_of("10.0.0.0/8", &same);
	cidr_list_add_until(&l, &same.items[0].cidr, 5);
	cidr_list_add_until(&l, &same.items[0].cidr, 9);
	cidr_list_add_until(&l, &same.items[0].cidr, 7);
	cidr_list_sort(&l);
	check(l.count == 1 && l.items[0].expires_ns == 9,
	      "a CIDR given three times is one entry with the latest expiry", "%zu", l.count);
	check(!cidr_list_equal(&l, &same), "lists differing in an expiry alone are not equal", "%s",
	      "");
	same.items[0].expires_ns = 9;
	check(cidr_list_equal(&l, &same), "the same entries and expiries are equal", "%s", "");
	free(l.items);
	free(same.items);
}

/* count IPv4 /32s from first up, in reverse order when asked (unsorted, as a file may be). */
static int hosts_of(uint32_t first, size_t count, bool reverse, struct cidr_list *l)
{
	struct cidr c = { .family = SLUICE_FAMILY_IPV4, .len = 32 };
	size_t i;
	int err = 0;

	memset(l, 0, sizeof(*l));
	for (i = 0; !err && i < count; i++) {
		c.addr[0] = htonl(first + (uint32_t)(reverse ? count - 1 - i : i));
		err = cidr_list_add(l, &c);
	}
	return err;
}

/*
 * Bulk list changes cost time linear in the list (issue 10: deleting 100k
 * entries one search at a time took 2.5 s, 2M more than 10 minutes): the
 * user side of add -f and del -f, the sort and the merge, on 400,000
 * entries. Linear takes a fraction of a second; quadratic some 40 s.
 */
#define BULK_ENTRIES 400000
#define BULK_SECONDS 4

static void test_cidr_merge_bulk(void)
{
	struct cidr_list live, change, out = { 0 };
	size_t missing = 0;
	uint64_t t0, add_ns, del_ns;
	int ret;

	if (hosts_of(0x0a000000, BULK_ENTRIES, false, &live) ||
	    hosts_of(0x0b000000, BULK_ENTRIES, true, &change)) {
		check(false, "bulk list changes: build the lists", "out of memory");
		goto out;
	}
	t0 = monotonic_ns();
	cidr_list_sort(&change);
	ret = cidr_list_merge(&live, &change, true, &out, &missing);
	add_ns = monotonic_ns() - t0;
	check(!ret && out.count == 2 * BULK_ENTRIES && add_ns < BULK_SECONDS * NSEC_PER_SEC,
	      "add -f of 400,000 entries to a list of 400,000: linear time",
	      "%d, %zu entries in %.3f s", ret, out.count, add_ns / 1e9);
	free(out.items);
	free(change.items);

	hosts_of(0x0a000000, BULK_ENTRIES, true, &change);
	t0 = monotonic_ns();
	cidr_list_sort(&change);
	ret = cidr_list_merge(&live, &change, false, &out, &missing);
	del_ns = monotonic_ns() - t0;
	check(!ret && !out.count && del_ns < BULK_SECONDS * NSEC_PER_SEC,
	      "del -f of all 400,000 entries of a list: linear time", "%d, %zu left in %.3f s", ret,
	      out.count, del_ns / 1e9);
out:
	free(out.items);
	free(change.items);
	free(live.items);
}

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	test_errors();
	test_round_trip();
	test_until_limit();
	test_attach_statement();
	test_cidr_file();
	test_line_length();
	test_nul_bytes();
	test_bom();
	test_unreadable();
	test_cidr_merge();
	test_cidr_list_has();
	test_cidr_merge_expiry();
	test_cidr_merge_bulk();
	unlink(path);
	return harness_finish();
}
