/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Redis connection's bytes, bounded: hiredis formats commands and builds
 * replies, but every wait is here, on a non-blocking socket, with poll
 * and a deadline for the whole exchange (not per read, so a Redis that
 * sends a byte at a time cannot hold it), and ends at once when a stop
 * signal is pending (stop_fd, a signalfd). Every reply's bytes are checked
 * against resp.h's caps before hiredis sees them.
 */
#ifndef SLUICE_FLEET_WIRE_H
#define SLUICE_FLEET_WIRE_H

#include <stdint.h>
#include <hiredis/hiredis.h>
#include "values/endpoint.h"

struct wire_wait {
	uint64_t deadline_ns; /* CLOCK_MONOTONIC */
	int stop_fd;	      /* readable: give up (-ECANCELED); -1: none */
};

/*
 * A connection to e by the deadline, its host name looked up within it
 * too: 0 and *out, or -ETIMEDOUT, -ECANCELED, -ENXIO when e's host name
 * does not resolve, -EAGAIN when its lookup was not answered by the
 * deadline, -EBUSY when too many earlier lookups are still unanswered, or
 * why it was refused (a negative errno).
 */
int wire_connect(const struct endpoint *e, const struct wire_wait *w, redisContext **out);
/* Writes what the socket takes of the commands queued, without waiting: 0 or -EIO. */
int wire_push(redisContext *c);
/*
 * The next reply, writing the commands queued meanwhile: 0 and *out, or
 * -ETIMEDOUT, -ECANCELED, -EPROTO (not RESP2, or past the caps) or -EIO
 * (the connection broke). After an error the connection is unusable.
 */
int wire_reply(redisContext *c, const struct wire_wait *w, redisReply **out);

#endif /* SLUICE_FLEET_WIRE_H */
