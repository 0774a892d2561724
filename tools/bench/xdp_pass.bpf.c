// SPDX-License-Identifier: GPL-2.0
/*
 * Passes every frame. The tests attach it to the far end of a veth pair:
 * frames sent back with XDP_TX (sluice's cookie SYN-ACKs) are delivered
 * into a veth only when its peer runs an XDP program.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
