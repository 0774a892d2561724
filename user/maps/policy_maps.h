/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A policy in its maps: read back whole (never a mix of two
 * configurations), stored in one step (two sets, one flip), and list
 * changes in time linear in the list.
 */
#ifndef SLUICE_MAPS_POLICY_MAPS_H
#define SLUICE_MAPS_POLICY_MAPS_H

#include <stdbool.h>
#include "sluice.h"
#include "maps/config.h"
#include "maps/lists.h"
#include "pins/state.h"
#include "policy/policy.h"

/*
 * Reads the live policy back from the maps (allow and deny too with lists),
 * all of one configuration, never a mix (see read_consistent). Under
 * sustained writes it waits for the command lock, shared.
 */
int policy_load(const struct policy_maps *m, struct policy_doc *doc, bool lists);
/* The same, with the configuration it was read from. */
int policy_load_cfg(const struct policy_maps *m, struct policy_doc *doc, bool lists,
		    struct sluice_config *cfg);
/*
 * The policy (no lists) and, of the same configuration, each slot's
 * counters: counts[0] the default's, counts[i] rule i's (room for
 * SLUICE_MAX_POLICIES).
 */
int policy_load_counts(const struct policy_maps *m, struct policy_doc *doc,
		       struct sluice_config *cfg, struct sluice_stats *counts);
/*
 * Makes doc the live policy in one step: writes the idle set of policies
 * and rules (and, with lists, of allow and deny), then flips the
 * configuration to it. Rules keep their ids when unchanged from the live
 * policy; changed and new rules get fresh ones.
 */
int policy_store(const struct policy_maps *m, struct policy_doc *doc, bool lists);
/* The live configuration and default policy (slot 0), for status. */
int policy_default(const struct policy_maps *m, struct sluice_config *cfg, struct sluice_policy *p);
/*
 * The first configuration of freshly loaded maps (with the set tables'
 * shape, the max_sources they were sized for, and hash seeds), then doc.
 */
int policy_create(const struct policy_maps *m, uint64_t max_sources, struct policy_doc *doc);
/* For commands: policy_load/policy_store, printing one line on failure; an exit status. */
int policy_load_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists);
int policy_store_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists);

#endif /* SLUICE_MAPS_POLICY_MAPS_H */
