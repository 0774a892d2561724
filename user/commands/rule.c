// SPDX-License-Identifier: GPL-2.0
/* sluice rule add|del|list: limits for source CIDRs and traffic classes. */
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

static const char rule_usage[] =
	"Usage: sluice rule add IFACE CIDR --rate RATE [--burst N] [--action drop|mark|dry-run]\n"
	"                       [--dscp N] [--ecn] [--ipv4-prefix N | --ipv6-prefix N]\n"
	"                       [--new-sources RATE] [--overflow-rate RATE] [--initial-burst N]\n"
	"                       [--on-full drop|pass] [--aggregate [ipv4|ipv6]/LEN=RATE[,burst=N]]...\n"
	"                       [--proto tcp|udp|icmp|icmpv6] [--dport N[-M]] [--syn]\n"
	"       sluice rule del IFACE CIDR [--proto P] [--dport N[-M]] [--syn]\n"
	"       sluice rule list IFACE [--json]\n"
	"\n"
	"A rule limits the sources in CIDR (IPv4 or IPv6), optionally only for one\n"
	"class of traffic: a protocol, a destination port or range, and for TCP only\n"
	"connection attempts (--syn: SYN without ACK). The most specific rule for a\n"
	"packet wins: the longest CIDR, then the narrowest class; otherwise the\n"
	"default policy set by attach. Each rule has its own buckets. Fragments after\n"
	"the first carry no ports: only rules without a class apply to them.\n"
	"--aggregate also limits each wider prefix of the rule's sources as a whole\n"
	"(/24=5000/s: every /24 together at most 5000/s), up to 4 per rule.\n";

enum { OPT_JSON = 256, OPT_OPTION };

static const struct option rule_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "rate", required_argument, NULL, OPT_OPTION },
	{ "burst", required_argument, NULL, OPT_OPTION + 1 },
	{ "action", required_argument, NULL, OPT_OPTION + 2 },
	{ "dscp", required_argument, NULL, OPT_OPTION + 3 },
	{ "ecn", no_argument, NULL, OPT_OPTION + 4 },
	{ "ipv4-prefix", required_argument, NULL, OPT_OPTION + 5 },
	{ "ipv6-prefix", required_argument, NULL, OPT_OPTION + 6 },
	{ "new-sources", required_argument, NULL, OPT_OPTION + 7 },
	{ "overflow-rate", required_argument, NULL, OPT_OPTION + 8 },
	{ "initial-burst", required_argument, NULL, OPT_OPTION + 9 },
	{ "on-full", required_argument, NULL, OPT_OPTION + 10 },
	{ "aggregate", required_argument, NULL, OPT_OPTION + 11 },
	{ "proto", required_argument, NULL, OPT_OPTION + 12 },
	{ "dport", required_argument, NULL, OPT_OPTION + 13 },
	{ "syn", no_argument, NULL, OPT_OPTION + 14 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Options 0-11 shape the limiter; 12-14 the match. */
#define FIRST_MATCH_OPTION 12

struct rule_opts {
	const char *verb;
	const char *ifname;
	const char *cidr;
	struct rule rule;
	bool json;
	bool has_rate;
	bool has_limiter;
};

static int rule_parse(int argc, char **argv, struct rule_opts *o)
{
	const char *why, *name;
	int opt;

	settings_default(&o->rule.settings);
	while ((opt = cli_next_option("rule", argc, argv, rule_options)) != -1) {
		if (opt == 'h') {
			fputs(rule_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_BAD_INPUT;
		if (opt == OPT_JSON) {
			o->json = true;
			continue;
		}
		name = cli_option_name(rule_options, opt);
		o->has_rate |= !strcmp(name, "rate");
		o->has_limiter |= opt - OPT_OPTION < FIRST_MATCH_OPTION;
		if (option_apply(&o->rule.settings, &o->rule.match, name, optarg, &why))
			return fail_input("rule", "bad value '%s' for --%s: %s", optarg ?: "", name,
					  why);
	}
	if (optind >= argc)
		return fail_input("rule", "missing add, del or list (see 'sluice rule --help')");
	o->verb = argv[optind++];
	if (optind >= argc)
		return fail_input("rule", "missing interface name");
	o->ifname = argv[optind++];
	if (cli_ifname("rule", o->ifname))
		return EXIT_BAD_INPUT;
	if (strcmp(o->verb, "list")) {
		if (optind >= argc)
			return fail_input("rule", "missing CIDR");
		o->cidr = argv[optind++];
	}
	if (optind < argc)
		return fail_input("rule", "unexpected argument '%s'", argv[optind]);
	return -1;
}

/* Checks what a verb takes; returns -1 to go on, or the exit status. */
static int rule_check(struct rule_opts *o)
{
	const char *why;

	if (strcmp(o->verb, "add") && strcmp(o->verb, "del") && strcmp(o->verb, "list"))
		return fail_input("rule", "unknown verb '%s' (expected add, del or list)", o->verb);
	if (!strcmp(o->verb, "add") && !o->has_rate)
		return fail_input("rule", "add needs --rate (for example --rate 100/s)");
	if (strcmp(o->verb, "add") && o->has_limiter)
		return fail_input("rule", "%s takes no limiter options", o->verb);
	if (strcmp(o->verb, "list") && o->json)
		return fail_input("rule", "--json goes with list");
	if (o->cidr && cidr_arg("rule", o->cidr, &o->rule.match.cidr, &why))
		return fail_input("rule", "bad CIDR '%s': %s", o->cidr, why);
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
	if (doc->n_rules == SLUICE_MAX_POLICIES - 1)
		return fail_input("rule", "too many rules (at most %d)", SLUICE_MAX_POLICIES - 1);
	doc->rules[doc->n_rules++] = *r;
	if (doc_validate(doc, &why))
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

static void rule_list_json(const struct policy_doc *doc)
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
		json_string(&j, "action", action_name(r->settings.action));
		format_settings(buf, sizeof(buf), &r->settings);
		json_string(&j, "options", buf);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_finish(&j);
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

static int rule_run(struct rule_opts *o)
{
	struct policy_doc doc;
	bool list = !strcmp(o->verb, "list");
	struct state st;
	int ret, lock_fd = -1;

	ret = list ? state_open_cmd("rule", o->ifname, &st)
		   : state_open_locked("rule", o->ifname, &st, &lock_fd);
	if (ret)
		return ret;
	ret = policy_load_cmd("rule", &st, &doc, false);
	if (ret)
		goto out;
	if (list) {
		if (o->json)
			rule_list_json(&doc);
		else
			rule_list_human(&doc);
		goto out;
	}
	ret = !strcmp(o->verb, "add") ? rule_add(&doc, &o->rule) : rule_del(&doc, &o->rule);
	if (!ret)
		ret = policy_store_cmd("rule", &st, &doc, false);
out:
	doc_free(&doc);
	state_close(&st);
	state_unlock(lock_fd);
	return ret;
}

int cmd_rule(int argc, char **argv)
{
	struct rule_opts o = {};
	int ret;

	ret = rule_parse(argc, argv, &o);
	if (ret < 0)
		ret = rule_check(&o);
	if (ret >= 0)
		return ret;
	ret = require_root("rule");
	return ret ? ret : rule_run(&o);
}
