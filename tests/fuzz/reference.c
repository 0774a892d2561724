// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include "reference.h"

static unsigned int be16_at(const uint8_t *d, size_t off)
{
	return (unsigned int)d[off] << 8 | d[off + 1];
}

static int is_vlan(unsigned int type)
{
	return type == 0x8100 || type == 0x88a8;
}

static int is_ipv6_extension(unsigned int nh)
{
	return nh == 0 || nh == 43 || nh == 60 || nh == 44;
}

/* TCP and UDP need their whole fixed header, else the packet has no L4. */
static void ref_l4(const uint8_t *d, size_t len, size_t off, struct ref_packet *p)
{
	if (p->proto == 6) {
		if (off + 20 > len) {
			p->proto = 0;
			return;
		}
		p->sport = (uint16_t)be16_at(d, off);
		p->dport = (uint16_t)be16_at(d, off + 2);
		p->tcp_flags = d[off + 13];
		p->syn = (p->tcp_flags & 0x12) == 0x02; /* SYN without ACK */
	} else if (p->proto == 17) {
		if (off + 8 > len) {
			p->proto = 0;
			return;
		}
		p->sport = (uint16_t)be16_at(d, off);
		p->dport = (uint16_t)be16_at(d, off + 2);
	} else if ((p->proto == 1 || p->proto == 58) && off + 2 <= len) {
		p->has_icmp = 1;
		p->icmp_type = d[off];
		p->icmp_code = d[off + 1];
	}
}

static enum ref_class ref_ipv4(const uint8_t *d, size_t len, size_t off, struct ref_packet *p)
{
	size_t ihl;

	if (off + 20 > len || d[off] >> 4 != 4)
		return REF_MALFORMED;
	ihl = (size_t)(d[off] & 0x0f) * 4;
	if (ihl < 20 || off + ihl > len || be16_at(d, off + 2) < ihl)
		return REF_MALFORMED;
	p->family = 4;
	memcpy(p->addr, d + off + 12, 4);
	memcpy(p->dst, d + off + 16, 4);
	p->proto = (be16_at(d, off + 6) & 0x1fff) ? 0 : d[off + 9];
	ref_l4(d, len, off + ihl, p);
	return REF_IP;
}

static enum ref_class ref_ipv6(const uint8_t *d, size_t len, size_t off, struct ref_packet *p)
{
	unsigned int nh;
	int i;

	if (off + 40 > len || d[off] >> 4 != 6)
		return REF_MALFORMED;
	p->family = 6;
	memcpy(p->addr, d + off + 8, 16);
	memcpy(p->dst, d + off + 24, 16);
	nh = d[off + 6];
	off += 40;
	for (i = 0; i < 6 && is_ipv6_extension(nh); i++) {
		if (off + 2 > len)
			return p->proto = 0, REF_IP;
		if (nh == 44) {
			if (off + 8 > len || (be16_at(d, off + 2) & 0xfff8))
				return p->proto = 0, REF_IP;
			nh = d[off];
			off += 8;
		} else {
			nh = d[off];
			off += ((size_t)d[off + 1] + 1) * 8;
		}
	}
	p->proto = is_ipv6_extension(nh) ? 0 : (uint8_t)nh;
	ref_l4(d, len, off, p);
	return REF_IP;
}

enum ref_class ref_parse(const uint8_t *d, size_t len, struct ref_packet *p)
{
	size_t off = 14;
	unsigned int type;
	int tags;

	memset(p, 0, sizeof(*p));
	if (len < 14)
		return REF_MALFORMED;
	type = be16_at(d, 12);
	for (tags = 0; tags < 2 && is_vlan(type); tags++) {
		if (off + 4 > len)
			return REF_MALFORMED;
		type = be16_at(d, off + 2);
		off += 4;
	}
	if (type == 0x0800)
		return ref_ipv4(d, len, off, p);
	if (type == 0x86dd)
		return ref_ipv6(d, len, off, p);
	return REF_NON_IP;
}
