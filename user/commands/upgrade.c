// SPDX-License-Identifier: GPL-2.0
/* sluice upgrade: swap in this build's program, keeping every bucket and setting. */
#include <errno.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "base/errors.h"
#include "commands/commands.h"
#include "maps/policy_maps.h"
#include "pins/datapath.h"

/* The pinned state must have this build's layout; say what to do if not. */
static int check_layout(struct state *st)
{
	struct sluice_config cfg;
	int err = config_read(&st->maps, &cfg);

	if (err == -EPROTO || (!err && cfg.layout_version != SLUICE_LAYOUT_VERSION))
		return fail_state("upgrade", -EPROTO, st->ifname, NULL);
	if (err)
		return fail_runtime("upgrade", err, "cannot read the configuration of %s",
				    st->ifname);
	if (st->link_fd < 0)
		return fail_input("upgrade", "%s has no pinned link (stale state: detach it)",
				  st->ifname);
	return EXIT_OK;
}

static int upgrade_swap(struct state *st)
{
	unsigned int ifindex, old_id, new_id;
	struct sluice *skel;
	int err;

	skel = sluice_open_here();
	if (!skel)
		return fail_runtime("upgrade", -errno, "cannot open the XDP program");
	err = state_reuse(skel->obj, st);
	if (!err)
		err = sluice__load(skel);
	if (err) {
		sluice__destroy(skel);
		return fail_runtime("upgrade", err,
				    "cannot load the new program on the pinned maps");
	}
	old_id = link_prog_id(st->link_fd, &ifindex);
	if (bpf_link_update(st->link_fd, bpf_program__fd(skel->progs.sluice_xdp), NULL)) {
		err = -errno;
		sluice__destroy(skel);
		return fail_runtime("upgrade", err, "cannot swap the program on %s", st->ifname);
	}
	new_id = link_prog_id(st->link_fd, &ifindex);
	sluice__destroy(skel);
	/* The program runs: only the record of the change is missing if this fails. */
	err = config_republish(&st->maps);
	if (err)
		return fail_runtime(
			"upgrade", err,
			"%s runs program %u now, but its generation could not be raised",
			st->ifname, new_id);
	output_say("sluice: upgraded %s: program %u replaced by %u, buckets and policy kept\n",
		   st->ifname, old_id, new_id);
	return EXIT_OK;
}

/*
 * libxdp replaces one program of a dispatcher only by detaching it and
 * attaching another: for a moment sluice would be missing (packets go
 * unlimited) or there twice (metered twice). Refused, and said why.
 */
static int check_direct(struct state *st)
{
	if (!state_multiprog(st))
		return EXIT_OK;
	return fail_input("upgrade",
			  "%s is attached through libxdp's dispatcher (--multiprog), which cannot "
			  "swap one program in one step: save the policy ('sluice show %s'), "
			  "then detach, attach --multiprog and apply it (buckets start afresh)",
			  st->ifname, st->ifname);
}

static int upgrade_run(struct cli_args *a, struct state *st)
{
	(void)a;
	return check_direct(st) ?: check_layout(st) ?: upgrade_swap(st);
}

const struct command cmd_upgrade = {
	.id = CMD_UPGRADE,
	.name = "upgrade",
	.summary = "swap in this build's program, keeping all state",
	.synopsis = "IFACE",
	.description =
		"Replace the XDP program on IFACE with the one built into this sluice, in one\n"
		"step (the pinned link is updated atomically). The new program reuses the\n"
		"pinned maps: no bucket resets, no setting changes, and no packet goes\n"
		"unfiltered. State pinned by a sluice with another layout is refused.",
	.iface = IFACE_REQUIRED,
	.caps = CAPS_LOAD,
	.state = USE_CHANGE,
	.run = upgrade_run,
};
