// SPDX-License-Identifier: GPL-2.0
/* The agent's report file (report.h). */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "base/clock.h"
#include "fleet/report.h"
#include "outputs/prom.h"
#include "outputs/report.h"
#include "pins/state.h"

/* dir (SLUICE_FLEET_DIR "/", or "" for a name in it), ifname and suffix. */
static int report_path(const char *dir, const char *ifname, const char *suffix, char *buf,
		       size_t len)
{
	int n = snprintf(buf, len, "%s%s%s", dir, ifname, suffix);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int fleet_dir_open(bool passable)
{
	return run_dir_open(strrchr(SLUICE_FLEET_DIR, '/') + 1, passable);
}

void fleet_report_print(FILE *f, const struct fleet_report *rep)
{
	int i;

	fprintf(f, "pid %d\nup %d\nmode %s\nperiod_ns %llu\nhosts %llu\ncandidates %llu\n",
		rep->pid, rep->up, rep->mode, (unsigned long long)rep->period_ns,
		(unsigned long long)rep->hosts, (unsigned long long)rep->candidates);
	fprintf(f, "lost %llu\ncalls %llu\nrounds %llu\nlag_ns %llu\nunpushed %llu\n",
		(unsigned long long)rep->lost, (unsigned long long)rep->calls,
		(unsigned long long)rep->rounds, (unsigned long long)rep->lag_ns,
		(unsigned long long)rep->unpushed);
	fprintf(f, "rtt_max_ns %llu\ngap_max_ns %llu\nfallback %llu\n",
		(unsigned long long)rep->rtt_max_ns, (unsigned long long)rep->gap_max_ns,
		(unsigned long long)rep->fallback);
	fprintf(f, "would_refuse %llu\ncpu_s %.3f\nwritten_ns %llu\nwritten_boot_ns %llu\n",
		(unsigned long long)rep->would_refuse, rep->cpu_s,
		(unsigned long long)realtime_ns(), (unsigned long long)boottime_ns());
	for (i = 0; i < FLEET_ERR_MAX; i++)
		fprintf(f, "error_%s %llu\n", fleet_error_names[i],
			(unsigned long long)rep->errors[i]);
}

/* A new file name in dir, root's alone: never an old one, which a reader may hold open. */
static int report_create(int dir, const char *name)
{
	int fd;

	if (unlinkat(dir, name, 0) && errno != ENOENT)
		return -errno;
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* The group's to read, as its pins are (0640 root:group), before anything is in it. */
static int report_share(int fd, gid_t group)
{
	return fchown(fd, 0, group) || fchmod(fd, 0640) ? -errno : 0;
}

/* rep, as status reads it, into fd, which it closes. */
static int report_print(int fd, const struct fleet_report *rep)
{
	FILE *f = fdopen(fd, "w");

	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	fleet_report_print(f, rep);
	return fclose(f) ? -errno : 0;
}

/* Written whole, then renamed over the last: a reader sees one or the other. */
int fleet_report_write(const char *ifname, const struct fleet_report *rep, gid_t group,
		       int *unshared)
{
	char name[64], tmp[64];
	int dir, fd, err;

	*unshared = 0;
	err = report_path("", ifname, "", name, sizeof(name))
		      ?: report_path("", ifname, ".tmp", tmp, sizeof(tmp));
	if (err)
		return err;
	dir = fleet_dir_open(group != STATE_NO_GROUP);
	if (dir < 0)
		return dir;
	fd = report_create(dir, tmp);
	if (fd >= 0 && group != STATE_NO_GROUP)
		*unshared = report_share(fd, group);
	err = fd < 0 ? fd : report_print(fd, rep);
	if (!err && renameat(dir, tmp, dir, name))
		err = -errno;
	close(dir);
	return err;
}

static void report_field(struct fleet_report *rep, const char *name, const char *v)
{
	unsigned long long n = strtoull(v, NULL, 10);
	int i;

	if (!strcmp(name, "pid"))
		rep->pid = (int)n;
	else if (!strcmp(name, "up"))
		rep->up = n;
	else if (!strcmp(name, "mode"))
		snprintf(rep->mode, sizeof(rep->mode), "%.23s", v);
	else if (!strcmp(name, "period_ns"))
		rep->period_ns = n;
	else if (!strcmp(name, "hosts"))
		rep->hosts = n;
	else if (!strcmp(name, "candidates"))
		rep->candidates = n;
	else if (!strcmp(name, "lost"))
		rep->lost = n;
	else if (!strcmp(name, "calls"))
		rep->calls = n;
	else if (!strcmp(name, "rounds"))
		rep->rounds = n;
	else if (!strcmp(name, "lag_ns"))
		rep->lag_ns = n;
	else if (!strcmp(name, "rtt_max_ns"))
		rep->rtt_max_ns = n;
	else if (!strcmp(name, "gap_max_ns"))
		rep->gap_max_ns = n;
	else if (!strcmp(name, "fallback"))
		rep->fallback = n;
	else if (!strcmp(name, "unpushed"))
		rep->unpushed = n;
	else if (!strcmp(name, "would_refuse"))
		rep->would_refuse = n;
	else if (!strcmp(name, "cpu_s"))
		rep->cpu_s = strtod(v, NULL);
	else if (!strcmp(name, "written_ns"))
		rep->written_ns = n;
	else if (!strcmp(name, "written_boot_ns"))
		rep->written_boot_ns = n;
	for (i = 0; i < FLEET_ERR_MAX; i++)
		if (!strncmp(name, "error_", 6) && !strcmp(name + 6, fleet_error_names[i]))
			rep->errors[i] = n;
}

void fleet_report_parse(FILE *f, struct fleet_report *rep)
{
	char name[32], value[64];

	memset(rep, 0, sizeof(*rep));
	while (fscanf(f, "%31s %63s", name, value) == 2)
		report_field(rep, name, value);
}

/*
 * Aged by CLOCK_BOOTTIME: a wall-clock step (NTP, settimeofday) would make
 * a live agent's report look stale, or a dead one's fresh. A report of an
 * agent older than written_boot_ns has only the wall clock to go by.
 */
bool fleet_report_stale(const struct fleet_report *rep)
{
	uint64_t stale = FLEET_REPORT_STALE_PERIODS * rep->period_ns, age;

	if (stale < FLEET_REPORT_STALE_NS)
		stale = FLEET_REPORT_STALE_NS;
	if (rep->written_boot_ns)
		age = boottime_ns() - rep->written_boot_ns;
	else
		age = realtime_ns() - rep->written_ns;
	return age > stale || (rep->pid > 0 && kill(rep->pid, 0) && errno == ESRCH);
}

int fleet_report_read(const char *ifname, struct fleet_report *rep)
{
	char path[256];
	FILE *f;
	int err = report_path(SLUICE_FLEET_DIR "/", ifname, "", path, sizeof(path));

	memset(rep, 0, sizeof(*rep));
	if (err)
		return err;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	fleet_report_parse(f, rep);
	fclose(f);
	return fleet_report_stale(rep) ? -ENOENT : 0;
}

void fleet_report_remove(const char *ifname)
{
	char path[256];

	if (!report_path(SLUICE_FLEET_DIR "/", ifname, "", path, sizeof(path)))
		unlink(path);
}

void fleet_report_status(struct report *rp, const struct fleet_report *rep)
{
	int i;

	report_open(rp, "fleet");
	report_bool(rp, "up", NULL, rep->up);
	report_string(rp, NULL, "  fleet: %s, ", rep->up ? "up" : "DOWN");
	report_string(rp, "mode", "%s ", rep->mode);
	report_u64(rp, "agent_pid", "(agent pid %llu), ", (uint64_t)rep->pid);
	report_u64(rp, "hosts", rep->hosts == 1 ? "%llu host, " : "%llu hosts, ", rep->hosts);
	report_u64(rp, "period_ns", NULL, rep->period_ns);
	report_u64(rp, NULL, "period %llu ms", rep->period_ns / 1000000);
	report_eol(rp);
	report_u64(rp, "sources", "  fleet sync: %llu sources, ", rep->candidates);
	report_u64(rp, "lag_ns", NULL, rep->lag_ns);
	report_u64(rp, NULL, "lag %llu ms, ", rep->lag_ns / 1000000);
	report_u64(rp, "calls", "%llu calls, ", rep->calls);
	report_u64(rp, "unpushed", "%llu packets unpushed, ", rep->unpushed);
	report_u64(rp, "candidates_lost", "%llu candidates lost", rep->lost);
	report_eol(rp);
	/* In text only where it means something: under --shadow. */
	report_u64(rp, "would_refuse", NULL, rep->would_refuse);
	if (!strcmp(rep->mode, "shadow")) {
		report_u64(rp, NULL,
			   "  fleet shadow: %llu packets the global limit would have refused",
			   rep->would_refuse);
		report_eol(rp);
	}
	report_open(rp, "errors");
	report_string(rp, NULL, "%s", "  fleet errors:");
	for (i = 0; i < FLEET_ERR_MAX; i++) {
		report_string(rp, NULL, " %s ", fleet_error_names[i]);
		report_u64(rp, fleet_error_names[i], "%llu", rep->errors[i]);
	}
	report_eol(rp);
	report_close(rp);
	report_close(rp);
}

#define PROM_FAMILY(out, name, type, help) \
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type)

/*
 * The report's Prometheus families, each named with the key status writes
 * the same value under (fleet_report_status), so the two cannot drift: a
 * unit test renders both. Ns are exported in seconds.
 */
const struct fleet_family fleet_families[] = {
	{ "sluice_fleet_sync_lag_seconds", "gauge",
	  "time since the agent's last whole sync with Redis", "lag_ns",
	  offsetof(struct fleet_report, lag_ns), true },
	{ "sluice_fleet_sources", "gauge", "sources the agent syncs", "sources",
	  offsetof(struct fleet_report, candidates), false },
	{ "sluice_fleet_hosts", "gauge", "agents heartbeating in Redis", "hosts",
	  offsetof(struct fleet_report, hosts), false },
	{ "sluice_fleet_calls_total", "counter", "script calls sent to Redis", "calls",
	  offsetof(struct fleet_report, calls), false },
	{ "sluice_fleet_would_refuse_total", "counter",
	  "--shadow: packets the global limit would have refused", "would_refuse",
	  offsetof(struct fleet_report, would_refuse), false },
};
const int fleet_nfamilies = sizeof(fleet_families) / sizeof(fleet_families[0]);

uint64_t fleet_family_value(const struct fleet_report *rep, const struct fleet_family *f)
{
	return *(const uint64_t *)((const char *)rep + f->offset);
}

/* family{interface="IFACE" of a series, the name escaped as every label is; the caller ends it. */
static void fleet_series(FILE *out, const char *family, const char *ifname)
{
	fprintf(out, "%s{", family);
	prom_label(out, "interface", ifname);
}

/* One family: its header, then each interface's value that has an agent. */
static void fleet_family_prom(FILE *out, const struct fleet_family *f, const char (*ifnames)[16],
			      const struct fleet_report *reps, const bool *has, int n)
{
	uint64_t v;
	int i;

	PROM_FAMILY(out, f->family, f->type, f->help);
	for (i = 0; i < n; i++) {
		if (!has[i])
			continue;
		v = fleet_family_value(&reps[i], f);
		fleet_series(out, f->family, ifnames[i]);
		if (f->seconds)
			fprintf(out, "} %.3f\n", v / 1e9);
		else
			fprintf(out, "} %llu\n", (unsigned long long)v);
	}
}

void fleet_report_prom(FILE *out, const char (*ifnames)[16], int n)
{
	struct fleet_report *reps = calloc((size_t)n + 1, sizeof(*reps));
	bool *has = calloc((size_t)n + 1, sizeof(*has));
	int i, k;

	if (!reps || !has)
		goto out;
	for (i = 0; i < n; i++)
		has[i] = !fleet_report_read(ifnames[i], &reps[i]);
	PROM_FAMILY(out, "sluice_fleet_up", "gauge",
		    "1 while the interface's fleet agent reaches Redis for every call");
	for (i = 0; i < n; i++) {
		fleet_series(out, "sluice_fleet_up", ifnames[i]);
		fprintf(out, "} %d\n", has[i] && reps[i].up);
	}
	for (k = 0; k < fleet_nfamilies; k++)
		fleet_family_prom(out, &fleet_families[k], ifnames, reps, has, n);
	PROM_FAMILY(out, "sluice_fleet_errors_total", "counter", "Redis errors by kind");
	for (i = 0; i < n; i++)
		for (k = 0; has[i] && k < FLEET_ERR_MAX; k++) {
			fleet_series(out, "sluice_fleet_errors_total", ifnames[i]);
			fprintf(out, ",kind=\"%s\"} %llu\n", fleet_error_names[k],
				(unsigned long long)reps[i].errors[k]);
		}
out:
	free(reps);
	free(has);
}
