/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command line, parsed from the option table. Long options are
 * matched whole: getopt_long would take any unique prefix ("--rat"), and a
 * new option could then change what an old script means.
 */
#ifndef SLUICE_TEXT_CLI_H
#define SLUICE_TEXT_CLI_H

#include <stdbool.h>
#include "text/options.h"

/*
 * Options of command cmd (named name in messages) from argv[1..argc-1]
 * into a; the rest, in order, into a->args (allocated: cli_args_free).
 * "--" ends the options. Returns -1 to go on, or an exit status after
 * one line saying what is wrong.
 */
int cli_parse(const char *name, enum command_id cmd, int argc, char **argv, struct cli_args *a);
void cli_args_free(struct cli_args *a);
/* Is -h or --help among argv's options? */
bool cli_wants_help(int argc, char **argv);
/* Is -j, --json, -p or --pretty among them (then errors come as JSON)? */
bool cli_wants_json(int argc, char **argv);
/* Is -p or --pretty among them (then JSON errors are indented)? */
bool cli_wants_pretty(int argc, char **argv);
/* ifname_check() for a command: EXIT_OK, or one line and EXIT_BAD_INPUT. */
int cli_ifname(const char *cmd, const char *name);

#endif /* SLUICE_TEXT_CLI_H */
