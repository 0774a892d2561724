/* SPDX-License-Identifier: GPL-2.0 */
/* Addresses and prefixes: CIDRs, prefix lengths and source keys, parsed and formatted. */
#ifndef SLUICE_VALUES_CIDR_H
#define SLUICE_VALUES_CIDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"

struct cidr {
	uint8_t family; /* SLUICE_FAMILY_IPV4 or _IPV6 */
	uint8_t len;
	uint32_t addr[4]; /* network byte order, host bits clear */
};

int parse_prefix(const char *s, unsigned int max, unsigned int *out, const char **why);
/* A CIDR or a bare address; *host_bits tells that host bits were cleared. */
int parse_cidr(const char *s, struct cidr *cidr, bool *host_bits, const char **why);
void format_cidr(char *buf, unsigned long len, const struct cidr *cidr);
/* The mask, network byte order, of an address word with `bits` of prefix left (any int). */
uint32_t prefix_mask(int bits);
/* c with its bits past len cleared, and len its prefix. */
void cidr_cut(const struct cidr *c, unsigned int len, struct cidr *out);
/*
 * A bucket's key as `top` shows it: a source prefix ("192.0.2.0/24",
 * "2001:db8::/64"), a destination's ("to 203.0.113.5/32"), or a pair's
 * ("192.0.2.7/32 to 203.0.113.5/32").
 */
void key_format(const struct sluice_key *key, char *buf, size_t len);
/* What the key is keyed on: "src", "dst" or "pair" (--key's words). */
const char *key_kind_name(const struct sluice_key *key);
/* The key's source (dst false) or destination prefix; false (and "") if it keeps none. */
bool key_side_format(const struct sluice_key *key, bool dst, char *buf, size_t len);

#endif /* SLUICE_VALUES_CIDR_H */
