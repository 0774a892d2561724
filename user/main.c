// SPDX-License-Identifier: GPL-2.0
/* The sluice command table and dispatch, nothing else. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "base/clock.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "commands/commands.h"
#include "base/errors.h"
#include "base/json.h"
#include "pins/state.h"
#include "maps/policy_maps.h"

#ifndef SLUICE_VERSION
#define SLUICE_VERSION "0.1.0"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "attach", cmd_attach, "start limiting every source on an interface" },
	{ "set", cmd_set, "change the default rate, burst or action live" },
	{ "detach", cmd_detach, "stop limiting and remove all state" },
	{ "status", cmd_status, "list attached interfaces and their settings" },
	{ "stats", cmd_stats, "print the counters of an interface, once or live" },
	{ "rule", cmd_rule, "add, delete or list rules for source CIDRs and classes" },
	{ "allow", cmd_allow, "add, delete or list sources never limited" },
	{ "deny", cmd_deny, "add, delete or list sources always dropped" },
	{ "apply", cmd_apply, "replace the whole policy from a file, atomically" },
	{ "show", cmd_show, "print the running policy in the file format" },
	{ "upgrade", cmd_upgrade, "swap in this build's program, keeping all state" },
	{ "top", cmd_top, "list the busiest sources of an interface" },
	{ "exporter", cmd_exporter, "serve Prometheus metrics for every interface" },
	{ NULL, NULL, NULL },
};

static void usage(void)
{
	const struct command *c;

	printf("Usage: sluice COMMAND [ARGS]   (sluice COMMAND --help for details)\n\n"
	       "A per-source packet rate limiter in XDP.\n\nCommands:\n");
	for (c = commands; c->name; c++)
		printf("  %-8s %s\n", c->name, c->summary);
	printf("\nOptions for every command:\n"
	       "  --wait SECONDS  wait at most this long for another sluice command to finish\n"
	       "                  (default: as long as it takes); then exit 1, nothing changed\n"
	       "  --json          before COMMAND: the same as COMMAND --json, where it has one\n");
	printf("\nExit status: 0 success, 1 system failure, 2 bad input.\n");
}

/* libbpf's warnings, unless SLUICE_DEBUG asks for everything. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !getenv("SLUICE_DEBUG")))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/*
 * Decided before any parsing, so that even an error about the options
 * themselves comes as JSON when the caller asked for JSON.
 */
static bool wants_json(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--json"))
			return true;
	return false;
}

/*
 * Options before the command: only --json, which the command gets as its
 * own (sluice --json status = sluice status --json). Returns the index of
 * the command word, or -1 after saying what is wrong.
 */
static int command_index(int argc, char **argv, bool *json)
{
	int i;

	*json = false;
	for (i = 1; i < argc && !strcmp(argv[i], "--json"); i++)
		*json = true;
	if (i == argc) {
		error_line(NULL, "missing command (see 'sluice --help')");
		return -1;
	}
	if (argv[i][0] == '-' && strcmp(argv[i], "--help") && strcmp(argv[i], "-h") &&
	    strcmp(argv[i], "--version")) {
		error_line(NULL, "unknown option '%s' before the command (see 'sluice --help')",
			   argv[i]);
		return -1;
	}
	return i;
}

/* The command's own arguments: its name, --json when given before it, the rest. */
static int run(const struct command *c, int argc, char **argv, int at, bool json)
{
	char **args = calloc((size_t)argc + 2, sizeof(*args));
	int n = 0, i, ret;

	if (!args) {
		error_line(NULL, "out of memory");
		return EXIT_FAILURE_RUNTIME;
	}
	args[n++] = argv[at];
	if (json)
		args[n++] = "--json";
	for (i = at + 1; i < argc; i++)
		args[n++] = argv[i];
	ret = c->run(n, args);
	free(args);
	return ret;
}

#define WAIT_MAX_NS (1000000 * NSEC_PER_SEC)

/*
 * --wait SECONDS (or --wait=SECONDS), anywhere before "--", bounds the wait
 * for the command lock; it is taken out of argv so every command accepts it.
 * Returns -1 to go on, or the exit status.
 */
static int take_wait_option(int *argc, char **argv)
{
	const char *value, *why;
	uint64_t ns;
	int i, used;

	for (i = 1; i < *argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--wait")) {
			if (i + 1 >= *argc) {
				error_line(NULL, "option '--wait' needs a value");
				return EXIT_BAD_INPUT;
			}
			value = argv[i + 1];
			used = 2;
		} else if (!strncmp(argv[i], "--wait=", 7)) {
			value = argv[i] + 7;
			used = 1;
		} else {
			continue;
		}
		if (parse_seconds(value, 0, WAIT_MAX_NS, &ns, &why)) {
			error_line(NULL, "bad --wait '%s': %s", value, why);
			return EXIT_BAD_INPUT;
		}
		state_lock_wait(ns);
		memmove(&argv[i], &argv[i + used], (size_t)(*argc - i - used + 1) * sizeof(*argv));
		*argc -= used;
		i--;
	}
	return -1;
}

int main(int argc, char **argv)
{
	const struct command *c;
	const char *word;
	bool json;
	int at, ret;

	output_json_errors(wants_json(argc, argv));
	ret = take_wait_option(&argc, argv);
	if (ret >= 0)
		return ret;
	at = command_index(argc, argv, &json);
	if (at < 0)
		return EXIT_BAD_INPUT;
	word = argv[at];
	if (!strcmp(word, "--help") || !strcmp(word, "-h") || !strcmp(word, "help")) {
		usage();
		return EXIT_OK;
	}
	if (!strcmp(word, "--version")) {
		printf("sluice %s (libbpf %s)\n", SLUICE_VERSION, libbpf_version_string());
		return EXIT_OK;
	}
	libbpf_set_print(libbpf_print);
	for (c = commands; c->name; c++)
		if (!strcmp(word, c->name))
			return run(c, argc, argv, at, json);
	error_line(NULL, "unknown command '%s' (see 'sluice --help')", word);
	return EXIT_BAD_INPUT;
}
