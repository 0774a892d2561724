// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood packet generator, XDP side.
 *
 * Run through BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel
 * hands this program copies of a template frame built by userspace (IPv4 or
 * IPv6, UDP or TCP SYN; see flood_layout.h), and every frame for which it
 * returns XDP_TX is transmitted out of the device named by the test run's
 * ingress_ifindex.
 *
 * Within one test run, live-frame pages are recycled without restoring their
 * contents, so a frame may still hold what the program wrote into an earlier
 * frame, and a frame of the second source set may land where a main-set
 * frame was.  Every field that varies (source address, checksums) is
 * therefore written in full, never adjusted in place. A receiver may also
 * have rewritten the page (sluice's --prove sends a SYN back in the same
 * page as its SYN-ACK), so the headers before the tag are written again
 * from the template's copy in `headers` each time.
 *
 * Userspace also attaches this program to the sending device in generic mode
 * while it runs (see keep_in_dispatcher() in flood.c), so it may see frames
 * the device really received.  Those lack the template's tag and are passed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "flood_layout.h"

/* Set by userspace before load; the verifier prunes the layouts not chosen. */
const volatile __u8 ipv6;
const volatile __u8 tcp;
const volatile __u32 src_base; /* IPv4: first source address, host order */
const volatile __u64 src6_hi;  /* IPv6: first source, upper and lower */
const volatile __u64 src6_lo;  /*       64 bits, host order */
const volatile __u32 n_sources = 1;
const volatile __u32 n_prefixes = 1; /* IPv6: /64s the sources are spread over */
/*
 * The second set, mixed in: frames 0, K, 2K, ... of the run are its, where
 * K is mix_every (0: no second set).  Its addresses count up from the first
 * one, for IPv6 in the host part only.
 */
const volatile __u32 mix_every;
const volatile __u32 mix_base; /* IPv4, host order */
const volatile __u64 mix6_hi;  /* IPv6, host order */
const volatile __u64 mix6_lo;
const volatile __u32 n_mix = 1;
/*
 * One's complement sums, folded to 16 bits, of what each checksum covers
 * with the source address and checksum fields zeroed: the IPv4 header, and
 * the L4 pseudo-header plus datagram or segment.
 */
const volatile __u32 ip_csum_base;
const volatile __u32 l4_csum_base;
/* Random value at FLOOD_TAG_OFF of the template. */
const volatile __u64 frame_tag;
/* The template's bytes before the tag: Ethernet, IP and L4 headers. */
const volatile __u8 headers[FLOOD_TAG_OFF(1, 1)];

/*
 * Frames handed to the device so far, how many of them were the second
 * set's, and the next source of each set: an index into the N main sources
 * and, for IPv6, its /64 and its host within the /64; an index into the
 * second set.  Sources cycle round-robin across test runs too. Userspace
 * runs the program from one thread only, hence no atomics.
 */
__u64 sent;
__u64 mixed;
__u32 src_idx;
__u32 pfx_idx;
__u32 host_idx;
__u32 mix_idx;

static __always_inline __u16 csum_finish(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The L4 checksum; UDP sends a computed zero as all ones, zero meaning none. */
static __always_inline __u16 l4_csum(__u32 sum, int is_tcp)
{
	__u16 csum = csum_finish(sum);

	return !is_tcp && csum == 0 ? 0xffff : csum;
}

/* Sum of a big-endian value's 16-bit words as they lie in memory. */
static __always_inline __u32 words_sum64(__u64 be)
{
	return (be & 0xffff) + ((be >> 16) & 0xffff) + ((be >> 32) & 0xffff) + (be >> 48);
}

/* IPv6 sources walk the /64s first, then the hosts within them. */
static __always_inline void next_source(void)
{
	if (++src_idx >= n_sources) {
		src_idx = 0;
		pfx_idx = 0;
		host_idx = 0;
		return;
	}
	if (++pfx_idx >= n_prefixes) {
		pfx_idx = 0;
		host_idx++;
	}
}

/* The second set cycles on its own; the main set's indices stay put. */
static __always_inline void next_mixed(void)
{
	if (++mix_idx >= n_mix)
		mix_idx = 0;
	mixed++;
}

/* Whether the frame about to go out is the second set's. */
static __always_inline int mixed_turn(void)
{
	return mix_every && sent % mix_every == 0;
}

/*
 * The template's first len bytes (even) into the frame, read through
 * volatile: a plain copy of a const array is folded to its zero initializer.
 */
static __always_inline void put_headers(void *data, __u32 len)
{
	const volatile __u16 *from = (const volatile __u16 *)headers;
	__u16 *to = data;
	__u32 i;

#pragma unroll
	for (i = 0; i < len / 2; i++)
		to[i] = from[i];
}

/* The frame came from our template, and holds everything we write. */
static __always_inline int ours(void *data, void *end, __u32 tag_off)
{
	__u64 *tag = data + tag_off;

	return (void *)(tag + 1) <= end && *tag == frame_tag;
}

static __always_inline int stamp_ipv4(void *data, void *end, int is_tcp, int mix)
{
	struct iphdr *iph = data + FLOOD_ETH_LEN;
	__u16 *l4_check = data + FLOOD_CSUM_OFF(0, is_tcp);
	__be32 saddr;
	__u32 sum;

	if (!ours(data, end, FLOOD_TAG_OFF(0, is_tcp)))
		return XDP_PASS;
	put_headers(data, FLOOD_TAG_OFF(0, is_tcp));
	saddr = bpf_htonl(mix ? mix_base + mix_idx : src_base + src_idx);
	/* Adding the address as two native 16-bit halves is byte-order safe. */
	sum = (saddr & 0xffff) + (saddr >> 16);
	iph->saddr = saddr;
	iph->check = csum_finish(ip_csum_base + sum);
	*l4_check = l4_csum(l4_csum_base + sum, is_tcp);
	return XDP_TX;
}

static __always_inline int stamp_ipv6(void *data, void *end, int is_tcp, int mix)
{
	struct ipv6hdr *ip6h = data + FLOOD_ETH_LEN;
	__u16 *l4_check = data + FLOOD_CSUM_OFF(1, is_tcp);
	__u64 hi, lo;

	if (!ours(data, end, FLOOD_TAG_OFF(1, is_tcp)))
		return XDP_PASS;
	put_headers(data, FLOOD_TAG_OFF(1, is_tcp));
	hi = bpf_cpu_to_be64(mix ? mix6_hi : src6_hi + pfx_idx);
	lo = bpf_cpu_to_be64(mix ? mix6_lo + mix_idx : src6_lo + host_idx);
	__builtin_memcpy(&ip6h->saddr.in6_u.u6_addr8[0], &hi, sizeof(hi));
	__builtin_memcpy(&ip6h->saddr.in6_u.u6_addr8[8], &lo, sizeof(lo));
	*l4_check = l4_csum(l4_csum_base + words_sum64(hi) + words_sum64(lo), is_tcp);
	return XDP_TX;
}

SEC("xdp")
int xdp_flood(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	int mix = mixed_turn();
	int act;

	if (ipv6)
		act = tcp ? stamp_ipv6(data, data_end, 1, mix) : stamp_ipv6(data, data_end, 0, mix);
	else
		act = tcp ? stamp_ipv4(data, data_end, 1, mix) : stamp_ipv4(data, data_end, 0, mix);
	if (act == XDP_TX) {
		if (mix)
			next_mixed();
		else
			next_source();
		sent++;
	}
	return act;
}

char LICENSE[] SEC("license") = "GPL";
