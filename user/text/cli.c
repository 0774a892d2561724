// SPDX-License-Identifier: GPL-2.0
/* The command line, parsed from the option table, with sluice's error style. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errors.h"
#include "base/utf8.h"
#include "text/cli.h"
#include "values/iface.h"

/* The long names command cmd takes, for "did you mean". */
static size_t long_names(enum command_id cmd, const char **names)
{
	size_t n = 0;
	int i;

	for (i = 0; i < OPT_MAX; i++)
		if (option_takes(cmd, 0, i))
			names[n++] = option_table[i].name;
	return n;
}

static int fail_unknown(const char *name, enum command_id cmd, const char *word)
{
	const char *names[OPT_MAX], *near;
	int id = option_find(word);

	if (id >= 0)
		return fail_input(name, "--%s is not an option of %s (see 'sluice %s --help')",
				  word, name, name);
	near = nearest_name(word, names, long_names(cmd, names));
	if (near)
		return fail_input(name, "unknown option '--%s' (did you mean '--%s'?)", word, near);
	return fail_input(name, "unknown option '--%s' (see 'sluice %s --help')", word, name);
}

static int apply_one(const char *name, struct cli_args *a, int id, const char *value)
{
	const char *why;
	int err = option_apply(a, id, value, &why);

	if (err == OPTION_WARNED)
		warning_line("sluice %s: warning: --%s '%s' %s", name, option_table[id].name, value,
			     why);
	if (err >= 0)
		return -1;
	return fail_input(name, "bad value '%s' for --%s: %s", value ? value : "",
			  option_table[id].name, why);
}

/* An optional value is the next word when that looks like a number: --watch 2, -1, .5. */
static bool optional_value(const char *next)
{
	if (next && next[0] == '-')
		next++;
	return next && ((next[0] >= '0' && next[0] <= '9') || next[0] == '.');
}

/* "--name", "--name=value" or "--name value"; *i advances past what it used. */
static int parse_long(const char *name, enum command_id cmd, int argc, char **argv, int *i,
		      struct cli_args *a)
{
	char word[64];
	const char *arg = argv[*i] + 2, *eq = strchr(arg, '='), *value = NULL;
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	int id;

	snprintf(word, sizeof(word), "%.*s", (int)len, arg);
	id = option_find(word);
	if (id < 0 || !option_takes(cmd, 0, id))
		return fail_unknown(name, cmd, word);
	if (!option_table[id].metavar && eq)
		return fail_input(name, "option '--%s' takes no value", word);
	if (eq)
		value = eq + 1;
	else if (option_table[id].value_optional && *i + 1 < argc && optional_value(argv[*i + 1]))
		value = argv[++*i];
	else if (option_table[id].metavar && !option_table[id].value_optional) {
		if (*i + 1 >= argc)
			return fail_input(name, "option '--%s' needs a value", word);
		value = argv[++*i];
	}
	return apply_one(name, a, id, value);
}

/* "-n 5", "-n5", or flags together: "-jp". */
static int parse_short(const char *name, enum command_id cmd, int argc, char **argv, int *i,
		       struct cli_args *a)
{
	const char *p;
	int id;

	for (p = argv[*i] + 1; *p; p++) {
		id = option_find_short(*p);
		if (id >= 0 && !option_takes(cmd, 0, id))
			return fail_input(
				name, "-%c (--%s) is not an option of %s (see 'sluice %s --help')",
				*p, option_table[id].name, name, name);
		if (id < 0)
			return fail_input(name, "unknown option '-%c' (see 'sluice %s --help')", *p,
					  name);
		if (!option_table[id].metavar) {
			if (apply_one(name, a, id, NULL) >= 0)
				return EXIT_BAD_INPUT;
			continue;
		}
		if (p[1])
			return apply_one(name, a, id, p + 1);
		if (*i + 1 >= argc)
			return fail_input(name, "option '-%c' needs a value", *p);
		return apply_one(name, a, id, argv[++*i]);
	}
	return -1;
}

int cli_parse(const char *name, enum command_id cmd, int argc, char **argv, struct cli_args *a)
{
	bool options = true;
	int i, ret;

	a->args = calloc((size_t)argc + 1, sizeof(*a->args));
	if (!a->args)
		return fail_runtime(name, -ENOMEM, "cannot parse the command line");
	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (options && !strcmp(arg, "--")) {
			options = false;
			continue;
		}
		if (!options || arg[0] != '-' || !arg[1]) {
			a->args[a->nargs++] = argv[i];
			continue;
		}
		ret = arg[1] == '-' ? parse_long(name, cmd, argc, argv, &i, a)
				    : parse_short(name, cmd, argc, argv, &i, a);
		if (ret >= 0)
			return ret;
	}
	return -1;
}

void cli_args_free(struct cli_args *a)
{
	free(a->args);
	a->args = NULL;
	struct policy_doc **doc = a->command == CMD_ATTACH  ? &a->cmd.attach.doc
				  : a->command == CMD_APPLY ? &a->cmd.apply.doc
							    : NULL;

	if (doc && *doc)
		doc_free(*doc);
	if (doc) {
		free(*doc);
		*doc = NULL;
	}
	if (a->command == CMD_ALLOW || a->command == CMD_DENY) {
		free(a->cmd.list.items.items);
		memset(&a->cmd.list.items, 0, sizeof(a->cmd.list.items));
	}
}

/* "-jn5": flags up to the first option with a value, which takes the rest. */
static bool short_cluster_has(const char *p, const char *shorts)
{
	int id;

	for (; *p; p++) {
		if (strchr(shorts, *p))
			return true;
		id = option_find_short(*p);
		if (id < 0 || option_table[id].metavar)
			return false;
	}
	return false;
}

/* Is one of these options (long name, or short letter) among argv's options? */
static bool has_option(int argc, char **argv, const char *const *longs, const char *shorts)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *arg = argv[i];
		const char *const *l;

		if (arg[0] != '-' || !arg[1])
			continue;
		if (arg[1] != '-' && short_cluster_has(arg + 1, shorts))
			return true;
		for (l = longs; arg[1] == '-' && *l; l++)
			if (!strcmp(arg + 2, *l))
				return true;
	}
	return false;
}

bool cli_wants_help(int argc, char **argv)
{
	static const char *const longs[] = { "help", NULL };

	return has_option(argc, argv, longs, "h");
}

bool cli_wants_json(int argc, char **argv)
{
	static const char *const longs[] = { "json", "pretty", NULL };

	return has_option(argc, argv, longs, "jp");
}

/* -p or --pretty anywhere: errors found before the options are parsed are indented too. */
bool cli_wants_pretty(int argc, char **argv)
{
	static const char *const longs[] = { "pretty", NULL };

	return has_option(argc, argv, longs, "p");
}

int cli_ifname(const char *cmd, const char *name)
{
	char shown[24];
	const char *why;
	size_t i, n;

	if (!ifname_check(name, &why))
		return EXIT_OK;
	/*
	 * The name as given, short, cut between characters: the message
	 * writes a control or invisible character so it shows (\x0a,
	 * \u00a0), as it does every quoted input.
	 */
	for (i = 0; name[i]; i += n) {
		utf8_next(name + i, &n);
		if (i + n >= sizeof(shown))
			break;
	}
	memcpy(shown, name, i);
	shown[i] = '\0';
	return fail_input(cmd, "bad interface name '%s%s': %s", shown, name[i] ? "..." : "", why);
}
