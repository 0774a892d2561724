// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include "maps/policy_maps.h"
#include "outputs/audit.h"
#include "pins/state.h"
#include "text/options.h"
#include "values/words.h"

int audit_snapshot_take(const char *ifname, struct audit_snapshot *s)
{
	unsigned int ifindex;
	struct state st;
	int err;

	memset(s, 0, sizeof(*s));
	s->group = STATE_NO_GROUP;
	err = state_exists(ifname);
	if (err <= 0)
		return err;
	s->present = true;
	err = state_open(ifname, &st);
	if (err)
		return err == -ESTALE ? 0 : err;
	s->prog_id = link_prog_id(st.link_fd, &ifindex);
	s->group = state_group(&st);
	s->doc = malloc(sizeof(*s->doc));
	err = s->doc ? policy_load_cfg(&st.maps, s->doc, false, &s->cfg) : -ENOMEM;
	state_close(&st);
	if (err) {
		/* Another layout (-EPROTO), say: present, but nothing to compare. */
		audit_snapshot_free(s);
		s->present = true;
		return err;
	}
	s->read = true;
	return 0;
}

void audit_snapshot_free(struct audit_snapshot *s)
{
	if (s->doc) {
		doc_free(s->doc);
		free(s->doc);
	}
	s->doc = NULL;
	s->read = false;
}

bool audit_changed(const struct audit_snapshot *before, const struct audit_snapshot *after)
{
	if (before->present != after->present || before->prog_id != after->prog_id ||
	    before->group != after->group)
		return true;
	if (before->read != after->read)
		return before->present;
	return before->read && before->cfg.generation != after->cfg.generation;
}

void audit_who_read(struct audit_who *w)
{
	unsigned long v;
	FILE *f;

	w->uid = getuid();
	w->euid = geteuid();
	w->sudo_user = getenv("SUDO_USER");
	w->login_uid = AUDIT_LOGIN_UID_UNSET;
	/* Set at login by pam_loginuid, kept through sudo and su: who logged in. */
	f = fopen("/proc/self/loginuid", "re");
	if (!f)
		return;
	if (fscanf(f, "%lu", &v) == 1)
		w->login_uid = v;
	fclose(f);
}

/* A line being written: it never grows past len, whatever is appended. */
struct line {
	char *buf;
	size_t len, used;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->used + 1 >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->used += (size_t)n < l->len - l->used ? (size_t)n : l->len - l->used - 1;
}

static bool bare(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("@%+=:,./_-", c);
}

/*
 * s as the log shows it, at most max bytes of it: bare when made of safe
 * characters only, else in single quotes, with a quote, a backslash and
 * every byte outside printable ASCII escaped (\', \\, \xNN). Nothing of s
 * reaches the log as a control character, a newline or a byte over 0x7e.
 */
static void add_quoted(struct line *l, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, n = strlen(s);
	bool quote = !n;

	for (i = 0; i < n && !quote; i++)
		quote = !bare(p[i]);
	if (!quote) {
		add(l, "%.*s%s", (int)(n > max ? max : n), s, n > max ? "..." : "");
		return;
	}
	add(l, "'");
	for (i = 0; i < n && i < max; i++) {
		if (p[i] == '\'' || p[i] == '\\')
			add(l, "\\%c", p[i]);
		else if (p[i] < 0x20 || p[i] > 0x7e)
			add(l, "\\x%02x", p[i]);
		else
			add(l, "%c", p[i]);
	}
	add(l, "'%s", n > max ? "..." : "");
}

/* A long argument (a CIDR file's path, say) is cut here. */
#define AUDIT_ARG_MAX 160

/* The command as typed, within AUDIT_ARGS_MAX: then how many arguments were left out. */
static void add_command(struct line *l, int argc, char **argv)
{
	char part[4 * AUDIT_ARG_MAX + 16];
	struct line one;
	size_t start = l->used;
	int i;

	add(l, "sluice");
	for (i = 1; i < argc; i++) {
		one = (struct line){ part, sizeof(part), 0 };
		add_quoted(&one, argv[i], AUDIT_ARG_MAX);
		if (l->used - start + 1 + one.used > AUDIT_ARGS_MAX) {
			add(l, " ... (%d more arguments)", argc - i);
			return;
		}
		add(l, " %s", part);
	}
}

static void add_who(struct line *l, const struct audit_who *w)
{
	add(l, "uid %lu", w->uid);
	if (w->euid != w->uid)
		add(l, ", euid %lu", w->euid);
	if (w->sudo_user) {
		add(l, ", SUDO_USER ");
		add_quoted(l, w->sudo_user, 64);
	}
	if (w->login_uid != AUDIT_LOGIN_UID_UNSET)
		add(l, ", login uid %lu", w->login_uid);
}

/* Items of the change, separated by ", ". */
struct items {
	struct line *l;
	int n;
};

static void item(struct items *it, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void item(struct items *it, const char *fmt, ...)
{
	struct line *l = it->l;
	va_list ap;
	int n;

	add(l, "%s", it->n++ ? ", " : "");
	if (l->used + 1 >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->used += (size_t)n < l->len - l->used ? (size_t)n : l->len - l->used - 1;
}

/* One limiter option's value as show spells it; "default" when unset, a flag "on" or "off". */
static void option_value(const struct option_def *o, const struct settings *s, char *buf,
			 size_t len)
{
	bool set = format_setting(o, s, buf, len);

	if (!o->metavar)
		snprintf(buf, len, "%s", set ? "on" : "off");
	else if (!set)
		snprintf(buf, len, "default");
}

/* Each default-policy option that changed: "rate 100/s -> 200/s". */
static void settings_diff(struct items *it, const struct settings *a, const struct settings *b)
{
	char va[640], vb[640];
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->scope != SCOPE_LIMITER)
			continue;
		option_value(o, a, va, sizeof(va));
		option_value(o, b, vb, sizeof(vb));
		if (strcmp(va, vb))
			item(it, "%s %s -> %s", o->name, va, vb);
	}
}

static bool rule_in(const struct policy_doc *doc, const struct rule *r)
{
	int i = doc_find_rule(doc, &r->match);

	return i >= 0 && settings_equal(&doc->rules[i].settings, &r->settings);
}

/* "rules 2 -> 3 (+1)": by count, and how many rules came and went. */
static void rules_diff(struct items *it, const struct policy_doc *a, const struct policy_doc *b)
{
	int i, gone = 0, came = 0;

	for (i = 0; i < a->n_rules; i++)
		gone += !rule_in(b, &a->rules[i]);
	for (i = 0; i < b->n_rules; i++)
		came += !rule_in(a, &b->rules[i]);
	if (!gone && !came)
		return;
	item(it, "rules %d -> %d (", a->n_rules, b->n_rules);
	if (came)
		add(it->l, "+%d%s", came, gone ? " " : "");
	if (gone)
		add(it->l, "-%d", gone);
	add(it->l, ")");
}

static void count_diff(struct items *it, const char *name, __u32 a, __u32 b)
{
	if (a != b)
		item(it, "%s %u -> %u entries (%+lld)", name, a, b, (long long)b - (long long)a);
}

/* "group NAME", or "group none": who may read the pins besides root. */
static void group_name(char *buf, size_t len, unsigned int gid)
{
	if (gid == STATE_NO_GROUP)
		snprintf(buf, len, "none");
	else
		format_group(buf, len, gid);
}

/* What the state looks like, for attach: "program 7, rate 100/s, rules 0, ...". */
static void summary(struct items *it, const struct audit_snapshot *s)
{
	char opts[640], group[40];

	item(it, "program %u", s->prog_id);
	if (s->group != STATE_NO_GROUP) {
		group_name(group, sizeof(group), s->group);
		item(it, "group %s", group);
	}
	if (!s->read)
		return;
	format_settings(opts, sizeof(opts), &s->doc->dflt);
	item(it, "%s", opts);
	item(it, "rules %d", s->doc->n_rules);
	item(it, "allow %u entries", s->cfg.allow_count);
	item(it, "deny %u entries", s->cfg.deny_count);
}

static void add_generation(struct line *l, const struct audit_snapshot *s)
{
	if (s->read)
		add(l, "%llu", (unsigned long long)s->cfg.generation);
	else
		add(l, "%s", s->present ? "unknown" : "none");
}

static void add_changes(struct line *l, const struct audit_event *e)
{
	const struct audit_snapshot *a = e->before, *b = e->after;
	struct items it = { l, 0 };
	char timeout[32], ga[40], gb[40];

	if (!a->present) {
		item(&it, "attached");
		summary(&it, b);
	} else if (!b->present) {
		item(&it, "detached (was program %u)", a->prog_id);
	} else {
		if (a->prog_id != b->prog_id)
			item(&it, "program %u -> %u", a->prog_id, b->prog_id);
		if (a->group != b->group) {
			group_name(ga, sizeof(ga), a->group);
			group_name(gb, sizeof(gb), b->group);
			item(&it, "group %s -> %s", ga, gb);
		}
		if (a->read && b->read) {
			settings_diff(&it, &a->doc->dflt, &b->doc->dflt);
			rules_diff(&it, a->doc, b->doc);
			count_diff(&it, "allow", a->cfg.allow_count, b->cfg.allow_count);
			count_diff(&it, "deny", a->cfg.deny_count, b->cfg.deny_count);
		}
		if (e->timeout_ns) {
			format_duration(timeout, sizeof(timeout), e->timeout_ns);
			item(&it, "timeout %s", timeout);
		}
		if (!it.n)
			item(&it, "republished, no value changed");
	}
	add(l, "; generation ");
	add_generation(l, a);
	add(l, " -> ");
	add_generation(l, b);
}

void audit_format(char *buf, size_t len, const struct audit_event *e)
{
	struct line l = { buf, len < AUDIT_LINE_MAX ? len : AUDIT_LINE_MAX, 0 };

	buf[0] = '\0';
	add_quoted(&l, e->ifname, 64);
	add(&l, ": %s%s%s by ", e->command, e->verb ? " " : "", e->verb ? e->verb : "");
	add_who(&l, &e->who);
	add(&l, ": ");
	add_changes(&l, e);
	if (e->exit_status)
		add(&l, "; exit status %d", e->exit_status);
	add(&l, "; command: ");
	add_command(&l, e->argc, e->argv);
}

void audit_log(const char *line)
{
	openlog("sluice", LOG_PID, LOG_AUTHPRIV);
	syslog(LOG_NOTICE, "%s", line);
	closelog();
}
