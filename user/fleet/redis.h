/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's Redis client, on hiredis 0.14 (no TLS, no cluster routing):
 * one connection per node, AUTH with an ACL user, the GCRA script loaded
 * once and called by EVALSHA (EVAL, on the pipeline, when a node answers
 * NOSCRIPT), and Redis Cluster routing: the slot map from CLUSTER SLOTS,
 * calls pipelined per node, MOVED followed (and the map refreshed), ASK
 * followed with ASKING. A single node without cluster support serves
 * every slot. Every wait is bounded (wire.h): a call's reply by the
 * timeout, everything by the round's end, and a pending stop ends it.
 */
#ifndef SLUICE_FLEET_REDIS_H
#define SLUICE_FLEET_REDIS_H

#include <stdbool.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include "fleet/slots.h"

/* What went wrong, counted by kind for status and the exporter. */
enum fleet_error {
	FLEET_ERR_CONNECT,     /* connect failed or the connection broke */
	FLEET_ERR_TIMEOUT,     /* no reply in time */
	FLEET_ERR_AUTH,	       /* AUTH refused */
	FLEET_ERR_REPLY,       /* an error reply or one of the wrong shape */
	FLEET_ERR_MOVED,       /* MOVED followed */
	FLEET_ERR_ASK,	       /* ASK followed */
	FLEET_ERR_NOSCRIPT,    /* the script was not loaded there: sent whole */
	FLEET_ERR_TRYAGAIN,    /* the keys' slot mid-migration: sent again key by key */
	FLEET_ERR_PROTOCOL,    /* bytes that are not RESP2, or claim more than resp.h's caps */
	FLEET_ERR_CLUSTERDOWN, /* a node that says the cluster is down: its calls fail this round */
	FLEET_ERR_MAX,
};

extern const char *const fleet_error_names[FLEET_ERR_MAX];

#define FLEET_CALL_ARGS_MAX 512 /* 96 keys, each with 4 arguments, and the rest */

/* One script call: its keys (one hash tag) and arguments, its reply once made. */
struct fleet_call {
	uint16_t slot;
	int argc;
	const char *argv[FLEET_CALL_ARGS_MAX];
	size_t argvlen[FLEET_CALL_ARGS_MAX];
	redisReply *reply; /* NULL when the call failed */
	/* Internal: where it goes next. */
	int node;
	int sent; /* the node it was sent to this round, else -1 */
	bool asking;
	bool whole; /* its node answered NOSCRIPT: sent as EVAL, with the script */
	bool later; /* failed with TRYAGAIN: not a Redis down, its keys go again alone */
	int tries;  /* -1: failed */
};

struct fleet_redis {
	struct endpoint nodes[FLEET_NODES_MAX]; /* the seeds first, then masters learnt */
	int n_nodes, n_seeds;
	redisContext *ctx[FLEET_NODES_MAX];
	uint64_t retry_at_ns[FLEET_NODES_MAX]; /* no reconnect before */
	struct slot_map map;
	bool cluster, map_known, map_stale;
	const char *user;     /* NULL: AUTH with the password alone, or none */
	const char *password; /* NULL: no AUTH */
	const char *script;
	char sha[41];
	uint64_t timeout_ns;   /* a call's reply, at most */
	uint64_t round_end_ns; /* no wait past it (fleet_redis_round) */
	int stop_fd;	       /* readable: every wait ends at once (-1: none); set after init */
	uint64_t errors[FLEET_ERR_MAX];
	uint64_t calls; /* script calls sent, retries included */
	char last_error[160];
};

/* Ready to connect to the seeds; nothing is connected yet. */
void fleet_redis_init(struct fleet_redis *r, const struct endpoint *seeds, int n,
		      const char *script, uint64_t timeout_ns);
/* A round from now: no wait of it goes past budget_ns from now. */
void fleet_redis_round(struct fleet_redis *r, uint64_t budget_ns);
/*
 * Connects what is needed and learns the slot map when stale: 0, or
 * negative when no node answered (the agent is then in fallback).
 */
int fleet_redis_ready(struct fleet_redis *r);
/*
 * Runs each call on its slot's node, pipelined per node, following
 * redirections. Each call's reply is set, or NULL when it failed; returns
 * how many failed.
 */
int fleet_redis_run(struct fleet_redis *r, struct fleet_call *calls, int n);
/* One command on any node, for the heartbeat: a reply, or NULL. */
redisReply *fleet_redis_command_slot(struct fleet_redis *r, uint16_t slot, int argc,
				     const char **argv, const size_t *argvlen);
void fleet_redis_free(struct fleet_redis *r);

#endif /* SLUICE_FLEET_REDIS_H */
