/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cursor-style header parsing. Every access is checked against data_end
 * before it is made; the verifier insists, and so do hostile packets.
 */
#ifndef SLUICE_BPF_PARSE_H
#define SLUICE_BPF_PARSE_H

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"

#define MAX_VLAN_TAGS 2

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

/* The part of a packet the limiter keys on. */
struct packet {
	__u8 family; /* enum sluice_family */
	__u32 addr[4];
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
	return PARSE_IP;
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
	return PARSE_IP;
}

/* Fills *pkt for IP packets; says why not otherwise. */
static __always_inline int parse_packet(struct xdp_md *ctx, struct packet *pkt)
{
	struct cursor c = {
		.pos = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
	};
	__be16 proto;
	int ret;

	ret = parse_ethernet(&c, &proto);
	if (ret != PARSE_IP)
		return ret;
	if (proto == bpf_htons(ETH_P_IP))
		return parse_ipv4(&c, pkt);
	if (proto == bpf_htons(ETH_P_IPV6))
		return parse_ipv6(&c, pkt);
	/* Still a VLAN EtherType after two tags: a third tag, not IP. */
	return PARSE_NON_IP;
}

#endif /* SLUICE_BPF_PARSE_H */
