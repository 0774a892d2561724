/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a parsed packet to what governs it: the deny and allow lists, then
 * the most specific rule for its source CIDR and L4 class, else the
 * default policy (the bucket key it gives is key.h's).
 */
#ifndef SLUICE_BPF_CLASSIFY_H
#define SLUICE_BPF_CLASSIFY_H

#include "clock.h"
#include "key.h"
#include "maps.h"
#include "parse.h"
#include "stats.h"

enum list_verdict {
	LIST_NONE,
	LIST_ALLOW,
	LIST_DENY,
};

static __always_inline const struct sluice_config *config_get(void)
{
	__u32 zero = 0;
	void *slot;

	slot = bpf_map_lookup_elem(&config, &zero);
	if (!slot)
		return NULL;
	return bpf_map_lookup_elem(slot, &zero);
}

/* Looks the source up in a pair of tries (full-length prefix, in `set`). */
static __always_inline void *lpm_lookup(void *trie_v4, void *trie_v6, const struct packet *pkt,
					__u32 set)
{
	struct sluice_lpm_v4 k4;
	struct sluice_lpm_v6 k6;

	if (pkt->family == SLUICE_FAMILY_IPV4) {
		k4.prefixlen = 32 + 32;
		k4.set = set;
		k4.addr = pkt->addr[0];
		return bpf_map_lookup_elem(trie_v4, &k4);
	}
	k6.prefixlen = 32 + 128;
	k6.set = set;
	__builtin_memcpy(k6.addr, pkt->addr, sizeof(k6.addr));
	return bpf_map_lookup_elem(trie_v6, &k6);
}

/*
 * Is the source denied now? The entry found folds in its enclosing
 * entries' expiry (struct sluice_deny), so an expired one falls back to a
 * live shorter one. Only a timed entry reads the clock.
 */
static __always_inline int deny_holds(const struct packet *pkt, const struct sluice_config *cfg)
{
	const struct sluice_deny *d = lpm_lookup(&deny_v4, &deny_v6, pkt, cfg->list_set);

	if (!d)
		return 0;
	return !d->denied_until_ns || clock_ns() < d->denied_until_ns;
}

/* Deny wins over allow; empty tries are not searched. */
static __always_inline int classify_lists(const struct packet *pkt, const struct sluice_config *cfg)
{
	int v4 = pkt->family == SLUICE_FAMILY_IPV4;

	if ((cfg->lists & (v4 ? SLUICE_LIST_DENY_V4 : SLUICE_LIST_DENY_V6)) && deny_holds(pkt, cfg))
		return LIST_DENY;
	if ((cfg->lists & (v4 ? SLUICE_LIST_ALLOW_V4 : SLUICE_LIST_ALLOW_V6)) &&
	    lpm_lookup(&allow_v4, &allow_v6, pkt, cfg->list_set))
		return LIST_ALLOW;
	return LIST_NONE;
}

static __always_inline const struct sluice_policy *policy_at(__u32 set, __u32 slot)
{
	__u32 index = set * SLUICE_MAX_POLICIES + (slot & (SLUICE_MAX_POLICIES - 1));

	return bpf_map_lookup_elem(&policies, &index);
}

/* The match classes that read the L4 header, whose protocol they need. */
#define CLASS_L4 (SLUICE_POL_MATCH_SPORT | SLUICE_POL_MATCH_TCP_FLAGS | SLUICE_POL_MATCH_ICMP_TYPE)
/* The IP header follows Ethernet and two tags at most: 22 bytes (the verifier needs the bound). */
#define CLASS_L3_OFF_MASK 0x1f
_Static_assert(14 + 4 * MAX_VLAN_TAGS <= CLASS_L3_OFF_MASK, "the IP header's offset fits its mask");

/* The destination in the IP header at l3 within ctx's frame, in rule p's CIDR? */
static __always_inline int class_dst_matches(const struct sluice_policy *p, void *l3, void *end)
{
	const struct ipv6hdr *ip6h = l3;
	const struct iphdr *iph = l3;
	int i;

	if (p->family == SLUICE_FAMILY_IPV4)
		return (void *)(iph + 1) <= end && (iph->daddr & p->dst_mask[0]) == p->dst[0];
	if ((void *)(ip6h + 1) > end)
		return 0;
	for (i = 0; i < 4; i++)
		if ((ip6h->daddr.in6_u.u6_addr32[i] & p->dst_mask[i]) != p->dst[i])
			return 0;
	return 1;
}

/* The L4 conditions of rule p on the header at l4 (the rule's protocol is the packet's). */
static __always_inline int class_l4_matches(const struct sluice_policy *p, __u8 *l4, void *end)
{
	__u32 flags = p->flags;
	__u16 sport;

	/* TCP's flags byte is the furthest read; ICMP's type and code, UDP's port, the nearest. */
	if ((flags & SLUICE_POL_MATCH_TCP_FLAGS) &&
	    ((void *)(l4 + TCP_FLAGS_OFF + 1) > end ||
	     (l4[TCP_FLAGS_OFF] & p->tcp_flags_mask) != p->tcp_flags))
		return 0;
	if ((void *)(l4 + 2) > end)
		return 0;
	if (flags & SLUICE_POL_MATCH_SPORT) {
		sport = (__u16)(l4[0] << 8 | l4[1]);
		if (sport < p->sport_lo || sport > p->sport_hi)
			return 0;
	}
	if ((flags & SLUICE_POL_MATCH_ICMP_TYPE) && l4[0] != p->icmp_type)
		return 0;
	return !(flags & SLUICE_POL_MATCH_ICMP_CODE) || l4[1] == p->icmp_code;
}

/*
 * The L4 header after the IP header at l3, found as parse.h found it (the
 * rule's protocol being the packet's, it did), or NULL. Walked again
 * rather than kept in struct packet, whose size the stack cannot spare;
 * only a rule with a source port, TCP flags or an ICMP type pays it.
 */
static __always_inline __u8 *class_l4(void *l3, void *end, __u8 family)
{
	const struct ipv6hdr *ip6h = l3;
	const struct iphdr *iph = l3;
	struct cursor c = { .end = end };

	if (family == SLUICE_FAMILY_IPV4)
		return (void *)(iph + 1) > end ? NULL : l3 + iph->ihl * 4;
	if ((void *)(ip6h + 1) > end)
		return NULL;
	c.pos = (void *)(ip6h + 1);
	return ipv6_skip_extensions(&c, ip6h->nexthdr) ? c.pos : NULL;
}

/*
 * Rule p's match classes (SLUICE_POL_MATCH_CLASS) for the packet whose IP
 * header is at l3_off in ctx's frame: read from the frame here, and only
 * for a rule that asks. A global function, verified once, not at each of
 * the candidates the loop of classify_policy may try.
 */
__attribute__((noinline)) int class_matches(struct xdp_md *ctx, const struct sluice_policy *p,
					    __u32 l3_off)
{
	void *data, *end, *l3;
	__u8 *l4;
	__u64 len;

	if (!ctx || !p)
		return 0;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	l3 = data + (l3_off & CLASS_L3_OFF_MASK);
	if (p->flags & SLUICE_POL_MATCH_LENGTH) {
		len = frame_len(ctx);
		/* A frame longer than a range can say counts as its longest (sluice(8)). */
		if (len > 0xffff)
			len = 0xffff;
		if (len < p->len_lo || len > p->len_hi)
			return 0;
	}
	if ((p->flags & SLUICE_POL_MATCH_DST) && !class_dst_matches(p, l3, end))
		return 0;
	if (!(p->flags & CLASS_L4))
		return 1;
	l4 = class_l4(l3, end, p->family);
	return l4 && class_l4_matches(p, l4, end);
}

/*
 * The key of a rule keyed on the destination or the pair (SLUICE_POL_KEYS;
 * struct sluice_key): key holds the source key classify_key built, and
 * the destination is read here from the IP header at l3_off in ctx's
 * frame, which parse.h checked whole; struct packet, whose size the stack
 * cannot spare, does not carry it. A global function, so the main program
 * pays one call for such a rule and nothing for the others. Returns 1:
 * the over-limit cache, keyed on the source, may not remember the packet.
 */
__attribute__((noinline)) int key_of_frame(struct xdp_md *ctx, struct sluice_key *key,
					   const struct sluice_policy *p, __u32 l3_off)
{
	const struct ipv6hdr *ip6h;
	const struct iphdr *iph;
	const __u32 *d;
	void *end, *l3;
	__u32 pair;

	if (!ctx || !key || !p)
		return 1;
	end = (void *)(long)ctx->data_end;
	l3 = (void *)(long)ctx->data + (l3_off & CLASS_L3_OFF_MASK);
	pair = p->flags & SLUICE_POL_KEY_PAIR;
	if (key->family == SLUICE_FAMILY_IPV4) {
		iph = l3;
		if ((void *)(iph + 1) > end)
			return 1;
		if (pair)
			key->addr[1] = iph->daddr & p->ipv4_mask;
		else
			key->addr[0] = iph->daddr & p->ipv4_mask;
	} else {
		ip6h = l3;
		if ((void *)(ip6h + 1) > end)
			return 1;
		d = ip6h->daddr.in6_u.u6_addr32;
		if (pair) {
			/* The source's first 64 bits, then the destination's (prefix <= 64). */
			key->addr[2] = d[0] & p->ipv6_mask[0];
			key->addr[3] = d[1] & p->ipv6_mask[1];
		} else {
			key->addr[0] = d[0] & p->ipv6_mask[0];
			key->addr[1] = d[1] & p->ipv6_mask[1];
			key->addr[2] = d[2] & p->ipv6_mask[2];
			key->addr[3] = d[3] & p->ipv6_mask[3];
		}
	}
	key->family |= pair ? SLUICE_KEY_PAIR : SLUICE_KEY_DST;
	return 1;
}

/*
 * Does the rule's L4 class take this packet? No class takes anything.
 * The source, protocol, destination port and SYN are what the over-limit
 * cache keys an entry on (hot.h): while they alone decide, a source's
 * next packet of the same class selects the same rule. Once they take
 * the packet, a match class that decides (matches: the configuration's
 * sluice_config.matches, 0 when no rule has one) marks the packet: the
 * cache may not remember it, as another packet of the same source and
 * class may select another rule. Only such packets then miss the cache,
 * not every one, and the entry keeps its size.
 */
static __always_inline int policy_matches(struct xdp_md *ctx, const struct sluice_policy *p,
					  struct packet *pkt, const struct sluice_config *cfg)
{
	if (p->proto && p->proto != pkt->proto)
		return 0;
	if (p->dport_hi && (pkt->dport < p->dport_lo || pkt->dport > p->dport_hi))
		return 0;
	if ((p->flags & SLUICE_POL_MATCH_SYN) && !pkt->tcp_syn)
		return 0;
	if (!cfg->matches || !(p->flags & SLUICE_POL_MATCH_CLASS))
		return 1;
	pkt->class_decided = 1;
	return class_matches(ctx, p, pkt->l3_off);
}

/*
 * The longest rule CIDR holding the source names its candidates, most
 * specific first (userspace folds the enclosing CIDRs' rules in); the
 * first whose L4 class matches wins, else the default in slot 0. *index is
 * the winner's index in policies and rule_stats.
 */
static __always_inline const struct sluice_policy *classify_policy(struct xdp_md *ctx,
								   struct packet *pkt,
								   const struct sluice_config *cfg,
								   __u32 *index)
{
	const struct sluice_rule_group *group = NULL;
	const struct sluice_policy *p;
	__u32 i, slot;

	*index = cfg->policy_set * SLUICE_MAX_POLICIES;
	if (pkt->family == SLUICE_FAMILY_IPV4 ? cfg->rules_v4 : cfg->rules_v6)
		group = lpm_lookup(&rules_v4, &rules_v6, pkt, cfg->policy_set);
	if (group) {
		for (i = 0; i < SLUICE_MAX_CANDIDATES && i < group->count; i++) {
			slot = group->slots[i] & (SLUICE_MAX_POLICIES - 1);
			p = policy_at(cfg->policy_set, slot);
			if (p && policy_matches(ctx, p, pkt, cfg)) {
				*index += slot;
				return p;
			}
		}
	}
	return policy_at(cfg->policy_set, 0);
}

#endif /* SLUICE_BPF_CLASSIFY_H */
