// SPDX-License-Identifier: GPL-2.0
/* sluice show: the running policy in the file format apply reads. */
#include <stdio.h>
#include "commands/commands.h"
#include "commands/policy_file.h"
#include "maps/policy_maps.h"
#include "text/conf.h"

static int show_run(struct cli_args *a, struct state *st)
{
	struct policy_doc doc;
	int ret, err;

	(void)a;
	ret = policy_load_cmd("show", st, &doc, true);
	if (!ret && (err = attach_settings_live(st, &doc.attach)))
		ret = fail_state("show", err, st->ifname, "read the attach settings");
	if (!ret)
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
