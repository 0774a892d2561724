/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The allow and deny lists in their tries (lists.c).
 */
#ifndef SLUICE_MAPS_LISTS_H
#define SLUICE_MAPS_LISTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "pins/state.h"
#include "policy/policy.h"

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

/* Both lists of set, as of now_ns (expired deny entries left out), sorted, into doc. */
int lists_load(const struct policy_maps *m, __u32 set, uint64_t now_ns, struct policy_doc *doc);
/* Writes doc's lists into set (emptied: the set is known empty), counting them in cfg. */
int write_lists(const struct policy_maps *m, const struct policy_doc *doc, __u32 set,
		struct sluice_config *cfg, bool emptied);
/* Empties set of every list trie. */
int lists_clear(const struct policy_maps *m, __u32 set);

#endif /* SLUICE_MAPS_LISTS_H */
