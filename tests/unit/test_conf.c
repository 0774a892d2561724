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
#include "conf.h"
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
	  ":2:1:", "syn needs proto tcp" },
	{ "dport without proto", "default rate 1/s\nrule 0.0.0.0/0 rate 1/s dport 22\n",
	  ":2:1:", "dport needs proto tcp or udp" },
	{ "mark without dscp or ecn", "default rate 1/s action mark\n",
	  ":1:1:", "mark needs dscp" },
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
	{ "aggregate burst in bytes for packets", "default rate 1/s aggregate /24=5/s,burst=1kB\n",
	  ":1:1:", "needs a byte rate" },
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
	"\tallow 198.51.100.0/24\n"
	"deny 203.0.113.0/24\n"
	"deny 2001:db8:bad::/48\n";

static const char canonical[] =
	"default rate 500/s burst 1k ipv6-prefix 56 aggregate /48=20k/s aggregate ipv6/32=1M/s\n"
	"rule 10.0.0.0/8 rate 100/s\n"
	"rule 0.0.0.0/0 rate 5/m burst 3 proto tcp dport 22 syn\n"
	"rule 0.0.0.0/0 rate 2k/s proto tcp dport 443\n"
	"rule 2001:db8::/32 rate 10mbit/s burst 64kB action mark dscp 8 ecn\n"
	"rule 192.0.2.0/24 rate 1gbit/s action dry-run ipv4-prefix 24\n"
	"rule 172.16.0.0/12 rate 50/s aggregate /24=5k/s aggregate /16=20k/s,burst=40k\n"
	"rule 2001:db8:1::/48 rate 50/s aggregate /56=1k/s\n"
	"allow 198.51.100.0/24\n"
	"deny 203.0.113.0/24\n"
	"deny 2001:db8:bad::/48\n";

static void test_round_trip(void)
{
	struct policy_doc doc, again;
	char err[512], *out = NULL, *out2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *mem;

	if (parse_text(complete, &doc, err, sizeof(err))) {
		check(false, "a complete file parses", "%s", err);
		return;
	}
	check(doc.n_rules == 7 && doc.allow.count == 1 && doc.deny.count == 2,
	      "a complete file parses", "%d rules", doc.n_rules);
	mem = open_memstream(&out, &len);
	conf_write(mem, &doc);
	fclose(mem);
	check(!strcmp(out, canonical), "show prints the canonical form", "got:\n%s", out);
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
		format_cidr(one, sizeof(one), &l->items[i]);
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

int main(void)
{
	int fd = mkstemp(path);

	if (fd < 0)
		return 1;
	close(fd);
	test_errors();
	test_round_trip();
	test_cidr_file();
	test_cidr_merge();
	unlink(path);
	return harness_finish();
}
