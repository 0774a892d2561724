/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cursor-style header parsing. Every access is checked against data_end
 * before it is made; the verifier insists, and so do hostile packets.
 * Plain C with no BPF helpers: the fuzz target (tests/fuzz/) builds this
 * same file natively under ASan and UBSan.
 */
#ifndef SLUICE_BPF_PARSE_H
#define SLUICE_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/in.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include "sluice.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define MAX_VLAN_TAGS 2
/* IPv6 extension headers walked to find the L4 header. */
#define MAX_IPV6_EXT_HEADERS 6
/* The fragment offset bits of iphdr.frag_off (net/ip.h is not UAPI). */
#define IPV4_FRAG_OFFSET 0x1fff

enum parse_result {
	PARSE_IP,
	PARSE_NON_IP,
	PARSE_MALFORMED,
};

struct cursor {
	void *pos;
	void *end;
};

struct vlan_tag {
	__be16 tci;
	__be16 inner_proto;
};

/* The part of a packet the limiter keys and classifies on. */
struct packet {
	__u32 addr[4]; /* source, network byte order */
	__u8 family;   /* enum sluice_family */
	__u8 proto;    /* L4 protocol, 0 when there is no L4 header to see */
	__u8 tcp_syn;  /* TCP SYN without ACK */
	__u8 prove;    /* PKT_*: what --prove makes of it (prove.h); from parse, PKT_TCP_RST */
	__u16 dport;   /* host byte order, 0 without a TCP or UDP header */
	__u8 l3_off;   /* offset of the IP header, for marking: 22 at most (two tags) */
	/* A match class chose its rule: hot.h may not remember it (classify.h). */
	__u8 class_decided : 1;
	/* PKT_OVERFLOW_*: what the overflow bucket made of it, counted with its verdict (stats.h).
	 */
	__u8 overflow : 2;
};

/* struct packet.overflow: the packet's source was refused a bucket, and the overflow bucket... */
enum pkt_overflow {
	PKT_OVERFLOW_NONE,    /* (not asked) */
	PKT_OVERFLOW_PASSED,  /* passed it */
	PKT_OVERFLOW_DROPPED, /* refused it */
};

/*
 * 24 bytes, as before the match classes: the program's stack has no room
 * for more on Linux 6.1 (tests/build/bpf_linux61.py), so the L4 header's
 * offset is found again where a match class needs it (classify.h).
 */
_Static_assert(sizeof(struct packet) == 24, "struct packet stays 24 bytes");

/*
 * struct packet.prove as parse leaves it: a TCP RST without SYN or ACK,
 * which may bring a cookie back (prove.h); else 0.
 */
#define PKT_TCP_RST (1U << 3)
/* The TCP flags byte (RFC 9293): what PKT_TCP_RST looks at. */
#define TCP_FLAGS_OFF		  13
#define TCP_FLAG_BITS_SYN_RST_ACK 0x16
#define TCP_FLAG_BIT_RST	  0x04

/*
 * PKT_TCP_RST for a RST without SYN or ACK, else 0, without a branch: BPF
 * has no conditional set, and a branch here doubles what the verifier
 * walks after it. Of the masked flags, only RST alone makes x 0, and x - 1
 * then wraps to set the top bit.
 */
static __always_inline __u8 tcp_rst_only(const struct tcphdr *tcp)
{
	__u32 x =
		(((const __u8 *)tcp)[TCP_FLAGS_OFF] & TCP_FLAG_BITS_SYN_RST_ACK) ^ TCP_FLAG_BIT_RST;

	return (__u8)(((x - 1) >> 31) * PKT_TCP_RST);
}

struct ipv6_ext {
	__u8 nexthdr;
	__u8 hdrlen; /* in 8-byte units, not counting the first 8 */
};

struct ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset in the top 13 bits */
	__be32 id;
};

static __always_inline int proto_is_vlan(__be16 proto)
{
	return proto == bpf_htons(ETH_P_8021Q) || proto == bpf_htons(ETH_P_8021AD);
}

/* Ethernet plus up to two VLAN tags; leaves *proto as the inner EtherType. */
static __always_inline int parse_ethernet(struct cursor *c, __be16 *proto)
{
	struct ethhdr *eth = c->pos;
	struct vlan_tag *tag;
	int i;

	if ((void *)(eth + 1) > c->end)
		return PARSE_MALFORMED;
	c->pos = eth + 1;
	*proto = eth->h_proto;

#pragma unroll
	for (i = 0; i < MAX_VLAN_TAGS; i++) {
		if (!proto_is_vlan(*proto))
			break;
		tag = c->pos;
		if ((void *)(tag + 1) > c->end)
			return PARSE_MALFORMED;
		c->pos = tag + 1;
		*proto = tag->inner_proto;
	}
	return PARSE_IP;
}

static __always_inline int parse_ipv4(struct cursor *c, struct packet *pkt)
{
	struct iphdr *iph = c->pos;
	__u32 hdr_len;

	if ((void *)(iph + 1) > c->end)
		return PARSE_MALFORMED;
	if (iph->version != 4 || iph->ihl < 5)
		return PARSE_MALFORMED;
	hdr_len = iph->ihl * 4;
	if (c->pos + hdr_len > c->end || bpf_ntohs(iph->tot_len) < hdr_len)
		return PARSE_MALFORMED;
	c->pos += hdr_len;

	pkt->family = SLUICE_FAMILY_IPV4;
	pkt->addr[0] = iph->saddr;
	pkt->addr[1] = 0;
	pkt->addr[2] = 0;
	pkt->addr[3] = 0;
	/* Later fragments carry no L4 header: they are judged by address only. */
	pkt->proto = iph->frag_off & bpf_htons(IPV4_FRAG_OFFSET) ? 0 : iph->protocol;
	return PARSE_IP;
}

static __always_inline int ipv6_is_extension(__u8 nexthdr)
{
	return nexthdr == IPPROTO_HOPOPTS || nexthdr == IPPROTO_ROUTING ||
	       nexthdr == IPPROTO_DSTOPTS || nexthdr == IPPROTO_FRAGMENT;
}

/*
 * Walks IPv6 extension headers to the L4 header. Returns its protocol, or
 * 0 when there is none to see: a later fragment, a truncated chain, or
 * more than MAX_IPV6_EXT_HEADERS extensions.
 */
static __always_inline __u8 ipv6_skip_extensions(struct cursor *c, __u8 nexthdr)
{
	struct ipv6_frag *frag;
	struct ipv6_ext *ext;
	int i;

#pragma unroll
	for (i = 0; i < MAX_IPV6_EXT_HEADERS; i++) {
		if (!ipv6_is_extension(nexthdr))
			return nexthdr;
		ext = c->pos;
		if ((void *)(ext + 1) > c->end)
			return 0;
		if (nexthdr == IPPROTO_FRAGMENT) {
			frag = c->pos;
			if ((void *)(frag + 1) > c->end || frag->frag_off & bpf_htons(0xfff8))
				return 0;
			c->pos = frag + 1;
		} else {
			c->pos += (ext->hdrlen + 1) * 8;
		}
		nexthdr = ext->nexthdr;
	}
	return ipv6_is_extension(nexthdr) ? 0 : nexthdr;
}

static __always_inline int parse_ipv6(struct cursor *c, struct packet *pkt)
{
	struct ipv6hdr *ip6h = c->pos;

	if ((void *)(ip6h + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip6h->version != 6)
		return PARSE_MALFORMED;
	c->pos = ip6h + 1;

	pkt->family = SLUICE_FAMILY_IPV6;
	__builtin_memcpy(pkt->addr, &ip6h->saddr, sizeof(pkt->addr));
	pkt->proto = ipv6_skip_extensions(c, ip6h->nexthdr);
	return PARSE_IP;
}

/*
 * The destination port, and SYN without ACK for TCP. A truncated L4 header
 * leaves the packet without one: it is judged by address alone.
 */
static __always_inline void parse_l4(struct cursor *c, struct packet *pkt)
{
	struct tcphdr *tcp = c->pos;
	struct udphdr *udp = c->pos;

	pkt->dport = 0;
	pkt->tcp_syn = 0;
	pkt->prove = 0;
	pkt->class_decided = 0;
	pkt->overflow = PKT_OVERFLOW_NONE;
	if (pkt->proto == IPPROTO_TCP) {
		if ((void *)(tcp + 1) > c->end) {
			pkt->proto = 0;
			return;
		}
		pkt->dport = bpf_ntohs(tcp->dest);
		pkt->tcp_syn = tcp->syn && !tcp->ack;
		pkt->prove = tcp_rst_only(tcp);
	} else if (pkt->proto == IPPROTO_UDP) {
		if ((void *)(udp + 1) > c->end) {
			pkt->proto = 0;
			return;
		}
		pkt->dport = bpf_ntohs(udp->dest);
	}
}

/* Fills *pkt for IP frames in [data, data_end); says why not otherwise. */
static __always_inline int parse_frame(void *data, void *data_end, struct packet *pkt)
{
	struct cursor c = {
		.pos = data,
		.end = data_end,
	};
	__be16 proto;
	int ret;

	ret = parse_ethernet(&c, &proto);
	if (ret != PARSE_IP)
		return ret;
	pkt->l3_off = (__u8)(c.pos - data);
	if (proto == bpf_htons(ETH_P_IP))
		ret = parse_ipv4(&c, pkt);
	else if (proto == bpf_htons(ETH_P_IPV6))
		ret = parse_ipv6(&c, pkt);
	else
		return PARSE_NON_IP; /* a third VLAN tag is not parsed either */
	if (ret == PARSE_IP)
		parse_l4(&c, pkt);
	return ret;
}

static __always_inline int parse_packet(struct xdp_md *ctx, struct packet *pkt)
{
	return parse_frame((void *)(long)ctx->data, (void *)(long)ctx->data_end, pkt);
}

#endif /* SLUICE_BPF_PARSE_H */
