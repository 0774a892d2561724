/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sluice-flood frame layouts, shared by the frame builder and the XDP
 * program: Ethernet, IPv4 or IPv6 without options, then UDP, or a TCP SYN
 * with 20 bytes of options. Offsets are from the start of the frame.
 */
#ifndef SLUICE_FLOOD_LAYOUT_H
#define SLUICE_FLOOD_LAYOUT_H

#define FLOOD_ETH_LEN	  14
#define FLOOD_IPV4_LEN	  20
#define FLOOD_IPV6_LEN	  40
#define FLOOD_TCP_LEN	  20 /* without options */
#define FLOOD_TCP_OPT_LEN 20

#define FLOOD_L4_OFF(v6) (FLOOD_ETH_LEN + ((v6) ? FLOOD_IPV6_LEN : FLOOD_IPV4_LEN))
/* UDP header, or TCP header with its options. */
#define FLOOD_L4_HDR_LEN(tcp) ((tcp) ? FLOOD_TCP_LEN + FLOOD_TCP_OPT_LEN : 8)
/* The tag: UDP payload start, or TSval/TSecr after MSS, SACK-permitted, kind, length. */
#define FLOOD_TAG_OFF(v6, tcp) (FLOOD_L4_OFF(v6) + ((tcp) ? FLOOD_TCP_LEN + 8 : 8))
/* The L4 checksum field. */
#define FLOOD_CSUM_OFF(v6, tcp) (FLOOD_L4_OFF(v6) + ((tcp) ? 16 : 6))

#endif /* SLUICE_FLOOD_LAYOUT_H */
