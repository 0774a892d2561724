// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "outputs/prom.h"

#define METRIC_NAME_MAX 128

struct labels {
	const char *ifname;
	const char *rule;   /* NULL: no rule label */
	const char *reason; /* NULL: no reason label */
};

/* Label values escape backslash, double quote and newline. */
static void label_value(FILE *out, const char *name, const char *v)
{
	fprintf(out, "%s=\"", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
	fputc('"', out);
}

static void series(FILE *out, const char *name, const struct labels *l, unsigned long long value)
{
	fprintf(out, "%s{", name);
	label_value(out, "interface", l->ifname);
	if (l->rule) {
		fputc(',', out);
		label_value(out, "rule", l->rule);
	}
	if (l->reason) {
		fputc(',', out);
		label_value(out, "reason", l->reason);
	}
	fprintf(out, "} %llu\n", value);
}

/* HELP text is ours and has no backslash or newline to escape. */
static void family_head(FILE *out, const char *name, const char *help, const char *type)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static bool same_family(int a, int b)
{
	return counter_info[a].kind == counter_info[b].kind &&
	       !strcmp(counter_info[a].metric, counter_info[b].metric);
}

/* Counters that share a metric (say, drops for different reasons) form one family. */
static bool family_emitted(int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (same_family(i, j))
			return true;
	return false;
}

static unsigned long long pair_value(const struct sluice_counter_pair *p, bool bytes)
{
	return bytes ? p->bytes : p->packets;
}

/* One counter's series on one interface: per rule when it is counted per rule. */
static void counter_series(FILE *out, const char *name, int i, const struct prom_iface *pi,
			   bool bytes)
{
	const struct counter_info *ci = &counter_info[i];
	struct labels l = { pi->ifname, NULL, ci->reason };
	int r;

	if (!ci->per_rule) {
		series(out, name, &l, pair_value(&pi->s->sum.c[i], bytes));
		return;
	}
	for (r = 0; r < pi->s->nrules; r++) {
		l.rule = pi->s->rules[r].name;
		series(out, name, &l, pair_value(&pi->s->rules[r].c[i], bytes));
	}
}

static void counter_family(FILE *out, int first, bool bytes, const struct prom_iface *ifs, int n)
{
	const struct counter_info *ci = &counter_info[first];
	char name[METRIC_NAME_MAX], help[256];
	int f, i;

	if (ci->kind == COUNTER_TABLE) {
		snprintf(name, sizeof(name), "sluice_%s_total", ci->metric);
		snprintf(help, sizeof(help), "%s", ci->help);
	} else if (!bytes) {
		snprintf(name, sizeof(name), "sluice_%s_packets_total", ci->metric);
		snprintf(help, sizeof(help), "%s", ci->help);
	} else {
		snprintf(name, sizeof(name), "sluice_%s_bytes_total", ci->metric);
		snprintf(help, sizeof(help), "Bytes of the packets in sluice_%s_packets_total.",
			 ci->metric);
	}
	family_head(out, name, help, "counter");
	for (f = 0; f < n; f++)
		for (i = first; i < SLUICE_CNT_MAX; i++)
			if (same_family(first, i))
				counter_series(out, name, i, &ifs[f], bytes);
}

static void gauges(FILE *out, const struct prom_iface *ifs, int n)
{
	struct labels l = {};
	int f;

	family_head(out, "sluice_sources", "Sources (buckets) tracked now.", "gauge");
	for (f = 0; f < n; f++) {
		l.ifname = ifs[f].ifname;
		series(out, "sluice_sources", &l, ifs[f].s->sources);
	}
	family_head(out, "sluice_sources_capacity",
		    "Most sources tracked at once (buckets in the table); when both sets of a new "
		    "source are full, an idle bucket is given to it.",
		    "gauge");
	for (f = 0; f < n; f++) {
		l.ifname = ifs[f].ifname;
		series(out, "sluice_sources_capacity", &l, ifs[f].s->capacity);
	}
	family_head(out, "sluice_max_sources",
		    "The --max-sources the table was sized for (at 80% of its buckets).", "gauge");
	for (f = 0; f < n; f++) {
		l.ifname = ifs[f].ifname;
		series(out, "sluice_max_sources", &l, ifs[f].s->max_sources);
	}
	family_head(out, "sluice_attached",
		    "1 when the program runs on the interface, 0 when its pinned state is stale.",
		    "gauge");
	for (f = 0; f < n; f++) {
		l.ifname = ifs[f].ifname;
		series(out, "sluice_attached", &l, ifs[f].attached);
	}
}

void prom_write_walks(FILE *out, const struct prom_iface *ifs, const uint64_t *walks, int n)
{
	struct labels l = {};
	int f;

	family_head(out, "sluice_exporter_table_walks_total",
		    "Walks of the source table to count sluice_sources; scrapes within a second "
		    "share one.",
		    "counter");
	for (f = 0; f < n; f++) {
		l.ifname = ifs[f].ifname;
		series(out, "sluice_exporter_table_walks_total", &l, walks[f]);
	}
}

void prom_write(FILE *out, const struct prom_iface *ifs, int n)
{
	int i;

	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (family_emitted(i))
			continue;
		counter_family(out, i, false, ifs, n);
		if (counter_info[i].kind == COUNTER_TRAFFIC)
			counter_family(out, i, true, ifs, n);
	}
	gauges(out, ifs, n);
}
