/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One Redis reply's bytes (RESP2), checked before hiredis builds it: a
 * reply is taken only once it is whole and within the caps below, so a
 * Redis that claims two billion elements, a gigabyte bulk string or an
 * endless line is a protocol error at its header, not an allocation.
 * The caps are what sluice's own calls can need (docs/fleet.md). Pure:
 * no sockets; tests/fuzz/fuzz_reply.c checks it against hiredis's reader.
 */
#ifndef SLUICE_FLEET_RESP_H
#define SLUICE_FLEET_RESP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RESP_LINE_MAX	  1024	     /* a status, error or integer line, or a header */
#define RESP_BULK_MAX	  1024	     /* a bulk string: a SHA, a host, a node id, an agent's name */
#define RESP_ARRAY_MAX	  16384	     /* one array: CLUSTER SLOTS with a range per slot */
#define RESP_ELEMENTS_MAX 262144     /* a whole reply's elements, nested ones included */
#define RESP_DEPTH_MAX	  4	     /* CLUSTER SLOTS: ranges, a range, a node, its metadata */
#define RESP_REPLY_MAX	  (4u << 20) /* a whole reply's bytes */

/* Where a scan of one reply is: fed the same bytes again with more after them. */
struct resp_scan {
	size_t pos;		       /* bytes of whole items scanned */
	size_t elements;	       /* array elements announced so far */
	int depth;		       /* arrays open */
	uint32_t left[RESP_DEPTH_MAX]; /* elements still to come in each */
};

void resp_scan_reset(struct resp_scan *s);
/*
 * Scans the reply at the start of buf (len bytes): its length once it is
 * whole, 0 while more bytes are needed, -EPROTO when the bytes are not
 * RESP2 or claim more than the caps. Resumes where the last call stopped.
 */
ssize_t resp_scan(struct resp_scan *s, const char *buf, size_t len);

#endif /* SLUICE_FLEET_RESP_H */
