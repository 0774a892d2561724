/* SPDX-License-Identifier: GPL-2.0 */
/* From a parsed packet to the policy that applies and the bucket key. */
#ifndef SLUICE_BPF_CLASSIFY_H
#define SLUICE_BPF_CLASSIFY_H

#include "maps.h"
#include "parse.h"

static __always_inline const struct sluice_config *config_get(void)
{
	__u32 zero = 0;
	void *slot;

	slot = bpf_map_lookup_elem(&config, &zero);
	if (!slot)
		return NULL;
	return bpf_map_lookup_elem(slot, &zero);
}

/*
 * The key's first four bytes as one word. Written field by field, they
 * would later be read back as a word by key_equal(), and a narrow store
 * feeding a wide load stalls the CPU's store forwarding.
 */
static __always_inline __u32 key_head(__u8 family, __u8 prefix_len, __u16 policy)
{
	union {
		struct {
			__u8 family;
			__u8 prefix_len;
			__u16 policy;
		} fields;
		__u32 word;
	} head = { .fields = { family, prefix_len, policy } };

	return head.word;
}

/* The source masked to the policy's prefix: one bucket per prefix. */
static __always_inline void classify_key(struct sluice_key *key, const struct packet *pkt,
					 const struct sluice_config *cfg)
{
	__u32 *head = (__u32 *)key;

	if (pkt->family == SLUICE_FAMILY_IPV4) {
		*head = key_head(SLUICE_FAMILY_IPV4, cfg->ipv4_prefix, 0);
		key->addr[0] = pkt->addr[0] & cfg->ipv4_mask;
		key->addr[1] = 0;
		key->addr[2] = 0;
		key->addr[3] = 0;
		return;
	}
	*head = key_head(SLUICE_FAMILY_IPV6, cfg->ipv6_prefix, 0);
	key->addr[0] = pkt->addr[0] & cfg->ipv6_mask[0];
	key->addr[1] = pkt->addr[1] & cfg->ipv6_mask[1];
	key->addr[2] = pkt->addr[2] & cfg->ipv6_mask[2];
	key->addr[3] = pkt->addr[3] & cfg->ipv6_mask[3];
}

#endif /* SLUICE_BPF_CLASSIFY_H */
