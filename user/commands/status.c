// SPDX-License-Identifier: GPL-2.0
/* sluice status: which interfaces are limited, how, and in which mode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/json.h"
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
static void status_sharing(const char *ifname, struct iface_status *is)
{
	bool dispatcher;
	int n;

	is->mode = "multiprog";
	n = mp_programs((int)if_nametoindex(ifname), &dispatcher, is->sharing, MAX_SHARING);
	is->nsharing = n > 0 && dispatcher ? n : 0;
}

static void status_json_sharing(struct json *j, const struct iface_status *is)
{
	int i;

	json_array_begin(j, "dispatcher");
	for (i = 0; i < is->nsharing; i++) {
		json_object_begin(j, NULL);
		json_string(j, "name", is->sharing[i].name);
		json_u64(j, "prog_id", is->sharing[i].id);
		json_u64(j, "run_prio", is->sharing[i].prio);
		json_object_end(j);
	}
	json_array_end(j);
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
		status_sharing(ifname, is);
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

/* The advice for an interface of another layout, "" for one of ours. */
static void layout_warning(const struct iface_status *is, char *buf, size_t len)
{
	buf[0] = '\0';
	if (is->other_layout)
		layout_advice(buf, len, is->ifname, is->layout);
}

static void status_json_layout(struct json *j, const struct iface_status *is)
{
	char warning[IF_NAMESIZE * 3 + 256];

	json_u64(j, "layout_version", is->layout);
	layout_warning(is, warning, sizeof(warning));
	if (warning[0])
		json_string(j, "layout_warning", warning);
	else
		json_null(j, "layout_warning");
}

/* The fleet agent's report (docs/fleet.md), or null when no agent runs. */
static void status_json_fleet(struct json *j, const char *ifname)
{
	struct fleet_report rep;
	int i;

	if (fleet_report_read(ifname, &rep)) {
		json_null(j, "fleet");
		return;
	}
	json_object_begin(j, "fleet");
	json_bool(j, "up", rep.up);
	json_string(j, "mode", rep.mode);
	json_u64(j, "agent_pid", (uint64_t)rep.pid);
	json_u64(j, "hosts", rep.hosts);
	json_u64(j, "period_ns", rep.period_ns);
	json_u64(j, "sources", rep.candidates);
	json_u64(j, "lag_ns", rep.lag_ns);
	json_u64(j, "calls", rep.calls);
	json_u64(j, "unpushed", rep.unpushed);
	json_u64(j, "candidates_lost", rep.lost);
	json_u64(j, "would_refuse", rep.would_refuse);
	json_object_begin(j, "errors");
	for (i = 0; i < FLEET_ERR_MAX; i++)
		json_u64(j, fleet_error_names[i], rep.errors[i]);
	json_object_end(j);
	json_object_end(j);
}

static void status_json_one(struct json *j, const char *key, const struct iface_status *is)
{
	char opts[640], changed[32];
	struct settings s;

	json_object_begin(j, key);
	json_ifname(j, is->ifname);
	json_string(j, "state", is->health);
	json_string(j, "mode", is->mode);
	json_string(j, "xdp_mode", is->xdp_mode);
	json_u64(j, "prog_id", is->prog_id);
	if (is->group[0])
		json_string(j, "group", is->group);
	else
		json_null(j, "group");
	if (!strcmp(is->mode, "multiprog"))
		status_json_sharing(j, is);
	if (is->other_layout || !is->partial)
		status_json_layout(j, is);
	if (is->partial) {
		json_object_end(j);
		return;
	}
	policy_settings(&is->dflt, &s, NULL);
	format_settings(opts, sizeof(opts), &s);
	json_string(j, "rate", is->rate);
	json_u64(j, "rate_amount", is->dflt.rate_amount);
	json_string(j, "rate_unit",
		    is->dflt.rate_unit == SLUICE_UNIT_PACKETS ? "packets"
		    : is->dflt.rate_unit == SLUICE_UNIT_BITS  ? "bits"
							      : "bytes");
	json_u64(j, "rate_period_ns", is->dflt.rate_period_ns);
	json_u64(j, "burst", is->dflt.burst);
	json_string(j, "algorithm", algorithm_name(is->dflt.meter));
	json_u64(j, "window_ns", (uint64_t)is->dflt.window_ms * 1000000);
	json_u64(j, "warmup_ns", is->dflt.warmup_ns);
	json_string(j, "action", action_name(is->dflt.action));
	json_u64(j, "ipv4_prefix", is->dflt.ipv4_prefix);
	json_u64(j, "ipv6_prefix", is->dflt.ipv6_prefix);
	json_u64(j, "rules", is->cfg.rules_v4 + is->cfg.rules_v6);
	json_u64(j, "max_sources", is->max_sources);
	json_u64(j, "generation", is->cfg.generation);
	format_utc(changed, sizeof(changed), is->cfg.changed_at_ns);
	json_string(j, "changed_at", changed);
	json_u64(j, "changed_at_unix", is->cfg.changed_at_ns / NSEC_PER_SEC);
	json_string(j, "options", opts);
	status_json_fleet(j, is->ifname);
	json_object_end(j);
}

void status_json_named(struct json *j, const char *key, const char *ifname)
{
	struct iface_status is;

	if (status_collect(ifname, &is))
		json_null(j, key);
	else
		status_json_one(j, key, &is);
}

static void status_json_error(struct json *j, const char *ifname, int err)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "cannot read the state: %s", strerror(-err));
	json_object_begin(j, NULL);
	json_ifname(j, ifname);
	json_string(j, "error", msg);
	json_object_end(j);
}

/* Multiprog: one more line, the dispatcher's programs in the order they run. */
static void status_human_sharing(const struct iface_status *is)
{
	int i;

	if (strcmp(is->mode, "multiprog"))
		return;
	printf("  %s: libxdp dispatcher, %s mode:", is->ifname, is->xdp_mode);
	for (i = 0; i < is->nsharing; i++)
		printf("%s %s (id %u, priority %u)", i ? "," : "", is->sharing[i].name,
		       is->sharing[i].id, is->sharing[i].prio);
	if (!is->nsharing)
		printf(" none");
	putchar('\n');
}

/* Under its interface, indented, when a fleet agent runs for it. */
static void status_human_fleet(const char *ifname)
{
	struct fleet_report rep;
	char *text = NULL, *line;
	size_t len = 0;
	FILE *out;

	if (fleet_report_read(ifname, &rep))
		return;
	out = open_memstream(&text, &len);
	if (!out)
		return;
	fleet_report_text(out, &rep);
	if (!fclose(out))
		for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
			printf("  %s\n", line);
	free(text);
}

static void status_human_one(const struct iface_status *is)
{
	char changed[32];

	if (is->partial) {
		printf("%-15s %-8s %-6u %-12s %-10s %-8s %-5s %-5s %-6s %-11s %-12s %-6s %-20s %s",
		       is->ifname, is->mode, is->prog_id, "-", "-", "-", "-", "-", "-", "-",
		       is->group[0] ? is->group : "-", "-", "-", is->health);
	} else {
		format_utc(changed, sizeof(changed), is->cfg.changed_at_ns);
		printf("%-15s %-8s %-6u %-12s %-10s %-8s /%-4u /%-4u %-6u %-11llu %-12s %-6llu %-20s %s",
		       is->ifname, is->mode, is->prog_id, is->rate, is->burst,
		       action_name(is->dflt.action), is->dflt.ipv4_prefix, is->dflt.ipv6_prefix,
		       is->cfg.rules_v4 + is->cfg.rules_v6, (unsigned long long)is->max_sources,
		       is->group[0] ? is->group : "-", (unsigned long long)is->cfg.generation,
		       changed, is->health);
	}
	if (is->other_layout)
		printf(" (layout %u)", is->layout);
	else if (strcmp(is->health, STATE_OK))
		printf(" (run 'sluice detach %s')", is->ifname);
	putchar('\n');
	status_human_sharing(is);
	status_human_fleet(is->ifname);
}

static int status_print(char (*names)[IF_NAMESIZE], int n, bool json)
{
	char warning[IF_NAMESIZE * 3 + 256];
	struct iface_status is;
	struct json j;
	int i, err, ret = EXIT_OK;

	if (json) {
		json_init(&j, stdout);
		json_array_begin(&j, NULL);
	} else {
		printf("%-15s %-8s %-6s %-12s %-10s %-8s %-5s %-5s %-6s %-11s %-12s %-6s %-20s %s\n",
		       "INTERFACE", "MODE", "PROG", "RATE", "BURST", "ACTION", "IPV4", "IPV6",
		       "RULES", "MAX-SOURCES", "GROUP", "GEN", "CHANGED", "STATE");
	}
	for (i = 0; i < n; i++) {
		err = status_collect(names[i], &is);
		if (err && json) {
			/* An error line here would break the array: the entry says it. */
			status_json_error(&j, names[i], err);
			ret = EXIT_FAILURE_RUNTIME;
			continue;
		}
		if (err) {
			ret = state_fail_cmd("status", err, names[i]);
			continue;
		}
		layout_warning(&is, warning, sizeof(warning));
		if (warning[0]) /* stderr, also with --json: the entry has it too */
			fprintf(stderr, "sluice status: warning: %s\n", warning);
		if (json)
			status_json_one(&j, NULL, &is);
		else
			status_human_one(&is);
	}
	if (json) {
		json_array_end(&j);
		ret = fail_json("status", json_finish(&j)) ?: ret;
	}
	return ret;
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
