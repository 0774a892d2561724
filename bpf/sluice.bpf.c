// SPDX-License-Identifier: GPL-2.0
/*
 * The sluice XDP entry point: parse -> classify -> meter -> act -> count.
 * A repeat offender short-cuts classify and meter through the per-CPU
 * over-limit cache (meter.h).
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"
#include "maps.h"
#include "parse.h"
#include "classify.h"
#include "hot.h"
#include "meter.h"
#include "act.h"
#include "stats.h"
#include "fleet.h"
#include "prove.h"

/* Lists first: denied sources are dropped, allowed ones never get a bucket. */
static __always_inline int act_on_lists(struct xdp_md *ctx, const struct packet *pkt,
					const struct sluice_config *cfg)
{
	if (!cfg->lists)
		return -1;
	switch (classify_lists(pkt, cfg)) {
	case LIST_DENY:
		stats_count(ctx, SLUICE_CNT_DENIED);
		return XDP_DROP;
	case LIST_ALLOW:
		stats_count(ctx, SLUICE_CNT_ALLOWED);
		return XDP_PASS;
	}
	return -1;
}

SEC("xdp.frags")
int sluice_xdp(struct xdp_md *ctx)
{
	const struct sluice_config *cfg;
	const struct sluice_policy *p;
	struct sluice_key key;
	struct sluice_verdict verdict;
	struct sluice_hot_head *hd;
	union sluice_hot_line *h;
	struct sluice_hot_way *e;
	struct packet pkt;
	__u64 now, until;
	__u32 index;
	int ret;

	ret = parse_packet(ctx, &pkt);
	if (ret == PARSE_NON_IP) {
		stats_count(ctx, SLUICE_CNT_NON_IP);
		return XDP_PASS;
	}
	if (ret == PARSE_MALFORMED) {
		stats_count(ctx, SLUICE_CNT_MALFORMED);
		return XDP_PASS;
	}

	e = hot_still_over(&pkt, &h, &hd, &now);
	if (e) {
		if (e->flags & SLUICE_HOT_BANNED)
			hot_banned(ctx, e);
		hot_verdict_of(&verdict, e);
		return act_over_limit(ctx, &pkt, &verdict, hot_rule_slot(e));
	}

	cfg = config_get();
	if (cfg) {
		ret = act_on_lists(ctx, &pkt, cfg);
		if (ret >= 0)
			return ret;
		/* Only a RST calls out: other TCP traffic pays one test while a rule proves. */
		if (cfg->provers && (pkt.prove & PKT_TCP_RST)) {
			pkt.prove = prove_rst(ctx, pkt.l3_off);
			pkt.tcp_syn = pkt.prove; /* PKT_PROVEN is 1: it stands for its SYN */
		}
	}
	p = cfg ? classify_policy(ctx, &pkt, cfg, &index) : NULL;
	if (!p) {
		/* Only between map creation and the first config write. */
		stats_count(ctx, SLUICE_CNT_PASSED);
		return XDP_PASS;
	}

	classify_key(&key, &pkt, p);
	/* A destination or pair key: never remembered either (classify.h). */
	if (cfg->key_kinds && (p->flags & SLUICE_POL_KEYS))
		pkt.class_decided = key_of_frame(ctx, &key, p, pkt.l3_off);
	/* A banned key gets its rule's action before its bucket (ban.h), then from the cache. */
	if ((p->flags & SLUICE_POL_BAN) && (until = ban_until(&key))) {
		stats_count(ctx, SLUICE_CNT_BANNED);
		hot_ban(pkt.class_decided ? NULL : h, &pkt, &key, p, index, cfg->generation, until);
		verdict_of(&verdict, p);
		return act_over_limit(ctx, &pkt, &verdict, index);
	}
	if (cfg->provers && pkt.tcp_syn && !pkt.prove)
		pkt.prove = prove_syn_when(ctx, pkt.l3_off, p->flags);
	/* A packet a match class decided, or keyed on more than its source, is never remembered. */
	ret = meter_packet(ctx, &pkt, &key, p, index, cfg, pkt.class_decided ? NULL : h, now);
	if (ret == METER_CONFORMS) {
		if (pkt.prove & PKT_PROVEN)
			prove_note(ctx, &key);
		stats_count_rule(ctx, &pkt, index, SLUICE_CNT_PASSED);
		return XDP_PASS;
	}
	if (ret == METER_PROVE && !prove_answer(ctx, pkt.l3_off)) {
		stats_count(ctx, SLUICE_CNT_SYNACK_SENT);
		return XDP_TX;
	}
	verdict_of(&verdict, p);
	return act_over_limit(ctx, &pkt, &verdict, index);
}

char LICENSE[] SEC("license") = "GPL";
