// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-bench: ns/packet of the datapath from BPF_PROG_TEST_RUN with
 * `repeat`, against the floor of a bare XDP_DROP program. It prints
 * figures; it is a benchmark, not a test, and never fails on a slow machine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bench.skel.h"
#include "sluice.skel.h"
#include "conf.h"
#include "frames.h"
#include "policy.h"
#include "state.h"

#define REPEAT	     1000000
#define ROUNDS	     31
#define MANY_SOURCES 100000

struct figure {
	double ns;    /* median ns/packet of the program under test */
	double floor; /* median ns/packet of its floor, measured alongside */
	double ratio; /* median of the per-round ratios */
};

static double run_once(int prog_fd, const struct frame *f)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = (__u32)f->len,
		    .repeat = REPEAT);

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
static struct figure measure(int prog_fd, int floor_fd, const struct frame *f)
{
	double ns[ROUNDS], floor[ROUNDS], ratio[ROUNDS];
	struct figure fig;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		floor[i] = run_once(floor_fd, f);
		ns[i] = run_once(prog_fd, f);
		ratio[i] = floor[i] > 0 ? ns[i] / floor[i] : 0;
	}
	fig.ns = median(ns, ROUNDS);
	fig.floor = median(floor, ROUNDS);
	fig.ratio = median(ratio, ROUNDS);
	return fig;
}

static void report(const char *name, const struct figure *fig, const char *floor_name)
{
	printf("%-40s %6.1f ns/packet  %5.2fx %s (%.1f ns)\n", name, fig->ns, fig->ratio,
	       floor_name, fig->floor);
}

/* A fresh limiter (empty buckets) at `rate`/s; burst 0 means the default. */
static struct sluice *limiter_open(uint64_t rate, uint64_t burst)
{
	struct policy_doc doc;
	struct sluice *skel;
	struct state st;
	const char *why;

	doc_init(&doc);
	doc.dflt.rate.amount = rate;
	doc.dflt.rate.period_ns = NSEC_PER_SEC;
	doc.dflt.burst.value = burst;
	if (doc_validate(&doc, &why))
		return NULL;
	skel = sluice__open_and_load();
	if (!skel)
		return NULL;
	state_from_object(skel->obj, &st);
	if (policy_create(&st.maps, &doc)) {
		sluice__destroy(skel);
		return NULL;
	}
	return skel;
}

/* A rotator that gives every run the next of MANY_SOURCES sources. */
static struct bench *rotator_open(int target_fd)
{
	struct bench *b;
	__u32 zero = 0;

	b = bench__open();
	if (!b)
		return NULL;
	b->rodata->source_count = MANY_SOURCES;
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
	struct sluice *lim = limiter_open(rate, burst);
	struct figure fig;

	if (!lim)
		return -errno ?: -EINVAL;
	fig = measure(bpf_program__fd(lim->progs.sluice_xdp), drop_fd, f);
	report(name, &fig, "bare XDP_DROP");
	sluice__destroy(lim);
	return 0;
}

/* Many sources: rotator -> sluice against rotator -> XDP_DROP. */
static int bench_many(int drop_fd, const struct frame *f, const char *name, uint64_t rate,
		      uint64_t burst)
{
	struct bench *floor = NULL, *front = NULL;
	struct sluice *lim;
	struct figure fig;
	int err = 0;

	lim = limiter_open(rate, burst);
	if (lim) {
		floor = rotator_open(drop_fd);
		front = rotator_open(bpf_program__fd(lim->progs.sluice_xdp));
	}
	if (!lim || !floor || !front) {
		err = -errno ?: -EINVAL;
		goto out;
	}
	/* One pass over every source first, so buckets exist and the map is warm. */
	run_once(bpf_program__fd(front->progs.rotate_source), f);
	fig = measure(bpf_program__fd(front->progs.rotate_source),
		      bpf_program__fd(floor->progs.rotate_source), f);
	report(name, &fig, "rotator+DROP");
out:
	bench__destroy(front);
	bench__destroy(floor);
	sluice__destroy(lim);
	return err;
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
	lim = limiter_open(1000, 0);
	if (!lim) {
		unlink(path);
		return -EINVAL;
	}
	state_from_object(lim->obj, &st);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = cidr_file_parse(path, &list, err, sizeof(err));
	parse_s = seconds_since(&t0);
	if (!ret)
		ret = list_update(&st.maps, false, list.items, list.count, true);
	if (!ret)
		printf("%-40s %6.2f s (parse %.2f s), target < 2 s\n",
		       "allow list import, 100,000 entries", seconds_since(&t0), parse_s);
	free(list.items);
	sluice__destroy(lim);
	unlink(path);
	return ret;
}

static int run(int drop_fd, const struct frame *f)
{
	struct figure fig = measure(drop_fd, drop_fd, f);
	int err;

	report("bare XDP_DROP (against itself)", &fig, "bare XDP_DROP");
	/*
	 * Default burst: over its limit after the first second of rate. At
	 * 10/s a refused packet waits up to 100 ms, long enough for the jiffy
	 * check; at 1000/s the wait is under a tick, so every packet reads the
	 * precise clock.
	 */
	err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 10/s", 10, 0);
	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 1000/s", 1000, 0);
	if (!err)
		err = bench_single(drop_fd, f, "sluice, 1 source over its limit, 1/s", 1, 1);
	if (!err)
		err = bench_many(drop_fd, f, "sluice, 100,000 sources over limit", 1, 1);
	if (!err)
		err = bench_many(drop_fd, f, "sluice, 100,000 sources under limit", 1000000000ULL,
				 1000);
	if (!err)
		err = bench_import();
	return err;
}

int main(void)
{
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
	printf("BPF_PROG_TEST_RUN, %d runs x %d rounds per figure (medians); "
	       "64-byte IPv4 UDP frame\n",
	       REPEAT, ROUNDS);
	err = run(bpf_program__fd(base->progs.bare_drop), &f);
	if (err)
		fprintf(stderr, "sluice-bench: %s\n", strerror(-err));
	bench__destroy(base);
	return err ? 1 : 0;
}
