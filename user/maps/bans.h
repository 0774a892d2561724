/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The penalty box's map (`bans`, struct sluice_ban): the datapath bans,
 * userspace reads the bans, lifts them (deny del) and keeps them across a
 * policy change (bans_carry).
 */
#ifndef SLUICE_MAPS_BANS_H
#define SLUICE_MAPS_BANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "policy/policy.h"

struct ban_entry {
	struct sluice_key key;
	struct sluice_ban ban;
};

struct ban_list {
	struct ban_entry *items;
	size_t count;
};

/* The key as a CIDR: its family, prefix and masked address. */
void ban_key_cidr(const struct sluice_key *key, struct cidr *c);
/* The bans in force at now_ns (CLOCK_MONOTONIC), in key order; fd < 0 reads none. */
int bans_read(int fd, uint64_t now_ns, struct ban_list *out);
void ban_list_free(struct ban_list *l);
/*
 * Lifts the bans (in force or not) whose key and a CIDR of l overlap, one
 * holding the other: their entries go, escalation memory with them. One
 * walk of the map, however many CIDRs. Returns how many, or -errno.
 */
int bans_lift(int fd, const struct cidr_list *l);
/*
 * For each CIDR of l, how many of the bans (bans_read) overlap it, in
 * counts[i]: 0, or -ENOMEM.
 */
int bans_overlapping(const struct ban_list *bans, const struct cidr_list *l, int *counts);
/*
 * After doc replaced live (policy_store): a rule keeps its bans and their
 * memory, under its id or a new one (a meter of another shape), when it
 * still bans with the same prefixes (the same match is the same rule); the
 * bans of a rule that is gone or bans no more are lifted, so a retired id
 * never bans again.
 */
int bans_carry(int fd, const struct policy_doc *doc, const struct policy_doc *live);
/* Why the key is banned: "1501 refused in 10s, level 2, for 20s". */
void ban_describe(char *buf, size_t len, const struct sluice_ban *b);

#endif /* SLUICE_MAPS_BANS_H */
