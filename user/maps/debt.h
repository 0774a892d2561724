/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rebase of limiters changed in place (debt.c), for policy_store.
 */
#ifndef SLUICE_MAPS_DEBT_H
#define SLUICE_MAPS_DEBT_H

#include "sluice.h"
#include "pins/state.h"
#include "policy/policy.h"

/*
 * Would storing doc over live change the settings of a limiter it has (the
 * default, or a rule of the same match)? Then a rebase may be due: the sync
 * program is wanted.
 */
bool debt_rebase_wanted(const struct policy_doc *doc, const struct policy_doc *live);
/*
 * The buckets a change rebases, read before doc replaces live (ids
 * assigned, the new configuration not yet live): those in debt of each
 * limiter that keeps its id with new settings, the default or a rule. One
 * walk of each table serves them all. *plan is NULL when there is nothing
 * to do (or no sync program to do it with).
 */
struct debt_plan;
int debt_plan_make(const struct policy_maps *m, const struct policy_doc *doc,
		   const struct policy_doc *live, const struct sluice_config *cfg,
		   struct debt_plan **plan);
/*
 * Once the new configuration is live: each bucket the plan read keeps the
 * share of its burst it owed then, of the new burst, and owes no more than
 * the new burst; one a packet moved since is only capped at it.
 */
int debt_plan_apply(const struct debt_plan *plan);
void debt_plan_free(struct debt_plan *plan);

#endif /* SLUICE_MAPS_DEBT_H */
