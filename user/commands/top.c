// SPDX-License-Identifier: GPL-2.0
/*
 * sluice top: the busiest sources, read from the bucket table. Each bucket
 * counts its packets passed and over the limit; whether a source is limited
 * now, and for how long, follows from its slot (a TAT, a window count or
 * a warm-up's stored permits, include/slot.h) and the clock the datapath
 * uses (CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "slot.h"
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"
#include "outputs/report.h"
#include "reads/counters.h"
#include "reads/sources.h"
#include "values/words.h"
#include "text/conf.h"

#define RATE_WINDOW_NS	NSEC_PER_SEC
#define PREFIX_TEXT_MAX 64

struct top_opts {
	const char *ifname;
	uint64_t limit;
	enum top_sort sort;
	bool json;
};

/* One source as shown. */
struct top_row {
	const struct source_row *src;
	double pps;	       /* NAN when not measured */
	int limited;	       /* 1 yes, 0 no, -1 unknown rule */
	uint64_t next_pass_ns; /* until the next packet would pass, when limited */
	uint8_t meter;	       /* enum sluice_meter of its rule */
	uint64_t level;	       /* what its slot holds (slot_level), of level_max */
	uint64_t level_max;
	bool proven; /* its source proved its address (--prove) */
};

struct top_view {
	struct policy_doc doc; /* the live policy, for rule names and limits */
	struct top_row *rows;
	size_t n;
	uint64_t time_ns;
	double window_s; /* NAN when rates were not measured */
};

/* How each algorithm's level is named: top's column and its JSON key. */
static const char *const level_names[SLUICE_METER_MAX] = {
	[SLUICE_METER_GCRA] = "bucket",
	[SLUICE_METER_FIXED_WINDOW] = "window",
	[SLUICE_METER_SLIDING_WINDOW] = "window",
	[SLUICE_METER_WARMUP] = "stored",
};

/* What a GCRA bucket holds at now: packets, or bytes, of its burst. */
static uint64_t bucket_level(const struct sluice_policy *p, uint64_t tat, uint64_t now)
{
	uint64_t debt = tat > now ? tat - now : 0;
	unsigned __int128 room = debt < p->limit ? p->limit - debt : 0;

	if (p->flags & SLUICE_POL_BYTES)
		room <<= SLUICE_BYTE_SHIFT;
	return (uint64_t)(room / p->interval);
}

/*
 * What a source's slot holds at now: the bucket's packets or bytes left,
 * the cost counted in the current window, or a warm-up's stored permits.
 */
static uint64_t slot_level(const struct sluice_policy *p, const struct slot_meter *m, uint64_t slot,
			   uint64_t now)
{
	uint64_t mask = (1ULL << p->state_bits) - 1, free = slot & ~mask, stored;
	struct sliding_counts c;

	switch (p->meter) {
	case SLUICE_METER_FIXED_WINDOW:
		return fixed_count(slot, window_end(now, m->window));
	case SLUICE_METER_SLIDING_WINDOW:
		sliding_read(slot, now, m->window, m->bits, &c);
		return c.cur;
	case SLUICE_METER_WARMUP:
		stored = (slot & mask) + (now > free ? (now - free) / p->interval : 0);
		return stored < p->warm_max ? stored : p->warm_max;
	}
	return bucket_level(p, slot, now);
}

/* Limited when its bucket was read, and for how much longer from then. */
static void limit_state(struct top_row *row, const struct policy_doc *doc)
{
	uint64_t admissible, now = row->src->read_ns << SLUICE_TIME_SHIFT;
	struct slot_meter m = {};
	struct sluice_policy p;

	if (rule_policy(doc, row->src->key.policy, &p) || p.meter >= SLUICE_METER_MAX) {
		row->limited = -1;
		return;
	}
	slot_meter_of_policy(&m, &p);
	row->meter = p.meter;
	row->level = slot_level(&p, &m, row->src->b.tat, now);
	row->level_max = p.meter == SLUICE_METER_WARMUP ? p.warm_max : p.burst;
	admissible = slot_admissible_at(&m, row->src->b.tat, now,
					p.flags & SLUICE_POL_BYTES
						? gcra_bytes_cost(GCRA_FRAME_MIN, p.interval)
						: p.interval);
	row->limited = now < admissible;
	row->next_pass_ns = 0;
	/* Rounded up: the packet passes no earlier than shown. */
	if (row->limited)
		row->next_pass_ns =
			(admissible - now + (1 << SLUICE_TIME_SHIFT) - 1) >> SLUICE_TIME_SHIFT;
}

static uint64_t row_total(const struct source_row *r)
{
	return r->b.passed + r->b.dropped;
}

/* Every source as shown; with an earlier reading, packets per second since it. */
static int view_build(struct top_view *v, const struct source_table *now,
		      const struct source_table *before)
{
	uint64_t dt = before ? now->time_ns - before->time_ns : 0;
	struct source_index ix = {};
	const struct source_row *old;
	size_t i;

	if (before && sources_index(before, &ix))
		return -ENOMEM;
	v->n = now->n;
	v->time_ns = now->time_ns;
	v->window_s = before ? (double)dt / NSEC_PER_SEC : NAN;
	v->rows = calloc(now->n ? now->n : 1, sizeof(*v->rows));
	for (i = 0; v->rows && i < now->n; i++) {
		v->rows[i].src = &now->rows[i];
		v->rows[i].pps = NAN;
		if (before) {
			old = sources_lookup(&ix, &now->rows[i].key);
			v->rows[i].pps =
				per_second(row_total(&now->rows[i]), old ? row_total(old) : 0, dt);
		}
		limit_state(&v->rows[i], &v->doc);
	}
	sources_index_free(&ix);
	return v->rows ? 0 : -ENOMEM;
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

/* Ties fall back on the other count, then the key, so the order is stable. */
static int by_drops(const void *a, const void *b)
{
	const struct source_row *x = ((const struct top_row *)a)->src;
	const struct source_row *y = ((const struct top_row *)b)->src;

	return cmp_u64_desc(x->b.dropped, y->b.dropped)
		       ?: cmp_u64_desc(x->b.passed, y->b.passed)
		       ?: memcmp(&x->key, &y->key, sizeof(x->key));
}

static int by_passed(const void *a, const void *b)
{
	const struct source_row *x = ((const struct top_row *)a)->src;
	const struct source_row *y = ((const struct top_row *)b)->src;

	return cmp_u64_desc(x->b.passed, y->b.passed) ?: by_drops(a, b);
}

static int by_rate(const void *a, const void *b)
{
	double x = ((const struct top_row *)a)->pps, y = ((const struct top_row *)b)->pps;

	return x < y ? 1 : x > y ? -1 : by_drops(a, b);
}

typedef int (*row_cmp)(const void *, const void *);

static void swap_rows(struct top_row *a, struct top_row *b)
{
	struct top_row t = *a;

	*a = *b;
	*b = t;
}

/* Restores a heap whose root may be out of place; the root is the worst row kept. */
static void heap_down(struct top_row *h, size_t n, size_t i, row_cmp cmp)
{
	size_t worst, l;

	for (;;) {
		worst = i;
		l = 2 * i + 1;
		if (l < n && cmp(&h[l], &h[worst]) > 0)
			worst = l;
		if (l + 1 < n && cmp(&h[l + 1], &h[worst]) > 0)
			worst = l + 1;
		if (worst == i)
			return;
		swap_rows(&h[i], &h[worst]);
		i = worst;
	}
}

/*
 * Moves the best `keep` rows to the front, in order. A heap of `keep` rows
 * over one sequential pass: sorting a million rows to show twenty would
 * cost seconds of cache misses.
 */
static void view_select(struct top_view *v, enum top_sort sort, size_t keep)
{
	static const row_cmp cmps[] = {
		[SORT_DROPS] = by_drops,
		[SORT_PASSED] = by_passed,
		[SORT_RATE] = by_rate,
	};
	row_cmp cmp = cmps[sort];
	size_t i;

	if (keep > v->n)
		keep = v->n;
	for (i = keep / 2; i-- > 0;)
		heap_down(v->rows, keep, i, cmp);
	for (i = keep; i < v->n; i++) {
		if (cmp(&v->rows[i], &v->rows[0]) >= 0)
			continue;
		swap_rows(&v->rows[i], &v->rows[0]);
		heap_down(v->rows, keep, 0, cmp);
	}
	qsort(v->rows, keep, sizeof(*v->rows), cmp);
}

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

static void top_row(struct report *rp, const struct top_view *v, const struct top_row *r)
{
	char prefix[PREFIX_TEXT_MAX], rule[RULE_NAME_MAX];

	key_format(&r->src->key, prefix, sizeof(prefix));
	rule_name(&v->doc, r->src->key.policy, rule, sizeof(rule));
	report_open(rp, NULL);
	report_cell_string(rp, &top_cols[TOP_PREFIX], prefix);
	report_string(rp, "family", NULL,
		      r->src->key.family == SLUICE_FAMILY_IPV6 ? "ipv6" : "ipv4");
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

static int top_report(const struct top_opts *o, const struct top_view *v, size_t shown)
{
	const char *sort = sort_name(o->sort);
	struct report rp;
	struct json j;
	size_t i;

	report_start(&rp, &j, o->json);
	report_open(&rp, NULL);
	report_ifname(&rp, "sluice top on %s: ", o->ifname);
	report_u64(&rp, "time_ns", NULL, v->time_ns);
	report_string(&rp, "sort", NULL, sort);
	report_rate(&rp, "interval_s", NULL, v->window_s, 6, !isnan(v->window_s));
	report_u64(&rp, "sources_tracked", "%llu sources tracked, ", v->n);
	report_u64(&rp, NULL, "%llu busiest by ", shown);
	report_string(&rp, NULL, "%s", sort);
	report_eol(&rp);
	report_header(&rp, top_cols, TOP_COLS);
	report_eol(&rp);
	report_list_open(&rp, "sources");
	for (i = 0; i < shown; i++)
		top_row(&rp, v, &v->rows[i]);
	report_list_close(&rp);
	report_close(&rp);
	return fail_json("top", report_end(&rp));
}

/* The rows shown whose source proved its address: one lookup each. */
static void view_mark_proven(struct top_view *v, int proven_fd, uint64_t shown)
{
	size_t i;

	for (i = 0; i < v->n && i < shown; i++)
		v->rows[i].proven = source_proven(proven_fd, &v->rows[i].src->key);
}

/* Reads the table (twice, a window apart, when sorting by rate); the best rows first. */
static int top_collect(const struct top_opts *o, const struct state *st, struct top_view *v,
		       struct source_table *now)
{
	struct source_table before = {};
	struct timespec window = { .tv_sec = RATE_WINDOW_NS / NSEC_PER_SEC };
	int err;

	err = policy_load(&st->maps, &v->doc, false);
	if (!err && o->sort == SORT_RATE) {
		err = sources_read(&st->maps, &before);
		if (!err)
			nanosleep(&window, NULL);
	}
	if (!err)
		err = sources_read(&st->maps, now);
	if (!err)
		err = view_build(v, now, o->sort == SORT_RATE ? &before : NULL);
	if (!err)
		view_select(v, o->sort, o->limit);
	if (!err)
		view_mark_proven(v, st->proven_fd, o->limit);
	sources_free(&before);
	return err;
}

static int top_run(struct cli_args *a, struct state *st)
{
	struct top_opts o = { .ifname = a->ifname,
			      .limit = a->cmd.top.limit,
			      .sort = a->cmd.top.sort,
			      .json = a->json };
	struct source_table table = {};
	struct top_view view = {};
	size_t shown;
	int ret, err;

	err = top_collect(&o, st, &view, &table);
	if (err) {
		ret = fail_state("top", err, o.ifname, "read the sources");
		goto out;
	}
	shown = view.n < o.limit ? view.n : (size_t)o.limit;
	ret = top_report(&o, &view, shown);
out:
	free(view.rows);
	doc_free(&view.doc);
	sources_free(&table);
	return ret;
}

const struct command cmd_top = {
	.id = CMD_TOP,
	.name = "top",
	.summary = "list the busiest sources of an interface",
	.synopsis = "IFACE [-n N] [--sort drops|passed|rate] [--json]",
	.description =
		"List the busiest sources (prefixes) with their rule, packets passed and over\n"
		"the limit (dropped, or would-drop in dry run), and whether they are limited\n"
		"now, with the time until their next packet would pass.",
	.iface = IFACE_REQUIRED,
	.state = USE_READ,
	.run = top_run,
};
