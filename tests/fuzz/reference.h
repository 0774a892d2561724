/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A second, deliberately plain parser: byte offsets into a buffer instead
 * of the datapath's cursor and structs. The fuzz targets check that the
 * datapath parser (bpf/parse.h) and the XDP program agree with it.
 */
#ifndef SLUICE_FUZZ_REFERENCE_H
#define SLUICE_FUZZ_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

enum ref_class {
	REF_IP,
	REF_NON_IP,
	REF_MALFORMED,
};

struct ref_packet {
	int family; /* 4 or 6 */
	uint8_t addr[16];
	uint8_t dst[16];
	uint8_t proto;
	uint16_t dport;
	int syn;
	/* The match classes' fields (sluice(8), Rules), each valid only with its header. */
	uint16_t sport;
	uint8_t tcp_flags;
	int has_icmp; /* an ICMP or ICMPv6 type and code: two bytes after the IP headers */
	uint8_t icmp_type, icmp_code;
};

enum ref_class ref_parse(const uint8_t *d, size_t len, struct ref_packet *p);

#endif /* SLUICE_FUZZ_REFERENCE_H */
