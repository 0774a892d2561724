/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a running agent tells status and the exporter: a small file,
 * SLUICE_FLEET_DIR/IFACE, rewritten whole (renamed over) every quarter
 * second and removed when the agent stops. A file rather than a pin: it holds the
 * agent's own figures, none of which the datapath reads.
 */
#ifndef SLUICE_FLEET_REPORT_H
#define SLUICE_FLEET_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "fleet/redis.h"

struct report;

#define SLUICE_FLEET_DIR "/run/sluice/fleet"
/*
 * A report older than this, or than FLEET_REPORT_STALE_PERIODS of its
 * agent's period, is an agent that died without removing it. A live agent
 * rewrites it every round: a period and a round's waits on Redis (4T at
 * most, docs/fleet.md) apart.
 */
#define FLEET_REPORT_STALE_NS	   (5 * 1000000000ULL)
#define FLEET_REPORT_STALE_PERIODS 6

struct fleet_report {
	int pid;
	bool up;       /* the last sync reached Redis for every call */
	char mode[24]; /* synced, shadow, fallback-local, fallback-split */
	uint64_t period_ns;
	uint64_t hosts;	     /* agents heartbeating, as last seen */
	uint64_t candidates; /* sources synced now */
	uint64_t lost;	     /* candidates the full ring dropped */
	uint64_t calls;	     /* script calls sent */
	uint64_t rounds;
	uint64_t lag_ns;       /* since the last sync that reached Redis whole */
	uint64_t rtt_max_ns;   /* the longest sync with Redis: the RTT of the bound */
	uint64_t gap_max_ns;   /* the longest time between two rounds: the T of the bound */
	uint64_t unpushed;     /* packets waiting for Redis to come back */
	uint64_t fallback;     /* sources in fallback: their slot's owner not reached last round */
	uint64_t would_refuse; /* --shadow: what the global limit would have refused */
	uint64_t errors[FLEET_ERR_MAX];
	double cpu_s;	     /* the agent's CPU time */
	uint64_t written_ns; /* CLOCK_REALTIME: for a status older than written_boot_ns */
	/* CLOCK_BOOTTIME, which no clock step moves: the report's age. 0 from an older agent. */
	uint64_t written_boot_ns;
};

/*
 * A checked fd of SLUICE_FLEET_DIR, made 0700 (and /run/sluice) when
 * missing; passable: both searchable by all too (0711), for a group's
 * reader of its interface's report.
 */
int fleet_dir_open(bool passable);
/*
 * rep, written whole and renamed over the last: root's alone (0600), or for
 * a state shared with group (state_group, not STATE_NO_GROUP) the group's
 * to read, 0640 root:group, its directories passable. A report that cannot
 * be given to the group (no CAP_CHOWN) is written root's alone all the
 * same, *unshared then saying why; else 0.
 */
int fleet_report_write(const char *ifname, const struct fleet_report *rep, gid_t group,
		       int *unshared);
/* -ENOENT when no agent runs for ifname (none, or its report is stale). */
int fleet_report_read(const char *ifname, struct fleet_report *rep);
/* rep as the file holds it, stamped written now (both clocks). */
void fleet_report_print(FILE *f, const struct fleet_report *rep);
/* A report's fields from f; what it does not name is 0. */
void fleet_report_parse(FILE *f, struct fleet_report *rep);
/* Of an agent gone: its pid ended, or not rewritten for longer than a live one leaves it. */
bool fleet_report_stale(const struct fleet_report *rep);
void fleet_report_remove(const char *ifname);
/*
 * status: each field once, as lines under the interface's (indented) or as
 * its "fleet" object.
 */
void fleet_report_status(struct report *rp, const struct fleet_report *rep);
/* A Prometheus family of the report: one of its fields, under status's key. */
struct fleet_family {
	const char *family, *type, *help;
	const char *key; /* the JSON key status writes the value under */
	size_t offset;	 /* of its uint64_t in struct fleet_report */
	bool seconds;	 /* a count of ns, exported in seconds */
};

extern const struct fleet_family fleet_families[];
extern const int fleet_nfamilies;
uint64_t fleet_family_value(const struct fleet_report *rep, const struct fleet_family *f);
/* The Prometheus families of each interface with an agent (sluice_fleet_*). */
void fleet_report_prom(FILE *out, const char (*ifnames)[16], int n);

#endif /* SLUICE_FLEET_REPORT_H */
