// SPDX-License-Identifier: GPL-2.0
/*
 * sluice stats: the datapath counters summed over CPUs, once or redrawn
 * every interval with per-second rates (--watch), as a table, JSON or the
 * Prometheus text format. Every row comes from counter_info[].
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "base/clock.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "commands/commands.h"
#include "reads/counters.h"
#include "base/errors.h"
#include "base/json.h"
#include "outputs/prom.h"
#include "pins/state.h"
#include "maps/policy_maps.h"

enum stats_format { FORMAT_TABLE, FORMAT_JSON, FORMAT_PROMETHEUS };

struct stats_opts {
	const char *ifname;
	enum stats_format format;
	uint64_t watch_ns; /* 0: print once */
	uint64_t count;	   /* intervals to print, 0: until interrupted */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void stats_help_more(FILE *out)
{
	int i;

	fprintf(out, "\nCounters:\n");
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		fprintf(out, "  %-14s %s\n", counter_info[i].name, counter_info[i].help);
}

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

static void json_pair(struct json *j, const char *key, const struct sluice_counter_pair *now,
		      const struct sluice_counter_pair *before, uint64_t dt_ns)
{
	struct pair_rate r;

	json_object_begin(j, key);
	json_u64(j, "packets", now->packets);
	json_u64(j, "bytes", now->bytes);
	if (before) {
		r = pair_rate(now, before, dt_ns);
		json_double(j, "pps", r.pps, 3);
		json_double(j, "bps", r.bps, 3);
	} else {
		json_null(j, "pps");
		json_null(j, "bps");
	}
	json_object_end(j);
}

static void json_rules(struct json *j, const struct sample *s, const struct sample *prev,
		       uint64_t dt)
{
	int r, i;

	json_array_begin(j, "rules");
	for (r = 0; r < s->nrules; r++) {
		/* Rules are matched by position: the set does not change between samples. */
		const bool have_prev = prev && r < prev->nrules;

		json_object_begin(j, NULL);
		json_string(j, "rule", s->rules[r].name);
		json_object_begin(j, "counters");
		for (i = 0; i < SLUICE_CNT_MAX; i++)
			if (counter_info[i].per_rule)
				json_pair(j, counter_info[i].name, &s->rules[r].c[i],
					  have_prev ? &prev->rules[r].c[i] : NULL, dt);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_table(struct json *j, const struct sample *s, const struct sample *prev,
		       uint64_t dt)
{
	char key[64];
	int i;

	json_object_begin(j, "table");
	json_u64(j, "sources", s->sources);
	json_u64(j, "capacity", s->capacity);
	json_u64(j, "max_sources", s->max_sources);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (counter_info[i].kind != COUNTER_TABLE)
			continue;
		json_u64(j, counter_info[i].name, s->sum.c[i].packets);
		snprintf(key, sizeof(key), "%s_per_s", counter_info[i].name);
		if (prev)
			json_double(j, key,
				    per_second(s->sum.c[i].packets, prev->sum.c[i].packets, dt), 3);
		else
			json_null(j, key);
	}
	json_object_end(j);
}

/* One document; prev is NULL for a single reading (rates are null). */
static void stats_json(const char *ifname, const struct sample *s, const struct sample *prev)
{
	uint64_t dt = prev ? s->time_ns - prev->time_ns : 0;
	struct json j;
	int i;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "interface", ifname);
	json_u64(&j, "time_ns", s->time_ns);
	if (prev)
		json_double(&j, "interval_s", (double)dt / NSEC_PER_SEC, 6);
	else
		json_null(&j, "interval_s");
	json_object_begin(&j, "counters");
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		json_pair(&j, counter_info[i].name, &s->sum.c[i], prev ? &prev->sum.c[i] : NULL,
			  dt);
	json_object_end(&j);
	json_rules(&j, s, prev, dt);
	json_table(&j, s, prev, dt);
	json_object_end(&j);
	json_finish(&j);
}

static void human_row(const char *rule, const char *name, const struct sluice_counter_pair *now,
		      const struct sluice_counter_pair *before, uint64_t dt)
{
	struct pair_rate r;

	if (rule)
		printf("%-14s %-14s", rule, name);
	else
		printf("%-29s", name);
	printf(" %16llu %18llu", (unsigned long long)now->packets, (unsigned long long)now->bytes);
	if (before) {
		r = pair_rate(now, before, dt);
		printf(" %14.1f %16.0f", r.pps, r.bps);
	}
	putchar('\n');
}

static void human_header(const char *first, const char *second, bool rates)
{
	printf("%-14s %-14s %16s %18s", first, second, "PACKETS", "BYTES");
	if (rates)
		printf(" %14s %16s", "PPS", "BITS/S");
	putchar('\n');
}

static void human_table(const struct sample *s, const struct sample *prev, uint64_t dt)
{
	int i;

	printf("\nTABLE\n");
	printf("%-29s %16llu of %llu buckets (sized for --max-sources %llu)\n", "sources",
	       (unsigned long long)s->sources, (unsigned long long)s->capacity,
	       (unsigned long long)s->max_sources);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (counter_info[i].kind != COUNTER_TABLE)
			continue;
		printf("%-29s %16llu", counter_info[i].name,
		       (unsigned long long)s->sum.c[i].packets);
		if (prev)
			printf("  %.1f/s",
			       per_second(s->sum.c[i].packets, prev->sum.c[i].packets, dt));
		putchar('\n');
	}
}

static void stats_human(const char *ifname, const struct sample *s, const struct sample *prev)
{
	uint64_t dt = prev ? s->time_ns - prev->time_ns : 0;
	int i, r;

	if (prev)
		printf("sluice on %s: rates over the last %.3f s\n", ifname,
		       (double)dt / NSEC_PER_SEC);
	else
		printf("sluice on %s\n", ifname);
	human_header("TRAFFIC", "", prev);
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		if (counter_info[i].kind == COUNTER_TRAFFIC)
			human_row(NULL, counter_info[i].name, &s->sum.c[i],
				  prev ? &prev->sum.c[i] : NULL, dt);
	putchar('\n');
	human_header("RULE", "OUTCOME", prev);
	for (r = 0; r < s->nrules; r++)
		for (i = 0; i < SLUICE_CNT_MAX; i++)
			if (counter_info[i].per_rule)
				human_row(s->rules[r].name, counter_info[i].name, &s->rules[r].c[i],
					  prev && r < prev->nrules ? &prev->rules[r].c[i] : NULL,
					  dt);
	human_table(s, prev, dt);
}

static void stats_print(const struct stats_opts *o, const struct state *st, const struct sample *s,
			const struct sample *prev)
{
	struct prom_iface pi = { o->ifname, s, false };
	unsigned int prog_id;

	switch (o->format) {
	case FORMAT_JSON:
		stats_json(o->ifname, s, prev);
		break;
	case FORMAT_PROMETHEUS:
		pi.attached = !strcmp(state_health(st, &prog_id), STATE_OK);
		prom_write(stdout, &pi, 1);
		break;
	case FORMAT_TABLE:
		stats_human(o->ifname, s, prev);
		break;
	}
	fflush(stdout);
}

static void sleep_until(struct timespec *next, uint64_t interval_ns)
{
	next->tv_sec += (time_t)(interval_ns / NSEC_PER_SEC);
	next->tv_nsec += (long)(interval_ns % NSEC_PER_SEC);
	if (next->tv_nsec >= (long)NSEC_PER_SEC) {
		next->tv_sec++;
		next->tv_nsec -= (long)NSEC_PER_SEC;
	}
	/* A signal ends the wait early; the caller checks `stop`. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, next, NULL);
}

/* A frame in place on a terminal; elsewhere frames follow one another. */
static void frame_begin(const struct stats_opts *o, bool tty, uint64_t frame)
{
	if (o->format != FORMAT_TABLE)
		return;
	if (tty)
		fputs("\033[H\033[2J", stdout);
	else if (frame)
		putchar('\n');
}

static int stats_watch(const struct stats_opts *o, const struct state *st)
{
	struct sample prev, cur;
	struct timespec next;
	bool tty = isatty(STDOUT_FILENO);
	uint64_t frame;
	int err;

	err = sample_read(st, &prev);
	if (err)
		return fail_state("stats", err, o->ifname, "read the counters");
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (frame = 0; !o->count || frame < o->count; frame++) {
		sleep_until(&next, o->watch_ns);
		if (stop)
			break;
		if (state_exists(o->ifname) <= 0) {
			sample_free(&prev);
			return fail_runtime("stats", 0, "%s was detached", o->ifname);
		}
		err = sample_read(st, &cur);
		if (err)
			break;
		frame_begin(o, tty, frame);
		stats_print(o, st, &cur, &prev);
		sample_free(&prev);
		prev = cur;
	}
	sample_free(&prev);
	if (err)
		return fail_state("stats", err, o->ifname, "read the counters");
	return EXIT_OK;
}

static int stats_once(const struct stats_opts *o, const struct state *st)
{
	struct sample s;
	int err;

	err = sample_read(st, &s);
	if (err)
		return fail_state("stats", err, o->ifname, "read the counters");
	stats_print(o, st, &s, NULL);
	sample_free(&s);
	return EXIT_OK;
}

static int stats_check(struct cli_args *a)
{
	if (a->nargs)
		return fail_input("stats", "unexpected argument '%s'", a->args[0]);
	if (a->json && a->prometheus)
		return fail_input("stats", "--json and --prometheus exclude each other");
	if (a->given[OPT_COUNT] && !a->watch_ns)
		return fail_input("stats", "--count needs --watch");
	if (a->watch_ns && a->prometheus)
		return fail_input("stats", "--prometheus prints once; scrape 'sluice exporter' "
					   "for a series");
	return -1;
}

static int stats_run(struct cli_args *a, struct state *st)
{
	struct stats_opts o = { .ifname = a->ifname, .watch_ns = a->watch_ns, .count = a->count };
	struct sigaction sa = { .sa_handler = on_signal };

	o.format = a->json ? FORMAT_JSON : a->prometheus ? FORMAT_PROMETHEUS : FORMAT_TABLE;
	if (!o.watch_ns)
		return stats_once(&o, st);
	/* No SA_RESTART: Ctrl-C must end the sleep, not resume it. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return stats_watch(&o, st);
}

const struct command cmd_stats = {
	.id = CMD_STATS,
	.name = "stats",
	.summary = "print the counters of an interface, once or live",
	.synopsis = "IFACE [--json | --prometheus] [--watch [SECONDS] [--count N]]",
	.description =
		"Print packets and bytes per outcome summed over all CPUs, per rule, and the\n"
		"state of the bucket table. With --watch, redraw every interval with\n"
		"per-second rates: packets (pps) and bits (bits/s); with --json, one JSON\n"
		"document per line, per interval.",
	.iface = IFACE_REQUIRED,
	.root = true,
	.state = USE_READ,
	.check = stats_check,
	.run = stats_run,
	.help_more = stats_help_more,
};
