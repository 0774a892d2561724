/* SPDX-License-Identifier: GPL-2.0 */
/* What happens to a packet over its limit. */
#ifndef SLUICE_BPF_ACT_H
#define SLUICE_BPF_ACT_H

#include "stats.h"

static __always_inline int act_over_limit(struct xdp_md *ctx, __u32 action)
{
	if (action == SLUICE_ACTION_DRY_RUN) {
		stats_count(ctx, SLUICE_CNT_WOULD_DROP);
		return XDP_PASS;
	}
	stats_count(ctx, SLUICE_CNT_DROPPED);
	return XDP_DROP;
}

#endif /* SLUICE_BPF_ACT_H */
