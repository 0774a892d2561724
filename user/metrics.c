// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include "args.h"
#include "metrics.h"
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
		.help = "Buckets that could not be created; their packets passed.",
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

void rule_name(uint16_t policy, char *buf, size_t len)
{
	if (!policy)
		snprintf(buf, len, "default");
	else
		snprintf(buf, len, "rule-%u", policy);
}

int rule_tolerance(const struct sluice_config *cfg, uint16_t policy, uint64_t *tolerance)
{
	if (policy)
		return -ENOENT;
	*tolerance = cfg->tolerance;
	return 0;
}

/*
 * Per-rule counters. Only the default policy exists so far, and it sees
 * every metered packet: its counters are the interface's.
 */
static int rules_read(struct sample *s)
{
	int i;

	s->rules = calloc(1, sizeof(*s->rules));
	if (!s->rules)
		return -ENOMEM;
	s->nrules = 1;
	rule_name(0, s->rules[0].name, sizeof(s->rules[0].name));
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		if (counter_info[i].per_rule)
			s->rules[0].c[i] = s->sum.c[i];
	return 0;
}

static int table_capacity(int buckets_fd, uint64_t *capacity)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(buckets_fd, &info, &len))
		return -errno;
	*capacity = info.max_entries;
	return 0;
}

int sample_read(const struct state *st, struct sample *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	err = stats_read(st->stats_fd, &s->sum);
	if (err)
		return err;
	s->time_ns = monotonic_ns();
	err = rules_read(s);
	if (!err)
		err = table_capacity(st->buckets_fd, &s->capacity);
	if (!err)
		err = sources_count(st->buckets_fd, &s->sources);
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
