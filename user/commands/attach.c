// SPDX-License-Identifier: GPL-2.0
/* sluice attach: load the limiter, pin its state and attach it to an interface. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.skel.h"
#include "values/rate.h"
#include "values/cidr.h"
#include "values/words.h"
#include "text/cli.h"
#include "commands/commands.h"
#include "text/conf.h"
#include "base/errors.h"
#include "base/json.h"
#include "policy/policy.h"
#include "pins/state.h"
#include "maps/policy_maps.h"

static const char attach_usage[] =
	"Usage: sluice attach IFACE --rate RATE [--burst N] [--action drop|mark|dry-run]\n"
	"                    [--dscp N] [--ecn] [--mode native|generic]\n"
	"                    [--ipv4-prefix N] [--ipv6-prefix N] [--max-sources N]\n"
	"                    [--new-sources RATE] [--overflow-rate RATE] [--initial-burst N]\n"
	"                    [--on-full drop|pass] [--aggregate [ipv4|ipv6]/LEN=RATE[,burst=N]]...\n"
	"\n"
	"Limit every source address on IFACE to RATE: packets (500/s, 30/m, 2/h, 10k/s)\n"
	"or bandwidth (10mbit/s, 1gbit/s, 500kB/s). These settings are the default\n"
	"policy; 'sluice rule' adds rules for source CIDRs and traffic classes.\n"
	"  --burst N          bucket depth in packets, or in bytes for a bandwidth (64kB)\n"
	"                     (default: one second of rate; at least 1 packet or 64 kB)\n"
	"  --action A         drop (default), mark (with --dscp N and/or --ecn), or dry-run\n"
	"                     (pass, but count would-drops)\n"
	"  --dscp N           mark: rewrite DSCP of over-limit packets to N (0-63)\n"
	"  --ecn              mark: set ECN CE on over-limit packets; drop those not ECN-capable\n"
	"  --mode M           native or generic XDP (default: native when the driver can)\n"
	"  --ipv4-prefix N    sources share a bucket per IPv4 /N (default 32)\n"
	"  --ipv6-prefix N    sources share a bucket per IPv6 /N (default 64)\n"
	"  --max-sources N    buckets tracked at once (default 1000000); a new source takes\n"
	"                     the place of one idle long enough to have refilled\n"
	"  --new-sources RATE new buckets admitted per rule (default 10k/s); other new sources\n"
	"                     share the overflow bucket\n"
	"  --overflow-rate R  the overflow bucket's rate (default: --rate, with --burst)\n"
	"  --initial-burst N  credit of a new bucket (default: the whole burst)\n"
	"  --on-full drop|pass  when a bucket cannot be created at all (default drop)\n"
	"  --aggregate A      also limit each wider prefix as a whole, such as /24=5000/s or\n"
	"                     /48=20000/s (up to 4; a length up to 32 is IPv4 unless\n"
	"                     ipv6/ is written)\n";

struct attach_opts {
	const char *ifname;
	int ifindex;
	struct policy_doc doc;
	uint64_t max_sources;
	uint32_t xdp_flags;
};

enum { OPT_MODE = 256, OPT_MAX_SOURCES, OPT_LIMITER };

static const struct option attach_options[] = {
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "max-sources", required_argument, NULL, OPT_MAX_SOURCES },
	{ "rate", required_argument, NULL, OPT_LIMITER },
	{ "burst", required_argument, NULL, OPT_LIMITER + 1 },
	{ "action", required_argument, NULL, OPT_LIMITER + 2 },
	{ "dscp", required_argument, NULL, OPT_LIMITER + 3 },
	{ "ecn", no_argument, NULL, OPT_LIMITER + 4 },
	{ "ipv4-prefix", required_argument, NULL, OPT_LIMITER + 5 },
	{ "ipv6-prefix", required_argument, NULL, OPT_LIMITER + 6 },
	{ "new-sources", required_argument, NULL, OPT_LIMITER + 7 },
	{ "overflow-rate", required_argument, NULL, OPT_LIMITER + 8 },
	{ "initial-burst", required_argument, NULL, OPT_LIMITER + 9 },
	{ "on-full", required_argument, NULL, OPT_LIMITER + 10 },
	{ "aggregate", required_argument, NULL, OPT_LIMITER + 11 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int attach_option(struct attach_opts *o, int opt, const char *val, const char **why)
{
	switch (opt) {
	case OPT_MODE:
		return parse_mode(val, &o->xdp_flags, why);
	case OPT_MAX_SOURCES:
		return parse_count(val, 1, MAX_SOURCES_MAX, &o->max_sources, why);
	}
	return option_apply(&o->doc.dflt, NULL, cli_option_name(attach_options, opt), val, why);
}

/* Returns -1 to go on, or the exit status. */
static int attach_parse(int argc, char **argv, struct attach_opts *o)
{
	const char *why;
	int opt;

	doc_init(&o->doc);
	o->max_sources = SLUICE_DEFAULT_MAX_SOURCES;
	while ((opt = cli_next_option("attach", argc, argv, attach_options)) != -1) {
		if (opt == 'h') {
			fputs(attach_usage, stdout);
			return EXIT_OK;
		}
		if (opt == '?')
			return EXIT_BAD_INPUT;
		if (attach_option(o, opt, optarg, &why))
			return fail_input("attach", "bad value '%s' for --%s: %s", optarg ?: "",
					  cli_option_name(attach_options, opt), why);
	}
	if (cli_one_ifname("attach", argc, argv, &o->ifname))
		return EXIT_BAD_INPUT;
	if (!o->doc.dflt.rate.amount)
		return fail_input("attach", "missing --rate (for example --rate 500/s)");
	if (doc_validate(&o->doc, &why))
		return fail_input("attach", "%s", why);
	o->ifindex = (int)if_nametoindex(o->ifname);
	if (!o->ifindex)
		return fail_input("attach", "unknown interface '%s'", o->ifname);
	return -1;
}

static int link_attach_and_pin(struct sluice *skel, const struct attach_opts *o,
			       const char *staging)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = o->xdp_flags);
	char path[PATH_MAX];
	int link_fd, err;

	link_fd = bpf_link_create(bpf_program__fd(skel->progs.sluice_xdp), o->ifindex, BPF_XDP,
				  &opts);
	if (link_fd < 0)
		return -errno;
	err = state_path(staging, SLUICE_PIN_LINK, path, sizeof(path));
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
	const char *health;
	int err;

	err = state_inspect(o->ifname, &health);
	if (!err)
		return fail_input("attach", "%s is already attached (run 'sluice detach %s' first)",
				  o->ifname, o->ifname);
	if (err == 1)
		return state_stale_cmd("attach", o->ifname, health);
	if (err != -ENOENT)
		return state_fail_cmd("attach", err, o->ifname);
	if (!bpf_xdp_query(o->ifindex, 0, &query) && query.prog_id)
		return fail_input("attach", "%s already runs another XDP program (id %u)",
				  o->ifname, query.prog_id);
	return -1;
}

static int attach_load(struct sluice **skel, struct attach_opts *o)
{
	struct state st;
	int err;

	*skel = sluice__open();
	if (!*skel)
		return -errno;
	err = state_size((*skel)->obj, o->max_sources);
	if (!err)
		err = sluice__load(*skel);
	if (err)
		return err;
	state_from_object((*skel)->obj, &st);
	return policy_create(&st.maps, o->max_sources, &o->doc);
}

static void attach_report(const struct attach_opts *o)
{
	char opts[640];

	format_settings(opts, sizeof(opts), &o->doc.dflt);
	printf("sluice: attached to %s in %s mode: %s per source, up to %llu sources\n", o->ifname,
	       xdp_mode_name(o->ifindex), opts, (unsigned long long)o->max_sources);
}

/* Pins everything under the hidden staging name, the link last, then publishes it. */
static int attach_staged(struct sluice *skel, const struct attach_opts *o, const char *staging)
{
	int err;

	err = state_mkdir(staging);
	if (!err)
		err = state_pin(skel->obj, staging);
	if (!err)
		err = link_attach_and_pin(skel, o, staging);
	if (!err)
		err = state_publish(staging, o->ifname);
	if (err)
		state_remove(staging);
	return err;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = {};
	struct sluice *skel = NULL;
	char staging[IF_NAMESIZE + 16];
	int ret, err, lock_fd = -1;

	ret = attach_parse(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = require_root("attach");
	if (ret)
		return ret;

	err = bpffs_ensure();
	if (err == -EPERM)
		return state_fail_cmd("attach", err, NULL);
	if (err)
		return fail_runtime("attach", err, "cannot prepare %s", SLUICE_PIN_ROOT);
	lock_fd = state_lock_cmd("attach");
	if (lock_fd < 0)
		return EXIT_FAILURE_RUNTIME;
	/* Under the lock, a staged state is what a killed attach left: drop it. */
	err = state_remove_staged(o.ifname);
	if (!err)
		err = state_staging_name(o.ifname, staging, sizeof(staging));
	if (err) {
		ret = fail_runtime("attach", err, "cannot clear an interrupted attach of %s",
				   o.ifname);
		goto out;
	}
	ret = check_free(&o);
	if (ret >= 0)
		goto out;

	ret = EXIT_FAILURE_RUNTIME;
	err = attach_load(&skel, &o);
	if (err) {
		fail_runtime("attach", err, "cannot load the XDP program");
		goto out;
	}
	err = attach_staged(skel, &o, staging);
	if (err) {
		fail_runtime("attach", err, "cannot attach to %s", o.ifname);
		goto out;
	}
	attach_report(&o);
	ret = EXIT_OK;
out:
	sluice__destroy(skel);
	state_unlock(lock_fd);
	doc_free(&o.doc);
	return ret;
}
