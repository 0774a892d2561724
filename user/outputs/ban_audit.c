// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "base/clock.h"
#include "maps/bans.h"
#include "maps/policy_maps.h"
#include "outputs/audit.h"
#include "outputs/ban_audit.h"
#include "reads/counters.h"
#include "text/conf.h"

/* A CLOCK_MONOTONIC moment on the wall clock: "2026-12-05T21:40:05Z". */
static void wall_time(char *buf, size_t len, uint64_t mono_ns)
{
	time_t t = (time_t)((realtime_ns() - monotonic_ns() + mono_ns) / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "unknown");
}

static void ban_line(char *buf, size_t len, const struct state *st, const struct policy_doc *doc,
		     const struct ban_entry *e, const char *reader)
{
	char key[64], rule[RULE_NAME_MAX], why[160], until[40];

	key_format(&e->key, key, sizeof(key));
	rule_name(doc, e->key.policy, rule, sizeof(rule));
	ban_describe(why, sizeof(why), &e->ban);
	wall_time(until, sizeof(until), e->ban.banned_until_ns);
	snprintf(buf, len, "%s: ban by the datapath: %s, rule %s: %s, until %s; noticed by %s",
		 st->ifname, key, rule, why, until, reader);
}

/* The notes map, writable: the pin reopened when readers opened it read-only. */
static int notes_writable(const struct state *st)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/%s", st->dir, SLUICE_MAP_BAN_NOTES);
	return bpf_obj_get(path);
}

/*
 * The rules' names come from doc, or from the live policy, read only once a
 * line is due: a reader (the exporter, per scrape) pays nothing more while
 * no ban is new.
 */
static const struct policy_doc *names_of(const struct state *st, const struct policy_doc *doc,
					 struct policy_doc *live, bool *loaded)
{
	if (doc)
		return doc;
	if (!*loaded) {
		if (policy_load(&st->maps, live, false))
			doc_init(live); /* names then say replaced-N */
		*loaded = true;
	}
	return live;
}

int ban_audit_notice(const struct state *st, const struct policy_doc *doc, const char *reader)
{
	struct sluice_ban_note note = { 0 };
	char line[AUDIT_LINE_MAX];
	struct policy_doc live;
	bool loaded = false;
	struct ban_list l;
	uint8_t one = 1;
	int fd, written = 0;
	size_t i;

	/* Every ban ever made and still in the map, in force or not: 1 is long ago. */
	if (st->maps.bans < 0 || bans_read(st->maps.bans, 1, &l))
		return 0;
	fd = l.count ? notes_writable(st) : -1;
	for (i = 0; fd >= 0 && i < l.count; i++) {
		note.key = l.items[i].key;
		note.banned_at_ns = l.items[i].ban.banned_at_ns;
		if (!note.banned_at_ns || bpf_map_update_elem(fd, &note, &one, BPF_NOEXIST))
			continue; /* another reader's, or no write access */
		ban_line(line, sizeof(line), st, names_of(st, doc, &live, &loaded), &l.items[i],
			 reader);
		audit_log(line);
		written++;
	}
	if (fd >= 0)
		close(fd);
	if (loaded)
		doc_free(&live);
	ban_list_free(&l);
	return written;
}
