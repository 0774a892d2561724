/* SPDX-License-Identifier: GPL-2.0 */
/* Crafted frames for BPF_PROG_TEST_RUN: Ethernet, VLAN tags, IPv4/IPv6, UDP, TCP, ICMP. */
#ifndef SLUICE_TEST_FRAMES_H
#define SLUICE_TEST_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX 4096

struct frame {
	uint8_t data[FRAME_MAX];
	size_t len;
};

struct frame_spec {
	uint16_t vlan_tpids[3]; /* outer first; 0 ends the list */
	int family;		/* 4, 6, or 0 for a raw EtherType */
	uint16_t ethertype;	/* used when family is 0 */
	const char *src;	/* textual IPv4 or IPv6 source */
	size_t payload;		/* L4 payload bytes */
	uint8_t l4;		/* IPPROTO_TCP, _ICMP, _ICMPV6, or 0 for UDP */
	uint16_t dport;		/* 0: 9000 */
	uint8_t tcp_flags;	/* TCP flags byte (SYN 0x02, ACK 0x10) */
	uint8_t tos;		/* IPv4 TOS / IPv6 traffic class */
	int v6_hopopts;		/* 8-byte hop-by-hop headers before L4 (IPv6) */
	uint16_t sport;		/* 0: 40000 */
	const char *dst;	/* NULL: 192.0.2.1, or 2001:db8::1 */
	uint8_t icmp_type;	/* ICMP or ICMPv6: its 8-byte header's type and code */
	uint8_t icmp_code;
};

#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_ACK 0x10

/* Builds a well-formed frame; returns 0 or -EINVAL for a bad spec. */
int frame_build(struct frame *f, const struct frame_spec *spec);
/* The spec behind two VLAN tags (802.1ad, then 802.1Q), or untagged: a frame must count the same.
 */
void frame_spec_tag_both(struct frame_spec *spec, int tagged);
/* RFC 1071 checksum of a header, as it should be stored. */
uint16_t ip_checksum(const void *hdr, size_t len);
/* Offset of the IP header within the frame. */
size_t frame_l3_offset(const struct frame_spec *spec);

#endif /* SLUICE_TEST_FRAMES_H */
