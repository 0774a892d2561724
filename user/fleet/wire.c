// SPDX-License-Identifier: GPL-2.0
/* A Redis connection's bytes, bounded (wire.h). */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include "base/clock.h"
#include "fleet/resp.h"
#include "fleet/wire.h"

/*
 * Waits until fd has one of events, the deadline passes (-ETIMEDOUT) or
 * a stop is pending (-ECANCELED): the events that came.
 */
static int wire_poll(int fd, short events, const struct wire_wait *w)
{
	struct pollfd p[2] = { { .fd = fd, .events = events },
			       { .fd = w->stop_fd, .events = POLLIN } };
	uint64_t now, ms;
	int n;

	for (;;) {
		now = monotonic_ns();
		if (now >= w->deadline_ns)
			return -ETIMEDOUT;
		ms = (w->deadline_ns - now + 999999) / 1000000;
		p[0].revents = p[1].revents = 0;
		n = poll(p, w->stop_fd >= 0 ? 2 : 1, ms > INT_MAX ? INT_MAX : (int)ms);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (w->stop_fd >= 0 && p[1].revents)
			return -ECANCELED;
		if (n > 0 && p[0].revents)
			return p[0].revents;
	}
}

int wire_connect(const struct endpoint *e, const struct wire_wait *w, redisContext **out)
{
	redisContext *c = redisConnectNonBlock(e->host, e->port);
	socklen_t len = sizeof(int);
	int err, so = 0;

	if (!c)
		return -ENOMEM;
	if (c->err) {
		/* hiredis says REDIS_ERR_OTHER only when getaddrinfo failed */
		err = c->err == REDIS_ERR_OTHER	      ? -ENXIO
		      : c->err == REDIS_ERR_IO && errno ? -errno
							: -EHOSTUNREACH;
		goto fail;
	}
	err = wire_poll(c->fd, POLLOUT, w);
	if (err < 0)
		goto fail;
	err = getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &so, &len) ? -errno : -so;
	if (err)
		goto fail;
	*out = c;
	return 0;
fail:
	redisFree(c);
	return err;
}

int wire_push(redisContext *c)
{
	int done;

	return redisBufferWrite(c, &done) == REDIS_OK ? 0 : -EIO;
}

/* Reads or writes what the socket is ready for, within the wait. */
static int wire_step(redisContext *c, const struct wire_wait *w, int *written)
{
	int ev;

	if (!*written && redisBufferWrite(c, written) != REDIS_OK)
		return -EIO;
	ev = wire_poll(c->fd, *written ? POLLIN : POLLIN | POLLOUT, w);
	if (ev < 0)
		return ev;
	/* POLLHUP and POLLERR too: the read says what happened. */
	if ((ev & ~POLLOUT) && redisBufferRead(c) != REDIS_OK)
		return -EIO;
	return 0;
}

int wire_reply(redisContext *c, const struct wire_wait *w, redisReply **out)
{
	redisReader *rd = c->reader;
	struct resp_scan s;
	void *reply = NULL;
	int written = 0, err;
	ssize_t n;

	*out = NULL;
	resp_scan_reset(&s);
	/* hiredis builds it only once it is whole and within the caps. */
	while (!(n = resp_scan(&s, rd->buf + rd->pos, rd->len - rd->pos))) {
		err = wire_step(c, w, &written);
		if (err)
			return err;
	}
	if (n < 0 || redisGetReplyFromReader(c, &reply) != REDIS_OK || !reply)
		return -EPROTO;
	*out = reply;
	return 0;
}
