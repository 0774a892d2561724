// SPDX-License-Identifier: GPL-2.0
/* sluice set: change the default policy live; buckets keep their state. */
#include <string.h>
#include "base/errors.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"

static int set_check(struct cli_args *a)
{
	char names[1024];

	if (option_given_in(a, SCOPE_LIMITER) >= 0)
		return -1;
	option_names_in(names, sizeof(names), CMD_SET, SCOPE_LIMITER);
	return fail_input("set", "nothing to change (give %s)", names);
}

/*
 * A new algorithm, or a warm-up, clears what does not apply to it, as
 * --action drop clears --dscp; what the same command gives is applied after.
 */
static void set_algorithm(const struct cli_args *a, struct settings *s)
{
	if (a->given[OPT_ALGORITHM]) {
		s->algorithm = a->settings.algorithm;
		s->warmup_ns = 0; /* plain gcra, unless --warmup comes with it */
	}
	if (s->algorithm == SLUICE_METER_GCRA) {
		s->window_ns = 0;
	} else {
		s->burst.value = 0;
		s->initial.value = 0;
	}
	if (a->given[OPT_WARMUP] && a->settings.warmup_ns) {
		s->burst.value = 0;
		s->initial.value = 0;
	}
}

/*
 * A new rate: what was typed in its unit (packets, or bytes) stays, and
 * what counts the other goes back to its default, derived from the new
 * rate: the burst, the initial burst and the overflow rate.
 */
static void set_rate_unit(const struct rate *rate, struct settings *s)
{
	bool bytes = rate->unit != SLUICE_UNIT_PACKETS;

	if (s->burst.bytes != bytes)
		s->burst = (struct burst){ 0 };
	if (s->initial.bytes != bytes)
		s->initial = (struct burst){ 0 };
	if (s->overflow.amount && (s->overflow.unit != SLUICE_UNIT_PACKETS) != bytes)
		s->overflow = (struct rate){ 0 };
}

/* The options given replace what they name; the rest stays as it was. */
static void set_apply(const struct cli_args *a, struct settings *s)
{
	const struct settings *g = &a->settings;
	int i;

	if (a->given[OPT_ALGORITHM] || a->given[OPT_WARMUP])
		set_algorithm(a, s);
	if (a->given[OPT_RATE])
		set_rate_unit(&g->rate, s);
	/* A new action starts unmarked; --prove off drops the proven-source budget. */
	if (a->given[OPT_ACTION])
		s->mark_dscp = s->mark_ecn = false;
	if (a->given[OPT_PROVE] && g->prove == PROVE_OFF)
		memset(&s->proven_sources, 0, sizeof(s->proven_sources));
	/* --ban-after none ends the penalty box, its other settings with it. */
	if (a->given[OPT_BAN_AFTER] && !g->ban_after.count) {
		s->ban_for_ns = s->ban_memory_ns = s->ban_max_ns = 0;
		s->ban_escalate_milli = 0;
	}
	for (i = 0; i < OPT_MAX; i++)
		if (a->given[i] && option_table[i].home == IN_SETTINGS)
			option_copy_setting(&option_table[i], g, s);
}

static int set_run(struct cli_args *a, struct state *st)
{
	struct policy_doc doc;
	struct settings was, now;
	const char *why;
	int ret;

	ret = policy_load_cmd("set", st, &doc, false);
	if (ret)
		return ret;
	was = now = doc.dflt;
	set_apply(a, &now);
	if (doc_set_default(&doc, &now, &why) || doc_validate(&doc, &why))
		ret = fail_input("set", "%s", why);
	else if (settings_equal(&was, &doc.dflt))
		ret = EXIT_OK; /* as it was: no new generation, nothing to audit */
	else
		ret = policy_store_cmd("set", st, &doc, false);
	doc_free(&doc);
	return ret;
}

const struct command cmd_set = {
	.id = CMD_SET,
	.name = "set",
	.summary = "change the default rate, burst or action live",
	.synopsis = "IFACE [--rate RATE] [--burst N] [--action ACTION] [OPTIONS]",
	.description =
		"Change the default policy on IFACE without reattaching. Existing buckets keep\n"
		"their state; every packet sees either the old or the new settings as a whole.\n"
		"A new --rate without --burst keeps a burst set before in its unit (packets or\n"
		"bytes), and otherwise derives it again (one second of rate); so do\n"
		"--initial-burst (all of the burst) and --overflow-rate (the rate).\n"
		"--action drop or dry-run clears --dscp and --ecn.\n"
		"--algorithm clears what does not apply to it: a window algorithm --burst,\n"
		"--initial-burst and --warmup, gcra --window and --warmup (unless given with\n"
		"it); --warmup clears --burst and --initial-burst. A change of algorithm, window or warm-up starts every source\n"
		"afresh (docs/design.md); a new rate or burst keeps their state.\n"
		"The --aggregate options given replace all aggregates; --aggregate none clears\n"
		"them. A source's debt is capped at the new burst when the change is made.",
	.iface = IFACE_REQUIRED,
	.caps = CAPS_CHANGE,
	.state = USE_CHANGE,
	.check = set_check,
	.run = set_run,
};
