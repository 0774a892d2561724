// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ref_rules.h"

/* Does addr (4 or 16 bytes) lie in text's CIDR "A/N"? Its length goes to *plen. */
static int in_cidr(const char *text, int family, const uint8_t *addr, int *plen)
{
	uint8_t net[16];
	char a[64];
	const char *slash = strchr(text, '/');
	int bits, i;

	snprintf(a, sizeof(a), "%.*s", (int)(slash - text), text);
	bits = atoi(slash + 1);
	if (plen)
		*plen = bits;
	if (inet_pton(family == 4 ? AF_INET : AF_INET6, a, net) != 1)
		return 0;
	for (i = 0; i < bits; i++)
		if ((addr[i / 8] ^ net[i / 8]) & (0x80 >> (i % 8)))
			return 0;
	return 1;
}

static int in_range(struct ref_range r, int v)
{
	return (!r.lo && !r.hi) || (v >= r.lo && v <= r.hi);
}

/* The documented weights: --tcp-flags 4; --dport, --sport, --icmp-type, --length, --dst 2; a code
 * 1; --proto 1. */
static int weight(const struct ref_rule *r)
{
	return (r->flags_mask ? 4 : 0) + (r->dport.hi ? 2 : 0) + (r->sport.hi ? 2 : 0) +
	       (r->icmp_type >= 0 ? 2 : 0) + (r->icmp_code >= 0 ? 1 : 0) + (r->length.hi ? 2 : 0) +
	       (r->dst ? 2 : 0) + (r->proto ? 1 : 0);
}

/* The L4 conditions: a fragment after the first has no protocol (p->proto 0), so none of them. */
static int l4_matches(const struct ref_rule *r, const struct ref_packet *p)
{
	if (r->proto && r->proto != p->proto)
		return 0;
	if (r->dport.hi && !in_range(r->dport, p->dport))
		return 0;
	if (r->sport.hi && !in_range(r->sport, p->sport))
		return 0;
	if (r->flags_mask && (p->tcp_flags & r->flags_mask) != r->flags)
		return 0;
	if (r->icmp_type >= 0 && (!p->has_icmp || p->icmp_type != r->icmp_type))
		return 0;
	return r->icmp_code < 0 || (p->has_icmp && p->icmp_code == r->icmp_code);
}

static int rule_matches(const struct ref_rule *r, const struct ref_packet *p, size_t len, int *plen)
{
	if (r->family != p->family || !in_cidr(r->cidr, r->family, p->addr, plen))
		return 0;
	if (r->length.hi && !in_range(r->length, len > 65535 ? 65535 : (int)len))
		return 0;
	if (r->dst && !in_cidr(r->dst, r->family, p->dst, NULL))
		return 0;
	return l4_matches(r, p);
}

const struct ref_rule *ref_rule_pick(const struct ref_rule *rules, size_t n,
				     const struct ref_packet *p, size_t len)
{
	const struct ref_rule *best = NULL;
	int best_len = -1, plen;
	size_t i;

	/* In the order added: a later rule wins only by a longer CIDR or a greater weight. */
	for (i = 0; i < n; i++) {
		if (!rule_matches(&rules[i], p, len, &plen))
			continue;
		if (plen > best_len || (plen == best_len && weight(&rules[i]) > weight(best))) {
			best = &rules[i];
			best_len = plen;
		}
	}
	return best;
}

/* The first `bits` bits of from (0 to 128) into to, the rest cleared. */
static void masked(uint8_t *to, const uint8_t *from, int bytes, int bits)
{
	int i;

	memset(to, 0, (size_t)bytes);
	for (i = 0; i < bits && i < bytes * 8; i++)
		to[i / 8] |= from[i / 8] & (0x80 >> (i % 8));
}

void ref_rule_key(const struct ref_rule *r, const struct ref_packet *p, struct sluice_key *k)
{
	int v4 = p->family == 4, bytes = v4 ? 4 : 8;
	int prefix = r ? r->prefix : (v4 ? 32 : SLUICE_DEFAULT_IPV6_PREFIX);
	uint8_t *addr = (uint8_t *)k->addr;
	enum ref_key_kind kind = r ? r->key : REF_KEY_SRC;

	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)p->family;
	k->prefix_len = (uint8_t)prefix;
	k->policy = (uint16_t)(r ? r->id : 0);
	if (kind == REF_KEY_SRC) {
		masked(addr, p->addr, v4 ? 4 : 16, prefix);
	} else if (kind == REF_KEY_DST) {
		k->family |= SLUICE_KEY_DST;
		masked(addr, p->dst, v4 ? 4 : 16, prefix);
	} else {
		/* A pair: IPv4 the source then the destination; IPv6 their first 64 bits. */
		k->family |= SLUICE_KEY_PAIR;
		masked(addr, p->addr, bytes, prefix);
		masked(addr + bytes, p->dst, bytes, prefix);
	}
}
