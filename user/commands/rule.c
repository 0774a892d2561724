// SPDX-License-Identifier: GPL-2.0
/* sluice rule add|del|list|flush: limits for source CIDRs and traffic classes. */
#include <string.h>
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"
#include "outputs/report.h"
#include "text/conf.h"
#include "values/words.h"

/* Checks what a verb takes; returns -1 to go on, or the exit status. */
static int rule_check(struct cli_args *a)
{
	bool add = !strcmp(a->verb, "add"), del = !strcmp(a->verb, "del");
	int limiter = option_given_in(a, SCOPE_LIMITER), match = option_given_in(a, SCOPE_MATCH);
	const char *why;

	if (!add && limiter >= 0)
		return fail_input("rule", "%s takes no limiter options (--%s)", a->verb,
				  option_table[limiter].name);
	if (!add && !del && match >= 0)
		return fail_input("rule", "%s takes no match options (--%s)", a->verb,
				  option_table[match].name);
	if (!add && a->given[OPT_REPLACE])
		return fail_input("rule", "%s takes no --replace", a->verb);
	if (add && !a->given[OPT_RATE])
		return fail_input("rule", "add needs --rate (for example --rate 100/s)");
	if (!add && !del) {
		if (a->nargs)
			return fail_input("rule", "unexpected argument '%s'", a->args[0]);
		return -1;
	}
	if (!a->nargs)
		return fail_input("rule", "missing CIDR");
	if (a->nargs > 1)
		return fail_input("rule", "unexpected argument '%s'", a->args[1]);
	if (cidr_arg("rule", a->args[0], &a->match.cidr, &why))
		return fail_input("rule", "bad CIDR '%s': %s", a->args[0], why);
	return -1;
}

static void rule_remove(struct policy_doc *doc, int i)
{
	memmove(&doc->rules[i], &doc->rules[i + 1],
		(size_t)(doc->n_rules - i - 1) * sizeof(doc->rules[0]));
	doc->n_rules--;
}

/* The last rule moved to position i, where the one it replaces stood. */
static void rule_move_last(struct policy_doc *doc, int i)
{
	struct rule last = doc->rules[doc->n_rules - 1];

	memmove(&doc->rules[i + 1], &doc->rules[i],
		(size_t)(doc->n_rules - 1 - i) * sizeof(doc->rules[0]));
	doc->rules[i] = last;
}

/*
 * r added; with replace, in place of the rule of the same match, which
 * keeps its id (and its sources their state) while its meter keeps its
 * shape, as apply of the same change would.
 */
static int rule_add(struct policy_doc *doc, const struct rule *r, bool replace)
{
	int i = doc_find_rule(doc, &r->match);
	char cidr[64];
	const char *why;

	if (i >= 0 && !replace) {
		format_cidr(cidr, sizeof(cidr), &r->match.cidr);
		return fail_input("rule",
				  "a rule for %s with this class already exists (change it with "
				  "--replace, or apply)",
				  cidr);
	}
	if (i >= 0)
		rule_remove(doc, i);
	if (doc_add_rule(doc, &r->settings, &r->match, &why) || doc_validate(doc, &why))
		return fail_input("rule", "%s", why);
	if (i >= 0)
		rule_move_last(doc, i);
	return EXIT_OK;
}

static int rule_del(struct policy_doc *doc, const struct rule *r)
{
	char cidr[64];
	int i = doc_find_rule(doc, &r->match);

	if (i < 0) {
		format_cidr(cidr, sizeof(cidr), &r->match.cidr);
		return fail_input("rule", "no rule for %s with this class", cidr);
	}
	rule_remove(doc, i);
	return EXIT_OK;
}

/* One rule: its fields in JSON, its CIDR, class and options as a line of text. */
static void rule_report(struct report *rp, const struct rule *r)
{
	char buf[640];

	report_open(rp, NULL);
	format_cidr(buf, sizeof(buf), &r->match.cidr);
	report_string(rp, "cidr", "%-20s", buf);
	report_u64(rp, "id", NULL, r->id);
	report_string(rp, "proto", NULL, r->match.proto ? proto_name(r->match.proto) : "any");
	report_u64(rp, "dport_low", NULL, r->match.dport_lo);
	report_u64(rp, "dport_high", NULL, r->match.dport_hi);
	report_bool(rp, "syn", NULL, r->match.syn);
	format_match(buf, sizeof(buf), &r->match);
	report_string(rp, "match", NULL, buf);
	report_string(rp, NULL, " %-24s", buf[0] ? buf : "(any traffic)");
	format_rate(buf, sizeof(buf), &r->settings.rate);
	report_string(rp, "rate", NULL, buf);
	report_string(rp, "algorithm", NULL, algorithm_name(r->settings.algorithm));
	report_u64(rp, "window_ns", NULL, settings_window_ns(&r->settings));
	report_u64(rp, "warmup_ns", NULL, r->settings.warmup_ns);
	report_string(rp, "action", NULL, action_name(r->settings.action));
	report_string(rp, "key", NULL, key_kind_word(r->settings.key_kind));
	format_settings(buf, sizeof(buf), &r->settings);
	report_string(rp, "options", " %s\n", buf);
	report_close(rp);
}

/* The rules, then (in text) the default policy as the last line. */
static int rule_list(const struct policy_doc *doc, bool json)
{
	char opts[640];
	struct report rp;
	struct json j;
	int i;

	report_start(&rp, &j, json);
	report_list_open(&rp, NULL);
	for (i = 0; i < doc->n_rules; i++)
		rule_report(&rp, &doc->rules[i]);
	report_list_close(&rp);
	/* The default policy: a line of text; JSON readers get it from show. */
	report_string(&rp, NULL, "%-20s", "default");
	report_string(&rp, NULL, " %-24s", "(any traffic)");
	format_settings(opts, sizeof(opts), &doc->dflt);
	report_string(&rp, NULL, " %s\n", opts);
	return fail_json("rule", report_end(&rp));
}

static int rule_run(struct cli_args *a, struct state *st)
{
	struct rule r = { .match = a->match, .settings = a->settings };
	struct policy_doc doc;
	int ret;

	ret = policy_load_cmd("rule", st, &doc, false);
	if (ret)
		return ret;
	if (!strcmp(a->verb, "list")) {
		ret = rule_list(&doc, a->json);
		goto out;
	}
	if (!strcmp(a->verb, "flush") && !doc.n_rules)
		goto out; /* nothing to flush: no new generation, nothing to audit */
	if (!strcmp(a->verb, "flush"))
		doc.n_rules = 0;
	else
		ret = !strcmp(a->verb, "add") ? rule_add(&doc, &r, a->given[OPT_REPLACE])
					      : rule_del(&doc, &r);
	if (!ret)
		ret = policy_store_cmd("rule", st, &doc, false);
out:
	doc_free(&doc);
	return ret;
}

const struct command cmd_rule = {
	.id = CMD_RULE,
	.name = "rule",
	.summary = "add, delete or list rules for source CIDRs and classes",
	.synopsis = "add IFACE CIDR --rate RATE [--replace] [OPTIONS] [MATCH]\n"
		    "del IFACE CIDR [MATCH]\n"
		    "list IFACE [--json]\n"
		    "flush IFACE",
	.description =
		"A rule limits the sources in CIDR (IPv4 or IPv6), optionally only for one\n"
		"class of traffic (MATCH): a protocol, a destination or source port or range,\n"
		"for TCP connection attempts (--syn: SYN without ACK) or flags (--tcp-flags\n"
		"SYN,ACK/SYN), an ICMP type and code, a frame length range, a destination\n"
		"CIDR. The most specific rule for a packet wins: the longest CIDR, then the\n"
		"narrowest class; otherwise the default policy set by attach. Each rule has\n"
		"its own buckets. Fragments after the first carry no layer 4 header: only\n"
		"rules without --proto (and what needs it) apply to them, --length and\n"
		"--dst included.\n"
		"--aggregate also limits each wider prefix of the rule's sources as a whole\n"
		"(/24=5000/s: every /24 together at most 5000/s), up to 4 per rule.\n"
		"add --replace changes the rule of the same CIDR and class in place: its\n"
		"sources keep their state, the same share of the new burst as of the old,\n"
		"unless its algorithm, window or warm-up changes (then they start afresh).\n"
		"del is also spelled delete or rm, list ls or show; flush deletes every rule.",
	.verbs = edit_verbs,
	.more_args = true,
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.check = rule_check,
	.run = rule_run,
};
