// SPDX-License-Identifier: GPL-2.0
/*
 * The exporter's live page: one HTML file (page.html, embedded at build
 * time) at / and /if/IFACE, and the JSON it polls, /api/stats. The JSON is
 * the objects stats --json and top --json write (outputs/counters.c,
 * outputs/busiest.c), one per interface, with status's fleet object.
 *
 * Every page polls once a second; the document is built at most once a
 * second and shared, so a hundred open pages cost one reading of the
 * counters and one walk of each table a second, not a hundred.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "base/clock.h"
#include "base/errors.h"
#include "base/json.h"
#include "commands/page.h"
#include "fleet/report.h"
#include "outputs/busiest.h"
#include "outputs/counters.h"
#include "outputs/report.h"
#include "values/iface.h"

#define PAGE_REUSE_NS	NSEC_PER_SEC /* how long one document serves every page */
#define PAGE_TOP_SHOWN	10	     /* sources per interface */
#define PAGE_MAX_IFACES 256
#define PAGE_JSON_TYPE	"application/json"

/* page.html, turned into bytes by the Makefile (page_html.c). */
extern const unsigned char page_html[];
extern const size_t page_html_len;

/* The last document, and each interface's sample it took rates from. */
struct page_cache {
	char *body;
	size_t len;
	uint64_t built_ns;
	char ifname[PAGE_MAX_IFACES][IF_NAMESIZE];
	struct sample prev[PAGE_MAX_IFACES];
	int n;
};

static struct page_cache cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* One interface's readings, taken together; -ENOENT when it was detached meanwhile. */
struct reading {
	struct state st;
	bool open, attached;
	struct sample s;
	bool have_s;
	struct top_view view;
	struct source_table table;
	bool have_top;
	struct fleet_report fleet;
	bool have_fleet;
	int err;
};

static void reading_take(const char *ifname, struct reading *rd)
{
	unsigned int prog_id;

	rd->err = state_open(ifname, &rd->st);
	if (rd->err)
		return;
	rd->open = true;
	rd->attached = !strcmp(state_health(&rd->st, &prog_id), STATE_OK);
	rd->err = sample_read_counters(&rd->st, &rd->s);
	rd->have_s = !rd->err;
	if (!rd->err)
		rd->err = busiest_read(&rd->st.maps, rd->st.proven_fd, SORT_DROPS, PAGE_TOP_SHOWN,
				       &rd->view, &rd->table);
	rd->have_top = !rd->err;
	/* The walk for top counted the table: the same figure stats gives. */
	if (rd->have_top)
		rd->s.sources = rd->view.n;
	rd->have_fleet = !fleet_report_read(ifname, &rd->fleet);
}

static void reading_free(struct reading *rd)
{
	if (rd->have_s)
		sample_free(&rd->s);
	free(rd->view.rows);
	doc_free(&rd->view.doc);
	sources_free(&rd->table);
	if (rd->open)
		state_close(&rd->st);
}

/* The sample this interface's rates are taken from, if the last document read it. */
static const struct sample *prev_of(const char *ifname)
{
	int i;

	for (i = 0; i < cache.n; i++)
		if (!strcmp(cache.ifname[i], ifname))
			return &cache.prev[i];
	return NULL;
}

static void write_interfaces(struct report *rp, char (*names)[IF_NAMESIZE],
			     const struct reading *rd, int n)
{
	int i;

	report_list_open(rp, "interfaces");
	for (i = 0; i < n; i++) {
		if (rd[i].err == -ENOENT)
			continue;
		report_open(rp, NULL);
		report_ifname(rp, NULL, names[i]);
		report_bool(rp, "attached", NULL, rd[i].open && rd[i].attached);
		report_bool(rp, "readable", NULL, !rd[i].err);
		if (rd[i].err)
			report_string(rp, "error", NULL, strerror(-rd[i].err));
		report_close(rp);
	}
	report_list_close(rp);
}

static void write_readings(struct report *rp, char (*names)[IF_NAMESIZE], const struct reading *rd,
			   int n)
{
	const struct sample *prev;
	int i;

	report_list_open(rp, "stats");
	for (i = 0; i < n; i++) {
		prev = rd[i].have_s ? prev_of(names[i]) : NULL;
		/* A counter that went back (attached anew) would make a rate of noise. */
		if (prev && prev->time_ns >= rd[i].s.time_ns)
			prev = NULL;
		if (rd[i].have_s && rd[i].have_top)
			counters_report(rp, names[i], &rd[i].s, prev);
	}
	report_list_close(rp);
	report_list_open(rp, "top");
	for (i = 0; i < n; i++)
		if (rd[i].have_top)
			busiest_report(rp, names[i], &rd[i].view, sort_name(SORT_DROPS),
				       rd[i].view.n < PAGE_TOP_SHOWN ? rd[i].view.n
								     : PAGE_TOP_SHOWN);
	report_list_close(rp);
	report_list_open(rp, "fleet");
	for (i = 0; i < n; i++) {
		if (!rd[i].have_fleet)
			continue;
		report_open(rp, NULL);
		report_ifname(rp, NULL, names[i]);
		fleet_report_status(rp, &rd[i].fleet);
		report_close(rp);
	}
	report_list_close(rp);
}

/* Keeps this document's samples for the next one's rates; frees the old ones. */
static void keep_samples(char (*names)[IF_NAMESIZE], struct reading *rd, int n)
{
	int i;

	for (i = 0; i < cache.n; i++)
		sample_free(&cache.prev[i]);
	cache.n = 0;
	for (i = 0; i < n; i++) {
		if (!rd[i].have_s)
			continue;
		snprintf(cache.ifname[cache.n], IF_NAMESIZE, "%s", names[i]);
		cache.prev[cache.n++] = rd[i].s;
		rd[i].have_s = false; /* now the cache's */
	}
}

/* A new document in cache.body, or -errno (the old one stays). */
static int cache_build(void)
{
	char(*names)[IF_NAMESIZE] = calloc(PAGE_MAX_IFACES, sizeof(*names));
	struct reading *rd = calloc(PAGE_MAX_IFACES, sizeof(*rd));
	struct report rp;
	struct json j;
	char *body = NULL;
	size_t len = 0;
	int n, i, err;
	FILE *out;

	n = names && rd ? state_list(names, PAGE_MAX_IFACES) : -ENOMEM;
	for (i = 0; i < n; i++)
		reading_take(names[i], &rd[i]);
	out = n >= 0 ? open_memstream(&body, &len) : NULL;
	err = n < 0 ? n : out ? 0 : -errno;
	if (out) {
		json_init(&j, out);
		report_json(&rp, &j);
		report_open(&rp, NULL);
		report_u64(&rp, "time_ns", NULL, monotonic_ns());
		write_interfaces(&rp, names, rd, n);
		write_readings(&rp, names, rd, n);
		report_close(&rp);
		err = report_end(&rp);
		if (fclose(out) && !err)
			err = -EIO;
	}
	if (!err) {
		keep_samples(names, rd, n);
		free(cache.body);
		cache.body = body;
		cache.len = len;
		cache.built_ns = monotonic_ns();
		body = NULL;
	}
	for (i = 0; i < n; i++)
		reading_free(&rd[i]);
	free(body);
	free(rd);
	free(names);
	return err;
}

/* /api/stats: the shared document, rebuilt when a second old. */
static void api_stats(struct http_reply *r)
{
	char *copy = NULL;
	size_t len = 0;
	int err = 0;

	pthread_mutex_lock(&cache_lock);
	if (!cache.body || monotonic_ns() - cache.built_ns >= PAGE_REUSE_NS)
		err = cache_build();
	if (!err && cache.body) {
		copy = malloc(cache.len ? cache.len : 1);
		if (copy) {
			memcpy(copy, cache.body, cache.len);
			len = cache.len;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	if (err)
		fail_state("exporter", err, "*", "read the counters");
	if (!copy)
		return http_text(r, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot read sluice state\n");
	*r = (struct http_reply){ .status = MHD_HTTP_OK,
				  .type = PAGE_JSON_TYPE,
				  .body = copy,
				  .len = len,
				  .owned = true };
}

/* /if/NAME for a name an interface could have (it need not be attached: the page says so). */
static bool path_is_iface_page(const char *path)
{
	char name[IF_NAMESIZE];
	const char *why;

	return http_path_rest(path, "/if/", name, sizeof(name)) && !ifname_check(name, &why);
}

bool page_route(const char *path, struct http_reply *r)
{
	if (http_path_is(path, "/api/stats")) {
		api_stats(r);
		return true;
	}
	if (!http_path_is(path, "/") && !path_is_iface_page(path))
		return false;
	*r = (struct http_reply){ .status = MHD_HTTP_OK,
				  .type = "text/html; charset=utf-8",
				  .body = (char *)page_html,
				  .len = page_html_len };
	return true;
}
