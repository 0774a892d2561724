// SPDX-License-Identifier: GPL-2.0
/* The allow and deny lists: add, del, list, flush. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/json.h"
#include "commands/list.h"
#include "maps/policy_maps.h"
#include "outputs/report.h"
#include "text/conf.h"

static bool is_deny(const struct cli_args *a)
{
	return a->command == CMD_DENY;
}

/* The CIDRs of add or del, from the arguments or the file; all or none. */
static int list_items(struct cli_args *a)
{
	char err[512];
	const char *why;
	struct cidr c;
	int i;

	if (a->file && a->nargs)
		return fail_input(a->name, "give CIDRs or -f FILE, not both");
	if (a->file)
		return cidr_file_parse(a->file, &a->cmd.list.items, err, sizeof(err))
			       ? fail_input(a->name, "%s", err)
			       : -1;
	if (!a->nargs)
		return fail_input(a->name, "missing CIDR (or -f FILE)");
	for (i = 0; i < a->nargs; i++) {
		if (cidr_arg(a->name, a->args[i], &c, &why))
			return fail_input(a->name, "bad CIDR '%s': %s", a->args[i], why);
		if (cidr_list_add(&a->cmd.list.items, &c))
			return fail_runtime(a->name, -ENOMEM, "too many CIDRs");
	}
	return -1;
}

int list_check(struct cli_args *a)
{
	bool change = !strcmp(a->verb, "add") || !strcmp(a->verb, "del");

	if (a->given[OPT_TIMEOUT] && strcmp(a->verb, "add"))
		return fail_input(a->name, "--timeout goes with add");
	if (!change && a->nargs)
		return fail_input(a->name, "unexpected argument '%s'", a->args[0]);
	if (!change && a->file)
		return fail_input(a->name, "-f goes with add or del");
	return change ? list_items(a) : -1;
}

/* Whole seconds a timed entry has left, rounded up: 0 only once it expired since it was read. */
static uint64_t seconds_left(const struct list_entry *e, uint64_t now_ns)
{
	if (e->expires_ns <= now_ns)
		return 0;
	return (e->expires_ns - now_ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
}

/*
 * The allow list is CIDRs, a JSON array of strings. The deny list says what
 * each timed entry has left: "192.0.2.7/32 expires in 9m58s" (format_duration),
 * or {"cidr": ..., "expires_in_s": 598}, null when it never expires.
 */
static void entry_write(struct report *rp, bool deny, const struct list_entry *e, uint64_t now_ns)
{
	char cidr[64], left[32];
	uint64_t left_s = seconds_left(e, now_ns);

	format_cidr(cidr, sizeof(cidr), &e->cidr);
	if (!deny) {
		report_element(rp, "%s", cidr);
		report_eol(rp);
		return;
	}
	report_open(rp, NULL);
	report_string(rp, "cidr", "%s", cidr);
	if (e->expires_ns) {
		format_duration(left, sizeof(left), left_s * NSEC_PER_SEC);
		report_u64(rp, "expires_in_s", NULL, left_s);
		report_string(rp, NULL, " expires in %s", left);
	} else {
		report_null(rp, "expires_in_s");
	}
	report_close(rp);
	report_eol(rp);
}

static int list_print(const struct cli_args *a, const struct cidr_list *l)
{
	uint64_t now_ns = monotonic_ns();
	struct report rp;
	struct json j;
	size_t i;

	report_start(&rp, &j, a->json);
	report_list_open(&rp, NULL);
	for (i = 0; i < l->count; i++)
		entry_write(&rp, is_deny(a), &l->items[i], now_ns);
	report_list_close(&rp);
	return fail_json(a->name, report_end(&rp));
}

/* deny add --timeout: every entry expires that long after now, as the change is made. */
static void set_expiry(struct cidr_list *items, uint64_t timeout_ns)
{
	uint64_t expires_ns = timeout_ns ? monotonic_ns() + timeout_ns : 0;
	size_t i;

	for (i = 0; i < items->count; i++)
		items->items[i].expires_ns = expires_ns;
}

/* items added or removed: all of them or, on any failure, nothing. */
static int list_change(struct cli_args *a, struct state *st, bool add, struct cidr_list *items)
{
	struct list_change c = { .deny = is_deny(a), .add = add, .items = items };
	char cidr[64];
	int err;

	err = list_update(&st->maps, &c);
	if (err == -ENOENT) {
		format_cidr(cidr, sizeof(cidr), &items->items[c.missing].cidr);
		return fail_input(a->name, "%s is not on the %s list", cidr, a->name);
	}
	if (err == -ENOSPC && c.why[0])
		return fail_input(a->name, "%s; nothing changed", c.why);
	if (err)
		return fail_state(a->name, err, a->ifname,
				  c.deny ? "update the deny list" : "update the allow list");
	return EXIT_OK;
}

/* list prints the list; flush removes every entry of it, in one step. */
static int list_whole(struct cli_args *a, struct state *st, bool flush)
{
	struct policy_doc doc;
	struct cidr_list *l;
	int ret;

	ret = policy_load_cmd(a->name, st, &doc, true);
	if (ret)
		return ret;
	l = is_deny(a) ? &doc.deny : &doc.allow;
	if (!flush)
		ret = list_print(a, l);
	else if (l->count)
		ret = list_change(a, st, false, l);
	doc_free(&doc);
	return ret;
}

int list_run(struct cli_args *a, struct state *st)
{
	if (!strcmp(a->verb, "list") || !strcmp(a->verb, "flush"))
		return list_whole(a, st, !strcmp(a->verb, "flush"));
	set_expiry(&a->cmd.list.items, a->cmd.list.timeout_ns);
	return list_change(a, st, !strcmp(a->verb, "add"), &a->cmd.list.items);
}
