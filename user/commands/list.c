// SPDX-License-Identifier: GPL-2.0
/* sluice allow|deny add|del|list: sources never limited, or always dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

static const char list_usage[] =
	"Usage: sluice %1$s add IFACE CIDR... | -f FILE\n"
	"       sluice %1$s del IFACE CIDR... | -f FILE\n"
	"       sluice %1$s list IFACE [--json]\n"
	"\n"
	"%2$s\n"
	"Both lists are checked before any rule; a source on both is denied. A FILE\n"
	"holds one CIDR per line, with # comments and blank lines; an error names\n"
	"FILE:LINE and none of the file is applied. '-f -' reads standard input.\n";

enum { OPT_JSON = 256 };

static const struct option list_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "file", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct list_opts {
	const char *cmd; /* "allow" or "deny" */
	const char *verb;
	const char *ifname;
	const char *file;
	bool json;
	struct cidr_list items;
};

static void list_help(const char *cmd)
{
	printf(list_usage, cmd,
	       strcmp(cmd, "deny") ? "Sources on the allow list are never limited and never get a "
				     "bucket."
				   : "Sources on the deny list are always dropped.");
}

static int list_parse(int argc, char **argv, struct list_opts *o)
{
	int opt;

	while ((opt = getopt_long(argc, argv, ":hf:", list_options, NULL)) != -1) {
		if (opt == 'h') {
			list_help(o->cmd);
			return EXIT_OK;
		}
		if (opt == 'f')
			o->file = optarg;
		else if (opt == OPT_JSON)
			o->json = true;
		else if (opt == ':')
			return fail_input(o->cmd, "option '%s' needs a value", argv[optind - 1]);
		else
			return fail_input(o->cmd, "unknown option '%s'", argv[optind - 1]);
	}
	if (optind >= argc)
		return fail_input(o->cmd, "missing add, del or list (see 'sluice %s --help')",
				  o->cmd);
	o->verb = argv[optind++];
	if (strcmp(o->verb, "add") && strcmp(o->verb, "del") && strcmp(o->verb, "list"))
		return fail_input(o->cmd, "unknown verb '%s' (expected add, del or list)", o->verb);
	if (optind >= argc)
		return fail_input(o->cmd, "missing interface name");
	o->ifname = argv[optind++];
	return cli_ifname(o->cmd, o->ifname) ?: -1;
}

/* The CIDRs to add or remove, from the arguments or the file; all or none. */
static int list_items(int argc, char **argv, struct list_opts *o)
{
	char err[512];
	const char *why;
	struct cidr c;
	int i;

	if (!strcmp(o->verb, "list")) {
		if (optind < argc)
			return fail_input(o->cmd, "unexpected argument '%s'", argv[optind]);
		return o->file ? fail_input(o->cmd, "-f goes with add or del") : -1;
	}
	if (o->json)
		return fail_input(o->cmd, "--json goes with list");
	if (o->file && optind < argc)
		return fail_input(o->cmd, "give CIDRs or -f FILE, not both");
	if (o->file) {
		if (cidr_file_parse(o->file, &o->items, err, sizeof(err)))
			return fail_input(o->cmd, "%s", err);
		return -1;
	}
	if (optind >= argc)
		return fail_input(o->cmd, "missing CIDR (or -f FILE)");
	for (i = optind; i < argc; i++) {
		if (cidr_arg(o->cmd, argv[i], &c, &why))
			return fail_input(o->cmd, "bad CIDR '%s': %s", argv[i], why);
		if (cidr_list_add(&o->items, &c))
			return fail_runtime(o->cmd, -ENOMEM, "too many CIDRs");
	}
	return -1;
}

static void list_print(const struct list_opts *o, const struct cidr_list *l)
{
	char cidr[64];
	struct json j;
	size_t i;

	if (o->json) {
		json_init(&j, stdout);
		json_array_begin(&j, NULL);
	}
	for (i = 0; i < l->count; i++) {
		format_cidr(cidr, sizeof(cidr), &l->items[i]);
		if (o->json)
			json_string(&j, NULL, cidr);
		else
			puts(cidr);
	}
	if (o->json) {
		json_array_end(&j);
		json_finish(&j);
	}
}

static int list_show(struct list_opts *o)
{
	struct policy_doc doc;
	struct state st;
	int ret;

	ret = state_open_cmd(o->cmd, o->ifname, &st);
	if (ret)
		return ret;
	ret = policy_load_cmd(o->cmd, &st, &doc, true);
	if (!ret)
		list_print(o, !strcmp(o->cmd, "deny") ? &doc.deny : &doc.allow);
	doc_free(&doc);
	state_close(&st);
	return ret;
}

/* add or del: all of it or, on any failure, nothing. */
static int list_change(struct list_opts *o)
{
	struct list_change c = { .deny = !strcmp(o->cmd, "deny"),
				 .add = !strcmp(o->verb, "add"),
				 .items = &o->items };
	struct state st;
	char cidr[64];
	int ret, err, lock_fd;

	ret = state_open_locked(o->cmd, o->ifname, &st, &lock_fd);
	if (ret)
		return ret;
	err = list_update(&st.maps, &c);
	if (err == -ENOENT) {
		format_cidr(cidr, sizeof(cidr), &o->items.items[c.missing]);
		ret = fail_input(o->cmd, "%s is not on the %s list", cidr, o->cmd);
	} else if (err == -ENOSPC && c.why[0]) {
		ret = fail_input(o->cmd, "%s; nothing changed", c.why);
	} else if (err) {
		ret = fail_state(o->cmd, err, o->ifname,
				 c.deny ? "update the deny list" : "update the allow list");
	}
	state_close(&st);
	state_unlock(lock_fd);
	return ret;
}

static int list_run(struct list_opts *o)
{
	return strcmp(o->verb, "list") ? list_change(o) : list_show(o);
}

static int list_cmd(const char *cmd, int argc, char **argv)
{
	struct list_opts o = { .cmd = cmd };
	int ret;

	opterr = 0;
	ret = list_parse(argc, argv, &o);
	if (ret >= 0)
		goto out;
	ret = list_items(argc, argv, &o);
	if (ret >= 0)
		goto out;
	ret = require_root(cmd);
	if (!ret)
		ret = list_run(&o);
out:
	free(o.items.items);
	return ret;
}

int cmd_allow(int argc, char **argv)
{
	return list_cmd("allow", argc, argv);
}

int cmd_deny(int argc, char **argv)
{
	return list_cmd("deny", argc, argv);
}
