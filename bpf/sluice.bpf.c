// SPDX-License-Identifier: GPL-2.0
/* The sluice XDP entry point: parse -> classify -> meter -> act -> count. */
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
	__u64 bytes = ctx->data_end - ctx->data;
	const struct sluice_config *cfg;
	struct sluice_stats *st;
	struct sluice_key key;
	struct packet pkt;
	int ret;

	st = stats_get();
	if (!st)
		return XDP_PASS;

	ret = parse_packet(ctx, &pkt);
	if (ret == PARSE_NON_IP) {
		stats_count(st, SLUICE_CNT_NON_IP, bytes);
		return XDP_PASS;
	}
	if (ret == PARSE_MALFORMED) {
		stats_count(st, SLUICE_CNT_MALFORMED, bytes);
		return XDP_PASS;
	}

	cfg = config_get();
	if (!cfg) {
		/* Only between map creation and the first config write. */
		stats_count(st, SLUICE_CNT_PASSED, bytes);
		return XDP_PASS;
	}

	classify_key(&key, &pkt, cfg);
	if (meter_packet(&key, cfg, st, bytes) == METER_CONFORMS) {
		stats_count(st, SLUICE_CNT_PASSED, bytes);
		return XDP_PASS;
	}
	return act_over_limit(cfg, st, bytes);
}

char LICENSE[] SEC("license") = "GPL";
