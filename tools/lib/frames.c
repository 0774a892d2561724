// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include "frames.h"

uint16_t ip_checksum(const void *hdr, size_t len)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (; len > 1; len -= 2)
		sum += *w++;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

size_t frame_l3_offset(const struct frame_spec *spec)
{
	size_t off = sizeof(struct ethhdr);
	int i;

	for (i = 0; i < 3 && spec->vlan_tpids[i]; i++)
		off += 4;
	return off;
}

static size_t l4_header_len(const struct frame_spec *spec)
{
	if (spec->l4 == IPPROTO_ICMP || spec->l4 == IPPROTO_ICMPV6)
		return 8;
	return spec->l4 == IPPROTO_TCP ? sizeof(struct tcphdr) : sizeof(struct udphdr);
}

static size_t put_ipv4(uint8_t *p, const struct frame_spec *spec)
{
	struct iphdr *iph = (struct iphdr *)p;
	size_t l4 = l4_header_len(spec) + spec->payload;

	memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = 5;
	iph->ttl = 64;
	iph->tos = spec->tos;
	iph->protocol = spec->l4 ? spec->l4 : IPPROTO_UDP;
	iph->tot_len = htons((uint16_t)(sizeof(*iph) + l4));
	inet_pton(AF_INET, spec->src, &iph->saddr);
	inet_pton(AF_INET, spec->dst ? spec->dst : "192.0.2.1", &iph->daddr);
	iph->check = ip_checksum(iph, sizeof(*iph));
	return sizeof(*iph);
}

static size_t put_ipv6(uint8_t *p, const struct frame_spec *spec)
{
	struct ipv6hdr *ip6h = (struct ipv6hdr *)p;

	uint8_t *ext = p + sizeof(*ip6h);
	uint8_t l4 = spec->l4 ? spec->l4 : IPPROTO_UDP;
	int i;

	memset(ip6h, 0, sizeof(*ip6h));
	ip6h->version = 6;
	ip6h->priority = spec->tos >> 4;
	ip6h->flow_lbl[0] = (uint8_t)((spec->tos & 0x0f) << 4);
	ip6h->nexthdr = spec->v6_hopopts ? IPPROTO_HOPOPTS : l4;
	ip6h->hop_limit = 64;
	ip6h->payload_len =
		htons((uint16_t)(8 * spec->v6_hopopts + l4_header_len(spec) + spec->payload));
	inet_pton(AF_INET6, spec->src, &ip6h->saddr);
	inet_pton(AF_INET6, spec->dst ? spec->dst : "2001:db8::1", &ip6h->daddr);
	/* Hop-by-hop headers of 8 bytes each: next header, length 0, PadN. */
	for (i = 0; i < spec->v6_hopopts; i++, ext += 8) {
		memset(ext, 0, 8);
		ext[0] = i + 1 < spec->v6_hopopts ? IPPROTO_HOPOPTS : l4;
		ext[2] = 1; /* PadN */
		ext[3] = 4;
	}
	return sizeof(*ip6h) + 8 * (size_t)spec->v6_hopopts;
}

int frame_build(struct frame *f, const struct frame_spec *spec)
{
	struct ethhdr *eth = (struct ethhdr *)f->data;
	uint16_t proto = spec->family == 4   ? ETH_P_IP
			 : spec->family == 6 ? ETH_P_IPV6
					     : spec->ethertype;
	size_t off = sizeof(*eth);
	struct udphdr *udp;
	int i;

	if (frame_l3_offset(spec) + 40 + 8 * (size_t)spec->v6_hopopts + 20 + spec->payload >
	    FRAME_MAX)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	memcpy(eth->h_dest, "\x02\x00\x00\x00\x00\x01", ETH_ALEN);
	memcpy(eth->h_source, "\x02\x00\x00\x00\x00\x02", ETH_ALEN);
	eth->h_proto = htons(spec->vlan_tpids[0] ? spec->vlan_tpids[0] : proto);
	for (i = 0; i < 3 && spec->vlan_tpids[i]; i++) {
		uint16_t next =
			i + 1 < 3 && spec->vlan_tpids[i + 1] ? spec->vlan_tpids[i + 1] : proto;
		uint16_t tag[2] = { htons((uint16_t)(100 + i)), htons(next) };

		memcpy(f->data + off, tag, sizeof(tag));
		off += sizeof(tag);
	}
	if (spec->family == 4)
		off += put_ipv4(f->data + off, spec);
	else if (spec->family == 6)
		off += put_ipv6(f->data + off, spec);
	else {
		f->len = off + 46;
		return 0;
	}
	if (spec->l4 == IPPROTO_ICMP || spec->l4 == IPPROTO_ICMPV6) {
		f->data[off] = spec->icmp_type;
		f->data[off + 1] = spec->icmp_code;
	} else if (spec->l4 == IPPROTO_TCP) {
		struct tcphdr *tcp = (struct tcphdr *)(f->data + off);

		tcp->source = htons(spec->sport ? spec->sport : 40000);
		tcp->dest = htons(spec->dport ? spec->dport : 9000);
		tcp->doff = 5;
		((uint8_t *)tcp)[13] = spec->tcp_flags;
	} else {
		udp = (struct udphdr *)(f->data + off);
		udp->source = htons(spec->sport ? spec->sport : 40000);
		udp->dest = htons(spec->dport ? spec->dport : 9000);
		udp->len = htons((uint16_t)(sizeof(*udp) + spec->payload));
	}
	f->len = off + l4_header_len(spec) + spec->payload;
	return 0;
}

void frame_spec_tag_both(struct frame_spec *spec, int tagged)
{
	spec->vlan_tpids[0] = tagged ? ETH_P_8021AD : 0;
	spec->vlan_tpids[1] = tagged ? ETH_P_8021Q : 0;
}
