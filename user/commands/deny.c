// SPDX-License-Identifier: GPL-2.0
/* sluice deny: add, delete or list sources always dropped. */
#include "commands/list.h"

const struct command cmd_deny = {
	.id = CMD_DENY,
	.name = "deny",
	.summary = "add, delete or list sources always dropped",
	.synopsis = LIST_SYNOPSIS,
	.description = "Sources on the deny list are always dropped.\n" LIST_DESCRIPTION,
	.verbs = edit_verbs,
	.more_args = true,
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.check = list_check,
	.run = list_run,
};
