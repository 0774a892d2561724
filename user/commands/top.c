// SPDX-License-Identifier: GPL-2.0
/*
 * sluice top: the busiest sources (reads/busiest.c) as a table or JSON
 * (outputs/busiest.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include "base/errors.h"
#include "commands/commands.h"
#include "outputs/busiest.h"
#include "outputs/report.h"
#include "reads/busiest.h"

struct top_opts {
	const char *ifname;
	uint64_t limit;
	enum top_sort sort;
	bool json;
};

static int top_report(const struct top_opts *o, const struct top_view *v, size_t shown)
{
	struct report rp;
	struct json j;

	report_start(&rp, &j, o->json);
	busiest_report(&rp, o->ifname, v, sort_name(o->sort), shown);
	return fail_json("top", report_end(&rp));
}

static int top_run(struct cli_args *a, struct state *st)
{
	struct top_opts o = { .ifname = a->ifname,
			      .limit = a->cmd.top.limit,
			      .sort = a->cmd.top.sort,
			      .json = a->json };
	struct source_table table = {};
	struct top_view view = {};
	size_t shown;
	int ret, err;

	err = busiest_read(&st->maps, st->proven_fd, o.sort, o.limit, &view, &table);
	if (err) {
		ret = fail_state("top", err, o.ifname, "read the sources");
		goto out;
	}
	shown = view.n < o.limit ? view.n : (size_t)o.limit;
	ret = top_report(&o, &view, shown);
out:
	free(view.rows);
	doc_free(&view.doc);
	sources_free(&table);
	return ret;
}

const struct command cmd_top = {
	.id = CMD_TOP,
	.name = "top",
	.summary = "list the busiest sources of an interface",
	.synopsis = "IFACE [-n N] [--sort drops|passed|rate] [--json]",
	.description =
		"List the busiest sources (prefixes) with their rule, packets passed and over\n"
		"the limit (dropped, or would-drop in dry run), and whether they are limited\n"
		"now, with the time until their next packet would pass.",
	.iface = IFACE_REQUIRED,
	.state = USE_READ,
	.run = top_run,
};
