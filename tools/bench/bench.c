// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-bench: ns/packet of the datapath from BPF_PROG_TEST_RUN with
 * `repeat`, against the floor of a bare XDP_DROP program. It prints
 * figures; it is a benchmark, not a test, and never fails on a slow machine.
 *
 * Paths: one source over its limit (the over-limit cache, with and without
 * the precise clock), a new source (table with room; full of idle buckets,
 * one of which it replaces; full of buckets that still hold state, so it
 * is refused), and N tracked sources all under or all over their limits,
 * for N from 1 to 1,000,000, which gives the growth of the cost with the
 * number of sources. Beside bare XDP_DROP, the floors (tools/bench/floor.bpf.c):
 * the work any exact per-source limiter must do (the headers read, the
 * precise clock, one line of a table the default table's size for a new
 * source every run, and that line with the clock), and the floors of the
 * table's layout (a set's six lines, and both sets' tags and TATs, each
 * with the clock). Last, the memory per tracked source, from the
 * kernel's own account of the table (memlock, as bpftool shows it), and the
 * physical floor of a table that size: the latency of a dependent random
 * load (a pointer chase) in buffers of 1, 8 and 64 MiB and of the table's
 * size, measured in the same run, so a table's cost can be set against it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.skel.h"
#include "floor.skel.h"
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "base/clock.h"
#include "text/conf.h"
#include "frames.h"
#include "policy/policy.h"
#include "pins/datapath.h"
#include "pins/state.h"
#include "maps/policy_maps.h"
#include "table_hash.h"

#define REPEAT 1000000
#define ROUNDS 31
/* Buckets in the limiter of every many-source case: room for 1,000,000 sources. */
#define TABLE_SIZE (1U << 20)
/* New sources per round while the table has room: ROUNDS of them fit, with margin. */
#define NEW_REPEAT 30000

struct figure {
	double ns;    /* median ns/packet of the program under test */
	double floor; /* median ns/packet of its floor, measured alongside */
	double ratio; /* median of the per-round ratios */
	double own;   /* median of the per-round differences: the program's own cost */
};

static double run_once(int prog_fd, const struct frame *f, __u32 repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = (__u32)f->len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		return -1;
	return opts.duration;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/*
 * The machine's speed drifts (other tenants, frequency), so the program and
 * its floor alternate round by round and the ratio is taken per round.
 */
static struct figure measure(int prog_fd, int floor_fd, const struct frame *f, __u32 repeat)
{
	double ns[ROUNDS], floor[ROUNDS], ratio[ROUNDS], own[ROUNDS];
	struct figure fig;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		floor[i] = run_once(floor_fd, f, repeat);
		ns[i] = run_once(prog_fd, f, repeat);
		ratio[i] = floor[i] > 0 ? ns[i] / floor[i] : 0;
		own[i] = ns[i] - floor[i];
	}
	fig.ns = median(ns, ROUNDS);
	fig.floor = median(floor, ROUNDS);
	fig.ratio = median(ratio, ROUNDS);
	fig.own = median(own, ROUNDS);
	return fig;
}

static void report(const char *name, const struct figure *fig, const char *floor_name)
{
	printf("%-48s %6.1f ns/packet  %5.2fx %s (%.1f ns)\n", name, fig->ns, fig->ratio,
	       floor_name, fig->floor);
}

/* A fresh limiter (empty buckets) with settings s; table 0 means the default table size. */
static struct sluice *limiter_open_with(const struct settings *s, __u32 table)
{
	struct policy_doc doc;
	struct sluice *skel;
	struct state st;
	const char *why;

	doc_init(&doc);
	if (doc_set_default(&doc, s, &why) || doc_validate(&doc, &why)) {
		fprintf(stderr, "sluice-bench: %s\n", why);
		errno = EINVAL;
		return NULL;
	}
	skel = sluice_open_here();
	if (!skel)
		return NULL;
	table = table ?: SLUICE_DEFAULT_MAX_SOURCES;
	if (state_prepare(skel->obj, table) || sluice__load(skel)) {
		sluice__destroy(skel);
		return NULL;
	}
	state_from_object(skel->obj, &st);
	if (policy_create(&st.maps, table, &doc)) {
		sluice__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * At `rate`/s; burst 0 means the default. New sources are admitted without
 * limit (the admission budget is a policy choice; here it would hide the
 * insert), but where a figure is about that budget (bench_spoofed).
 */
static void settings_rate(struct settings *s, uint64_t rate, uint64_t burst)
{
	settings_default(s);
	s->rate.amount = rate;
	s->rate.period_ns = NSEC_PER_SEC;
	s->burst.value = burst;
	s->new_sources.amount = RATE_METERED_MAX_PER_SEC;
	s->new_sources.period_ns = NSEC_PER_SEC;
}

static struct sluice *limiter_open(uint64_t rate, uint64_t burst, __u32 table)
{
	struct settings s;

	settings_rate(&s, rate, burst);
	return limiter_open_with(&s, table);
}

/* A rotator that gives every run the next of `count` sources, then starts over. */
static struct bench *rotator_open(int target_fd, __u32 count)
{
	struct bench *b;
	__u32 zero = 0;

	b = bench__open();
	if (!b)
		return NULL;
	b->rodata->source_count = count;
	if (bench__load(b) ||
	    bpf_map_update_elem(bpf_map__fd(b->maps.target), &zero, &target_fd, BPF_ANY)) {
		bench__destroy(b);
		return NULL;
	}
	return b;
}

static int bench_single(int drop_fd, const struct frame *f, const char *name, uint64_t rate,
			uint64_t burst)
{
	struct sluice *lim = limiter_open(rate, burst, 0);
	struct figure fig;

	if (!lim)
		return -errno ?: -EINVAL;
	fig = measure(bpf_program__fd(lim->progs.sluice_xdp), drop_fd, f, REPEAT);
	report(name, &fig, "bare XDP_DROP");
	sluice__destroy(lim);
	return 0;
}

/* Whether the bans map's one entry holds a ban in force. */
static bool banned_now(int bans_fd)
{
	struct sluice_key key;
	struct sluice_ban ban;

	return !bpf_map_get_next_key(bans_fd, NULL, &key) &&
	       !bpf_map_lookup_elem(bans_fd, &key, &ban) && ban.banned_until_ns > monotonic_ns();
}

/*
 * One source banned by the penalty box (--ban-after 1/10s, for an hour),
 * beside the same source over its limit and not banned: what a ban does to
 * the cost of a flood's packets. The first runs, 200 ms apart, earn the ban.
 */
static int bench_banned(int drop_fd, const struct frame *f)
{
	struct settings s;
	struct sluice *lim;
	struct figure fig;
	int prog_fd, err = 0;

	settings_rate(&s, 10, 0);
	s.ban_after.count = 1;
	s.ban_after.period_ns = 10 * NSEC_PER_SEC;
	s.ban_for_ns = 3600 * NSEC_PER_SEC;
	lim = limiter_open_with(&s, 0);
	if (!lim)
		return -errno ?: -EINVAL;
	prog_fd = bpf_program__fd(lim->progs.sluice_xdp);
	/* The cache answers the refusals; they reach the ban with a packet after its entry ends. */
	run_once(prog_fd, f, 1000);
	usleep(200000);
	run_once(prog_fd, f, 1000);
	if (banned_now(bpf_map__fd(lim->maps.bans))) {
		fig = measure(prog_fd, drop_fd, f, REPEAT);
		report("sluice, 1 source banned (--ban-after)", &fig, "bare XDP_DROP");
	} else {
		fprintf(stderr, "sluice-bench: the source was not banned\n");
		err = -EINVAL;
	}
	sluice__destroy(lim);
	return err;
}

/*
 * The table floor, a rotator in front of it, against a rotator in front of
 * XDP_DROP: every run a new source of the default table's
 * SLUICE_DEFAULT_MAX_SOURCES, so its line is rarely in a cache.
 */
static int bench_floor_table(const char *name, int table_fd, int drop_fd, const struct frame *f)
{
	struct bench *front = rotator_open(table_fd, SLUICE_DEFAULT_MAX_SOURCES);
	struct bench *base = front ? rotator_open(drop_fd, SLUICE_DEFAULT_MAX_SOURCES) : NULL;
	struct figure fig;
	int err = base ? 0 : -errno ?: -EINVAL;

	if (!err) {
		fig = measure(bpf_program__fd(front->progs.rotate_source),
			      bpf_program__fd(base->progs.rotate_source), f, REPEAT);
		report(name, &fig, "rotator+DROP");
	}
	bench__destroy(base);
	bench__destroy(front);
	return err;
}

/* The floors: what any exact per-source limiter must do, with the one frame, then the table. */
static int bench_floors(int drop_fd, const struct frame *f)
{
	struct floor *fl = floor__open_and_load();
	struct figure fig;
	int err;

	if (!fl)
		return -errno ?: -EINVAL;
	fig = measure(bpf_program__fd(fl->progs.floor_parse), drop_fd, f, REPEAT);
	report("floor: parse", &fig, "bare XDP_DROP");
	fig = measure(bpf_program__fd(fl->progs.floor_clock), drop_fd, f, REPEAT);
	report("floor: parse + clock", &fig, "bare XDP_DROP");
	err = bench_floor_table("floor: parse + hash + one table line",
				bpf_program__fd(fl->progs.floor_table), drop_fd, f);
	if (!err)
		err = bench_floor_table("floor: the same + clock",
					bpf_program__fd(fl->progs.floor_meter), drop_fd, f);
	if (!err)
		err = bench_floor_table("floor: a set's six lines + clock",
					bpf_program__fd(fl->progs.floor_set), drop_fd, f);
	if (!err)
		err = bench_floor_table("floor: both sets' tags, TATs + clock",
					bpf_program__fd(fl->progs.floor_refuse), drop_fd, f);
	if (!err)
		err = bench_floor_table("floor: parse, hash, filter word, early clock",
					bpf_program__fd(fl->progs.floor_filter), drop_fd, f);
	floor__destroy(fl);
	return err;
}

/* Many sources: a rotator in front of sluice, and one in front of XDP_DROP. */
struct many {
	struct sluice *lim;
	struct bench *front;
	struct bench *floor;
};

static void many_close(struct many *m)
{
	bench__destroy(m->front);
	bench__destroy(m->floor);
	sluice__destroy(m->lim);
}

static int many_open_with(struct many *m, int drop_fd, __u32 count, const struct settings *s)
{
	memset(m, 0, sizeof(*m));
	m->lim = limiter_open_with(s, TABLE_SIZE);
	if (m->lim) {
		m->floor = rotator_open(drop_fd, count);
		m->front = rotator_open(bpf_program__fd(m->lim->progs.sluice_xdp), count);
	}
	if (!m->lim || !m->floor || !m->front) {
		many_close(m);
		return -errno ?: -EINVAL;
	}
	return 0;
}

static int many_open(struct many *m, int drop_fd, __u32 count, uint64_t rate, uint64_t burst)
{
	struct settings s;

	settings_rate(&s, rate, burst);
	return many_open_with(m, drop_fd, count, &s);
}

static struct figure many_measure(struct many *m, const struct frame *f, __u32 repeat)
{
	return measure(bpf_program__fd(m->front->progs.rotate_source),
		       bpf_program__fd(m->floor->progs.rotate_source), f, repeat);
}

/*
 * N tracked sources: one pass creates a bucket for each, then every packet
 * hits one of them in turn. Either every source stays under its limit
 * (16M/s), or every source is over it (1/s, burst 1).
 */
static int bench_tracked(int drop_fd, const struct frame *f, __u32 n, bool over, struct figure *fig)
{
	char name[64];
	struct many m;
	int err;

	err = over ? many_open(&m, drop_fd, n, 1, 1)
		   : many_open(&m, drop_fd, n, RATE_METERED_MAX_PER_SEC, 1000);
	if (err)
		return err;
	run_once(bpf_program__fd(m.front->progs.rotate_source), f, n);
	*fig = many_measure(&m, f, REPEAT);
	snprintf(name, sizeof(name), "sluice, %u sources tracked, %s limit", n,
		 over ? "all over" : "all under");
	report(name, fig, "rotator+DROP");
	many_close(&m);
	return 0;
}

/*
 * Every packet from a source never seen before. With room in the table it
 * takes an empty way. In a full table whose buckets have refilled (16M/s),
 * it replaces the one idle longest; in one whose buckets still hold state
 * (1/s, burst 1), it is refused after a look at both of its sets.
 */
static int bench_new_source(int drop_fd, const struct frame *f, const char *name, bool full,
			    uint64_t rate)
{
	struct figure fig;
	struct many m;
	int err;

	err = many_open(&m, drop_fd, UINT32_MAX, rate, 1);
	if (err)
		return err;
	if (full)
		run_once(bpf_program__fd(m.front->progs.rotate_source), f, 2 * TABLE_SIZE);
	fig = many_measure(&m, f, full ? REPEAT : NEW_REPEAT);
	report(name, &fig, "rotator+DROP");
	many_close(&m);
	return 0;
}

/*
 * The default rule, opened with settings s, with its admission narrowed to
 * one new source a second and its buckets kept (the default keeps its
 * id): from now on, every new source but about one a second is refused.
 */
static int admission_narrow(struct sluice *lim, const struct settings *s)
{
	struct settings one_new_source = *s;
	struct policy_doc doc;
	struct state st;
	const char *why;
	int err;

	doc_init(&doc);
	one_new_source.new_sources.amount = 1;
	state_from_object(lim->obj, &st);
	err = doc_set_default(&doc, &one_new_source, &why) ?: doc_validate(&doc, &why) ?:
	      policy_store(&st.maps, &doc, false);
	doc_free(&doc);
	return err;
}

/*
 * A spoofed flood past its budget: every packet from a source never seen
 * before, with the admission budget at 1/s, so each is refused a bucket
 * and charged to the overflow bucket. Into a table nearly empty (a
 * flood's first seconds, or scenario s of bench-compare), or full of
 * 1,048,576 buckets that still hold state (1/s, burst 1), where a new
 * source's bit is more often set in its sets' filter words.
 */
static int bench_spoofed(int drop_fd, const struct frame *f, const char *name, bool full)
{
	struct settings s;
	struct figure fig;
	struct many m;
	int err;

	settings_rate(&s, 1, 1);
	err = many_open_with(&m, drop_fd, UINT32_MAX, &s);
	if (err)
		return err;
	if (full)
		run_once(bpf_program__fd(m.front->progs.rotate_source), f, TABLE_SIZE);
	err = admission_narrow(m.lim, &s);
	if (!err) {
		fig = many_measure(&m, f, REPEAT);
		report(name, &fig, "rotator+DROP");
	}
	many_close(&m);
	return err;
}

/* A front end that writes the SYN frame f again, then a new source, then tail-calls target. */
static struct bench *syn_rotator_open(int target_fd, const struct frame *f)
{
	struct bench *b;
	__u32 zero = 0;

	if (f->len > sizeof(b->rodata->syn_frame) || f->len % 2) {
		errno = EINVAL;
		return NULL;
	}
	b = bench__open();
	if (!b)
		return NULL;
	b->rodata->source_count = UINT32_MAX;
	memcpy((void *)b->rodata->syn_frame, f->data, f->len);
	b->rodata->syn_len = (__u32)f->len;
	if (bench__load(b) ||
	    bpf_map_update_elem(bpf_map__fd(b->maps.target), &zero, &target_fd, BPF_ANY)) {
		bench__destroy(b);
		return NULL;
	}
	return b;
}

static int syn_front_fd(struct bench *b)
{
	return bpf_program__fd(b->progs.rotate_syn);
}

/*
 * --prove tcp-always under a flood of SYNs from new sources (a Linux
 * client's 74-byte SYN, its 20 bytes of options as payload): every one is
 * answered from XDP with a cookie SYN-ACK. Against bare XDP_TX of the same
 * frame, and the floor of answering it (floor_synack: parse, the kernel's
 * cookie, the rewrite, XDP_TX), each behind the same front end.
 */
static int bench_prove(int tx_fd)
{
	struct frame_spec spec = { .family = 4,
				   .src = "10.0.0.1",
				   .l4 = IPPROTO_TCP,
				   .tcp_flags = TCP_FLAG_SYN,
				   .payload = 20 };
	struct bench *tx = NULL, *floor = NULL, *front = NULL;
	struct floor *fl = floor__open_and_load();
	struct sluice *lim = NULL;
	struct figure fig;
	struct settings s;
	struct frame f;
	int err = -EINVAL;

	frame_build(&f, &spec);
	settings_rate(&s, 1, 1);
	s.prove = PROVE_TCP_ALWAYS;
	lim = fl ? limiter_open_with(&s, 0) : NULL;
	if (lim) {
		tx = syn_rotator_open(tx_fd, &f);
		floor = syn_rotator_open(bpf_program__fd(fl->progs.floor_synack), &f);
		front = syn_rotator_open(bpf_program__fd(lim->progs.sluice_xdp), &f);
	}
	if (tx && floor && front) {
		fig = measure(syn_front_fd(floor), syn_front_fd(tx), &f, REPEAT);
		report("floor: SYN answered with a cookie SYN-ACK", &fig, "bare XDP_TX");
		printf("%-48s %5.2f of bare XDP_TX's packets per second\n", "", 1 / fig.ratio);
		fig = measure(syn_front_fd(front), syn_front_fd(tx), &f, REPEAT);
		report("sluice --prove tcp-always, a new source's SYN", &fig, "bare XDP_TX");
		printf("%-48s %5.2f of bare XDP_TX's packets per second\n", "", 1 / fig.ratio);
		fig = measure(syn_front_fd(front), syn_front_fd(floor), &f, REPEAT);
		report("sluice --prove tcp-always, a new source's SYN", &fig, "the SYN-ACK floor");
		printf("%-48s %5.2f of the floor's packets per second\n", "", 1 / fig.ratio);
		err = 0;
	}
	bench__destroy(front);
	bench__destroy(floor);
	bench__destroy(tx);
	sluice__destroy(lim);
	floor__destroy(fl);
	return err;
}

static const __u32 tracked_counts[] = { 1, 1000, 10000, 100000, 1000000 };
#define N_TRACKED (sizeof(tracked_counts) / sizeof(tracked_counts[0]))

/* The growth of sluice's own cost (over the floor) from 1 to 1,000,000 sources. */
static void report_growth(const char *what, const struct figure *fig)
{
	const struct figure *first = &fig[0], *last = &fig[N_TRACKED - 1];

	printf("growth, 1 -> %u sources, %s: own cost %.1f -> %.1f ns, %.2fx "
	       "(with the rotator %.1f -> %.1f ns, %.2fx); target at most 2x\n",
	       tracked_counts[N_TRACKED - 1], what, first->own, last->own,
	       first->own > 0 ? last->own / first->own : 0, first->ns, last->ns,
	       first->ns > 0 ? last->ns / first->ns : 0);
}

static int run_tracked(int drop_fd, const struct frame *f)
{
	struct figure under[N_TRACKED], over[N_TRACKED];
	size_t i;
	int err = 0;

	for (i = 0; i < N_TRACKED && !err; i++)
		err = bench_tracked(drop_fd, f, tracked_counts[i], false, &under[i]);
	for (i = 0; i < N_TRACKED && !err; i++)
		err = bench_tracked(drop_fd, f, tracked_counts[i], true, &over[i]);
	if (err)
		return err;
	report_growth("all under their limits", under);
	report_growth("all over their limits", over);
	return 0;
}

/*
 * Each algorithm on the same two paths, in the same run, against GCRA's
 * median: one source over its limit at 10/s (the over-limit cache answers
 * most packets), and 1000 sources in turn, all under their limits (every
 * packet takes a slot step: GCRA 16M/s burst 1000, a fixed window of 16M
 * per second, a sliding window of 65535 per second, its packed maximum).
 * A warm-up cannot stay under its limit here: within 0.1% it packs
 * permits only at rates far below what BPF_PROG_TEST_RUN offers.
 */
struct algo_case {
	const char *name;
	uint8_t algorithm;
	uint64_t warmup_ns;
	uint64_t under_rate; /* 0: no under-limit figure */
};

static const struct algo_case algo_cases[] = {
	{ "gcra", SLUICE_METER_GCRA, 0, RATE_METERED_MAX_PER_SEC },
	{ "gcra --warmup 1s", SLUICE_METER_GCRA, NSEC_PER_SEC, 0 },
	{ "fixed-window", SLUICE_METER_FIXED_WINDOW, 0, RATE_METERED_MAX_PER_SEC },
	{ "sliding-window", SLUICE_METER_SLIDING_WINDOW, 0, 65535 },
};

#define N_ALGOS (sizeof(algo_cases) / sizeof(algo_cases[0]))

static void algo_settings(struct settings *s, const struct algo_case *a, uint64_t rate)
{
	settings_rate(s, rate,
		      a->algorithm == SLUICE_METER_GCRA && !a->warmup_ns && rate > 10 ? 1000 : 0);
	s->algorithm = a->algorithm;
	s->warmup_ns = a->warmup_ns;
}

/*
 * Algorithms differ by a few ns on a path of ~100: many short rounds, so a
 * burst of noise from elsewhere on the machine spoils few of them.
 */
#define ALGO_ROUNDS 201
#define ALGO_REPEAT 100000

/* One algorithm's limiter on one path: the program to time, and what to close. */
struct algo_run {
	struct sluice *lim; /* over: one source */
	struct many many;   /* under: 1000 sources in turn */
	int prog_fd;
};

static void algo_close(struct algo_run *r, bool over)
{
	if (over)
		sluice__destroy(r->lim);
	else if (r->prog_fd > 0)
		many_close(&r->many);
	memset(r, 0, sizeof(*r));
}

static int algo_open(struct algo_run *r, int drop_fd, const struct frame *f,
		     const struct algo_case *a, bool over)
{
	struct settings s;
	int err;

	memset(r, 0, sizeof(*r));
	algo_settings(&s, a, over ? 10 : a->under_rate);
	if (over) {
		r->lim = limiter_open_with(&s, 0);
		if (!r->lim)
			return -errno ?: -EINVAL;
		r->prog_fd = bpf_program__fd(r->lim->progs.sluice_xdp);
		return 0;
	}
	err = many_open_with(&r->many, drop_fd, 1000, &s);
	if (err)
		return err;
	r->prog_fd = bpf_program__fd(r->many.front->progs.rotate_source);
	run_once(r->prog_fd, f, 1000); /* every source gets its bucket first */
	return 0;
}

/*
 * Every algorithm of a path in each round, in an order that rotates round
 * by round, so drift in the machine's speed falls on all of them alike;
 * each one's ratio to GCRA is taken within the round, then the median.
 */
static void algo_rounds(struct algo_run *runs, const bool *on, const struct frame *f,
			double ns[][ALGO_ROUNDS], double ratio[][ALGO_ROUNDS])
{
	size_t i, k;
	int r;

	for (r = 0; r < ALGO_ROUNDS; r++) {
		for (k = 0; k < N_ALGOS; k++) {
			i = (k + (size_t)r) % N_ALGOS;
			if (on[i])
				ns[i][r] = run_once(runs[i].prog_fd, f, ALGO_REPEAT);
		}
		for (i = 0; i < N_ALGOS; i++)
			if (on[i])
				ratio[i][r] = ns[0][r] > 0 ? ns[i][r] / ns[0][r] : 0;
	}
}

static void algo_report(const bool *on, bool over, double ns[][ALGO_ROUNDS],
			double ratio[][ALGO_ROUNDS])
{
	double lo, hi;
	char name[96];
	size_t i;
	int r;

	for (i = 0; i < N_ALGOS; i++) {
		if (!on[i])
			continue;
		lo = hi = ratio[i][0];
		for (r = 1; r < ALGO_ROUNDS; r++) {
			lo = ratio[i][r] < lo ? ratio[i][r] : lo;
			hi = ratio[i][r] > hi ? ratio[i][r] : hi;
		}
		snprintf(name, sizeof(name), "%s, %s", algo_cases[i].name,
			 over ? "1 source over its limit, 10/s" : "1000 sources under");
		printf("%-48s %6.1f ns/packet  %5.3fx gcra's (median of rounds, %.3f-%.3f)\n", name,
		       median(ns[i], ALGO_ROUNDS), median(ratio[i], ALGO_ROUNDS), lo, hi);
	}
}

static int bench_algorithm_path(int drop_fd, const struct frame *f, bool over)
{
	static double ns[N_ALGOS][ALGO_ROUNDS], ratio[N_ALGOS][ALGO_ROUNDS];
	struct algo_run runs[N_ALGOS] = { 0 };
	bool on[N_ALGOS] = { 0 };
	int err = 0;
	size_t i;

	for (i = 0; i < N_ALGOS && !err; i++) {
		on[i] = over || algo_cases[i].under_rate;
		if (on[i])
			err = algo_open(&runs[i], drop_fd, f, &algo_cases[i], over);
	}
	if (!err) {
		algo_rounds(runs, on, f, ns, ratio);
		algo_report(on, over, ns, ratio);
	}
	for (i = 0; i < N_ALGOS; i++)
		if (on[i])
			algo_close(&runs[i], over);
	return err;
}

static int bench_algorithms(int drop_fd, const struct frame *f)
{
	return bench_algorithm_path(drop_fd, f, true) ?: bench_algorithm_path(drop_fd, f, false);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/*
 * `sluice allow add IFACE -f FILE` with 100,000 entries, through the same
 * code: parse the file, then write the entries into a loaded limiter.
 */
static int bench_import(void)
{
	char path[] = "/tmp/sluice-bench-list.XXXXXX", err[256];
	struct cidr_list list = { 0 };
	struct timespec t0;
	struct sluice *lim;
	struct state st;
	double parse_s;
	int fd, i, ret;
	FILE *out;

	fd = mkstemp(path);
	out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!out)
		return -errno;
	for (i = 0; i < 100000; i++)
		fprintf(out, "%d.%d.%d.0/24\n", 10 + (i >> 16), i >> 8 & 0xff, i & 0xff);
	fclose(out);
	lim = limiter_open(1000, 0, 0);
	if (!lim) {
		unlink(path);
		return -EINVAL;
	}
	state_from_object(lim->obj, &st);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = cidr_file_parse(path, &list, err, sizeof(err));
	parse_s = seconds_since(&t0);
	if (!ret)
		ret = list_update(&st.maps, &(struct list_change){ .add = true, .items = &list });
	if (!ret)
		printf("%-40s %6.2f s (parse %.2f s), target < 2 s\n",
		       "allow list import, 100,000 entries", seconds_since(&t0), parse_s);
	free(list.items);
	sluice__destroy(lim);
	unlink(path);
	return ret;
}

/* The kernel's account of a map's memory, as bpftool prints it (fdinfo memlock). */
static long long map_memlock(int fd)
{
	char path[64], line[128];
	long long bytes = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

/*
 * Memory per tracked source at the default --max-sources: every map sized
 * by it (the source table, its filter and the aggregate table), then the
 * fleet's usage words (also sized by it, apart: only a fleet uses them),
 * per source.
 */
static int bench_memory(long long *table_bytes)
{
	struct sluice *lim = limiter_open(1000, 0, SLUICE_DEFAULT_MAX_SOURCES);
	__u32 agg_buckets = table_aggregates_for(SLUICE_DEFAULT_MAX_SOURCES);
	double n = SLUICE_DEFAULT_MAX_SOURCES;
	long long table, filter, aggregates, usage;

	if (!lim)
		return -errno ?: -EINVAL;
	table = map_memlock(bpf_map__fd(lim->maps.buckets));
	*table_bytes = table;
	filter = map_memlock(bpf_map__fd(lim->maps.buckets_filter));
	aggregates = map_memlock(bpf_map__fd(lim->maps.aggregates));
	usage = map_memlock(bpf_map__fd(lim->maps.fleet_usage));
	printf("%-40s %6.1f B (memlock: sources %lld B + filter %lld B + aggregates %lld B, / "
	       "%u); target <= 40 B\n",
	       "memory per tracked IPv4 source", (double)(table + filter + aggregates) / n, table,
	       filter, aggregates, SLUICE_DEFAULT_MAX_SOURCES);
	printf("%-40s %6.1f B (%u sets of %d ways, %zu B each; an IPv6 source takes two ways)\n",
	       "memory per tracked IPv6 source", 2.0 * (double)table / n,
	       bpf_map__max_entries(lim->maps.buckets), SLUICE_SET_WAYS, sizeof(struct sluice_set));
	printf("%-40s %6.1f B (memlock %lld B / %u aggregate buckets; %u sets)\n",
	       "memory per aggregate bucket", (double)aggregates / agg_buckets, aggregates,
	       agg_buckets, bpf_map__max_entries(lim->maps.aggregates));
	printf("%-40s %6.1f B (memlock %lld B: a word per source way, apart from the table)\n",
	       "fleet usage per tracked source", (double)usage / n, usage);
	sluice__destroy(lim);
	return 0;
}

/*
 * The table's fill, simulated with the datapath's own placement
 * (table_place) and choice (the emptier of a key's two sets, then the
 * other): `n` random keys of a family into the table for --max-sources
 * `sources`, none ever idle. Prints how many found both sets full.
 */
static void bench_table_fill(const char *name, __u64 sources, __u64 n, int ipv6)
{
	__u32 sets = table_sets_for(sources), refused = 0, j,
	      need = ipv6 || !table_inline(sets) ? 2 : 1;
	__u8 *used = calloc(sets, 1);
	__u64 seed[3], i, x = 0x2545f4914f6cdd1dULL;
	struct sluice_key k = { .family = ipv6 ? SLUICE_FAMILY_IPV6 : SLUICE_FAMILY_IPV4 };
	struct table_place pl;

	if (!used)
		return;
	for (j = 0; j < 3; j++)
		seed[j] = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	k.prefix_len = ipv6 ? 64 : 32;
	for (i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		k.addr[0] = (__u32)(x >> 32);
		k.addr[1] = ipv6 ? (__u32)x : 0;
		table_place(&pl, &k, seed, sets);
		j = used[pl.set[1]] < used[pl.set[0]];
		if (used[pl.set[j]] + need > SLUICE_SET_WAYS)
			j = !j;
		if (used[pl.set[j]] + need > SLUICE_SET_WAYS)
			refused++;
		else
			used[pl.set[j]] += (__u8)need;
	}
	printf("%-48s %8u of %llu refused (%.4f%%; %u sets)\n", name, refused,
	       (unsigned long long)n, 100.0 * refused / (double)n, sets);
	free(used);
}

static void bench_table_load(void)
{
	bench_table_fill("table fill: 1M IPv4 sources, default table", SLUICE_DEFAULT_MAX_SOURCES,
			 SLUICE_DEFAULT_MAX_SOURCES, 0);
	bench_table_fill("table fill: 500k IPv6 sources, default table", SLUICE_DEFAULT_MAX_SOURCES,
			 SLUICE_DEFAULT_MAX_SOURCES / 2, 1);
	bench_table_fill("table fill: 5000 IPv4 sources, --max-sources 5000", 5000, 5000, 0);
}

#define CHASE_LINE  64
#define CHASE_STEPS (1U << 22)
#define CHASE_RUNS  5

/*
 * A random cycle through every cache line of buf (Sattolo's shuffle), each
 * line holding the index of the next: every load depends on the one before.
 */
static void chase_link(uint64_t *buf, size_t lines)
{
	size_t *order = malloc(lines * sizeof(*order)), i, j, t;

	for (i = 0; i < lines; i++)
		order[i] = i;
	srandom(1);
	for (i = lines - 1; i > 0; i--) {
		j = ((size_t)random() << 31 ^ (size_t)random()) % i;
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < lines; i++)
		buf[order[i] * (CHASE_LINE / 8)] = order[(i + 1) % lines];
	free(order);
}

/* ns per dependent load, walking the cycle; the median of CHASE_RUNS walks. */
static double chase_ns(size_t bytes)
{
	size_t lines = bytes / CHASE_LINE, at = 0;
	double ns[CHASE_RUNS];
	struct timespec t0, t1;
	uint64_t *buf;
	unsigned int r, s;

	/* 4 KiB pages, as the kernel's preallocated maps have: TLB misses count. */
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return -1;
	madvise(buf, bytes, MADV_NOHUGEPAGE);
	chase_link(buf, lines);
	for (s = 0; s < CHASE_STEPS; s++) /* warm: the walk's own first pass */
		at = buf[at * (CHASE_LINE / 8)];
	for (r = 0; r < CHASE_RUNS; r++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (s = 0; s < CHASE_STEPS; s++)
			at = buf[at * (CHASE_LINE / 8)];
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns[r] = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 +
			 (double)(t1.tv_nsec - t0.tv_nsec)) /
			CHASE_STEPS;
	}
	/* at is used, so the walk is not optimised away. */
	if (at == (size_t)-1)
		printf("?");
	munmap(buf, bytes);
	return median(ns, CHASE_RUNS);
}

/* The pointer-chase floor, and what it makes of the targets of the many-source paths. */
static void bench_chase(const struct figure *bare, long long table_bytes)
{
	static const size_t sizes[] = { 1 << 20, 8 << 20, 64 << 20 };
	double table_ns;
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		printf("%-48s %6.1f ns/load\n",
		       sizes[i] == (1 << 20)   ? "pointer chase, 1 MiB buffer"
		       : sizes[i] == (8 << 20) ? "pointer chase, 8 MiB buffer"
					       : "pointer chase, 64 MiB buffer",
		       chase_ns(sizes[i]));
	table_ns = chase_ns((size_t)table_bytes);
	printf("%-48s %6.1f ns/load (%lld B, the default table)\n",
	       "pointer chase, a buffer the table's size", table_ns, table_bytes);
	printf("%-48s %6.1f ns (bare %.1f + 1.3 x %.1f)\n", "bound: 1M tracked under their limits",
	       bare->ns + 1.3 * table_ns, bare->ns, table_ns);
	printf("%-48s %6.1f ns (bare %.1f + 1.1 x %.1f)\n", "bound: new source refused, table full",
	       bare->ns + 1.1 * table_ns, bare->ns, table_ns);
}

/* A spoofed flood's packets past the new-source budget, into a near-empty table, then a full one.
 */
static int bench_spoofed_both(int drop_fd, const struct frame *f)
{
	const char *empty = "sluice, new source past the budget, near empty";
	const char *full = "sluice, new source past the budget, full of live";
	int err = bench_spoofed(drop_fd, f, empty, false);

	return err ?: bench_spoofed(drop_fd, f, full, true);
}

/*
 * `sluice-bench spoofed`: the spoofed flood's path beside its floor, in one
 * run, for work on that path (a minute, where the whole run takes five).
 */
static int run_spoofed(int drop_fd, const struct frame *f)
{
	struct floor *fl = floor__open_and_load();
	int err;

	if (!fl)
		return -errno ?: -EINVAL;
	err = bench_floor_table("floor: parse, hash, filter word, early clock",
				bpf_program__fd(fl->progs.floor_filter), drop_fd, f);
	floor__destroy(fl);
	return err ?: bench_spoofed_both(drop_fd, f);
}

/* Every packet from a new source: given a bucket, or refused one. */
static int run_new(int drop_fd, const struct frame *f)
{
	int err = bench_new_source(drop_fd, f, "sluice, new source, table with room", false, 1);

	if (!err)
		err = bench_new_source(drop_fd, f, "sluice, new source, full of idle (replaces)",
				       true, RATE_METERED_MAX_PER_SEC);
	if (!err)
		err = bench_new_source(drop_fd, f, "sluice, new source, full of live (refused)",
				       true, 1);
	return err ?: bench_spoofed_both(drop_fd, f);
}

static int run(int drop_fd, int tx_fd, const struct frame *f)
{
	struct figure fig = measure(drop_fd, drop_fd, f, REPEAT);
	long long table_bytes = 0;
	int err;

	report("bare XDP_DROP (against itself)", &fig, "bare XDP_DROP");
	err = bench_floors(drop_fd, f);
	/*
	 * Default burst: over its limit after the first second of rate. At
	 * 10/s a refused packet waits up to 100 ms, long enough for the jiffy
	 * check; at 1000/s the wait is under a tick, so every packet reads the
	 * precise clock.
	 */
	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 10/s", 10, 0);
	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 1000/s", 1000, 0);
	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 1/s", 1, 1);
	if (!err)
		err = bench_banned(drop_fd, f);
	if (!err)
		err = run_new(drop_fd, f);
	if (!err)
		err = bench_prove(tx_fd);
	if (!err)
		err = bench_algorithms(drop_fd, f);
	if (!err)
		err = run_tracked(drop_fd, f);
	if (!err)
		err = bench_import();
	if (!err)
		err = bench_memory(&table_bytes);
	if (!err)
		bench_table_load();
	if (!err)
		bench_chase(&fig, table_bytes);
	return err;
}

/* One source over its limit: at 10/s (jiffies answer) and 1000/s (the precise clock). */
static int run_over_single(int drop_fd, const struct frame *f)
{
	int err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 10/s", 10, 0);

	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 1000/s", 1000, 0);
	return err ?: bench_banned(drop_fd, f);
}

/*
 * The figures named: `single`, or a count of tracked sources all over
 * their limits (all under them, with `under`).
 */
static int run_named(int drop_fd, const struct frame *f, int argc, char **argv, bool over)
{
	struct figure fig;
	char *end;
	long n;
	int i, err = 0;

	for (i = 0; i < argc && !err; i++) {
		if (over && !strcmp(argv[i], "single")) {
			err = run_over_single(drop_fd, f);
			continue;
		}
		n = strtol(argv[i], &end, 10);
		if (*end || n < 1 || n > (long)TABLE_SIZE) {
			fprintf(stderr, "sluice-bench: %s: not a count of 1 to %u: %s\n",
				over ? "over" : "under", TABLE_SIZE, argv[i]);
			return -EINVAL;
		}
		err = bench_tracked(drop_fd, f, (__u32)n, over, &fig);
	}
	return err;
}

/*
 * The over-limit cache's paths alone, quicker than everything: one source
 * over its limit, and 1 to 100,000 tracked sources all over their limits.
 * Given words, only those: `single` (the one-source figures) or counts.
 */
static int run_over(int drop_fd, const struct frame *f, int argc, char **argv)
{
	static const __u32 counts[] = { 1, 1000, 10000, 30000, 100000 };
	struct figure fig;
	size_t i;
	int err;

	if (argc > 0)
		return run_named(drop_fd, f, argc, argv, true);
	err = run_over_single(drop_fd, f);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]) && !err; i++)
		err = bench_tracked(drop_fd, f, counts[i], true, &fig);
	return err;
}

/*
 * sluice-bench [algorithms | floors | new | over [single | N]... | under N...]:
 * everything, or only the algorithms', the floors', the new sources', the
 * over-limit or the under-limit figures named.
 */
int main(int argc, char **argv)
{
	bool only_algorithms = argc > 1 && !strcmp(argv[1], "algorithms");
	bool only_floors = argc > 1 && !strcmp(argv[1], "floors");
	bool only_new = argc > 1 && !strcmp(argv[1], "new");
	bool only_over = argc > 1 && !strcmp(argv[1], "over");
	bool only_under = argc > 2 && !strcmp(argv[1], "under");
	bool only_prove = argc > 1 && !strcmp(argv[1], "prove");
	bool only_spoofed = argc > 1 && !strcmp(argv[1], "spoofed");
	struct frame_spec spec = { .family = 4, .src = "10.0.0.1", .payload = 18 };
	struct bench *base;
	struct frame f;
	int err;

	if (geteuid() != 0) {
		fprintf(stderr, "sluice-bench: must run as root (BPF_PROG_TEST_RUN)\n");
		return 2;
	}
	frame_build(&f, &spec);
	base = bench__open_and_load();
	if (!base) {
		fprintf(stderr, "sluice-bench: cannot load the benchmark programs: %s\n",
			strerror(errno));
		return 1;
	}
	printf("BPF_PROG_TEST_RUN, %d runs x %d rounds per figure (medians; %d runs for new "
	       "sources into a table with room); 64-byte IPv4 UDP frame; %u buckets for the "
	       "many-source cases\n",
	       REPEAT, ROUNDS, NEW_REPEAT, TABLE_SIZE);
	if (only_algorithms)
		err = bench_algorithms(bpf_program__fd(base->progs.bare_drop), &f);
	else if (only_floors)
		err = bench_floors(bpf_program__fd(base->progs.bare_drop), &f);
	else if (only_new)
		err = run_new(bpf_program__fd(base->progs.bare_drop), &f);
	else if (only_spoofed)
		err = run_spoofed(bpf_program__fd(base->progs.bare_drop), &f);
	else if (only_prove)
		err = bench_prove(bpf_program__fd(base->progs.bare_tx));
	else if (only_over)
		err = run_over(bpf_program__fd(base->progs.bare_drop), &f, argc - 2, argv + 2);
	else if (only_under)
		err = run_named(bpf_program__fd(base->progs.bare_drop), &f, argc - 2, argv + 2,
				false);
	else
		err = run(bpf_program__fd(base->progs.bare_drop),
			  bpf_program__fd(base->progs.bare_tx), &f);
	if (err)
		fprintf(stderr, "sluice-bench: %s\n", strerror(-err));
	bench__destroy(base);
	return err ? 1 : 0;
}
