// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the fleet agent's reply parsing on arbitrary bytes from
 * Redis, under ASan and UBSan. resp_scan (user/fleet/resp.c) must find the
 * same reply fed whole or in two parts; a reply it takes must be exactly
 * the one hiredis's reader then builds (the same bytes consumed, the same
 * elements), within every cap; and the agent's readers of replies
 * (CLUSTER SLOTS, MOVED and ASK, the heartbeat) must take whatever hiredis
 * built. Any difference aborts with the input.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hiredis/hiredis.h>
#include "fleet/resp.h"
#include "fleet/script.h"
#include "fleet/slots.h"

static void disagree(const char *what, const uint8_t *d, size_t len)
{
	size_t i;

	fprintf(stderr, "fuzz-reply: %s, for these %zu bytes:\n", what, len);
	for (i = 0; i < len && i < 512; i++)
		fprintf(stderr, "%02x%s", d[i], i % 16 == 15 ? "\n" : " ");
	fputc('\n', stderr);
	abort();
}

/* The elements under r, nested ones included, each within the caps; -1 past one. */
static long tree_elements(const redisReply *r, int depth)
{
	long n = 0, sub;
	size_t i;

	if (r->type == REDIS_REPLY_STRING && r->len > RESP_BULK_MAX)
		return -1;
	if ((r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR) &&
	    r->len > RESP_LINE_MAX)
		return -1;
	if (r->type != REDIS_REPLY_ARRAY)
		return 0;
	if ((r->elements && depth >= RESP_DEPTH_MAX) || r->elements > RESP_ARRAY_MAX)
		return -1;
	for (i = 0; i < r->elements; i++) {
		sub = tree_elements(r->element[i], depth + 1);
		if (sub < 0)
			return -1;
		n += 1 + sub;
	}
	return n;
}

/* What the agent reads from a reply: none of it may crash on any. */
static void readers(const redisReply *r)
{
	static struct slot_map map;
	struct endpoint nodes[FLEET_NODES_MAX], to;
	uint16_t slot;
	int n = 0;

	slot_map_parse(r, &map, nodes, &n, FLEET_NODES_MAX);
	if (r->type == REDIS_REPLY_ERROR)
		redirect_parse(r->str, &slot, &to);
	fleet_heartbeat_hosts(r, "host:eth0:1", 1000);
}

/* hiredis's reader on the same bytes: one reply, exactly n of them consumed. */
static void hiredis_check(const uint8_t *data, size_t size, ssize_t n, size_t elements)
{
	redisReader *rd = redisReaderCreate();
	void *reply = NULL;
	long got;

	if (!rd)
		abort();
	if (redisReaderFeed(rd, (const char *)data, size) != REDIS_OK ||
	    redisReaderGetReply(rd, &reply) != REDIS_OK || !reply)
		disagree("resp_scan took a reply hiredis does not", data, size);
	if (rd->len - rd->pos != size - (size_t)n)
		disagree("hiredis and resp_scan end the reply at different bytes", data, size);
	got = tree_elements(reply, 0);
	if (got < 0)
		disagree("a reply resp_scan took is past a cap", data, size);
	if ((size_t)got != elements)
		disagree("hiredis built another number of elements", data, size);
	readers(reply);
	freeReplyObject(reply);
	redisReaderFree(rd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct resp_scan s, whole_scan;
	ssize_t whole, part;
	size_t split = size ? data[size - 1] * size / 256 : 0;

	resp_scan_reset(&whole_scan);
	whole = resp_scan(&whole_scan, buf, size);
	resp_scan_reset(&s);
	part = resp_scan(&s, buf, split);
	if (!part)
		part = resp_scan(&s, buf, size);
	if (part != whole)
		disagree("resp_scan in two parts and whole disagree", data, size);
	if (whole > (ssize_t)size || whole > (ssize_t)RESP_REPLY_MAX)
		disagree("resp_scan took more bytes than there are, or than the cap", data, size);
	if (whole > 0)
		hiredis_check(data, size, whole, whole_scan.elements);
	return 0;
}
