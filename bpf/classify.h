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

/* Does the rule's L4 class take this packet? No class takes anything. */
static __always_inline int policy_matches(const struct sluice_policy *p, const struct packet *pkt)
{
	if (p->proto && p->proto != pkt->proto)
		return 0;
	if (p->dport_hi && (pkt->dport < p->dport_lo || pkt->dport > p->dport_hi))
		return 0;
	if ((p->flags & SLUICE_POL_MATCH_SYN) && !pkt->tcp_syn)
		return 0;
	return 1;
}

/*
 * The longest rule CIDR holding the source names its candidates, most
 * specific first (userspace folds the enclosing CIDRs' rules in); the
 * first whose L4 class matches wins, else the default in slot 0. *index is
 * the winner's index in policies and rule_stats.
 */
static __always_inline const struct sluice_policy *
classify_policy(const struct packet *pkt, const struct sluice_config *cfg, __u32 *index)
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
			if (p && policy_matches(p, pkt)) {
				*index += slot;
				return p;
			}
		}
	}
	return policy_at(cfg->policy_set, 0);
}

#endif /* SLUICE_BPF_CLASSIFY_H */
