/* SPDX-License-Identifier: GPL-2.0 */
/* One function per command, each in user/cmd_<name>.c; argv[0] is the command. */
#ifndef SLUICE_COMMANDS_H
#define SLUICE_COMMANDS_H

int cmd_attach(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_rule(int argc, char **argv);
int cmd_allow(int argc, char **argv);
int cmd_deny(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_upgrade(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_exporter(int argc, char **argv);

#endif /* SLUICE_COMMANDS_H */
