// SPDX-License-Identifier: GPL-2.0
/* sluice apply: replace the whole policy from a file, in one step. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errors.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"
#include "text/conf.h"

/* The file is read and checked whole before privilege, lock or maps. */
static int apply_check(struct cli_args *a)
{
	char err_line[512];

	if (!a->file)
		return fail_input("apply", "missing -f FILE");
	if (a->given[OPT_CHECK] && a->ifname)
		return fail_input("apply", "--check takes no interface (it checks the file alone)");
	if (!a->given[OPT_CHECK] && !a->ifname)
		return fail_input("apply", "missing interface name");
	a->doc = calloc(1, sizeof(*a->doc));
	if (!a->doc)
		return fail_runtime("apply", -ENOMEM, "cannot read %s", a->file);
	if (conf_parse(a->file, a->doc, err_line, sizeof(err_line))) {
		free(a->doc);
		a->doc = NULL;
		return fail_input("apply", "%s", err_line);
	}
	if (!a->given[OPT_CHECK])
		return -1;
	/* Checked: done here, before the privilege check and any state. */
	printf("%s: ok (default, %d rules, %zu allow, %zu deny)\n",
	       strcmp(a->file, "-") ? a->file : "standard input", a->doc->n_rules,
	       a->doc->allow.count, a->doc->deny.count);
	return EXIT_OK;
}

static int apply_run(struct cli_args *a, struct state *st)
{
	char why[160];
	int err;

	cidr_list_sort(&a->doc->allow);
	cidr_list_sort(&a->doc->deny);
	err = lists_fit(&st->maps, a->doc, why, sizeof(why));
	if (err == -ENOSPC)
		return fail_input("apply", "%s; nothing changed", why);
	if (err)
		return fail_runtime("apply", err, "cannot read the list tries of %s", a->ifname);
	return policy_store_cmd("apply", st, a->doc, true);
}

const struct command cmd_apply = {
	.id = CMD_APPLY,
	.name = "apply",
	.summary = "replace the whole policy from a file, atomically",
	.synopsis = "IFACE -f FILE\n"
		    "--check -f FILE",
	.description =
		"Replace the whole policy of IFACE (default, rules, allow and deny lists) with\n"
		"FILE, in one step: no packet sees a mix of old and new. Rules that did not\n"
		"change keep their buckets. An error names FILE:LINE:COLUMN and nothing is\n"
		"applied; --check only checks FILE, without root or an interface. 'sluice\n"
		"show IFACE' prints the running policy in the same format\n"
		"(sluice.conf(5)):\n"
		"\n"
		"  default rate RATE [OPTION VALUE]...\n"
		"  rule CIDR rate RATE [OPTION VALUE]... [proto P] [dport N[-M]] [syn]\n"
		"  allow CIDR\n"
		"  deny CIDR",
	.iface = IFACE_OPTIONAL, /* none with --check */
	.root = true,
	.state = USE_CHANGE,
	.check = apply_check,
	.run = apply_run,
};
