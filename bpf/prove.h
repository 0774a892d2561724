/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --prove in the datapath: which SYNs get a cookie SYN-ACK, which RSTs
 * prove their source, and the counts and marks of both. The cookie work
 * itself, from the frame to the SYN-ACK and back, is cookie.h's.
 */
#ifndef SLUICE_BPF_PROVE_H
#define SLUICE_BPF_PROVE_H

#include "cookie.h"
#include "maps.h"
#include "stats.h"

/* struct packet.prove: what --prove makes of a packet. */
/* A RST whose cookie checked out: it stands for its SYN. */
#define PKT_PROVEN (1U << 0)
/* A SYN to answer once the new-source budget refuses it. */
#define PKT_PROVE_PAST_BUDGET (1U << 1)
/* A SYN to answer without asking the budget. */
#define PKT_PROVE_ALWAYS (1U << 2)

/*
 * What --prove makes of a TCP packet the rule with these flags took
 * (PKT_PROVE*): a SYN to answer with a cookie when its source has no
 * bucket (meter.h), or a RST whose cookie checks out, which stands for the
 * SYN it answers, so it is classified as that SYN was and a new source
 * spends the proven-source budget. Global, and the answer a mask the
 * caller ORs in, not a branch: the verifier walks this once, and the main
 * program's paths do not split on it.
 */
__attribute__((noinline)) int prove_syn_when(struct xdp_md *ctx, __u32 l3_off, __u32 flags)
{
	if (!(flags & SLUICE_POL_PROVE_TCP) || !prove_answerable(ctx, l3_off))
		return 0;
	return flags & SLUICE_POL_PROVE_ALWAYS ? PKT_PROVE_ALWAYS : PKT_PROVE_PAST_BUDGET;
}

/* PKT_PROVEN for a RST whose cookie checks out, else 0; counted either way. */
__attribute__((noinline)) int prove_rst(struct xdp_md *ctx, __u32 l3_off)
{
	int ret = prove_check(ctx, l3_off);

	if (!ret)
		return 0;
	if (ret < 0) {
		stats_count(ctx, SLUICE_CNT_COOKIE_BAD);
		return 0;
	}
	stats_count(ctx, SLUICE_CNT_COOKIE_GOOD);
	return PKT_PROVEN;
}

/* A proven source's packet passed: its bucket is marked for top. */
static __always_inline void prove_note(struct xdp_md *ctx, const struct sluice_key *key)
{
	struct sluice_proven mark = { .proven_ns = bpf_ktime_get_ns() };

	stats_count(ctx, SLUICE_CNT_PROVEN);
	bpf_map_update_elem(&proven, key, &mark, BPF_ANY);
}

#endif /* SLUICE_BPF_PROVE_H */
