/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the sluice datapath (bpf/) and the CLI (user/):
 * every struct and constant both sides see, with fixed-width types.
 * Change a struct here and bump SLUICE_LAYOUT_VERSION.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <linux/bpf.h> /* struct bpf_spin_lock */
#include <linux/types.h>

/* Bumped whenever a pinned map's key or value layout changes. */
#define SLUICE_LAYOUT_VERSION 22

/* Pinned state lives in SLUICE_PIN_ROOT/<ifname>/<name>. */
#define SLUICE_PIN_ROOT	       "/sys/fs/bpf/sluice"
#define SLUICE_PIN_LINK	       "link"
#define SLUICE_PIN_PROG	       "program" /* instead of the link, with --multiprog */
#define SLUICE_MAP_BUCKETS     "buckets"
#define SLUICE_MAP_CONFIG      "config"
#define SLUICE_MAP_POLICIES    "policies"
#define SLUICE_MAP_RULES_V4    "rules_v4"
#define SLUICE_MAP_RULES_V6    "rules_v6"
#define SLUICE_MAP_ALLOW_V4    "allow_v4"
#define SLUICE_MAP_ALLOW_V6    "allow_v6"
#define SLUICE_MAP_DENY_V4     "deny_v4"
#define SLUICE_MAP_DENY_V6     "deny_v6"
#define SLUICE_MAP_STATS       "stats"
#define SLUICE_MAP_RULE_STATS  "rule_stats"
#define SLUICE_MAP_HOT	       "hot"
#define SLUICE_MAP_ADMISSION   "admission"
#define SLUICE_MAP_AGGREGATES  "aggregates"
#define SLUICE_MAP_GENERATION  "generation"
#define SLUICE_MAP_FLEET       "fleet"		/* struct sluice_fleet_hint, the agent writes it */
#define SLUICE_MAP_FLEET_RING  "fleet_ring"	/* struct sluice_fleet_candidate, to the agent */
#define SLUICE_MAP_FLEET_USAGE "fleet_usage"	/* struct sluice_fleet_usage per source set */
#define SLUICE_MAP_FILTER      "buckets_filter" /* struct sluice_filter per 16 source sets */
#define SLUICE_MAP_PROVEN      "proven"		/* struct sluice_key -> struct sluice_proven */
#define SLUICE_MAP_BANS	       "bans"		/* struct sluice_key -> struct sluice_ban */
#define SLUICE_MAP_BAN_NOTES   "ban_notes"	/* struct sluice_ban_note -> __u8, userspace only */
/*
 * The map the config slot holds, pinned too, so that a reader without
 * CAP_SYS_ADMIN (which bpf_map_get_fd_by_id needs) can read it.
 */
#define SLUICE_PIN_CONFIG_LIVE "config_live"
/*
 * Pinned while both sets of the allow and deny tries hold the same entries
 * (user/maps/list_replay.c): a list change then writes only what it changes.
 */
#define SLUICE_PIN_LISTS_MIRRORED "lists_mirrored"

/*
 * Meter time is nanoseconds scaled by 2^SLUICE_TIME_SHIFT, so an emission
 * interval keeps a fraction of a nanosecond (3 Mpps is 333.3125 ns, not 333).
 * A u64 then still spans 2^60 ns, about 36 years of uptime.
 */
#define SLUICE_TIME_SHIFT 4
/* Byte rates keep 16 more fractional bits per byte: 100 Gbit/s is 1.28 units. */
#define SLUICE_BYTE_SHIFT 16

#define SLUICE_DEFAULT_MAX_SOURCES 1000000
#define SLUICE_DEFAULT_IPV4_PREFIX 32
#define SLUICE_DEFAULT_IPV6_PREFIX 64

/* Policy slots per set; slot 0 is the default policy. */
#define SLUICE_MAX_POLICIES 256
/* Rules a source can fall under, most specific first (nested CIDRs, L4 classes). */
#define SLUICE_MAX_CANDIDATES 16
/* Aggregate limits per rule (--aggregate), across both families. */
#define SLUICE_MAX_AGGREGATES 4
/* Entries per allow or deny trie, across both sets. */
#define SLUICE_MAX_LIST_ENTRIES (2 * 1000000)

enum sluice_action {
	SLUICE_ACTION_DROP = 0,
	SLUICE_ACTION_DRY_RUN = 1,
	SLUICE_ACTION_MARK = 2,
	SLUICE_ACTION_MAX,
};

/*
 * How a source's slot is metered (sluice_policy.meter). The operator names
 * an algorithm (--algorithm); a GCRA with --warmup meters as
 * SLUICE_METER_WARMUP. include/slot.h dispatches on it.
 */
enum sluice_meter {
	SLUICE_METER_GCRA = 0,
	SLUICE_METER_FIXED_WINDOW = 1,
	SLUICE_METER_SLIDING_WINDOW = 2,
	SLUICE_METER_WARMUP = 3,
	SLUICE_METER_MAX,
};

enum sluice_family {
	SLUICE_FAMILY_ANY = 0,
	SLUICE_FAMILY_IPV4 = 4,
	SLUICE_FAMILY_IPV6 = 6,
};

/*
 * One bucket per key: the source masked to the policy's prefix, in network
 * byte order, within the policy's own id space. IPv4 uses addr[0] and
 * leaves the rest zero.
 *
 * A rule may key on the destination instead (--key dst) or on the pair
 * (--key pair): family then carries the kind too (SLUICE_KEY_DST or
 * SLUICE_KEY_PAIR above the family's 4 or 6), so such a key never equals
 * a source key, whatever the ids. A destination key holds the destination
 * masked to the same prefix where a source key holds the source. A pair
 * holds both, each masked to the prefix: IPv4 the source in addr[0], the
 * destination in addr[1]; IPv6 the first 64 bits of each (addr[0..1], then
 * addr[2..3]), so an IPv6 pair needs a prefix of 64 or less, and stays
 * exact (no hash stands for an address). Either kind lives in a pair of
 * ways, as an IPv6 key does (table_place).
 */
#define SLUICE_KEY_FAMILY(family) ((family)&0x0f)
#define SLUICE_KEY_DST		  0x10
#define SLUICE_KEY_PAIR		  0x20
#define SLUICE_KEY_KINDS	  (SLUICE_KEY_DST | SLUICE_KEY_PAIR)
struct sluice_key {
	__u8 family;
	__u8 prefix_len;
	__u16 policy; /* sluice_policy.id: a new one when the meter changes shape */
	__u32 addr[4];
};

/*
 * A whole token bucket under GCRA is its theoretical arrival time. The two
 * counts are for `sluice top`: packets passed, and packets over the limit
 * (dropped, or in dry run would-drop). Over-limit packets the per-CPU cache
 * answers are added later, in one go (struct sluice_hot): add its pending
 * count for the same key to read a source's total.
 */
struct sluice_bucket {
	__u64 tat;
	__u64 passed;
	__u64 dropped;
};

/*
 * The source table (map `buckets`) is an array of sets of
 * SLUICE_SET_WAYS buckets: a key hashes to two sets (include/table_hash.h)
 * and lives in one way of one of them. Metering advances a way's TAT by
 * compare-and-swap; giving a way to a new source takes the set's spin
 * lock, in an order metering can check (bpf/table.h), so both stay exact
 * across CPUs.
 *
 * A way keeps no key. In a table of SLUICE_INLINE_SETS sets or more, an
 * IPv4 key is a bijection of its set, tag and ext: the way's tag and ext
 * are the key. Any other key (IPv6, or IPv4 in a smaller table) takes two
 * ways, an even one for its bucket, tagged by a hash, and the odd one after
 * it, which holds the key (SLUICE_EXT_KEY; struct sluice_key_way). Smaller
 * tables are sized for pairs, so --max-sources still holds.
 *
 * Preallocated, the table costs the same full or empty: it is sized for
 * SLUICE_TABLE_LOAD_PCT percent of its ways. A new source takes an empty
 * way in the emptier of its sets, else the way idle longest if its bucket
 * has refilled (TAT in the past: forgetting it loses nothing); when every
 * way of both sets still holds state, the table is full for it and
 * --on-full decides. The aggregate table (map `aggregates`) is the same,
 * with a prefix's bucket per way.
 */
#define SLUICE_SET_WAYS	      12
#define SLUICE_TABLE_LOAD_PCT 86
#define SLUICE_INLINE_SETS    4096

/* sluice_set.ext: a key way, or (bit 7) a bucket whose key is in the way after it. */
#define SLUICE_EXT_KEY	  0xff
#define SLUICE_EXT_PAIRED 0x80

/* A way's counts: packets passed, and over the limit. */
struct sluice_count {
	__u64 passed;
	__u64 dropped;
};

/*
 * The key of the bucket in the way before, in a key way's count. Its tag
 * is the key's head (sluice_key_head: family, prefix length, policy).
 */
struct sluice_key_way {
	__u32 addr[4];
};

/*
 * A set's ways, apart from its lock, so that the datapath's global
 * functions may take them as plain memory (a lock may not be).
 */
struct sluice_ways {
	__u32 tag[SLUICE_SET_WAYS]; /* 0: an empty way */
	__u8 ext[SLUICE_SET_WAYS];
	__u32 pad;
	struct sluice_count count[SLUICE_SET_WAYS];
	__u64 tat[SLUICE_SET_WAYS];
};

/*
 * Six cache lines, each starting one (the map is mappable, so its values
 * start on a page): a lookup reads line 0 (tags and ext), then its way's
 * count and TAT, three lines in all.
 */
struct sluice_set {
	struct sluice_ways ways;
	struct bpf_spin_lock lock;
	__u32 pad[7];
};

/* A source set's ways' fleet usage this period: period tag << 24 | units (bpf/table.h). */
struct sluice_fleet_usage {
	__u32 way[SLUICE_SET_WAYS];
};

/*
 * The source table's filter (map `buckets_filter`, bpf/table.h): a word
 * per set holding two bits for each bucket way's tag (table_filter_bits
 * in table_hash.h; layout 22, one before), 16 sets to an entry, since an
 * array rounds each value up to 8 bytes. A key with a bit clear in each
 * of its sets' words has no bucket: the datapath knows it from a small
 * array (388 KB for the default table), without touching the table's
 * own lines.
 */
#define SLUICE_FILTER_SETS 16
struct sluice_filter {
	__u32 mask[SLUICE_FILTER_SETS];
};

/* sluice_policy.flags */
#define SLUICE_POL_BYTES	  (1U << 0) /* rate and burst are in bytes */
#define SLUICE_POL_BURST_EXPLICIT (1U << 1) /* burst typed, not derived */
#define SLUICE_POL_MARK_DSCP	  (1U << 2) /* mark: rewrite DSCP to dscp */
#define SLUICE_POL_MARK_ECN	  (1U << 3) /* mark: set ECN CE, drop Not-ECT */
#define SLUICE_POL_MATCH_SYN	  (1U << 4) /* match TCP SYN without ACK only */
#define SLUICE_POL_FAIL_OPEN	  (1U << 5) /* a failed bucket insert passes (--on-full pass) */
/*
 * --prove (docs/operations.md, "During a SYN flood"): a TCP SYN of a
 * source without a bucket is answered from XDP with a SYN-ACK whose
 * acknowledgment number is a SYN cookie (bpf/prove.h), when the
 * new-source budget refuses it, or (PROVE_ALWAYS) always. A real client
 * answers with a RST carrying the cookie back; that RST proves the source,
 * which gets a bucket from the rule's proven-source budget.
 */
#define SLUICE_POL_PROVE_TCP	(1U << 6)
#define SLUICE_POL_PROVE_ALWAYS (1U << 7) /* with PROVE_TCP: even within the budget */
/*
 * The match classes beyond source CIDR, protocol, destination port and
 * SYN (bpf/classify.h): each bit says its fields in sluice_policy hold a
 * condition. sluice_config.matches is the union over the live rules, so a
 * policy using none of them costs nothing for them. A non-first fragment
 * has no L4 header (its protocol is 0), so it matches no rule that needs
 * one: source port, TCP flags and ICMP type need their protocol. It does
 * match a length or a destination.
 */
#define SLUICE_POL_MATCH_SPORT	   (1U << 8)  /* sport_lo..sport_hi */
#define SLUICE_POL_MATCH_LENGTH	   (1U << 9)  /* len_lo..len_hi, the frame's bytes */
#define SLUICE_POL_MATCH_TCP_FLAGS (1U << 10) /* flags & tcp_flags_mask == tcp_flags */
#define SLUICE_POL_MATCH_ICMP_TYPE (1U << 11) /* icmp_type */
#define SLUICE_POL_MATCH_ICMP_CODE (1U << 12) /* with ICMP_TYPE: icmp_code too */
#define SLUICE_POL_MATCH_DST	   (1U << 13) /* destination & dst_mask == dst */
/* The penalty box (--ban-after, struct sluice_ban): ban_* in sluice_policy hold it. */
#define SLUICE_POL_BAN (1U << 14)
#define SLUICE_POL_MATCH_CLASS                                                           \
	(SLUICE_POL_MATCH_SPORT | SLUICE_POL_MATCH_LENGTH | SLUICE_POL_MATCH_TCP_FLAGS | \
	 SLUICE_POL_MATCH_ICMP_TYPE | SLUICE_POL_MATCH_ICMP_CODE | SLUICE_POL_MATCH_DST)

/*
 * What the rule's buckets are keyed on (--key), when not the source: the
 * destination, or the source and destination pair (struct sluice_key).
 * sluice_config.key_kinds says whether any live rule has one, so a policy
 * keyed on sources alone reads no destination.
 */
#define SLUICE_POL_KEY_DST  (1U << 16)
#define SLUICE_POL_KEY_PAIR (1U << 17)
#define SLUICE_POL_KEYS	    (SLUICE_POL_KEY_DST | SLUICE_POL_KEY_PAIR)

/*
 * An aggregate limit (--aggregate /24=5000/s): one bucket per wider prefix
 * of the source, shared by all the rule's sources in it, in the aggregate
 * table (map `aggregates`, sets like the source table's) under a key like
 * a source's (struct sluice_key with this prefix length). A packet passes
 * only if its own bucket and each aggregate bucket of its family allow it.
 */
struct sluice_aggregate {
	__u64 interval; /* GCRA, as in sluice_policy */
	__u64 limit;
	/* What the operator typed, for show. */
	__u64 rate_amount;
	__u64 rate_period_ns;
	__u64 burst;	 /* packets, or bytes for a bandwidth */
	__u32 mask[4];	 /* prefix mask, network byte order */
	__u8 family;	 /* SLUICE_FAMILY_IPV4 or _IPV6 */
	__u8 prefix_len; /* narrower than the rule's source prefix */
	__u8 rate_unit;	 /* enum sluice_rate_unit: bits and bytes cost the frame */
	__u8 typed;	 /* SLUICE_AGG_* */
	__u32 pad;
};

/* sluice_aggregate.typed: what was spelled out, so show prints it back. */
#define SLUICE_AGG_FAMILY (1U << 0) /* ipv4/N or ipv6/N, not inferred */
#define SLUICE_AGG_BURST  (1U << 1) /* burst=N, not one second of rate */

/*
 * One limiter: the default (slot 0) or a rule. Policies live in an array
 * of two sets of SLUICE_MAX_POLICIES slots; the configuration names the
 * live set, so a whole policy is replaced in one step.
 */
/* sluice_policy.ban_typed: the ban settings typed, not defaulted. */
#define SLUICE_BAN_TYPED_PERIOD	  (1U << 0)
#define SLUICE_BAN_TYPED_FOR	  (1U << 1)
#define SLUICE_BAN_TYPED_ESCALATE (1U << 2)
#define SLUICE_BAN_TYPED_MEMORY	  (1U << 3)
#define SLUICE_BAN_TYPED_MAX	  (1U << 4)

struct sluice_policy {
	/*
	 * GCRA in meter time. A packet costs `interval` (packet rates) or
	 * (bytes * interval) >> SLUICE_BYTE_SHIFT (byte rates), and conforms
	 * while max(TAT, now) + cost - now <= limit = burst's worth of cost.
	 */
	__u64 interval;
	__u64 limit;
	/* What the operator typed, for show and status. */
	__u64 rate_amount; /* packets, or bits/bytes (see flags), per period */
	__u64 rate_period_ns;
	__u64 burst; /* packets, or bytes */
	__u32 flags; /* SLUICE_POL_* */
	__u16 id;    /* bucket id space; 0 is never used by a rule */
	__u8 action; /* enum sluice_action */
	__u8 dscp;
	__u8 ipv4_prefix;
	__u8 ipv6_prefix;
	/* Match: source CIDR and L4 class. Unused for the default. */
	__u8 family;   /* enum sluice_family */
	__u8 cidr_len; /* prefix length of cidr */
	__u32 cidr[4];
	__u8 proto;	/* IPPROTO_*, 0: any */
	__u8 rate_unit; /* enum sluice_rate_unit, for show */
	__u16 dport_lo; /* host byte order; 0-0: any port */
	__u16 dport_hi;
	__u16 pad;
	/* Match classes, each with its SLUICE_POL_MATCH_* bit. */
	__u16 sport_lo; /* host byte order */
	__u16 sport_hi;
	__u16 len_lo; /* frame bytes, every buffer, as byte rates count them */
	__u16 len_hi;
	__u8 tcp_flags_mask; /* the TCP flags byte (FIN 0x01 ... CWR 0x80) */
	__u8 tcp_flags;	     /* within the mask */
	__u8 icmp_type;
	__u8 icmp_code;
	__u8 dst_len; /* prefix length of dst; its family is the rule's */
	__u8 pad3[3];
	__u32 dst[4];	   /* network byte order, host bits clear */
	__u32 dst_mask[4]; /* dst_len as a mask, network byte order */
	/* Prefix masks in network byte order, precomputed in userspace. */
	__u32 ipv4_mask;
	__u32 ipv6_mask[4];
	/*
	 * Table pressure. New sources get buckets through an admission GCRA
	 * (per packet); the packets of refused sources are charged to one
	 * shared overflow GCRA (same cost as the rule's). A new bucket starts
	 * with `initial` worth of credit: its TAT begins limit - initial ahead.
	 */
	__u64 admit_interval;
	__u64 admit_limit;
	__u64 overflow_interval;
	__u64 overflow_limit;
	__u64 initial_offset;
	/* What the operator typed, for show (0: the default). */
	__u64 new_sources_amount;
	__u64 new_sources_period_ns;
	__u64 overflow_amount;
	__u64 overflow_period_ns;
	__u64 initial_burst;
	__u8 overflow_unit; /* enum sluice_rate_unit */
	__u8 n_aggregates;
	/*
	 * The algorithm of the source's own slot (include/slot.h). Windows:
	 * `limit` is the cost per window and `interval` what one unit costs
	 * (1, or 1 << SLUICE_BYTE_SHIFT per byte), so unit_cost() gives the
	 * packet, or its bytes. Warm-up: `interval` is the stable interval.
	 * Aggregates, admission and overflow buckets stay GCRA.
	 */
	__u8 meter;	 /* enum sluice_meter */
	__u8 state_bits; /* sliding window: bits per count; warm-up: of the stored permits */
	__u8 pad2[4];
	__u32 window_ms; /* windows: W, whole milliseconds (include/window.h) */
	__u32 warm_max;	 /* warm-up: permits stored at most */
	__u64 window_ns; /* as typed: --window, 0 for the rate's period */
	__u64 warmup_ns; /* as typed: --warmup, 0 for none */
	/* The proven-source budget (--proven-sources), GCRA like admission's. */
	__u64 prove_interval;
	__u64 prove_limit;
	/* What the operator typed, for show (0: the default). */
	__u64 proven_amount;
	__u64 proven_period_ns;
	/*
	 * The penalty box (SLUICE_POL_BAN): a key its own bucket refused more
	 * than ban_after packets within ban_period_ns is banned for
	 * ban_for_ns, times ban_escalate_milli / 1000 for each repeat within
	 * ban_memory_ns of the last ban's end, up to ban_max_ns.
	 */
	__u64 ban_after;
	__u64 ban_period_ns;
	__u64 ban_for_ns;
	__u64 ban_memory_ns;
	__u64 ban_max_ns;
	__u32 ban_escalate_milli;
	__u32 ban_typed; /* SLUICE_BAN_TYPED_*: what show prints back */
	struct sluice_aggregate aggregates[SLUICE_MAX_AGGREGATES];
};

/* Per rule id: the admission, overflow and proven-source TATs (map `admission`). */
struct sluice_admission {
	__u64 admit_tat;
	__u64 overflow_tat;
	__u64 proven_tat;
};

/*
 * A source that proved its address (map `proven`, LRU, keyed like its
 * bucket): for `top`, which marks it. Written once per proof.
 */
#define SLUICE_PROVEN_MAX 65536
struct sluice_proven {
	__u64 proven_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
};

/*
 * A key's penalty box (map `bans`, LRU, keyed like its bucket), written by
 * the datapath only (bpf/ban.h). Refusals of the key's own bucket are
 * counted in `window`: the start of the current period in milliseconds
 * (CLOCK_MONOTONIC) << SLUICE_BAN_COUNT_BITS | the refusals in it, one
 * word moved by compare-and-swap, so it is exact across CPUs. The CPU
 * whose refusals cross ban_after bans the key; the other fields are
 * written by that CPU alone. Times are CLOCK_MONOTONIC nanoseconds, as a
 * deny entry's.
 */
#define SLUICE_BANS_MAX	      65536
#define SLUICE_BAN_COUNT_BITS 24
#define SLUICE_BAN_COUNT_MAX  ((1ULL << SLUICE_BAN_COUNT_BITS) - 1)
struct sluice_ban {
	__u64 window;
	__u64 banned_at_ns;    /* the last ban's start; 0: never banned */
	__u64 banned_until_ns; /* and end: the key is banned while now is before it */
	__u64 length_ns;       /* its length, which the next repeat multiplies */
	__u64 refused;	       /* refusals within the period that brought it */
	__u64 period_ns;       /* that period, for deny list's why */
	__u32 level;	       /* 1: the first ban, 2: the first repeat, ... */
	__u32 bans;	       /* bans of this key since the entry was made */
};

/*
 * The audit's note of a ban (map `ban_notes`, LRU, userspace only): the
 * reader that inserts it first writes the ban's audit line, so each ban
 * gets exactly one, whichever reader notices it.
 */
struct sluice_ban_note {
	struct sluice_key key;
	__u64 banned_at_ns;
};

enum sluice_rate_unit {
	SLUICE_UNIT_PACKETS = 0,
	SLUICE_UNIT_BITS = 1,
	SLUICE_UNIT_BYTES = 2,
};

/* sluice_config.lists: which allow and deny tries hold entries. */
#define SLUICE_LIST_ALLOW_V4 (1U << 0)
#define SLUICE_LIST_ALLOW_V6 (1U << 1)
#define SLUICE_LIST_DENY_V4  (1U << 2)
#define SLUICE_LIST_DENY_V6  (1U << 3)

/*
 * The running configuration. The datapath reads it through a one-slot
 * map-in-map; userspace replaces the inner map as a whole, so a packet
 * sees either the old or the new configuration, never a mix. It names the
 * live set of policies and rules, and the live set of allow/deny entries:
 * a change writes the other set, then flips here.
 */
struct sluice_config {
	__u32 layout_version;
	__u32 policy_set; /* 0 or 1: which half of policies and rules */
	__u32 list_set;	  /* 0 or 1: which half of allow and deny */
	__u32 lists;	  /* SLUICE_LIST_*: skip empty tries */
	__u64 generation; /* changes on every write: invalidates per-CPU caches */
	/*
	 * Jiffies per meter-time unit << SLUICE_JIFFY_RECIP_SHIFT, rounded
	 * down: lets the over-limit cache turn a wait into whole jiffies
	 * without dividing. Zero disables the jiffy check.
	 */
	__u64 jiffy_recip;
	__u32 rules_v4; /* rule count per family: skip empty tries */
	__u32 rules_v6;
	__u16 next_policy_id; /* the id the next new rule gets */
	__u16 ids_wrapped;    /* next_policy_id wrapped: an old id may still have buckets */
	__u16 matches;	      /* SLUICE_POL_MATCH_CLASS bits any live rule uses; 0: none */
	__u16 key_kinds;      /* policies keyed on other than the source (SLUICE_POL_KEYS) */
	/* The set tables' sizes, and the random hash seeds fixed at attach (both use them). */
	__u32 table_sets;     /* of the source table */
	__u32 aggregate_sets; /* of the aggregate table */
	__u32 max_sources;    /* as given to attach (sizing rounds sets up); 0: not recorded */
	__u32 provers;	      /* policies of the live set with SLUICE_POL_PROVE_TCP; 0: none */
	__u64 table_seed[3];
	/*
	 * For status, the exporter and the audit trail (userspace only): when
	 * this generation was published (CLOCK_REALTIME, ns), and the entries
	 * of the allow and deny lists, so a change can say old -> new without
	 * walking the tries.
	 */
	__u64 changed_at_ns;
	__u32 allow_count;
	__u32 deny_count;
};

#define SLUICE_JIFFY_RECIP_SHIFT 48
/*
 * Waits longer than this (about 34 s) are bounded as this long, and a
 * reciprocal is at most SLUICE_JIFFY_RECIP_MAX, so wait * jiffy_recip
 * always fits in 64 bits (include/jiffy.h). The largest reciprocal is
 * that of a tick of 2^23 units (524 us): every HZ up to 1907 (Linux's
 * choices: 100, 250, 300, 1000; alpha's 1024 and 1200) gets its own
 * exactly; a shorter tick's is capped, counting fewer ticks, never more.
 */
#define SLUICE_JIFFY_WAIT_MAX  (1ULL << 39)
#define SLUICE_JIFFY_RECIP_MAX (~0ULL / SLUICE_JIFFY_WAIT_MAX)

/*
 * LPM trie keys. The set (0 or 1) leads the data, so one trie holds both
 * halves and a lookup in one set never matches the other: prefixlen counts
 * 32 bits of set plus the CIDR length.
 */
struct sluice_lpm_v4 {
	__u32 prefixlen;
	__u32 set;
	__u32 addr;
};

struct sluice_lpm_v6 {
	__u32 prefixlen;
	__u32 set;
	__u32 addr[4];
};

/*
 * Value of a deny trie entry (the allow tries hold one byte: presence).
 * Times are CLOCK_MONOTONIC nanoseconds, what bpf_ktime_get_ns() reads;
 * 0 is never. An LPM lookup finds only the longest entry holding the
 * source, and a source is denied while any entry holding it is live: so
 * userspace folds into each entry the latest expiry of itself and every
 * entry enclosing it, and one lookup and one compare decide. An expired
 * /32 inside a live /16 then still denies until the /16 expires.
 */
struct sluice_deny {
	__u64 expires_ns;      /* this entry's own expiry, for list and show */
	__u64 denied_until_ns; /* the latest of its own and its enclosing entries' */
};

/* Value of a rules trie entry: the policy slots to try, in order. */
struct sluice_rule_group {
	__u32 count;
	__u32 slots[SLUICE_MAX_CANDIDATES];
};

/* What to do with a packet over its limit: copied from its policy. */
struct sluice_verdict {
	__u8 action; /* enum sluice_action */
	__u8 dscp;
	__u8 mark_dscp;
	__u8 mark_ecn;
};

/*
 * The per-CPU over-limit cache (map `hot`, one value per possible CPU):
 * over-limit sources exactly as they came (full address and L4 class, so
 * they select the same policy again: a packet whose rule a match class
 * such as --sport chose, or whose rule keys on the destination, is never
 * remembered, bpf/classify.h), what to do with them, and the
 * moment each may conform again. A TAT never decreases, so that moment
 * only comes later than remembered; the generation ties an entry to one
 * configuration. The packets an entry refuses are counted in it (a plain
 * per-CPU count) and go to its key's bucket with one atomic add when the
 * source next reaches the bucket or the entry is given to another source.
 *
 * A source is placed by a keyed hash of its address (the table's seeds):
 * an IPv4 source in one of the two ways of a set, an IPv6 source in a
 * line of its own (the second half of `line`), each line 64 bytes, one
 * cache line, so an answer reads one line. Sizes come from measurement
 * (docs/benchmarks.md): 16384 sets hold about 95% of 10,000 over-limit
 * sources (8192 held 86%, and the rest took the full path, a quarter of
 * the CPU in bench-compare's scenario b); 2 MiB per CPU, the IPv6 half
 * read only by IPv6.
 */
#ifndef SLUICE_HOT_SETS
#define SLUICE_HOT_SETS 16384 /* IPv4 sets of 2 ways, and IPv6 lines; a power of two */
#endif

/*
 * sluice_hot_head.unanswered: each lookup the cache cannot answer adds 1,
 * each answer takes SLUICE_HOT_ANSWER_WEIGHT away. At
 * SLUICE_HOT_STEP_ASIDE_AFTER, where it stops, the cache is looked up only
 * by one packet in SLUICE_HOT_PROBE_EVERY, and it stays there while fewer
 * than about one lookup in SLUICE_HOT_ANSWER_WEIGHT is answered (bpf/hot.h
 * says why).
 */
#define SLUICE_HOT_STEP_ASIDE_AFTER 1024
#define SLUICE_HOT_ANSWER_WEIGHT    32
#define SLUICE_HOT_PROBE_EVERY	    128

/* sluice_hot_way.flags */
#define SLUICE_HOT_IPV4	     (1U << 0)
#define SLUICE_HOT_IPV6	     (1U << 1)
#define SLUICE_HOT_TCP_SYN   (1U << 2)
#define SLUICE_HOT_RULE_SET1 (1U << 3) /* rule_slot is in the second set */
#define SLUICE_HOT_MARK_DSCP (1U << 4)
#define SLUICE_HOT_MARK_ECN  (1U << 5)
#define SLUICE_HOT_BANNED    (1U << 6) /* a ban: counted banned, no refusals pending */

/* sluice_hot_way.count: refusals not yet in the bucket (low 24 bits), the key's prefix length. */
#define SLUICE_HOT_PENDING_MAX	  ((1U << 24) - 1)
#define SLUICE_HOT_PENDING(count) ((count)&SLUICE_HOT_PENDING_MAX)
#define SLUICE_HOT_PREFIX(count)  ((count) >> 24)

/*
 * One cached source; 0 in flags marks an empty way. Its bucket's key is
 * {family, prefix, policy, addr masked to prefix}: the source's address
 * (addr, and for IPv6 the line's tail) masked to the prefix in count.
 */
struct sluice_hot_way {
	__u64 admissible_at; /* meter time */
	__u64 generation;
	__u32 addr; /* IPv4 source; IPv6: its first word */
	__u16 dport;
	__u16 policy; /* the key's policy id */
	__u32 count;  /* pending refusals | key prefix length << 24 */
	__u8 proto;
	__u8 flags;	/* SLUICE_HOT_* */
	__u8 verdict;	/* action << 6 | dscp */
	__u8 rule_slot; /* the policy's slot in its set, for per-rule counts */
};

/* The rest of an IPv6 source's address, in the second half of its line. */
struct sluice_hot_tail {
	__u32 addr[3];
	__u32 pad[5];
};

/* One cache line: a set of two IPv4 ways, or one IPv6 source and its tail. */
union sluice_hot_line {
	struct sluice_hot_way way[2];
	struct {
		struct sluice_hot_way head;
		struct sluice_hot_tail tail;
	} v6;
};

/*
 * What the cached path needs besides the line, written by the full path:
 * the hash seeds, and a reference moment (meter time and the jiffy read
 * just after it) from which a jiffy before which an entry's moment
 * certainly has not come is computed per packet (clock_jiffy_after).
 *
 * And the entry stored last: its offset and that jiffy for it,
 * so one source over its limit is answered from the head and its own
 * line, without the hash or the bound's arithmetic. Every store of an
 * entry rewrites both, so they always describe what that way holds.
 *
 * And hints that decide no verdict, so zeros are as good as any: whether
 * this CPU refused its last new source admission (bpf/meter.h), and how
 * little its cache has answered lately, past a mark of which the cache
 * steps aside for all but a sample of packets (bpf/hot.h).
 */
struct sluice_hot_head {
	__u64 seed[3];
	__u64 ref_now;
	__u64 ref_jiffy;
	__u64 jiffy_recip;  /* as sluice_config.jiffy_recip */
	__u64 last_jiffy;   /* 0: none */
	__u32 last;	    /* its offset in the lines, a multiple of 32 */
	__u8 admit_refused; /* this CPU refused its last new source: a hint (meter.h) */
	__u8 probe;	    /* packets while the cache stands aside, modulo 256 */
	__u16 unanswered;   /* its lookups' misses less 32 an answer, saturating */
	/*
	 * The shut gate (bpf/meter.h, gate_shut): at the early clock's moment
	 * shut_early (0: none), under configuration shut_generation, rule
	 * shut_rule's new-source budget and overflow bucket both refused even
	 * the cheapest packet, so this CPU refuses that rule's new sources
	 * without them until the early clock moves on. Unlike the hints, it
	 * answers for those steps, so it is keyed on all three; zeros shut
	 * nothing.
	 */
	__u64 shut_early;
	__u64 shut_generation;
	__u32 shut_rule;
	__u32 pad[11]; /* the lines after the head start on a cache line */
};
_Static_assert(sizeof(struct sluice_hot_head) % 64 == 0, "the hot lines stay on cache lines");

/* One CPU's cache, the value of map `hot` at that CPU's index: IPv4 sets, then IPv6 lines. */
struct sluice_hot {
	struct sluice_hot_head head;
	union sluice_hot_line line[2 * SLUICE_HOT_SETS];
};

enum sluice_counter {
	SLUICE_CNT_PASSED,	     /* under the limit, passed */
	SLUICE_CNT_DROPPED,	     /* over the limit, dropped */
	SLUICE_CNT_WOULD_DROP,	     /* over the limit in dry run, passed */
	SLUICE_CNT_MARKED,	     /* over the limit, marked and passed */
	SLUICE_CNT_ALLOWED,	     /* on the allow list, passed unmetered */
	SLUICE_CNT_DENIED,	     /* on the deny list, dropped */
	SLUICE_CNT_NON_IP,	     /* not IPv4 or IPv6, passed untouched */
	SLUICE_CNT_MALFORMED,	     /* truncated or invalid headers, passed */
	SLUICE_CNT_NEW_SOURCE,	     /* buckets created (also counted above) */
	SLUICE_CNT_INSERT_FAILED,    /* bucket insert failed (not ENOMEM); --on-full decides */
	SLUICE_CNT_INSERT_NOMEM,     /* bucket insert failed for memory; --on-full decides */
	SLUICE_CNT_REFUSED,	     /* new source over the admission budget: no bucket */
	SLUICE_CNT_OVERFLOW_PASSED,  /* refused, passed by the overflow bucket */
	SLUICE_CNT_OVERFLOW_DROPPED, /* refused, dropped by the overflow bucket */
	SLUICE_CNT_INSERT_FULL,	     /* bucket insert found its set full; --on-full decides */
	SLUICE_CNT_EVICTED,	     /* idle, refilled buckets given to new sources */
	SLUICE_CNT_CONTENDED,	     /* refused after losing METER_CAS_TRIES races (also above) */
	/* --prove (bpf/prove.h); none of these is counted above. */
	SLUICE_CNT_SYNACK_SENT, /* SYNs answered with a cookie SYN-ACK (XDP_TX) */
	SLUICE_CNT_COOKIE_GOOD, /* RSTs whose cookie checked out */
	SLUICE_CNT_COOKIE_BAD,	/* RSTs whose cookie did not (any RST, while a rule proves) */
	SLUICE_CNT_PROVEN,	/* packets of proven sources passed: the proof, not a bucket */
	/* The penalty box (bpf/ban.h). */
	SLUICE_CNT_BANNED, /* packets of banned keys, the rule's action applied (also above) */
	SLUICE_CNT_BANS,   /* bans imposed (bytes: of the packet that crossed) */
	SLUICE_CNT_MAX,
};

struct sluice_counter_pair {
	__u64 packets;
	__u64 bytes;
};

/*
 * Value of the single-entry per-CPU stats array, and of the per-rule
 * per-CPU array (indexed like policies: set * SLUICE_MAX_POLICIES + slot;
 * only passed, dropped, would_drop and marked are counted per rule).
 */
struct sluice_stats {
	struct sluice_counter_pair c[SLUICE_CNT_MAX];
};

/*
 * The fleet (docs/fleet.md): an agent syncs each heavy source's usage with
 * the other hosts' through Redis. It tells the datapath through this
 * global (map `fleet`, a .data section: one load per packet): from
 * live_until on (meter time), metering does exactly what it does without
 * an agent. The agent moves live_until forward every period, so one that
 * was killed stops counting seconds later, as if it had stopped cleanly.
 *
 * A conforming packet adds (cost >> cost_shift) + 1 units to its way's
 * usage in the current period (now >> period_shift); crossing share_units
 * in one period makes the source a candidate, handed to the agent through
 * the ring buffer `fleet_ring`. A source under its share of r*T never
 * reaches the ring, however many such sources there are.
 */
struct sluice_fleet_hint {
	__u64 live_until;   /* meter time: an agent runs while now is before it */
	__u32 period_shift; /* meter time >> period_shift: the period tag */
	__u32 cost_shift;
	__u32 share_units;
	__u32 pad;
	/*
	 * Debt the fleet may leave in a TAT beyond one burst, in meter time:
	 * the cap of gcra.h starts this much later while an agent runs, so a
	 * debt the other hosts ran up is not forgotten at the next refusal.
	 */
	__u64 debt_max;
};

/* What the datapath hands the agent about a source that crossed its share. */
struct sluice_fleet_candidate {
	struct sluice_key key;
	__u32 units;  /* its usage in the period, in hint units */
	__u64 passed; /* the way's passed count then */
	__u64 cost;   /* what one of its packets costs, in meter time */
};

/* Sync operations (struct sluice_fleet_entry.op). */
enum sluice_fleet_op {
	SLUICE_FLEET_READ = 0,	  /* out: passed, tat_delta (TAT - now, 0 if past) */
	SLUICE_FLEET_ADVANCE = 1, /* TAT <- max(TAT, now + arg): the global TAT */
	SLUICE_FLEET_CHARGE = 2,  /* TAT <- max(TAT, now) + arg: fallback split */
	/*
	 * A change's rebase (docs/design.md): TAT <- to_tat if it still is
	 * was_tat (a TAT read before the change: the bucket keeps the share of
	 * its burst it had), else TAT <- min(TAT, now + arg), the debt cap.
	 */
	SLUICE_FLEET_CAP = 3,		/* the key's source bucket */
	SLUICE_FLEET_CAP_AGGREGATE = 4, /* the key's aggregate bucket */
	SLUICE_FLEET_CAP_ADMIT = 5,	/* the admission bucket of the rule id key.policy */
	SLUICE_FLEET_CAP_OVERFLOW = 6,	/* its overflow bucket */
	SLUICE_FLEET_CAP_PROVEN = 7,	/* its proven-source budget (--proven-sources) */
};

#define SLUICE_FLEET_BATCH 64
/* struct sluice_fleet_entry.found: a bucket whose TAT the op could not move. */
#define SLUICE_FLEET_CONTENDED 2

struct sluice_fleet_entry {
	struct sluice_key key;
	__u32 op;
	__u64 arg; /* meter time */
	/* In for the CAP ops (was_tat 0: a cap alone); out after any op. */
	union {
		__u64 was_tat; /* in: the TAT the change's walk read */
		__u64 passed;  /* out */
	};
	union {
		__u64 to_tat;	 /* in: what it becomes if unchanged since */
		__u64 tat_delta; /* out */
	};
	/*
	 * 1: the key has a bucket, the op done; 0: none; <0: no configuration;
	 * SLUICE_FLEET_CONTENDED: it has one, but every compare-and-swap lost
	 * a race to a meter step, so nothing was written (passed and
	 * tat_delta 0): run it again.
	 */
	__s32 found;
	__u32 pad;
};

/* The context of the sync program (BPF_PROG_TEST_RUN): a batch of ops. */
struct sluice_fleet_batch {
	__u32 count;
	__u32 pad;
	struct sluice_fleet_entry e[SLUICE_FLEET_BATCH];
};

#endif /* SLUICE_H */
