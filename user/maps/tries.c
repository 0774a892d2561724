// SPDX-License-Identifier: GPL-2.0
/*
 * The tries of rules and lists as bytes: their keys, and walks over one set of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include "maps/tries.h"

void lpm_key_of(union lpm_key *k, const struct cidr *c, __u32 set)
{
	memset(k, 0, sizeof(*k));
	if (c->family == SLUICE_FAMILY_IPV4) {
		k->v4.prefixlen = 32 + c->len;
		k->v4.set = set;
		k->v4.addr = c->addr[0];
		return;
	}
	k->v6.prefixlen = 32 + c->len;
	k->v6.set = set;
	memcpy(k->v6.addr, c->addr, sizeof(k->v6.addr));
}

void cidr_of(struct cidr *c, const union lpm_key *k, int family)
{
	memset(c, 0, sizeof(*c));
	c->family = (uint8_t)family;
	c->len = (uint8_t)(k->v4.prefixlen - 32);
	if (family == SLUICE_FAMILY_IPV4)
		c->addr[0] = k->v4.addr;
	else
		memcpy(c->addr, k->v6.addr, sizeof(c->addr));
}

static int key_push(struct key_vec *v, const union lpm_key *k)
{
	union lpm_key *grown;

	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		grown = realloc(v->keys, v->cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		v->keys = grown;
	}
	v->keys[v->n++] = *k;
	return 0;
}

/*
 * The keys of one set of a trie, and (if other is not NULL) those of the
 * other set, in one walk. An LPM trie's get_next_key restarts from the
 * first key when the previous one is gone, so keys are collected before
 * any is deleted. On failure the caller frees what was collected.
 */
int trie_walk(int fd, __u32 set, struct key_vec *in, struct key_vec *other)
{
	union lpm_key key, next;
	void *prev = NULL;
	int err = 0;

	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.v4.set == set)
			err = key_push(in, &key);
		else if (other)
			err = key_push(other, &key);
	}
	if (!err && errno != ENOENT)
		err = -errno;
	return err;
}

int trie_keys(int fd, __u32 set, union lpm_key **keys, size_t *n)
{
	struct key_vec v = { 0 };
	int err = trie_walk(fd, set, &v, NULL);

	if (err)
		free(v.keys);
	*keys = err ? NULL : v.keys;
	*n = err ? 0 : v.n;
	return err;
}

/* Empties one set of a trie. */
int trie_clear(int fd, __u32 set)
{
	union lpm_key *keys;
	size_t i, n;
	int err;

	err = trie_keys(fd, set, &keys, &n);
	for (i = 0; !err && i < n; i++)
		if (bpf_map_delete_elem(fd, &keys[i]) && errno != ENOENT)
			err = -errno;
	free(keys);
	return err;
}

/* A map's max_entries, as sized at load. */
int map_entries(int fd, __u32 *entries)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*entries = info.max_entries;
	return 0;
}
