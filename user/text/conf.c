// SPDX-License-Identifier: GPL-2.0
/* The policy language: options, statements, config files and CIDR lists. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "text/conf.h"
#include "values/words.h"

#define LINE_MAX_CHARS 4095 /* the longest line, not counting its newline */
#define MAX_TOKENS     64

bool option_is_flag(const char *name)
{
	return !strcmp(name, "ecn") || !strcmp(name, "syn");
}

static int apply_prefix(unsigned int *out, const char *value, unsigned int max, const char **why)
{
	return parse_prefix(value, max, out, why);
}

static int parse_on_full(const char *value, bool *pass, const char **why)
{
	if (!strcmp(value, "drop") || !strcmp(value, "pass")) {
		*pass = !strcmp(value, "pass");
		return 0;
	}
	*why = "expected drop or pass";
	return -EINVAL;
}

static int apply_dscp(struct settings *s, const char *value, const char **why)
{
	uint64_t v;
	int err = parse_count(value, 0, 63, &v, why);

	if (!err) {
		s->dscp = (uint8_t)v;
		s->mark_dscp = true;
	}
	return err;
}

/* Each --aggregate adds one; "none" clears them. */
static int apply_aggregate(struct settings *s, const char *value, const char **why)
{
	int err;

	if (!strcmp(value, "none")) {
		s->n_aggregates = 0;
		return 0;
	}
	if (s->n_aggregates == SLUICE_MAX_AGGREGATES) {
		*why = "at most 4 aggregates per rule";
		return -E2BIG;
	}
	err = parse_aggregate(value, &s->aggregates[s->n_aggregates], why);
	if (!err)
		s->n_aggregates++;
	return err;
}

static int apply_match(struct match *m, const char *name, const char *value, const char **why)
{
	if (!strcmp(name, "proto"))
		return parse_proto(value, &m->proto, why);
	if (!strcmp(name, "dport"))
		return parse_port_range(value, &m->dport_lo, &m->dport_hi, why);
	m->syn = true; /* "syn" */
	return 0;
}

int option_apply(struct settings *s, struct match *m, const char *name, const char *value,
		 const char **why)
{
	if (!strcmp(name, "rate"))
		return parse_rate(value, &s->rate, why);
	if (!strcmp(name, "burst"))
		return parse_burst(value, &s->burst, why);
	if (!strcmp(name, "action"))
		return parse_action(value, &s->action, why);
	if (!strcmp(name, "dscp"))
		return apply_dscp(s, value, why);
	if (!strcmp(name, "ecn")) {
		s->mark_ecn = true;
		return 0;
	}
	if (!strcmp(name, "new-sources"))
		return parse_rate(value, &s->new_sources, why);
	if (!strcmp(name, "overflow-rate"))
		return parse_rate(value, &s->overflow, why);
	if (!strcmp(name, "initial-burst"))
		return parse_burst(value, &s->initial, why);
	if (!strcmp(name, "on-full"))
		return parse_on_full(value, &s->on_full_pass, why);
	if (!strcmp(name, "aggregate"))
		return apply_aggregate(s, value, why);
	if (!strcmp(name, "ipv4-prefix")) {
		s->ipv4_prefix_given = true;
		return apply_prefix(&s->ipv4_prefix, value, 32, why);
	}
	if (!strcmp(name, "ipv6-prefix")) {
		s->ipv6_prefix_given = true;
		return apply_prefix(&s->ipv6_prefix, value, 128, why);
	}
	if (m && (!strcmp(name, "proto") || !strcmp(name, "dport") || !strcmp(name, "syn")))
		return apply_match(m, name, value, why);
	*why = "unknown option";
	return -ENOENT;
}

/* Appends a word (printf-style) to buf, space-separated, keeping it terminated. */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 1 < len) {
		buf[used++] = ' ';
		buf[used] = '\0';
	}
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

void format_settings(char *buf, size_t len, const struct settings *s)
{
	unsigned int i;
	char v[96];

	buf[0] = '\0';
	format_rate(v, sizeof(v), &s->rate);
	append(buf, len, "rate %s", v);
	if (s->burst.value) {
		format_burst(v, sizeof(v), &s->burst);
		append(buf, len, "burst %s", v);
	}
	if (s->action != SLUICE_ACTION_DROP)
		append(buf, len, "action %s", action_name(s->action));
	if (s->mark_dscp)
		append(buf, len, "dscp %u", s->dscp);
	if (s->mark_ecn)
		append(buf, len, "ecn");
	if (s->ipv4_prefix != SLUICE_DEFAULT_IPV4_PREFIX)
		append(buf, len, "ipv4-prefix %u", s->ipv4_prefix);
	if (s->ipv6_prefix != SLUICE_DEFAULT_IPV6_PREFIX)
		append(buf, len, "ipv6-prefix %u", s->ipv6_prefix);
	if (s->new_sources.amount) {
		format_rate(v, sizeof(v), &s->new_sources);
		append(buf, len, "new-sources %s", v);
	}
	if (s->overflow.amount) {
		format_rate(v, sizeof(v), &s->overflow);
		append(buf, len, "overflow-rate %s", v);
	}
	if (s->initial.value) {
		format_burst(v, sizeof(v), &s->initial);
		append(buf, len, "initial-burst %s", v);
	}
	if (s->on_full_pass)
		append(buf, len, "on-full pass");
	for (i = 0; i < s->n_aggregates && i < SLUICE_MAX_AGGREGATES; i++) {
		format_aggregate(v, sizeof(v), &s->aggregates[i]);
		append(buf, len, "aggregate %s", v);
	}
}

void format_match(char *buf, size_t len, const struct match *m)
{
	buf[0] = '\0';
	if (m->proto)
		append(buf, len, "proto %s", proto_name(m->proto));
	if (m->dport_hi && m->dport_lo == m->dport_hi)
		append(buf, len, "dport %u", m->dport_lo);
	else if (m->dport_hi)
		append(buf, len, "dport %u-%u", m->dport_lo, m->dport_hi);
	if (m->syn)
		append(buf, len, "syn");
}

/* One line split into words, remembering each word's column (1-based). */
struct tokens {
	char *word[MAX_TOKENS];
	int col[MAX_TOKENS];
	int n;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits at blanks, up to a # comment. */
static int tokenize(char *line, struct tokens *t)
{
	char *p = line;

	t->n = 0;
	for (;;) {
		while (is_space(*p))
			p++;
		if (!*p || *p == '#')
			return 0;
		if (t->n == MAX_TOKENS)
			return -E2BIG;
		t->word[t->n] = p;
		t->col[t->n++] = (int)(p - line) + 1;
		while (*p && *p != '#' && !is_space(*p))
			p++;
		if (*p == '#') {
			*p = '\0';
			return 0;
		}
		if (*p)
			*p++ = '\0';
	}
}

struct parse_ctx {
	const char *path;
	int line;
	char *err;
	size_t errlen;
	bool have_default;
};

static int fail_at(struct parse_ctx *pc, int col, const char *fmt, ...)
{
	int n = snprintf(pc->err, pc->errlen, "%s:%d:%d: ", pc->path, pc->line, col);
	va_list ap;

	if (n > 0 && (size_t)n < pc->errlen) {
		va_start(ap, fmt);
		vsnprintf(pc->err + n, pc->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* OPTION [VALUE] pairs from word `first` on, into s (and m for rules). */
static int parse_options(struct parse_ctx *pc, const struct tokens *t, int first,
			 struct settings *s, struct match *m)
{
	const char *why, *value;
	bool have_rate = false;
	int i, err;

	for (i = first; i < t->n; i++) {
		const char *name = t->word[i];

		value = NULL;
		if (!option_is_flag(name)) {
			if (i + 1 >= t->n)
				return fail_at(pc, t->col[i], "expected a value after '%s'", name);
			value = t->word[++i];
		}
		err = option_apply(s, m, name, value, &why);
		if (err == -ENOENT)
			return fail_at(pc, t->col[i - (value ? 1 : 0)],
				       "unknown option '%s' (expected rate, burst, action, dscp, "
				       "ecn, ipv4-prefix, ipv6-prefix, new-sources, overflow-rate, "
				       "initial-burst, on-full, aggregate%s)",
				       name, m ? ", proto, dport, syn" : "");
		if (err)
			return fail_at(pc, t->col[i], "bad %s '%s': %s", name, value, why);
		have_rate |= !strcmp(name, "rate");
	}
	if (!have_rate)
		return fail_at(pc, t->n ? t->col[0] : 1, "expected 'rate RATE' in this statement");
	return 0;
}

static int parse_cidr_word(struct parse_ctx *pc, const struct tokens *t, int i, struct cidr *c)
{
	const char *why;
	bool host_bits;

	if (i >= t->n)
		return fail_at(pc, t->col[i - 1], "expected a CIDR after '%s'", t->word[i - 1]);
	if (parse_cidr(t->word[i], c, &host_bits, &why))
		return fail_at(pc, t->col[i], "bad CIDR '%s': %s", t->word[i], why);
	if (host_bits)
		fprintf(stderr, "%s:%d:%d: warning: '%s' has host bits set; using its network\n",
			pc->path, pc->line, t->col[i], t->word[i]);
	return 0;
}

static int parse_rule(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	struct rule r = { 0 };
	const char *why;
	int err;

	if (doc->n_rules == SLUICE_MAX_POLICIES - 1)
		return fail_at(pc, t->col[0], "too many rules (at most %d)",
			       SLUICE_MAX_POLICIES - 1);
	settings_default(&r.settings);
	err = parse_cidr_word(pc, t, 1, &r.match.cidr);
	if (!err)
		err = parse_options(pc, t, 2, &r.settings, &r.match);
	if (err)
		return err;
	if (doc_find_rule(doc, &r.match) >= 0)
		return fail_at(pc, t->col[1], "a rule for this CIDR and class already exists");
	if (policy_build(&(struct sluice_policy){ 0 }, &r.settings, &r.match, 1, &why))
		return fail_at(pc, t->col[0], "%s", why);
	doc->rules[doc->n_rules++] = r;
	return 0;
}

static int parse_default(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	const char *why;
	int err;

	if (pc->have_default)
		return fail_at(pc, t->col[0], "a second 'default' statement");
	settings_default(&doc->dflt);
	err = parse_options(pc, t, 1, &doc->dflt, NULL);
	if (err)
		return err;
	if (policy_build(&(struct sluice_policy){ 0 }, &doc->dflt, NULL, 0, &why))
		return fail_at(pc, t->col[0], "%s", why);
	pc->have_default = true;
	return 0;
}

static int parse_list_entry(struct parse_ctx *pc, const struct tokens *t, struct cidr_list *l)
{
	struct cidr c;
	int err;

	err = parse_cidr_word(pc, t, 1, &c);
	if (err)
		return err;
	if (t->n > 2)
		return fail_at(pc, t->col[2], "expected the end of the line after the CIDR");
	return cidr_list_add(l, &c) ? fail_at(pc, t->col[1], "out of memory") : 0;
}

static int parse_statement(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	const char *kw = t->word[0];

	if (!strcmp(kw, "default"))
		return parse_default(pc, t, doc);
	if (!strcmp(kw, "rule"))
		return parse_rule(pc, t, doc);
	if (!strcmp(kw, "allow"))
		return parse_list_entry(pc, t, &doc->allow);
	if (!strcmp(kw, "deny"))
		return parse_list_entry(pc, t, &doc->deny);
	return fail_at(pc, t->col[0],
		       "unknown statement '%s' (expected default, rule, allow or deny)", kw);
}

/* "-" is standard input. */
static const char *input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}

/*
 * One line, without its newline, into buf (LINE_MAX_CHARS + 1 bytes): 1 for
 * a line, 0 at the end, -E2BIG for a line too long, or -errno of the read.
 * NUL bytes are kept; *len says where the line ends.
 */
static int read_line(FILE *f, char *buf, size_t *len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (n == LINE_MAX_CHARS)
			return -E2BIG;
		buf[n++] = (char)c;
	}
	if (c == EOF && ferror(f))
		return errno ? -errno : -EIO;
	buf[n] = '\0';
	*len = n;
	return c != EOF || n;
}

static int fail_read(struct parse_ctx *pc, int err)
{
	snprintf(pc->err, pc->errlen, "%s: cannot read: %s", pc->path, strerror(-err));
	return -EIO;
}

/* Calls fn for each non-empty line; unreadable input, NUL bytes and lines too long are errors. */
static int for_each_line(FILE *f, struct parse_ctx *pc,
			 int (*fn)(struct parse_ctx *pc, const struct tokens *t, void *arg),
			 void *arg)
{
	char line[LINE_MAX_CHARS + 1], *nul;
	struct tokens t;
	size_t len = 0;
	int ret;

	errno = 0;
	while ((ret = read_line(f, line, &len)) > 0 || ret == -E2BIG) {
		pc->line++;
		/* A NUL byte is the first problem of its line, however long. */
		nul = memchr(line, '\0', ret > 0 ? len : LINE_MAX_CHARS);
		if (nul)
			return fail_at(pc, (int)(nul - line) + 1, "a NUL byte (expected text)");
		if (ret < 0)
			return fail_at(pc, LINE_MAX_CHARS + 1, "line longer than %d characters",
				       LINE_MAX_CHARS);
		if (tokenize(line, &t))
			return fail_at(pc, 1, "more than %d words on one line", MAX_TOKENS);
		if (!t.n)
			continue;
		ret = fn(pc, &t, arg);
		if (ret)
			return ret;
		errno = 0;
	}
	return ret ? fail_read(pc, ret) : 0;
}

static int statement_fn(struct parse_ctx *pc, const struct tokens *t, void *arg)
{
	return parse_statement(pc, t, arg);
}

static FILE *open_input(const char *path, char *err, size_t errlen)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;

	if (!f)
		snprintf(err, errlen, "%s: %s", input_name(path), strerror(errno));
	return f;
}

int conf_parse(const char *path, struct policy_doc *doc, char *err, size_t errlen)
{
	struct parse_ctx pc = { .path = input_name(path), .err = err, .errlen = errlen };
	const char *why;
	FILE *f;
	int ret;

	doc_init(doc);
	f = open_input(path, err, errlen);
	if (!f)
		return -ENOENT;
	ret = for_each_line(f, &pc, statement_fn, doc);
	if (f != stdin)
		fclose(f);
	if (!ret && !pc.have_default) {
		snprintf(err, errlen, "%s: missing a 'default rate RATE ...' statement", pc.path);
		ret = -EINVAL;
	}
	if (!ret && doc_validate(doc, &why)) {
		snprintf(err, errlen, "%s: %s", pc.path, why);
		ret = -EINVAL;
	}
	if (ret)
		doc_free(doc);
	return ret;
}

void conf_write(FILE *out, const struct policy_doc *doc)
{
	char opts[640], match[128], cidr[64];
	size_t i;
	int r;

	format_settings(opts, sizeof(opts), &doc->dflt);
	fprintf(out, "default %s\n", opts);
	for (r = 0; r < doc->n_rules; r++) {
		format_cidr(cidr, sizeof(cidr), &doc->rules[r].match.cidr);
		format_settings(opts, sizeof(opts), &doc->rules[r].settings);
		format_match(match, sizeof(match), &doc->rules[r].match);
		fprintf(out, "rule %s %s%s%s\n", cidr, opts, match[0] ? " " : "", match);
	}
	for (i = 0; i < doc->allow.count; i++) {
		format_cidr(cidr, sizeof(cidr), &doc->allow.items[i]);
		fprintf(out, "allow %s\n", cidr);
	}
	for (i = 0; i < doc->deny.count; i++) {
		format_cidr(cidr, sizeof(cidr), &doc->deny.items[i]);
		fprintf(out, "deny %s\n", cidr);
	}
}

static int cidr_line_fn(struct parse_ctx *pc, const struct tokens *t, void *arg)
{
	struct tokens one = *t;
	struct cidr c;
	int err;

	if (t->n > 1)
		return fail_at(pc, t->col[1], "expected one CIDR per line");
	/* Reuse the statement parser's CIDR handling at word 0. */
	one.word[1] = t->word[0];
	one.col[1] = t->col[0];
	one.n = 2;
	err = parse_cidr_word(pc, &one, 1, &c);
	if (err)
		return err;
	return cidr_list_add(arg, &c) ? fail_at(pc, t->col[0], "out of memory") : 0;
}

int cidr_file_parse(const char *path, struct cidr_list *list, char *err, size_t errlen)
{
	struct parse_ctx pc = { .path = input_name(path), .err = err, .errlen = errlen };
	FILE *f;
	int ret;

	f = open_input(path, err, errlen);
	if (!f)
		return -ENOENT;
	ret = for_each_line(f, &pc, cidr_line_fn, list);
	if (f != stdin)
		fclose(f);
	return ret;
}

int cidr_arg(const char *cmd, const char *s, struct cidr *c, const char **why)
{
	char norm[64];
	bool host_bits;
	int err;

	err = parse_cidr(s, c, &host_bits, why);
	if (!err && host_bits) {
		format_cidr(norm, sizeof(norm), c);
		fprintf(stderr, "sluice %s: warning: '%s' has host bits set; using %s\n", cmd, s,
			norm);
	}
	return err;
}

void rule_name(const struct policy_doc *doc, uint16_t policy, char *buf, size_t len)
{
	char cidr[64], match[128];
	int i = doc_rule_index(doc, policy);

	if (i == -1) {
		snprintf(buf, len, "default");
		return;
	}
	if (i == -2) {
		snprintf(buf, len, "replaced-%u", policy);
		return;
	}
	format_cidr(cidr, sizeof(cidr), &doc->rules[i].match.cidr);
	format_match(match, sizeof(match), &doc->rules[i].match);
	snprintf(buf, len, "%s%s%s", cidr, match[0] ? " " : "", match);
}
