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
#include "meter.h"
#include "act.h"
#include "stats.h"

SEC("xdp")
int sluice_xdp(struct xdp_md *ctx)
{
	const struct sluice_config *cfg;
	struct sluice_key key;
	struct sluice_hot *h;
	struct packet pkt;
	__u64 now;
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

	h = hot_get();
	if (hot_still_over(h, &pkt, &now))
		return act_over_limit(ctx, h->action);

	cfg = config_get();
	if (!cfg) {
		/* Only between map creation and the first config write. */
		stats_count(ctx, SLUICE_CNT_PASSED);
		return XDP_PASS;
	}
	classify_key(&key, &pkt, cfg);
	if (meter_packet(ctx, &pkt, &key, cfg, h, now) == METER_CONFORMS) {
		stats_count(ctx, SLUICE_CNT_PASSED);
		return XDP_PASS;
	}
	return act_over_limit(ctx, cfg->action);
}

char LICENSE[] SEC("license") = "GPL";
