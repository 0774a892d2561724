// SPDX-License-Identifier: GPL-2.0
/* Whole policy files: attach settings compared, a live policy replaced or left alone. */
#define _GNU_SOURCE /* open_memstream */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/errors.h"
#include "commands/policy_file.h"
#include "maps/policy_maps.h"
#include "text/conf.h"
#include "values/words.h"

int attach_settings_live(const struct state *st, struct attach_settings *as)
{
	struct sluice_config cfg;
	const char *mode, *why;
	int err;

	memset(as, 0, sizeof(*as));
	err = config_read(&st->maps, &cfg);
	if (!err && cfg.layout_version != SLUICE_LAYOUT_VERSION)
		err = -EPROTO;
	if (!err)
		err = table_max_sources(&st->maps, &cfg, &as->max_sources);
	if (err)
		return err;
	as->max_sources_given = true;
	mode = xdp_mode_name((int)if_nametoindex(st->ifname));
	as->mode_given = !parse_mode(mode, &as->xdp_flags, &why);
	as->group = state_group(st);
	as->group_given = as->group != STATE_NO_GROUP;
	return 0;
}

bool attach_settings_differ(const struct attach_settings *want, const struct attach_settings *live,
			    bool unstated_default, char *buf, size_t len)
{
	if ((want->max_sources_given || unstated_default) &&
	    want->max_sources != live->max_sources) {
		snprintf(buf, len, "max-sources %llu (running %llu)",
			 (unsigned long long)want->max_sources,
			 (unsigned long long)live->max_sources);
		return true;
	}
	/* A mode the file does not state, or the kernel does not report, is no difference. */
	if (want->mode_given && want->xdp_flags && live->mode_given &&
	    want->xdp_flags != live->xdp_flags) {
		snprintf(buf, len, "mode %s (running %s)", mode_name(want->xdp_flags),
			 mode_name(live->xdp_flags));
		return true;
	}
	return false;
}

/* A group the file states that the state does not have (or a group it does not state, for
 * --replace). */
static bool group_differs(const struct attach_settings *want, const struct attach_settings *live,
			  char *buf, size_t len)
{
	char w[40] = "none", l[40] = "none";

	if (want->group_given == live->group_given &&
	    (!want->group_given || want->group == live->group))
		return false;
	if (want->group_given)
		format_group(w, sizeof(w), want->group);
	if (live->group_given)
		format_group(l, sizeof(l), live->group);
	snprintf(buf, len, "group %s (running %s)", w, l);
	return true;
}

int attach_settings_check(const char *cmd, const struct state *st, const char *file,
			  const struct attach_settings *want)
{
	struct attach_settings live;
	bool group = false;
	char what[128];
	int err;

	err = attach_settings_live(st, &live);
	if (err)
		return fail_state(cmd, err, st->ifname, "read the attach settings");
	if (!attach_settings_differ(want, &live, false, what, sizeof(what))) {
		if (!want->group_given || !group_differs(want, &live, what, sizeof(what)))
			return EXIT_OK;
		group = true; /* --replace changes a group alone in place */
	}
	return fail_input(cmd,
			  "%s states %s: attach settings change only with 'sluice attach %s -f "
			  "FILE --replace' (%s), or detach and attach; nothing changed",
			  strcmp(file, "-") ? file : "standard input", what, st->ifname,
			  group ? "which keeps the buckets" : "buckets start afresh");
}

/* doc as show prints it, without its attach statement: the policy alone, as text. */
static char *policy_text(const struct policy_doc *doc)
{
	struct policy_doc *copy = malloc(sizeof(*copy));
	char *text = NULL;
	size_t len;
	FILE *f;

	if (!copy)
		return NULL;
	*copy = *doc; /* shares the lists, which conf_write only reads */
	memset(&copy->attach, 0, sizeof(copy->attach));
	f = open_memstream(&text, &len);
	if (f) {
		conf_write(f, copy);
		if (fclose(f)) {
			free(text);
			text = NULL;
		}
	}
	free(copy);
	return text;
}

/*
 * Is the live policy doc already? show's text of both compared: it is
 * canonical (show, apply, show prints the same), and the lists are sorted
 * without duplicates on both sides.
 */
static int policy_unchanged(struct state *st, const struct policy_doc *doc, bool *same)
{
	char *want = NULL, *have = NULL;
	struct policy_doc live;
	int err;

	err = policy_load(&st->maps, &live, true);
	if (!err) {
		want = policy_text(doc);
		have = policy_text(&live);
		err = want && have ? 0 : -ENOMEM;
	}
	*same = !err && !strcmp(want, have);
	free(want);
	free(have);
	doc_free(&live);
	return err;
}

/*
 * The one place a change finds the interface as asked already: nothing is
 * written and the configuration generation stays. What logs or counts
 * changes hooks here too, to say so.
 */
static int nothing_to_change(const char *cmd, const struct state *st)
{
	output_say("sluice: %s: %s already runs this policy; nothing changed\n", cmd, st->ifname);
	return EXIT_OK;
}

/* As policy_replace_cmd; attach_changed: its attach settings changed, so something did. */
static int replace_policy(const char *cmd, struct state *st, struct policy_doc *doc,
			  bool attach_changed)
{
	char why[160];
	bool same;
	int err;

	cidr_list_sort(&doc->allow);
	cidr_list_sort(&doc->deny);
	err = policy_unchanged(st, doc, &same);
	if (err)
		return fail_state(cmd, err, st->ifname, "read the policy");
	if (same)
		return attach_changed ? EXIT_OK : nothing_to_change(cmd, st);
	err = lists_fit(&st->maps, doc, why, sizeof(why));
	if (err == -ENOSPC)
		return fail_input(cmd, "%s; nothing changed", why);
	if (err)
		return fail_runtime(cmd, err, "cannot read the list tries of %s", st->ifname);
	return policy_store_cmd(cmd, st, doc, true);
}

int policy_replace_cmd(const char *cmd, struct state *st, struct policy_doc *doc)
{
	return replace_policy(cmd, st, doc, false);
}

/*
 * The group is no table's shape: --replace changes it in place, and says
 * so (*changed). -1 to go on.
 */
static int regroup(const struct state *st, const struct attach_settings *want,
		   const struct attach_settings *live, bool *changed)
{
	char what[96];
	int err;

	*changed = group_differs(want, live, what, sizeof(what));
	if (!*changed)
		return -1;
	err = state_share(st->ifname, want->group_given ? (gid_t)want->group : STATE_NO_GROUP);
	if (err)
		return fail_runtime("attach", err, "cannot change the group of %s", st->ifname);
	output_say("sluice: attach: %s: %s\n", st->ifname, what);
	return -1;
}

/* The interface is attached and whole: keep it, or say why it is attached afresh. */
static int replace_attached(const char *ifname, struct policy_doc *doc, bool *remove_old)
{
	struct attach_settings live;
	bool regrouped = false;
	char what[128];
	struct state st;
	int err, ret;

	err = state_open(ifname, &st);
	if (err)
		return state_fail_cmd("attach", err, ifname);
	err = attach_settings_live(&st, &live);
	if (err == -EPROTO) {
		output_say(
			"sluice: attach: %s has state of another layout: attached afresh, buckets "
			"start empty\n",
			ifname);
		ret = -1;
	} else if (err) {
		ret = fail_state("attach", err, ifname, "read the attach settings");
	} else if (attach_settings_differ(&doc->attach, &live, true, what, sizeof(what))) {
		output_say("sluice: attach: %s: %s: attached afresh, buckets start empty\n", ifname,
			   what);
		ret = -1;
	} else {
		/* Same layout and table: the program and every map stay. */
		*remove_old = false;
		ret = regroup(&st, &doc->attach, &live, &regrouped);
		if (ret < 0)
			ret = replace_policy("attach", &st, doc, regrouped);
		if (!ret)
			output_say("sluice: attach: %s kept its program and buckets\n", ifname);
	}
	state_close(&st);
	return ret;
}

int attach_replace(const char *ifname, struct policy_doc *doc, bool *remove_old)
{
	const char *health;
	int err;

	*remove_old = false;
	err = state_inspect(ifname, &health);
	if (err == -ENOENT)
		return -1; /* not attached: a plain attach */
	if (err < 0)
		return state_fail_cmd("attach", err, ifname);
	*remove_old = true;
	if (err == 1) {
		if (!strncmp(health, STATE_STALE, strlen(STATE_STALE)))
			health += strlen(STATE_STALE);
		output_say("sluice: attach: replacing the stale state of %s (%s)\n", ifname,
			   health);
		return -1;
	}
	return replace_attached(ifname, doc, remove_old);
}
