/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet agent's sync step (docs/fleet.md): a program the agent runs
 * through BPF_PROG_TEST_RUN on a batch in map `fleet_batch`, because
 * userspace cannot compare-and-swap a map value. Each entry reads a
 * source's bucket, moves its TAT forward to the fleet's, or charges it
 * (fallback split), through table.h's own lookup and compare-and-swap. A
 * change caps debt through it too (user/maps/policy_maps.c).
 *
 * An XDP program rather than a syscall one: Linux 6.1 keeps sleepable
 * programs, which syscall ones are, away from maps holding a spin lock,
 * and every set of the source table has one. It never sees a packet: the
 * test run hands it a dummy frame, which it passes.
 */
#ifndef SLUICE_BPF_FLEET_H
#define SLUICE_BPF_FLEET_H

#include "classify.h"
#include "clock.h"
#include "table.h"

/*
 * A rule's admission, overflow or proven-source TAT rebased or capped
 * (gcra_rebased): 1 if the rule has them.
 */
static __always_inline int admission_cap(__u32 id, const struct sluice_fleet_entry *e, __u64 now)
{
	__u32 fleet_op = e->op;
	struct sluice_admission *adm = bpf_map_lookup_elem(&admission, &id);
	__u64 *tatp, tat, next;
	int i;

	if (!adm)
		return 0;
	tatp = fleet_op == SLUICE_FLEET_CAP_ADMIT      ? &adm->admit_tat
	       : fleet_op == SLUICE_FLEET_CAP_OVERFLOW ? &adm->overflow_tat
						       : &adm->proven_tat;
	for (i = 0; i < METER_CAS_TRIES; i++) {
		tat = *(volatile __u64 *)tatp;
		next = gcra_rebased(tat, now, e->arg, e->was_tat, e->to_tat);
		if (next == tat || __sync_val_compare_and_swap(tatp, tat, next) == tat)
			break;
	}
	return 1;
}

/* One entry of the batch; its key copied to the stack (Linux 6.1: map keys live there). */
static __always_inline void fleet_entry_run(struct sluice_fleet_entry *e,
					    const struct sluice_config *cfg, __u64 now)
{
	struct sluice_key key = e->key;
	__u32 fleet_op = e->op;
	struct table_op op;

	if (fleet_op == SLUICE_FLEET_CAP_ADMIT || fleet_op == SLUICE_FLEET_CAP_OVERFLOW ||
	    fleet_op == SLUICE_FLEET_CAP_PROVEN) {
		e->found = admission_cap(key.policy, e, now);
		e->passed = e->tat_delta = 0;
		return;
	}
	if (fleet_op == SLUICE_FLEET_CAP_AGGREGATE) {
		table_op_place(&op, cfg, &key, TABLE_AGGREGATES, cfg->aggregate_sets);
		fleet_op = SLUICE_FLEET_CAP;
	} else {
		table_op_init(&op, cfg, &key);
	}
	op.now = now;
	e->found = table_fleet_step(&op, fleet_op, e->arg, e->was_tat, e->to_tat);
	e->passed = e->found == 1 ? op.fresh.passed : 0;
	e->tat_delta = e->found == 1 ? op.fresh.tat : 0;
}

SEC("xdp")
int sluice_fleet_sync(struct xdp_md *ctx)
{
	const struct sluice_config *cfg = config_get();
	struct sluice_fleet_batch *b;
	__u32 zero = 0, i, n;
	__u64 now;

	(void)ctx;
	b = bpf_map_lookup_elem(&fleet_batch, &zero);
	if (!b)
		return XDP_ABORTED;
	if (!cfg) {
		b->e[0].found = -1;
		return XDP_PASS;
	}
	n = b->count < SLUICE_FLEET_BATCH ? b->count : SLUICE_FLEET_BATCH;
	now = clock_now();
	for (i = 0; i < n && i < SLUICE_FLEET_BATCH; i++)
		fleet_entry_run(&b->e[i], cfg, now);
	return XDP_PASS;
}

#endif /* SLUICE_BPF_FLEET_H */
