// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-replay: the traffic patterns of docs/algorithms.md through each
 * algorithm in the real datapath (BPF_PROG_TEST_RUN under the test clock),
 * deterministically. For each algorithm and pattern it prints the most
 * packets passed in any true sliding window of the algorithm's length
 * (GCRA: burst / rate) against the limit per window and the bound its
 * definition gives, and the mean admitted rate against the configured one.
 * A last pattern runs every CPU on one source at once (seeded), and is
 * checked against the bounds only: the interleaving is not deterministic.
 *
 *   sluice-replay [--plot DIR]   DIR gets edge.dat and warmup.dat for gnuplot
 *
 * Needs root (BPF_PROG_TEST_RUN). Exit 1 when a bound is broken.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fixture.h"
#include "frames.h"
#include "replay.h"
#include "warmup.h"
#include "values/rate.h"
#include "values/words.h"

#define LIMIT	  100 /* per window, or the burst */
#define WINDOW_NS NSEC_PER_SEC
#define CPU_STEPS 4000 /* many CPUs: 1 ms steps */
#define CPU_SEED  13
#define EDGE_BIN  (5 * NSEC_PER_SEC / 1000)
#define WARMUP_S  5

struct algo {
	const char *name;
	uint8_t algorithm;
	uint64_t warmup_ns;
	uint64_t burst;
	uint64_t bound; /* most in any window the definition allows, on one CPU */
};

/* All at 100/s: a 1 s window of 100, a bucket of 100 (1 s of rate), a warm-up of 5 s. */
static const struct algo algos[] = {
	{ "gcra", SLUICE_METER_GCRA, 0, LIMIT, 2 * LIMIT + 1 },
	{ "gcra --warmup 5s", SLUICE_METER_GCRA, WARMUP_S *NSEC_PER_SEC, 0, LIMIT + 1 },
	{ "sliding-window", SLUICE_METER_SLIDING_WINDOW, 0, 0, 2 * LIMIT },
	{ "fixed-window", SLUICE_METER_FIXED_WINDOW, 0, 0, 2 * LIMIT },
};

#define ALGOS (sizeof(algos) / sizeof(algos[0]))

static void algo_settings(const struct algo *a, struct settings *s)
{
	settings_per_second(s, LIMIT, a->burst);
	s->algorithm = a->algorithm;
	s->warmup_ns = a->warmup_ns;
}

/* Many CPUs: each sends a seeded number of packets per 1 ms step, the clock shared. */
struct cpu_worker {
	pthread_t thread;
	int cpu;
	struct fixture *fx;
	pthread_barrier_t *step;
	uint64_t passed, offered;
	int err;
};

static void *cpu_worker_run(void *arg)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.13", .payload = 18 };
	struct cpu_worker *w = arg;
	unsigned int seed = CPU_SEED + (unsigned int)w->cpu;
	struct frame f;
	int i, k, n;

	frame_build(&f, &spec);
	w->err = pin_thread_to_cpu(w->cpu);
	for (i = 0; i < CPU_STEPS; i++) {
		pthread_barrier_wait(w->step); /* the clock is set */
		n = rand_r(&seed) % 4;
		for (k = 0; k < n; k++) {
			w->offered++;
			w->passed += fixture_run(w->fx, f.data, f.len, 1) == XDP_PASS;
		}
		pthread_barrier_wait(w->step); /* the step is done */
	}
	return NULL;
}

/* Passed per step over CPU_STEPS steps of 1 ms; -errno when it could not run. */
static int many_cpus(const struct settings *s, uint64_t *passed, uint64_t *offered, int *ncpu)
{
	struct cpu_worker *w;
	pthread_barrier_t step;
	struct fixture fx;
	int i, err;

	*ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	w = calloc((size_t)*ncpu, sizeof(*w));
	if (!w)
		return -ENOMEM;
	err = fixture_open_test_clock(&fx, s, 64);
	if (err) {
		free(w);
		return err;
	}
	pthread_barrier_init(&step, NULL, (unsigned int)*ncpu + 1);
	for (i = 0; i < *ncpu; i++) {
		w[i] = (struct cpu_worker){ .cpu = i, .fx = &fx, .step = &step };
		pthread_create(&w[i].thread, NULL, cpu_worker_run, &w[i]);
	}
	for (i = 0; i < CPU_STEPS; i++) {
		fixture_set_clock(&fx, REPLAY_START_NS + (uint64_t)i * (NSEC_PER_SEC / 1000));
		pthread_barrier_wait(&step);
		pthread_barrier_wait(&step);
	}
	*passed = *offered = 0;
	for (i = 0; i < *ncpu; i++) {
		pthread_join(w[i].thread, NULL);
		err = err ? err : -w[i].err;
		*passed += w[i].passed;
		*offered += w[i].offered;
	}
	pthread_barrier_destroy(&step);
	fixture_close(&fx);
	free(w);
	return err;
}

static int print_row(const struct algo *a, const char *pattern, uint64_t max, uint64_t bound,
		     double mean)
{
	int ok = max <= bound;

	printf("| %-17s | %-27s | %7llu | %5d | %5llu | %8.2f/s | %4d/s | %s |\n", a->name, pattern,
	       (unsigned long long)max, LIMIT, (unsigned long long)bound, mean, LIMIT,
	       ok ? "yes" : "NO");
	return ok;
}

/* The edge pattern's admitted packets per 5 ms bin, one column per algorithm. */
static void plot_edge(FILE *out, struct replay_result *res)
{
	uint64_t from = 10800 * (NSEC_PER_SEC / 1000), to = 11300 * (NSEC_PER_SEC / 1000), t;
	size_t i, k, n;

	fprintf(out, "time_s");
	for (i = 0; i < ALGOS; i++)
		fprintf(out, " \"%s\"", algos[i].name);
	fprintf(out, "\n");
	for (t = from; t < to; t += EDGE_BIN) {
		fprintf(out, "%.3f", (double)t / NSEC_PER_SEC);
		for (i = 0; i < ALGOS; i++) {
			for (n = 0, k = 0; k < res[i].passed; k++)
				n += res[i].passed_at[k] >= t && res[i].passed_at[k] < t + EDGE_BIN;
			fprintf(out, " %zu", n);
		}
		fprintf(out, "\n");
	}
}

/* Warm-up from cold under the steady flood: each interval against Guava's curve. */
static void plot_warmup(FILE *out, const struct replay_result *r)
{
	double interval = (double)NSEC_PER_SEC / LIMIT, max = WARMUP_S * LIMIT, stored = max;
	size_t k;

	fprintf(out, "packet interval_ms guava_ms\n");
	for (k = 1; k < r->passed && k < 2 * WARMUP_S * LIMIT; k++) {
		/* Guava: the permit spent from `stored` costs the curve's integral over it. */
		double guava = 2 * stored > max + 1
				       ? interval + 2 * interval * (2 * stored - 1 - max) / max
				       : interval;

		fprintf(out, "%zu %.4f %.4f\n", k,
			(double)(r->passed_at[k] - r->passed_at[k - 1]) / 1e6, guava / 1e6);
		stored = stored > 0 ? stored - 1 : 0;
	}
}

static int write_plots(const char *dir, struct replay_result *edge,
		       const struct replay_result *warm)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/edge.dat", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	plot_edge(f, edge);
	fclose(f);
	snprintf(path, sizeof(path), "%s/warmup.dat", dir);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	plot_warmup(f, warm);
	fclose(f);
	return 0;
}

static int replay_all(const char *plot_dir)
{
	struct replay_result edge[ALGOS] = {}, warm = {}, r;
	uint64_t passed, offered, bound;
	int p, ok = 1, err = 0, ncpu = 0;
	struct settings s;
	size_t i;

	printf("| algorithm         | pattern                     | max/1 s | limit | bound |"
	       " mean rate  | rate   | within |\n");
	printf("|---|---|---:|---:|---:|---:|---:|---|\n");
	for (i = 0; i < ALGOS && !err; i++) {
		algo_settings(&algos[i], &s);
		for (p = 0; p < PATTERN_COUNT && !err; p++) {
			err = replay_run(&s, &replay_patterns[p], &r);
			if (err)
				break;
			ok &= print_row(&algos[i], replay_patterns[p].name,
					replay_max_in_window(&r, WINDOW_NS), algos[i].bound,
					replay_mean_rate(&r, &replay_patterns[p]));
			if (p == PATTERN_EDGE)
				edge[i] = r;
			else if (p == PATTERN_STEADY && algos[i].warmup_ns)
				warm = r;
			else
				replay_free(&r);
		}
		if (err)
			break;
		/* Every CPU at once: 4 s, so at most five windows (or the bucket and 4 s of rate).
		 */
		err = many_cpus(&s, &passed, &offered, &ncpu);
		bound = algos[i].burst ? algos[i].burst + 4 * LIMIT + (uint64_t)ncpu
				       : 5 * LIMIT + (uint64_t)ncpu;
		if (!err)
			ok &= print_row(&algos[i], "many CPUs (total in 4 s)", passed, bound,
					(double)passed / 4);
	}
	if (!err && plot_dir)
		err = write_plots(plot_dir, edge, &warm);
	for (i = 0; i < ALGOS; i++)
		replay_free(&edge[i]);
	replay_free(&warm);
	if (err) {
		fprintf(stderr, "sluice-replay: %s\n", strerror(-err));
		return 2;
	}
	printf("\n%d CPUs in the many-CPUs pattern; every bound %s\n", ncpu,
	       ok ? "held" : "NOT held");
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *plot_dir = NULL;

	if (argc == 3 && !strcmp(argv[1], "--plot"))
		plot_dir = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: sluice-replay [--plot DIR]\n");
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "sluice-replay: must run as root (BPF_PROG_TEST_RUN)\n");
		return 2;
	}
	return replay_all(plot_dir);
}
