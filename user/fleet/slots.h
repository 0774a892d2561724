/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Redis Cluster routing, as the cluster specification defines it: a key's
 * slot is CRC16 (XMODEM) of its hash tag modulo 16384; the slot map comes
 * from CLUSTER SLOTS; a MOVED or ASK error names the slot's new node.
 * Pure: no sockets, so the unit tests check it all.
 */
#ifndef SLUICE_FLEET_SLOTS_H
#define SLUICE_FLEET_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <hiredis/hiredis.h>
#include "values/endpoint.h"

#define REDIS_SLOTS	16384
#define FLEET_NODES_MAX ENDPOINTS_MAX /* masters and seeds an agent knows */
#define FLEET_SLOT_NONE UINT16_MAX

/* Which node (index into a node list) serves each slot; FLEET_SLOT_NONE: unknown. */
struct slot_map {
	uint16_t node[REDIS_SLOTS];
};

uint16_t crc16_xmodem(const char *buf, size_t len);
/* The slot of key: of its hash tag ({...}, non-empty, first) when it has one. */
uint16_t key_slot(const char *key, size_t len);

/* The index of host:port in nodes, adding it when new; -ENOSPC when full. */
int nodes_add(struct endpoint *nodes, int *n, int max, const char *host, uint16_t port);

/*
 * Fills map from a CLUSTER SLOTS reply, adding each range's master to
 * nodes. Slots the reply leaves out stay FLEET_SLOT_NONE. -EPROTO when the
 * reply is not shaped as the specification says.
 */
int slot_map_parse(const redisReply *r, struct slot_map *map, struct endpoint *nodes, int *n,
		   int max);

/*
 * REDIRECT_TRYAGAIN: a call of several keys while their slot migrates and
 * they are split between the two nodes; the same call succeeds later.
 */
enum redirect_kind { REDIRECT_NONE, REDIRECT_MOVED, REDIRECT_ASK, REDIRECT_TRYAGAIN };

/*
 * "MOVED 3999 127.0.0.1:6381" or "ASK ...": the kind, slot and node;
 * "TRYAGAIN ...": that kind alone; else REDIRECT_NONE.
 */
enum redirect_kind redirect_parse(const char *err, uint16_t *slot, struct endpoint *to);

#endif /* SLUICE_FLEET_SLOTS_H */
