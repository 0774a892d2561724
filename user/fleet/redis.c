// SPDX-License-Identifier: GPL-2.0
/* The agent's Redis client (redis.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "fleet/redis.h"
#include "fleet/wire.h"

#define RECONNECT_NS (500 * 1000000ULL) /* a node that failed is tried again after */
#define CALL_TRIES   4			/* sends of a call per run: redirections, NOSCRIPT */

const char *const fleet_error_names[FLEET_ERR_MAX] = {
	[FLEET_ERR_CONNECT] = "connect",   [FLEET_ERR_TIMEOUT] = "timeout",
	[FLEET_ERR_AUTH] = "auth",	   [FLEET_ERR_REPLY] = "reply",
	[FLEET_ERR_MOVED] = "moved",	   [FLEET_ERR_ASK] = "ask",
	[FLEET_ERR_NOSCRIPT] = "noscript", [FLEET_ERR_TRYAGAIN] = "tryagain",
	[FLEET_ERR_PROTOCOL] = "protocol", [FLEET_ERR_CLUSTERDOWN] = "clusterdown",
};

static void note_error(struct fleet_redis *r, enum fleet_error kind, int node, const char *what)
{
	r->errors[kind]++;
	snprintf(r->last_error, sizeof(r->last_error), "%s:%u: %s",
		 node >= 0 ? r->nodes[node].host : "?", node >= 0 ? r->nodes[node].port : 0, what);
}

/* A wait from now: a call's timeout, within the round. */
static struct wire_wait wait_of(const struct fleet_redis *r)
{
	uint64_t end = monotonic_ns() + r->timeout_ns;

	return (struct wire_wait){ .deadline_ns = end < r->round_end_ns ? end : r->round_end_ns,
				   .stop_fd = r->stop_fd };
}

void fleet_redis_init(struct fleet_redis *r, const struct endpoint *seeds, int n,
		      const char *script, uint64_t timeout_ns)
{
	int i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < n && i < FLEET_NODES_MAX; i++)
		r->nodes[i] = seeds[i];
	r->n_nodes = r->n_seeds = i;
	r->script = script;
	r->timeout_ns = timeout_ns;
	r->round_end_ns = UINT64_MAX;
	r->stop_fd = -1;
	r->map_stale = true;
}

void fleet_redis_round(struct fleet_redis *r, uint64_t budget_ns)
{
	r->round_end_ns = monotonic_ns() + budget_ns;
}

static void node_drop(struct fleet_redis *r, int node)
{
	if (r->ctx[node])
		redisFree(r->ctx[node]);
	r->ctx[node] = NULL;
	r->retry_at_ns[node] = monotonic_ns() + RECONNECT_NS;
}

/*
 * A failed exchange with node (err from wire.h) over what: its kind
 * counted and the connection dropped; a stop's is no fault of the node's,
 * which may be reached again at once (to leave the heartbeat's count).
 */
static void node_failed(struct fleet_redis *r, int node, int err, const char *what)
{
	enum fleet_error kind = err == -ETIMEDOUT || err == -EAGAIN ? FLEET_ERR_TIMEOUT
				: err == -EPROTO		    ? FLEET_ERR_PROTOCOL
								    : FLEET_ERR_CONNECT;
	char msg[96];

	node_drop(r, node);
	r->map_stale = true;
	if (err == -ECANCELED) {
		r->retry_at_ns[node] = 0;
		return;
	}
	snprintf(msg, sizeof(msg), "%s: %s", what,
		 err == -EPROTO	  ? "a reply past the caps, or not RESP"
		 : err == -ENXIO  ? "the host name does not resolve"
		 : err == -EAGAIN ? "the host name's lookup was not answered in time"
		 : err == -EBUSY  ? "earlier lookups of host names are still unanswered"
				  : strerror(-err));
	note_error(r, kind, node, msg);
}

/* One command on node and its reply: 0, or the connection is dropped. */
static int node_command(struct fleet_redis *r, int node, int argc, const char **argv,
			const size_t *len, redisReply **rep)
{
	struct wire_wait w = wait_of(r);
	int err = redisAppendCommandArgv(r->ctx[node], argc, argv, len) == REDIS_OK ? 0 : -ENOMEM;

	if (!err)
		err = wire_reply(r->ctx[node], &w, rep);
	if (err)
		node_failed(r, node, err, argv[0]);
	return err;
}

static int node_auth(struct fleet_redis *r, int node)
{
	const char *argv[3] = { "AUTH", r->user, r->password };
	size_t len[3] = { 4, r->user ? strlen(r->user) : 0, strlen(r->password) };
	redisReply *rep;
	int err;

	if (!r->user) {
		argv[1] = r->password;
		len[1] = len[2];
	}
	err = node_command(r, node, r->user ? 3 : 2, argv, len, &rep);
	if (err)
		return err;
	if (rep->type == REDIS_REPLY_ERROR) {
		note_error(r, FLEET_ERR_AUTH, node, rep->str);
		err = -EACCES;
	}
	freeReplyObject(rep);
	return err;
}

static int node_load_script(struct fleet_redis *r, int node)
{
	const char *argv[3] = { "SCRIPT", "LOAD", r->script };
	size_t len[3] = { 6, 4, strlen(r->script) };
	redisReply *rep;
	int err = node_command(r, node, 3, argv, len, &rep);

	if (err)
		return err;
	if (rep->type == REDIS_REPLY_STRING && rep->len == 40) {
		memcpy(r->sha, rep->str, 40);
		r->sha[40] = '\0';
	} else {
		note_error(r, FLEET_ERR_REPLY, node,
			   rep->type == REDIS_REPLY_ERROR ? rep->str : "SCRIPT LOAD");
		err = -EPROTO;
	}
	freeReplyObject(rep);
	return err;
}

/*
 * A connection to node, made (with AUTH and the script) when there is
 * none, the node is not waiting out a failure and the round has time.
 */
static redisContext *node_ctx(struct fleet_redis *r, int node)
{
	uint64_t now = monotonic_ns();
	struct wire_wait w;
	int err;

	if (r->ctx[node])
		return r->ctx[node];
	if (now < r->retry_at_ns[node] || now >= r->round_end_ns)
		return NULL;
	w = wait_of(r);
	err = wire_connect(&r->nodes[node], &w, &r->ctx[node]);
	if (err) {
		node_failed(r, node, err, "connect");
		return NULL;
	}
	err = r->password ? node_auth(r, node) : 0;
	if (!err)
		err = node_load_script(r, node);
	if (err && r->ctx[node])
		node_drop(r, node);
	return r->ctx[node];
}

/* Learns the slot map from node: cluster, or a single node serving every slot. */
static int map_learn(struct fleet_redis *r, int node)
{
	const char *argv[2] = { "CLUSTER", "SLOTS" };
	size_t len[2] = { 7, 5 };
	redisContext *c = node_ctx(r, node);
	redisReply *rep;
	int err = 0, i;

	if (!c)
		return -ECONNREFUSED;
	err = node_command(r, node, 2, argv, len, &rep);
	if (err)
		return err;
	if (rep->type == REDIS_REPLY_ERROR && strstr(rep->str, "cluster support disabled")) {
		r->cluster = false;
		for (i = 0; i < REDIS_SLOTS; i++)
			r->map.node[i] = (uint16_t)node;
	} else {
		r->cluster = true;
		err = slot_map_parse(rep, &r->map, r->nodes, &r->n_nodes, FLEET_NODES_MAX);
		if (err)
			note_error(r, FLEET_ERR_REPLY, node, "CLUSTER SLOTS");
	}
	freeReplyObject(rep);
	return err;
}

int fleet_redis_ready(struct fleet_redis *r)
{
	int i, err = -ECONNREFUSED;

	if (!r->map_stale && r->map_known)
		return 0;
	/* The seeds first, then every master learnt: whichever answers. */
	for (i = 0; i < r->n_nodes; i++) {
		err = map_learn(r, i);
		if (!err) {
			r->map_known = true;
			r->map_stale = false;
			return 0;
		}
	}
	return r->map_known ? 0 : err;
}

/* Queues call on its node: EVALSHA, or EVAL once the node answered NOSCRIPT. */
static int call_append(struct fleet_redis *r, struct fleet_call *call)
{
	redisContext *c = r->ctx[call->node];
	static const char asking[] = "ASKING";
	const char *a[1] = { asking };
	size_t al[1] = { 6 };

	if (call->asking && redisAppendCommandArgv(c, 1, a, al) != REDIS_OK)
		return -ENOMEM;
	call->argv[0] = call->whole ? "EVAL" : "EVALSHA";
	call->argvlen[0] = strlen(call->argv[0]);
	call->argv[1] = call->whole ? r->script : r->sha;
	call->argvlen[1] = strlen(call->argv[1]);
	if (redisAppendCommandArgv(c, call->argc, call->argv, call->argvlen) != REDIS_OK)
		return -ENOMEM;
	call->sent = call->node;
	r->calls++;
	return 0;
}

/*
 * NOSCRIPT: the node lost its scripts (restarted, SCRIPT FLUSH). The call
 * goes again next round whole (EVAL, which loads the script), on the
 * pipeline, as one of its tries: never with replies of the pipeline
 * unread. An EVAL answered NOSCRIPT makes no sense: the call failed.
 */
static int call_noscript(struct fleet_redis *r, struct fleet_call *call, redisReply *rep)
{
	bool again = !call->whole && ++call->tries < CALL_TRIES;

	note_error(r, again ? FLEET_ERR_NOSCRIPT : FLEET_ERR_REPLY, call->node, rep->str);
	freeReplyObject(rep);
	call->whole = true;
	return again ? 0 : -1;
}

/*
 * CLUSTERDOWN: the node is up but will not serve (a master of the cluster
 * failed and is not yet replaced, and cluster-require-full-coverage is
 * yes). For this round it is as if the node were unreachable: the call
 * fails, and only its sources fall back. The connection is kept, and the
 * slot map learnt again next round, so the call goes again, to whichever
 * node then owns the slot, as soon as the cluster serves it.
 */
static int call_clusterdown(struct fleet_redis *r, struct fleet_call *call, redisReply *rep)
{
	note_error(r, FLEET_ERR_CLUSTERDOWN, call->node, rep->str);
	freeReplyObject(rep);
	r->map_stale = true;
	return -1;
}

/*
 * What one reply means for its call: done (1), to be sent again where a
 * redirection says (0), or failed (-1).
 */
static int call_settle(struct fleet_redis *r, struct fleet_call *call, redisReply *rep)
{
	struct endpoint to;
	enum redirect_kind kind;
	uint16_t slot;
	int node;

	if (rep->type != REDIS_REPLY_ERROR) {
		call->reply = rep;
		return 1;
	}
	if (!strncmp(rep->str, "NOSCRIPT", 8))
		return call_noscript(r, call, rep);
	if (!strncmp(rep->str, "CLUSTERDOWN", 11))
		return call_clusterdown(r, call, rep);
	kind = redirect_parse(rep->str, &slot, &to);
	if (kind == REDIRECT_TRYAGAIN) {
		note_error(r, FLEET_ERR_TRYAGAIN, call->node, "TRYAGAIN");
		call->later = true;
		freeReplyObject(rep);
		return -1;
	}
	node = kind != REDIRECT_NONE
		       ? nodes_add(r->nodes, &r->n_nodes, FLEET_NODES_MAX, to.host, to.port)
		       : -1;
	if (node < 0 || ++call->tries >= CALL_TRIES) {
		note_error(r, FLEET_ERR_REPLY, call->node, rep->str);
		freeReplyObject(rep);
		return -1;
	}
	freeReplyObject(rep);
	note_error(r, kind == REDIRECT_MOVED ? FLEET_ERR_MOVED : FLEET_ERR_ASK, call->node,
		   kind == REDIRECT_MOVED ? "MOVED" : "ASK");
	if (kind == REDIRECT_MOVED) {
		r->map.node[slot] = (uint16_t)node;
		r->map_stale = true; /* slots move in ranges: learn them all next round */
	}
	call->node = node;
	call->asking = kind == REDIRECT_ASK;
	return 0;
}

/* A call's reply, read after its ASKING's: 0, or an error of wire.h. */
static int call_read(struct fleet_redis *r, struct fleet_call *call, redisReply **rep)
{
	redisContext *c = r->ctx[call->sent];
	struct wire_wait w = wait_of(r);
	int err;

	if (call->asking) {
		err = wire_reply(c, &w, rep);
		if (err)
			return err;
		freeReplyObject(*rep);
		w = wait_of(r);
	}
	return wire_reply(c, &w, rep);
}

/* Reads node's replies for the pending calls sent there, in order. */
static void node_collect(struct fleet_redis *r, int node, struct fleet_call **pending, int n,
			 int *left)
{
	redisReply *rep;
	int i, done, err;

	for (i = 0; i < n; i++) {
		if (pending[i]->sent != node)
			continue;
		err = call_read(r, pending[i], &rep);
		if (err) {
			node_failed(r, node, err, pending[i]->whole ? "EVAL" : "EVALSHA");
			return; /* this call and the rest sent there fail this round */
		}
		pending[i]->sent = -1;
		done = call_settle(r, pending[i], rep);
		if (done)
			(*left)--;
		if (done < 0)
			pending[i]->tries = -1;
	}
}

/* One round: every call not settled goes to its node, then the replies are read. */
static void run_round(struct fleet_redis *r, struct fleet_call **pending, int n, int *left)
{
	bool used[FLEET_NODES_MAX] = { false };
	int i, node;

	for (i = 0; i < n; i++) {
		struct fleet_call *call = pending[i];

		if (call->reply || call->tries < 0)
			continue;
		if (!node_ctx(r, call->node)) {
			/* the slot may have a new owner (a replica promoted): learn it next round
			 */
			r->map_stale = true;
			call->tries = -1;
			(*left)--;
			continue;
		}
		if (call_append(r, call))
			node_failed(r, call->node, -ENOMEM, "EVALSHA");
		used[call->node] = true;
	}
	/* Every node's calls on their way before any reply is waited for. */
	for (node = 0; node < r->n_nodes; node++)
		if (used[node] && r->ctx[node] && wire_push(r->ctx[node]))
			node_failed(r, node, -EIO, "EVALSHA");
	for (node = 0; node < r->n_nodes; node++)
		if (used[node] && r->ctx[node])
			node_collect(r, node, pending, n, left);
	/* Calls whose node broke under them fail this period. */
	for (i = 0; i < n; i++) {
		if (pending[i]->sent >= 0) {
			pending[i]->sent = -1;
			pending[i]->tries = -1;
			(*left)--;
		}
	}
}

int fleet_redis_run(struct fleet_redis *r, struct fleet_call *calls, int n)
{
	struct fleet_call **pending = calloc((size_t)n + 1, sizeof(*pending));
	int i, left = n, failed = 0, round;

	if (!pending)
		return n;
	for (i = 0; i < n; i++) {
		calls[i].reply = NULL;
		calls[i].asking = false;
		calls[i].whole = false;
		calls[i].later = false;
		calls[i].tries = 0;
		calls[i].sent = -1;
		calls[i].node = r->map.node[calls[i].slot];
		if (calls[i].node == FLEET_SLOT_NONE) {
			calls[i].tries = -1;
			left--;
		}
		pending[i] = &calls[i];
	}
	for (round = 0; left > 0 && round < CALL_TRIES; round++)
		run_round(r, pending, n, &left);
	for (i = 0; i < n; i++)
		failed += !calls[i].reply;
	free(pending);
	return failed;
}

redisReply *fleet_redis_command_slot(struct fleet_redis *r, uint16_t slot, int argc,
				     const char **argv, const size_t *argvlen)
{
	int node = r->map.node[slot];
	redisContext *c = node != FLEET_SLOT_NONE ? node_ctx(r, node) : NULL;
	redisReply *rep;

	if (!c)
		r->map_stale = true; /* its slot may have a new owner: learn it next round */
	if (!c || node_command(r, node, argc, argv, argvlen, &rep))
		return NULL;
	if (rep->type == REDIS_REPLY_ERROR) {
		bool down = !strncmp(rep->str, "CLUSTERDOWN", 11);

		note_error(r, down ? FLEET_ERR_CLUSTERDOWN : FLEET_ERR_REPLY, node, rep->str);
		if (down || !strncmp(rep->str, "MOVED", 5))
			r->map_stale = true;
		freeReplyObject(rep);
		rep = NULL;
	}
	return rep;
}

void fleet_redis_free(struct fleet_redis *r)
{
	int i;

	for (i = 0; i < r->n_nodes; i++)
		if (r->ctx[i])
			redisFree(r->ctx[i]);
	memset(r->ctx, 0, sizeof(r->ctx));
}
