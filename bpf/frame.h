/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The frame's length, fragments of a multi-buffer frame included: what
 * the counters' bytes, byte rates and --length read.
 *
 * bpf_xdp_get_buff_len() gives it, but as a call into the kernel: with
 * return-thunk mitigations (AMD's SRSO "safe RET") each return from the
 * kernel is mispredicted, about 7 ns a packet on the machines of
 * docs/benchmarks.md, an eighth of a refused packet's program time. A frame
 * without fragments is all in its linear part, and the kernel's xdp_buff
 * says which it is: bpf_cast_to_kern_ctx() (Linux 6.2, inlined by the
 * verifier) reads its flags, and only a multi-buffer frame calls the
 * helper. Linux 6.1 has no such kfunc, and refuses a program that names
 * one even where it cannot run, so the datapath is built twice (Makefile):
 * SLUICE_FRAME_LEN_HELPER builds the one that always calls the helper, and
 * user/pins/datapath.c loads the build this kernel can run.
 */
#ifndef SLUICE_BPF_FRAME_H
#define SLUICE_BPF_FRAME_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef SLUICE_FRAME_LEN_HELPER
#include <bpf/bpf_core_read.h>

/* The kernel's own types, their fields placed by CO-RE from its BTF. */
struct xdp_buff {
	__u32 flags;
} __attribute__((preserve_access_index));

enum xdp_buff_flags {
	XDP_FLAGS_HAS_FRAGS = 1,
};

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;
#endif

static __always_inline __u64 frame_len(struct xdp_md *ctx)
{
#ifndef SLUICE_FRAME_LEN_HELPER
	const struct xdp_buff *xdp = bpf_cast_to_kern_ctx(ctx);

	if (!(xdp->flags & bpf_core_enum_value(enum xdp_buff_flags, XDP_FLAGS_HAS_FRAGS)))
		return (__u64)ctx->data_end - ctx->data;
#endif
	return bpf_xdp_get_buff_len(ctx);
}

#endif /* SLUICE_BPF_FRAME_H */
