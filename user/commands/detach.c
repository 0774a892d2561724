// SPDX-License-Identifier: GPL-2.0
/* sluice detach: remove the program and every pin, even for a vanished interface. */
#include <errno.h>
#include <stdio.h>
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "commands/commands.h"
#include "base/errors.h"
#include "base/json.h"
#include "pins/state.h"
#include "maps/policy_maps.h"

static const char detach_usage[] =
	"Usage: sluice detach IFACE\n"
	"\n"
	"Detach sluice from IFACE and remove all of its pinned state. Also clears\n"
	"stale state: of an interface that was deleted, or left by an attach or\n"
	"detach that was interrupted.\n";

static const struct option detach_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_detach(int argc, char **argv)
{
	const char *ifname;
	int opt, ret, err, lock_fd;

	while ((opt = cli_next_option("detach", argc, argv, detach_options)) != -1) {
		if (opt == 'h') {
			fputs(detach_usage, stdout);
			return EXIT_OK;
		}
		return EXIT_BAD_INPUT;
	}
	if (cli_one_ifname("detach", argc, argv, &ifname))
		return EXIT_BAD_INPUT;
	ret = require_root("detach");
	if (!ret)
		ret = state_root_cmd("detach");
	if (ret)
		return ret;

	lock_fd = state_lock_cmd("detach");
	if (lock_fd < 0)
		return EXIT_FAILURE_RUNTIME;
	err = state_exists(ifname);
	if (err <= 0) {
		ret = err ? state_fail_cmd("detach", err, ifname)
			  : fail_input("detach", "%s is not attached", ifname);
		goto out;
	}
	/* Whatever state_health() calls it: whole, stale, or an interrupted attach. */
	err = state_remove_staged(ifname);
	if (!err)
		err = state_remove(ifname);
	if (err) {
		ret = fail_runtime("detach", err, "cannot detach from %s", ifname);
		goto out;
	}
	printf("sluice: detached from %s\n", ifname);
	ret = EXIT_OK;
out:
	state_unlock(lock_fd);
	return ret;
}
