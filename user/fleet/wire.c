// SPDX-License-Identifier: GPL-2.0
/* A Redis connection's bytes, bounded (wire.h). */
#define _GNU_SOURCE /* getaddrinfo_a */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
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

/*
 * glibc tells that a lookup of getaddrinfo_a ended only by a signal or a
 * thread of its own, so a wait looks at it this often.
 */
#define LOOKUP_SLICE_NS (10 * 1000 * 1000ULL)
/*
 * Lookups given up on that glibc's threads still run: a resolver that never
 * answers holds each for its own timeouts (up to minutes), so past this
 * many a new name is refused at once rather than queued behind them.
 */
#define LOOKUPS_ABANDONED_MAX 16

/* A name's lookup: glibc reads and writes it until gai_error says it ended. */
struct lookup {
	struct gaicb cb;
	struct addrinfo hints;
	char host[ENDPOINT_HOST_MAX];
	char port[8];
	struct lookup *next;
};

/* The agent's one thread keeps them. */
static struct lookup *abandoned;

static void lookup_free(struct lookup *l)
{
	if (l->cb.ar_result)
		freeaddrinfo(l->cb.ar_result);
	free(l);
}

/* Frees the lookups given up on that glibc has ended since: how many still run. */
static int lookups_reap(void)
{
	struct lookup **p = &abandoned, *l;
	int running = 0;

	while ((l = *p)) {
		if (gai_error(&l->cb) == EAI_INPROGRESS) {
			p = &l->next;
			running++;
			continue;
		}
		*p = l->next;
		lookup_free(l);
	}
	return running;
}

/* Gives l up: freed if glibc cancels it, kept until it ends otherwise. */
static void lookup_abandon(struct lookup *l)
{
	if (gai_cancel(&l->cb) != EAI_NOTCANCELED) {
		lookup_free(l);
		return;
	}
	l->next = abandoned;
	abandoned = l;
}

/* Until l ends (0), w's deadline passes (-ETIMEDOUT) or a stop is pending. */
static int lookup_wait(struct lookup *l, const struct wire_wait *w)
{
	struct wire_wait slice = { .stop_fd = w->stop_fd };
	uint64_t next;
	int err;

	while (gai_error(&l->cb) == EAI_INPROGRESS) {
		next = monotonic_ns() + LOOKUP_SLICE_NS;
		slice.deadline_ns = next < w->deadline_ns ? next : w->deadline_ns;
		err = wire_poll(-1, 0, &slice);
		if (err == -ETIMEDOUT && slice.deadline_ns < w->deadline_ns)
			continue;
		if (err < 0)
			return err;
	}
	return 0;
}

/* A lookup of e's host name (port: e's port) begun in glibc's threads, or NULL. */
static struct lookup *lookup_start(const struct endpoint *e, const char *port)
{
	struct lookup *l = calloc(1, sizeof(*l));
	struct gaicb *list[1];

	if (!l)
		return NULL;
	snprintf(l->host, sizeof(l->host), "%s", e->host);
	snprintf(l->port, sizeof(l->port), "%s", port);
	l->hints = (struct addrinfo){ .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	l->cb = (struct gaicb){ .ar_name = l->host,
				.ar_service = l->port,
				.ar_request = &l->hints };
	list[0] = &l->cb;
	if (!getaddrinfo_a(GAI_NOWAIT, list, 1, NULL))
		return l;
	free(l);
	return NULL;
}

/*
 * e's addresses by the deadline: an address at once; a name through
 * getaddrinfo_a, whose resolver may never answer (a name a hostile Redis
 * gave in MOVED or CLUSTER SLOTS), so that neither a round nor a stop
 * waits for it. 0 and *out, -EAGAIN (unanswered by the deadline),
 * -ECANCELED, -ENXIO (no address), -EBUSY (too many lookups still
 * unanswered) or -ENOMEM.
 */
static int wire_resolve(const struct endpoint *e, const struct wire_wait *w, struct addrinfo **out)
{
	struct addrinfo numeric = { .ai_socktype = SOCK_STREAM,
				    .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct lookup *l;
	char port[8];
	int err;

	snprintf(port, sizeof(port), "%u", e->port);
	if (!getaddrinfo(e->host, port, &numeric, out))
		return 0;
	if (lookups_reap() >= LOOKUPS_ABANDONED_MAX)
		return -EBUSY;
	l = lookup_start(e, port);
	if (!l)
		return -ENOMEM;
	err = lookup_wait(l, w);
	if (err) {
		lookup_abandon(l);
		return err == -ETIMEDOUT ? -EAGAIN : err;
	}
	err = gai_error(&l->cb);
	if (!err) {
		*out = l->cb.ar_result;
		l->cb.ar_result = NULL;
	}
	lookup_free(l);
	return !err ? 0 : err == EAI_MEMORY ? -ENOMEM : -ENXIO;
}

/* A connected, non-blocking socket to a by the deadline, or a negative errno. */
static int wire_dial(const struct addrinfo *a, const struct wire_wait *w)
{
	int fd, err, so = 0, one = 1;
	socklen_t len = sizeof(so);

	fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
	if (fd < 0)
		return -errno;
	err = connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS ? -errno : 0;
	if (!err)
		err = wire_poll(fd, POLLOUT, w);
	if (err >= 0)
		err = getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) ? -errno : -so;
	if (err < 0) {
		close(fd);
		return err;
	}
	/* A round's calls are small and go together: sent at once, as hiredis does. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int wire_connect(const struct endpoint *e, const struct wire_wait *w, redisContext **out)
{
	struct addrinfo *list, *a;
	redisContext *c;
	int err, fd = -EHOSTUNREACH;

	err = wire_resolve(e, w, &list);
	if (err)
		return err;
	/* Each address in turn while the wait lasts. */
	for (a = list; a; a = a->ai_next) {
		fd = wire_dial(a, w);
		if (fd >= 0 || fd == -ETIMEDOUT || fd == -ECANCELED)
			break;
	}
	freeaddrinfo(list);
	if (fd < 0)
		return fd;
	c = redisConnectFd(fd);
	if (!c || c->err) {
		if (c)
			redisFree(c);
		else
			close(fd);
		return -ENOMEM;
	}
	/* Non-blocking: hiredis is to take EAGAIN as "later", not as a fault. */
	c->flags &= ~REDIS_BLOCK;
	*out = c;
	return 0;
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
