/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_TEXT_CLI_H
#define SLUICE_TEXT_CLI_H

#include <getopt.h>

/*
 * getopt_long with our error style: returns the next option, -1 at the
 * end, or '?' after printing "sluice CMD: ..." for an unknown option or a
 * missing argument. Each process parses one command, so getopt's global
 * state starts fresh.
 */
int cli_next_option(const char *cmd, int argc, char **argv, const struct option *options);
/* The long name of the option whose value is `val`, for messages. */
const char *cli_option_name(const struct option *options, int val);
/* Exactly one positional argument left, named `what` in errors. */
int cli_one_positional(const char *cmd, int argc, char **argv, const char *what, const char **out);
/* ifname_check() for a command: EXIT_OK, or one line and EXIT_BAD_INPUT. */
int cli_ifname(const char *cmd, const char *name);
/* cli_one_positional() for the interface name, checked. */
int cli_one_ifname(const char *cmd, int argc, char **argv, const char **out);

#endif /* SLUICE_TEXT_CLI_H */
