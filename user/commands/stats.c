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
#include "base/errors.h"
#include "base/signals.h"
#include "commands/commands.h"
#include "outputs/ban_audit.h"
#include "outputs/counters.h"
#include "outputs/prom.h"

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

static int stats_print(const struct stats_opts *o, const struct state *st, const struct sample *s,
		       const struct sample *prev)
{
	struct prom_iface pi = { o->ifname, s, false };
	unsigned int prog_id;
	int err = 0;

	switch (o->format) {
	case FORMAT_JSON:
		err = counters_json(o->ifname, s, prev);
		break;
	case FORMAT_PROMETHEUS:
		pi.attached = !strcmp(state_health(st, &prog_id), STATE_OK);
		prom_write(stdout, &pi, 1);
		break;
	case FORMAT_TABLE:
		counters_table(o->ifname, s, prev);
		break;
	}
	fflush(stdout);
	return fail_json("stats", err);
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
	int err, ret = EXIT_OK;

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
		ban_audit_notice(st, NULL, "stats");
		frame_begin(o, tty, frame);
		ret = stats_print(o, st, &cur, &prev);
		sample_free(&prev);
		prev = cur;
		if (ret)
			break;
	}
	sample_free(&prev);
	if (err)
		return fail_state("stats", err, o->ifname, "read the counters");
	return ret;
}

static int stats_once(const struct stats_opts *o, const struct state *st)
{
	struct sample s;
	int err;

	err = sample_read(st, &s);
	if (err)
		return fail_state("stats", err, o->ifname, "read the counters");
	ban_audit_notice(st, NULL, "stats");
	err = stats_print(o, st, &s, NULL);
	sample_free(&s);
	return err;
}

static int stats_check(struct cli_args *a)
{
	if (a->json && a->cmd.stats.prometheus)
		return fail_input("stats", "--json and --prometheus exclude each other");
	if (a->given[OPT_COUNT] && !a->cmd.stats.watch_ns)
		return fail_input("stats", "--count needs --watch");
	if (a->cmd.stats.watch_ns && a->cmd.stats.prometheus)
		return fail_input("stats", "--prometheus prints once; scrape 'sluice exporter' "
					   "for a series");
	return -1;
}

static int stats_run(struct cli_args *a, struct state *st)
{
	struct stats_opts o = { .ifname = a->ifname,
				.watch_ns = a->cmd.stats.watch_ns,
				.count = a->cmd.stats.count };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t ends;
	int sig;

	o.format = a->json		     ? FORMAT_JSON
		   : a->cmd.stats.prometheus ? FORMAT_PROMETHEUS
					     : FORMAT_TABLE;
	if (!o.watch_ns)
		return stats_once(&o, st);
	/* No SA_RESTART: Ctrl-C (or a closed terminal) must end the sleep, not resume it. */
	stop_signals(&ends);
	for (sig = 1; sig < NSIG; sig++)
		if (sigismember(&ends, sig) == 1)
			sigaction(sig, &sa, NULL);
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
	.state = USE_READ,
	.check = stats_check,
	.run = stats_run,
	.help_more = stats_help_more,
};
