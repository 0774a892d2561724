/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the sluice datapath (bpf/) and the CLI (user/):
 * every struct and constant both sides see, with fixed-width types.
 * Change a struct here and bump SLUICE_LAYOUT_VERSION.
 */
#ifndef SLUICE_H
#define SLUICE_H

#include <linux/types.h>

/* Bumped whenever a pinned map's key or value layout changes. */
#define SLUICE_LAYOUT_VERSION 2

/* Pinned state lives in SLUICE_PIN_ROOT/<ifname>/<name>. */
#define SLUICE_PIN_ROOT	      "/sys/fs/bpf/sluice"
#define SLUICE_PIN_LINK	      "link"
#define SLUICE_MAP_BUCKETS    "buckets"
#define SLUICE_MAP_CONFIG     "config"
#define SLUICE_MAP_STATS      "stats"
#define SLUICE_MAP_HOT	      "hot"
#define SLUICE_MAP_GENERATION "generation"

/*
 * Meter time is nanoseconds scaled by 2^SLUICE_TIME_SHIFT, so an emission
 * interval keeps a fraction of a nanosecond (3 Mpps is 333.3125 ns, not 333).
 * A u64 then still spans 2^60 ns, about 36 years of uptime.
 */
#define SLUICE_TIME_SHIFT 4

#define SLUICE_DEFAULT_MAX_SOURCES 1000000
#define SLUICE_DEFAULT_IPV4_PREFIX 32
#define SLUICE_DEFAULT_IPV6_PREFIX 64

enum sluice_action {
	SLUICE_ACTION_DROP = 0,
	SLUICE_ACTION_DRY_RUN = 1,
	SLUICE_ACTION_MAX,
};

enum sluice_family {
	SLUICE_FAMILY_IPV4 = 4,
	SLUICE_FAMILY_IPV6 = 6,
};

/*
 * One bucket per key: the source masked to the policy's prefix, in network
 * byte order. IPv4 uses addr[0] and leaves the rest zero. policy is 0 for
 * the default policy.
 */
struct sluice_key {
	__u8 family;
	__u8 prefix_len;
	__u16 policy;
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
 * The running configuration. The datapath reads it through a one-slot
 * map-in-map; userspace replaces the inner map as a whole, so a packet
 * sees either the old or the new configuration, never a mix.
 */
struct sluice_config {
	__u32 layout_version;
	__u32 action;	  /* enum sluice_action */
	__u64 generation; /* changes on every write: invalidates per-CPU caches */
	__u64 interval;	  /* GCRA emission interval T, in meter time per packet */
	__u64 tolerance;  /* GCRA tolerance tau = (burst - 1) * T, in meter time */
	/* What the operator asked for, kept so `status` can show it back. */
	__u64 rate_packets; /* rate_packets per rate_period_ns */
	__u64 rate_period_ns;
	__u64 burst;
	__u32 ipv4_prefix;
	__u32 ipv6_prefix;
	/* Prefix masks in network byte order, precomputed in userspace. */
	__u32 ipv4_mask;
	__u32 ipv6_mask[4];
	__u32 flags; /* SLUICE_CFG_* */
	/*
	 * Jiffies per meter-time unit << SLUICE_JIFFY_RECIP_SHIFT, rounded
	 * down: lets the over-limit cache turn a wait into whole jiffies
	 * without dividing. Zero disables the jiffy check.
	 */
	__u64 jiffy_recip;
};

#define SLUICE_JIFFY_RECIP_SHIFT 48
/* Waits longer than this (about 68 s) are cached as this long. */
#define SLUICE_JIFFY_WAIT_MAX (1ULL << 40)

/* The burst was typed by the operator, not derived from the rate. */
#define SLUICE_CFG_BURST_EXPLICIT (1U << 0)

/*
 * The per-CPU over-limit cache: the last over-limit source exactly as it
 * came (so rules and prefixes need no second look), the action for it, the
 * moment it may conform again, and a jiffy before which it certainly cannot
 * (0: unknown). A TAT never decreases, so the moment only comes later than
 * remembered; the generation ties the entry to one configuration.
 * The packets it refuses are counted in `pending`, a plain per-CPU count
 * that goes to key's bucket with one atomic add when the source next
 * reaches the bucket or the entry is given to another source.
 */
struct sluice_hot {
	__u32 src[4];
	__u8 family;
	__u8 action;
	__u16 pad;
	__u32 pad2;
	__u64 generation;
	__u64 admissible_at;
	__u64 admissible_jiffy;
	__u64 pending;
	struct sluice_key key; /* the bucket the pending count belongs to */
	__u32 pad3;
};

enum sluice_counter {
	SLUICE_CNT_PASSED,	  /* under the limit, passed */
	SLUICE_CNT_DROPPED,	  /* over the limit, dropped */
	SLUICE_CNT_WOULD_DROP,	  /* over the limit in dry run, passed */
	SLUICE_CNT_NON_IP,	  /* not IPv4 or IPv6, passed untouched */
	SLUICE_CNT_MALFORMED,	  /* truncated or invalid headers, passed */
	SLUICE_CNT_NEW_SOURCE,	  /* buckets created (also counted above) */
	SLUICE_CNT_INSERT_FAILED, /* bucket could not be created: passed */
	SLUICE_CNT_MAX,
};

struct sluice_counter_pair {
	__u64 packets;
	__u64 bytes;
};

/* Value of the single-entry per-CPU stats array. */
struct sluice_stats {
	struct sluice_counter_pair c[SLUICE_CNT_MAX];
};

#endif /* SLUICE_H */
