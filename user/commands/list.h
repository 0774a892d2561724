/* SPDX-License-Identifier: GPL-2.0 */
/* What allow and deny share: the same verbs on their own list. */
#ifndef SLUICE_COMMANDS_LIST_H
#define SLUICE_COMMANDS_LIST_H

#include "commands/commands.h"

#define LIST_SYNOPSIS_REST              \
	"del IFACE CIDR... | -f FILE\n" \
	"list IFACE [--json]\n"         \
	"flush IFACE"
#define LIST_SYNOPSIS "add IFACE CIDR... | -f FILE\n" LIST_SYNOPSIS_REST
#define LIST_DESCRIPTION                                                               \
	"Both lists are checked before any rule; a source on both is denied. A FILE\n" \
	"holds one CIDR per line, with # comments and blank lines; an error names\n"   \
	"FILE:LINE and none of the file is applied. '-f -' reads standard input.\n"    \
	"del is also spelled delete or rm, list ls or show; flush empties the list."

int list_check(struct cli_args *a);
int list_run(struct cli_args *a, struct state *st);

#endif /* SLUICE_COMMANDS_LIST_H */
