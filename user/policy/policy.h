/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy of an interface as the operator sees it (a default, rules,
 * allow and deny lists), and its translation to what the datapath reads:
 * fixed-point struct sluice_policy slots, rule tries and list tries.
 */
#ifndef SLUICE_POLICY_H
#define SLUICE_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"
#include "args.h"

/* One limiter as typed. */
struct settings {
	struct rate rate;
	struct burst burst; /* value 0: one second of rate */
	uint32_t action;
	uint8_t dscp;
	bool mark_dscp;
	bool mark_ecn;
	unsigned int ipv4_prefix;
	unsigned int ipv6_prefix;
	/* Typed, even at the default: a rule of the other family refuses them. */
	bool ipv4_prefix_given;
	bool ipv6_prefix_given;
	/* Table pressure; zero values mean the defaults. */
	struct rate new_sources; /* new buckets per period (default 10k/s) */
	struct rate overflow;	 /* the shared bucket of refused sources (default: the rate) */
	struct burst initial;	 /* credit of a new bucket (default: the whole burst) */
	bool on_full_pass;	 /* a failed insert passes (default: it is dropped) */
	/* Limits on wider prefixes, shared by the sources in each. */
	struct aggregate aggregates[SLUICE_MAX_AGGREGATES];
	unsigned int n_aggregates;
};

/* New buckets per second a rule admits unless told otherwise. */
#define DEFAULT_NEW_SOURCES_PER_SEC 10000

/* What a rule applies to: a source CIDR and an optional L4 class. */
struct match {
	struct cidr cidr;
	uint8_t proto;		     /* 0: any */
	uint16_t dport_lo, dport_hi; /* 0-0: any */
	bool syn;
};

struct rule {
	struct match match;
	struct settings settings;
	uint16_t id; /* bucket id space; assigned when stored */
};

struct cidr_list {
	struct cidr *items;
	size_t count, capacity;
};

struct policy_doc {
	struct settings dflt;
	struct rule rules[SLUICE_MAX_POLICIES - 1];
	int n_rules;
	struct cidr_list allow, deny;
	uint16_t next_id;
	bool ids_wrapped; /* next_id has wrapped: old ids may still have buckets */
};

/* Every pinned map a policy lives in. */
struct policy_maps {
	int config, generation, policies;
	int rules_v4, rules_v6;
	int allow_v4, allow_v6, deny_v4, deny_v6;
	int rule_stats; /* per-slot counters, cleared when a set is rewritten */
	int admission;	/* per rule id: reset when an id is given to a new rule */
	/* The set tables: a retired rule id is given again only once neither holds its buckets. */
	int buckets, aggregates;
};

void settings_default(struct settings *s);
/* Nanoseconds per jiffy, the resolution of the coarse clock. */
uint64_t jiffy_ns(void);
/* Validates one limiter and precomputes everything the fast path needs. */
int policy_build(struct sluice_policy *p, const struct settings *s, const struct match *m,
		 uint16_t id, const char **why);
void policy_settings(const struct sluice_policy *p, struct settings *s, struct match *m);

bool match_equal(const struct match *a, const struct match *b);
bool settings_equal(const struct settings *a, const struct settings *b);
/* The rule with exactly this match, or -1. */
int doc_find_rule(const struct policy_doc *doc, const struct match *m);
bool cidr_contains(const struct cidr *outer, const struct cidr *inner);
/*
 * The rules covering CIDR c, most specific first (longer CIDR, then narrower
 * L4 class, then earlier): indexes into doc->rules. Returns the count, or
 * -E2BIG past SLUICE_MAX_CANDIDATES.
 */
int doc_group(const struct policy_doc *doc, const struct cidr *c, int *members);
/* Checks a document before anything is written: limits and rule overlaps. */
int doc_validate(const struct policy_doc *doc, const char **why);

void doc_init(struct policy_doc *doc);
void doc_free(struct policy_doc *doc);
int cidr_list_add(struct cidr_list *l, const struct cidr *c);
void cidr_list_sort(struct cidr_list *l);
/*
 * Sorted a plus b (add), or a minus b (!add: every item of b must be in a,
 * else -ENOENT and *missing is its index), into out; linear. a and b are
 * sorted without duplicates (cidr_list_sort).
 */
int cidr_list_merge(const struct cidr_list *a, const struct cidr_list *b, bool add,
		    struct cidr_list *out, size_t *missing);

/*
 * Reads the live policy back from the maps (allow and deny too with lists),
 * all of one configuration, never a mix (see read_consistent). Under
 * sustained writes it waits for the command lock, shared.
 */
int policy_load(const struct policy_maps *m, struct policy_doc *doc, bool lists);
/* The same, with the configuration it was read from. */
int policy_load_cfg(const struct policy_maps *m, struct policy_doc *doc, bool lists,
		    struct sluice_config *cfg);
/*
 * Makes doc the live policy in one step: writes the idle set of policies
 * and rules (and, with lists, of allow and deny), then flips the
 * configuration to it. Rules keep their ids when unchanged from the live
 * policy; changed and new rules get fresh ones.
 */
int policy_store(const struct policy_maps *m, struct policy_doc *doc, bool lists);
/* The live configuration and default policy (slot 0), for status. */
int policy_default(const struct policy_maps *m, struct sluice_config *cfg, struct sluice_policy *p);
/*
 * The first configuration of freshly loaded maps (with the set tables'
 * shape, the max_sources they were sized for, and hash seeds), then doc.
 */
int policy_create(const struct policy_maps *m, uint64_t max_sources, struct policy_doc *doc);
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

#endif /* SLUICE_POLICY_H */
