/* SPDX-License-Identifier: GPL-2.0 */
/* What happens to a packet over its limit. */
#ifndef SLUICE_BPF_ACT_H
#define SLUICE_BPF_ACT_H

#include "stats.h"

static __always_inline int act_over_limit(const struct sluice_config *cfg,
					  struct sluice_stats *st, __u64 bytes)
{
	if (cfg->action == SLUICE_ACTION_DRY_RUN) {
		stats_count(st, SLUICE_CNT_WOULD_DROP, bytes);
		return XDP_PASS;
	}
	stats_count(st, SLUICE_CNT_DROPPED, bytes);
	return XDP_DROP;
}

#endif /* SLUICE_BPF_ACT_H */
