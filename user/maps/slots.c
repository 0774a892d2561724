// SPDX-License-Identifier: GPL-2.0
/*
 * The policy slots: one set of SLUICE_MAX_POLICIES per generation, the
 * default in slot 0 and rule i in slot i + 1.
 */
#include <errno.h>
#include <bpf/bpf.h>
#include "maps/percpu.h"
#include "maps/slots.h"

int slot_read(const struct policy_maps *m, __u32 set, __u32 slot, struct sluice_policy *p)
{
	__u32 index = set * SLUICE_MAX_POLICIES + slot;

	return bpf_map_lookup_elem(m->policies, &index, p) ? -errno : 0;
}

int slot_write(const struct policy_maps *m, __u32 set, __u32 slot, const struct sluice_policy *p)
{
	__u32 index = set * SLUICE_MAX_POLICIES + slot;

	return bpf_map_update_elem(m->policies, &index, p, BPF_ANY) ? -errno : 0;
}

/* What slot holds for doc: its compiled policy with its id, or zeros past the rules. */
int slot_policy(const struct policy_doc *doc, __u32 slot, struct sluice_policy *p)
{
	const struct rule *r = slot ? &doc->rules[slot - 1] : NULL;

	memset(p, 0, sizeof(*p));
	if ((int)slot > doc->n_rules)
		return 0;
	*p = r ? r->policy : doc->dflt_policy;
	p->id = r ? r->id : doc->dflt_id;
	/* policy_build refuses a rate of 0: this limiter was never compiled. */
	return p->rate_amount ? 0 : -EINVAL;
}

/* Slot 0 is the default, rule i is slot i + 1; unused slots are zeroed. */
int write_slots(const struct policy_maps *m, const struct policy_doc *doc, __u32 set)
{
	struct sluice_policy p;
	__u32 slot;
	int err;

	for (slot = 0; slot < SLUICE_MAX_POLICIES; slot++) {
		err = slot_policy(doc, slot, &p) ?: slot_write(m, set, slot, &p);
		/* The slot's counts belonged to whatever it held before. */
		if (!err)
			err = stats_clear_at(m->rule_stats, set * SLUICE_MAX_POLICIES + slot);
		if (err)
			return err;
	}
	return 0;
}
