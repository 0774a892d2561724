// SPDX-License-Identifier: GPL-2.0
/* sluice show: the running policy in the file format apply reads. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "commands/policy_file.h"
#include "maps/policy_maps.h"
#include "outputs/report.h"
#include "text/conf.h"

/* The policy file's text, as is; in JSON {"interface": IFACE, "policy": that text}. */
static int show_write(const char *ifname, const struct policy_doc *doc, bool json)
{
	char *text = NULL;
	size_t len = 0;
	struct report rp;
	struct json j;
	FILE *out;

	out = open_memstream(&text, &len);
	if (!out)
		return fail_runtime("show", -errno, "cannot write the policy");
	conf_write(out, doc);
	if (fclose(out)) {
		free(text);
		return fail_runtime("show", -errno, "cannot write the policy");
	}
	report_start(&rp, &j, json);
	report_open(&rp, NULL);
	report_ifname(&rp, NULL, ifname);
	report_string(&rp, "policy", "%s", text);
	report_close(&rp);
	free(text);
	return fail_json("show", report_end(&rp));
}

static int show_run(struct cli_args *a, struct state *st)
{
	struct policy_doc doc;
	int ret, err;

	ret = policy_load_cmd("show", st, &doc, true);
	if (!ret && (err = attach_settings_live(st, &doc.attach)))
		ret = fail_state("show", err, st->ifname, "read the attach settings");
	if (!ret)
		ret = show_write(st->ifname, &doc, a->json);
	doc_free(&doc);
	return ret;
}

const struct command cmd_show = {
	.id = CMD_SHOW,
	.name = "show",
	.summary = "print the running policy in the file format",
	.synopsis = "IFACE",
	.description = "Print the running policy of IFACE, and how it is attached (XDP mode,\n"
		       "max-sources), in the format 'sluice apply' and 'sluice attach -f' read.",
	.iface = IFACE_REQUIRED,
	.state = USE_READ,
	.run = show_run,
};
