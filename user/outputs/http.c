// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's HTTP server, on libmicrohttpd: a small thread pool,
 * bounded connections and idle timeouts, so a burst of requests or a
 * garbage one costs a queue or an error reply, never the process.
 *
 * Slow clients cannot hold the server: every request must arrive whole
 * within a deadline that trickling bytes does not extend, and each
 * connection serves one request. Connections are refused only past a limit
 * in all, never per client: by default every scraper comes from 127.0.0.1,
 * so a limit per address would be the whole limit. Instead, connections
 * still sending their request are bounded per address and in all, and a
 * new connection takes the place of the oldest past a short grace: a
 * client that sends its request promptly is always served, even from the
 * address of one that stalls, and a stalled client that reconnects at once
 * only replaces its own.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include "base/clock.h"
#include "outputs/http.h"

#define HTTP_THREADS	  4   /* requests served at once */
#define HTTP_CONNECTIONS  512 /* open connections in all; more are refused */
#define HTTP_IDLE_TIMEOUT 10  /* seconds before an idle connection is closed */
/* From accept to a whole request, however it trickles; checked every HTTP_TICK_NS. */
#define HTTP_REQUEST_NS (2 * NSEC_PER_SEC)
/*
 * Connections still sending their request, per client address and in all,
 * before a new one makes the oldest go; only one older than the grace goes,
 * so a new connection has that long to send its request.
 */
#define HTTP_PENDING_PER_CLIENT 16
#define HTTP_PENDING_MAX	128
#define HTTP_GRACE_NS		(NSEC_PER_SEC / 4)

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int status, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (owned)
		resp = MHD_create_response_from_buffer_with_free_callback(len, body, free);
	else
		resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* One request per connection: the request deadline then covers them all. */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	return reply(conn, status, "text/plain; charset=utf-8", (char *)text, strlen(text), false);
}

/*
 * Open connections and when each must have sent its request, newest first.
 * The main thread shuts down the late ones, and a new connection the
 * oldest still sending when too many are; libmicrohttpd then closes them.
 * It reports a connection closed before it closes the socket, under the
 * same lock, so a descriptor shut down here is always still the
 * connection's.
 */
struct tracked {
	struct tracked *prev, *next;
	int fd;
	uint64_t accepted_ns;
	bool requested;		  /* the whole request arrived: no deadline any more */
	unsigned char client[16]; /* the client's address, IPv4 ones in the first 4 bytes */
};

static struct tracked tracked_head = { &tracked_head, &tracked_head, -1, 0, true, { 0 } };
static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;

static void client_of(struct MHD_Connection *conn, unsigned char client[16])
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = info ? info->client_addr : NULL;

	memset(client, 0, 16);
	if (sa && sa->sa_family == AF_INET6)
		memcpy(client, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	else if (sa && sa->sa_family == AF_INET)
		memcpy(client, &((const struct sockaddr_in *)sa)->sin_addr, 4);
}

/* Shuts t down once: libmicrohttpd sees the end of its input and closes it. */
static void cut_off(struct tracked *t)
{
	shutdown(t->fd, SHUT_RDWR);
	t->requested = true;
}

/*
 * With t just added: when its address, or every client, has more
 * connections still sending than allowed, the oldest of them past the
 * grace goes (from the address first). None past it: all are new, and
 * wait for the next arrival or their deadline. Under tracked_lock.
 */
static void make_room(const struct tracked *t)
{
	struct tracked *p, *old_same = NULL, *old_any = NULL;
	int same = 0, all = 0;

	/* Newest first: the last one past the grace is the oldest. */
	for (p = tracked_head.next; p != &tracked_head; p = p->next) {
		bool is_same = !memcmp(p->client, t->client, sizeof(t->client));

		if (p->requested)
			continue;
		all++;
		same += is_same;
		if (p->accepted_ns + HTTP_GRACE_NS > t->accepted_ns)
			continue;
		old_any = p;
		if (is_same)
			old_same = p;
	}
	if (same > HTTP_PENDING_PER_CLIENT && old_same)
		cut_off(old_same);
	else if (all > HTTP_PENDING_MAX && old_any)
		cut_off(old_any);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *info;
	struct tracked *t = *socket_context;

	(void)cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		t = info ? calloc(1, sizeof(*t)) : NULL;
		if (!t)
			return; /* untracked: only the idle timeout bounds it */
		t->fd = info->connect_fd;
		t->accepted_ns = monotonic_ns();
		client_of(conn, t->client);
		pthread_mutex_lock(&tracked_lock);
		t->next = tracked_head.next;
		t->prev = &tracked_head;
		t->next->prev = t;
		tracked_head.next = t;
		make_room(t);
		pthread_mutex_unlock(&tracked_lock);
		*socket_context = t;
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED && t) {
		pthread_mutex_lock(&tracked_lock);
		t->prev->next = t->next;
		t->next->prev = t->prev;
		pthread_mutex_unlock(&tracked_lock);
		free(t);
		*socket_context = NULL;
	}
}

static void mark_requested(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct tracked *t = info ? info->socket_context : NULL;

	if (t) {
		pthread_mutex_lock(&tracked_lock);
		t->requested = true;
		pthread_mutex_unlock(&tracked_lock);
	}
}

/* Shuts down connections whose request is not whole by their deadline; returns how many. */
int http_close_late(void)
{
	uint64_t now = monotonic_ns();
	struct tracked *t;
	int n = 0;

	pthread_mutex_lock(&tracked_lock);
	for (t = tracked_head.next; t != &tracked_head; t = t->next) {
		if (t->requested || now - t->accepted_ns < HTTP_REQUEST_NS)
			continue;
		cut_off(t);
		n++;
	}
	pthread_mutex_unlock(&tracked_lock);
	return n;
}

/*
 * The request target, path and query, as its raw bytes are checked before
 * anything is decoded: no control byte, and every % two hex digits that do
 * not stand for one. libmicrohttpd would decode /metrics%00 to a string
 * that ends where the %00 was, /metrics, and a raw NUL the same way.
 */
static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)(c | 0x20);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The byte a %XX at s stands for, or -1 when it is no escape. */
static int escaped_byte(const char *s)
{
	int hi = hex_digit(s[1]), lo = hi < 0 ? -1 : hex_digit(s[2]);

	return lo < 0 ? -1 : hi << 4 | lo;
}

static bool target_clean(const char *s)
{
	int b;

	for (; *s; s++) {
		if (is_control((unsigned char)*s))
			return false;
		if (*s != '%')
			continue;
		b = escaped_byte(s);
		if (b < 0 || is_control((unsigned char)b))
			return false;
		s += 2;
	}
	return true;
}

bool http_path_is(const char *path, const char *want)
{
	size_t i, n = strlen(want);

	for (i = 0; *path; i++) {
		if (i == n)
			return false;
		if ((*path == '%' ? escaped_byte(path) : *path) != want[i])
			return false;
		path += *path == '%' ? 3 : 1;
	}
	return i == n;
}

bool http_path_rest(const char *path, const char *prefix, char *rest, size_t len)
{
	size_t i, n = strlen(prefix);
	int c;

	for (i = 0; *path; i++) {
		c = *path == '%' ? escaped_byte(path) : *path;
		path += *path == '%' ? 3 : 1;
		if (i < n && c != prefix[i])
			return false;
		if (i >= n && i - n + 1 >= len)
			return false;
		if (i >= n)
			rest[i - n] = (char)c;
	}
	if (i <= n)
		return false;
	rest[i - n] = '\0';
	return true;
}

/*
 * libmicrohttpd's first look at the request line, before it changes a
 * byte: the target's end when it is clean, else NULL. This becomes the
 * request's context (on_request's *req).
 */
static void *on_target(void *cls, const char *target, struct MHD_Connection *conn)
{
	(void)cls;
	(void)conn;
	return target && target_clean(target) ? (void *)(target + strlen(target)) : NULL;
}

/* The path stays as sent, for path_is_metrics to decode; the query is not read. */
static size_t unescape_none(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

/*
 * Was the target clean and whole? libmicrohttpd (0.9) keeps the request
 * line in one buffer, target and version split by the NUL it writes: a raw
 * NUL in the target ends its string before that one, and the version then
 * does not start right after it. A libmicrohttpd that lays the line out
 * otherwise fails here for every request, never serving a bad one.
 */
static bool target_whole(void *const *req, const char *version)
{
	const char *end = *req;

	return end && end + 1 == version;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	struct http_reply r = { 0 };
	http_route route = (http_route)(uintptr_t)cls;

	(void)upload;
	(void)upload_size;
	mark_requested(conn);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!target_whole(req, version))
		return reply_text(conn, MHD_HTTP_BAD_REQUEST,
				  "bad request: a control character or a malformed %-escape in "
				  "the path\n");
	route(url, &r);
	return reply(conn, r.status, r.type, r.body, r.len, r.owned);
}

void http_text(struct http_reply *r, unsigned int status, const char *text)
{
	*r = (struct http_reply){ .status = status,
				  .type = "text/plain; charset=utf-8",
				  .body = (char *)text,
				  .len = strlen(text) };
}

void http_format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_in *in = (const struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
	} else {
		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
	}
}

/* Binds ourselves, so that errors (address in use) are precise and port 0 is known. */
int http_listen(struct sockaddr_storage *ss)
{
	socklen_t len = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						  : sizeof(struct sockaddr_in);
	bool any6 = ss->ss_family == AF_INET6 &&
		    IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)ss)->sin6_addr);
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] is every address, IPv4 ones too (as ::ffff:a.b.c.d); any other is itself. */
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &(int){ !any6 }, sizeof(int));
	if (bind(fd, (struct sockaddr *)ss, len) || listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)ss, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

struct MHD_Daemon *http_start(int fd, http_route route)
{
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request,
				(void *)(uintptr_t)route, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)HTTP_THREADS,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_CONNECTIONS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_IDLE_TIMEOUT,
				MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
				MHD_OPTION_URI_LOG_CALLBACK, on_target, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
}
