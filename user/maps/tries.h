/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The tries of rules and lists as bytes (tries.c), for the files of maps/.
 */
#ifndef SLUICE_MAPS_TRIES_H
#define SLUICE_MAPS_TRIES_H

#include <stddef.h>
#include "sluice.h"
#include "policy/policy.h"

/* Either trie key, seen as bytes: prefixlen and set lead both. */
union lpm_key {
	struct sluice_lpm_v4 v4;
	struct sluice_lpm_v6 v6;
};

/* Keys collected by a walk. */
struct key_vec {
	union lpm_key *keys;
	size_t n, cap;
};

/* The key of CIDR c in set. */
void lpm_key_of(union lpm_key *k, const struct cidr *c, __u32 set);
/* The CIDR of key k, of family. */
void cidr_of(struct cidr *c, const union lpm_key *k, int family);
/*
 * The keys of set into in and, when other is not NULL, those of the other
 * set into other, in one walk; on failure the caller frees both.
 */
int trie_walk(int fd, __u32 set, struct key_vec *in, struct key_vec *other);
/* The keys of set, allocated (*keys, freed by the caller). */
int trie_keys(int fd, __u32 set, union lpm_key **keys, size_t *n);
/* Empties one set of a trie. */
int trie_clear(int fd, __u32 set);
/* A map's max_entries, as sized at load. */
int map_entries(int fd, __u32 *entries);

#endif /* SLUICE_MAPS_TRIES_H */
