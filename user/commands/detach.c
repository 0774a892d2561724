// SPDX-License-Identifier: GPL-2.0
/* sluice detach: remove the program and every pin, even for a vanished interface. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include "base/errors.h"
#include "commands/commands.h"

static int detach_run(struct cli_args *a, struct state *unused)
{
	const char *ifname = a->ifname;
	int ret, err;

	(void)unused;
	ret = state_root_cmd("detach");
	if (ret)
		return ret;
	err = state_exists(ifname);
	if (err < 0)
		return state_fail_cmd("detach", err, ifname);
	/* Detaching twice is safe: the interface is as asked. A name of no interface is a typo. */
	if (!err && !if_nametoindex(ifname))
		return fail_input("detach", "%s is not attached, and no interface has that name",
				  ifname);
	if (!err) {
		output_say("sluice: %s is not attached; nothing to detach\n", ifname);
		return EXIT_OK;
	}
	/* Whatever state_health() calls it: whole, stale, or an interrupted attach. */
	err = state_remove_staged(ifname);
	if (!err)
		err = state_remove(ifname);
	if (err)
		return fail_runtime("detach", err, "cannot detach from %s", ifname);
	output_say("sluice: detached from %s\n", ifname);
	/* The interface is detached all the same: a leftover root is worth a warning only. */
	err = state_remove_root();
	if (err)
		fprintf(stderr, "sluice detach: warning: cannot remove %s: %s\n", SLUICE_PIN_ROOT,
			strerror(-err));
	return EXIT_OK;
}

const struct command cmd_detach = {
	.id = CMD_DETACH,
	.name = "detach",
	.summary = "stop limiting and remove all state",
	.synopsis = "IFACE",
	.description = "Detach sluice from IFACE and remove all of its pinned state. Also clears\n"
		       "stale state: of an interface that was deleted, or left by an attach or\n"
		       "detach that was interrupted. An interface sluice is not attached to is\n"
		       "left as it is, exit 0, so detaching twice is safe; a name that is no\n"
		       "interface and has no state is bad input, exit 2. Detaching the last\n"
		       "interface also removes /sys/fs/bpf/sluice, unless it was shared with\n"
		       "attach --group.",
	.iface = IFACE_REQUIRED,
	.caps = CAPS_UNPIN,
	.state = USE_LOCK,
	.run = detach_run,
};
