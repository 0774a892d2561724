// SPDX-License-Identifier: GPL-2.0
/* sluice allow: add, delete or list sources never limited. */
#include "commands/list.h"

const struct command cmd_allow = {
	.id = CMD_ALLOW,
	.name = "allow",
	.summary = "add, delete or list sources never limited",
	.synopsis = LIST_SYNOPSIS,
	.description =
		"Sources on the allow list are never limited and never get a bucket.\n" LIST_DESCRIPTION,
	.verbs = edit_verbs,
	.more_args = true,
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.check = list_check,
	.run = list_run,
};
