// SPDX-License-Identifier: GPL-2.0
/*
 * sluice exporter: serves /metrics for every attached interface in the
 * Prometheus text format, and the live page (page.c), through the HTTP
 * server of outputs/http.c. The
 * costly part of a scrape, walking the source table to count sources, is
 * done at most once a second per interface and shared.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include "base/errors.h"
#include "base/json.h"
#include "base/signals.h"
#include "commands/commands.h"
#include "commands/page.h"
#include "fleet/report.h"
#include "outputs/ban_audit.h"
#include "outputs/http.h"
#include "outputs/prom.h"
#include "outputs/report.h"
#include "reads/sources.h"

#define EXPORTER_WALK_REUSE_NS NSEC_PER_SEC /* how long one table walk's count serves */
#define EXPORTER_MAX_IFACES    256

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
	if (!err)
		ban_audit_notice(&st, NULL, "the exporter");
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

/* /metrics: the exposition; the page and its JSON (page.c); anything else is not found. */
static void route(const char *path, struct http_reply *r)
{
	size_t len = 0;
	char *body;

	if (!http_path_is(path, "/metrics") && page_route(path, r))
		return;
	if (!http_path_is(path, "/metrics"))
		return http_text(r, MHD_HTTP_NOT_FOUND,
				 "not found; metrics are at /metrics, the live page at /\n");
	body = scrape(&len);
	http_owned(r, PROM_CONTENT_TYPE, body, len);
}

/* Once it listens, where: a line, or with --json a document. */
static void serving_say(const struct cli_args *a, const char *where)
{
	char url[INET6_ADDRSTRLEN + 32];
	struct report rp;
	struct json j;

	snprintf(url, sizeof(url), "http://%s/metrics", where);
	report_start(&rp, &j, a->json);
	report_open(&rp, NULL);
	report_string(&rp, "command", NULL, "exporter");
	report_string(&rp, "serving", "sluice exporter: serving %s", url);
	report_close(&rp);
	report_eol(&rp);
	report_end(&rp);
	fflush(stdout);
}

static int exporter_run(struct cli_args *a, struct state *unused)
{
	struct sockaddr_storage ss = a->cmd.exporter.listen;
	struct MHD_Daemon *d;
	char where[INET6_ADDRSTRLEN + 16];
	sigset_t stop;
	int fd;

	(void)unused;
	http_format_addr(&ss, where, sizeof(where));
	fd = http_listen(&ss);
	if (fd < 0)
		return fail_runtime("exporter", fd, "cannot listen on %s", where);
	/* Blocked before the threads start, so only sigwait() below sees them. */
	stop_signals(&stop);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = http_start(fd, route);
	if (!d) {
		close(fd);
		return fail_runtime("exporter", -EIO, "cannot start the HTTP server");
	}
	http_format_addr(&ss, where, sizeof(where));
	serving_say(a, where);
	/* Until a stop signal, a tick at a time, close connections past their deadline. */
	while (sigtimedwait(&stop, NULL, &(struct timespec){ .tv_nsec = (long)HTTP_TICK_NS }) < 0)
		http_close_late();
	MHD_stop_daemon(d);
	return EXIT_OK;
}

const struct command cmd_exporter = {
	.id = CMD_EXPORTER,
	.name = "exporter",
	.summary = "serve Prometheus metrics and a live page for every interface",
	.synopsis = "[--listen ADDR:PORT]",
	.description =
		"Serve the counters of every attached interface at http://ADDR:PORT/metrics in\n"
		"the Prometheus text format, and a live page of them at http://ADDR:PORT/ (one\n"
		"interface at /if/IFACE) polling /api/stats, until SIGINT, SIGTERM or SIGHUP\n"
		"(each a clean stop).",
	.run = exporter_run,
};
