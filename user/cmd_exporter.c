// SPDX-License-Identifier: GPL-2.0
/*
 * sluice exporter: serves /metrics for every attached interface in the
 * Prometheus text format. HTTP is libmicrohttpd's: a small thread pool,
 * bounded connections and idle timeouts, so a burst of scrapes or a
 * garbage request costs a queue or an error reply, never the process.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include "args.h"
#include "commands.h"
#include "metrics.h"
#include "output.h"
#include "prom.h"
#include "state.h"

#define EXPORTER_DEFAULT_LISTEN "127.0.0.1:9723"

static const char exporter_usage[] =
	"Usage: sluice exporter [--listen ADDR:PORT]\n"
	"\n"
	"Serve the counters of every attached interface at http://ADDR:PORT/metrics in\n"
	"the Prometheus text format, until SIGINT or SIGTERM.\n"
	"  --listen ADDR:PORT  a numeric address: 192.0.2.1:9723, [::1]:9723; port 0 picks\n"
	"                      a free port (default " EXPORTER_DEFAULT_LISTEN ")\n";

#define EXPORTER_THREADS      4	  /* scrapes served at once */
#define EXPORTER_CONNECTIONS  256 /* open connections; more are refused */
#define EXPORTER_IDLE_TIMEOUT 10  /* seconds before an idle connection is closed */
#define EXPORTER_MAX_IFACES   256

enum { OPT_LISTEN = 256 };

static const struct option exporter_options[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct scraped {
	char ifname[IF_NAMESIZE];
	struct sample s;
};

/* Reads one interface; an interface detached meanwhile is simply left out. */
static int scrape_one(const char *ifname, struct scraped *sc, struct prom_iface *pi)
{
	unsigned int prog_id;
	struct state st;
	int err;

	err = state_open(ifname, &st);
	if (err)
		return err;
	err = sample_read(&st, &sc->s);
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
	char *body = NULL;
	int n, i, err, k = 0;
	FILE *out;

	names = calloc(EXPORTER_MAX_IFACES, sizeof(*names));
	sc = calloc(EXPORTER_MAX_IFACES, sizeof(*sc));
	ifs = calloc(EXPORTER_MAX_IFACES, sizeof(*ifs));
	n = names && sc && ifs ? state_list(names, EXPORTER_MAX_IFACES) : -ENOMEM;
	for (i = 0; i < n; i++) {
		err = scrape_one(names[i], &sc[k], &ifs[k]);
		if (!err)
			k++;
		else if (err != -ENOENT && err != -ESTALE) /* detached meanwhile; status says */
			fail_state("exporter", err, names[i], "read the counters");
	}
	out = n >= 0 ? open_memstream(&body, len) : NULL;
	if (out) {
		prom_write(out, ifs, k);
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **req)
{
	size_t len = 0;
	char *body;

	(void)cls;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	if (strcmp(url, "/metrics"))
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
	int fd, one = 1, err;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
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
				(unsigned int)EXPORTER_IDLE_TIMEOUT, MHD_OPTION_END);
}

/* Returns -1 to go on, or the exit status. */
static int exporter_parse(int argc, char **argv, struct sockaddr_storage *ss)
{
	const char *listen_addr = EXPORTER_DEFAULT_LISTEN, *why;
	int opt;

	while ((opt = cli_next_option("exporter", argc, argv, exporter_options)) != -1) {
		if (opt == 'h') {
			fputs(exporter_usage, stdout);
			return EXIT_OK;
		}
		if (opt != OPT_LISTEN)
			return EXIT_BAD_INPUT;
		listen_addr = optarg;
	}
	if (optind < argc)
		return fail_input("exporter", "unexpected argument '%s'", argv[optind]);
	if (parse_listen(listen_addr, ss, &why))
		return fail_input("exporter", "bad value '%s' for --listen: %s", listen_addr, why);
	return -1;
}

int cmd_exporter(int argc, char **argv)
{
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	char where[INET6_ADDRSTRLEN + 16];
	sigset_t stop_signals;
	int ret, fd, sig;

	ret = exporter_parse(argc, argv, &ss);
	if (ret >= 0)
		return ret;
	ret = require_root("exporter");
	if (ret)
		return ret;

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
	printf("sluice exporter: serving http://%s/metrics\n", where);
	fflush(stdout);
	sigwait(&stop_signals, &sig);
	MHD_stop_daemon(d);
	return EXIT_OK;
}
