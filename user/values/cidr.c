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

uint32_t prefix_mask(int bits)
{
	if (bits <= 0)
		return 0;
	if (bits >= 32)
		return 0xffffffffU;
	return htonl(0xffffffffU << (32 - bits));
}

void cidr_cut(const struct cidr *c, unsigned int len, struct cidr *out)
{
	int i;

	*out = *c;
	out->len = (uint8_t)len;
	for (i = 0; i < 4; i++)
		out->addr[i] &= prefix_mask((int)len - 32 * i);
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

		mask = prefix_mask(bits);
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
const char *key_kind_name(const struct sluice_key *key)
{
	if (key->family & SLUICE_KEY_PAIR)
		return "pair";
	return key->family & SLUICE_KEY_DST ? "dst" : "src";
}

/* A pair keeps the source in its first half, the destination in its second (sluice.h). */
bool key_side_format(const struct sluice_key *key, bool dst, char *buf, size_t len)
{
	bool v6 = SLUICE_KEY_FAMILY(key->family) == SLUICE_FAMILY_IPV6;
	char addr[INET6_ADDRSTRLEN] = "?";
	uint32_t side[4] = { 0 };

	buf[0] = '\0';
	if (key->family & SLUICE_KEY_PAIR) {
		if (v6)
			memcpy(side, &key->addr[dst ? 2 : 0], 2 * sizeof(side[0]));
		else
			side[0] = key->addr[dst ? 1 : 0];
	} else if (!!(key->family & SLUICE_KEY_DST) == dst) {
		memcpy(side, key->addr, sizeof(side));
	} else {
		return false;
	}
	inet_ntop(v6 ? AF_INET6 : AF_INET, side, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, key->prefix_len);
	return true;
}

void key_format(const struct sluice_key *key, char *buf, size_t len)
{
	char src[INET6_ADDRSTRLEN + 8], dst[INET6_ADDRSTRLEN + 8];
	bool has_src = key_side_format(key, false, src, sizeof(src));
	bool has_dst = key_side_format(key, true, dst, sizeof(dst));

	if (has_src && has_dst)
		snprintf(buf, len, "%s to %s", src, dst);
	else if (has_dst)
		snprintf(buf, len, "to %s", dst);
	else
		snprintf(buf, len, "%s", src);
}
