// SPDX-License-Identifier: GPL-2.0
/* sluice set: change rate, burst or action live; buckets keep their state. */
#include <errno.h>
#include <stdio.h>
#include "args.h"
#include "commands.h"
#include "output.h"
#include "policy.h"
#include "state.h"

static const char set_usage[] =
	"Usage: sluice set IFACE [--rate RATE] [--burst N] [--action drop|dry-run]\n"
	"\n"
	"Change the running limiter on IFACE without reattaching. Existing buckets keep\n"
	"their state; every packet sees either the old or the new settings as a whole.\n"
	"A new --rate without --burst keeps a burst set at attach time, and otherwise\n"
	"derives it again (one second of rate).\n";

enum { OPT_RATE = 256, OPT_BURST, OPT_ACTION };

static const struct option set_options[] = {
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "action", required_argument, NULL, OPT_ACTION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct set_opts {
	const char *ifname;
	struct rate rate;
	uint64_t burst;
	uint32_t action;
	bool has_rate, has_burst, has_action;
};

static int set_option(struct set_opts *o, int opt, const char *val, const char **why)
{
	switch (opt) {
	case OPT_RATE:
		o->has_rate = true;
		return parse_rate(val, &o->rate, why);
	case OPT_BURST:
		o->has_burst = true;
		return parse_count(val, 1, BURST_MAX, &o->burst, why);
	case OPT_ACTION:
		o->has_action = true;
		return parse_action(val, &o->action, why);
	}
	return -EINVAL;
}

static int set_parse(int argc, char **argv, struct set_opts *o)
{
	const char *why;
	int opt;

	while ((opt = cli_next_option("set", argc, argv, set_options)) != -1) {
		if (opt == 'h') {
			fputs(set_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_BAD_INPUT;
		if (set_option(o, opt, optarg, &why))
			return fail_input("set", "bad value '%s' for --%s: %s", optarg,
					  cli_option_name(set_options, opt), why);
	}
	if (cli_one_positional("set", argc, argv, "interface name", &o->ifname))
		return EXIT_BAD_INPUT;
	if (!o->has_rate && !o->has_burst && !o->has_action)
		return fail_input("set", "nothing to change (give --rate, --burst or --action)");
	return -1;
}

static void set_apply(const struct set_opts *o, struct settings *s)
{
	if (o->has_rate)
		s->rate = o->rate;
	if (o->has_burst)
		s->burst = o->burst;
	if (o->has_action)
		s->action = o->action;
}

int cmd_set(int argc, char **argv)
{
	struct sluice_config cfg;
	struct set_opts o = {};
	struct settings s;
	struct state st;
	int ret, err, lock_fd;
	const char *why;

	ret = set_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = require_root("set");
	if (ret)
		return ret;
	lock_fd = state_lock();
	if (lock_fd < 0)
		return fail_input("set", "%s is not attached", o.ifname);

	err = state_open(o.ifname, &st);
	if (err == -ENOENT) {
		ret = fail_input("set", "%s is not attached", o.ifname);
		goto out_unlock;
	}
	if (err) {
		ret = fail_runtime("set", err, "cannot open the state of %s", o.ifname);
		goto out_unlock;
	}
	err = config_read(st.config_fd, &cfg);
	if (err) {
		ret = fail_runtime("set", err, "cannot read the configuration of %s", o.ifname);
		goto out;
	}
	config_settings(&cfg, &s);
	set_apply(&o, &s);
	if (config_build(&cfg, &s, &why)) {
		ret = fail_input("set", "%s", why);
		goto out;
	}
	err = config_write(st.config_fd, st.generation_fd, &cfg);
	if (err) {
		ret = fail_runtime("set", err, "cannot write the configuration of %s", o.ifname);
		goto out;
	}
	ret = EXIT_OK;
out:
	state_close(&st);
out_unlock:
	state_unlock(lock_fd);
	return ret;
}
