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
/* A change to the allow or deny list, and what went wrong with it. */
struct list_change {
	bool deny;
	bool add;		 /* else remove */
	struct cidr_list *items; /* sorted in place */
	size_t missing;		 /* -ENOENT: index in items of one not on the list */
	char why[160];		 /* -ENOSPC: which list would not fit */
};

/*
 * Adds items to the list, or removes them, in one step like policy_store
 * (rules and their counters untouched), in time linear in the list; on any
 * failure nothing changes. Removing an item not on the list: -ENOENT.
 */
int list_update(const struct policy_maps *m, struct list_change *c);
/*
 * Do doc's lists fit the tries? Each set of a trie holds half of it, so a
 * whole new set always fits beside the live one. -ENOSPC, saying which list
 * in why (if not NULL), when one would not.
 */
int lists_fit(const struct policy_maps *m, const struct policy_doc *doc, char *why, size_t len);

/*
 * The live configuration, from its pin (config_live: read permission
 * suffices), else, for older state, the map-in-map's slot (CAP_SYS_ADMIN).
 */
int config_read(const struct policy_maps *m, struct sluice_config *cfg);
/*
 * The sources the table holds at most: what attach was given (cfg, as
 * config_read gave it), or for state from before cfg said, the table's size.
 */
int table_max_sources(const struct policy_maps *m, const struct sluice_config *cfg,
		      uint64_t *max_sources);
/* The layout version of the live configuration, whatever its layout (for status). */
int config_layout(const struct policy_maps *m, __u32 *layout);
/*
 * Publishes cfg in one step, with the next generation number: raises the
 * generation first (retiring every cached over-limit decision), then swaps
 * the fully written configuration in and pins it as config_live
 * (when m->dir is a directory).
 */
int config_write(const struct policy_maps *m, struct sluice_config *cfg);

/*
 * Publishes the live configuration again, unchanged, as a new generation:
 * for a change outside it (upgrade swaps the program), which retires the
 * cached decisions and moves the generation and changed_at like any other.
 */
int config_republish(const struct policy_maps *m);

/* For commands: policy_load/policy_store, printing one line on failure; an exit status. */
int policy_load_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists);
int policy_store_cmd(const char *cmd, struct state *st, struct policy_doc *doc, bool lists);

#endif /* SLUICE_MAPS_POLICY_MAPS_H */
