// SPDX-License-Identifier: GPL-2.0
/* The fleet's bound and candidate hint (plan.h). */
#include "fleet/plan.h"

double fleet_bound_excess(const struct fleet_bound *in)
{
	double d = 2 * in->period_s + in->rtt_s;

	return (in->hosts ? in->hosts - 1 : 0) * (in->rate * d + in->burst_local);
}

double fleet_bound_admitted(const struct fleet_bound *in)
{
	return in->rate * in->window_s + in->burst + fleet_bound_excess(in);
}

static unsigned int log2_floor(uint64_t v)
{
	unsigned int n = 0;

	while (v >>= 1)
		n++;
	return n;
}

void fleet_hint_plan(uint64_t period_ns, unsigned int hosts, struct sluice_fleet_hint *h)
{
	uint64_t period = period_ns << SLUICE_TIME_SHIFT, share;
	unsigned int bits;

	if (!hosts)
		hosts = 1;
	h->period_shift = log2_floor(period ? period : 1);
	share = (1ULL << h->period_shift) / hosts;
	bits = log2_floor(share ? share : 1);
	h->cost_shift = bits > FLEET_SHARE_UNITS_BITS ? bits - FLEET_SHARE_UNITS_BITS : 0;
	h->share_units = (__u32)(share >> h->cost_shift);
	if (!h->share_units)
		h->share_units = 1;
	h->debt_max = FLEET_DEBT_MAX_NS << SLUICE_TIME_SHIFT;
}

uint64_t fleet_live_until(uint64_t now_ns, uint64_t period_ns)
{
	return (now_ns + FLEET_LIVE_PERIODS * period_ns + FLEET_LIVE_NS) << SLUICE_TIME_SHIFT;
}

uint64_t fleet_slack_note(struct fleet_slack *s, uint64_t now_ns, uint64_t sync_ns)
{
	if (now_ns - s->window_ns >= FLEET_SLACK_WINDOW_NS) {
		/* a window skipped whole (no sync in it) leaves nothing behind */
		s->prev_ns = now_ns - s->window_ns >= 2 * FLEET_SLACK_WINDOW_NS ? 0 : s->cur_ns;
		s->cur_ns = 0;
		s->window_ns = now_ns;
	}
	if (sync_ns > s->cur_ns)
		s->cur_ns = sync_ns;
	return s->cur_ns > s->prev_ns ? s->cur_ns : s->prev_ns;
}

uint64_t fleet_units_packets(const struct sluice_fleet_hint *h, uint64_t units, uint64_t cost)
{
	uint64_t per = (cost >> h->cost_shift) + 1;

	return units / per;
}

uint32_t fleet_hosts_heard(uint32_t hosts, uint32_t listed, uint64_t back_ns, uint64_t now_ns,
			   uint64_t window_ns)
{
	if (listed < hosts && back_ns && now_ns - back_ns < window_ns)
		return hosts;
	return listed;
}
