// SPDX-License-Identifier: GPL-2.0
/*
 * Every table report's columns against both of its forms: each column's
 * header stands in the text header above its cells, and each cell's JSON
 * key is its column's, so the text and the JSON cannot drift apart.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "harness.h"
#include "base/json.h"
#include "commands/commands.h"
#include "outputs/counters.h"
#include "outputs/report.h"
#include "unit.h"

struct table {
	const char *name;
	const struct report_col *cols;
	int n;
};

/* What f holds, from its start, as a string (the caller frees it). */
static char *file_text(FILE *f)
{
	long len;
	char *s;

	fflush(f);
	len = ftell(f);
	s = calloc(1, (size_t)len + 1);
	rewind(f);
	if (s && fread(s, 1, (size_t)len, f) != (size_t)len)
		s[0] = '\0';
	return s;
}

/* A row with one cell per column, each "v". */
static void sample_row(struct report *r, const struct table *t)
{
	int i;

	report_open(r, NULL);
	for (i = 0; i < t->n; i++)
		if (t->cols[i].key)
			report_cell_string(r, &t->cols[i], "v");
		else
			report_cell_text(r, &t->cols[i], "v");
	report_close(r);
	report_eol(r);
}

/* Each header starts where its cells do (left-aligned) or ends where they do. */
static int misplaced_column(const struct table *t, const char *head, const char *row)
{
	size_t at = 0, hw, cw;
	int i;

	for (i = 0; i < t->n; i++) {
		const struct report_col *c = &t->cols[i];
		const char *cell = "v";
		size_t w = (size_t)abs(c->width);

		hw = strlen(c->header) > w ? strlen(c->header) : w;
		cw = strlen(cell) > w ? strlen(cell) : w;
		if (hw != cw && i < t->n - 1)
			return i; /* a column must be as wide as its header */
		if (c->width < 0 && (strncmp(head + at, c->header, strlen(c->header)) ||
				     strncmp(row + at, cell, strlen(cell))))
			return i;
		if (c->width >= 0 &&
		    (strncmp(head + at + hw - strlen(c->header), c->header, strlen(c->header)) ||
		     strncmp(row + at + cw - strlen(cell), cell, strlen(cell))))
			return i;
		at += hw + 1;
	}
	return -1;
}

/* Every keyed column's key once in the JSON row, and no key that is not a column's. */
static int missing_key(const struct table *t, const char *json)
{
	char quoted[64];
	int i, keys = 0;
	const char *p;

	for (i = 0; i < t->n; i++) {
		if (!t->cols[i].key)
			continue;
		keys++;
		snprintf(quoted, sizeof(quoted), "\"%s\":", t->cols[i].key);
		p = strstr(json, quoted);
		if (!p || strstr(p + 1, quoted))
			return i;
	}
	for (p = json, i = 0; (p = strstr(p, "\":")); p++)
		i++;
	return i == keys ? -1 : t->n;
}

static void check_table(const struct table *t)
{
	FILE *text = tmpfile(), *jf = tmpfile();
	char *out, *row, *js;
	struct report r;
	struct json j;
	int bad;

	report_text(&r, text);
	report_header(&r, t->cols, t->n);
	report_eol(&r);
	sample_row(&r, t);
	out = file_text(text);
	row = out ? strchr(out, '\n') : NULL;
	bad = row ? misplaced_column(t, out, row + 1) : 0;
	check(bad < 0, t->name, "text: column %d is not under its header", bad);
	json_init(&j, jf);
	report_json(&r, &j);
	sample_row(&r, t);
	json_finish(&j);
	js = file_text(jf);
	bad = js ? missing_key(t, js) : 0;
	check(bad < 0, t->name, "JSON: column %d's key is missing, repeated or extra", bad);
	free(out);
	free(js);
	fclose(text);
	fclose(jf);
}

struct counters_call {
	bool json;
	const struct sample *now, *prev;
};

static void call_counters(void *arg)
{
	const struct counters_call *c = arg;

	if (c->json)
		counters_json("eth0", c->now, c->prev);
	else
		counters_table("eth0", c->now, c->prev);
}

/* counters' own output: the pair columns head its text tables and key each JSON pair. */
static void check_counters(void)
{
	struct rule_counts rules[1] = { { .name = "default" } };
	struct sample now = { .time_ns = 2000000000, .rules = rules, .nrules = 1 };
	struct sample prev = { .time_ns = 1000000000, .rules = rules, .nrules = 1 };
	char buf[65536], quoted[64];
	int i, bad = -1;

	struct counters_call call = { false, &now, &prev };

	capture_stdout(call_counters, &call, buf, sizeof(buf));
	for (i = 0; i < COUNTER_PAIR_COLS; i++)
		if (!strstr(buf, counter_pair_cols[i].header))
			bad = i;
	check(bad < 0, "stats text: every pair column has its header", "column %d", bad);
	call.json = true;
	capture_stdout(call_counters, &call, buf, sizeof(buf));
	for (i = 0; i < COUNTER_PAIR_COLS; i++) {
		snprintf(quoted, sizeof(quoted), "\"%s\":", counter_pair_cols[i].key);
		if (!strstr(buf, quoted))
			bad = i;
	}
	check(bad < 0, "stats JSON: every pair column has its key", "column %d", bad);
}

/*
 * stats' rule table with a rule named wider than its column (as the
 * README's SSH rule is): every line of it, the header's too, as long as
 * the others, so the columns line up.
 */
static void check_counters_wide_rule(void)
{
	struct rule_counts rules[2] = { { .name = "default" },
					{ .name = "0.0.0.0/0 proto tcp dport 22 syn" } };
	struct sample now = { .time_ns = 2000000000, .rules = rules, .nrules = 2 };
	struct counters_call call = { false, &now, NULL };
	char buf[65536], *line, *end;
	size_t len = 0;
	bool same = true;
	int lines = 0;

	capture_stdout(call_counters, &call, buf, sizeof(buf));
	line = strstr(buf, "\nRULE");
	for (line = line ? line + 1 : NULL; line && *line != '\n'; line = end + 1) {
		end = strchr(line, '\n');
		if (!end)
			break;
		if (lines++ && (size_t)(end - line) != len)
			same = false;
		len = (size_t)(end - line);
	}
	check(same && lines == 9, "stats text: a rule name wider than its column",
	      "the rule table's %d lines do not line up:\n%s", lines, buf);
}

/*
 * --watch across a policy change: the new set of slots counts every rule
 * from zero, and a rule added before another moves it. Each rule's rate is
 * its own, never taken against the rule that held its place before.
 */
static void check_counters_policy_change(void)
{
	struct rule_counts before[2] = { { .name = "default" }, { .name = "10.7.0.0/16" } };
	struct rule_counts after[3] = { { .name = "default" },
					{ .name = "10.6.0.0/16" },
					{ .name = "10.7.0.0/16" } };
	struct sample prev = { .time_ns = 1000000000, .rules = before, .nrules = 2 };
	struct sample now = { .time_ns = 2000000000, .rules = after, .nrules = 3, .policy_set = 1 };
	struct counters_call call = { true, &now, &prev };
	char buf[65536], *rule6, *rule7, *passed6;

	before[1].c[SLUICE_CNT_PASSED].packets = 300;
	after[2].c[SLUICE_CNT_PASSED].packets = 100;
	capture_stdout(call_counters, &call, buf, sizeof(buf));
	rule6 = strstr(buf, "\"rule\":\"10.6.0.0/16\"");
	rule7 = strstr(buf, "\"rule\":\"10.7.0.0/16\"");
	passed6 = rule6 ? strstr(rule6, "\"passed\":{\"packets\":0,\"bytes\":0,\"pps\":0.000,")
			: NULL;
	check(rule6 && rule7 && passed6 && passed6 < rule7 &&
		      strstr(rule7, "\"passed\":{\"packets\":100,\"bytes\":0,\"pps\":100.000,"),
	      "stats --watch: after a policy change each rule's rate is its own, from zero", "%s",
	      buf);
	/* The same set of slots: a list change leaves the rules' counters running. */
	now.policy_set = 0;
	now.rules = before;
	now.nrules = 2;
	prev.rules = after;
	prev.nrules = 3;
	before[1].c[SLUICE_CNT_PASSED].packets = 150;
	capture_stdout(call_counters, &call, buf, sizeof(buf));
	rule7 = strstr(buf, "\"rule\":\"10.7.0.0/16\"");
	check(rule7 && strstr(rule7, "\"passed\":{\"packets\":150,\"bytes\":0,\"pps\":50.000,"),
	      "stats --watch: in the same set, a rule's rate is taken against its own counters",
	      "%s", buf);
}

/* top's row with its second cell `extra` characters wider than its column. */
static void overrun_row(struct report *r, int extra)
{
	char wide[64];
	int i, w = abs(top_cols[1].width) + extra;

	memset(wide, 'r', sizeof(wide));
	wide[w < (int)sizeof(wide) ? w : (int)sizeof(wide) - 1] = '\0';
	report_open(r, NULL);
	for (i = 0; i < top_ncols; i++)
		report_cell_text(r, &top_cols[i], i == 1 ? wide : "v");
	report_close(r);
	report_eol(r);
}

/*
 * A cell wider than its column (a long rule name in top) takes the next
 * cell's padding: the line is as long as one whose cells fit, and from the
 * third column's end on, the same.
 */
static void check_overrun(void)
{
	FILE *f = tmpfile();
	size_t at = 0, len;
	struct report r;
	char *out, *fit, *over;
	int i;

	report_text(&r, f);
	overrun_row(&r, 0);
	overrun_row(&r, 5);
	out = file_text(f);
	fit = out;
	over = out ? strchr(out, '\n') : NULL;
	for (i = 0; i < 3; i++)
		at += (size_t)abs(top_cols[i].width) + 1;
	len = over ? (size_t)(over - fit) : 0;
	check(over && strlen(over + 1) == len + 1 && len > at &&
		      !strncmp(fit + at, over + 1 + at, len - at),
	      "top: a rule name 5 characters too wide", "the columns after it do not line up:\n%s",
	      out ? out : "");
	free(out);
	fclose(f);
}

void suite_report(void)
{
	const struct table tables[] = {
		{ "stats: a counter pair's columns", counter_pair_cols, COUNTER_PAIR_COLS },
		{ "top: a source's columns", top_cols, top_ncols },
		{ "status: an interface's columns", status_cols, status_ncols },
	};
	size_t i;

	for (i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		check_table(&tables[i]);
	check_counters();
	check_counters_wide_rule();
	check_counters_policy_change();
	check_overrun();
}
