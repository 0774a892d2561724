// SPDX-License-Identifier: GPL-2.0
/*
 * The busiest sources (reads/busiest.c) as top shows them, as a table or
 * JSON: their rule, packets passed and over the limit, rate, what their
 * slot holds, and whether they are limited now. top prints it; the
 * exporter's page API writes the same object.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "outputs/busiest.h"
#include "reads/counters.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/conf.h"

#define PREFIX_TEXT_MAX 112 /* a pair of IPv6 prefixes */

/* How each algorithm's level is named: top's column and its JSON key. */
static const char *const level_names[SLUICE_METER_MAX] = {
	[SLUICE_METER_GCRA] = "bucket",
	[SLUICE_METER_FIXED_WINDOW] = "window",
	[SLUICE_METER_SLIDING_WINDOW] = "window",
	[SLUICE_METER_WARMUP] = "stored",
};

/* top's columns; the level's JSON keys are the algorithm's own (top_json_level). */
enum top_col {
	TOP_PREFIX,
	TOP_RULE,
	TOP_PASSED,
	TOP_DROPPED,
	TOP_PPS,
	TOP_STATE,
	TOP_LIMITED,
	TOP_NEXT_PASS,
	TOP_PROVEN,
	TOP_COLS
};

const int top_ncols = TOP_COLS;
const struct report_col top_cols[TOP_COLS] = {
	[TOP_PREFIX] = { .key = "prefix", .header = "PREFIX", .width = -24 },
	[TOP_RULE] = { .key = "rule", .header = "RULE", .width = -20 },
	[TOP_PASSED] = { .key = "passed", .header = "PASSED", .width = 14 },
	[TOP_DROPPED] = { .key = "dropped", .header = "DROPPED", .width = 14 },
	[TOP_PPS] = { .key = "pps", .header = "PPS", .width = 12, .decimals = 1, .unknown = "-" },
	[TOP_STATE] = { .key = NULL, .header = "STATE", .width = -24 },
	[TOP_LIMITED] = { .key = "limited", .header = "LIMITED", .width = -7 },
	[TOP_NEXT_PASS] = { .key = "next_pass_ns", .header = "NEXT PASS", .width = -10 },
	[TOP_PROVEN] = { .key = "proven", .header = "PROVEN", .width = 0 },
};

static void format_wait(char *buf, size_t len, const struct top_row *r)
{
	if (r->limited < 0)
		snprintf(buf, len, "?");
	else if (!r->limited)
		snprintf(buf, len, "-");
	else if (r->next_pass_ns < NSEC_PER_SEC / 1000)
		snprintf(buf, len, "%.0f us", (double)r->next_pass_ns / 1e3);
	else if (r->next_pass_ns < NSEC_PER_SEC)
		snprintf(buf, len, "%.1f ms", (double)r->next_pass_ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", (double)r->next_pass_ns / 1e9);
}

/* "bucket 37/100", "window 12/100" or "stored 40/80": what the slot holds, of its most. */
static void format_level(char *buf, size_t len, const struct top_row *r)
{
	if (r->limited < 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%s %llu/%llu", level_names[r->meter],
			 (unsigned long long)r->level, (unsigned long long)r->level_max);
}

/* The same keys for every algorithm: the one the rule's uses holds its level, the rest null. */
static void top_json_level(struct report *rp, const struct top_row *r)
{
	static const char *const keys[] = { "bucket", "window_count", "warmup_stored" };
	const char *used = "";
	size_t i;

	if (r->limited >= 0)
		used = r->meter == SLUICE_METER_GCRA	 ? keys[0]
		       : r->meter == SLUICE_METER_WARMUP ? keys[2]
							 : keys[1];
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (!strcmp(keys[i], used))
			report_u64(rp, keys[i], NULL, r->level);
		else
			report_null(rp, keys[i]);
	}
	if (r->limited < 0)
		report_null(rp, "limit");
	else
		report_u64(rp, "limit", NULL, r->level_max);
}

/* Whether it is limited and until when: bools and nanoseconds, or words. */
static void top_limit(struct report *rp, const struct top_row *r)
{
	char text[48];

	format_level(text, sizeof(text), r);
	report_cell_text(rp, &top_cols[TOP_STATE], text);
	if (r->limited < 0) {
		report_null(rp, top_cols[TOP_LIMITED].key);
		report_null(rp, top_cols[TOP_NEXT_PASS].key);
	} else {
		report_bool(rp, top_cols[TOP_LIMITED].key, NULL, r->limited);
		report_u64(rp, top_cols[TOP_NEXT_PASS].key, NULL, r->next_pass_ns);
	}
	report_cell_text(rp, &top_cols[TOP_LIMITED],
			 r->limited < 0 ? "?"
			 : r->limited	? "yes"
					: "no");
	format_wait(text, sizeof(text), r);
	report_cell_text(rp, &top_cols[TOP_NEXT_PASS], text);
}

/* The key's kind, and each address it keeps (null for one it does not): JSON only. */
static void top_json_key(struct report *rp, const struct sluice_key *key)
{
	static const char *const sides[] = { "source", "destination" };
	char text[PREFIX_TEXT_MAX];
	int dst;

	report_string(rp, "key", NULL, key_kind_name(key));
	for (dst = 0; dst < 2; dst++) {
		if (key_side_format(key, dst, text, sizeof(text)))
			report_string(rp, sides[dst], NULL, text);
		else
			report_null(rp, sides[dst]);
	}
}

static void top_row(struct report *rp, const struct top_view *v, const struct top_row *r)
{
	char prefix[PREFIX_TEXT_MAX], rule[RULE_NAME_MAX];

	key_format(&r->src->key, prefix, sizeof(prefix));
	rule_name(&v->doc, r->src->key.policy, rule, sizeof(rule));
	report_open(rp, NULL);
	report_cell_string(rp, &top_cols[TOP_PREFIX], prefix);
	report_string(rp, "family", NULL,
		      SLUICE_KEY_FAMILY(r->src->key.family) == SLUICE_FAMILY_IPV6 ? "ipv6"
										  : "ipv4");
	top_json_key(rp, &r->src->key);
	report_cell_string(rp, &top_cols[TOP_RULE], rule);
	report_cell_u64(rp, &top_cols[TOP_PASSED], r->src->b.passed);
	report_cell_u64(rp, &top_cols[TOP_DROPPED], r->src->b.dropped);
	report_cell_rate(rp, &top_cols[TOP_PPS], r->pps, !isnan(r->pps));
	if (r->limited < 0)
		report_null(rp, "algorithm");
	else
		report_string(rp, "algorithm", NULL, algorithm_name(r->meter));
	top_json_level(rp, r);
	top_limit(rp, r);
	report_bool(rp, top_cols[TOP_PROVEN].key, NULL, r->proven);
	report_cell_text(rp, &top_cols[TOP_PROVEN], r->proven ? "yes" : "-");
	report_close(rp);
	report_eol(rp);
}

void busiest_report(struct report *rp, const char *ifname, const struct top_view *v,
		    const char *sort, size_t shown)
{
	size_t i;

	report_open(rp, NULL);
	report_ifname(rp, "sluice top on %s: ", ifname);
	report_u64(rp, "time_ns", NULL, v->time_ns);
	report_string(rp, "sort", NULL, sort);
	report_rate(rp, "interval_s", NULL, v->window_s, 6, !isnan(v->window_s));
	report_u64(rp, "sources_tracked", "%llu sources tracked, ", v->n);
	report_u64(rp, NULL, "%llu busiest by ", shown);
	report_string(rp, NULL, "%s", sort);
	report_eol(rp);
	report_header(rp, top_cols, TOP_COLS);
	report_eol(rp);
	report_list_open(rp, "sources");
	for (i = 0; i < shown; i++)
		top_row(rp, v, &v->rows[i]);
	report_list_close(rp);
	report_close(rp);
}
