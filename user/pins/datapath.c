// SPDX-License-Identifier: GPL-2.0
/* Which build of the datapath this kernel runs (datapath.h). */
#include <errno.h>
#include <stdlib.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeletons: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "sluice_compat.skel.h"
#include "pins/cookies.h"
#include "pins/datapath.h"

bool kernel_casts_xdp_ctx(void)
{
	static int known = -1;
	struct btf *vmlinux;

	if (known >= 0)
		return known;
	vmlinux = btf__load_vmlinux_btf();
	known = !libbpf_get_error(vmlinux) &&
		btf__find_by_name_kind(vmlinux, "bpf_cast_to_kern_ctx", BTF_KIND_FUNC) > 0;
	btf__free(vmlinux);
	return known;
}

struct sluice *datapath_open(bool compat)
{
	struct sluice *skel = calloc(1, sizeof(*skel));
	int err;

	if (!skel) {
		errno = ENOMEM;
		return NULL;
	}
	err = sluice__create_skeleton(skel);
	if (!err && compat)
		skel->skeleton->data = sluice_compat__elf_bytes(&skel->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(skel->skeleton, NULL);
	if (err) {
		sluice__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

struct sluice *datapath_open_here(void)
{
	return datapath_open(!kernel_casts_xdp_ctx());
}

struct sluice *sluice_open_here(void)
{
	struct sluice *skel = datapath_open_here();

	if (skel)
		skel->rodata->prove_cookies = syn_cookies_supported();
	return skel;
}
