// SPDX-License-Identifier: GPL-2.0
/*
 * sluice exporter: serves /metrics for every attached interface in the
 * Prometheus text format. HTTP is libmicrohttpd's: a small thread pool,
 * bounded connections and idle timeouts, so a burst of scrapes or a
 * garbage request costs a queue or an error reply, never the process.
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
 * only replaces its own. The costly part of a scrape, walking the source
 * table to count sources, is done at most once a second per interface and
 * shared.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <bpf/bpf.h>
#include "base/errors.h"
#include "base/json.h"
#include "commands/commands.h"
#include "fleet/report.h"
#include "outputs/prom.h"
#include "reads/sources.h"

#define EXPORTER_THREADS      4	  /* scrapes served at once */
#define EXPORTER_CONNECTIONS  512 /* open connections in all; more are refused */
#define EXPORTER_IDLE_TIMEOUT 10  /* seconds before an idle connection is closed */
/* From accept to a whole request, however it trickles; checked every EXPORTER_TICK_NS. */
#define EXPORTER_REQUEST_NS (2 * NSEC_PER_SEC)
#define EXPORTER_TICK_NS    (NSEC_PER_SEC / 4)
/*
 * Connections still sending their request, per client address and in all,
 * before a new one makes the oldest go; only one older than the grace goes,
 * so a new connection has that long to send its request.
 */
#define EXPORTER_PENDING_PER_CLIENT 16
#define EXPORTER_PENDING_MAX	    128
#define EXPORTER_GRACE_NS	    (NSEC_PER_SEC / 4)
#define EXPORTER_WALK_REUSE_NS	    NSEC_PER_SEC /* how long one table walk's count serves */
#define EXPORTER_MAX_IFACES	    256

struct scraped {
	char ifname[IF_NAMESIZE];
	struct sample s;
	uint64_t walks;
};

/*
 * The last count of each interface's table, and how many walks made them.
 * One lock: a scrape that finds the count stale walks while the others
 * wait, then they all use its count.
 */
struct walk_cache {
	char ifname[IF_NAMESIZE];
	__u32 map_id; /* the table walked: attached anew, it is walked anew */
	uint64_t taken_ns;
	uint64_t sources;
	uint64_t walks;
};

static struct walk_cache walk_cache[EXPORTER_MAX_IFACES];
static pthread_mutex_t walk_lock = PTHREAD_MUTEX_INITIALIZER;

/* The interface's entry, or a free one, or the one read longest ago. */
static struct walk_cache *walk_entry(const char *ifname)
{
	struct walk_cache *oldest = &walk_cache[0];
	int i;

	for (i = 0; i < EXPORTER_MAX_IFACES; i++) {
		if (!strcmp(walk_cache[i].ifname, ifname))
			return &walk_cache[i];
		if (walk_cache[i].taken_ns < oldest->taken_ns)
			oldest = &walk_cache[i];
	}
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->ifname, sizeof(oldest->ifname), "%s", ifname);
	return oldest;
}

static int sources_cached(const char *ifname, const struct state *st, uint64_t *sources,
			  uint64_t *walks)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct walk_cache *c;
	uint64_t now;
	int err = 0;

	if (bpf_obj_get_info_by_fd(st->maps.buckets, &info, &len))
		return -errno;
	pthread_mutex_lock(&walk_lock);
	c = walk_entry(ifname);
	now = monotonic_ns();
	if (c->map_id != info.id || !c->taken_ns || now - c->taken_ns >= EXPORTER_WALK_REUSE_NS) {
		err = table_count(st->maps.buckets, &c->sources);
		c->map_id = info.id;
		c->taken_ns = err ? 0 : monotonic_ns();
		c->walks++;
	}
	*sources = c->sources;
	*walks = c->walks;
	pthread_mutex_unlock(&walk_lock);
	return err;
}

/* Reads one interface: -ENOENT when it was detached meanwhile. */
static int scrape_one(const char *ifname, struct scraped *sc, struct prom_iface *pi)
{
	unsigned int prog_id;
	struct state st;
	int err;

	err = state_open(ifname, &st);
	if (err)
		return err;
	err = sample_read_counters(&st, &sc->s);
	if (!err) {
		err = sources_cached(ifname, &st, &sc->s.sources, &sc->walks);
		if (err)
			sample_free(&sc->s);
	}
	if (!err) {
		snprintf(sc->ifname, sizeof(sc->ifname), "%s", ifname);
		pi->ifname = sc->ifname;
		pi->s = &sc->s;
		pi->attached = !strcmp(state_health(&st, &prog_id), STATE_OK);
	}
	state_close(&st);
	return err;
}

/* The whole exposition, in a buffer the caller frees; NULL on failure. */
static char *scrape(size_t *len)
{
	char(*names)[IF_NAMESIZE] = NULL;
	struct prom_iface *ifs = NULL;
	struct scraped *sc = NULL;
	uint64_t walks[EXPORTER_MAX_IFACES];
	char *body = NULL;
	int n, i, err, k = 0;
	FILE *out;

	names = calloc(EXPORTER_MAX_IFACES, sizeof(*names));
	sc = calloc(EXPORTER_MAX_IFACES, sizeof(*sc));
	ifs = calloc(EXPORTER_MAX_IFACES, sizeof(*ifs));
	n = names && sc && ifs ? state_list(names, EXPORTER_MAX_IFACES) : -ENOMEM;
	for (i = 0; i < n; i++) {
		err = scrape_one(names[i], &sc[k], &ifs[k]);
		if (err == -ENOENT) /* detached meanwhile */
			continue;
		if (err) {
			/* Stale or unreadable: still a series, sluice_up 0. */
			if (err != -ESTALE)
				fail_state("exporter", err, names[i], "read the counters");
			snprintf(sc[k].ifname, sizeof(sc[k].ifname), "%s", names[i]);
			ifs[k] = (struct prom_iface){ .ifname = sc[k].ifname };
		}
		k++;
	}
	out = n >= 0 ? open_memstream(&body, len) : NULL;
	if (out) {
		for (i = 0; i < k; i++)
			walks[i] = sc[i].walks;
		prom_write(out, ifs, k);
		prom_write_walks(out, ifs, walks, k);
		fleet_report_prom(out, (const char(*)[IF_NAMESIZE])names, n);
		if (fclose(out)) {
			free(body);
			body = NULL;
		}
	}
	for (i = 0; i < k; i++)
		sample_free(&sc[i].s);
	free(ifs);
	free(sc);
	free(names);
	return body;
}

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
		if (p->accepted_ns + EXPORTER_GRACE_NS > t->accepted_ns)
			continue;
		old_any = p;
		if (is_same)
			old_same = p;
	}
	if (same > EXPORTER_PENDING_PER_CLIENT && old_same)
		cut_off(old_same);
	else if (all > EXPORTER_PENDING_MAX && old_any)
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
static int close_late_connections(void)
{
	uint64_t now = monotonic_ns();
	struct tracked *t;
	int n = 0;

	pthread_mutex_lock(&tracked_lock);
	for (t = tracked_head.next; t != &tracked_head; t = t->next) {
		if (t->requested || now - t->accepted_ns < EXPORTER_REQUEST_NS)
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

/* A clean path (target_clean), decoded, is exactly /metrics: /%6detrics is, /metrics/ not. */
static bool path_is_metrics(const char *path)
{
	static const char want[] = "/metrics";
	size_t i;

	for (i = 0; *path; i++) {
		if (i == sizeof(want) - 1)
			return false;
		if ((*path == '%' ? escaped_byte(path) : *path) != want[i])
			return false;
		path += *path == '%' ? 3 : 1;
	}
	return i == sizeof(want) - 1;
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
	size_t len = 0;
	char *body;

	(void)cls;
	(void)upload;
	(void)upload_size;
	mark_requested(conn);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (!target_whole(req, version))
		return reply_text(conn, MHD_HTTP_BAD_REQUEST,
				  "bad request: a control character or a malformed %-escape in "
				  "the path\n");
	if (!path_is_metrics(url))
		return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found; metrics are at /metrics\n");
	body = scrape(&len);
	if (!body)
		return reply_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "cannot read sluice state\n");
	return reply(conn, MHD_HTTP_OK, PROM_CONTENT_TYPE, body, len, true);
}

static void format_addr(const struct sockaddr_storage *ss, char *buf, size_t len)
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
static int listen_on(struct sockaddr_storage *ss)
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

static struct MHD_Daemon *daemon_start(int fd)
{
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, on_request, NULL,
				MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE,
				(unsigned int)EXPORTER_THREADS, MHD_OPTION_CONNECTION_LIMIT,
				(unsigned int)EXPORTER_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned int)EXPORTER_IDLE_TIMEOUT, MHD_OPTION_NOTIFY_CONNECTION,
				on_connection, NULL, MHD_OPTION_URI_LOG_CALLBACK, on_target, NULL,
				MHD_OPTION_UNESCAPE_CALLBACK, unescape_none, NULL, MHD_OPTION_END);
}

/* Once it listens, where: a line, or with --json a document. */
static void serving_say(const struct cli_args *a, const char *where)
{
	char url[INET6_ADDRSTRLEN + 32];
	struct json j;

	snprintf(url, sizeof(url), "http://%s/metrics", where);
	if (!a->json) {
		printf("sluice exporter: serving %s\n", url);
		fflush(stdout);
		return;
	}
	json_init(&j, stdout);
	json_object_begin(&j, NULL);
	json_string(&j, "command", "exporter");
	json_string(&j, "serving", url);
	json_object_end(&j);
	json_finish(&j);
}

static int exporter_run(struct cli_args *a, struct state *unused)
{
	struct sockaddr_storage ss = a->cmd.exporter.listen;
	struct MHD_Daemon *d;
	char where[INET6_ADDRSTRLEN + 16];
	sigset_t stop_signals;
	int fd;

	(void)unused;
	format_addr(&ss, where, sizeof(where));
	fd = listen_on(&ss);
	if (fd < 0)
		return fail_runtime("exporter", fd, "cannot listen on %s", where);
	/* Blocked before the threads start, so only sigwait() below sees them. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = daemon_start(fd);
	if (!d) {
		close(fd);
		return fail_runtime("exporter", -EIO, "cannot start the HTTP server");
	}
	format_addr(&ss, where, sizeof(where));
	serving_say(a, where);
	/* Until a stop signal, a tick at a time, close connections past their deadline. */
	while (sigtimedwait(&stop_signals, NULL,
			    &(struct timespec){ .tv_nsec = (long)EXPORTER_TICK_NS }) < 0)
		close_late_connections();
	MHD_stop_daemon(d);
	return EXIT_OK;
}

const struct command cmd_exporter = {
	.id = CMD_EXPORTER,
	.name = "exporter",
	.summary = "serve Prometheus metrics for every interface",
	.synopsis = "[--listen ADDR:PORT]",
	.description =
		"Serve the counters of every attached interface at http://ADDR:PORT/metrics in\n"
		"the Prometheus text format, until SIGINT or SIGTERM.",
	.run = exporter_run,
};
