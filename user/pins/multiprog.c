// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "pins/multiprog.h"

/* libxdp's warnings would add lines to sluice's one: the caller says what failed. */
static int mp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

static void mp_quiet(void)
{
	libxdp_set_print(mp_print);
}

static enum xdp_attach_mode mp_mode(uint32_t xdp_flags)
{
	if (xdp_flags & XDP_FLAGS_SKB_MODE)
		return XDP_MODE_SKB;
	if (xdp_flags & XDP_FLAGS_DRV_MODE)
		return XDP_MODE_NATIVE;
	return XDP_MODE_UNSPEC;
}

static int probe_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

/*
 * libxdp's own check, on libxdp's own dispatcher object: can an extension
 * program (freplace) replace one of its functions? libxdp would otherwise
 * fall back to attaching a lone program without a dispatcher, where nothing
 * can share the interface. Loads two programs and attaches nothing.
 */
static int probe(void)
{
	struct xdp_program *target, *ext;
	struct bpf_program *pass;
	int err;

	mp_quiet();
	target = xdp_program__find_file("xdp-dispatcher.o", NULL, NULL);
	err = (int)libxdp_get_error(target);
	if (err)
		return err;
	ext = xdp_program__find_file("xdp-dispatcher.o", NULL, NULL);
	err = (int)libxdp_get_error(ext);
	if (err) {
		xdp_program__close(target);
		return err;
	}
	err = bpf_object__load(xdp_program__bpf_obj(target));
	pass = bpf_object__find_program_by_name(xdp_program__bpf_obj(ext), "xdp_pass");
	if (!err && !pass)
		err = -ENOENT;
	if (!err) {
		bpf_object__for_each_program(pass, xdp_program__bpf_obj(ext))
			bpf_program__set_autoload(pass, false);
		pass = bpf_object__find_program_by_name(xdp_program__bpf_obj(ext), "xdp_pass");
		bpf_program__set_autoload(pass, true);
		bpf_program__set_type(pass, BPF_PROG_TYPE_EXT);
		bpf_program__set_expected_attach_type(pass, 0);
		err = bpf_program__set_attach_target(
			pass,
			bpf_program__fd(bpf_object__find_program_by_name(
				xdp_program__bpf_obj(target), "xdp_dispatcher")),
			"compat_test");
	}
	if (!err)
		err = bpf_object__load(xdp_program__bpf_obj(ext));
	xdp_program__close(ext);
	xdp_program__close(target);
	return err;
}

/* A refusal is the answer, not a failure to report: libbpf stays quiet meanwhile. */
int mp_supported(void)
{
	libbpf_print_fn_t old = libbpf_set_print(probe_print);
	int err;

	if (getenv("SLUICE_DEBUG"))
		libbpf_set_print(old);
	err = probe();
	libbpf_set_print(old);
	return err;
}

/*
 * Where the kernel takes no extension program, libxdp attaches a lone
 * program without a dispatcher instead of failing: taken off again (only
 * if it is still the one there), as nothing could share the interface.
 */
static int mp_check_shared(const struct xdp_program *prog, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = xdp_program__fd(prog));

	if (mp_runs(ifindex, xdp_program__id(prog)) == 1)
		return 0;
	bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &opts);
	return -EOPNOTSUPP;
}

int mp_attach(struct bpf_object *obj, const char *prog_name, int ifindex, uint32_t xdp_flags)
{
	LIBBPF_OPTS(xdp_program_opts, opts, .obj = obj, .prog_name = prog_name);
	struct xdp_program *prog;
	int err;

	mp_quiet();
	prog = xdp_program__create(&opts);
	err = (int)libxdp_get_error(prog);
	if (err)
		return err;
	err = xdp_program__set_run_prio(prog, MP_RUN_PRIO);
	if (!err)
		err = xdp_program__set_chain_call_enabled(prog, XDP_PASS, true);
	if (!err)
		err = xdp_program__set_chain_call_enabled(prog, XDP_DROP, false);
	/* Loads the object (as an extension of the new dispatcher) and swaps it in. */
	if (!err)
		err = xdp_program__attach(prog, ifindex, mp_mode(xdp_flags), 0);
	if (!err)
		err = mp_check_shared(prog, ifindex);
	/* The object is the caller's: closing prog leaves it and its fds alone. */
	xdp_program__close(prog);
	return err;
}

int mp_detach(int prog_fd, int ifindex)
{
	struct xdp_program *prog;
	int err;

	mp_quiet();
	/* No dispatcher, nothing to take out; one that cannot be read is an error. */
	err = mp_runs(ifindex, 0);
	if (err <= 0)
		return err;
	prog = xdp_program__from_fd(prog_fd);
	err = (int)libxdp_get_error(prog);
	if (err)
		return err;
	if (mp_runs(ifindex, xdp_program__id(prog)) > 0)
		err = xdp_program__detach(prog, ifindex, XDP_MODE_UNSPEC, 0);
	xdp_program__close(prog);
	return err;
}

static void mp_fill(struct mp_prog *p, const struct xdp_program *prog, bool component)
{
	snprintf(p->name, sizeof(p->name), "%s", xdp_program__name(prog) ?: "");
	p->id = xdp_program__id(prog);
	p->prio = component ? xdp_program__run_prio(prog) : 0;
}

unsigned int xdp_prog_on(int ifindex, char *name, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, query);
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	unsigned int id;
	int fd;

	if (bpf_xdp_query(ifindex, 0, &query))
		return 0;
	id = query.prog_id ?: query.drv_prog_id ?: query.skb_prog_id ?: query.hw_prog_id;
	snprintf(name, len, "?");
	fd = id ? bpf_prog_get_fd_by_id(id) : -1;
	if (fd < 0)
		return id;
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len) && info.name[0])
		snprintf(name, len, "%s", info.name);
	close(fd);
	return id;
}

int mp_programs(int ifindex, bool *dispatcher, struct mp_prog *progs, int max)
{
	struct xdp_multiprog *mp;
	struct xdp_program *p = NULL;
	int n = 0, err;

	mp_quiet();
	*dispatcher = false;
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	err = (int)libxdp_get_error(mp);
	if (err == -ENOENT || (!err && !mp))
		return 0;
	if (err)
		return err;
	if (xdp_multiprog__is_legacy(mp)) {
		if (max > 0 && xdp_multiprog__main_prog(mp))
			mp_fill(&progs[n++], xdp_multiprog__main_prog(mp), false);
	} else {
		*dispatcher = true;
		while ((p = xdp_multiprog__next_prog(p, mp)) && n < max)
			mp_fill(&progs[n++], p, true);
	}
	xdp_multiprog__close(mp);
	return n;
}

/* With prog_id 0: 1 when ifindex runs a dispatcher at all. */
int mp_runs(int ifindex, unsigned int prog_id)
{
	struct mp_prog progs[16];
	bool dispatcher;
	int i, n;

	n = mp_programs(ifindex, &dispatcher, progs, 16);
	if (n < 0)
		return n;
	if (!dispatcher)
		return 0;
	for (i = 0; i < n; i++)
		if (!prog_id || progs[i].id == prog_id)
			return 1;
	return !prog_id;
}

int mp_ifindex_of(unsigned int prog_id, int first)
{
	struct if_nameindex *all, *i;
	int found = 0;

	if (first > 0 && mp_runs(first, prog_id) == 1)
		return first;
	all = prog_id ? if_nameindex() : NULL;
	if (!all)
		return 0;
	for (i = all; i->if_index && !found; i++)
		if (mp_runs((int)i->if_index, prog_id) == 1)
			found = (int)i->if_index;
	if_freenameindex(all);
	return found;
}

int mp_remove_named(int ifindex, const char *name)
{
	struct mp_prog progs[16];
	bool dispatcher;
	int i, n, fd, err, removed = 0;

	n = mp_programs(ifindex, &dispatcher, progs, 16);
	if (n <= 0 || !dispatcher)
		return n < 0 ? n : 0;
	for (i = 0; i < n; i++) {
		if (strcmp(progs[i].name, name))
			continue;
		fd = bpf_prog_get_fd_by_id(progs[i].id);
		if (fd < 0)
			return -errno;
		err = mp_detach(fd, ifindex);
		close(fd);
		if (err)
			return err;
		removed++;
	}
	return removed;
}
