// SPDX-License-Identifier: GPL-2.0
/* sluice attach: load the limiter, pin its state and attach it to an interface. */
#include <errno.h>
#include <stdlib.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "base/caps.h"
#include "base/errors.h"
#include "commands/commands.h"
#include "commands/policy_file.h"
#include "maps/policy_maps.h"
#include "pins/cookies.h"
#include "pins/datapath.h"
#include "pins/multiprog.h"
#include "text/conf.h"

struct attach_opts {
	const char *ifname;
	int ifindex;
	struct policy_doc doc; /* its attach settings own max-sources and the mode */
	bool multiprog;	       /* through libxdp's dispatcher */
	gid_t group;	       /* may read the pins; STATE_NO_GROUP: root alone */
};

/* The program's name in the kernel, as libxdp and bpftool show it. */
#define SLUICE_PROG_NAME "sluice_xdp"

/*
 * -f FILE says everything attach sets, so an option a file can state may
 * not also come on the command line: neither silently wins.
 */
static int attach_check_file(struct cli_args *a)
{
	char err_line[512];
	const char *why;
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
	if (conf_parse(a->file, a->cmd.attach.doc, err_line, sizeof(err_line)))
		return fail_input("attach", "%s", err_line);
	if (prove_refusal(a->cmd.attach.doc, &why))
		return fail_input("attach", "%s", why);
	return -1;
}

/* The command line's settings, as a document with only a default. */
static int attach_check_args(struct cli_args *a)
{
	const char *why;

	if (!a->given[OPT_RATE])
		return fail_input("attach", "missing --rate (for example --rate 500/s)");
	doc_init(a->cmd.attach.doc);
	a->cmd.attach.doc->attach = a->attach;
	if (doc_set_default(a->cmd.attach.doc, &a->settings, &why) ||
	    doc_validate(a->cmd.attach.doc, &why) || prove_refusal(a->cmd.attach.doc, &why))
		return fail_input("attach", "%s", why);
	return -1;
}

/* Returns -1 to go on, or the exit status. */
static int attach_check(struct cli_args *a)
{
	int ret;

	a->cmd.attach.doc = calloc(1, sizeof(*a->cmd.attach.doc));
	if (!a->cmd.attach.doc)
		return fail_runtime("attach", -ENOMEM, "cannot check the policy");
	/* libxdp only detaches and re-attaches: no live replace to offer yet. */
	if (a->cmd.attach.multiprog && a->given[OPT_REPLACE])
		return fail_input("attach", "--replace does not work with --multiprog (detach, "
					    "then attach --multiprog)");
	ret = a->file ? attach_check_file(a) : attach_check_args(a);
	if (ret >= 0)
		return ret;
	if (!if_nametoindex(a->ifname))
		return fail_input("attach", "unknown interface '%s'", a->ifname);
	return -1;
}

/* Without --multiprog, any XDP program on the interface is another's: refused. */
static int check_no_xdp(const struct attach_opts *o)
{
	char name[BPF_OBJ_NAME_LEN];
	unsigned int id = xdp_prog_on(o->ifindex, name, sizeof(name));

	if (!id)
		return -1;
	return fail_input("attach",
			  "%s already runs XDP program %s (id %u): to run sluice beside it, "
			  "attach with --multiprog (it shares with programs loaded through libxdp)",
			  o->ifname, name, id);
}

/* With --multiprog, the interface is free or runs libxdp's dispatcher. */
static int check_shareable(const struct attach_opts *o)
{
	struct mp_prog progs[1];
	bool dispatcher;
	int n;

	n = mp_supported();
	if (n)
		return fail_runtime("attach", 0,
				    "cannot share %s: this kernel refuses BPF extension programs "
				    "(freplace: %s), which libxdp's dispatcher needs",
				    o->ifname, strerror(-n));
	n = mp_programs(o->ifindex, &dispatcher, progs, 1);
	if (n < 0)
		return fail_runtime("attach", n, "cannot read the XDP programs of %s", o->ifname);
	if (n > 0 && !dispatcher)
		return fail_input(
			"attach",
			"%s already runs XDP program %s (id %u), not loaded through libxdp: "
			"--multiprog shares an interface only with libxdp's dispatcher "
			"(xdp-loader, xdp-filter)",
			o->ifname, progs[0].name, progs[0].id);
	return -1;
}

/* Fails when sluice, or anything sluice cannot share with, already runs XDP on the interface. */
static int check_free(const struct attach_opts *o)
{
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
	return o->multiprog ? check_shareable(o) : check_no_xdp(o);
}

/*
 * The first configuration, pinned (config_live) in the staging directory
 * as it is published, with the directory's group.
 */
static int attach_configure(struct sluice *skel, struct attach_opts *o, const char *staging)
{
	struct state st;
	int err;

	state_from_object(skel->obj, &st);
	st.maps.dir = state_dir_fd(staging);
	if (st.maps.dir < 0)
		return st.maps.dir;
	err = policy_create(&st.maps, o->doc.attach.max_sources, &o->doc);
	close(st.maps.dir);
	return err;
}

/* The staging directory, shared with the group before anything is pinned in it. */
static int staging_make(const struct attach_opts *o, const char *staging)
{
	int err = state_mkdir(staging);

	return err ?: state_share(staging, o->group);
}

static int attach_load(struct sluice **skel, struct attach_opts *o, const char *staging)
{
	int err;

	*skel = sluice_open_here();
	if (!*skel)
		return -errno;
	err = state_prepare((*skel)->obj, o->doc.attach.max_sources);
	if (!err)
		err = sluice__load(*skel);
	return err ?: attach_configure(*skel, o, staging);
}

static void attach_report(const struct attach_opts *o)
{
	char opts[640];

	format_settings(opts, sizeof(opts), &o->doc.dflt);
	if (o->multiprog)
		output_say(
			"sluice: attached to %s through libxdp's dispatcher (%s mode, run priority "
			"%d): %s per source, up to %llu sources\n",
			o->ifname, xdp_mode_name(o->ifindex), MP_RUN_PRIO, opts,
			(unsigned long long)o->doc.attach.max_sources);
	else
		output_say("sluice: attached to %s in %s mode: %s per source, up to %llu sources\n",
			   o->ifname, xdp_mode_name(o->ifindex), opts,
			   (unsigned long long)o->doc.attach.max_sources);
}

/*
 * Through libxdp: libxdp loads the object as it attaches it, so the program
 * runs (passing every packet, as between map creation and the first config
 * write) until the policy is written just after. The program is pinned last,
 * where the link would be. Killed before that, the program stays in the
 * dispatcher with nothing pinned; the next attach --multiprog takes it out.
 */
static int attach_shared(struct sluice **skel, struct attach_opts *o, const char *staging)
{
	int err;

	*skel = sluice_open_here();
	if (!*skel)
		return -errno;
	err = state_prepare((*skel)->obj, o->doc.attach.max_sources);
	if (!err)
		err = staging_make(o, staging);
	if (err)
		return err;
	err = mp_attach((*skel)->obj, SLUICE_PROG_NAME, o->ifindex, o->doc.attach.xdp_flags);
	if (err) {
		state_remove(staging);
		return err;
	}
	err = attach_configure(*skel, o, staging);
	if (!err)
		err = state_pin((*skel)->obj, staging);
	if (!err)
		err = state_pin_prog(bpf_program__fd((*skel)->progs.sluice_xdp), staging);
	if (!err)
		err = state_publish(staging, o->ifname);
	if (err) {
		state_remove(staging);
		mp_detach(bpf_program__fd((*skel)->progs.sluice_xdp), o->ifindex);
	}
	return err;
}

/* Pins everything under the hidden staging name, the link last, then publishes it. */
static int attach_staged(struct sluice *skel, const struct attach_opts *o, const char *staging)
{
	int err;

	err = state_pin(skel->obj, staging);
	if (!err)
		err = state_pin_link(bpf_program__fd(skel->progs.sluice_xdp), o->ifindex,
				     o->doc.attach.xdp_flags, staging);
	if (!err)
		err = state_publish(staging, o->ifname);
	if (err)
		state_remove(staging);
	return err;
}

/*
 * The plain attach: load, write the policy, pin, attach the link last. The
 * state --replace starts afresh is removed only once the new program has
 * loaded: a failed load changes nothing.
 */
static int attach_direct(struct sluice **skel, struct attach_opts *o, const char *staging,
			 bool remove_old)
{
	int err = staging_make(o, staging);

	if (err) {
		fail_runtime("attach", err, "cannot make the state directory of %s", o->ifname);
		return err;
	}
	err = attach_load(skel, o, staging);
	if (err) {
		state_remove(staging);
		fail_runtime("attach", err, "cannot load the XDP program");
		return err;
	}
	if (remove_old && (err = state_remove(o->ifname))) {
		state_remove(staging);
		fail_runtime("attach", err, "cannot remove the old state of %s", o->ifname);
		return err;
	}
	err = attach_staged(*skel, o, staging);
	if (err == -EOPNOTSUPP && (o->doc.attach.xdp_flags & XDP_FLAGS_DRV_MODE))
		fail_runtime("attach", err,
			     "cannot attach to %s in native mode, which its driver lacks "
			     "(--mode generic attaches to any interface, at a lower rate)",
			     o->ifname);
	else if (err)
		fail_runtime("attach", err, "cannot attach to %s", o->ifname);
	return err;
}

/*
 * The group must reach the pins: the pin root searchable, and where
 * /sys/fs/bpf is not, the mirror, whose bind mount takes CAP_SYS_ADMIN.
 */
static int share_root(void)
{
	int err = state_share_root();

	if (err == -EPERM && !(caps_effective() & CAP_BIT(CAP_SYS_ADMIN)))
		return require_caps("attach", CAP_BIT(CAP_SYS_ADMIN));
	if (err == -EPERM)
		return state_fail_cmd("attach", err, NULL);
	if (err)
		return fail_runtime("attach", err, "cannot let the group reach %s (mount %s)",
				    SLUICE_PIN_ROOT, SLUICE_PIN_MIRROR);
	return -1;
}

static int attach_locked(struct cli_args *a)
{
	struct attach_opts o = { .ifname = a->ifname,
				 .doc = *a->cmd.attach.doc,
				 .multiprog = a->cmd.attach.multiprog,
				 .group = a->cmd.attach.doc->attach.group_given
						  ? (gid_t)a->cmd.attach.doc->attach.group
						  : STATE_NO_GROUP };
	struct sluice *skel = NULL;
	char staging[IF_NAMESIZE + 16];
	bool remove_old = false;
	int ret, err;

	o.ifindex = (int)if_nametoindex(o.ifname);
	if (!o.ifindex)
		return fail_input("attach", "unknown interface '%s'", o.ifname);
	err = bpffs_ensure();
	if (err == -EPERM)
		return state_fail_cmd("attach", err, NULL);
	if (err)
		return fail_runtime("attach", err, "cannot prepare %s", SLUICE_PIN_ROOT);
	if (o.group != STATE_NO_GROUP && (ret = share_root()) >= 0)
		return ret;
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
	/* No sluice state (checked above, under the lock): a sluice program there is an orphan. */
	if (o.multiprog && (err = mp_remove_named(o.ifindex, SLUICE_PROG_NAME)) < 0)
		return fail_runtime("attach", err, "cannot clear an interrupted attach of %s",
				    o.ifname);
	ret = EXIT_OK;
	if (!o.multiprog)
		err = attach_direct(&skel, &o, staging, remove_old);
	else if ((err = attach_shared(&skel, &o, staging)))
		fail_runtime("attach", err, "cannot attach to %s through libxdp's dispatcher",
			     o.ifname);
	if (err)
		ret = EXIT_FAILURE_RUNTIME;
	else
		attach_report(&o);
	sluice__destroy(skel);
	return ret;
}

/* A refused or failed attach leaves no pin root it made (the lock is held). */
static int attach_run(struct cli_args *a, struct state *unused)
{
	int ret = attach_locked(a);

	(void)unused;
	if (ret != EXIT_OK)
		state_remove_root();
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
	.caps = CAPS_LOAD,
	.state = USE_LOCK,
	.check = attach_check,
	.run = attach_run,
};
