// SPDX-License-Identifier: GPL-2.0
/* sluice apply and show: a whole policy from a file, and back. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "commands/commands.h"
#include "text/conf.h"
#include "base/errors.h"
#include "base/json.h"
#include "policy/policy.h"
#include "pins/state.h"
#include "maps/policy_maps.h"

static const char apply_usage[] =
	"Usage: sluice apply IFACE -f FILE\n"
	"\n"
	"Replace the whole policy of IFACE (default, rules, allow and deny lists) with\n"
	"FILE, in one step: no packet sees a mix of old and new. Rules that did not\n"
	"change keep their buckets. An error names FILE:LINE:COLUMN and nothing is\n"
	"applied. 'sluice show IFACE' prints the running policy in the same format.\n"
	"\n"
	"  default rate RATE [burst N] [action drop|mark|dry-run] [dscp N] [ecn]\n"
	"          [ipv4-prefix N] [ipv6-prefix N]\n"
	"  rule CIDR rate RATE [...same options...] [proto P] [dport N[-M]] [syn]\n"
	"  allow CIDR\n"
	"  deny CIDR\n";

static const char show_usage[] =
	"Usage: sluice show IFACE\n"
	"\n"
	"Print the running policy of IFACE in the format 'sluice apply' reads.\n";

static const struct option file_options[] = {
	{ "file", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Returns -1 to go on, or the exit status. */
static int parse_iface_file(const char *cmd, int argc, char **argv, const char *usage,
			    bool want_file, const char **ifname, const char **file)
{
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hf:", file_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage, stdout);
			return EXIT_OK;
		}
		if (opt == 'f' && want_file)
			*file = optarg;
		else if (opt == ':')
			return fail_input(cmd, "option '%s' needs a value", argv[optind - 1]);
		else
			return fail_input(cmd, "unknown option '%s'", argv[optind - 1]);
	}
	if (cli_one_ifname(cmd, argc, argv, ifname))
		return EXIT_BAD_INPUT;
	if (want_file && !*file)
		return fail_input(cmd, "missing -f FILE");
	return -1;
}

int cmd_apply(int argc, char **argv)
{
	const char *ifname, *file = NULL;
	struct policy_doc doc;
	char err_line[512], why[160];
	struct state st;
	int ret, err, lock_fd;

	ret = parse_iface_file("apply", argc, argv, apply_usage, true, &ifname, &file);
	if (ret >= 0)
		return ret;
	if (conf_parse(file, &doc, err_line, sizeof(err_line)))
		return fail_input("apply", "%s", err_line);
	ret = require_root("apply");
	if (!ret)
		ret = state_open_locked("apply", ifname, &st, &lock_fd);
	if (ret) {
		doc_free(&doc);
		return ret;
	}
	cidr_list_sort(&doc.allow);
	cidr_list_sort(&doc.deny);
	err = lists_fit(&st.maps, &doc, why, sizeof(why));
	if (err == -ENOSPC)
		ret = fail_input("apply", "%s; nothing changed", why);
	else if (err)
		ret = fail_runtime("apply", err, "cannot read the list tries of %s", ifname);
	else
		ret = policy_store_cmd("apply", &st, &doc, true);
	doc_free(&doc);
	state_close(&st);
	state_unlock(lock_fd);
	return ret;
}

int cmd_show(int argc, char **argv)
{
	const char *ifname, *file = NULL;
	struct policy_doc doc;
	struct state st;
	int ret;

	ret = parse_iface_file("show", argc, argv, show_usage, false, &ifname, &file);
	if (ret >= 0)
		return ret;
	ret = require_root("show");
	if (!ret)
		ret = state_open_cmd("show", ifname, &st);
	if (ret)
		return ret;
	ret = policy_load_cmd("show", &st, &doc, true);
	if (!ret)
		conf_write(stdout, &doc);
	doc_free(&doc);
	state_close(&st);
	return ret;
}
