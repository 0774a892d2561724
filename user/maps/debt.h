/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The debt cap of limiters changed in place (debt.c), for policy_store.
 */
#ifndef SLUICE_MAPS_DEBT_H
#define SLUICE_MAPS_DEBT_H

#include "sluice.h"
#include "pins/state.h"
#include "policy/policy.h"

/*
 * Would storing doc over live change the settings of a limiter it has (the
 * default, or a rule of the same match)? Then a cap may be due: the sync
 * program is wanted.
 */
bool debt_cap_wanted(const struct policy_doc *doc, const struct policy_doc *live);
/*
 * After doc replaced live (ids assigned, the new configuration live): no
 * bucket of a limiter that kept its id with new settings, the default or a
 * rule, owes more than its new burst. One walk of each table serves them all.
 */
int changed_debt_cap(const struct policy_maps *m, const struct policy_doc *doc,
		     const struct policy_doc *live, const struct sluice_config *cfg);

#endif /* SLUICE_MAPS_DEBT_H */
