// SPDX-License-Identifier: GPL-2.0
/*
 * The busiest sources (busiest.h). Each bucket counts its packets passed and
 * over the limit; whether a source is limited now, and for how long, follows
 * from its slot (a TAT, a window count or a warm-up's stored permits,
 * include/slot.h) and the clock the datapath uses (CLOCK_MONOTONIC).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "slot.h"
#include "base/clock.h"
#include "base/fault.h"
#include "reads/busiest.h"
#include "reads/counters.h"

#define RATE_WINDOW_NS NSEC_PER_SEC

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

/* The rows shown whose source proved its address: one lookup each. */
static void view_mark_proven(struct top_view *v, int proven_fd, uint64_t shown)
{
	size_t i;

	for (i = 0; i < v->n && i < shown; i++)
		v->rows[i].proven = source_proven(proven_fd, &v->rows[i].src->key);
}

/* Reads the table (twice, a window apart, when sorting by rate); the best rows first. */
int busiest_read(const struct policy_maps *m, int proven_fd, enum top_sort sort, uint64_t limit,
		 struct top_view *v, struct source_table *now)
{
	struct source_table before = {};
	struct timespec window = { .tv_sec = RATE_WINDOW_NS / NSEC_PER_SEC };
	int err = 0;

	doc_init(&v->doc); /* freed by the caller, whatever fails */
	if (sort == SORT_RATE) {
		err = sources_read(m, &before);
		if (!err)
			nanosleep(&window, NULL);
	}
	if (!err)
		err = sources_read(m, now);
	/*
	 * The policy after the table: every rule a bucket could be keyed on by
	 * then is in it, so only a rule changed or deleted shows as replaced-N.
	 */
	fault_point(FAULT_TOP_BETWEEN_READS, SIGSTOP);
	if (!err)
		err = policy_load(m, &v->doc, false);
	if (!err)
		err = view_build(v, now, sort == SORT_RATE ? &before : NULL);
	if (!err)
		view_select(v, sort, limit);
	if (!err)
		view_mark_proven(v, proven_fd, limit);
	sources_free(&before);
	return err;
}
