// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "base/utf8.h"
#include "base/version.h"
#include "outputs/counters.h"
#include "outputs/prom.h"

#define METRIC_NAME_MAX 128

struct labels {
	const char *ifname;
	const char *rule;   /* NULL: no rule label */
	const char *reason; /* NULL: no reason label */
};

void prom_label(FILE *out, const char *name, const char *v)
{
	size_t len;

	fprintf(out, "%s=\"", name);
	for (; *v; v += len) {
		if (!utf8_next(v, &len))
			fputs(UTF8_REPLACEMENT, out);
		else if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fwrite(v, 1, len, out);
	}
	fputc('"', out);
}

static void series(FILE *out, const char *name, const struct labels *l, unsigned long long value)
{
	fprintf(out, "%s{", name);
	prom_label(out, "interface", l->ifname);
	if (l->rule) {
		fputc(',', out);
		prom_label(out, "rule", l->rule);
	}
	if (l->reason) {
		fputc(',', out);
		prom_label(out, "reason", l->reason);
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

/* Counters that share a metric (say, failed inserts for different reasons) form one family. */
static bool family_emitted(int i)
{
	int j;

	for (j = 0; j < i; j++)
		if (same_family(i, j))
			return true;
	return false;
}

static bool family_merged(int first)
{
	int i;

	for (i = first + 1; i < SLUICE_CNT_MAX; i++)
		if (same_family(first, i))
			return true;
	return false;
}

/* The HELP line of a counter family: of a merged one, what each reason counts. */
static void counter_help(FILE *out, const char *name, int first, bool bytes)
{
	int i;

	if (bytes) {
		fprintf(out, "# HELP %s Bytes of the packets in sluice_%s_packets_total.\n", name,
			counter_info[first].metric);
		return;
	}
	if (!family_merged(first)) {
		fprintf(out, "# HELP %s %s\n", name, counter_info[first].help);
		return;
	}
	fprintf(out, "# HELP %s One series per reason.", name);
	for (i = first; i < SLUICE_CNT_MAX; i++)
		if (same_family(first, i))
			fprintf(out, " %s: %s", counter_info[i].reason, counter_info[i].help);
	fputc('\n', out);
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
	char name[METRIC_NAME_MAX];
	int f, i;

	if (ci->kind == COUNTER_TABLE)
		snprintf(name, sizeof(name), "sluice_%s_total", ci->metric);
	else
		/* Named by the pair's JSON keys: stats and the exporter say the same. */
		snprintf(name, sizeof(name), "sluice_%s_%s_total", ci->metric,
			 counter_pair_cols[bytes ? COUNTER_BYTES : COUNTER_PACKETS].key);
	counter_help(out, name, first, bytes);
	fprintf(out, "# TYPE %s counter\n", name);
	for (f = 0; f < n; f++)
		for (i = first; ifs[f].s && i < SLUICE_CNT_MAX; i++)
			if (same_family(first, i))
				counter_series(out, name, i, &ifs[f], bytes);
}

/* A family with one series per interface, its value read from the interface (or index f). */
struct iface_metric {
	const char *name, *type, *help;
	unsigned long long (*value)(const struct prom_iface *pi, int f, const void *arg);
	bool unread_too; /* a series also for interfaces whose state could not be read */
};

static void iface_family(FILE *out, const struct iface_metric *m, const struct prom_iface *ifs,
			 int n, const void *arg)
{
	struct labels l = { 0 };
	int f;

	family_head(out, m->name, m->help, m->type);
	for (f = 0; f < n; f++) {
		if (!ifs[f].s && !m->unread_too)
			continue;
		l.ifname = ifs[f].ifname;
		series(out, m->name, &l, m->value(&ifs[f], f, arg));
	}
}

static unsigned long long sources_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s->sources;
}

static unsigned long long capacity_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s->capacity;
}

static unsigned long long max_sources_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s->max_sources;
}

static unsigned long long attached_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->attached;
}

static unsigned long long up_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s && pi->attached;
}

static unsigned long long generation_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s->generation;
}

static unsigned long long changed_at_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)f, (void)arg;
	return pi->s->changed_at_ns / 1000000000ULL;
}

static unsigned long long walks_of(const struct prom_iface *pi, int f, const void *arg)
{
	(void)pi;
	return ((const uint64_t *)arg)[f];
}

static const struct iface_metric gauges[] = {
	{
		.name = "sluice_sources",
		.type = "gauge",
		.help = "Sources (buckets) tracked now.",
		.value = sources_of,
	},
	{
		.name = "sluice_sources_capacity",
		.type = "gauge",
		.help = "Buckets in the table, the most IPv4 sources tracked at once (an IPv6 "
			"source takes two). The table is set-associative and never gives away "
			"a live bucket: a new source takes the place of one idle long enough "
			"to have refilled.",
		.value = capacity_of,
	},
	{
		.name = "sluice_max_sources",
		.type = "gauge",
		.help = "The --max-sources the table was sized for (at 80% of its buckets).",
		.value = max_sources_of,
	},
	{
		.name = "sluice_attached",
		.type = "gauge",
		.help = "1 when the program runs on the interface, 0 when its pinned state is stale.",
		.value = attached_of,
	},
	{
		.name = "sluice_config_generation",
		.type = "gauge",
		.help = "The configuration's generation: raised by every change (attach, set, rule, "
			"allow, deny, apply, upgrade); each has one line in the audit log.",
		.value = generation_of,
	},
	{
		.name = "sluice_config_last_change_timestamp_seconds",
		.type = "gauge",
		.help = "When the configuration last changed, in seconds since 1970 (UTC).",
		.value = changed_at_of,
	},
	{
		.name = "sluice_up",
		.type = "gauge",
		.help = "1 when the interface's state was read and its program runs; 0 when the "
			"state is stale or could not be read.",
		.value = up_of,
		.unread_too = true,
	},
};

static const struct iface_metric walks_metric = {
	.name = "sluice_exporter_table_walks_total",
	.type = "counter",
	.help = "Walks of the source table to count sluice_sources; scrapes within a second "
		"share one.",
	.value = walks_of,
};

static void build_info(FILE *out)
{
	family_head(out, "sluice_build_info",
		    "The sluice version, and the layout of its pinned state; always 1.", "gauge");
	fputs("sluice_build_info{", out);
	prom_label(out, "version", SLUICE_VERSION);
	fprintf(out, ",layout=\"%d\"} 1\n", SLUICE_LAYOUT_VERSION);
}

void prom_write_walks(FILE *out, const struct prom_iface *ifs, const uint64_t *walks, int n)
{
	iface_family(out, &walks_metric, ifs, n, walks);
}

void prom_write(FILE *out, const struct prom_iface *ifs, int n)
{
	size_t g;
	int i;

	build_info(out);
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		if (family_emitted(i))
			continue;
		counter_family(out, i, false, ifs, n);
		if (counter_info[i].kind == COUNTER_TRAFFIC)
			counter_family(out, i, true, ifs, n);
	}
	for (g = 0; g < sizeof(gauges) / sizeof(gauges[0]); g++)
		iface_family(out, &gauges[g], ifs, n, NULL);
}
