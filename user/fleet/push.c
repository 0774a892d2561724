// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's side of Redis: one pipelined script call per hash tag for
 * the candidates' usage, their replies taken back, and the heartbeat that
 * counts the hosts.
 */
#include <errno.h>
#include <bpf/libbpf.h>
#include "fleet/agent.h"
#include "fleet/script.h"

static const char *num(struct agent *ag, int *k, const char *fmt, double v)
{
	char *buf = ag->argbuf[(*k)++];

	snprintf(buf, AGENT_NUM_MAX, fmt, v);
	return buf;
}

static void call_arg(struct fleet_call *call, const char *s)
{
	call->argv[call->argc] = s;
	call->argvlen[call->argc] = strlen(s);
	call->argc++;
}

/* Since the candidate's last push, in us, at most what a fleet may owe. */
static double span_us(const struct agent *ag, const struct candidate *c)
{
	uint64_t span = ag->sent_ns - c->pushed_ns;

	if (span > FLEET_DEBT_MAX_NS)
		span = FLEET_DEBT_MAX_NS;
	return (double)span / 1000;
}

/*
 * The calls of this round: per tag, up to AGENT_KEYS_PER_CALL keys each,
 * or with alone, one call per candidate marked alone (a call of one key
 * never gets TRYAGAIN), as many as fit; members[] says which candidate
 * each key of each call is.
 */
static int calls_build(struct agent *ag, int *members, int *first, bool alone)
{
	static char numkeys[AGENT_CALLS_MAX][16];
	int tag, i, ncalls = 0, nargs = 0, m = 0, keys = 0;
	int per_call = alone ? 1 : AGENT_KEYS_PER_CALL;

	for (tag = 0; tag < AGENT_TAGS; tag++) {
		struct fleet_call *call = NULL;

		for (i = 0; i < ag->n; i++) {
			struct candidate *c = &ag->cands[i];

			if (c->tag != tag || c->alone != alone)
				continue;
			if (!call || keys == per_call) {
				if (ncalls == AGENT_CALLS_MAX)
					break; /* the rest keep their usage for the next round */
				if (call)
					snprintf(numkeys[ncalls - 1], sizeof(numkeys[0]), "%d",
						 keys);
				call = &ag->calls[ncalls];
				first[ncalls++] = m;
				call->argc = 3; /* EVALSHA sha numkeys: filled when sent */
				call->slot = key_slot(c->rkey, strlen(c->rkey));
				keys = 0;
			}
			members[m++] = i;
			call_arg(call, c->rkey);
			keys++;
		}
		if (call)
			snprintf(numkeys[ncalls - 1], sizeof(numkeys[0]), "%d", keys);
	}
	first[ncalls] = m;
	for (i = 0; i < ncalls; i++) {
		struct fleet_call *call = &ag->calls[i];
		int j;

		call->argv[2] = numkeys[i];
		call->argvlen[2] = strlen(numkeys[i]);
		call_arg(call, ag->opt.shadow ? "shadow" : "sync");
		call_arg(call, num(ag, &nargs, "%.0f", meter_to_us(ag->hint.debt_max)));
		call_arg(call, num(ag, &nargs, "%.0f", (double)ag->slack_ns / 1000));
		for (j = first[i]; j < first[i + 1]; j++) {
			const struct candidate *c = &ag->cands[members[j]];

			call_arg(call, num(ag, &nargs, "%.0f", (double)c->unpushed));
			call_arg(call, num(ag, &nargs, "%.6f", meter_to_us(c->cost)));
			call_arg(call, num(ag, &nargs, "%.6f", meter_to_us(c->limit)));
			call_arg(call, num(ag, &nargs, "%.0f", span_us(ag, c)));
		}
	}
	return ncalls;
}

/* One call's reply: per key the TAT ahead of Redis's now (us) and what it refused. */
static int reply_take(struct agent *ag, const redisReply *r, const int *members, int from, int to)
{
	int j;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)(2 * (to - from))) {
		ag->redis.errors[FLEET_ERR_REPLY]++;
		return -EPROTO;
	}
	for (j = from; j < to; j++) {
		const redisReply *d = r->element[2 * (j - from)],
				 *x = r->element[2 * (j - from) + 1];
		struct candidate *c = &ag->cands[members[j]];

		/* the script never refuses more than the usage it was given */
		if (d->type != REDIS_REPLY_INTEGER || x->type != REDIS_REPLY_INTEGER ||
		    x->integer < 0 || (uint64_t)x->integer > c->unpushed) {
			ag->redis.errors[FLEET_ERR_REPLY]++;
			return -EPROTO;
		}
		c->delta = us_to_meter((double)d->integer);
		if (c->delta > ag->hint.debt_max)
			c->delta = ag->hint.debt_max;
		c->unpushed = 0;
		c->pushed_ns = ag->sent_ns;
		c->alone = false;
		c->synced = true;
		ag->rep.would_refuse += (uint64_t)x->integer;
	}
	return 0;
}

/*
 * Takes the replies of ncalls calls: how many failed. A call answered
 * TRYAGAIN (its slot mid-migration, its keys split between two nodes) is
 * no failure: its candidates are marked to go alone.
 */
static int calls_settle(struct agent *ag, int ncalls, const int *members, const int *first)
{
	int i, j, failed = 0;

	for (i = 0; i < ncalls; i++) {
		struct fleet_call *call = &ag->calls[i];

		if (!call->reply && call->later) {
			for (j = first[i]; j < first[i + 1]; j++)
				ag->cands[members[j]].alone = true;
		} else if (!call->reply ||
			   reply_take(ag, call->reply, members, first[i], first[i + 1])) {
			failed++;
		}
		if (call->reply)
			freeReplyObject(call->reply);
		call->reply = NULL;
	}
	return failed;
}

/*
 * Pushes every candidate's usage, each call to its slot's owner: a call
 * that fails takes only its own candidates into fallback, the others are
 * synced. Candidates whose tag's call got TRYAGAIN go again at once, one
 * key per call. Returns how many candidates were not synced, or negative
 * when no node answered at all.
 */
int agent_redis_sync(struct agent *ag)
{
	static int members[AGENT_CANDIDATES_MAX], first[AGENT_CANDIDATES_MAX + 1];
	int ncalls, pass, i, unsynced = 0;

	for (i = 0; i < ag->n; i++)
		ag->cands[i].synced = false;
	if (fleet_redis_ready(&ag->redis))
		return -EHOSTUNREACH;
	ag->sent_ns = monotonic_ns();
	for (pass = 0; pass < 2 && ag->n; pass++) {
		ncalls = calls_build(ag, members, first, pass == 1);
		if (!ncalls)
			continue;
		fleet_redis_run(&ag->redis, ag->calls, ncalls);
		calls_settle(ag, ncalls, members, first);
	}
	for (i = 0; i < ag->n; i++)
		unsynced += !ag->cands[i].synced;
	return unsynced;
}

/*
 * Counts the agents heartbeating, this one included: N for the share and
 * for split. The agent counts the names Redis lists, never a number it
 * claims: at most AGENT_HOSTS_MAX, and a list without this agent is wrong.
 * False when the beat did not reach Redis (it is tried again next round,
 * once the slot map is learnt again).
 */
bool agent_heartbeat(struct agent *ag)
{
	static const char key[] = AGENT_HEARTBEAT_KEY;
	char window[16], max[16];
	const char *argv[7] = { "EVAL", fleet_heartbeat_script, "1", key, ag->member, window, max };
	size_t len[7];
	redisReply *r;
	int i, n;

	snprintf(window, sizeof(window), "%d", AGENT_HOST_WINDOW_MS);
	snprintf(max, sizeof(max), "%d", AGENT_HOSTS_MAX);
	for (i = 0; i < 7; i++)
		len[i] = strlen(argv[i]);
	r = fleet_redis_command_slot(&ag->redis, key_slot(key, strlen(key)), 7, argv, len);
	if (!r)
		return false;
	/* Back after failing: the hold starts with this beat's list, not the next's. */
	if (ag->hb_failing)
		ag->hb_back_ns = monotonic_ns();
	ag->hb_failing = false;
	n = fleet_heartbeat_hosts(r, ag->member, AGENT_HOSTS_MAX);
	freeReplyObject(r);
	if (n < 0) {
		ag->redis.errors[FLEET_ERR_REPLY]++;
		snprintf(ag->redis.last_error, sizeof(ag->redis.last_error),
			 "the heartbeat's reply is no list of at most %d agents with this one",
			 AGENT_HOSTS_MAX);
		return true; /* Redis answered: a wrong list is not retried at once */
	}
	n = (int)fleet_hosts_heard(ag->hosts, (uint32_t)n, ag->hb_back_ns, monotonic_ns(),
				   (uint64_t)AGENT_HOST_WINDOW_MS * 1000000ULL);
	if ((uint32_t)n != ag->hosts) {
		fprintf(stderr, "sluice agent: %s: %d agent%s in the fleet\n", ag->ifname, n,
			n == 1 ? "" : "s");
		ag->hosts = (uint32_t)n;
		agent_hint_write(ag, true);
	}
	return true;
}

/*
 * A clean stop leaves the count at once, rather than after
 * AGENT_HOST_WINDOW_MS. Its own budget, whatever the period: a stop that
 * cut a call must connect again (AUTH and the script, then ZREM), four
 * round trips.
 */
void agent_heartbeat_leave(struct agent *ag)
{
	static const char key[] = AGENT_HEARTBEAT_KEY;
	const char *argv[3] = { "ZREM", key, ag->member };
	size_t len[3] = { 4, sizeof(key) - 1, strlen(ag->member) };
	redisReply *r;

	if (!ag->up)
		return;
	fleet_redis_round(&ag->redis, AGENT_LEAVE_NS);
	r = fleet_redis_command_slot(&ag->redis, key_slot(key, sizeof(key) - 1), 3, argv, len);
	if (r) {
		freeReplyObject(r);
		return;
	}
	fprintf(stderr,
		"sluice agent: %s: the heartbeat's count not left (%s): it drops this agent after %d ms\n",
		ag->ifname, ag->redis.last_error[0] ? ag->redis.last_error : "no node answered",
		AGENT_HOST_WINDOW_MS);
}
