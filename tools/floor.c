// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-floor: one of the floor programs (tools/floor.bpf.c) on an
 * interface in native mode, for bench-compare (tools/bench/run.sh), or
 * off it again. `ip link set ... obj` cannot size the table floor's array
 * to the default source table: this sizes it as sluice-bench does
 * (floor_load), then attaches over netlink, so the program stays attached
 * after this exits. Prints nothing on success.
 *
 *   sluice-floor attach IFNAME parse|clock|table|meter
 *   sluice-floor detach IFNAME
 *
 * Exit status 2 for bad input, 1 when the load or the attach fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/libbpf.h>
#include "floor.h"

#define PROG	   "sluice-floor"
#define USAGE	   "usage: " PROG " attach IFNAME parse|clock|table|meter | " PROG " detach IFNAME"
#define EXIT_FAIL  1
#define EXIT_USAGE 2

static const char *const kinds[] = { "parse", "clock", "table", "meter" };

/* libbpf's own messages only with SLUICE_DEBUG: a failure is one line. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (!getenv("SLUICE_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int bad_input(const char *what, const char *arg)
{
	fprintf(stderr, PROG ": %s%s%s (" USAGE ")\n", what, arg ? ": " : "", arg ? arg : "");
	return EXIT_USAGE;
}

static int known_kind(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return 1;
	return 0;
}

/* Loads the floors, attaches floor_<kind>; the attachment keeps it loaded. */
static int floor_attach(int ifindex, const char *kind)
{
	struct bpf_program *prog;
	struct floor *skel;
	char name[32];
	int err;

	skel = floor_load();
	if (!skel)
		return -errno;
	snprintf(name, sizeof(name), "floor_%s", kind);
	prog = bpf_object__find_program_by_name(skel->obj, name);
	err = prog ? bpf_xdp_attach(ifindex, bpf_program__fd(prog), XDP_FLAGS_DRV_MODE, NULL)
		   : -ENOENT;
	floor__destroy(skel);
	return err;
}

static int fail(const char *what, const char *ifname, int err)
{
	fprintf(stderr, PROG ": cannot %s %s: %s\n", what, ifname, strerror(-err));
	return EXIT_FAIL;
}

static int cmd_attach(const char *ifname, const char *kind)
{
	int ifindex = (int)if_nametoindex(ifname);
	char what[48];
	int err;

	if (!known_kind(kind))
		return bad_input("unknown kind", kind);
	if (!ifindex)
		return bad_input("no such interface", ifname);
	err = floor_attach(ifindex, kind);
	if (!err)
		return 0;
	snprintf(what, sizeof(what), "attach floor_%s to", kind);
	return fail(what, ifname, err);
}

static int cmd_detach(const char *ifname)
{
	int ifindex = (int)if_nametoindex(ifname);
	int err;

	if (!ifindex)
		return bad_input("no such interface", ifname);
	err = bpf_xdp_detach(ifindex, XDP_FLAGS_DRV_MODE, NULL);
	return err ? fail("detach the program from", ifname, err) : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	int attach = cmd && !strcmp(cmd, "attach");
	int want = attach ? 4 : 3; /* words, with the command's own */

	libbpf_set_print(libbpf_print);
	if (!cmd)
		return bad_input("missing command", NULL);
	if (!attach && strcmp(cmd, "detach"))
		return bad_input("unknown command", cmd);
	if (argc != want)
		return bad_input(cmd, argc < want ? "missing arguments" : "too many arguments");
	return attach ? cmd_attach(argv[2], argv[3]) : cmd_detach(argv[2]);
}
