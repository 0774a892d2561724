/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A changed default's debt cap (debt.c), for policy_store.
 */
#ifndef SLUICE_MAPS_DEBT_H
#define SLUICE_MAPS_DEBT_H

#include "sluice.h"
#include "pins/state.h"
#include "policy/policy.h"

/*
 * When doc changes the live default's settings but keeps its id, no bucket of
 * it owes more than the new burst afterwards (live: the policy before).
 */
int default_debt_cap(const struct policy_maps *m, const struct policy_doc *doc,
		     const struct policy_doc *live, const struct sluice_config *cfg);

#endif /* SLUICE_MAPS_DEBT_H */
