/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fleet agent's engine (agent.c), and what its files (candidates.c,
 * local.c, push.c) share. `sluice agent` (commands/agent.c) checks its
 * options, reads the password, takes the interface's lock, and runs
 * agent_setup, agent_loop and agent_stop.
 */
#ifndef SLUICE_FLEET_AGENT_H
#define SLUICE_FLEET_AGENT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "fleet/plan.h"
#include "fleet/redis.h"
#include "fleet/report.h"
#include "pins/sync.h"
#include "text/options.h"

#define AGENT_CANDIDATES_MAX 65536 /* sources synced at once; more wait their turn */

#define AGENT_TAGS 64 /* hash tags the sources are spread over */

#define AGENT_KEYS_PER_CALL 96 /* 5 arguments each: within FLEET_CALL_ARGS_MAX */

#define AGENT_CALLS_MAX (AGENT_CANDIDATES_MAX / AGENT_KEYS_PER_CALL + AGENT_TAGS)

#define AGENT_IDLE_ROUNDS 20 /* a candidate with no usage and no debt this long is dropped */

#define AGENT_SYNC_TRIES 4 /* runs of a sync op the datapath's steps keep beating */

#define AGENT_HEARTBEAT_NS NSEC_PER_SEC

#define AGENT_REPORT_NS (NSEC_PER_SEC / 4) /* the report status reads is rewritten every */

#define AGENT_HEARTBEAT_KEY "sluice:{hb}:agents" /* a sorted set: member, last beat */

#define AGENT_HOST_WINDOW_MS 3000 /* an agent silent this long no longer counts */

#define AGENT_KEY_MAX 96

#define AGENT_LOG_SOURCES 8 /* sources named per round when they fall back or sync again */

/* A reply later than two periods, or this, is a timeout: Redis is then down. */
#define AGENT_TIMEOUT_MIN_NS (250 * 1000000ULL)

#define AGENT_ROUND_CALLS 2 /* a round's waits on Redis, in all: two calls' timeouts */

#define AGENT_LEAVE_NS (500 * 1000000ULL) /* a stop's ZREM waits at most */

#define AGENT_NUM_MAX 24 /* one number as text */

#define AGENT_PASSWORD_MAX 256 /* a password's bytes, its line's end included */

struct candidate {
	struct sluice_key key;
	uint64_t last_passed;
	uint64_t unpushed;    /* packets passed and not yet in Redis */
	uint64_t usage;	      /* packets passed this round */
	uint64_t cost, limit; /* meter time, from the source's policy */
	uint64_t delta;	      /* the global TAT ahead of now, meter time */
	uint64_t pushed_ns;   /* the last push that reached Redis (or when first seen) */
	uint32_t idle;
	uint16_t tag;
	bool gone;
	bool alone;  /* its tag's call got TRYAGAIN: sent in a call of its own until one succeeds */
	bool synced; /* its push reached its slot's owner this round */
	uint64_t failed_ns; /* its first push that found no owner since its last sync; 0: none */
	char rkey[AGENT_KEY_MAX];
};

struct agent {
	const char *ifname;
	struct agent_args opt;
	struct state st;
	struct sync_prog sync;
	struct ring_buffer *ring;
	struct sluice_fleet_hint hint;
	struct fleet_redis redis;
	struct candidate *cands;
	int n;
	int *index; /* open addressing over cands, 2 * AGENT_CANDIDATES_MAX, -1 empty */
	struct sluice_policy policies[SLUICE_MAX_POLICIES];
	struct sluice_config cfg;
	uint64_t cfg_read_ns, heartbeat_ns, last_sync_ns, report_ns, round_ns;
	uint64_t sent_ns;    /* when this round's calls went out */
	uint64_t since_sent; /* meter time from then to the sync step */
	struct fleet_slack slack;
	uint64_t slack_ns; /* how late a push may have reached Redis */
	uint32_t hosts;
	uint32_t fallback; /* candidates not synced in the last round: their owner unreachable */
	bool up, was_up;
	bool reached;	     /* the last round reached a node: it may beat between rounds */
	bool hb_failing;     /* the last heartbeat did not reach Redis */
	uint64_t hb_back_ns; /* when it reached Redis again after failing */
	sigset_t stop; /* SIGINT, SIGTERM, SIGHUP: blocked, waited for, polled by Redis waits */
	int stop_fd;   /* a signalfd of stop */
	char password[AGENT_PASSWORD_MAX];
	char member[128];
	struct fleet_report rep;
	int unwritten; /* why the last report could not be written (tell_unwritten); 0: it was */
	int unshared;  /* why the report could not be the group's (tell_unshared); 0: it is, or none
			*/
	struct fleet_call *calls;
	char (*argbuf)[AGENT_NUM_MAX];
	char stop_why[400]; /* why agent_loop returned -EMEDIUMTYPE: a rule it cannot sync */
};

void candidates_index_rebuild(struct agent *ag);
int agent_on_candidate(void *arg, void *data, size_t len);
void candidates_prune(struct agent *ag);
int agent_policies_read(struct agent *ag);
bool agent_policy_unsyncable(struct agent *ag, char *why, size_t len);
int agent_policies_supported(struct agent *ag);
uint64_t agent_arg_advance(const struct agent *ag, const struct candidate *c);
uint64_t agent_arg_split(const struct agent *ag, const struct candidate *c);
int agent_usage_read(struct agent *ag);
int agent_sync_all(struct agent *ag, __u32 op,
		   uint64_t (*arg_of)(const struct agent *, const struct candidate *), bool synced);
int agent_hint_write(struct agent *ag, bool on);
int agent_sync_load(struct agent *ag);
int agent_redis_sync(struct agent *ag);
bool agent_heartbeat(struct agent *ag);
void agent_heartbeat_leave(struct agent *ag);
void agent_report(struct agent *ag, uint64_t now);
int agent_setup(struct agent *ag, const char *ifname, const struct agent_args *opt);
void agent_free(struct agent *ag);
int agent_loop(struct agent *ag);
int agent_signals(struct agent *ag);
/* A clean stop: out of the heartbeat count, the hint cleared, the report gone. */
void agent_stop(struct agent *ag);

#endif /* SLUICE_FLEET_AGENT_H */
