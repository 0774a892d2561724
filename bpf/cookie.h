/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Proven sources (--prove): under a spoofed flood, a TCP client shows that
 * it holds its address by answering a SYN-ACK that only it can see.
 *
 * The SYN of a source without a bucket is answered here, from XDP, with a
 * SYN-ACK whose acknowledgment number is a SYN cookie: the kernel's own
 * (bpf_tcp_raw_gen_syncookie_*), over the addresses, the ports and the
 * minute, stored nowhere. That number is on purpose not the client's
 * ISN + 1: a client in SYN-SENT answers such a SYN-ACK with a RST whose
 * sequence number is that acknowledgment number (RFC 9293, 3.10.7.3), and
 * Linux sends its SYN again two jiffies later (tcp_rcv_synsent_state_process).
 * The RST brings the cookie back. When it checks out
 * (bpf_tcp_raw_check_syncookie_*), the RST stands for its SYN: the source
 * gets a bucket from its rule's proven-source budget (meter.h), and the SYN
 * sent again reaches the kernel, which makes the connection as it would
 * without sluice, every TCP option kept.
 *
 * Why not a true SYN-ACK, whose ACK would go on to the kernel: a listener
 * checks a cookie only within two minutes of its own SYN queue overflowing
 * (tcp_synq_no_recent_overflow), so it answers the ACK of a cookie it did
 * not send itself with a RST (docs/operations.md).
 *
 * The RST does not carry the client's ISN, so both ends of the cookie use
 * PROVE_COOKIE_ISN in its place. prove_answer is global, and prove_check
 * runs inside prove.h's global prove_rst: the verifier checks each once,
 * apart from the main program's paths.
 */
#ifndef SLUICE_BPF_COOKIE_H
#define SLUICE_BPF_COOKIE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "parse.h"

#define PROVE_COOKIE_ISN 0

/*
 * Set by the loader to whether this kernel has the cookie helpers (Linux
 * 6.0+ with CONFIG_SYN_COOKIES): at 0 the verifier drops their calls as
 * dead code, so the program loads without them, and --prove is refused.
 */
const volatile __u32 prove_cookies = 1;
/* The most parse_ethernet puts before the IP header. */
#define PROVE_L3_OFF_MAX    ((__u32)(ETH_HLEN + MAX_VLAN_TAGS * sizeof(struct vlan_tag)))
#define PROVE_TTL	    64
#define IPV4_DONT_FRAGMENT  0x4000
#define IPV4_MORE_FRAGMENTS 0x2000

/* The frame's headers, when the TCP header follows the fixed IP header. */
struct prove_frame {
	struct ethhdr *eth;
	void *l3; /* struct iphdr or ipv6hdr, as family says */
	struct tcphdr *th;
	int family; /* 4 or 6 */
};

/*
 * Finds the headers from the offset parse.h found. A packet with IPv4
 * options, IPv6 extension headers or a fragment is not answered (it goes
 * on as without --prove), so a SYN-ACK is always the fixed 40 or 60 bytes.
 */
static __always_inline int prove_frame_of(struct xdp_md *ctx, __u32 l3_off, struct prove_frame *f)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6;
	struct iphdr *ip;

	if (l3_off < ETH_HLEN || l3_off > PROVE_L3_OFF_MAX)
		return -1;
	f->eth = data;
	if ((void *)(f->eth + 1) > end)
		return -1;
	f->l3 = data + (l3_off & 0x1f);
	ip = f->l3;
	if ((void *)(ip + 1) > end)
		return -1;
	if (ip->version == 4) {
		f->th = (void *)(ip + 1);
		if ((void *)(f->th + 1) > end || ip->ihl != 5 || ip->protocol != IPPROTO_TCP ||
		    ip->frag_off & bpf_htons(IPV4_MORE_FRAGMENTS | IPV4_FRAG_OFFSET))
			return -1;
		f->family = 4;
		return 0;
	}
	ip6 = f->l3;
	f->th = (void *)(ip6 + 1);
	if ((void *)(f->th + 1) > end || ip6->version != 6 || ip6->nexthdr != IPPROTO_TCP)
		return -1;
	f->family = 6;
	return 0;
}

/* The TCP header a cookie is computed over: the ports, and the fixed ISN. */
static __always_inline void prove_cookie_syn(struct tcphdr *syn, const struct tcphdr *th)
{
	__builtin_memset(syn, 0, sizeof(*syn));
	syn->source = th->source;
	syn->dest = th->dest;
	syn->seq = bpf_htonl(PROVE_COOKIE_ISN);
	syn->doff = sizeof(*syn) / 4;
	syn->syn = 1;
}

static __always_inline __u16 csum_fold(__s64 sum)
{
	__u64 s = (__u64)sum;

	s = (s & 0xffffffff) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (__u16)~s;
}

struct pseudo_v4 {
	__be32 saddr;
	__be32 daddr;
	__u8 zero;
	__u8 proto;
	__be16 len;
};

struct pseudo_v6 {
	struct in6_addr saddr;
	struct in6_addr daddr;
	__be32 len;
	__u8 zero[3];
	__u8 proto;
};

/* The checksum of the 20-byte TCP header th, over its pseudo-header ph of len bytes. */
static __always_inline void prove_tcp_csum(struct tcphdr *th, void *ph, int len)
{
	__s64 sum = bpf_csum_diff(NULL, 0, (__be32 *)ph, len, 0);

	th->check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)th, sizeof(*th), sum));
}

/* The 20-byte SYN-ACK in place of the SYN's TCP header, ports swapped, checksum left 0. */
static __always_inline void prove_tcp_synack(struct tcphdr *th, __u32 cookie)
{
	__be16 port = th->source;

	th->source = th->dest;
	th->dest = port;
	th->seq = bpf_htonl(cookie);
	th->ack_seq = bpf_htonl(cookie);
	/* doff 5, SYN and ACK; every other flag clear. */
	*(__be16 *)((__u8 *)th + 12) = bpf_htons(0x5000 | 0x0012);
	th->window = bpf_htons(65535);
	th->check = 0;
	th->urg_ptr = 0;
}

static __always_inline int prove_answer_v4(struct prove_frame *f)
{
	struct iphdr *ip = f->l3;
	struct tcphdr *th = f->th;
	struct pseudo_v4 ph;
	struct tcphdr syn;
	__be32 addr;
	__s64 cookie;

	prove_cookie_syn(&syn, th);
	cookie = bpf_tcp_raw_gen_syncookie_ipv4(ip, &syn, sizeof(syn));
	/* The client would take ISN + 1 as its handshake's answer: leave it to the budget. */
	if (cookie < 0 || (__u32)cookie == bpf_ntohl(th->seq) + 1)
		return -1;
	addr = ip->saddr;
	ip->saddr = ip->daddr;
	ip->daddr = addr;
	ip->tos = 0;
	ip->tot_len = bpf_htons(sizeof(*ip) + sizeof(*th));
	ip->id = 0;
	ip->frag_off = bpf_htons(IPV4_DONT_FRAGMENT);
	ip->ttl = PROVE_TTL;
	ip->check = 0;
	ip->check = csum_fold(bpf_csum_diff(NULL, 0, (__be32 *)ip, sizeof(*ip), 0));
	prove_tcp_synack(th, (__u32)cookie);
	ph.saddr = ip->saddr;
	ph.daddr = ip->daddr;
	ph.zero = 0;
	ph.proto = IPPROTO_TCP;
	ph.len = bpf_htons(sizeof(*th));
	prove_tcp_csum(th, &ph, sizeof(ph));
	return 0;
}

static __always_inline int prove_answer_v6(struct prove_frame *f)
{
	struct ipv6hdr *ip6 = f->l3;
	struct tcphdr *th = f->th;
	struct in6_addr addr;
	struct pseudo_v6 ph;
	struct tcphdr syn;
	__s64 cookie;

	prove_cookie_syn(&syn, th);
	cookie = bpf_tcp_raw_gen_syncookie_ipv6(ip6, &syn, sizeof(syn));
	if (cookie < 0 || (__u32)cookie == bpf_ntohl(th->seq) + 1)
		return -1;
	addr = ip6->saddr;
	ip6->saddr = ip6->daddr;
	ip6->daddr = addr;
	ip6->priority = 0;
	__builtin_memset(ip6->flow_lbl, 0, sizeof(ip6->flow_lbl));
	ip6->payload_len = bpf_htons(sizeof(*th));
	ip6->hop_limit = PROVE_TTL;
	prove_tcp_synack(th, (__u32)cookie);
	ph.saddr = ip6->saddr;
	ph.daddr = ip6->daddr;
	ph.len = bpf_htonl(sizeof(*th));
	ph.zero[0] = 0;
	ph.zero[1] = 0;
	ph.zero[2] = 0;
	ph.proto = IPPROTO_TCP;
	prove_tcp_csum(th, &ph, sizeof(ph));
	return 0;
}

/*
 * Turns the SYN at l3_off into its cookie SYN-ACK, back out of the
 * port it came in by (VLAN tags kept, MAC addresses swapped), trimmed of
 * the SYN's options and payload. 0, or -1 with the frame untouched.
 */
__attribute__((noinline)) int prove_answer(struct xdp_md *ctx, __u32 l3_off)
{
	struct prove_frame f;
	__u8 mac[ETH_ALEN];
	void *end;
	int err;

	if (!prove_cookies || prove_frame_of(ctx, l3_off, &f))
		return -1;
	if (f.family == 4)
		err = prove_answer_v4(&f);
	else
		err = prove_answer_v6(&f);
	if (err)
		return -1;
	__builtin_memcpy(mac, f.eth->h_source, ETH_ALEN);
	__builtin_memcpy(f.eth->h_source, f.eth->h_dest, ETH_ALEN);
	__builtin_memcpy(f.eth->h_dest, mac, ETH_ALEN);
	end = (void *)(long)ctx->data_end;
	/* Drop what followed the 20-byte header: the SYN's options and any data. */
	if ((void *)(f.th + 1) < end)
		bpf_xdp_adjust_tail(ctx, -(int)(end - (void *)(f.th + 1)));
	return 0;
}

/* Could prove_answer answer the SYN at l3_off? 1 or 0. */
static __always_inline int prove_answerable(struct xdp_md *ctx, __u32 l3_off)
{
	struct prove_frame f;

	return !prove_frame_of(ctx, l3_off, &f);
}

/* Does the kernel take cookie as one of its own for the frame's addresses and ports? */
static __always_inline int cookie_valid(const struct prove_frame *f, __u32 cookie)
{
	struct tcphdr ack;

	/* The ACK it would have been: cookie + 1 acknowledged, ISN + 1 its sequence. */
	prove_cookie_syn(&ack, f->th);
	ack.syn = 0;
	ack.ack = 1;
	ack.seq = bpf_htonl(PROVE_COOKIE_ISN + 1);
	ack.ack_seq = bpf_htonl(cookie + 1);
	if (f->family == 4)
		return !bpf_tcp_raw_check_syncookie_ipv4(f->l3, &ack);
	return !bpf_tcp_raw_check_syncookie_ipv6(f->l3, &ack);
}

/*
 * Is the TCP segment at l3_off a RST (no SYN, no ACK) carrying the cookie
 * its SYN-ACK had? 1 if so, -1 for a RST that does not, 0 for any other.
 *
 * The kernel's check takes a cookie of any of its four MSS classes, which
 * are its low bits counted up: the one sent (class 0, as the cookie's SYN
 * has no MSS option) plus 1, 2 or 3 would do too. Only the cookie sent
 * proves: valid, and the number below it is not.
 */
static __always_inline int prove_check(struct xdp_md *ctx, __u32 l3_off)
{
	struct prove_frame f;
	__u32 seq;

	if (!prove_cookies || prove_frame_of(ctx, l3_off, &f))
		return 0;
	if (!f.th->rst || f.th->syn || f.th->ack)
		return 0;
	seq = bpf_ntohl(f.th->seq);
	return cookie_valid(&f, seq) && !cookie_valid(&f, seq - 1) ? 1 : -1;
}

#endif /* SLUICE_BPF_COOKIE_H */
