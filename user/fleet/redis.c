// SPDX-License-Identifier: GPL-2.0
/* The agent's Redis client (redis.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/clock.h"
#include "fleet/redis.h"

#define RECONNECT_NS (500 * 1000000ULL) /* a node that failed is tried again after */
#define CALL_TRIES   4			/* redirections followed per call */

const char *const fleet_error_names[FLEET_ERR_MAX] = {
	[FLEET_ERR_CONNECT] = "connect",   [FLEET_ERR_TIMEOUT] = "timeout",
	[FLEET_ERR_AUTH] = "auth",	   [FLEET_ERR_REPLY] = "reply",
	[FLEET_ERR_MOVED] = "moved",	   [FLEET_ERR_ASK] = "ask",
	[FLEET_ERR_NOSCRIPT] = "noscript", [FLEET_ERR_TRYAGAIN] = "tryagain",
};

static void note_error(struct fleet_redis *r, enum fleet_error kind, int node, const char *what)
{
	r->errors[kind]++;
	snprintf(r->last_error, sizeof(r->last_error), "%s:%u: %s",
		 node >= 0 ? r->nodes[node].host : "?", node >= 0 ? r->nodes[node].port : 0, what);
}

static struct timeval tv_of(uint64_t ns)
{
	return (struct timeval){ .tv_sec = (time_t)(ns / 1000000000ULL),
				 .tv_usec = (suseconds_t)(ns % 1000000000ULL / 1000) };
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
	r->map_stale = true;
}

static void node_drop(struct fleet_redis *r, int node)
{
	if (r->ctx[node])
		redisFree(r->ctx[node]);
	r->ctx[node] = NULL;
	r->retry_at_ns[node] = monotonic_ns() + RECONNECT_NS;
}

/* A failed I/O on node: its kind, and the connection dropped. */
static void node_failed(struct fleet_redis *r, int node)
{
	redisContext *c = r->ctx[node];
	bool timeout = c && c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);

	note_error(r, timeout ? FLEET_ERR_TIMEOUT : FLEET_ERR_CONNECT, node,
		   c && c->errstr[0] ? c->errstr : "connection lost");
	node_drop(r, node);
	r->map_stale = true;
}

static redisReply *command(redisContext *c, int argc, const char **argv, const size_t *len)
{
	return redisCommandArgv(c, argc, argv, len);
}

static int node_auth(struct fleet_redis *r, int node)
{
	const char *argv[3] = { "AUTH", r->user, r->password };
	size_t len[3] = { 4, r->user ? strlen(r->user) : 0, strlen(r->password) };
	redisReply *rep;
	int err = 0;

	if (!r->user) {
		argv[1] = r->password;
		len[1] = len[2];
	}
	rep = command(r->ctx[node], r->user ? 3 : 2, argv, len);
	if (!rep)
		return -EIO;
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
	redisReply *rep = command(r->ctx[node], 3, argv, len);
	int err = 0;

	if (!rep)
		return -EIO;
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

/* A connection to node, made (with AUTH and the script) when there is none. */
static redisContext *node_ctx(struct fleet_redis *r, int node)
{
	struct timeval tv = tv_of(r->timeout_ns);
	int err;

	if (r->ctx[node])
		return r->ctx[node];
	if (monotonic_ns() < r->retry_at_ns[node])
		return NULL;
	r->ctx[node] = redisConnectWithTimeout(r->nodes[node].host, r->nodes[node].port, tv);
	if (!r->ctx[node] || r->ctx[node]->err) {
		node_failed(r, node);
		return NULL;
	}
	redisSetTimeout(r->ctx[node], tv);
	err = r->password ? node_auth(r, node) : 0;
	if (!err)
		err = node_load_script(r, node);
	if (err) {
		if (err == -EIO)
			node_failed(r, node);
		else
			node_drop(r, node);
		return NULL;
	}
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
	rep = command(c, 2, argv, len);
	if (!rep) {
		node_failed(r, node);
		return -EIO;
	}
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

static void call_append(struct fleet_redis *r, struct fleet_call *call)
{
	redisContext *c = r->ctx[call->node];
	static const char asking[] = "ASKING";
	const char *a[1] = { asking };
	size_t al[1] = { 6 };

	if (call->asking)
		redisAppendCommandArgv(c, 1, a, al);
	call->argv[0] = "EVALSHA";
	call->argvlen[0] = 7;
	call->argv[1] = r->sha;
	call->argvlen[1] = 40;
	redisAppendCommandArgv(c, call->argc, call->argv, call->argvlen);
	call->sent = call->node;
	r->calls++;
}

/* The same call sent whole (EVAL), on its own, after a NOSCRIPT. */
static redisReply *call_eval(struct fleet_redis *r, struct fleet_call *call)
{
	redisContext *c = r->ctx[call->node];

	call->argv[0] = "EVAL";
	call->argvlen[0] = 4;
	call->argv[1] = r->script;
	call->argvlen[1] = strlen(r->script);
	r->calls++;
	return redisCommandArgv(c, call->argc, call->argv, call->argvlen);
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
	if (!strncmp(rep->str, "NOSCRIPT", 8)) {
		r->errors[FLEET_ERR_NOSCRIPT]++;
		freeReplyObject(rep);
		rep = call_eval(r, call);
		if (!rep) {
			node_failed(r, call->node);
			return -1;
		}
		return call_settle(r, call, rep);
	}
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

/* Reads node's replies for the pending calls sent there, in order. */
static void node_collect(struct fleet_redis *r, int node, struct fleet_call **pending, int n,
			 int *left)
{
	redisReply *rep;
	void *any;
	int i, done;

	for (i = 0; i < n; i++) {
		if (pending[i]->sent != node)
			continue;
		pending[i]->sent = -1;
		if (pending[i]->asking) {
			if (redisGetReply(r->ctx[node], &any) != REDIS_OK)
				goto broken;
			freeReplyObject(any);
		}
		if (redisGetReply(r->ctx[node], &any) != REDIS_OK)
			goto broken;
		rep = any;
		done = call_settle(r, pending[i], rep);
		if (done)
			(*left)--;
		if (done < 0)
			pending[i]->tries = -1;
		if (!r->ctx[node])
			return;
	}
	return;
broken:
	node_failed(r, node);
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
			call->tries = -1;
			(*left)--;
			continue;
		}
		call_append(r, call);
		used[call->node] = true;
	}
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
		return NULL;
	rep = redisCommandArgv(c, argc, argv, argvlen);
	if (!rep)
		node_failed(r, node);
	else if (rep->type == REDIS_REPLY_ERROR) {
		note_error(r, FLEET_ERR_REPLY, node, rep->str);
		if (!strncmp(rep->str, "MOVED", 5))
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
