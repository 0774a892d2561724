// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "values/cidr.h"
#include "values/number.h"

int parse_prefix(const char *s, unsigned int max, unsigned int *out, const char **why)
{
	static char msg[64];
	uint64_t v;
	int err;

	if (*s == '/')
		s++;
	err = parse_digits(&s, &v, why);
	if (err)
		return err;
	if (*s) {
		*why = "expected a prefix length";
		return -EINVAL;
	}
	if (v > max) {
		snprintf(msg, sizeof(msg), "prefix length must be at most %u", max);
		*why = msg;
		return -ERANGE;
	}
	*out = (unsigned int)v;
	return 0;
}

int parse_cidr(const char *s, struct cidr *cidr, bool *host_bits, const char **why)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned int len, max, i;
	uint32_t mask;
	int err;

	memset(cidr, 0, sizeof(*cidr));
	if (alen >= sizeof(addr)) {
		*why = "expected an IPv4 or IPv6 address or CIDR";
		return -EINVAL;
	}
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, cidr->addr) == 1) {
		cidr->family = SLUICE_FAMILY_IPV4;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, cidr->addr) == 1) {
		cidr->family = SLUICE_FAMILY_IPV6;
		max = 128;
	} else {
		*why = "expected an IPv4 or IPv6 address or CIDR";
		return -EINVAL;
	}
	len = max;
	if (slash) {
		err = parse_prefix(slash + 1, max, &len, why);
		if (err)
			return err;
	}
	cidr->len = (uint8_t)len;
	*host_bits = false;
	for (i = 0; i < 4; i++) {
		int bits = (int)len - 32 * (int)i;

		mask = bits >= 32 ? 0xffffffffU : bits <= 0 ? 0 : htonl(0xffffffffU << (32 - bits));
		if (cidr->addr[i] & ~mask)
			*host_bits = true;
		cidr->addr[i] &= mask;
	}
	return 0;
}

void format_cidr(char *buf, unsigned long len, const struct cidr *cidr)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(cidr->family == SLUICE_FAMILY_IPV4 ? AF_INET : AF_INET6, cidr->addr, addr,
		  sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, cidr->len);
}
void key_format(const struct sluice_key *key, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN] = "?";
	int af = key->family == SLUICE_FAMILY_IPV6 ? AF_INET6 : AF_INET;

	inet_ntop(af, key->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, key->prefix_len);
}
