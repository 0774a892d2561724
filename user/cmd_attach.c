// SPDX-License-Identifier: GPL-2.0
/* sluice attach: load the limiter, pin its state and attach it to an interface. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.skel.h"
#include "args.h"
#include "commands.h"
#include "output.h"
#include "policy.h"
#include "state.h"

static const char attach_usage[] =
	"Usage: sluice attach IFACE --rate RATE [--burst N] [--action drop|dry-run]\n"
	"                    [--mode native|generic] [--ipv4-prefix N] [--ipv6-prefix N]\n"
	"                    [--max-sources N]\n"
	"\n"
	"Limit every source address on IFACE to RATE packets (500/s, 30/m, 2/h, 10k/s).\n"
	"  --burst N          bucket depth in packets (default: one second of rate, at least 1)\n"
	"  --action A         drop (default) or dry-run (pass, but count would-drops)\n"
	"  --mode M           native or generic XDP (default: native when the driver can)\n"
	"  --ipv4-prefix N    sources share a bucket per IPv4 /N (default 32)\n"
	"  --ipv6-prefix N    sources share a bucket per IPv6 /N (default 64)\n"
	"  --max-sources N    buckets tracked at once, least recently used evicted (default 1000000)\n";

struct attach_opts {
	const char *ifname;
	int ifindex;
	struct settings settings;
	uint64_t max_sources;
	uint32_t xdp_flags;
};

enum { OPT_RATE = 256, OPT_BURST, OPT_ACTION, OPT_MODE, OPT_IPV4, OPT_IPV6, OPT_MAX_SOURCES };

static const struct option attach_options[] = {
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "action", required_argument, NULL, OPT_ACTION },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "ipv4-prefix", required_argument, NULL, OPT_IPV4 },
	{ "ipv6-prefix", required_argument, NULL, OPT_IPV6 },
	{ "max-sources", required_argument, NULL, OPT_MAX_SOURCES },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int attach_option(struct attach_opts *o, int opt, const char *val, const char **why)
{
	struct settings *s = &o->settings;

	switch (opt) {
	case OPT_RATE:
		return parse_rate(val, &s->rate, why);
	case OPT_BURST:
		return parse_count(val, 1, BURST_MAX, &s->burst, why);
	case OPT_ACTION:
		return parse_action(val, &s->action, why);
	case OPT_MODE:
		return parse_mode(val, &o->xdp_flags, why);
	case OPT_IPV4:
		return parse_prefix(val, 32, &s->ipv4_prefix, why);
	case OPT_IPV6:
		return parse_prefix(val, 128, &s->ipv6_prefix, why);
	case OPT_MAX_SOURCES:
		return parse_count(val, 1, MAX_SOURCES_MAX, &o->max_sources, why);
	}
	return -EINVAL;
}

/* Returns -1 to go on, or the exit status. */
static int attach_parse(int argc, char **argv, struct attach_opts *o)
{
	const char *why;
	int opt;

	settings_default(&o->settings);
	o->max_sources = SLUICE_DEFAULT_MAX_SOURCES;
	while ((opt = cli_next_option("attach", argc, argv, attach_options)) != -1) {
		if (opt == 'h') {
			fputs(attach_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_BAD_INPUT;
		if (attach_option(o, opt, optarg, &why))
			return fail_input("attach", "bad value '%s' for --%s: %s", optarg,
					  cli_option_name(attach_options, opt), why);
	}
	if (cli_one_positional("attach", argc, argv, "interface name", &o->ifname))
		return EXIT_BAD_INPUT;
	if (!o->settings.rate.packets)
		return fail_input("attach", "missing --rate (for example --rate 500/s)");
	o->ifindex = (int)if_nametoindex(o->ifname);
	if (!o->ifindex)
		return fail_input("attach", "unknown interface '%s'", o->ifname);
	return -1;
}

static int pin_maps(struct sluice *skel, const char *ifname)
{
	const struct {
		struct bpf_map *map;
		const char *name;
	} pins[] = {
		{ skel->maps.buckets, SLUICE_MAP_BUCKETS },
		{ skel->maps.config, SLUICE_MAP_CONFIG },
		{ skel->maps.stats, SLUICE_MAP_STATS },
		{ skel->maps.hot, SLUICE_MAP_HOT },
		{ skel->maps.data_generation, SLUICE_MAP_GENERATION },
	};
	char path[PATH_MAX];
	size_t i;
	int err;

	for (i = 0; i < sizeof(pins) / sizeof(pins[0]); i++) {
		err = state_path(ifname, pins[i].name, path, sizeof(path));
		if (!err)
			err = bpf_map__pin(pins[i].map, path);
		if (err)
			return err;
	}
	return 0;
}

static int link_attach_and_pin(struct sluice *skel, const struct attach_opts *o)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = o->xdp_flags);
	char path[PATH_MAX];
	int link_fd, err;

	link_fd = bpf_link_create(bpf_program__fd(skel->progs.sluice_xdp), o->ifindex, BPF_XDP,
				  &opts);
	if (link_fd < 0)
		return -errno;
	err = state_path(o->ifname, SLUICE_PIN_LINK, path, sizeof(path));
	if (!err && bpf_obj_pin(link_fd, path))
		err = -errno;
	/* Unpinned, the link dies with this fd and the program detaches. */
	close(link_fd);
	return err;
}

/* Fails when sluice, or anything else, already runs XDP on the interface. */
static int check_free(const struct attach_opts *o)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);

	if (state_exists(o->ifname))
		return fail_input("attach", "%s is already attached (run 'sluice detach %s' first)",
				  o->ifname, o->ifname);
	if (!bpf_xdp_query(o->ifindex, 0, &query) && query.prog_id)
		return fail_input("attach", "%s already runs another XDP program (id %u)",
				  o->ifname, query.prog_id);
	return -1;
}

static int attach_load(struct sluice **skel, const struct attach_opts *o, struct sluice_config *cfg)
{
	int err;

	*skel = sluice__open();
	if (!*skel)
		return -errno;
	err = bpf_map__set_max_entries((*skel)->maps.buckets, (__u32)o->max_sources);
	if (!err)
		err = sluice__load(*skel);
	if (!err)
		err = config_write(bpf_map__fd((*skel)->maps.config),
				   bpf_map__fd((*skel)->maps.data_generation), cfg);
	return err;
}

static void attach_report(const struct attach_opts *o, const struct sluice_config *cfg)
{
	char rate[32];

	format_rate(rate, sizeof(rate), &o->settings.rate);
	printf("sluice: attached to %s in %s mode: %s per source, burst %llu, action %s, "
	       "IPv4 /%u, IPv6 /%u, up to %llu sources\n",
	       o->ifname, xdp_mode_name(o->ifindex), rate, (unsigned long long)cfg->burst,
	       action_name(cfg->action), cfg->ipv4_prefix, cfg->ipv6_prefix,
	       (unsigned long long)o->max_sources);
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = {};
	struct sluice_config cfg;
	struct sluice *skel = NULL;
	char dir[PATH_MAX];
	int ret, err, lock_fd = -1;
	const char *why;

	ret = attach_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (config_build(&cfg, &o.settings, &why))
		return fail_input("attach", "%s", why);
	ret = require_root("attach");
	if (ret)
		return ret;

	err = bpffs_ensure();
	if (err)
		return fail_runtime("attach", err, "cannot prepare %s", SLUICE_PIN_ROOT);
	lock_fd = state_lock();
	if (lock_fd < 0)
		return fail_runtime("attach", lock_fd, "cannot lock %s", SLUICE_PIN_ROOT);
	ret = check_free(&o);
	if (ret >= 0)
		goto out;

	ret = EXIT_FAILURE_RUNTIME;
	err = attach_load(&skel, &o, &cfg);
	if (err) {
		fail_runtime("attach", err, "cannot load the XDP program");
		goto out;
	}
	err = state_path(o.ifname, NULL, dir, sizeof(dir));
	if (!err && mkdir(dir, 0700))
		err = -errno;
	if (!err)
		err = pin_maps(skel, o.ifname);
	if (!err)
		err = link_attach_and_pin(skel, &o);
	if (err) {
		fail_runtime("attach", err, "cannot attach to %s", o.ifname);
		state_remove(o.ifname);
		goto out;
	}
	attach_report(&o, &cfg);
	ret = EXIT_OK;
out:
	sluice__destroy(skel);
	state_unlock(lock_fd);
	return ret;
}
