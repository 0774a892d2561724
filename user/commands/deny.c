// SPDX-License-Identifier: GPL-2.0
/* sluice deny: add, delete or list sources always dropped. */
#include "commands/list.h"

const struct command cmd_deny = {
	.id = CMD_DENY,
	.name = "deny",
	.summary = "add, delete or list sources always dropped",
	.synopsis = "add IFACE CIDR... | -f FILE [--timeout DURATION]\n" LIST_SYNOPSIS_REST,
	.description = "Sources on the deny list are always dropped.\n" LIST_DESCRIPTION
		       "\nWith --timeout an entry stops denying after DURATION, and list shows\n"
		       "the time it has left; adding it again keeps the later end.",
	.verbs = edit_verbs,
	.more_args = true,
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.check = list_check,
	.run = list_run,
};
