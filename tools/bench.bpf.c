// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for the microbenchmark (build/sluice-bench), never attached:
 * the bare XDP_DROP floor, and a front end that gives every run a new IPv4
 * source before tail-calling the program under test.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>

/* Sources cycle over base .. base + source_count - 1 (host byte order). */
const volatile __u32 source_base = 0x0a000000;
const volatile __u32 source_count = 100000;

__u32 next_source;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} target SEC(".maps");

/* frags-aware like sluice_xdp: tail calls need both to agree. */
SEC("xdp.frags")
int bare_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

SEC("xdp.frags")
int rotate_source(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	__u32 n;

	if ((void *)(iph + 1) > end)
		return XDP_ABORTED;
	/* test_run repeats on one CPU, so a plain counter is enough. */
	n = next_source++;
	if (next_source >= source_count)
		next_source = 0;
	iph->saddr = __builtin_bswap32(source_base + n);
	bpf_tail_call(ctx, &target, 0);
	return XDP_ABORTED;
}

char LICENSE[] SEC("license") = "GPL";
