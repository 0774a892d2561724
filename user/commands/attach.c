// SPDX-License-Identifier: GPL-2.0
/* sluice attach: load the limiter, pin its state and attach it to an interface. */
#include <errno.h>
#include <stdlib.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.skel.h"
#include "base/errors.h"
#include "commands/commands.h"
#include "commands/policy_file.h"
#include "maps/policy_maps.h"
#include "text/conf.h"

struct attach_opts {
	const char *ifname;
	int ifindex;
	struct policy_doc doc;
	uint64_t max_sources;
	uint32_t xdp_flags;
};

/*
 * -f FILE says everything attach sets, so an option a file can state may
 * not also come on the command line: neither silently wins.
 */
static int attach_check_file(struct cli_args *a)
{
	char err_line[512];
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (a->given[i] && o->statements)
			return fail_input("attach",
					  "--%s with -f: the file describes the interface whole "
					  "(write '%s' in its %s statement)",
					  o->name, o->name,
					  o->statements & STMT_ATTACH ? "attach" : "default");
	}
	if (conf_parse(a->file, a->doc, err_line, sizeof(err_line)))
		return fail_input("attach", "%s", err_line);
	a->xdp_flags = a->doc->attach.xdp_flags;
	a->max_sources = a->doc->attach.max_sources;
	return -1;
}

/* The command line's settings, as a document with only a default. */
static int attach_check_args(struct cli_args *a)
{
	const char *why;

	if (!a->given[OPT_RATE])
		return fail_input("attach", "missing --rate (for example --rate 500/s)");
	doc_init(a->doc);
	a->doc->dflt = a->settings;
	a->doc->attach.xdp_flags = a->xdp_flags;
	a->doc->attach.mode_given = a->given[OPT_MODE];
	a->doc->attach.max_sources = a->max_sources;
	a->doc->attach.max_sources_given = a->given[OPT_MAX_SOURCES];
	if (doc_validate(a->doc, &why))
		return fail_input("attach", "%s", why);
	return -1;
}

/* Returns -1 to go on, or the exit status. */
static int attach_check(struct cli_args *a)
{
	int ret;

	a->doc = calloc(1, sizeof(*a->doc));
	if (!a->doc)
		return fail_runtime("attach", -ENOMEM, "cannot check the policy");
	ret = a->file ? attach_check_file(a) : attach_check_args(a);
	if (ret >= 0)
		return ret;
	if (!if_nametoindex(a->ifname))
		return fail_input("attach", "unknown interface '%s'", a->ifname);
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

static int attach_run(struct cli_args *a, struct state *unused)
{
	struct attach_opts o = { .ifname = a->ifname,
				 .doc = *a->doc,
				 .max_sources = a->max_sources,
				 .xdp_flags = a->xdp_flags };
	struct sluice *skel = NULL;
	char staging[IF_NAMESIZE + 16];
	bool remove_old = false;
	int ret, err;

	(void)unused;
	o.ifindex = (int)if_nametoindex(o.ifname);
	if (!o.ifindex)
		return fail_input("attach", "unknown interface '%s'", o.ifname);
	err = bpffs_ensure();
	if (err == -EPERM)
		return state_fail_cmd("attach", err, NULL);
	if (err)
		return fail_runtime("attach", err, "cannot prepare %s", SLUICE_PIN_ROOT);
	/* Under the lock, a staged state is what a killed attach left: drop it. */
	err = state_remove_staged(o.ifname);
	if (!err)
		err = state_staging_name(o.ifname, staging, sizeof(staging));
	if (err)
		return fail_runtime("attach", err, "cannot clear an interrupted attach of %s",
				    o.ifname);
	ret = a->given[OPT_REPLACE] ? attach_replace(o.ifname, &o.doc, &remove_old) : -1;
	if (ret < 0 && !remove_old)
		ret = check_free(&o);
	if (ret >= 0)
		return ret;
	ret = EXIT_FAILURE_RUNTIME;
	err = attach_load(&skel, &o);
	if (err)
		fail_runtime("attach", err, "cannot load the XDP program");
	/* Replaced only once the new program has loaded: a failed load changes nothing. */
	else if (remove_old && (err = state_remove(o.ifname)))
		fail_runtime("attach", err, "cannot remove the old state of %s", o.ifname);
	else if ((err = attach_staged(skel, &o, staging)))
		fail_runtime("attach", err, "cannot attach to %s", o.ifname);
	else
		ret = EXIT_OK;
	if (!ret)
		attach_report(&o);
	sluice__destroy(skel);
	return ret;
}

const struct command cmd_attach = {
	.id = CMD_ATTACH,
	.name = "attach",
	.summary = "start limiting every source on an interface",
	.synopsis = "IFACE --rate RATE [OPTIONS] [--replace]\n"
		    "IFACE -f FILE [--replace]",
	.description =
		"Limit every source address on IFACE to RATE: packets (500/s, 30/m, 2/h, 10k/s)\n"
		"or bandwidth (10mbit/s, 1gbit/s, 500kB/s). These settings are the default\n"
		"policy; 'sluice rule' adds rules for source CIDRs and traffic classes.\n"
		"-f FILE attaches with a whole policy file instead (sluice.conf(5)), its\n"
		"'attach' statement giving --mode and --max-sources: all of it or nothing.\n"
		"IFACE attached already is refused, unless --replace: then IFACE becomes what\n"
		"this attach describes, keeping its program and buckets when --max-sources\n"
		"and --mode stay (else it is attached afresh); the same policy is left alone.",
	.iface = IFACE_REQUIRED,
	.root = true,
	.state = USE_LOCK,
	.check = attach_check,
	.run = attach_run,
};
