/* SPDX-License-Identifier: GPL-2.0 */
/* What happens to a packet over its limit: drop, mark, or (dry run) count. */
#ifndef SLUICE_BPF_ACT_H
#define SLUICE_BPF_ACT_H

#include <linux/ip.h>
#include <linux/ipv6.h>
#include "parse.h"
#include "stats.h"

#define ECN_MASK    0x03
#define ECN_NOT_ECT 0x00
#define ECN_CE	    0x03

static __always_inline void verdict_of(struct sluice_verdict *v, const struct sluice_policy *p)
{
	v->action = p->action;
	v->dscp = p->dscp;
	v->mark_dscp = !!(p->flags & SLUICE_POL_MARK_DSCP);
	v->mark_ecn = !!(p->flags & SLUICE_POL_MARK_ECN);
}

/* RFC 1624 incremental update of a 16-bit one's complement checksum. */
static __always_inline void csum_replace2(__sum16 *sum, __be16 from, __be16 to)
{
	__u32 s = (__u16) ~*sum + (__u16)~from + (__u16)to;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	*sum = (__sum16)~s;
}

/* The new traffic class byte, or -1 when ECN marking must drop (Not-ECT). */
static __always_inline int marked_tos(__u8 tos, const struct sluice_verdict *v)
{
	if (v->mark_ecn) {
		if ((tos & ECN_MASK) == ECN_NOT_ECT)
			return -1;
		tos |= ECN_CE;
	}
	if (v->mark_dscp)
		tos = (__u8)((v->dscp << 2) | (tos & ECN_MASK));
	return tos;
}

static __always_inline int mark_ipv4(struct iphdr *iph, const struct sluice_verdict *v)
{
	__be16 *word = (__be16 *)iph; /* version, ihl and tos */
	__be16 before = *word;
	int tos = marked_tos(iph->tos, v);

	if (tos < 0)
		return -1;
	iph->tos = (__u8)tos;
	csum_replace2(&iph->check, before, *word);
	return 0;
}

/* IPv6 has no header checksum; the class straddles the first two bytes. */
static __always_inline int mark_ipv6(struct ipv6hdr *ip6h, const struct sluice_verdict *v)
{
	__u8 *b = (__u8 *)ip6h;
	__u8 tclass = (__u8)((b[0] & 0x0f) << 4 | b[1] >> 4);
	int tos = marked_tos(tclass, v);

	if (tos < 0)
		return -1;
	b[0] = (__u8)((b[0] & 0xf0) | (tos >> 4));
	b[1] = (__u8)((b[1] & 0x0f) | ((tos & 0x0f) << 4));
	return 0;
}

static __always_inline int act_mark(struct xdp_md *ctx, const struct packet *pkt,
				    const struct sluice_verdict *v, __u32 slot)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	void *l3 = data + (pkt->l3_off & 0xff);
	int err = -1;

	if (pkt->family == SLUICE_FAMILY_IPV4) {
		if (l3 + sizeof(struct iphdr) <= end)
			err = mark_ipv4(l3, v);
	} else if (l3 + sizeof(struct ipv6hdr) <= end) {
		err = mark_ipv6(l3, v);
	}
	if (err) {
		/* As a router would: a packet that cannot carry CE is dropped. */
		stats_count_rule(ctx, pkt, slot, SLUICE_CNT_DROPPED);
		return XDP_DROP;
	}
	stats_count_rule(ctx, pkt, slot, SLUICE_CNT_MARKED);
	return XDP_PASS;
}

/* slot: the policy's index in rule_stats (set * SLUICE_MAX_POLICIES + slot). */
static __always_inline int act_over_limit(struct xdp_md *ctx, const struct packet *pkt,
					  const struct sluice_verdict *v, __u32 slot)
{
	if (v->action == SLUICE_ACTION_DRY_RUN) {
		stats_count_rule(ctx, pkt, slot, SLUICE_CNT_WOULD_DROP);
		return XDP_PASS;
	}
	if (v->action == SLUICE_ACTION_MARK)
		return act_mark(ctx, pkt, v, slot);
	stats_count_rule(ctx, pkt, slot, SLUICE_CNT_DROPPED);
	return XDP_DROP;
}

#endif /* SLUICE_BPF_ACT_H */
