/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From a parsed packet and the policy that governs it to its bucket key.
 * Apart from classify.h, which needs the datapath's maps, so that the
 * floor programs (tools/bench/floor.bpf.c) build their keys with this same code.
 */
#ifndef SLUICE_BPF_KEY_H
#define SLUICE_BPF_KEY_H

#include "sluice.h"
#include "table_hash.h"
#include "parse.h"

/* The source masked to the policy's prefix, in the policy's id space. */
static __always_inline void classify_key(struct sluice_key *key, const struct packet *pkt,
					 const struct sluice_policy *p)
{
	__u32 *head = (__u32 *)key;

	if (pkt->family == SLUICE_FAMILY_IPV4) {
		*head = sluice_key_head(SLUICE_FAMILY_IPV4, p->ipv4_prefix, p->id);
		key->addr[0] = pkt->addr[0] & p->ipv4_mask;
		key->addr[1] = 0;
		key->addr[2] = 0;
		key->addr[3] = 0;
		return;
	}
	*head = sluice_key_head(SLUICE_FAMILY_IPV6, p->ipv6_prefix, p->id);
	key->addr[0] = pkt->addr[0] & p->ipv6_mask[0];
	key->addr[1] = pkt->addr[1] & p->ipv6_mask[1];
	key->addr[2] = pkt->addr[2] & p->ipv6_mask[2];
	key->addr[3] = pkt->addr[3] & p->ipv6_mask[3];
}

#endif /* SLUICE_BPF_KEY_H */
