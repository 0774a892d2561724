/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A reference model of the datapath's verdicts, written from the
 * definitions rather than from bpf/ or include/: plain token buckets
 * holding a level in meter time units, refilled one unit per unit of time
 * up to their capacity, from which a packet takes its cost only when all of
 * its buckets have that much. A source's own meter may instead be a fixed
 * window, a sliding-window counter or a warm-up (docs/algorithms.md), each
 * kept as the counts or permits its definition speaks of. No per-CPU
 * cache, no table, no compare-and-swap: whatever the datapath does to go
 * fast must not change what it decides.
 *
 * The model takes each limiter's quantised parameters (interval, limit,
 * window, permits) as the user library computed them; which buckets a
 * policy change keeps is the model's own bookkeeping (instances), never the
 * datapath's rule ids: a rule of a live rule's match stays its instance
 * while its meter keeps its shape, else it is a new one (the caller's, by
 * model_meter_same), and the default a new one whenever its meter changes
 * shape (docs/design.md, "What a change does to a source's state").
 */
#ifndef SLUICE_TEST_MODEL_H
#define SLUICE_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"

/* One bucket's parameters: capacity `limit`, a packet costs `interval` (or per byte). */
struct model_limiter {
	uint64_t interval;
	uint64_t limit;
	bool bytes; /* cost is ceil(frame bytes * interval / 2^SLUICE_BYTE_SHIFT) */
};

struct model_aggregate {
	uint8_t family;
	uint8_t prefix_len;
	struct model_limiter lim;
};

/* The default (is_default) or a rule, as the model meters it. */
struct model_rule {
	unsigned int instance; /* same instance: same buckets; the model's, not the datapath's id */
	bool is_default;
	/* Match */
	uint8_t family, cidr_len, proto;
	uint32_t cidr[4]; /* network byte order */
	uint16_t dport_lo, dport_hi;
	bool syn;
	/* Match classes: 0-0, 0 or false is any. */
	uint16_t sport_lo, sport_hi;
	uint8_t tcp_mask, tcp_value; /* the flags byte & mask == value */
	bool icmp_type_on, icmp_code_on;
	uint8_t icmp_type, icmp_code;
	uint16_t len_lo, len_hi; /* the whole frame's bytes, counted at most as 65535 */
	uint8_t dst_len;	 /* with dst_on: the destination's CIDR, of the rule's family */
	bool dst_on;
	uint32_t dst[4];
	/* Buckets */
	uint8_t ipv4_prefix, ipv6_prefix;
	uint8_t key; /* MODEL_KEY_*: the own bucket's, masked to the prefix */
	struct model_limiter own, admit, overflow;
	uint64_t initial; /* a new source's level, in meter time units */
	/*
	 * The source's own meter (enum sluice_meter). Windows: own.limit is
	 * the cost per window, own.interval what one packet (or byte) costs,
	 * window its length in meter time. Warm-up: own.interval is the
	 * stable interval, warm_max the permits stored at most.
	 */
	uint8_t meter;
	uint64_t window;
	uint32_t warm_max;
	int n_aggregates;
	struct model_aggregate agg[SLUICE_MAX_AGGREGATES];
	/* Over the limit */
	uint8_t action, dscp;
	bool mark_dscp, mark_ecn;
};

/* model_rule.key: what a rule's own buckets are keyed on (--key). */
enum model_key {
	MODEL_KEY_SRC,
	MODEL_KEY_DST,
	MODEL_KEY_PAIR,
};

struct model_cidr {
	uint8_t family, len;
	uint32_t addr[4];
};

struct model_packet {
	uint8_t family; /* 4 or 6 */
	uint32_t addr[4];
	uint8_t proto; /* IPPROTO_UDP, _TCP, _ICMP or _ICMPV6 */
	uint16_t dport;
	bool syn;
	uint16_t sport;		      /* UDP and TCP */
	uint8_t tcp_flags;	      /* TCP: the flags byte */
	uint8_t icmp_type, icmp_code; /* ICMP and ICMPv6 */
	uint32_t dst[4];	      /* the destination address, network byte order */
	uint8_t tos;		      /* IPv4 TOS or IPv6 traffic class */
	uint32_t len;		      /* whole frame, every buffer */
};

enum model_verdict {
	MV_PASS,  /* within its limits */
	MV_DROP,  /* over, action drop (or ECN mark of a Not-ECT packet) */
	MV_WOULD, /* over, dry run: passed and counted */
	MV_MARK,  /* over, marked and passed */
	MV_ALLOW, /* on the allow list */
	MV_DENY,  /* on the deny list */
	MV_ERROR, /* the datapath answered something else */
};

const char *model_verdict_name(enum model_verdict v);

/* How a policy change treats the debt of a bucket it keeps. */
enum model_debt {
	/* Capped at the new burst when the change is made, then refills (docs/design.md). */
	MODEL_DEBT_CAP_AT_CHANGE,
	/* Capped at the new burst when a packet next meets the bucket (gcra.h's cap alone). */
	MODEL_DEBT_CAP_AT_TOUCH,
	/* Kept whole: the TAT as it was, whatever the new burst (the code before issue 10). */
	MODEL_DEBT_KEPT,
};

struct model_bucket;

struct model {
	struct model_rule rules[SLUICE_MAX_POLICIES]; /* [0] is the default */
	int n_rules;				      /* including the default */
	struct model_cidr *allow, *deny;
	size_t n_allow, n_deny;
	struct model_bucket *buckets;
	size_t n_buckets, cap_buckets;
	enum model_debt debt;
	unsigned int default_instance; /* the default's buckets; a new one when it changes shape */
	int last_meter;		       /* the meter of the rule that took the last packet, or -1 */
};

void model_init(struct model *m, enum model_debt debt);
void model_free(struct model *m);
/*
 * Makes rules (rules[0] the default) and lists the live policy at meter
 * time now. Buckets of instances still present are kept, under the new
 * parameters; the others are forgotten. The default's instance is the
 * model's: rules[0].instance is ignored. Returns 1 when the default
 * started afresh (its meter changed shape), 0, or -1 on error.
 */
int model_set_policy(struct model *m, const struct model_rule *rules, int n,
		     const struct model_cidr *allow, size_t n_allow, const struct model_cidr *deny,
		     size_t n_deny, uint64_t now);
/*
 * Whether a limiter of meter b keeps the sources of meter a: GCRA to GCRA;
 * a window to the same window of the same algorithm and unit; a warm-up to
 * the same rate and warm-up.
 */
bool model_meter_same(const struct model_rule *a, const struct model_rule *b);
/* Forgets every bucket, as a fresh attach would (instances stay). */
void model_forget(struct model *m);
/* The verdict for one packet at meter time now; *tos_out is the marked class (MV_MARK). */
enum model_verdict model_packet(struct model *m, const struct model_packet *pkt, uint64_t now,
				uint8_t *tos_out);
/* A limiter's cost for a frame of len bytes. */
uint64_t model_cost(const struct model_limiter *l, uint32_t len);
/*
 * Fills a model rule from a datapath policy slot's parameters. A byte
 * bucket holds what a frame of its burst costs; stored_limits: the limit
 * as the user library rounded it instead (to tell rounding apart).
 */
void model_rule_from_policy(struct model_rule *r, const struct sluice_policy *p, bool is_default,
			    unsigned int instance, bool stored_limits);

#endif /* SLUICE_TEST_MODEL_H */
