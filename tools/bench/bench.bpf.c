// SPDX-License-Identifier: GPL-2.0
/*
 * Programs for the microbenchmark (build/sluice-bench), never attached:
 * the bare XDP_DROP and XDP_TX floors, and front ends that give every run a
 * new IPv4 source before tail-calling the program under test: the second
 * writes the whole SYN frame again first, as a program that answers it
 * rewrites it in place (and trims it) for the next run.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <bpf/bpf_helpers.h>

/* Sources cycle over base .. base + source_count - 1 (host byte order). */
const volatile __u32 source_base = 0x0a000000;
const volatile __u32 source_count = 100000;

__u32 next_source;

/* rotate_syn's frame, as userspace built it (an even length up to 128 bytes). */
#define SYN_FRAME_MAX 128
const volatile __u8 syn_frame[SYN_FRAME_MAX];
const volatile __u32 syn_len;

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

/* The frame's source is the next of source_count, then on to the target. */
static __always_inline int next_source_then_target(struct xdp_md *ctx)
{
	struct iphdr *iph = (void *)(long)ctx->data + sizeof(struct ethhdr);
	__u32 n;

	if ((void *)(iph + 1) > (void *)(long)ctx->data_end)
		return XDP_ABORTED;
	/* test_run repeats on one CPU, so a plain counter is enough. */
	n = next_source++;
	if (next_source >= source_count)
		next_source = 0;
	iph->saddr = __builtin_bswap32(source_base + n);
	bpf_tail_call(ctx, &target, 0);
	return XDP_ABORTED;
}

SEC("xdp.frags")
int rotate_source(struct xdp_md *ctx)
{
	return next_source_then_target(ctx);
}

SEC("xdp.frags")
int bare_tx(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_TX;
}

/* The frame back to syn_frame, read through volatile (a const array would fold to zeros). */
static __always_inline int syn_restore(struct xdp_md *ctx)
{
	const volatile __u16 *from = (const volatile __u16 *)syn_frame;
	void *data, *end;
	__u16 *to;
	__u32 i, len = syn_len & (SYN_FRAME_MAX - 2);
	__u64 have;

	have = bpf_xdp_get_buff_len(ctx);
	if (have < len && bpf_xdp_adjust_tail(ctx, (int)(len - have)))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	to = data;
	for (i = 0; i < SYN_FRAME_MAX / 2; i++) {
		if (i * 2 >= len || (void *)(to + i + 1) > end)
			break;
		to[i] = from[i];
	}
	return 0;
}

SEC("xdp.frags")
int rotate_syn(struct xdp_md *ctx)
{
	if (syn_restore(ctx))
		return XDP_ABORTED;
	return next_source_then_target(ctx);
}

char LICENSE[] SEC("license") = "GPL";
