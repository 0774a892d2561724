// SPDX-License-Identifier: GPL-2.0
/* The policy language: options, statements, config files and CIDR lists. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/utf8.h"
#include "text/conf.h"

#define LINE_MAX_CHARS 4095 /* the longest line, not counting its newline */
#define MAX_TOKENS     64

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
	bool have_attach;
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

/*
 * "rate, burst, ...": the options a statement takes, for messages. len
 * holds them all (a rule's are about 300 characters); were it short, the
 * list would end at the last whole name, never in the middle of one.
 */
static void statement_options(unsigned int stmt, char *buf, size_t len)
{
	size_t used = 0;
	int i, n;

	buf[0] = '\0';
	for (i = 0; i < OPT_MAX; i++) {
		if (!option_takes(-1, stmt, i))
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
			     option_table[i].name);
		if (n < 0 || (size_t)n >= len - used) {
			buf[used] = '\0';
			return;
		}
		used += (size_t)n;
	}
}

/* OPTION [VALUE] pairs from word `first` on, into a (options of statement stmt). */
static int parse_options(struct parse_ctx *pc, const struct tokens *t, int first, unsigned int stmt,
			 struct cli_args *a)
{
	const char *why, *value;
	char names[512];
	int i, id, err;

	for (i = first; i < t->n; i++) {
		const char *name = t->word[i];
		int at = i;

		id = option_find(name);
		if (id < 0 || !option_takes(-1, stmt, id)) {
			statement_options(stmt, names, sizeof(names));
			return fail_at(pc, t->col[at], "unknown option '%s' (expected %s)", name,
				       names);
		}
		value = NULL;
		if (option_table[id].metavar) {
			if (i + 1 >= t->n)
				return fail_at(pc, t->col[i], "expected a value after '%s'", name);
			value = t->word[++i];
		}
		err = option_apply(a, id, value, &why);
		if (err < 0)
			return fail_at(pc, t->col[i], "bad %s '%s': %s", name, value, why);
		if (err == OPTION_WARNED)
			warning_line("%s:%d:%d: warning: %s '%s' %s", pc->path, pc->line, t->col[i],
				     name, value, why);
	}
	if (stmt != STMT_ATTACH && !a->given[OPT_RATE])
		return fail_at(pc, t->n ? t->col[0] : 1, "expected 'rate RATE' in this statement");
	return 0;
}

/* The one warning for a CIDR with host bits, at `where` ("sluice CMD", FILE:LINE:COL). */
static void warn_host_bits(const char *where, const char *given, const struct cidr *c)
{
	char norm[64];

	format_cidr(norm, sizeof(norm), c);
	warning_line("%s: warning: '%s' has host bits set; using %s", where, given, norm);
}

static int parse_cidr_word(struct parse_ctx *pc, const struct tokens *t, int i, struct cidr *c)
{
	const char *why;
	char where[PATH_MAX + 32];
	bool host_bits;

	if (i >= t->n)
		return fail_at(pc, t->col[i - 1], "expected a CIDR after '%s'", t->word[i - 1]);
	if (parse_cidr(t->word[i], c, &host_bits, &why))
		return fail_at(pc, t->col[i], "bad CIDR '%s': %s", t->word[i], why);
	if (host_bits) {
		snprintf(where, sizeof(where), "%s:%d:%d", pc->path, pc->line, t->col[i]);
		warn_host_bits(where, t->word[i], c);
	}
	return 0;
}

static int parse_rule(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	struct cli_args a;
	const char *why;
	int err;

	if (doc->n_rules == SLUICE_MAX_POLICIES - 1)
		return fail_at(pc, t->col[0], "too many rules (at most %d)",
			       SLUICE_MAX_POLICIES - 1);
	cli_args_init(&a, -1);
	err = parse_cidr_word(pc, t, 1, &a.match.cidr);
	if (!err)
		err = parse_options(pc, t, 2, STMT_RULE, &a);
	if (err)
		return err;
	if (doc_find_rule(doc, &a.match) >= 0)
		return fail_at(pc, t->col[1], "a rule for this CIDR and class already exists");
	if (doc_add_rule(doc, &a.settings, &a.match, &why))
		return fail_at(pc, t->col[0], "%s", why);
	return 0;
}

static int parse_default(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	struct cli_args a;
	const char *why;
	int err;

	if (pc->have_default)
		return fail_at(pc, t->col[0], "a second 'default' statement");
	cli_args_init(&a, -1);
	err = parse_options(pc, t, 1, STMT_DEFAULT, &a);
	if (err)
		return err;
	if (doc_set_default(doc, &a.settings, &why))
		return fail_at(pc, t->col[0], "%s", why);
	pc->have_default = true;
	return 0;
}

/* What attach fixes (mode, max-sources), through the same option table as the command line. */
static int parse_attach(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	char names[128];
	struct cli_args a;
	int err;

	if (pc->have_attach)
		return fail_at(pc, t->col[0], "a second 'attach' statement");
	if (t->n < 2) {
		statement_options(STMT_ATTACH, names, sizeof(names));
		return fail_at(pc, t->col[0], "expected an option after 'attach' (%s)", names);
	}
	cli_args_init(&a, -1);
	err = parse_options(pc, t, 1, STMT_ATTACH, &a);
	if (err)
		return err;
	doc->attach = a.attach;
	pc->have_attach = true;
	return 0;
}

/*
 * A wall-clock moment as the CLOCK_MONOTONIC time the datapath compares,
 * and back. A deny entry's expiry is monotonic (a wall clock set back must
 * not stretch a ban), but the file says when in UTC, so a shown policy
 * still means the same moment when applied later or after a reboot.
 */
static uint64_t monotonic_of(uint64_t unix_ns)
{
	return unix_ns - realtime_ns() + monotonic_ns();
}

static uint64_t unix_of(uint64_t mono_ns)
{
	/* Rounded to the nearest second: the clocks' drift between show and apply is far less. */
	return mono_ns - monotonic_ns() + realtime_ns() + NSEC_PER_SEC / 2;
}

/*
 * "until TIME" after a deny entry's CIDR: 0 for none. A moment already
 * past is *expired: shown before it passed, the entry no longer denies.
 */
static int parse_until(struct parse_ctx *pc, const struct tokens *t, bool deny, uint64_t *expires,
		       bool *expired)
{
	uint64_t unix_ns, now_ns;
	char latest[32];
	const char *why;

	*expires = 0;
	*expired = false;
	if (t->n == 2)
		return 0;
	if (strcmp(t->word[2], "until"))
		return fail_at(pc, t->col[2],
			       deny ? "expected 'until TIME' or the end of the line"
				    : "expected the end of the line after the CIDR");
	if (!deny)
		return fail_at(pc, t->col[2],
			       "allow entries never expire ('until' goes with deny)");
	if (t->n == 3)
		return fail_at(pc, t->col[2], "expected a time after 'until'");
	if (parse_utc(t->word[3], &unix_ns, &why))
		return fail_at(pc, t->col[3], "bad time '%s': %s", t->word[3], why);
	if (t->n > 4)
		return fail_at(pc, t->col[4], "expected the end of the line after the time");
	now_ns = realtime_ns();
	*expired = unix_ns <= now_ns;
	if (*expired)
		return 0;
	/*
	 * The file says when to the second and show rounds an end to the
	 * nearest one: checked in whole seconds, a ban made as long as allowed
	 * is shown and applied back, never refused for the half second.
	 */
	if (ban_length_check((unix_ns - now_ns) / NSEC_PER_SEC * NSEC_PER_SEC, &why)) {
		format_utc(latest, sizeof(latest), now_ns + BAN_MAX_NS);
		return fail_at(pc, t->col[3], "bad time '%s': %s from now (%s at the latest)",
			       t->word[3], why, latest);
	}
	*expires = monotonic_of(unix_ns);
	return 0;
}

static int parse_list_entry(struct parse_ctx *pc, const struct tokens *t, bool deny,
			    struct cidr_list *l)
{
	uint64_t expires;
	struct cidr c;
	bool expired;
	int err;

	err = parse_cidr_word(pc, t, 1, &c);
	if (!err)
		err = parse_until(pc, t, deny, &expires, &expired);
	if (err || expired)
		return err;
	return cidr_list_add_until(l, &c, expires) ? fail_at(pc, t->col[1], "out of memory") : 0;
}

static int parse_statement(struct parse_ctx *pc, const struct tokens *t, struct policy_doc *doc)
{
	const char *kw = t->word[0];

	if (!strcmp(kw, "default"))
		return parse_default(pc, t, doc);
	if (!strcmp(kw, "rule"))
		return parse_rule(pc, t, doc);
	if (!strcmp(kw, "allow"))
		return parse_list_entry(pc, t, false, &doc->allow);
	if (!strcmp(kw, "deny"))
		return parse_list_entry(pc, t, true, &doc->deny);
	if (!strcmp(kw, "attach"))
		return parse_attach(pc, t, doc);
	return fail_at(pc, t->col[0],
		       "unknown statement '%s' (expected attach, default, rule, allow or deny)",
		       kw);
}

/* "-" is standard input. */
static const char *input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}

/* Whether the next character ends the line (a newline, or the end of the input). */
static bool at_line_end(FILE *f)
{
	int c = getc(f);

	if (c == EOF)
		return true;
	ungetc(c, f);
	return c == '\n';
}

/*
 * One line, without its newline, into buf (LINE_MAX_CHARS + 1 bytes): 1 for
 * a line, 0 at the end, -E2BIG for a line too long, or -errno of the read.
 * NUL bytes are kept; *len says where the line ends. A CRLF line's CR is
 * part of its newline: one past the longest line is dropped, not refused.
 */
static int read_line(FILE *f, char *buf, size_t *len)
{
	size_t n = 0;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (n < LINE_MAX_CHARS)
			buf[n++] = (char)c;
		else if (c != '\r' || !at_line_end(f))
			return -E2BIG;
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

/*
 * The first line without the UTF-8 byte order mark some editors write
 * (columns count from after it); 1, or an error for UTF-16's, whose text
 * would otherwise be refused for its NUL bytes.
 */
static int skip_bom(struct parse_ctx *pc, char *line, size_t *len)
{
	if (*len >= 2 && (!memcmp(line, "\xff\xfe", 2) || !memcmp(line, "\xfe\xff", 2)))
		return fail_at(pc, 1, "a UTF-16 byte order mark (expected UTF-8 text)");
	if (*len >= 3 && !memcmp(line, UTF8_BOM, 3)) {
		*len -= 3;
		memmove(line, line + 3, *len + 1);
	}
	return 1;
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
		if (pc->line == 1 && ret > 0 && (ret = skip_bom(pc, line, &len)) < 0)
			return ret;
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
	FILE *f;

	/* fopen("") says ENOENT, which quoted as ": No such file..." names nothing. */
	if (!*path) {
		snprintf(err, errlen,
			 "-f '': an empty file name (expected FILE, or - for standard input)");
		return NULL;
	}
	f = strcmp(path, "-") ? fopen(path, "r") : stdin;
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

/* "deny CIDR", with "until TIME" (UTC) when the entry expires. */
static void deny_write(FILE *out, const struct list_entry *e)
{
	char cidr[64], until[32];

	format_cidr(cidr, sizeof(cidr), &e->cidr);
	if (!e->expires_ns) {
		fprintf(out, "deny %s\n", cidr);
		return;
	}
	format_utc(until, sizeof(until), unix_of(e->expires_ns));
	fprintf(out, "deny %s until %s\n", cidr, until);
}

void conf_write(FILE *out, const struct policy_doc *doc)
{
	char opts[640], match[MATCH_TEXT_MAX], cidr[64];
	size_t i;
	int r;

	format_attach_settings(opts, sizeof(opts), &doc->attach);
	if (opts[0])
		fprintf(out, "attach %s\n", opts);
	format_settings(opts, sizeof(opts), &doc->dflt);
	fprintf(out, "default %s\n", opts);
	for (r = 0; r < doc->n_rules; r++) {
		format_cidr(cidr, sizeof(cidr), &doc->rules[r].match.cidr);
		format_settings(opts, sizeof(opts), &doc->rules[r].settings);
		format_match(match, sizeof(match), &doc->rules[r].match);
		fprintf(out, "rule %s %s%s%s\n", cidr, opts, match[0] ? " " : "", match);
	}
	for (i = 0; i < doc->allow.count; i++) {
		format_cidr(cidr, sizeof(cidr), &doc->allow.items[i].cidr);
		fprintf(out, "allow %s\n", cidr);
	}
	for (i = 0; i < doc->deny.count; i++)
		deny_write(out, &doc->deny.items[i]);
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
	char where[64];
	bool host_bits;
	int err;

	err = parse_cidr(s, c, &host_bits, why);
	if (!err && host_bits) {
		snprintf(where, sizeof(where), "sluice %s", cmd);
		warn_host_bits(where, s, c);
	}
	return err;
}

void rule_name(const struct policy_doc *doc, uint16_t policy, char *buf, size_t len)
{
	char cidr[64], match[MATCH_TEXT_MAX];
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
