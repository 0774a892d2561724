// SPDX-License-Identifier: GPL-2.0
/*
 * The one dispatch: find the command, parse its options from the option
 * table, check what needs no privilege, check privilege, take the lock and
 * open the interface as the command table says, run it, release.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "base/errors.h"
#include "base/json.h"
#include "sluice_commit.h"
#include "base/version.h"
#include "commands/commands.h"
#include "outputs/audit.h"
#include "text/cli.h"

/* The command line as typed, for the audit trail. */
static int typed_argc;
static char **typed_argv;

/* libbpf's warnings, unless SLUICE_DEBUG asks for everything. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && !getenv("SLUICE_DEBUG")))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* Global options before the command word take a value only for --wait. */
static int global_span(int argc, char **argv, int i)
{
	if (!strcmp(argv[i], "--wait"))
		return i + 1 < argc ? 2 : 1;
	return 1;
}

static bool is_global_id(int id)
{
	return id >= 0 && option_table[id].scope == SCOPE_GLOBAL && id != OPT_HELP;
}

/* A cluster of global flags ("-j", "-jp", as after the command), -h among them if help_ok. */
static bool is_flag_cluster(const char *arg, bool help_ok)
{
	int id;

	if (arg[0] != '-' || !arg[1])
		return false;
	for (arg++; *arg; arg++) {
		id = option_find_short(*arg);
		if (help_ok && id == OPT_HELP)
			continue;
		if (!is_global_id(id) || option_table[id].metavar)
			return false;
	}
	return true;
}

/* --help, -h, or -h in a cluster of global flags (-jh, -hj): as -j -h does, the usage. */
static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") ||
	       (is_flag_cluster(arg, true) && strchr(arg, option_table[OPT_HELP].short_name));
}

static bool is_global(const char *arg)
{
	char name[32];

	if (strncmp(arg, "--", 2))
		return is_flag_cluster(arg, false);
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
	return is_global_id(option_find(name));
}

/* The index of the command word, after any global options; -1 when none. */
static int command_index(int argc, char **argv)
{
	int i = 1;

	while (i < argc && is_global(argv[i]))
		i += global_span(argc, argv, i);
	return i < argc ? i : -1;
}

static int unknown_verb(const struct command *c, const char *word)
{
	const char *names[16], *near;
	size_t n;

	for (n = 0; c->verbs[n].name && n < 16; n++)
		names[n] = c->verbs[n].name;
	near = nearest_name(word, names, n);
	if (near)
		return fail_input(c->name, "unknown verb '%s' (did you mean '%s'?)", word, near);
	return fail_input(c->name, "unknown verb '%s' (see 'sluice %s --help')", word, c->name);
}

/* The verb, then the interface name, off the front of the positionals. */
static int take_positionals(const struct command *c, struct cli_args *a)
{
	const struct verb *v;

	if (c->verbs) {
		if (!a->nargs)
			return fail_input(c->name, "missing a verb (see 'sluice %s --help')",
					  c->name);
		v = verb_find(c, a->args[0]);
		if (!v)
			return unknown_verb(c, a->args[0]);
		a->verb = v->name;
		a->args++, a->nargs--;
	}
	if (c->iface == IFACE_REQUIRED && !a->nargs)
		return fail_input(c->name, "missing interface name");
	if (c->iface != IFACE_NONE && a->nargs) {
		a->ifname = a->args[0];
		a->args++, a->nargs--;
		if (cli_ifname(c->name, a->ifname))
			return EXIT_BAD_INPUT;
	}
	if (a->nargs && !c->more_args)
		return fail_input(c->name, "unexpected argument '%s'", a->args[0]);
	return -1;
}

static enum state_use state_use(const struct command *c, const struct cli_args *a)
{
	return a->verb ? verb_find(c, a->verb)->state : c->state;
}

/*
 * Commands that create, remove or change an interface's state are audited:
 * what they changed is told from snapshots taken before and after, under
 * the lock, so every such command writes its line here and no other place.
 */
static bool audited(enum state_use use, const struct cli_args *a)
{
	return a->ifname && (use == USE_CHANGE || use == USE_LOCK);
}

/*
 * One syslog line when the command changed anything, whatever its exit
 * status; returns whether it did.
 */
static bool audit_after(const struct cli_args *a, struct audit_snapshot *before, int ret)
{
	struct audit_snapshot after;
	struct audit_event e = {
		.ifname = a->ifname,
		.command = a->name,
		.verb = a->verb,
		.argc = typed_argc,
		.argv = typed_argv,
		.before = before,
		.after = &after,
		.exit_status = ret,
		.timeout_ns = a->command == CMD_DENY ? a->cmd.list.timeout_ns : 0,
	};
	char line[AUDIT_LINE_MAX];
	bool changed;

	audit_snapshot_take(a->ifname, &after);
	changed = audit_changed(before, &after);
	if (changed) {
		audit_who_read(&e.who);
		audit_format(line, sizeof(line), &e);
		audit_log(line);
	}
	audit_snapshot_free(&after);
	audit_snapshot_free(before);
	return changed;
}

/*
 * With --json, what a command that changes an interface did, as one
 * document: whether anything changed, the interface as it now is (its
 * status entry, null once detached) and the lines it would have printed.
 */
static int result_json(const struct cli_args *a, bool changed)
{
	char *said = strdup(output_said()), *line, *next;
	struct json j;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "command", a->name);
	if (a->verb)
		json_string(&j, "verb", a->verb);
	else
		json_null(&j, "verb");
	json_ifname(&j, a->ifname);
	json_bool(&j, "changed", changed);
	status_json_named(&j, "status", a->ifname);
	json_array_begin(&j, "messages");
	for (line = said; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		json_string(&j, NULL, line);
	}
	json_array_end(&j);
	json_object_end(&j);
	free(said);
	return fail_json(a->name, json_finish(&j));
}

/* Takes what the command needs, runs it, releases. */
static int run(const struct command *c, struct cli_args *a)
{
	enum state_use use = state_use(c, a);
	struct state st, *stp = NULL;
	struct audit_snapshot before;
	int ret, lock_fd = -1;
	bool changed;

	ret = require_caps(c->name, command_caps(c, use));
	if (ret)
		return ret;
	if (command_reads(use))
		state_readonly();
	if (use == USE_LOCK) {
		lock_fd = state_lock_cmd(c->name);
		if (lock_fd < 0)
			return EXIT_FAILURE_RUNTIME;
	} else if (use == USE_READ || use == USE_CHANGE) {
		ret = use == USE_READ ? state_open_cmd(c->name, a->ifname, &st)
				      : state_open_locked(c->name, a->ifname, &st, &lock_fd);
		if (ret)
			return ret;
		stp = &st;
	}
	if (audited(use, a))
		audit_snapshot_take(a->ifname, &before);
	ret = c->run(a, stp);
	if (audited(use, a)) {
		changed = audit_after(a, &before, ret);
		if (a->json && ret == EXIT_OK)
			ret = result_json(a, changed);
	}
	if (stp)
		state_close(stp);
	state_unlock(lock_fd);
	return ret;
}

static int dispatch(const struct command *c, int argc, char **argv)
{
	struct cli_args a;
	char **args;
	int ret;

	if (cli_wants_help(argc, argv)) {
		command_help(stdout, c);
		return EXIT_OK;
	}
	cli_args_init(&a, c->id);
	a.command = c->id;
	a.name = c->name;
	ret = cli_parse(c->name, c->id, argc, argv, &a);
	args = a.args;
	if (ret < 0)
		ret = take_positionals(c, &a);
	if (ret < 0) {
		json_pretty(a.pretty);
		a.json |= a.pretty;
		if (a.given[OPT_WAIT])
			state_lock_wait(a.wait_ns);
		ret = c->check ? c->check(&a) : -1;
	}
	if (ret < 0)
		ret = run(c, &a);
	a.args = args;
	cli_args_free(&a);
	return ret;
}

/* argv with the command word first, then the global options before it, then the rest. */
static char **command_argv(int argc, char **argv, int at)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int n = 0, i;

	if (!args)
		return NULL;
	args[n++] = argv[at];
	for (i = 1; i < argc; i++)
		if (i != at)
			args[n++] = argv[i];
	return args;
}

int main(int argc, char **argv)
{
	const struct command *c;
	char **args;
	int at, ret;

	typed_argc = argc;
	typed_argv = argv;
	output_json_errors(cli_wants_json(argc, argv));
	json_pretty(cli_wants_pretty(argc, argv));
	libbpf_set_print(libbpf_print);
	at = command_index(argc, argv);
	if (at < 0)
		return fail_input(NULL, "missing command (see 'sluice --help')");
	if (is_help(argv[at])) {
		commands_usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[at], "--version")) {
		printf("sluice %s (commit %s, layout %d, libbpf %s)\n", SLUICE_VERSION,
		       SLUICE_COMMIT, SLUICE_LAYOUT_VERSION, libbpf_version_string());
		return EXIT_OK;
	}
	if (argv[at][0] == '-')
		return fail_input(NULL,
				  "unknown option '%s' before the command (see 'sluice --help')",
				  argv[at]);
	c = command_find(argv[at]);
	if (!c)
		return command_unknown(NULL, argv[at]);
	args = command_argv(argc, argv, at);
	if (!args)
		return fail_runtime(NULL, -ENOMEM, "out of memory");
	ret = dispatch(c, argc - 1, args);
	free(args);
	warnings_flush();
	return ret;
}
