// SPDX-License-Identifier: GPL-2.0
/* sluice set: change the default policy live; buckets keep their state. */
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

static const char set_usage[] =
	"Usage: sluice set IFACE [--rate RATE] [--burst N] [--action drop|mark|dry-run]\n"
	"                  [--dscp N] [--ecn] [--new-sources RATE] [--overflow-rate RATE]\n"
	"                  [--initial-burst N] [--on-full drop|pass]\n"
	"                  [--aggregate [ipv4|ipv6]/LEN=RATE[,burst=N] | none]...\n"
	"\n"
	"Change the default policy on IFACE without reattaching. Existing buckets keep\n"
	"their state; every packet sees either the old or the new settings as a whole.\n"
	"A new --rate without --burst keeps a burst set before, and otherwise derives it\n"
	"again (one second of rate). --action drop or dry-run clears --dscp and --ecn.\n"
	"The --aggregate options given replace all aggregates; --aggregate none clears them.\n";

enum { OPT_LIMITER = 256 };
/* The limiter options below, OPT_LIMITER + 0 to SET_OPTIONS - 1. */
#define SET_OPTIONS 10

static const struct option set_options[] = {
	{ "rate", required_argument, NULL, OPT_LIMITER },
	{ "burst", required_argument, NULL, OPT_LIMITER + 1 },
	{ "action", required_argument, NULL, OPT_LIMITER + 2 },
	{ "dscp", required_argument, NULL, OPT_LIMITER + 3 },
	{ "ecn", no_argument, NULL, OPT_LIMITER + 4 },
	{ "new-sources", required_argument, NULL, OPT_LIMITER + 5 },
	{ "overflow-rate", required_argument, NULL, OPT_LIMITER + 6 },
	{ "initial-burst", required_argument, NULL, OPT_LIMITER + 7 },
	{ "on-full", required_argument, NULL, OPT_LIMITER + 8 },
	{ "aggregate", required_argument, NULL, OPT_LIMITER + 9 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The changes, parsed against a blank limiter to know what was given. */
struct set_opts {
	const char *ifname;
	struct settings given;
	bool has[SET_OPTIONS];
};

static int set_parse(int argc, char **argv, struct set_opts *o)
{
	const char *why;
	int opt;

	settings_default(&o->given);
	while ((opt = cli_next_option("set", argc, argv, set_options)) != -1) {
		if (opt == 'h') {
			fputs(set_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_BAD_INPUT;
		o->has[opt - OPT_LIMITER] = true;
		if (option_apply(&o->given, NULL, cli_option_name(set_options, opt), optarg, &why))
			return fail_input("set", "bad value '%s' for --%s: %s", optarg ?: "",
					  cli_option_name(set_options, opt), why);
	}
	if (cli_one_ifname("set", argc, argv, &o->ifname))
		return EXIT_BAD_INPUT;
	for (opt = 0; opt < SET_OPTIONS && !o->has[opt]; opt++)
		;
	if (opt == SET_OPTIONS)
		return fail_input("set", "nothing to change (give --rate, --burst, --action, "
					 "--dscp, --ecn, --new-sources, --overflow-rate, "
					 "--initial-burst, --on-full or --aggregate)");
	return -1;
}

static void set_apply(const struct set_opts *o, struct settings *s)
{
	if (o->has[0]) {
		/* A derived burst follows the new rate; a typed one stays. */
		if (s->burst.bytes != (o->given.rate.unit != SLUICE_UNIT_PACKETS))
			s->burst.value = 0;
		s->rate = o->given.rate;
	}
	if (o->has[1])
		s->burst = o->given.burst;
	if (o->has[2]) {
		s->action = o->given.action;
		s->mark_dscp = s->mark_ecn = false;
	}
	if (o->has[3]) {
		s->dscp = o->given.dscp;
		s->mark_dscp = true;
	}
	if (o->has[4])
		s->mark_ecn = true;
	if (o->has[5])
		s->new_sources = o->given.new_sources;
	if (o->has[6])
		s->overflow = o->given.overflow;
	if (o->has[7])
		s->initial = o->given.initial;
	if (o->has[8])
		s->on_full_pass = o->given.on_full_pass;
	if (o->has[9]) {
		memcpy(s->aggregates, o->given.aggregates, sizeof(s->aggregates));
		s->n_aggregates = o->given.n_aggregates;
	}
}

int cmd_set(int argc, char **argv)
{
	struct set_opts o = {};
	struct policy_doc doc;
	struct state st;
	int ret, lock_fd;
	const char *why;

	ret = set_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = require_root("set");
	if (ret)
		return ret;
	ret = state_open_locked("set", o.ifname, &st, &lock_fd);
	if (ret)
		return ret;
	ret = policy_load_cmd("set", &st, &doc, false);
	if (ret)
		goto out;
	set_apply(&o, &doc.dflt);
	if (doc_validate(&doc, &why))
		ret = fail_input("set", "%s", why);
	else
		ret = policy_store_cmd("set", &st, &doc, false);
out:
	doc_free(&doc);
	state_close(&st);
	state_unlock(lock_fd);
	return ret;
}
