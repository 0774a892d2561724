// SPDX-License-Identifier: GPL-2.0
/* sluice rule add|del|list|flush: limits for source CIDRs and traffic classes. */
#include <string.h>
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"
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

static int rule_add(struct policy_doc *doc, const struct rule *r)
{
	char cidr[64];
	const char *why;

	if (doc_find_rule(doc, &r->match) >= 0) {
		format_cidr(cidr, sizeof(cidr), &r->match.cidr);
		return fail_input("rule",
				  "a rule for %s with this class already exists (delete it "
				  "first, or use apply)",
				  cidr);
	}
	if (doc_add_rule(doc, &r->settings, &r->match, &why) || doc_validate(doc, &why))
		return fail_input("rule", "%s", why);
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
	memmove(&doc->rules[i], &doc->rules[i + 1],
		(size_t)(doc->n_rules - i - 1) * sizeof(doc->rules[0]));
	doc->n_rules--;
	return EXIT_OK;
}

static int rule_list_json(const struct policy_doc *doc)
{
	char buf[640];
	struct json j;
	int i;

	json_init(&j, stdout);
	json_array_begin(&j, NULL);
	for (i = 0; i < doc->n_rules; i++) {
		const struct rule *r = &doc->rules[i];

		json_object_begin(&j, NULL);
		format_cidr(buf, sizeof(buf), &r->match.cidr);
		json_string(&j, "cidr", buf);
		json_u64(&j, "id", r->id);
		json_string(&j, "proto", r->match.proto ? proto_name(r->match.proto) : "any");
		json_u64(&j, "dport_low", r->match.dport_lo);
		json_u64(&j, "dport_high", r->match.dport_hi);
		json_bool(&j, "syn", r->match.syn);
		format_rate(buf, sizeof(buf), &r->settings.rate);
		json_string(&j, "rate", buf);
		json_string(&j, "algorithm", algorithm_name(r->settings.algorithm));
		json_u64(&j, "window_ns", settings_window_ns(&r->settings));
		json_u64(&j, "warmup_ns", r->settings.warmup_ns);
		json_string(&j, "action", action_name(r->settings.action));
		format_settings(buf, sizeof(buf), &r->settings);
		json_string(&j, "options", buf);
		json_object_end(&j);
	}
	json_array_end(&j);
	return fail_json("rule", json_finish(&j));
}

static void rule_list_human(const struct policy_doc *doc)
{
	char cidr[64], opts[640], match[128];
	int i;

	for (i = 0; i < doc->n_rules; i++) {
		const struct rule *r = &doc->rules[i];

		format_cidr(cidr, sizeof(cidr), &r->match.cidr);
		format_settings(opts, sizeof(opts), &r->settings);
		format_match(match, sizeof(match), &r->match);
		printf("%-20s %-24s %s\n", cidr, match[0] ? match : "(any traffic)", opts);
	}
	format_settings(opts, sizeof(opts), &doc->dflt);
	printf("%-20s %-24s %s\n", "default", "(any traffic)", opts);
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
		if (a->json)
			ret = rule_list_json(&doc);
		else
			rule_list_human(&doc);
		goto out;
	}
	if (!strcmp(a->verb, "flush") && !doc.n_rules)
		goto out; /* nothing to flush: no new generation, nothing to audit */
	if (!strcmp(a->verb, "flush"))
		doc.n_rules = 0;
	else
		ret = !strcmp(a->verb, "add") ? rule_add(&doc, &r) : rule_del(&doc, &r);
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
	.synopsis =
		"add IFACE CIDR --rate RATE [OPTIONS] [--proto PROTO] [--dport PORT[-PORT]] [--syn]\n"
		"del IFACE CIDR [--proto PROTO] [--dport PORT[-PORT]] [--syn]\n"
		"list IFACE [--json]\n"
		"flush IFACE",
	.description =
		"A rule limits the sources in CIDR (IPv4 or IPv6), optionally only for one\n"
		"class of traffic: a protocol, a destination port or range, and for TCP only\n"
		"connection attempts (--syn: SYN without ACK). The most specific rule for a\n"
		"packet wins: the longest CIDR, then the narrowest class; otherwise the\n"
		"default policy set by attach. Each rule has its own buckets. Fragments after\n"
		"the first carry no ports: only rules without a class apply to them.\n"
		"--aggregate also limits each wider prefix of the rule's sources as a whole\n"
		"(/24=5000/s: every /24 together at most 5000/s), up to 4 per rule.\n"
		"del is also spelled delete or rm, list ls or show; flush deletes every rule.",
	.verbs = edit_verbs,
	.more_args = true,
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.check = rule_check,
	.run = rule_run,
};
