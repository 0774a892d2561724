// SPDX-License-Identifier: GPL-2.0
/* sluice stats: the datapath counters, summed over CPUs. */
#include <errno.h>
#include <stdio.h>
#include "args.h"
#include "commands.h"
#include "output.h"
#include "state.h"

static const char stats_usage[] =
	"Usage: sluice stats IFACE [--json]\n"
	"\n"
	"Print packets and bytes per outcome, summed over all CPUs:\n"
	"  passed         under the limit, passed\n"
	"  dropped        over the limit, dropped\n"
	"  would_drop     over the limit in dry run, passed\n"
	"  marked         over the limit, DSCP or ECN rewritten, passed\n"
	"  allowed        on the allow list, passed without metering\n"
	"  denied         on the deny list, dropped\n"
	"  non_ip         neither IPv4 nor IPv6, passed untouched\n"
	"  malformed      truncated or invalid IP headers, passed\n"
	"  new_sources    buckets created for sources seen for the first time\n"
	"  insert_failed  buckets that could not be created (the packet passed)\n";

enum { OPT_JSON = 256 };

static const struct option stats_options[] = {
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char *const counter_names[SLUICE_CNT_MAX] = {
	[SLUICE_CNT_PASSED] = "passed",
	[SLUICE_CNT_DROPPED] = "dropped",
	[SLUICE_CNT_WOULD_DROP] = "would_drop",
	[SLUICE_CNT_MARKED] = "marked",
	[SLUICE_CNT_ALLOWED] = "allowed",
	[SLUICE_CNT_DENIED] = "denied",
	[SLUICE_CNT_NON_IP] = "non_ip",
	[SLUICE_CNT_MALFORMED] = "malformed",
	[SLUICE_CNT_NEW_SOURCE] = "new_sources",
	[SLUICE_CNT_INSERT_FAILED] = "insert_failed",
};

static void stats_json(const char *ifname, const struct sluice_stats *sum)
{
	struct json j;
	int i;

	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "interface", ifname);
	json_object_begin(&j, "counters");
	for (i = 0; i < SLUICE_CNT_MAX; i++) {
		json_object_begin(&j, counter_names[i]);
		json_u64(&j, "packets", sum->c[i].packets);
		json_u64(&j, "bytes", sum->c[i].bytes);
		json_object_end(&j);
	}
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static void stats_human(const char *ifname, const struct sluice_stats *sum)
{
	int i;

	printf("sluice on %s\n", ifname);
	printf("%-14s %16s %18s\n", "COUNTER", "PACKETS", "BYTES");
	for (i = 0; i < SLUICE_CNT_MAX; i++)
		printf("%-14s %16llu %18llu\n", counter_names[i],
		       (unsigned long long)sum->c[i].packets, (unsigned long long)sum->c[i].bytes);
}

int cmd_stats(int argc, char **argv)
{
	struct sluice_stats sum;
	const char *ifname;
	bool json = false;
	struct state st;
	int opt, ret, err;

	while ((opt = cli_next_option("stats", argc, argv, stats_options)) != -1) {
		if (opt == 'h') {
			fputs(stats_usage, stdout);
			return EXIT_OK;
		}
		if (opt != OPT_JSON)
			return EXIT_BAD_INPUT;
		json = true;
	}
	if (cli_one_positional("stats", argc, argv, "interface name", &ifname))
		return EXIT_BAD_INPUT;
	ret = require_root("stats");
	if (ret)
		return ret;

	err = state_open(ifname, &st);
	if (err == -ENOENT)
		return fail_input("stats", "%s is not attached", ifname);
	if (err)
		return fail_runtime("stats", err, "cannot open the state of %s", ifname);
	err = stats_read(st.stats_fd, &sum);
	state_close(&st);
	if (err)
		return fail_runtime("stats", err, "cannot read the counters of %s", ifname);
	if (json)
		stats_json(ifname, &sum);
	else
		stats_human(ifname, &sum);
	return EXIT_OK;
}
