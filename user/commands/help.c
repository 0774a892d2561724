// SPDX-License-Identifier: GPL-2.0
/* sluice help [COMMAND]: the same as sluice COMMAND --help, or sluice --help. */
#include <stdio.h>
#include "base/errors.h"
#include "commands/commands.h"

static int help_check(struct cli_args *a)
{
	if (a->nargs > 1)
		return fail_input("help", "unexpected argument '%s'", a->args[1]);
	if (a->nargs && !command_find(a->args[0]))
		return command_unknown("help", a->args[0]);
	return -1;
}

static int help_run(struct cli_args *a, struct state *st)
{
	(void)st;
	if (a->nargs)
		command_help(stdout, command_find(a->args[0]));
	else
		commands_usage(stdout);
	return EXIT_OK;
}

const struct command cmd_help = {
	.id = CMD_HELP,
	.name = "help",
	.summary = "show the options of a command",
	.synopsis = "[COMMAND]",
	.description = "Show what COMMAND does and its options, as 'sluice COMMAND --help'\n"
		       "does; without COMMAND, list the commands.",
	.more_args = true,
	.check = help_check,
	.run = help_run,
};
