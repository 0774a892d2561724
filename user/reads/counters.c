// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "gcra.h"
#include "table_hash.h"
#include "args.h"
#include "metrics.h"
#include "conf.h"
#include "policy.h"
#include "sources.h"

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
	[SLUICE_CNT_DENIED] = {
		.name = "denied",
		.metric = "dropped",
		.reason = "deny",
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
		.help = "Buckets not created: every way of the set still held state; --on-full decided.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_EVICTED] = {
		.name = "evicted",
		.metric = "evicted",
		.help = "Idle buckets, refilled to their burst, given to new sources.",
		.kind = COUNTER_TABLE,
	},
	[SLUICE_CNT_CONTENDED] = {
		.name = "contended",
		.metric = "contended",
		.help = "Packets refused unjudged: their bucket lost 8 updates in a row to other CPUs.",
		.kind = COUNTER_TABLE,
	},
};

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

double per_second(uint64_t now, uint64_t before, uint64_t dt_ns)
{
	if (!dt_ns)
		return 0;
	if (now < before)
		before = 0;
	return (double)(now - before) * (double)NSEC_PER_SEC / (double)dt_ns;
}

/* The rule with this policy id: -1 for the default, -2 when gone. */
static int rule_index(const struct policy_doc *doc, uint16_t policy)
{
	int i;

	if (!policy)
		return -1;
	for (i = 0; i < doc->n_rules; i++)
		if (doc->rules[i].id == policy)
			return i;
	return -2;
}

static void slot_name(const struct policy_doc *doc, int i, char *buf, size_t len)
{
	char cidr[64], match[128];

	if (i < 0) {
		snprintf(buf, len, "default");
		return;
	}
	format_cidr(cidr, sizeof(cidr), &doc->rules[i].match.cidr);
	format_match(match, sizeof(match), &doc->rules[i].match);
	snprintf(buf, len, "%s%s%s", cidr, match[0] ? " " : "", match);
}

void rule_name(const struct policy_doc *doc, uint16_t policy, char *buf, size_t len)
{
	int i = rule_index(doc, policy);

	if (i == -2)
		snprintf(buf, len, "replaced-%u", policy);
	else
		slot_name(doc, i, buf, len);
}

int rule_limits(const struct policy_doc *doc, uint16_t policy, uint64_t *min_cost, uint64_t *limit)
{
	int i = rule_index(doc, policy);
	struct sluice_policy p;
	const char *why;
	int err;

	if (i == -2)
		return -ENOENT;
	err = i < 0 ? policy_build(&p, &doc->dflt, NULL, 0, &why)
		    : policy_build(&p, &doc->rules[i].settings, &doc->rules[i].match, policy, &why);
	if (err)
		return err;
	*min_cost = p.flags & SLUICE_POL_BYTES ? gcra_bytes_cost(GCRA_FRAME_MIN, p.interval)
					       : p.interval;
	*limit = p.limit;
	return 0;
}

/* Per-rule counters of the live set: the default first, then each rule. */
static int rules_read(const struct state *st, struct sample *s)
{
	struct sluice_config cfg;
	struct policy_doc doc;
	int i, k, err;

	/* The counters of the set this policy was read from. */
	err = policy_load_cfg(&st->maps, &doc, false, &cfg);
	if (err)
		goto out;
	s->rules = calloc((size_t)doc.n_rules + 1, sizeof(*s->rules));
	if (!s->rules) {
		err = -ENOMEM;
		goto out;
	}
	s->nrules = doc.n_rules + 1;
	for (i = 0; !err && i < s->nrules; i++) {
		struct sluice_stats sum;

		slot_name(&doc, i - 1, s->rules[i].name, sizeof(s->rules[i].name));
		err = stats_read_at(st->maps.rule_stats,
				    cfg.policy_set * SLUICE_MAX_POLICIES + (__u32)i, &sum);
		for (k = 0; !err && k < SLUICE_CNT_MAX; k++)
			if (counter_info[k].per_rule)
				s->rules[i].c[k] = sum.c[k];
	}
out:
	doc_free(&doc);
	return err;
}

/*
 * The table's ways, and the --max-sources it was sized for: a quarter more
 * ways than sources, so that two-choice placement rarely finds both sets full.
 */
static int table_capacity(const struct state *st, struct sample *s)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct sluice_config cfg;
	int err;

	if (bpf_obj_get_info_by_fd(st->maps.buckets, &info, &len))
		return -errno;
	err = config_read(st->maps.config, &cfg);
	if (err)
		return err;
	s->capacity = (uint64_t)info.max_entries * SLUICE_SET_WAYS;
	s->max_sources = cfg.max_sources ?: table_sources_of(info.max_entries);
	return 0;
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
		err = sources_count(st->maps.buckets, &s->sources);
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
