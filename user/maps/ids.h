/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rule ids (ids.c), for policy_store.
 */
#ifndef SLUICE_MAPS_IDS_H
#define SLUICE_MAPS_IDS_H

#include "pins/state.h"
#include "policy/policy.h"

/*
 * A rule keeps its id, and so its buckets, when the live policy has the same
 * rule unchanged; anything else gets a free id. The default keeps its id
 * unless its meter changes shape.
 */
int assign_ids(const struct policy_maps *m, struct policy_doc *doc, const struct policy_doc *live);

#endif /* SLUICE_MAPS_IDS_H */
