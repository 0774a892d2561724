// SPDX-License-Identifier: GPL-2.0
/* Redis Cluster key slots, the slot map and redirections (slots.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fleet/slots.h"

uint16_t crc16_xmodem(const char *buf, size_t len)
{
	uint16_t crc = 0;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		crc ^= (uint16_t)((unsigned char)buf[i] << 8);
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1 ^ 0x1021) : (uint16_t)(crc << 1);
	}
	return crc;
}

uint16_t key_slot(const char *key, size_t len)
{
	const char *open = memchr(key, '{', len), *close;

	if (open) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
		if (close && close > open + 1)
			return crc16_xmodem(open + 1, (size_t)(close - open - 1)) % REDIS_SLOTS;
	}
	return crc16_xmodem(key, len) % REDIS_SLOTS;
}

int nodes_add(struct endpoint *nodes, int *n, int max, const char *host, uint16_t port)
{
	int i;

	for (i = 0; i < *n; i++)
		if (nodes[i].port == port && !strcmp(nodes[i].host, host))
			return i;
	if (*n == max || strlen(host) >= ENDPOINT_HOST_MAX)
		return -ENOSPC;
	snprintf(nodes[*n].host, sizeof(nodes[*n].host), "%s", host);
	nodes[*n].port = port;
	return (*n)++;
}

/* One range of CLUSTER SLOTS: [start, end, [host, port, ...], replicas...]. */
static int slot_range_parse(const redisReply *r, struct slot_map *map, struct endpoint *nodes,
			    int *n, int max)
{
	const redisReply *m;
	long long lo, hi, s;
	int idx;

	if (r->type != REDIS_REPLY_ARRAY || r->elements < 3)
		return -EPROTO;
	m = r->element[2];
	if (r->element[0]->type != REDIS_REPLY_INTEGER ||
	    r->element[1]->type != REDIS_REPLY_INTEGER || m->type != REDIS_REPLY_ARRAY ||
	    m->elements < 2 || m->element[0]->type != REDIS_REPLY_STRING ||
	    m->element[1]->type != REDIS_REPLY_INTEGER)
		return -EPROTO;
	lo = r->element[0]->integer;
	hi = r->element[1]->integer;
	if (lo < 0 || hi >= REDIS_SLOTS || lo > hi || m->element[1]->integer < 1 ||
	    m->element[1]->integer > 65535)
		return -EPROTO;
	idx = nodes_add(nodes, n, max, m->element[0]->str, (uint16_t)m->element[1]->integer);
	if (idx < 0)
		return idx;
	for (s = lo; s <= hi; s++)
		map->node[s] = (uint16_t)idx;
	return 0;
}

int slot_map_parse(const redisReply *r, struct slot_map *map, struct endpoint *nodes, int *n,
		   int max)
{
	size_t i;
	int err;

	if (!r || r->type != REDIS_REPLY_ARRAY)
		return -EPROTO;
	for (i = 0; i < REDIS_SLOTS; i++)
		map->node[i] = FLEET_SLOT_NONE;
	for (i = 0; i < r->elements; i++) {
		err = slot_range_parse(r->element[i], map, nodes, n, max);
		if (err)
			return err;
	}
	return 0;
}

enum redirect_kind redirect_parse(const char *err, uint16_t *slot, struct endpoint *to)
{
	enum redirect_kind kind;
	const char *p;
	char *end;
	long s;

	if (!strncmp(err, "TRYAGAIN", 8))
		return REDIRECT_TRYAGAIN;
	if (!strncmp(err, "MOVED ", 6))
		kind = REDIRECT_MOVED, p = err + 6;
	else if (!strncmp(err, "ASK ", 4))
		kind = REDIRECT_ASK, p = err + 4;
	else
		return REDIRECT_NONE;
	errno = 0;
	s = strtol(p, &end, 10);
	if (errno || end == p || *end != ' ' || s < 0 || s >= REDIS_SLOTS)
		return REDIRECT_NONE;
	if (parse_endpoint(end + 1, strlen(end + 1), to))
		return REDIRECT_NONE;
	*slot = (uint16_t)s;
	return kind;
}
