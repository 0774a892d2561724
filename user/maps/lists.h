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
 * (rules and their counters untouched); on any failure nothing changes.
 * Removing an item not on the list: -ENOENT. It costs the change, not the
 * list (list_replay), except for a deny entry shorter than a host or a
 * list near its capacity, which write the whole list again.
 */
int list_update(const struct policy_maps *m, struct list_change *c);
/*
 * The change replayed on the idle set, published, then replayed on the old
 * one (list_replay.c); -EAGAIN when it cannot be (see list_update).
 */
int list_replay(const struct policy_maps *m, struct list_change *c);

/* Are both sets of every list trie equal (the pin SLUICE_PIN_LISTS_MIRRORED)? */
bool lists_mirrored(const struct policy_maps *m);
/* They are about to differ: the pin removed before the idle set is touched. */
int lists_unmirror(const struct policy_maps *m);
/* They are equal again: the pin. */
int lists_mirror_mark(const struct policy_maps *m);
/* The idle set of every list trie made a copy of live_set, then marked so. */
int lists_mirror(const struct policy_maps *m, __u32 live_set);
/* lists_mirror of the live configuration's set. */
int lists_repair(const struct policy_maps *m);
/* The trie of entry c of the allow (or deny) list, and its SLUICE_LIST_* bit. */
int list_fd(const struct policy_maps *m, bool deny, const struct cidr *c);
__u32 list_bit(bool deny, const struct cidr *c);
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
