/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy slots (slots.c), for the files of maps/.
 */
#ifndef SLUICE_MAPS_SLOTS_H
#define SLUICE_MAPS_SLOTS_H

#include "sluice.h"
#include "pins/state.h"
#include "policy/policy.h"

int slot_read(const struct policy_maps *m, __u32 set, __u32 slot, struct sluice_policy *p);
int slot_write(const struct policy_maps *m, __u32 set, __u32 slot, const struct sluice_policy *p);
/* What slot holds for doc: its compiled policy with its id, or zeros past the rules. */
int slot_policy(const struct policy_doc *doc, __u32 slot, struct sluice_policy *p);
/* Every slot of set from doc; their counts start again at 0. */
int write_slots(const struct policy_maps *m, const struct policy_doc *doc, __u32 set);

#endif /* SLUICE_MAPS_SLOTS_H */
