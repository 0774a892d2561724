/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy of an interface as the operator sees it (a default, rules,
 * allow and deny lists), and its translation to what the datapath reads:
 * fixed-point struct sluice_policy slots, rule tries and list tries.
 */
#ifndef SLUICE_POLICY_POLICY_H
#define SLUICE_POLICY_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"
#include "values/aggregate.h"
#include "values/ban.h"
#include "values/cidr.h"
#include "values/classes.h"
#include "values/rate.h"

/* One limiter as typed. */
struct settings {
	struct rate rate;
	struct burst burst; /* value 0: one second of rate */
	uint8_t algorithm;  /* SLUICE_METER_GCRA, _FIXED_WINDOW or _SLIDING_WINDOW */
	uint64_t window_ns; /* windows: 0 means the rate's period */
	uint64_t warmup_ns; /* GCRA: 0 means no warm-up */
	uint32_t action;
	uint8_t dscp;
	bool mark_dscp;
	bool mark_ecn;
	unsigned int ipv4_prefix;
	unsigned int ipv6_prefix;
	uint8_t key_kind; /* KEY_SRC, KEY_DST or KEY_PAIR: what a bucket is keyed on (--key) */
	/* Typed, even at the default: a rule of the other family refuses them. */
	bool ipv4_prefix_given;
	bool ipv6_prefix_given;
	/* Table pressure; zero values mean the defaults. */
	struct rate new_sources; /* new buckets per period (default 10k/s) */
	struct rate overflow;	 /* the shared bucket of refused sources (default: the rate) */
	struct burst initial;	 /* credit of a new bucket (default: the whole burst) */
	bool on_full_pass;	 /* a failed insert passes (default: it is dropped) */
	/* --prove: PROVE_OFF, or answer new sources' SYNs with cookies (bpf/prove.h). */
	uint8_t prove;
	struct rate proven_sources; /* buckets per period for proven sources (default 10k/s) */
	/* Limits on wider prefixes, shared by the sources in each. */
	struct aggregate aggregates[SLUICE_MAX_AGGREGATES];
	unsigned int n_aggregates;
	/* The penalty box (--ban-after ...); count 0: none. Zero in the others: the default. */
	struct ban_after ban_after;
	uint64_t ban_for_ns;
	uint32_t ban_escalate_milli;
	uint64_t ban_memory_ns;
	uint64_t ban_max_ns;
};

/* What an untyped ban setting is. */
#define BAN_FOR_DEFAULT_NS    (60 * NSEC_PER_SEC)
#define BAN_MEMORY_DEFAULT_NS (3600 * NSEC_PER_SEC)
#define BAN_MAX_DEFAULT_NS    (86400 * NSEC_PER_SEC)
#define BAN_ESCALATE_DEFAULT  1000

/* The window a window algorithm counts over (the rate's period unless typed); 0 for GCRA. */
static inline uint64_t settings_window_ns(const struct settings *s)
{
	if (s->algorithm == SLUICE_METER_GCRA)
		return 0;
	return s->window_ns ?: s->rate.period_ns;
}

/* New buckets per second a rule admits unless told otherwise. */
#define DEFAULT_NEW_SOURCES_PER_SEC 10000
/* And for sources that proved their address (--prove). */
#define DEFAULT_PROVEN_SOURCES_PER_SEC 10000

/* settings.key_kind, in the order of --key's words */
enum key_kind {
	KEY_SRC,
	KEY_DST,
	KEY_PAIR,
};

/* "src", "dst" or "pair"; and the kind a policy slot's flags say. */
const char *key_kind_word(uint8_t kind);
uint8_t policy_key_kind(const struct sluice_policy *p);

/* settings.prove */
enum prove_mode {
	PROVE_OFF,
	PROVE_TCP,	  /* a SYN the new-source budget refuses gets a cookie SYN-ACK */
	PROVE_TCP_ALWAYS, /* every SYN of a source without a bucket does */
};

/*
 * What a rule applies to: a source CIDR and an optional class. Zero in a
 * field is "any" (show prints what is not).
 */
struct match {
	struct cidr cidr;
	uint8_t proto;		     /* 0: any */
	uint16_t dport_lo, dport_hi; /* 0-0: any */
	bool syn;
	uint16_t sport_lo, sport_hi; /* 0-0: any */
	struct tcp_flags_match tcp_flags;
	struct icmp_match icmp;
	uint16_t len_lo, len_hi; /* frame bytes; 0-0: any */
	struct cidr dst;	 /* family 0: any */
};

struct rule {
	struct match match;
	struct settings settings;
	uint16_t id; /* bucket id space; assigned when stored */
	/* settings and match compiled (doc_add_rule): what its slot holds, but the id */
	struct sluice_policy policy;
};

/* A list entry: a CIDR and, on the deny list, when it stops denying. */
struct list_entry {
	struct cidr cidr;
	uint64_t expires_ns; /* CLOCK_MONOTONIC, as the datapath reads it; 0: never */
};

struct cidr_list {
	struct list_entry *items;
	size_t count, capacity;
};

/*
 * What attach fixes for the life of the pinned state: the XDP mode and the
 * size of the set tables. A policy file may state them (its 'attach'
 * statement); apply only checks them, attach -f uses them.
 */
struct attach_settings {
	uint32_t xdp_flags;   /* XDP_FLAGS_DRV_MODE or _SKB_MODE; 0: native when the driver can */
	uint64_t max_sources; /* SLUICE_DEFAULT_MAX_SOURCES unless stated */
	bool mode_given;      /* stated in the file (or, for show, read from the kernel) */
	bool max_sources_given;
	/* The group that may read the pins (--group; for show, the directory's). */
	unsigned int group;
	bool group_given;
};

struct policy_doc {
	struct attach_settings attach;
	struct settings dflt;
	struct sluice_policy dflt_policy; /* dflt compiled (doc_set_default), but the id */
	struct rule rules[SLUICE_MAX_POLICIES - 1];
	int n_rules;
	struct cidr_list allow, deny;
	/* The default's bucket id: 0 at attach, a new one when its meter changes shape. */
	uint16_t dflt_id;
	uint16_t next_id;
	bool ids_wrapped; /* next_id has wrapped: old ids may still have buckets */
};

void settings_default(struct settings *s);
/* Nanoseconds per jiffy, the resolution of the coarse clock. */
uint64_t jiffy_ns(void);
/* Validates one limiter and precomputes everything the fast path needs. */
int policy_build(struct sluice_policy *p, const struct settings *s, const struct match *m,
		 uint16_t id, const char **why);
void policy_settings(const struct sluice_policy *p, struct settings *s, struct match *m);
/* The penalty box's part of both (policy/ban.c). */
int ban_build(struct sluice_policy *p, const struct settings *s, const char **why);
void ban_settings(const struct sluice_policy *p, struct settings *s);
bool ban_settings_equal(const struct settings *a, const struct settings *b);

bool match_equal(const struct match *a, const struct match *b);
/*
 * Does new read a slot exactly as old wrote it (docs/design.md, "What a
 * change does to a source's state")? GCRA for GCRA; a window for the same
 * kind, length and unit; a warm-up for the same rate and warm-up.
 */
bool policy_meter_same(const struct sluice_policy *old, const struct sluice_policy *new);
bool settings_equal(const struct settings *a, const struct settings *b);
/* The rule with exactly this match, or -1. */
int doc_find_rule(const struct policy_doc *doc, const struct match *m);
bool cidr_contains(const struct cidr *outer, const struct cidr *inner);
/* Address order: family, then address, then prefix (a list's sort). */
int cidr_cmp(const struct cidr *a, const struct cidr *b);
/*
 * The rules covering CIDR c, most specific first (longer CIDR, then narrower
 * L4 class, then earlier): indexes into doc->rules. Returns the count, or
 * -E2BIG past SLUICE_MAX_CANDIDATES.
 */
int doc_group(const struct policy_doc *doc, const struct cidr *c, int *members);
/*
 * A document's limiters are compiled once, as they are set, into what the
 * policy maps hold; a setting that does not compile is refused and leaves
 * the document as it was. doc_add_rule does not look for a rule with the
 * same match (doc_find_rule).
 */
int doc_set_default(struct policy_doc *doc, const struct settings *s, const char **why);
int doc_add_rule(struct policy_doc *doc, const struct settings *s, const struct match *m,
		 const char **why);
/* How many of doc's limiters, the default and the rules, prove sources (--prove). */
int doc_provers(const struct policy_doc *doc);
/* Checks what spans rules before anything is written: a default, and rule overlaps. */
int doc_validate(const struct policy_doc *doc, const char **why);

void doc_init(struct policy_doc *doc);
void doc_free(struct policy_doc *doc);
/* Adds an entry that never expires. */
int cidr_list_add(struct cidr_list *l, const struct cidr *c);
int cidr_list_add_until(struct cidr_list *l, const struct cidr *c, uint64_t expires_ns);
/* The later of two expiries; 0, never, is the latest. */
uint64_t expiry_later(uint64_t a, uint64_t b);
/* Has a timed entry expired by now_ns (CLOCK_MONOTONIC)? */
bool entry_expired(const struct list_entry *e, uint64_t now_ns);
/* Sorted, without duplicates: a CIDR given twice keeps the later expiry. */
void cidr_list_sort(struct cidr_list *l);
/* Is c an entry of l (sorted: cidr_list_sort)? A binary search. */
bool cidr_list_has(const struct cidr_list *l, const struct cidr *c);
/* The same entries with the same expiries (both sorted)? */
bool cidr_list_equal(const struct cidr_list *a, const struct cidr_list *b);
/*
 * Sorted a plus b (add), or a minus b (!add: every item of b must be in a,
 * else -ENOENT and *missing is its index), into out; linear. a and b are
 * sorted without duplicates (cidr_list_sort). An entry of both keeps the
 * later expiry: adding never shortens a ban, and a permanent add makes it
 * permanent.
 */
int cidr_list_merge(const struct cidr_list *a, const struct cidr_list *b, bool add,
		    struct cidr_list *out, size_t *missing);

/* The index in doc->rules of the rule with this policy id: -1 for the default, -2 when gone. */
int doc_rule_index(const struct policy_doc *doc, uint16_t policy);
/* The slot compiled for the rule with this policy id (the default's for 0); -ENOENT when gone. */
int rule_policy(const struct policy_doc *doc, uint16_t policy, struct sluice_policy *p);
/* Windows and warm-ups are bounded: the longest either may be. */
#define WINDOW_MIN_NS (NSEC_PER_SEC / 1000)
#define WINDOW_MAX_NS (24 * 3600 * NSEC_PER_SEC)

#endif /* SLUICE_POLICY_POLICY_H */
