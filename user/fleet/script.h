/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Lua scripts the agent runs in Redis, on Redis's own clock (TIME),
 * so that hosts' clocks need not agree. Times are microseconds.
 *
 * GCRA: KEYS are the sources of one hash tag; ARGV[1] is "sync" or
 * "shadow", ARGV[2] the most debt a TAT may carry, ARGV[3] the slack (how
 * late the call may have reached Redis), then per key its packets passed
 * since the last call, their cost, the limit (a burst's cost) and the span
 * they passed over (since this host's last push). The usage is taken as
 * spread over its span, as a bucket that refilled during it would have
 * seen it: from max(TAT, now - span - slack). Without the slack one late
 * arrival would move a busy source's TAT ahead for as long as it stays busy. sync adds it all (it
 * passed already); shadow admits what a single global GCRA would and
 * counts the rest. Returns per key the TAT ahead of Redis's now, and the
 * packets refused.
 *
 * Heartbeat: KEYS[1] the agents' sorted set, ARGV[1] this agent's name,
 * ARGV[2] how long a silent agent still counts (ms), ARGV[3] the most
 * agents counted, max: returns the names of the agents that count, the
 * latest first, max + 1 at most (this agent among them).
 */
#ifndef SLUICE_FLEET_SCRIPT_H
#define SLUICE_FLEET_SCRIPT_H

#include <hiredis/hiredis.h>

extern const char fleet_gcra_script[];
extern const char fleet_heartbeat_script[];

/*
 * N from the heartbeat's reply: the names it lists, at most max; -EPROTO
 * unless it is a list of at most max + 1 names with self among them.
 */
int fleet_heartbeat_hosts(const redisReply *r, const char *self, unsigned int max);

#endif /* SLUICE_FLEET_SCRIPT_H */
