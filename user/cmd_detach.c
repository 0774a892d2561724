// SPDX-License-Identifier: GPL-2.0
/* sluice detach: remove the program and every pin, even for a vanished interface. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "args.h"
#include "commands.h"
#include "output.h"
#include "state.h"

static const char detach_usage[] =
	"Usage: sluice detach IFACE\n"
	"\n"
	"Detach sluice from IFACE and remove all of its pinned state. Also cleans up\n"
	"the stale state of an interface that no longer exists.\n";

static const struct option detach_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Detaches through the pinned link; a link whose interface is gone is fine. */
static int detach_link(const char *ifname)
{
	char path[PATH_MAX];
	int fd, err = 0;

	err = state_path(ifname, SLUICE_PIN_LINK, path, sizeof(path));
	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (bpf_link_detach(fd) && errno != ENOLINK && errno != EINVAL)
		err = -errno;
	close(fd);
	return err;
}

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
	if (cli_one_positional("detach", argc, argv, "interface name", &ifname))
		return EXIT_BAD_INPUT;
	ret = require_root("detach");
	if (ret)
		return ret;

	lock_fd = state_lock_cmd("detach");
	if (lock_fd < 0)
		return EXIT_FAILURE_RUNTIME;
	/* What an attach killed before it finished left: its link detaches with it. */
	state_remove_staged(ifname);
	if (!state_exists(ifname)) {
		ret = fail_input("detach", "%s is not attached", ifname);
		goto out;
	}
	err = detach_link(ifname);
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
