// SPDX-License-Identifier: GPL-2.0
/* sluice apply: replace the whole policy from a file, in one step. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "commands/policy_file.h"
#include "outputs/report.h"
#include "text/conf.h"

/* What --check found: a line, or with --json a document. */
static int checked_say(const struct cli_args *a)
{
	const char *file = strcmp(a->file, "-") ? a->file : "standard input";
	const struct policy_doc *doc = a->cmd.apply.doc;
	struct report rp;
	struct json j;

	report_start(&rp, &j, a->json);
	report_open(&rp, NULL);
	report_string(&rp, "command", NULL, "apply");
	report_name(&rp, "file", "%s: ", file);
	report_bool(&rp, "ok", NULL, true);
	report_string(&rp, NULL, "%s", "ok (default, ");
	report_u64(&rp, "rules", "%llu rules, ", (uint64_t)doc->n_rules);
	report_u64(&rp, "allow", "%llu allow, ", doc->allow.count);
	report_u64(&rp, "deny", "%llu deny)", doc->deny.count);
	report_close(&rp);
	report_eol(&rp);
	return fail_json("apply", report_end(&rp));
}

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
	a->cmd.apply.doc = calloc(1, sizeof(*a->cmd.apply.doc));
	if (!a->cmd.apply.doc)
		return fail_runtime("apply", -ENOMEM, "cannot read %s", a->file);
	if (conf_parse(a->file, a->cmd.apply.doc, err_line, sizeof(err_line))) {
		free(a->cmd.apply.doc);
		a->cmd.apply.doc = NULL;
		return fail_input("apply", "%s", err_line);
	}
	if (!a->given[OPT_CHECK])
		return -1;
	/* Checked: done here, before the privilege check and any state. */
	return checked_say(a);
}

/* Under the lock: IFACE's state, or why not; not attached points to attach -f. */
static int apply_open(const struct cli_args *a, struct state *st)
{
	int err = state_exists(a->ifname);

	if (err < 0)
		return state_fail_cmd("apply", err, a->ifname);
	if (!err)
		return fail_input("apply",
				  "%s is not attached (to attach it with this file: sluice attach "
				  "%s -f %s)",
				  a->ifname, a->ifname, a->file);
	return state_open_cmd("apply", a->ifname, st);
}

static int apply_run(struct cli_args *a, struct state *unused)
{
	struct state st;
	int ret;

	(void)unused;
	ret = apply_open(a, &st);
	if (ret)
		return ret;
	ret = attach_settings_check("apply", &st, a->file, &a->cmd.apply.doc->attach)
		      ?: policy_replace_cmd("apply", &st, a->cmd.apply.doc);
	state_close(&st);
	return ret;
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
		"applied; --check only checks FILE, without root or an interface. The same\n"
		"policy again changes nothing. An 'attach' statement must match how IFACE is\n"
		"attached ('sluice attach IFACE -f FILE --replace' changes that). IFACE not\n"
		"attached is refused: 'sluice attach IFACE -f FILE' attaches it. 'sluice show\n"
		"IFACE' prints the running policy in the same format (sluice.conf(5)):\n"
		"\n"
		"  attach [mode MODE] [max-sources N] [group GROUP]\n"
		"  default rate RATE [OPTION VALUE]...\n"
		"  rule CIDR rate RATE [OPTION VALUE]... [proto P] [dport N[-M]] [syn]\n"
		"       [sport N[-M]] [tcp-flags MASK/FLAGS] [icmp-type T[/C]] [length N[-M]]\n"
		"       [dst CIDR]\n"
		"  allow CIDR\n"
		"  deny CIDR [until TIME]",
	.iface = IFACE_OPTIONAL, /* none with --check */
	.caps = CAPS_CHANGE,
	.state = USE_LOCK, /* it opens IFACE itself, to point to attach -f when not attached */
	.check = apply_check,
	.run = apply_run,
};
