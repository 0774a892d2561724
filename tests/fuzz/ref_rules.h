/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A second, deliberately plain reading of sluice(8)'s "Rules": which rule a
 * packet selects (the longest CIDR holding its source, then the narrowest
 * class by the documented weights, then the rule added first) and the
 * bucket key that rule gives it (source, destination or pair, each masked
 * to the rule's prefix). Rules are written here as data, apart from the
 * policy text the datapath is given, so the two can disagree.
 */
#ifndef SLUICE_FUZZ_REF_RULES_H
#define SLUICE_FUZZ_REF_RULES_H

#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "reference.h"

enum ref_key_kind { REF_KEY_SRC, REF_KEY_DST, REF_KEY_PAIR };

struct ref_range {
	int lo, hi; /* 0 and 0: not matched on */
};

struct ref_rule {
	int id;
	int family;
	const char *cidr; /* the source CIDR, "10.1.0.0/16" */
	int proto;	  /* 0: any */
	struct ref_range dport, sport, length;
	int flags_mask, flags;	  /* mask 0: not matched on */
	int icmp_type, icmp_code; /* -1: not matched on */
	const char *dst;	  /* NULL: not matched on */
	enum ref_key_kind key;
	int prefix; /* the rule's prefix for its family */
};

/* The rule of rules[0..n) the packet of frame length len selects, or NULL (the default). */
const struct ref_rule *ref_rule_pick(const struct ref_rule *rules, size_t n,
				     const struct ref_packet *p, size_t len);
/* The bucket key rule r (NULL: the default, id 0, the source /32 or /64) gives the packet. */
void ref_rule_key(const struct ref_rule *r, const struct ref_packet *p, struct sluice_key *k);

#endif /* SLUICE_FUZZ_REF_RULES_H */
