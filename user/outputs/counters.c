// SPDX-License-Identifier: GPL-2.0
/* A sample of the counters as a table or as JSON, with rates against an earlier one. */
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "base/json.h"
#include "outputs/counters.h"
#include "outputs/report.h"

/* Rates of one counter pair between two samples dt_ns apart. */
struct pair_rate {
	double pps, bps;
};

static struct pair_rate pair_rate(const struct sluice_counter_pair *now,
				  const struct sluice_counter_pair *before, uint64_t dt_ns)
{
	struct pair_rate r;

	r.pps = per_second(now->packets, before->packets, dt_ns);
	r.bps = 8 * per_second(now->bytes, before->bytes, dt_ns);
	return r;
}

/* The columns of a counter pair; rates only when there is an earlier sample. */
const struct report_col counter_pair_cols[COUNTER_PAIR_COLS] = {
	[COUNTER_PACKETS] = { .key = "packets", .header = "PACKETS", .width = 16 },
	[COUNTER_BYTES] = { .key = "bytes", .header = "BYTES", .width = 18 },
	[COUNTER_PPS] = { .key = "pps", .header = "PPS", .width = 14, .decimals = 1 },
	[COUNTER_BPS] = { .key = "bps", .header = "BITS/S", .width = 16 },
};

/* The first column: at least 14 wide, and as wide as the widest rule name. */
#define FIRST_COL_MIN 14

/* text padded to width, into cell: cut if longer than it, never overflowed. */
static const char *padded(char *cell, size_t len, int width, const char *text)
{
	snprintf(cell, len, "%-*s", width, text);
	return cell;
}

static void pair_header(struct report *r, const char *first, int width, const char *second,
			bool rates)
{
	char cell[RULE_NAME_MAX + FIRST_COL_MIN];

	report_string(r, NULL, "%s", padded(cell, sizeof(cell), width, first));
	report_string(r, NULL, " %-14s", second);
	report_header(r, counter_pair_cols, rates ? COUNTER_PAIR_COLS : COUNTER_PPS);
	report_eol(r);
}

/* One pair: an object under key (JSON), the cells of a row (text). */
static void pair_report(struct report *r, const char *key, const struct sluice_counter_pair *now,
			const struct sluice_counter_pair *before, uint64_t dt)
{
	struct pair_rate pr = { 0, 0 };

	if (before)
		pr = pair_rate(now, before, dt);
	report_open(r, key);
	report_cell_u64(r, &counter_pair_cols[COUNTER_PACKETS], now->packets);
	report_cell_u64(r, &counter_pair_cols[COUNTER_BYTES], now->bytes);
	report_cell_rate(r, &counter_pair_cols[COUNTER_PPS], pr.pps, before);
	report_cell_rate(r, &counter_pair_cols[COUNTER_BPS], pr.bps, before);
	report_close(r);
	report_eol(r);
}

/* Every counter in JSON; the traffic ones in text (the table's come last). */
static void traffic_report(struct report *r, const struct sample *s, const struct sample *prev,
			   uint64_t dt)
{
	int i;

	pair_header(r, "TRAFFIC", FIRST_COL_MIN, "", prev);
	report_open(r, "counters");
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (!r->j && counter_info[i].kind != COUNTER_TRAFFIC)
			continue;
		report_string(r, NULL, "%-29s", counter_info[i].name);
		pair_report(r, counter_info[i].name, &s->sum.c[i], prev ? &prev->sum.c[i] : NULL,
			    dt);
	}
	report_close(r);
}

/*
 * Rule n's counters in the earlier sample, to take its rates against: the
 * rule of the same name in the same set of slots. A policy change writes
 * the other set afresh, every rule's counters from zero, and may add,
 * delete or move rules; a rule then counts from zero, never against the
 * counters of another rule that held its place.
 */
static const struct rule_counts *rule_before(const struct sample *s, const struct sample *prev,
					     int n)
{
	static const struct rule_counts zero;
	int k;

	if (!prev)
		return NULL;
	if (prev->policy_set != s->policy_set)
		return &zero;
	for (k = 0; k < prev->nrules; k++)
		if (!strcmp(prev->rules[k].name, s->rules[n].name))
			return &prev->rules[k];
	return &zero;
}

static void rules_report(struct report *r, const struct sample *s, const struct sample *prev,
			 uint64_t dt)
{
	char cell[RULE_NAME_MAX + FIRST_COL_MIN];
	int n, i, width = FIRST_COL_MIN;

	/* A rule named longer than the column widens it, so every row lines up. */
	for (n = 0; n < s->nrules; n++)
		if ((int)strlen(s->rules[n].name) > width)
			width = (int)strlen(s->rules[n].name);
	report_eol(r);
	pair_header(r, "RULE", width, "OUTCOME", prev);
	report_list_open(r, "rules");
	for (n = 0; n < s->nrules; n++) {
		const struct rule_counts *before = rule_before(s, prev, n);

		report_open(r, NULL);
		report_string(r, "rule", NULL, s->rules[n].name);
		report_open(r, "counters");
		for (i = 0; i < SLUICE_CNT_MAX; i++) {
			if (!counter_info[i].per_rule)
				continue;
			report_string(r, NULL, "%s",
				      padded(cell, sizeof(cell), width, s->rules[n].name));
			report_string(r, NULL, " %-14s", counter_info[i].name);
			pair_report(r, counter_info[i].name, &s->rules[n].c[i],
				    before ? &before->c[i] : NULL, dt);
		}
		report_close(r);
		report_close(r);
	}
	report_list_close(r);
}

static void table_report(struct report *r, const struct sample *s, const struct sample *prev,
			 uint64_t dt)
{
	char key[64];
	int i;

	report_string(r, NULL, "\n%s\n", "TABLE");
	report_open(r, "table");
	report_string(r, NULL, "%-29s", "sources");
	report_u64(r, "sources", " %16llu", s->sources);
	report_u64(r, "capacity", " of %llu buckets", s->capacity);
	report_u64(r, "max_sources", " (sized for --max-sources %llu)\n", s->max_sources);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (counter_info[i].kind != COUNTER_TABLE)
			continue;
		report_string(r, NULL, "%-29s", counter_info[i].name);
		report_u64(r, counter_info[i].name, " %16llu", s->sum.c[i].packets);
		snprintf(key, sizeof(key), "%s_per_s", counter_info[i].name);
		report_rate(r, key, "  %.1f/s",
			    prev ? per_second(s->sum.c[i].packets, prev->sum.c[i].packets, dt) : 0,
			    3, prev);
		report_eol(r);
	}
	report_close(r);
}

/* The one description of a sample: prev is NULL for a single reading (no rates). */
void counters_report(struct report *r, const char *ifname, const struct sample *s,
		     const struct sample *prev)
{
	uint64_t dt = prev ? s->time_ns - prev->time_ns : 0;

	report_open(r, NULL);
	report_ifname(r, "sluice on %s", ifname);
	report_u64(r, "time_ns", NULL, s->time_ns);
	report_rate(r, "interval_s", NULL, (double)dt / NSEC_PER_SEC, 6, prev);
	if (prev)
		report_rate(r, NULL, ": rates over the last %.3f s", (double)dt / NSEC_PER_SEC, 0,
			    true);
	report_eol(r);
	traffic_report(r, s, prev, dt);
	rules_report(r, s, prev, dt);
	table_report(r, s, prev, dt);
	report_close(r);
}

int counters_json(const char *ifname, const struct sample *s, const struct sample *prev)
{
	struct report r;
	struct json j;

	report_start(&r, &j, true);
	counters_report(&r, ifname, s, prev);
	return report_end(&r);
}

void counters_table(const char *ifname, const struct sample *s, const struct sample *prev)
{
	struct report r;
	struct json j;

	report_start(&r, &j, false);
	counters_report(&r, ifname, s, prev);
}
