/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet's arithmetic (docs/fleet.md), pure: the over-admission bound,
 * the datapath's candidate hint for a period and a host count, and the
 * conversions between meter time and the microseconds Redis counts in.
 */
#ifndef SLUICE_FLEET_PLAN_H
#define SLUICE_FLEET_PLAN_H

#include <stdint.h>
#include "sluice.h"

struct fleet_bound {
	double rate;	    /* r, per second */
	double burst;	    /* b, the global burst */
	double burst_local; /* b_local */
	double window_s;    /* W */
	double period_s;    /* T */
	double rtt_s;	    /* RTT to Redis */
	unsigned int hosts; /* N */
};

/* A(W) <= r*W + b + (N-1)*(r*D + b_local), D = 2T + RTT: what N hosts admit in any W. */
double fleet_bound_admitted(const struct fleet_bound *in);
/* The same bound's excess over r*W + b. */
double fleet_bound_excess(const struct fleet_bound *in);

/* Candidate units per share kept about this many, so a share is counted finely. */
#define FLEET_SHARE_UNITS_BITS 16
/* What a fleet may owe beyond a burst, kept in TATs locally and in Redis. */
#define FLEET_DEBT_MAX_NS (10 * 1000000000ULL)

/*
 * The hint for period T (ns) and N hosts: a source is a candidate when its
 * passed cost in a period (T rounded down to a power of two of meter time)
 * crosses 1/N of it, r*T/N packets at rate r.
 */
void fleet_hint_plan(uint64_t period_ns, unsigned int hosts, struct sluice_fleet_hint *h);
/*
 * The live_until an agent writes at now_ns (CLOCK_MONOTONIC, the clock of
 * bpf_ktime_get_ns), in meter time: FLEET_LIVE_PERIODS periods and
 * FLEET_LIVE_NS on, so a slow round never turns the fleet off but a killed
 * agent does, within seconds.
 */
#define FLEET_LIVE_PERIODS 4
#define FLEET_LIVE_NS	   (2 * 1000000000ULL)
uint64_t fleet_live_until(uint64_t now_ns, uint64_t period_ns);
/*
 * The slack: the longest sync of the last FLEET_SLACK_WINDOW_NS to twice
 * that (the maxima of two windows), how late a push may reach Redis.
 */
#define FLEET_SLACK_WINDOW_NS (2500 * 1000000ULL)
struct fleet_slack {
	uint64_t cur_ns, prev_ns, window_ns;
};
/* A sync that took sync_ns ended at now_ns: the slack now. */
uint64_t fleet_slack_note(struct fleet_slack *s, uint64_t now_ns, uint64_t sync_ns);
/*
 * N from a heartbeat that listed `listed` agents, N having been `hosts`:
 * within window_ns of back_ns, when the heartbeat's key came back after
 * being unreachable (its master failed over), the other agents could not
 * beat either, and a shorter list says only that: N is not lowered then.
 * back_ns 0: the heartbeat never failed.
 */
uint32_t fleet_hosts_heard(uint32_t hosts, uint32_t listed, uint64_t back_ns, uint64_t now_ns,
			   uint64_t window_ns);
/* Packets a candidate's units stand for, at cost per packet, with that hint. */
uint64_t fleet_units_packets(const struct sluice_fleet_hint *h, uint64_t units, uint64_t cost);

static inline double meter_to_us(uint64_t meter)
{
	return (double)meter / (double)(1000ULL << SLUICE_TIME_SHIFT);
}

static inline uint64_t us_to_meter(double us)
{
	return us <= 0 ? 0 : (uint64_t)(us * (double)(1000ULL << SLUICE_TIME_SHIFT));
}

#endif /* SLUICE_FLEET_PLAN_H */
