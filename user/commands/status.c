// SPDX-License-Identifier: GPL-2.0
/* sluice status: which interfaces are limited, how, and in which mode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/json.h"
#include "outputs/report.h"
#include "commands/commands.h"
#include "fleet/report.h"
#include "maps/policy_maps.h"
#include "pins/multiprog.h"
#include "values/rate.h"
#include "values/words.h"

#define MAX_ATTACHED 256
/* libxdp's dispatcher holds at most 10 programs. */
#define MAX_SHARING 10

struct iface_status {
	const char *ifname;
	const char *mode;     /* "multiprog" through libxdp's dispatcher */
	const char *xdp_mode; /* native, generic: how the program (or dispatcher) runs */
	struct mp_prog sharing[MAX_SHARING]; /* multiprog: every program in the dispatcher */
	int nsharing;
	const char *health;  /* "ok", or why the state is stale */
	bool partial;	     /* maps missing: only the health is known */
	bool other_layout;   /* not this sluice's layout: only health and layout are known */
	unsigned int layout; /* of the live configuration; 0 when unknown */
	unsigned int prog_id;
	uint64_t max_sources;
	struct sluice_config cfg;
	struct sluice_policy dflt;
	char rate[32];
	char burst[32];
	char group[40]; /* that may read the state (attach --group), "" when none */
};

/* Cheap: one netlink query and the dispatcher's programs. */
static void status_collect_sharing(const char *ifname, struct iface_status *is)
{
	bool dispatcher;
	int n;

	is->mode = "multiprog";
	n = mp_programs((int)if_nametoindex(ifname), &dispatcher, is->sharing, MAX_SHARING);
	is->nsharing = n > 0 && dispatcher ? n : 0;
}

static int status_collect(const char *ifname, struct iface_status *is)
{
	struct burst burst;
	struct rate rate;
	struct state st;
	int err;

	memset(is, 0, sizeof(*is));
	is->ifname = ifname;
	is->xdp_mode = xdp_mode_name((int)if_nametoindex(ifname));
	is->mode = is->xdp_mode;
	err = state_open(ifname, &st);
	if ((!err || err == -ESTALE) && state_multiprog(&st))
		status_collect_sharing(ifname, is);
	if (!err && state_group(&st) != STATE_NO_GROUP)
		format_group(is->group, sizeof(is->group), state_group(&st));
	if (err == -ESTALE) {
		is->health = state_health(&st, &is->prog_id);
		is->partial = true;
		return 0;
	}
	if (err)
		return err;
	err = policy_default(&st.maps, &is->cfg, &is->dflt);
	if (err == -EPROTO) {
		/* Listed all the same, with its layout: status warns, upgrade refuses. */
		config_layout(&st.maps, &is->layout);
		is->health = state_health(&st, &is->prog_id);
		is->partial = is->other_layout = true;
		state_close(&st);
		return 0;
	}
	is->layout = is->cfg.layout_version;
	if (!err)
		err = table_max_sources(&st.maps, &is->cfg, &is->max_sources);
	is->health = state_health(&st, &is->prog_id);
	state_close(&st);
	if (err)
		return err;

	rate.amount = is->dflt.rate_amount;
	rate.period_ns = is->dflt.rate_period_ns;
	rate.unit = is->dflt.rate_unit;
	format_rate(is->rate, sizeof(is->rate), &rate);
	burst.value = is->dflt.burst;
	burst.bytes = !!(is->dflt.flags & SLUICE_POL_BYTES);
	format_burst(is->burst, sizeof(is->burst), &burst);
	return 0;
}

enum {
	STATUS_IFACE,
	STATUS_MODE,
	STATUS_PROG,
	STATUS_RATE,
	STATUS_BURST,
	STATUS_ACTION,
	STATUS_IPV4,
	STATUS_IPV6,
	STATUS_RULES,
	STATUS_MAX_SOURCES,
	STATUS_GROUP,
	STATUS_GEN,
	STATUS_CHANGED,
	STATUS_STATE,
	STATUS_COLS
};

const int status_ncols = STATUS_COLS;
const struct report_col status_cols[STATUS_COLS] = {
	[STATUS_IFACE] = { .key = "interface", .header = "INTERFACE", .width = -15 },
	[STATUS_MODE] = { .key = "mode", .header = "MODE", .width = -8 },
	[STATUS_PROG] = { .key = "prog_id", .header = "PROG", .width = -6 },
	[STATUS_RATE] = { .key = "rate", .header = "RATE", .width = -12 },
	[STATUS_BURST] = { .key = "burst", .header = "BURST", .width = -10 },
	[STATUS_ACTION] = { .key = "action", .header = "ACTION", .width = -8 },
	[STATUS_IPV4] = { .key = "ipv4_prefix", .header = "IPV4", .width = -5 },
	[STATUS_IPV6] = { .key = "ipv6_prefix", .header = "IPV6", .width = -5 },
	[STATUS_RULES] = { .key = "rules", .header = "RULES", .width = -6 },
	[STATUS_MAX_SOURCES] = { .key = "max_sources", .header = "MAX-SOURCES", .width = -11 },
	[STATUS_GROUP] = { .key = "group", .header = "GROUP", .width = -12, .unknown = "-" },
	[STATUS_GEN] = { .key = "generation", .header = "GEN", .width = -6 },
	[STATUS_CHANGED] = { .key = "changed_at", .header = "CHANGED", .width = -20 },
	[STATUS_STATE] = { .key = "state", .header = "STATE", .width = 0 },
};

/* The advice for an interface of another layout, "" for one of ours. */
static void layout_warning(const struct iface_status *is, char *buf, size_t len)
{
	buf[0] = '\0';
	if (is->other_layout)
		layout_advice(buf, len, is->ifname, is->layout);
}

/* "/24" in text, 24 in JSON. */
static void prefix_cell(struct report *rp, int col, unsigned int prefix)
{
	char text[8];

	snprintf(text, sizeof(text), "/%u", prefix);
	report_cell_text(rp, &status_cols[col], text);
	report_u64(rp, status_cols[col].key, NULL, prefix);
}

/* The default policy's columns; a row whose policy is unknown shows "-" in text. */
static void status_policy_cells(struct report *rp, const struct iface_status *is)
{
	int col;

	if (is->partial) {
		for (col = STATUS_RATE; col <= STATUS_MAX_SOURCES; col++)
			report_cell_text(rp, &status_cols[col], "-");
		return;
	}
	report_cell_string(rp, &status_cols[STATUS_RATE], is->rate);
	report_cell_text(rp, &status_cols[STATUS_BURST], is->burst);
	report_u64(rp, status_cols[STATUS_BURST].key, NULL, is->dflt.burst);
	report_cell_string(rp, &status_cols[STATUS_ACTION], action_name(is->dflt.action));
	prefix_cell(rp, STATUS_IPV4, is->dflt.ipv4_prefix);
	prefix_cell(rp, STATUS_IPV6, is->dflt.ipv6_prefix);
	report_string(rp, "key", NULL, key_kind_word(policy_key_kind(&is->dflt)));
	report_cell_u64(rp, &status_cols[STATUS_RULES], is->cfg.rules_v4 + is->cfg.rules_v6);
	report_cell_u64(rp, &status_cols[STATUS_MAX_SOURCES], is->max_sources);
}

/* The configuration's generation and when it changed; "-" in text when unknown. */
static void status_generation_cells(struct report *rp, const struct iface_status *is)
{
	char changed[32];

	if (is->partial) {
		report_cell_text(rp, &status_cols[STATUS_GEN], "-");
		report_cell_text(rp, &status_cols[STATUS_CHANGED], "-");
		return;
	}
	format_utc(changed, sizeof(changed), is->cfg.changed_at_ns);
	report_cell_u64(rp, &status_cols[STATUS_GEN], is->cfg.generation);
	report_cell_string(rp, &status_cols[STATUS_CHANGED], changed);
	report_u64(rp, "changed_at_unix", NULL, is->cfg.changed_at_ns / NSEC_PER_SEC);
}

/* The state, and in text what to do about one that is not ok. */
static void status_state_cell(struct report *rp, const struct iface_status *is)
{
	char warning[IF_NAMESIZE * 3 + 256];

	report_cell_string(rp, &status_cols[STATUS_STATE], is->health);
	if (is->other_layout)
		report_u64(rp, NULL, " (layout %llu)", is->layout);
	else if (strcmp(is->health, STATE_OK))
		report_string(rp, NULL, " (run 'sluice detach %s')", is->ifname);
	if (!is->other_layout && is->partial)
		return;
	report_u64(rp, "layout_version", NULL, is->layout);
	layout_warning(is, warning, sizeof(warning));
	if (warning[0])
		report_string(rp, "layout_warning", NULL, warning);
	else
		report_null(rp, "layout_warning");
}

/* JSON only: the default policy in full, as show would print its options. */
static void status_policy_details(struct report *rp, const struct iface_status *is)
{
	const struct sluice_policy *p = &is->dflt;
	char opts[640];
	struct settings s;

	policy_settings(p, &s, NULL);
	format_settings(opts, sizeof(opts), &s);
	report_u64(rp, "rate_amount", NULL, p->rate_amount);
	report_string(rp, "rate_unit", NULL,
		      p->rate_unit == SLUICE_UNIT_PACKETS ? "packets"
		      : p->rate_unit == SLUICE_UNIT_BITS  ? "bits"
							  : "bytes");
	report_u64(rp, "rate_period_ns", NULL, p->rate_period_ns);
	report_string(rp, "algorithm", NULL, algorithm_name(p->meter));
	report_u64(rp, "window_ns", NULL, (uint64_t)p->window_ms * 1000000);
	report_u64(rp, "warmup_ns", NULL, p->warmup_ns);
	report_string(rp, "options", NULL, opts);
}

/* Multiprog: one more line, the dispatcher's programs in the order they run. */
static void status_sharing(struct report *rp, const struct iface_status *is)
{
	int i;

	if (strcmp(is->mode, "multiprog"))
		return;
	report_list_open(rp, "dispatcher");
	report_string(rp, NULL, "  %s: libxdp dispatcher, ", is->ifname);
	report_string(rp, NULL, "%s mode:", is->xdp_mode);
	for (i = 0; i < is->nsharing; i++) {
		report_open(rp, NULL);
		report_string(rp, "name", i ? ", %s" : " %s", is->sharing[i].name);
		report_u64(rp, "prog_id", " (id %llu, ", is->sharing[i].id);
		report_u64(rp, "run_prio", "priority %llu)", is->sharing[i].prio);
		report_close(rp);
	}
	if (!is->nsharing)
		report_string(rp, NULL, "%s", " none");
	report_list_close(rp);
	report_eol(rp);
}

/* The fleet agent's report (docs/fleet.md): lines under the interface, or null. */
static void status_fleet(struct report *rp, const char *ifname)
{
	struct fleet_report rep;

	if (fleet_report_read(ifname, &rep))
		report_null(rp, "fleet");
	else
		fleet_report_status(rp, &rep);
}

/* One interface: a row of the table and the lines under it, or one JSON object. */
static void status_write(struct report *rp, const char *key, const struct iface_status *is)
{
	report_open(rp, key);
	report_cell_ifname(rp, &status_cols[STATUS_IFACE], is->ifname);
	report_string(rp, "xdp_mode", NULL, is->xdp_mode);
	report_cell_string(rp, &status_cols[STATUS_MODE], is->mode);
	report_cell_u64(rp, &status_cols[STATUS_PROG], is->prog_id);
	status_policy_cells(rp, is);
	report_cell_optional(rp, &status_cols[STATUS_GROUP], is->group[0] ? is->group : NULL);
	status_generation_cells(rp, is);
	status_state_cell(rp, is);
	report_eol(rp);
	if (!is->partial)
		status_policy_details(rp, is);
	status_sharing(rp, is);
	if (!is->partial)
		status_fleet(rp, is->ifname);
	report_close(rp);
}

void status_json_named(struct json *j, const char *key, const char *ifname)
{
	struct iface_status is;
	struct report rp;

	report_json(&rp, j);
	if (status_collect(ifname, &is))
		report_null(&rp, key);
	else
		status_write(&rp, key, &is);
}

/* What went wrong for one interface: stderr in text; in JSON the entry says it. */
static int status_error(struct report *rp, const char *ifname, int err)
{
	char msg[256];

	if (!rp->j)
		return state_fail_cmd("status", err, ifname);
	snprintf(msg, sizeof(msg), "cannot read the state: %s", strerror(-err));
	report_open(rp, NULL);
	report_ifname(rp, NULL, ifname);
	report_string(rp, "error", NULL, msg);
	report_close(rp);
	return EXIT_FAILURE_RUNTIME;
}

static int status_print(char (*names)[IF_NAMESIZE], int n, bool json)
{
	char warning[IF_NAMESIZE * 3 + 256];
	struct iface_status is;
	struct report rp;
	struct json j;
	int i, err, ret = EXIT_OK;

	report_start(&rp, &j, json);
	report_list_open(&rp, NULL);
	report_header(&rp, status_cols, STATUS_COLS);
	report_eol(&rp);
	for (i = 0; i < n; i++) {
		err = status_collect(names[i], &is);
		if (err) {
			ret = status_error(&rp, names[i], err);
			continue;
		}
		layout_warning(&is, warning, sizeof(warning));
		if (warning[0]) /* stderr, also with --json: the entry has it too */
			fprintf(stderr, "sluice status: warning: %s\n", warning);
		status_write(&rp, NULL, &is);
	}
	report_list_close(&rp);
	return fail_json("status", report_end(&rp)) ?: ret;
}

static int status_run(struct cli_args *a, struct state *unused)
{
	static char names[MAX_ATTACHED][IF_NAMESIZE];
	int n, ret;

	(void)unused;
	ret = state_root_cmd("status");
	if (ret)
		return ret;
	if (a->ifname) {
		ret = state_exists(a->ifname);
		if (ret < 0)
			return state_fail_cmd("status", ret, a->ifname);
		if (!ret)
			return fail_input("status", "%s is not attached", a->ifname);
		snprintf(names[0], IF_NAMESIZE, "%s", a->ifname);
		n = 1;
	} else {
		n = state_list(names, MAX_ATTACHED);
		if (n < 0)
			return fail_runtime("status", n, "cannot list %s", SLUICE_PIN_ROOT);
	}
	return status_print(names, n, a->json);
}

const struct command cmd_status = {
	.id = CMD_STATUS,
	.name = "status",
	.summary = "list attached interfaces and their settings",
	.synopsis = "[IFACE] [--json]",
	.description =
		"List the interfaces sluice is attached to, with mode and settings, and the\n"
		"configuration's generation and when it last changed. State left by an\n"
		"interface that was deleted, or by an attach or detach that was interrupted,\n"
		"is shown as stale; 'sluice detach' removes it. State of another layout\n"
		"than this sluice's is listed with a warning saying what to do.",
	.iface = IFACE_OPTIONAL,
	.run = status_run,
};
