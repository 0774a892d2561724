// SPDX-License-Identifier: GPL-2.0
/* The allow and deny lists: add, del, list, flush. */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/json.h"
#include "commands/list.h"
#include "maps/bans.h"
#include "maps/policy_maps.h"
#include "outputs/ban_audit.h"
#include "outputs/report.h"
#include "reads/counters.h"
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

/*
 * A ban of the penalty box, after the deny entries: its key, the time it
 * has left, and why: "192.0.2.7/32 expires in 58s ban: 1501 refused in 10s,
 * level 1, for 1m, rule 192.0.2.0/24 proto udp", with {"ban": {...}} in JSON.
 */
static void ban_write(struct report *rp, const struct policy_doc *doc, const struct ban_entry *e,
		      uint64_t now_ns)
{
	struct list_entry le = { .expires_ns = e->ban.banned_until_ns };
	char rule[RULE_NAME_MAX], why[160], left[32];
	uint64_t left_s;

	ban_key_cidr(&e->key, &le.cidr);
	format_cidr(why, sizeof(why), &le.cidr);
	left_s = seconds_left(&le, now_ns);
	format_duration(left, sizeof(left), left_s * NSEC_PER_SEC);
	rule_name(doc, e->key.policy, rule, sizeof(rule));
	report_open(rp, NULL);
	report_string(rp, "cidr", "%s", why);
	report_u64(rp, "expires_in_s", NULL, left_s);
	report_string(rp, NULL, " expires in %s", left);
	report_open(rp, "ban");
	ban_describe(why, sizeof(why), &e->ban);
	report_string(rp, NULL, " ban: %s", why);
	report_string(rp, "rule", ", rule %s", rule);
	report_u64(rp, "refused", NULL, e->ban.refused);
	report_u64(rp, "period_ms", NULL, e->ban.period_ns / 1000000);
	report_u64(rp, "level", NULL, e->ban.level);
	report_u64(rp, "length_s", NULL, e->ban.length_ns / NSEC_PER_SEC);
	report_close(rp);
	report_close(rp);
	report_eol(rp);
}

static int list_print(const struct cli_args *a, const struct policy_doc *doc,
		      const struct cidr_list *l, const struct ban_list *bans)
{
	uint64_t now_ns = monotonic_ns();
	struct report rp;
	struct json j;
	size_t i;

	report_start(&rp, &j, a->json);
	report_list_open(&rp, NULL);
	for (i = 0; i < l->count; i++)
		entry_write(&rp, is_deny(a), &l->items[i], now_ns);
	for (i = 0; bans && i < bans->count; i++)
		ban_write(&rp, doc, &bans->items[i], now_ns);
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

/* The deny list's bans in force (none for allow), each noticed for the audit. */
static int list_bans(struct cli_args *a, struct state *st, const struct policy_doc *doc,
		     struct ban_list *bans)
{
	int err;

	memset(bans, 0, sizeof(*bans));
	if (!is_deny(a))
		return 0;
	ban_audit_notice(st, doc, "deny list");
	err = bans_read(st->maps.bans, monotonic_ns(), bans);
	return err ? fail_state(a->name, err, a->ifname, "read the bans") : 0;
}

/* Lifts every ban (flush), entries and escalation memory; how many go to *lifted. */
static int bans_flush(struct cli_args *a, struct state *st, int *lifted)
{
	struct list_entry any[2] = { { .cidr.family = SLUICE_FAMILY_IPV4 },
				     { .cidr.family = SLUICE_FAMILY_IPV6 } };
	struct cidr_list all = { .items = any, .count = 2 };
	int n = bans_lift(st->maps.bans, &all);

	if (n < 0)
		return fail_state(a->name, n, a->ifname, "lift the bans");
	*lifted = n;
	return EXIT_OK;
}

/*
 * Bans lifted, then a new generation: the list's change, or the same
 * configuration published again. Either ends the over-limit cache's
 * entries of the lifted bans (bpf/hot.h, hot_remember_ban), which a
 * generation published before the lift would let stand until the bans'
 * ends; and the audit trail gets the command.
 */
static int list_publish_after_lift(struct cli_args *a, struct state *st, struct cidr_list *changed,
				   int lifted)
{
	if (changed->count)
		return list_change(a, st, false, changed);
	if (lifted && config_republish(&st->maps))
		return fail_state(a->name, -EIO, a->ifname, "publish the lift");
	return EXIT_OK;
}

/* list prints the list; flush removes every entry of it, in one step, and (deny) every ban. */
static int list_whole(struct cli_args *a, struct state *st, bool flush)
{
	struct policy_doc doc;
	struct ban_list bans;
	struct cidr_list *l;
	int ret, lifted = 0;

	ret = policy_load_cmd(a->name, st, &doc, true);
	if (ret)
		return ret;
	l = is_deny(a) ? &doc.deny : &doc.allow;
	if (!flush) {
		ret = list_bans(a, st, &doc, &bans);
		if (!ret)
			ret = list_print(a, &doc, l, &bans);
		ban_list_free(&bans);
	} else {
		if (is_deny(a))
			ret = bans_flush(a, st, &lifted);
		if (!ret)
			ret = list_publish_after_lift(a, st, l, lifted);
	}
	doc_free(&doc);
	return ret;
}

/*
 * deny del: a CIDR that holds or is held by a ban's key lifts that ban
 * (deleting its entry, and with it the key's escalation memory: the next
 * ban is a first one); the CIDRs on the deny list leave it as before. A
 * CIDR that is neither is refused, and nothing changes. bans: those in
 * force, read once by the caller.
 */
static int deny_del(struct cli_args *a, struct state *st, const struct ban_list *bans)
{
	struct cidr_list *items = &a->cmd.list.items, listed = { 0 };
	struct policy_doc doc;
	char cidr[64];
	size_t i;
	int ret, lifted = 0, *banned;

	ret = policy_load_cmd(a->name, st, &doc, true);
	if (ret)
		return ret;
	banned = calloc(items->count ?: 1, sizeof(*banned));
	if (!banned || bans_overlapping(bans, items, banned))
		ret = fail_runtime(a->name, -ENOMEM, "too many CIDRs");
	for (i = 0; !ret && i < items->count; i++) {
		/* The list as read is sorted: a long one stays quick too. */
		if (cidr_list_has(&doc.deny, &items->items[i].cidr)) {
			if (cidr_list_add(&listed, &items->items[i].cidr))
				ret = fail_runtime(a->name, -ENOMEM, "too many CIDRs");
		} else if (!banned[i]) {
			format_cidr(cidr, sizeof(cidr), &items->items[i].cidr);
			ret = fail_input(a->name, "%s is not on the deny list", cidr);
		}
	}
	if (!ret) {
		lifted = bans_lift(st->maps.bans, items);
		if (lifted < 0)
			ret = fail_state(a->name, lifted, a->ifname, "lift the bans");
	}
	if (!ret)
		ret = list_publish_after_lift(a, st, &listed, lifted);
	free(listed.items);
	free(banned);
	doc_free(&doc);
	return ret;
}

/*
 * With a ban in force, deny del takes deny_del's way, given the bans read
 * once here. Without one it is the plain list change, whose refusal of an
 * absent entry still repairs the sets a killed command left, and whose -f
 * of a long list stays linear.
 */
static int deny_del_or_change(struct cli_args *a, struct state *st)
{
	struct ban_list bans;
	int ret = bans_read(st->maps.bans, monotonic_ns(), &bans);

	if (ret)
		return fail_state(a->name, ret, a->ifname, "read the bans");
	if (bans.count) {
		ret = deny_del(a, st, &bans);
	} else {
		set_expiry(&a->cmd.list.items, a->cmd.list.timeout_ns);
		ret = list_change(a, st, false, &a->cmd.list.items);
	}
	ban_list_free(&bans);
	return ret;
}

int list_run(struct cli_args *a, struct state *st)
{
	if (!strcmp(a->verb, "list") || !strcmp(a->verb, "flush"))
		return list_whole(a, st, !strcmp(a->verb, "flush"));
	if (is_deny(a) && !strcmp(a->verb, "del"))
		return deny_del_or_change(a, st);
	set_expiry(&a->cmd.list.items, a->cmd.list.timeout_ns);
	return list_change(a, st, !strcmp(a->verb, "add"), &a->cmd.list.items);
}
