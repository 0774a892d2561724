/* SPDX-License-Identifier: GPL-2.0 */
/* Crafted frames for BPF_PROG_TEST_RUN: Ethernet, VLAN tags, IPv4/IPv6, UDP. */
#ifndef SLUICE_TEST_FRAMES_H
#define SLUICE_TEST_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_MAX 1600

struct frame {
	uint8_t data[FRAME_MAX];
	size_t len;
};

struct frame_spec {
	uint16_t vlan_tpids[3]; /* outer first; 0 ends the list */
	int family;		/* 4, 6, or 0 for a raw EtherType */
	uint16_t ethertype;	/* used when family is 0 */
	const char *src;	/* textual IPv4 or IPv6 source */
	size_t payload;		/* UDP payload bytes */
};

/* Builds a well-formed frame; returns 0 or -EINVAL for a bad spec. */
int frame_build(struct frame *f, const struct frame_spec *spec);
/* Offset of the IP header within the frame. */
size_t frame_l3_offset(const struct frame_spec *spec);

#endif /* SLUICE_TEST_FRAMES_H */
