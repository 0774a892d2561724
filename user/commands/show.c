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
#include "text/conf.h"

/* With --json: {"interface": IFACE, "policy": the file's text}. */
static int show_json(const char *ifname, const struct policy_doc *doc)
{
	char *text = NULL;
	size_t len = 0;
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
	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_ifname(&j, ifname);
	json_string(&j, "policy", text);
	json_object_end(&j);
	free(text);
	return fail_json("show", json_finish(&j));
}

static int show_run(struct cli_args *a, struct state *st)
{
	struct policy_doc doc;
	int ret, err;

	ret = policy_load_cmd("show", st, &doc, true);
	if (!ret && (err = attach_settings_live(st, &doc.attach)))
		ret = fail_state("show", err, st->ifname, "read the attach settings");
	if (!ret && a->json)
		ret = show_json(st->ifname, &doc);
	else if (!ret)
		conf_write(stdout, &doc);
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
