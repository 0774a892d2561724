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

static const char stats_usage[] =
	"Usage: sluice stats IFACE [--json | --prometheus] [--watch [SECONDS] [--count N]]\n"
	"\n"
	"Print packets and bytes per outcome summed over all CPUs, per rule, and the\n"
	"state of the bucket table.\n"
	"  --json          one JSON document (with --watch: one per line, per interval)\n"
	"  --prometheus    the Prometheus text exposition format\n"
	"  --watch [S]     redraw every S seconds (default 1, 0.1 to 3600) with per-second\n"
	"                  rates: packets (pps) and bits (bits/s); Ctrl-C stops\n"
	"  --count N       with --watch: stop after N intervals\n"
	"\n"
	"Counters:\n";

#define WATCH_DEFAULT_NS NSEC_PER_SEC
#define WATCH_MIN_NS	 (NSEC_PER_SEC / 10)
#define WATCH_MAX_NS	 (3600 * NSEC_PER_SEC)

enum { OPT_JSON = 256, OPT_PROMETHEUS, OPT_WATCH, OPT_COUNT };

static const struct option stats_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
	{ "watch", optional_argument, NULL, OPT_WATCH },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

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

static void usage(void)
{
	int i;

	fputs(stats_usage, stdout);
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		printf("  %-14s %s\n", counter_info[i].name, counter_info[i].help);
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

/*
 * --watch takes its seconds as --watch=S or as the next word when that
 * starts with a digit, so that `stats eth0 --watch 2` reads naturally
 * while `stats --watch eth0` still finds the interface.
 */
static const char *watch_value(int argc, char **argv)
{
	if (optarg)
		return optarg;
	if (optind < argc && argv[optind][0] >= '0' && argv[optind][0] <= '9')
		return argv[optind++];
	return NULL;
}

static int stats_option(struct stats_opts *o, int opt, int argc, char **argv)
{
	const char *why, *val;

	switch (opt) {
	case OPT_JSON:
	case OPT_PROMETHEUS:
		if (o->format != FORMAT_TABLE)
			return fail_input("stats", "--json and --prometheus exclude each other");
		o->format = opt == OPT_JSON ? FORMAT_JSON : FORMAT_PROMETHEUS;
		return -1;
	case OPT_WATCH:
		val = watch_value(argc, argv);
		o->watch_ns = WATCH_DEFAULT_NS;
		if (val && parse_seconds(val, WATCH_MIN_NS, WATCH_MAX_NS, &o->watch_ns, &why))
			return fail_input("stats", "bad value '%s' for --watch: %s", val, why);
		return -1;
	case OPT_COUNT:
		if (parse_count(optarg, 1, UINT32_MAX, &o->count, &why))
			return fail_input("stats", "bad value '%s' for --count: %s", optarg, why);
		return -1;
	}
	return EXIT_BAD_INPUT;
}

/* Returns -1 to go on, or the exit status. */
static int stats_parse(int argc, char **argv, struct stats_opts *o)
{
	int opt, ret;

	while ((opt = cli_next_option("stats", argc, argv, stats_options)) != -1) {
		if (opt == 'h') {
			usage();
			return EXIT_OK;
		}
		ret = stats_option(o, opt, argc, argv);
		if (ret >= 0)
			return ret;
	}
	if (cli_one_ifname("stats", argc, argv, &o->ifname))
		return EXIT_BAD_INPUT;
	if (o->count && !o->watch_ns)
		return fail_input("stats", "--count needs --watch");
	if (o->watch_ns && o->format == FORMAT_PROMETHEUS)
		return fail_input("stats", "--prometheus prints once; scrape 'sluice exporter' "
					   "for a series");
	return -1;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o = {};
	struct sigaction sa = { .sa_handler = on_signal };
	struct state st;
	int ret;

	ret = stats_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = require_root("stats");
	if (ret)
		return ret;

	ret = state_open_cmd("stats", o.ifname, &st);
	if (ret)
		return ret;
	if (o.watch_ns) {
		/* No SA_RESTART: Ctrl-C must end the sleep, not resume it. */
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		ret = stats_watch(&o, &st);
	} else {
		ret = stats_once(&o, &st);
	}
	state_close(&st);
	return ret;
}
