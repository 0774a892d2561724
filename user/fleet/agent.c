// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet agent's engine (docs/fleet.md): every period T it takes the
 * candidates the datapath handed over, reads what each passed since the
 * last period, adds that usage to the source's GCRA state in Redis, and
 * moves the local TAT forward to the global one through the sync program.
 * The XDP path never waits for any of it: Redis slow or gone only means the
 * local limits (or split ones) hold until it is back, and usage not pushed
 * is pushed then.
 */
#include <errno.h>
#include <limits.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "base/signals.h"
#include "fleet/agent.h"
#include "fleet/script.h"
#include "values/cidr.h"
#include "values/words.h"

static const char *fleet_mode(const struct agent *ag)
{
	if (ag->up)
		return ag->opt.shadow ? "shadow" : "synced";
	return ag->opt.fallback == FALLBACK_SPLIT ? "fallback-split" : "fallback-local";
}

/*
 * Says once when the report cannot be given to the interface's group (no
 * CAP_CHOWN): written root's alone, its readers see no agent.
 */
static void tell_unshared(struct agent *ag, gid_t group, int err)
{
	char name[64];

	if (err == ag->unshared)
		return;
	ag->unshared = err;
	if (!err)
		return;
	format_group(name, sizeof(name), group);
	fprintf(stderr, "sluice agent: %s: its report stays root's, not group %s's to read: %s%s\n",
		ag->ifname, name, strerror(-err),
		err == -EPERM ? " (the agent needs CAP_CHOWN)" : "");
}

/*
 * Says once when the report cannot be written (/run full, its directory
 * refused as unsafe), and once when it is again: meanwhile status and the
 * exporter show no agent, and this line is all that says why.
 */
static void tell_unwritten(struct agent *ag, int err)
{
	const char *refused = state_refusal(err);

	if (err == ag->unwritten)
		return;
	if (err)
		fprintf(stderr,
			"sluice agent: %s: its report cannot be written to %s: %s; "
			"status and the exporter show no agent until it can\n",
			ag->ifname, SLUICE_FLEET_DIR, refused ? refused : strerror(-err));
	else
		fprintf(stderr, "sluice agent: %s: its report written again\n", ag->ifname);
	ag->unwritten = err;
}

void agent_report(struct agent *ag, uint64_t now)
{
	gid_t group = state_group(&ag->st); /* attach --group may change it under the agent */
	struct rusage ru;
	uint64_t unpushed = 0;
	int i, unshared, err;

	for (i = 0; i < ag->n; i++)
		unpushed += ag->cands[i].unpushed;
	getrusage(RUSAGE_SELF, &ru);
	ag->rep.pid = getpid();
	ag->rep.up = ag->up;
	snprintf(ag->rep.mode, sizeof(ag->rep.mode), "%s", fleet_mode(ag));
	ag->rep.period_ns = ag->opt.period_ns;
	ag->rep.hosts = ag->hosts;
	ag->rep.candidates = (uint64_t)ag->n;
	ag->rep.calls = ag->redis.calls;
	/* last_sync_ns is taken after this round's start: a sync this round is no lag */
	ag->rep.lag_ns = now > ag->last_sync_ns ? now - ag->last_sync_ns : 0;
	ag->rep.unpushed = unpushed;
	ag->rep.fallback = ag->fallback;
	ag->rep.cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	memcpy(ag->rep.errors, ag->redis.errors, sizeof(ag->rep.errors));
	err = fleet_report_write(ag->ifname, &ag->rep, group, &unshared);
	tell_unwritten(ag, err);
	tell_unshared(ag, group, unshared);
}

/* Says once when the fleet is lost or found again, with why. */
static void tell_change(struct agent *ag)
{
	if (ag->up == ag->was_up)
		return;
	if (ag->up)
		fprintf(stderr, "sluice agent: %s: Redis reached, %s (%d sources)\n", ag->ifname,
			fleet_mode(ag), ag->n);
	else
		fprintf(stderr, "sluice agent: %s: Redis unreachable (%s): %s\n", ag->ifname,
			ag->redis.last_error[0] ? ag->redis.last_error : "no node answered",
			fleet_mode(ag));
	ag->was_up = ag->up;
}

/* A stop is pending: it may have cut the round's waits on Redis short. */
static bool stop_pending(const struct agent *ag)
{
	sigset_t pending;
	int i;

	if (sigpending(&pending))
		return false;
	for (i = 1; i < NSIG; i++)
		if (sigismember(&ag->stop, i) == 1 && sigismember(&pending, i) == 1)
			return true;
	return false;
}

/*
 * Per candidate, whether its owner answered: one that did not is in
 * fallback from its first push that found none; once synced again, the
 * time its usage waited counts as a sync's (rtt_max_ns), so the bound's
 * measured D covers the outage. Says which sources fell back and came
 * back, a few per round.
 */
static void fallback_note(struct agent *ag, uint64_t started, uint64_t end)
{
	int i, told_down = 0, told_up = 0;
	char addr[64];

	ag->fallback = 0;
	for (i = 0; i < ag->n; i++) {
		struct candidate *c = &ag->cands[i];

		if (!c->synced) {
			ag->fallback++;
			if (c->failed_ns)
				continue;
			c->failed_ns = started;
			if (told_down++ >= AGENT_LOG_SOURCES)
				continue;
			key_format(&c->key, addr, sizeof(addr));
			fprintf(stderr,
				"sluice agent: %s: source %s in %s: no owner reached (%s)\n",
				ag->ifname, addr,
				ag->opt.fallback == FALLBACK_SPLIT ? "fallback-split"
								   : "fallback-local",
				ag->redis.last_error[0] ? ag->redis.last_error
							: "no node answered");
			continue;
		}
		if (!c->failed_ns)
			continue;
		if (end - c->failed_ns > ag->rep.rtt_max_ns)
			ag->rep.rtt_max_ns = end - c->failed_ns;
		if (told_up++ < AGENT_LOG_SOURCES) {
			key_format(&c->key, addr, sizeof(addr));
			fprintf(stderr, "sluice agent: %s: source %s synced again after %llu ms\n",
				ag->ifname, addr,
				(unsigned long long)((end - c->failed_ns) / 1000000));
		}
		c->failed_ns = 0;
	}
	if (told_down > AGENT_LOG_SOURCES || told_up > AGENT_LOG_SOURCES)
		fprintf(stderr,
			"sluice agent: %s: and %d more sources fell back, %d synced again\n",
			ag->ifname,
			told_down > AGENT_LOG_SOURCES ? told_down - AGENT_LOG_SOURCES : 0,
			told_up > AGENT_LOG_SOURCES ? told_up - AGENT_LOG_SOURCES : 0);
}

/* The local side of a round: synced sources advanced, the others split if asked. */
static int round_apply(struct agent *ag, int unsynced, uint64_t now)
{
	int err = 0;

	if (unsynced >= 0 && unsynced < ag->n) {
		if (!unsynced)
			ag->last_sync_ns = monotonic_ns();
		ag->slack_ns = fleet_slack_note(&ag->slack, now, monotonic_ns() - ag->sent_ns);
		if (!ag->opt.shadow)
			ag->since_sent = (monotonic_ns() - ag->sent_ns) << SLUICE_TIME_SHIFT;
		err = agent_sync_all(ag, SLUICE_FLEET_ADVANCE, agent_arg_advance, true);
	} else if (!unsynced) {
		ag->last_sync_ns = monotonic_ns(); /* no sources, Redis reached */
	}
	if (!err && unsynced && ag->opt.fallback == FALLBACK_SPLIT && !ag->opt.shadow)
		err = agent_sync_all(ag, SLUICE_FLEET_CHARGE, agent_arg_split, false);
	return err;
}

/*
 * Once a second, and every round after one that did not reach Redis: the
 * slot map is learnt again in between, so a beat whose master failed goes
 * to the promoted replica as soon as there is one. Its own budget: a round
 * that spent its waits does not leave it none.
 */
static void heartbeat_due(struct agent *ag, uint64_t now)
{
	if (!ag->hb_failing && now - ag->heartbeat_ns < AGENT_HEARTBEAT_NS)
		return;
	ag->heartbeat_ns = now;
	fleet_redis_round(&ag->redis, ag->redis.timeout_ns);
	if (!agent_heartbeat(ag))
		ag->hb_failing = true;
}

/* The id of the map fd, 0 when unknown. */
static __u32 map_id_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

/*
 * -ENODEV once the interface's pinned fleet hint is no longer the one the
 * agent opened (detached, or attached anew with new maps): the agent would
 * go on syncing maps no datapath reads, its report saying the fleet is up.
 */
static int agent_state_current(const struct agent *ag)
{
	char path[PATH_MAX];
	__u32 pinned = 0;
	int fd, err = state_path(ag->ifname, SLUICE_MAP_FLEET, path, sizeof(path));

	if (err)
		return err;
	fd = bpf_obj_get(path);
	if (fd < 0 && errno != ENOENT)
		return 0; /* cannot tell: the next second will */
	if (fd >= 0) {
		pinned = map_id_of(fd);
		close(fd);
	}
	return pinned && pinned == map_id_of(ag->st.maps.fleet) ? 0 : -ENODEV;
}

/* The report, every quarter second. */
static void report_due(struct agent *ag, uint64_t now)
{
	if (now - ag->report_ns < AGENT_REPORT_NS)
		return;
	agent_report(ag, now);
	ag->report_ns = now;
}

/* One period. */
static int round_run(struct agent *ag)
{
	uint64_t now = monotonic_ns(), started, end;
	int err, unsynced;

	if (now - ag->cfg_read_ns >= NSEC_PER_SEC) {
		err = agent_state_current(ag) ?: agent_policies_read(ag);
		if (err)
			return err;
		/* A rule changed to one it cannot sync: each host would pass the whole limit. */
		if (agent_policy_unsyncable(ag, ag->stop_why, sizeof(ag->stop_why)))
			return -EMEDIUMTYPE;
		ag->cfg_read_ns = now;
	}
	ring_buffer__consume(ag->ring);
	err = agent_usage_read(ag);
	if (err)
		return err;
	started = monotonic_ns();
	fleet_redis_round(&ag->redis, AGENT_ROUND_CALLS * ag->redis.timeout_ns);
	unsynced = agent_redis_sync(ag);
	if (stop_pending(ag))
		return 0; /* what a stop cut short says nothing of Redis: up stays as it was */
	ag->up = unsynced == 0;
	end = monotonic_ns();
	if (end - started > ag->rep.rtt_max_ns)
		ag->rep.rtt_max_ns = end - started;
	if (ag->rep.rounds && now - ag->round_ns > ag->rep.gap_max_ns)
		ag->rep.gap_max_ns = now - ag->round_ns;
	ag->round_ns = now;
	fallback_note(ag, started, end);
	err = round_apply(ag, unsynced, now);
	candidates_prune(ag);
	if (!err)
		err = agent_hint_write(ag, true); /* still alive: live_until moves on */
	ag->reached = unsynced >= 0;
	if (ag->reached)
		heartbeat_due(ag, now);
	tell_change(ag);
	ag->rep.rounds++;
	report_due(ag, now);
	return err;
}

int agent_setup(struct agent *ag, const char *ifname, const struct agent_args *opt)
{
	struct endpoint seeds[ENDPOINTS_MAX];
	const char *why;
	char host[64];
	int n, err;

	ag->ifname = ifname;
	ag->opt = *opt;
	ag->hosts = (uint32_t)opt->hosts;
	n = parse_endpoints(opt->redis, seeds, ENDPOINTS_MAX, &why);
	if (n < 0)
		return n;
	fleet_redis_init(&ag->redis, seeds, n, fleet_gcra_script,
			 ag->opt.period_ns * 2 > AGENT_TIMEOUT_MIN_NS ? ag->opt.period_ns * 2
								      : AGENT_TIMEOUT_MIN_NS);
	ag->redis.stop_fd = ag->stop_fd;
	ag->redis.user = ag->opt.user;
	ag->redis.password = ag->opt.password_file ? ag->password : NULL;
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(ag->member, sizeof(ag->member), "%s:%s:%d", host, ag->ifname, getpid());
	ag->cands = calloc(AGENT_CANDIDATES_MAX, sizeof(*ag->cands));
	ag->index = calloc(2 * AGENT_CANDIDATES_MAX, sizeof(*ag->index));
	ag->calls = calloc(AGENT_CALLS_MAX, sizeof(*ag->calls));
	/* 4 numbers per key, 2 per call (the debt cap and the slack) */
	ag->argbuf = calloc(4 * AGENT_CANDIDATES_MAX + 2 * AGENT_CALLS_MAX, sizeof(*ag->argbuf));
	if (!ag->cands || !ag->index || !ag->calls || !ag->argbuf)
		return -ENOMEM;
	candidates_index_rebuild(ag);
	err = agent_policies_read(ag);
	return err ?: agent_sync_load(ag);
}

void agent_free(struct agent *ag)
{
	if (ag->ring)
		ring_buffer__free(ag->ring);
	sync_close(&ag->sync);
	fleet_redis_free(&ag->redis);
	free(ag->cands);
	free(ag->index);
	free(ag->calls);
	free(ag->argbuf);
	state_close(&ag->st);
	if (ag->stop_fd >= 0)
		close(ag->stop_fd);
}

/*
 * Sleeps about one period (jittered by up to a tenth); true when told to
 * stop. A wait longer than a quarter second is cut into quarters, between
 * which the agent beats once a second (with a period past the hosts'
 * window, 3 s, the other agents would stop counting it between its
 * rounds) and rewrites its report (N, from the beat, included).
 */
static bool period_wait(struct agent *ag, uint64_t started)
{
	uint64_t span = ag->opt.period_ns, jitter = span / 10, now = monotonic_ns();
	uint64_t end, wait, slice;
	struct timespec ts;

	span = span - jitter + (jitter ? (uint64_t)random() % (2 * jitter + 1) : 0);
	end = started + span;
	for (;;) {
		wait = now < end ? end - now : 0;
		slice = wait < AGENT_REPORT_NS ? wait : AGENT_REPORT_NS;
		ts.tv_sec = (time_t)(slice / NSEC_PER_SEC);
		ts.tv_nsec = (long)(slice % NSEC_PER_SEC);
		if (sigtimedwait(&ag->stop, NULL, &ts) >= 0)
			return true;
		if (slice == wait)
			return false;
		if (ag->reached && !ag->hb_failing)
			heartbeat_due(ag, monotonic_ns());
		now = monotonic_ns();
		report_due(ag, now);
	}
}

int agent_loop(struct agent *ag)
{
	uint64_t started;
	int err;

	srandom((unsigned int)(getpid() ^ monotonic_ns()));
	ag->last_sync_ns = monotonic_ns();
	ag->was_up = true;
	fprintf(stderr, "sluice agent: %s: syncing through %s every %llu ms (%s fallback%s)\n",
		ag->ifname, ag->opt.redis, (unsigned long long)(ag->opt.period_ns / 1000000),
		ag->opt.fallback == FALLBACK_SPLIT ? "split" : "local",
		ag->opt.shadow ? ", shadow" : "");
	do {
		started = monotonic_ns();
		err = round_run(ag);
		if (err)
			return err;
	} while (!period_wait(ag, started));
	fprintf(stderr, "sluice agent: %s: stopping\n", ag->ifname);
	return 0;
}

/*
 * SIGINT, SIGTERM and SIGHUP blocked from the start, so that a stop at any
 * moment ends the agent as a clean stop does (the hint cleared, the report
 * removed): waited for between rounds, and ending any Redis wait at once
 * through the signalfd. SIGHUP (its terminal gone, systemctl kill -s HUP)
 * would otherwise kill it with its hint still claiming a live agent; one
 * started ignoring it (nohup) keeps ignoring it, as asked: a blocked signal
 * is queued even when ignored.
 */
int agent_signals(struct agent *ag)
{
	stop_signals(&ag->stop);
	if (sigprocmask(SIG_BLOCK, &ag->stop, NULL))
		return -errno;
	ag->stop_fd = signalfd(-1, &ag->stop, SFD_NONBLOCK | SFD_CLOEXEC);
	return ag->stop_fd < 0 ? -errno : 0;
}

void agent_stop(struct agent *ag)
{
	agent_heartbeat_leave(ag);
	agent_hint_write(ag, false);
	fleet_report_remove(ag->ifname);
}
