// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood: the template frame. Ethernet, IPv4 or IPv6, then a UDP
 * datagram or a TCP SYN, with the source address and every checksum left
 * zero: the XDP program writes those into each copy. What it needs to do
 * that cheaply are the checksum sums of everything else, computed here.
 *
 * The frame carries a random 64-bit tag so the program can tell its own
 * frames from real traffic: at the start of the UDP payload, or in the TCP
 * timestamp option (TSval and TSecr), where a SYN normally carries one.
 */
#include <string.h>
#include <arpa/inet.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>

#include "flood_opts.h"
#include "flood_layout.h"

#define FLOOD_SPORT 9001
#define IPV4_DF	    0x4000 /* <netinet/ip.h> has it but clashes with <linux/ip.h> */
#define TCP_WINDOW  64240

/* The SYN options of a Linux client: MSS, SACK permitted, timestamps, window scale. */
/* clang-format off */
static const unsigned char syn_options[FLOOD_TCP_OPT_LEN] = {
	2, 4, 0x05, 0xb4,		/* MSS 1460 */
	4, 2,				/* SACK permitted */
	8, 10, 0, 0, 0, 0, 0, 0, 0, 0,	/* timestamps: the tag goes here */
	1,				/* NOP */
	3, 3, 7,			/* window scale 7 */
};
/* clang-format on */

static __u32 tag_off(const struct flood_opts *o)
{
	return FLOOD_TAG_OFF(o->ipv6, o->proto == FLOOD_TCP_SYN);
}

__u64 flood_min_size(const struct flood_opts *o)
{
	__u64 hdrs = FLOOD_L4_OFF(o->ipv6) + FLOOD_L4_HDR_LEN(o->proto == FLOOD_TCP_SYN);
	__u64 min = tag_off(o) + sizeof(__u64);

	if (min < hdrs)
		min = hdrs; /* the TCP tag lies inside the options */
	return min < MIN_FRAME ? MIN_FRAME : min;
}

/* One's complement sum of LEN bytes as native 16-bit words, not folded. */
static __u32 csum_add(__u32 sum, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	__u16 w;

	for (; len > 1; len -= 2, p += 2) {
		memcpy(&w, p, sizeof(w));
		sum += w;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, 1); /* an odd byte is padded with zero after it */
		sum += w;
	}
	return sum;
}

static __u32 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	return (sum & 0xffff) + (sum >> 16);
}

static void put_ipv4(const struct flood_opts *o, struct iphdr *iph, __u8 l4proto)
{
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tot_len = htons(o->size - sizeof(struct ethhdr));
	iph->frag_off = htons(IPV4_DF);
	iph->ttl = 64;
	iph->protocol = l4proto;
	memcpy(&iph->daddr, o->dst, sizeof(iph->daddr));
}

static void put_ipv6(const struct flood_opts *o, struct ipv6hdr *ip6h, __u8 l4proto)
{
	ip6h->version = 6;
	ip6h->payload_len = htons(o->size - sizeof(struct ethhdr) - sizeof(*ip6h));
	ip6h->nexthdr = l4proto;
	ip6h->hop_limit = 64;
	memcpy(&ip6h->daddr, o->dst, sizeof(ip6h->daddr));
}

static void put_udp(const struct flood_opts *o, struct udphdr *udp, __u32 l4_len)
{
	udp->source = htons(FLOOD_SPORT);
	udp->dest = htons(o->dport);
	udp->len = htons(l4_len);
}

static void put_tcp_syn(const struct flood_opts *o, struct tcphdr *tcp, __u64 tag)
{
	tcp->source = htons(FLOOD_SPORT);
	tcp->dest = htons(o->dport);
	tcp->seq = htonl((__u32)(tag >> 32)); /* any value; this one varies per run */
	tcp->doff = (sizeof(*tcp) + FLOOD_TCP_OPT_LEN) / 4;
	tcp->syn = 1;
	tcp->window = htons(TCP_WINDOW);
	memcpy(tcp + 1, syn_options, sizeof(syn_options));
}

/*
 * Sum of the pseudo-header without the source address: destination,
 * protocol and L4 length, laid out as the checksum covers them.
 */
static __u32 pseudo_sum(const struct flood_opts *o, __u8 l4proto, __u32 l4_len)
{
	__be32 v6_tail[2] = { htonl(l4_len), htonl(l4proto) };
	__be16 v4_tail[2] = { htons(l4proto), htons(l4_len) };

	if (o->ipv6)
		return csum_add(csum_add(0, o->dst, 16), v6_tail, sizeof(v6_tail));
	return csum_add(csum_add(0, o->dst, 4), v4_tail, sizeof(v4_tail));
}

/* Which sources each set has: the plan's part that is not the frame's. */
static void plan_sources(const struct flood_opts *o, struct flood_plan *p)
{
	p->ipv6 = o->ipv6;
	p->tcp = o->proto == FLOOD_TCP_SYN;
	p->src_base = flood_be(o->src, 4);
	p->src6_hi = flood_be(o->src, 8);
	p->src6_lo = flood_be(o->src + 8, 8);
	p->n_sources = o->sources;
	p->n_prefixes = o->v6_prefixes;
	p->n_mix = 1;
	if (o->mix_every) {
		p->mix_every = o->mix_every;
		p->mix_base = flood_be(o->mix_src, 4);
		p->mix6_hi = flood_be(o->mix_src, 8);
		p->mix6_lo = flood_be(o->mix_src + 8, 8);
		p->n_mix = o->mix_sources;
	}
}

void flood_build(const struct flood_opts *o, __u64 tag, struct flood_template *t)
{
	struct ethhdr *eth = (struct ethhdr *)t->data;
	unsigned char *l3 = t->data + FLOOD_ETH_LEN, *l4 = t->data + FLOOD_L4_OFF(o->ipv6);
	__u8 l4proto = o->proto == FLOOD_TCP_SYN ? IPPROTO_TCP : IPPROTO_UDP;
	__u32 l4_len = o->size - FLOOD_L4_OFF(o->ipv6);

	memset(t, 0, sizeof(*t));
	memcpy(eth->h_dest, o->dst_mac, ETH_ALEN);
	memcpy(eth->h_source, o->src_mac, ETH_ALEN);
	eth->h_proto = htons(o->ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	if (o->ipv6)
		put_ipv6(o, (struct ipv6hdr *)l3, l4proto);
	else
		put_ipv4(o, (struct iphdr *)l3, l4proto);
	if (o->proto == FLOOD_TCP_SYN)
		put_tcp_syn(o, (struct tcphdr *)l4, tag);
	else
		put_udp(o, (struct udphdr *)l4, l4_len);
	memcpy(t->data + tag_off(o), &tag, sizeof(tag));

	/* Source address and checksum fields are still zero: they add nothing. */
	if (!o->ipv6)
		t->plan.ip_csum_base = csum_fold(csum_add(0, l3, sizeof(struct iphdr)));
	t->plan.l4_csum_base = csum_fold(csum_add(pseudo_sum(o, l4proto, l4_len), l4, l4_len));
	plan_sources(o, &t->plan);
}
