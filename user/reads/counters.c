// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "table_hash.h"
#include "maps/percpu.h"
#include "maps/policy_maps.h"
#include "maps/table.h"
#include "reads/counters.h"
#include "text/conf.h"

const struct counter_info counter_info[SLUICE_CNT_MAX] = {
	[SLUICE_CNT_PASSED] = {
		.name = "passed",
		.metric = "passed",
		.help = "Packets under their source's limit, passed.",
		.kind = COUNTER_TRAFFIC,
		.per_rule = true,
	},
	[SLUICE_CNT_DROPPED] = {
		.name = "dropped",
		.metric = "dropped",
		.reason = "rate",
		.help = "Packets over their source's limit, dropped.",
		.kind = COUNTER_TRAFFIC,
		.per_rule = true,
	},
	[SLUICE_CNT_WOULD_DROP] = {
		.name = "would_drop",
		.metric = "would_drop",
		.reason = "rate",
		.help = "Packets over their source's limit in dry run, passed.",
		.kind = COUNTER_TRAFFIC,
		.per_rule = true,
	},
	[SLUICE_CNT_MARKED] = {
		.name = "marked",
		.metric = "marked",
		.reason = "rate",
		.help = "Packets over their source's limit, DSCP or ECN rewritten, passed.",
		.kind = COUNTER_TRAFFIC,
		.per_rule = true,
	},
	[SLUICE_CNT_ALLOWED] = {
		.name = "allowed",
		.metric = "allowed",
		.help = "Packets from sources on the allow list, passed unmetered.",
		.kind = COUNTER_TRAFFIC,
	},
	/* Not in the dropped family: that one is per rule, and the deny list comes before rules. */
	[SLUICE_CNT_DENIED] = {
		.name = "denied",
		.metric = "denied",
		.help = "Packets from sources on the deny list, dropped.",
		.kind = COUNTER_TRAFFIC,
	},
	[SLUICE_CNT_NON_IP] = {
		.name = "non_ip",
		.metric = "non_ip",
		.help = "Packets neither IPv4 nor IPv6, passed untouched.",
		.kind = COUNTER_TRAFFIC,
	},
	[SLUICE_CNT_MALFORMED] = {
		.name = "malformed",
		.metric = "malformed",
		.help = "Packets with truncated or invalid IP headers, passed.",
		.kind = COUNTER_TRAFFIC,
	},
	[SLUICE_CNT_NEW_SOURCE] = {
		.name = "new_sources",
		.metric = "new_sources",
		.help = "Buckets created for sources seen for the first time.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_INSERT_FAILED] = {
		.name = "insert_failed",
		.metric = "insert_failed",
		.reason = "error",
		.help = "Buckets that could not be created (not for memory); --on-full decided.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_INSERT_NOMEM] = {
		.name = "insert_nomem",
		.metric = "insert_failed",
		.reason = "nomem",
		.help = "Buckets that could not be created for lack of memory; --on-full decided.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_REFUSED] = {
		.name = "refused",
		.metric = "refused",
		.help = "New sources over their rule's new-source budget: no bucket.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_OVERFLOW_PASSED] = {
		.name = "overflow_passed",
		.metric = "overflow",
		.reason = "passed",
		.help = "Packets of refused sources the overflow bucket passed.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_OVERFLOW_DROPPED] = {
		.name = "overflow_dropped",
		.metric = "overflow",
		.reason = "dropped",
		.help = "Packets of refused sources the overflow bucket held back.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_INSERT_FULL] = {
		.name = "insert_full",
		.metric = "insert_failed",
		.reason = "full",
		.help = "Buckets not created: both of the source's sets were full of live buckets; "
			"--on-full decided.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_EVICTED] = {
		.name = "evicted",
		.metric = "evicted",
		.help = "Buckets idle long enough to have refilled, given to new sources.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_CONTENDED] = {
		.name = "contended",
		.metric = "contended",
		.help = "Packets refused unjudged: their bucket lost 8 updates in a row to other CPUs.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_SYNACK_SENT] = {
		.name = "synacks_sent",
		.metric = "synacks_sent",
		.help = "SYNs of sources without a bucket answered with a cookie SYN-ACK (--prove).",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_COOKIE_GOOD] = {
		.name = "cookies_good",
		.metric = "cookies",
		.reason = "good",
		.help = "RSTs that brought a cookie back: their source proved its address.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_COOKIE_BAD] = {
		.name = "cookies_bad",
		.metric = "cookies",
		.reason = "bad",
		.help = "RSTs, while a rule proves, whose cookie did not check out.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_PROVEN] = {
		.name = "proven",
		.metric = "proven",
		.help = "Proofs that passed: each gave its source a bucket, or found it had one.",
		.kind = COUNTER_TABLE,
	},
	/* Also counted as dropped, would_drop or marked: the rule's action. */
	[SLUICE_CNT_BANNED] = {
		.name = "banned",
		.metric = "banned",
		.help = "Packets of keys in the penalty box (--ban-after), given their rule's action.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_BANS] = {
		.name = "bans",
		.metric = "bans",
		.help = "Bans the penalty box imposed (--ban-after): keys refused past their limit.",
		.kind = COUNTER_TABLE,
	},
};

double per_second(uint64_t now, uint64_t before, uint64_t dt_ns)
{
	if (!dt_ns)
		return 0;
	if (now < before)
		before = 0;
	return (double)(now - before) * (double)NSEC_PER_SEC / (double)dt_ns;
}

/* Per-rule counters of the live set: the default first, then each rule. */
static int rules_read(const struct state *st, struct sample *s)
{
	struct sluice_stats *counts = calloc(SLUICE_MAX_POLICIES, sizeof(*counts));
	struct sluice_config cfg;
	struct policy_doc doc;
	int i, k, err;

	if (!counts)
		return -ENOMEM;
	/* The counters of the configuration this policy was read from, not of a later one. */
	err = policy_load_counts(&st->maps, &doc, &cfg, counts);
	if (err)
		goto out;
	s->rules = calloc((size_t)doc.n_rules + 1, sizeof(*s->rules));
	if (!s->rules) {
		err = -ENOMEM;
		goto out;
	}
	s->nrules = doc.n_rules + 1;
	s->generation = cfg.generation;
	s->changed_at_ns = cfg.changed_at_ns;
	s->policy_set = cfg.policy_set;
	for (i = 0; i < s->nrules; i++) {
		rule_name(&doc, i ? doc.rules[i - 1].id : 0, s->rules[i].name,
			  sizeof(s->rules[i].name));
		for (k = 0; k < SLUICE_CNT_MAX; k++)
			if (counter_info[k].per_rule)
				s->rules[i].c[k] = counts[i].c[k];
	}
out:
	doc_free(&doc);
	free(counts);
	return err;
}

/*
 * The table's buckets for IPv4 sources (an IPv6 source, and every source
 * in a table too small for inline keys, takes two ways), and the
 * --max-sources it was sized for: fewer, so that two-choice placement
 * rarely finds both sets full.
 */
static int table_capacity(const struct state *st, struct sample *s)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct sluice_config cfg;
	int err;

	if (bpf_obj_get_info_by_fd(st->maps.buckets, &info, &len))
		return -errno;
	err = config_read(&st->maps, &cfg);
	if (err)
		return err;
	s->capacity = table_buckets_of(info.max_entries);
	return table_max_sources(&st->maps, &cfg, &s->max_sources);
}

int sample_read_counters(const struct state *st, struct sample *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = stats_read(st->stats_fd, &s->sum);
	if (err)
		return err;
	s->time_ns = monotonic_ns();
	err = rules_read(st, s);
	if (!err)
		err = table_capacity(st, s);
	if (err)
		sample_free(s);
	return err;
}

int sample_read(const struct state *st, struct sample *s)
{
	int err = sample_read_counters(st, s);

	if (!err)
		err = table_count(st->maps.buckets, &s->sources);
	if (err)
		sample_free(s);
	return err;
}

void sample_free(struct sample *s)
{
	free(s->rules);
	s->rules = NULL;
	s->nrules = 0;
}
