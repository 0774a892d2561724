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
/* A source key as a prefix: "192.0.2.0/24", "2001:db8::/64". */
void key_format(const struct sluice_key *key, char *buf, size_t len);

#endif /* SLUICE_VALUES_CIDR_H */
