// SPDX-License-Identifier: GPL-2.0
/* A sample of the counters as a table or as JSON, with rates against an earlier one. */
#include <stdio.h>
#include <string.h>
#include "base/clock.h"
#include "base/json.h"
#include "outputs/counters.h"

/* Rates of one counter pair between two samples dt_ns apart. */
struct pair_rate {
	double pps, bps;
};

static struct pair_rate pair_rate(const struct sluice_counter_pair *now,
				  const struct sluice_counter_pair *before, uint64_t dt_ns)
{
	struct pair_rate r;

	r.pps = per_second(now->packets, before->packets, dt_ns);
	r.bps = 8 * per_second(now->bytes, before->bytes, dt_ns);
	return r;
}

static void json_pair(struct json *j, const char *key, const struct sluice_counter_pair *now,
		      const struct sluice_counter_pair *before, uint64_t dt_ns)
{
	struct pair_rate r;

	json_object_begin(j, key);
	json_u64(j, "packets", now->packets);
	json_u64(j, "bytes", now->bytes);
	if (before) {
		r = pair_rate(now, before, dt_ns);
		json_double(j, "pps", r.pps, 3);
		json_double(j, "bps", r.bps, 3);
	} else {
		json_null(j, "pps");
		json_null(j, "bps");
	}
	json_object_end(j);
}

static void json_rules(struct json *j, const struct sample *s, const struct sample *prev,
		       uint64_t dt)
{
	int r, i;

	json_array_begin(j, "rules");
	for (r = 0; r < s->nrules; r++) {
		/* Rules are matched by position: the set does not change between samples. */
		const bool have_prev = prev && r < prev->nrules;

		json_object_begin(j, NULL);
		json_string(j, "rule", s->rules[r].name);
		json_object_begin(j, "counters");
		for (i = 0; i < SLUICE_CNT_MAX; i++)
			if (counter_info[i].per_rule)
				json_pair(j, counter_info[i].name, &s->rules[r].c[i],
					  have_prev ? &prev->rules[r].c[i] : NULL, dt);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_table(struct json *j, const struct sample *s, const struct sample *prev,
		       uint64_t dt)
{
	char key[64];
	int i;

	json_object_begin(j, "table");
	json_u64(j, "sources", s->sources);
	json_u64(j, "capacity", s->capacity);
	json_u64(j, "max_sources", s->max_sources);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (counter_info[i].kind != COUNTER_TABLE)
			continue;
		json_u64(j, counter_info[i].name, s->sum.c[i].packets);
		snprintf(key, sizeof(key), "%s_per_s", counter_info[i].name);
		if (prev)
			json_double(j, key,
				    per_second(s->sum.c[i].packets, prev->sum.c[i].packets, dt), 3);
		else
			json_null(j, key);
	}
	json_object_end(j);
}

/* One document; prev is NULL for a single reading (rates are null). */
int counters_json(const char *ifname, const struct sample *s, const struct sample *prev)
{
	uint64_t dt = prev ? s->time_ns - prev->time_ns : 0;
	struct json j;
	int i;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_ifname(&j, ifname);
	json_u64(&j, "time_ns", s->time_ns);
	if (prev)
		json_double(&j, "interval_s", (double)dt / NSEC_PER_SEC, 6);
	else
		json_null(&j, "interval_s");
	json_object_begin(&j, "counters");
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		json_pair(&j, counter_info[i].name, &s->sum.c[i], prev ? &prev->sum.c[i] : NULL,
			  dt);
	json_object_end(&j);
	json_rules(&j, s, prev, dt);
	json_table(&j, s, prev, dt);
	json_object_end(&j);
	return json_finish(&j);
}

static void human_row(const char *rule, const char *name, const struct sluice_counter_pair *now,
		      const struct sluice_counter_pair *before, uint64_t dt)
{
	struct pair_rate r;

	if (rule)
		printf("%-14s %-14s", rule, name);
	else
		printf("%-29s", name);
	printf(" %16llu %18llu", (unsigned long long)now->packets, (unsigned long long)now->bytes);
	if (before) {
		r = pair_rate(now, before, dt);
		printf(" %14.1f %16.0f", r.pps, r.bps);
	}
	putchar('\n');
}

static void human_header(const char *first, const char *second, bool rates)
{
	printf("%-14s %-14s %16s %18s", first, second, "PACKETS", "BYTES");
	if (rates)
		printf(" %14s %16s", "PPS", "BITS/S");
	putchar('\n');
}

static void human_table(const struct sample *s, const struct sample *prev, uint64_t dt)
{
	int i;

	printf("\nTABLE\n");
	printf("%-29s %16llu of %llu buckets (sized for --max-sources %llu)\n", "sources",
	       (unsigned long long)s->sources, (unsigned long long)s->capacity,
	       (unsigned long long)s->max_sources);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (counter_info[i].kind != COUNTER_TABLE)
			continue;
		printf("%-29s %16llu", counter_info[i].name,
		       (unsigned long long)s->sum.c[i].packets);
		if (prev)
			printf("  %.1f/s",
			       per_second(s->sum.c[i].packets, prev->sum.c[i].packets, dt));
		putchar('\n');
	}
}

void counters_table(const char *ifname, const struct sample *s, const struct sample *prev)
{
	uint64_t dt = prev ? s->time_ns - prev->time_ns : 0;
	int i, r;

	if (prev)
		printf("sluice on %s: rates over the last %.3f s\n", ifname,
		       (double)dt / NSEC_PER_SEC);
	else
		printf("sluice on %s\n", ifname);
	human_header("TRAFFIC", "", prev);
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		if (counter_info[i].kind == COUNTER_TRAFFIC)
			human_row(NULL, counter_info[i].name, &s->sum.c[i],
				  prev ? &prev->sum.c[i] : NULL, dt);
	putchar('\n');
	human_header("RULE", "OUTCOME", prev);
	for (r = 0; r < s->nrules; r++)
		for (i = 0; i < SLUICE_CNT_MAX; i++)
			if (counter_info[i].per_rule)
				human_row(s->rules[r].name, counter_info[i].name, &s->rules[r].c[i],
					  prev && r < prev->nrules ? &prev->rules[r].c[i] : NULL,
					  dt);
	human_table(s, prev, dt);
}
