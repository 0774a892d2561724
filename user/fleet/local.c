// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's side of the datapath: what each candidate passed, and the
 * sync program moving its TAT (bpf/fleet.h); the hint the datapath reads.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "fleet/agent.h"

/* Runs op on the n candidates of which[]: each entry's results back in *b. */
static int sync_batch(struct agent *ag, const int *which, int n, __u32 op,
		      uint64_t (*arg_of)(const struct agent *, const struct candidate *),
		      struct sluice_fleet_batch *b)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->count = (__u32)n;
	for (i = 0; i < n; i++) {
		b->e[i].key = ag->cands[which[i]].key;
		b->e[i].op = op;
		b->e[i].arg = arg_of ? arg_of(ag, &ag->cands[which[i]]) : 0;
	}
	return sync_run(&ag->sync, b);
}

/*
 * Runs the entries of batch b whose compare-and-swaps all lost to meter
 * steps (SLUICE_FLEET_CONTENDED: nothing written) again, a few times;
 * b then holds the last run's. What still loses waits for the next round.
 */
static int sync_contended(struct agent *ag, struct sluice_fleet_batch *b)
{
	__u32 i, n;
	int tries, err;

	for (tries = 1; tries < AGENT_SYNC_TRIES; tries++) {
		for (i = 0, n = 0; i < b->count; i++) {
			if (b->e[i].found != SLUICE_FLEET_CONTENDED)
				continue;
			b->e[n] = b->e[i];
			b->e[n].found = 0;
			n++;
		}
		if (!n)
			return 0;
		b->count = n;
		err = sync_run(&ag->sync, b);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The global TAT ahead of the moment the calls were sent, at the latest
 * when Redis read its clock, less the slack: never stricter than the
 * fleet, at most an RTT looser, which the bound's D counts. A later moment
 * would add the sync's time to every host's wait. Without the slack, a
 * push that once reached Redis late leaves the global TAT that much ahead
 * while the source stays busy (Redis places usage by its arrival), and a
 * host that has all of the source's traffic would be held under r.
 */
uint64_t agent_arg_advance(const struct agent *ag, const struct candidate *c)
{
	uint64_t back = ag->since_sent + (ag->slack_ns << SLUICE_TIME_SHIFT);

	return c->delta > back ? c->delta - back : 0;
}

/* Split: each packet here costs as much as N hosts' would, so this host takes r/N. */
uint64_t agent_arg_split(const struct agent *ag, const struct candidate *c)
{
	return ag->hosts > 1 ? (ag->hosts - 1) * c->usage * c->cost : 0;
}

/* What every candidate passed since the last round. */
int agent_usage_read(struct agent *ag)
{
	struct sluice_fleet_batch b;
	int which[SLUICE_FLEET_BATCH];
	int from, i, n, err;

	for (from = 0; from < ag->n; from += SLUICE_FLEET_BATCH) {
		n = ag->n - from < SLUICE_FLEET_BATCH ? ag->n - from : SLUICE_FLEET_BATCH;
		for (i = 0; i < n; i++)
			which[i] = from + i;
		err = sync_batch(ag, which, n, SLUICE_FLEET_READ, NULL, &b);
		if (err)
			return err;
		for (i = 0; i < n; i++) {
			struct candidate *c = &ag->cands[from + i];

			if (b.e[i].found <= 0) {
				c->gone = true;
				continue;
			}
			if (b.e[i].found != 1) /* not read: its usage waits for the next round */
				continue;
			c->usage = b.e[i].passed >= c->last_passed ? b.e[i].passed - c->last_passed
								   : b.e[i].passed;
			c->last_passed = b.e[i].passed;
			c->unpushed += c->usage;
			c->idle = c->usage || c->delta ? 0 : c->idle + 1;
		}
	}
	return 0;
}

/*
 * Runs op on every candidate whose synced is as said: the local advance on
 * those whose owner answered this round, the split's charge on the others,
 * so that a failed node takes only its own slots' sources into fallback.
 */
int agent_sync_all(struct agent *ag, __u32 op,
		   uint64_t (*arg_of)(const struct agent *, const struct candidate *), bool synced)
{
	struct sluice_fleet_batch b;
	int which[SLUICE_FLEET_BATCH];
	int i, n = 0, err;

	for (i = 0; i < ag->n; i++) {
		if (ag->cands[i].synced != synced)
			continue;
		which[n++] = i;
		if (n < SLUICE_FLEET_BATCH)
			continue;
		err = sync_batch(ag, which, n, op, arg_of, &b) ?: sync_contended(ag, &b);
		if (err)
			return err;
		n = 0;
	}
	if (!n)
		return 0;
	return sync_batch(ag, which, n, op, arg_of, &b) ?: sync_contended(ag, &b);
}

/* The hint the datapath reads: the share is 1/N of the period, on until live_until. */
int agent_hint_write(struct agent *ag, bool on)
{
	__u32 zero = 0;

	fleet_hint_plan(ag->opt.period_ns, ag->hosts, &ag->hint);
	ag->hint.live_until = on ? fleet_live_until(monotonic_ns(), ag->opt.period_ns) : 0;
	return bpf_map_update_elem(ag->st.maps.fleet, &zero, &ag->hint, 0) ? -errno : 0;
}

/* The sync program, on the interface's pinned maps; the XDP program stays unloaded. */
int agent_sync_load(struct agent *ag)
{
	int err = sync_open(&ag->st, &ag->sync);

	if (err)
		return err;
	ag->ring = ring_buffer__new(ag->st.fleet_ring_fd, agent_on_candidate, ag, NULL);
	return ag->ring ? 0 : -errno;
}
