// SPDX-License-Identifier: GPL-2.0
/*
 * sluice agent: one limit per source across many hosts (docs/fleet.md).
 * Every period T it takes the candidates the datapath handed over (ring
 * buffer `fleet_ring`), reads what each passed since the last period,
 * adds that usage to the source's GCRA state in Redis (one pipelined
 * script call per hash tag), and moves the local TAT forward to the
 * global one through the sync program (bpf/fleet.h). The XDP path never
 * waits for any of it: Redis slow or gone only means the local limits
 * (or split ones) hold until it is back, and usage not pushed is pushed
 * then.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.h"
#include "pins/sync.h"
#include "base/clock.h"
#include "base/errors.h"
#include "commands/commands.h"
#include "fleet/plan.h"
#include "fleet/redis.h"
#include "fleet/report.h"
#include "fleet/script.h"
#include "fleet/slots.h"
#include "maps/policy_maps.h"
#include "values/endpoint.h"

#define AGENT_CANDIDATES_MAX 65536 /* sources synced at once; more wait their turn */
#define AGENT_TAGS	     64	   /* hash tags the sources are spread over */
#define AGENT_KEYS_PER_CALL  96	   /* 5 arguments each: within FLEET_CALL_ARGS_MAX */
#define AGENT_CALLS_MAX	     (AGENT_CANDIDATES_MAX / AGENT_KEYS_PER_CALL + AGENT_TAGS)
#define AGENT_IDLE_ROUNDS    20 /* a candidate with no usage and no debt this long is dropped */
#define AGENT_SYNC_TRIES     4	/* runs of a sync op the datapath's steps keep beating */
#define AGENT_HEARTBEAT_NS   NSEC_PER_SEC
#define AGENT_HEARTBEAT_KEY  "sluice:{hb}:agents" /* a sorted set: member, last beat */
#define AGENT_HOST_WINDOW_MS 3000		  /* an agent silent this long no longer counts */
#define AGENT_KEY_MAX	     96
/* A reply later than two periods, or this, is a timeout: Redis is then down. */
#define AGENT_TIMEOUT_MIN_NS (250 * 1000000ULL)
#define AGENT_ROUND_CALLS    2 /* a round's waits on Redis, in all: two calls' timeouts */
#define AGENT_LEAVE_NS	     (500 * 1000000ULL) /* a stop's ZREM waits at most */
#define AGENT_NUM_MAX	     24			/* one number as text */
#define AGENT_PASSWORD_MAX   256		/* a password's bytes, its line's end included */

struct candidate {
	struct sluice_key key;
	uint64_t last_passed;
	uint64_t unpushed;    /* packets passed and not yet in Redis */
	uint64_t usage;	      /* packets passed this round */
	uint64_t cost, limit; /* meter time, from the source's policy */
	uint64_t delta;	      /* the global TAT ahead of now, meter time */
	uint64_t pushed_ns;   /* the last push that reached Redis (or when first seen) */
	uint32_t idle;
	uint16_t tag;
	bool gone;
	bool alone; /* its tag's call got TRYAGAIN: sent in a call of its own until one succeeds */
	char rkey[AGENT_KEY_MAX];
};

struct agent {
	const char *ifname;
	struct agent_args opt;
	struct state st;
	struct sync_prog sync;
	struct ring_buffer *ring;
	struct sluice_fleet_hint hint;
	struct fleet_redis redis;
	struct candidate *cands;
	int n;
	int *index; /* open addressing over cands, 2 * AGENT_CANDIDATES_MAX, -1 empty */
	struct sluice_policy policies[SLUICE_MAX_POLICIES];
	struct sluice_config cfg;
	uint64_t cfg_read_ns, heartbeat_ns, last_sync_ns, report_ns, round_ns;
	uint64_t sent_ns;    /* when this round's calls went out */
	uint64_t since_sent; /* meter time from then to the sync step */
	struct fleet_slack slack;
	uint64_t slack_ns; /* how late a push may have reached Redis */
	uint32_t hosts;
	bool up, was_up;
	sigset_t stop; /* SIGINT, SIGTERM: blocked, waited for, and polled by every Redis wait */
	int stop_fd;   /* a signalfd of stop */
	char password[AGENT_PASSWORD_MAX];
	char member[128];
	struct fleet_report rep;
	struct fleet_call *calls;
	char (*argbuf)[AGENT_NUM_MAX];
};

/* Checks. */

/* The first line of fd into buf (AGENT_PASSWORD_MAX bytes), reading no more than it needs. */
static int password_line(int fd, char *buf, const char **why)
{
	char line[AGENT_PASSWORD_MAX + 1];
	size_t got = 0, end;
	ssize_t n;

	while (got < sizeof(line) - 1) {
		n = read(fd, line + got, sizeof(line) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	line[got] = '\0';
	end = strcspn(line, "\r\n");
	if (!got) {
		*why = "cannot be read, or is empty";
		return -EIO;
	}
	if (end >= AGENT_PASSWORD_MAX) {
		*why = "has a first line longer than 255 bytes";
		return -EINVAL;
	}
	if (!end) {
		*why = "has an empty first line";
		return -EINVAL;
	}
	memcpy(buf, line, end);
	buf[end] = '\0';
	return 0;
}

/*
 * The password, FILE's first line: opened without blocking and refused
 * unless a regular file (a FIFO would hold the agent until a writer came,
 * a device might never end), or when others may read it.
 */
static int password_read(const char *path, char *buf, const char **why)
{
	struct stat sb;
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = "cannot be read";
		return -errno;
	}
	if (fstat(fd, &sb)) {
		*why = "cannot be read";
		err = -errno;
	} else if (!S_ISREG(sb.st_mode)) {
		*why = "is not a regular file";
		err = -EINVAL;
	} else if (sb.st_mode & S_IROTH) {
		*why = "is readable by every user (chmod o-r)";
		err = -EPERM;
	} else {
		err = password_line(fd, buf, why);
	}
	close(fd);
	return err;
}

static int agent_check(struct cli_args *a)
{
	char pw[AGENT_PASSWORD_MAX];
	const char *why = NULL;

	if (!a->given[OPT_REDIS])
		return fail_input("agent", "--redis HOST:PORT is required");
	if (a->given[OPT_REDIS_USER] && !a->given[OPT_REDIS_PASSWORD_FILE])
		return fail_input("agent", "--redis-user needs --redis-password-file");
	if (a->cmd.agent.password_file && password_read(a->cmd.agent.password_file, pw, &why))
		return fail_input("agent", "--redis-password-file %s: %s",
				  a->cmd.agent.password_file, why);
	return -1;
}

/* Candidates. */

/* FNV-1a: the same name on every host for the same bytes. */
static uint32_t hash_bytes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static uint32_t key_hash(const struct sluice_key *k)
{
	return hash_bytes(k, sizeof(*k));
}

static int index_slot(const struct agent *ag, const struct sluice_key *k)
{
	uint32_t size = 2 * AGENT_CANDIDATES_MAX, i = key_hash(k) & (size - 1);

	while (ag->index[i] >= 0 && memcmp(&ag->cands[ag->index[i]].key, k, sizeof(*k)))
		i = (i + 1) & (size - 1);
	return (int)i;
}

static void index_rebuild(struct agent *ag)
{
	int i;

	for (i = 0; i < 2 * AGENT_CANDIDATES_MAX; i++)
		ag->index[i] = -1;
	for (i = 0; i < ag->n; i++)
		ag->index[index_slot(ag, &ag->cands[i].key)] = i;
}

/* The policy a key's id names in the live set, or NULL. */
static const struct sluice_policy *policy_of(const struct agent *ag, __u16 id)
{
	int i;

	for (i = 0; i < SLUICE_MAX_POLICIES; i++)
		if (ag->policies[i].interval && ag->policies[i].id == id)
			return &ag->policies[i];
	return NULL;
}

static bool policy_syncable(const struct sluice_policy *p)
{
	return p->meter == SLUICE_METER_GCRA && !(p->flags & SLUICE_POL_BYTES);
}

/*
 * The source's name in Redis, the same on every host with the same policy:
 * its prefix, and its rule by what it matches (a rule's id is the host's
 * own). Hash tags spread sources over AGENT_TAGS slots, whatever the keys.
 */
static void candidate_name(struct candidate *c, const struct sluice_policy *p, bool shadow)
{
	struct {
		__u32 cidr[4];
		__u8 family, len, proto, dflt;
		__u16 lo, hi;
	} match = { .family = p->family,
		    .len = p->cidr_len,
		    .proto = p->proto,
		    .dflt = p->family == SLUICE_FAMILY_ANY,
		    .lo = p->dport_lo,
		    .hi = p->dport_hi };
	const struct sluice_key *k = &c->key;
	uint32_t rule, where;

	memcpy(match.cidr, p->cidr, sizeof(match.cidr));
	/* The default's id changes with its algorithm; its name does not. */
	rule = match.dflt ? 0 : hash_bytes(&match, sizeof(match));
	where = key_hash(
		&(struct sluice_key){ .family = k->family,
				      .prefix_len = k->prefix_len,
				      .addr = { k->addr[0], k->addr[1], k->addr[2], k->addr[3] } });
	c->tag = (uint16_t)(where % AGENT_TAGS);
	snprintf(c->rkey, sizeof(c->rkey), "%s:{s:%02u}:%u:%08x%08x%08x%08x/%u:%08x",
		 shadow ? "sluice-shadow" : "sluice", c->tag, k->family, k->addr[0], k->addr[1],
		 k->addr[2], k->addr[3], k->prefix_len, rule);
}

/* A source the datapath handed over: new ones start from what passed before its share. */
static int on_candidate(void *arg, void *data, size_t len)
{
	const struct sluice_fleet_candidate *ev = data;
	struct agent *ag = arg;
	const struct sluice_policy *p;
	struct candidate *c;
	uint64_t before;
	int slot;

	if (len < sizeof(*ev))
		return 0;
	slot = index_slot(ag, &ev->key);
	if (ag->index[slot] >= 0)
		return 0;
	p = policy_of(ag, ev->key.policy);
	if (!p || !policy_syncable(p))
		return 0;
	if (ag->n == AGENT_CANDIDATES_MAX) {
		ag->rep.lost++;
		return 0;
	}
	c = &ag->cands[ag->n];
	memset(c, 0, sizeof(*c));
	c->key = ev->key;
	c->cost = p->interval;
	c->limit = p->limit;
	before = fleet_units_packets(&ag->hint, ev->units, ev->cost);
	c->last_passed = ev->passed > before ? ev->passed - before : 0;
	c->pushed_ns = monotonic_ns() - ag->opt.period_ns; /* what passed before: this period */
	candidate_name(c, p, ag->opt.shadow);
	ag->index[slot] = ag->n++;
	return 0;
}

/* The sync program. */

/* Runs op on candidates [from, from + n): each entry's results back in *out. */
static int sync_batch(struct agent *ag, int from, int n, __u32 op,
		      uint64_t (*arg_of)(const struct agent *, const struct candidate *),
		      struct sluice_fleet_batch *b)
{
	int i;

	memset(b, 0, sizeof(*b));
	b->count = (__u32)n;
	for (i = 0; i < n; i++) {
		b->e[i].key = ag->cands[from + i].key;
		b->e[i].op = op;
		b->e[i].arg = arg_of ? arg_of(ag, &ag->cands[from + i]) : 0;
	}
	return sync_run(&ag->sync, b);
}

/*
 * Runs the entries of batch b whose compare-and-swaps all lost to meter
 * steps (SLUICE_FLEET_CONTENDED: nothing written) again, a few times;
 * b then holds the last run's. What still loses waits for the next round.
 */
static int sync_contended(struct agent *ag, struct sluice_fleet_batch *b)
{
	__u32 i, n;
	int tries, err;

	for (tries = 1; tries < AGENT_SYNC_TRIES; tries++) {
		for (i = 0, n = 0; i < b->count; i++) {
			if (b->e[i].found != SLUICE_FLEET_CONTENDED)
				continue;
			b->e[n] = b->e[i];
			b->e[n].found = 0;
			n++;
		}
		if (!n)
			return 0;
		b->count = n;
		err = sync_run(&ag->sync, b);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The global TAT ahead of the moment the calls were sent, at the latest
 * when Redis read its clock, less the slack: never stricter than the
 * fleet, at most an RTT looser, which the bound's D counts. A later moment
 * would add the sync's time to every host's wait. Without the slack, a
 * push that once reached Redis late leaves the global TAT that much ahead
 * while the source stays busy (Redis places usage by its arrival), and a
 * host that has all of the source's traffic would be held under r.
 */
static uint64_t arg_advance(const struct agent *ag, const struct candidate *c)
{
	uint64_t back = ag->since_sent + (ag->slack_ns << SLUICE_TIME_SHIFT);

	return c->delta > back ? c->delta - back : 0;
}

/* Split: each packet here costs as much as N hosts' would, so this host takes r/N. */
static uint64_t arg_split(const struct agent *ag, const struct candidate *c)
{
	return ag->hosts > 1 ? (ag->hosts - 1) * c->usage * c->cost : 0;
}

/* What every candidate passed since the last round. */
static int usage_read(struct agent *ag)
{
	struct sluice_fleet_batch b;
	int from, i, n, err;

	for (from = 0; from < ag->n; from += SLUICE_FLEET_BATCH) {
		n = ag->n - from < SLUICE_FLEET_BATCH ? ag->n - from : SLUICE_FLEET_BATCH;
		err = sync_batch(ag, from, n, SLUICE_FLEET_READ, NULL, &b);
		if (err)
			return err;
		for (i = 0; i < n; i++) {
			struct candidate *c = &ag->cands[from + i];

			if (b.e[i].found <= 0) {
				c->gone = true;
				continue;
			}
			if (b.e[i].found != 1) /* not read: its usage waits for the next round */
				continue;
			c->usage = b.e[i].passed >= c->last_passed ? b.e[i].passed - c->last_passed
								   : b.e[i].passed;
			c->last_passed = b.e[i].passed;
			c->unpushed += c->usage;
			c->idle = c->usage || c->delta ? 0 : c->idle + 1;
		}
	}
	return 0;
}

static int sync_all(struct agent *ag, __u32 op,
		    uint64_t (*arg_of)(const struct agent *, const struct candidate *))
{
	struct sluice_fleet_batch b;
	int from, n, err;

	for (from = 0; from < ag->n; from += SLUICE_FLEET_BATCH) {
		n = ag->n - from < SLUICE_FLEET_BATCH ? ag->n - from : SLUICE_FLEET_BATCH;
		err = sync_batch(ag, from, n, op, arg_of, &b) ?: sync_contended(ag, &b);
		if (err)
			return err;
	}
	return 0;
}

/* Candidates gone from the table, or idle with no debt, are dropped. */
static void candidates_prune(struct agent *ag)
{
	int i, kept = 0;

	for (i = 0; i < ag->n; i++) {
		struct candidate *c = &ag->cands[i];

		if (c->gone || (c->idle >= AGENT_IDLE_ROUNDS && !c->unpushed))
			continue;
		if (kept != i)
			ag->cands[kept] = *c;
		kept++;
	}
	if (kept != ag->n) {
		ag->n = kept;
		index_rebuild(ag);
	}
}

/* Redis. */

static const char *num(struct agent *ag, int *k, const char *fmt, double v)
{
	char *buf = ag->argbuf[(*k)++];

	snprintf(buf, AGENT_NUM_MAX, fmt, v);
	return buf;
}

static void call_arg(struct fleet_call *call, const char *s)
{
	call->argv[call->argc] = s;
	call->argvlen[call->argc] = strlen(s);
	call->argc++;
}

/* Since the candidate's last push, in us, at most what a fleet may owe. */
static double span_us(const struct agent *ag, const struct candidate *c)
{
	uint64_t span = ag->sent_ns - c->pushed_ns;

	if (span > FLEET_DEBT_MAX_NS)
		span = FLEET_DEBT_MAX_NS;
	return (double)span / 1000;
}

/*
 * The calls of this round: per tag, up to AGENT_KEYS_PER_CALL keys each,
 * or with alone, one call per candidate marked alone (a call of one key
 * never gets TRYAGAIN), as many as fit; members[] says which candidate
 * each key of each call is.
 */
static int calls_build(struct agent *ag, int *members, int *first, bool alone)
{
	static char numkeys[AGENT_CALLS_MAX][16];
	int tag, i, ncalls = 0, nargs = 0, m = 0, keys = 0;
	int per_call = alone ? 1 : AGENT_KEYS_PER_CALL;

	for (tag = 0; tag < AGENT_TAGS; tag++) {
		struct fleet_call *call = NULL;

		for (i = 0; i < ag->n; i++) {
			struct candidate *c = &ag->cands[i];

			if (c->tag != tag || c->alone != alone)
				continue;
			if (!call || keys == per_call) {
				if (ncalls == AGENT_CALLS_MAX)
					break; /* the rest keep their usage for the next round */
				if (call)
					snprintf(numkeys[ncalls - 1], sizeof(numkeys[0]), "%d",
						 keys);
				call = &ag->calls[ncalls];
				first[ncalls++] = m;
				call->argc = 3; /* EVALSHA sha numkeys: filled when sent */
				call->slot = key_slot(c->rkey, strlen(c->rkey));
				keys = 0;
			}
			members[m++] = i;
			call_arg(call, c->rkey);
			keys++;
		}
		if (call)
			snprintf(numkeys[ncalls - 1], sizeof(numkeys[0]), "%d", keys);
	}
	first[ncalls] = m;
	for (i = 0; i < ncalls; i++) {
		struct fleet_call *call = &ag->calls[i];
		int j;

		call->argv[2] = numkeys[i];
		call->argvlen[2] = strlen(numkeys[i]);
		call_arg(call, ag->opt.shadow ? "shadow" : "sync");
		call_arg(call, num(ag, &nargs, "%.0f", meter_to_us(ag->hint.debt_max)));
		call_arg(call, num(ag, &nargs, "%.0f", (double)ag->slack_ns / 1000));
		for (j = first[i]; j < first[i + 1]; j++) {
			const struct candidate *c = &ag->cands[members[j]];

			call_arg(call, num(ag, &nargs, "%.0f", (double)c->unpushed));
			call_arg(call, num(ag, &nargs, "%.6f", meter_to_us(c->cost)));
			call_arg(call, num(ag, &nargs, "%.6f", meter_to_us(c->limit)));
			call_arg(call, num(ag, &nargs, "%.0f", span_us(ag, c)));
		}
	}
	return ncalls;
}

/* One call's reply: per key the TAT ahead of Redis's now (us) and what it refused. */
static int reply_take(struct agent *ag, const redisReply *r, const int *members, int from, int to)
{
	int j;

	if (r->type != REDIS_REPLY_ARRAY || r->elements != (size_t)(2 * (to - from))) {
		ag->redis.errors[FLEET_ERR_REPLY]++;
		return -EPROTO;
	}
	for (j = from; j < to; j++) {
		const redisReply *d = r->element[2 * (j - from)],
				 *x = r->element[2 * (j - from) + 1];
		struct candidate *c = &ag->cands[members[j]];

		if (d->type != REDIS_REPLY_INTEGER || x->type != REDIS_REPLY_INTEGER) {
			ag->redis.errors[FLEET_ERR_REPLY]++;
			return -EPROTO;
		}
		c->delta = us_to_meter((double)d->integer);
		if (c->delta > ag->hint.debt_max)
			c->delta = ag->hint.debt_max;
		c->unpushed = 0;
		c->pushed_ns = ag->sent_ns;
		c->alone = false;
		ag->rep.would_refuse += (uint64_t)x->integer;
	}
	return 0;
}

/*
 * Takes the replies of ncalls calls: how many failed. A call answered
 * TRYAGAIN (its slot mid-migration, its keys split between two nodes) is
 * no failure: its candidates are marked to go alone.
 */
static int calls_settle(struct agent *ag, int ncalls, const int *members, const int *first)
{
	int i, j, failed = 0;

	for (i = 0; i < ncalls; i++) {
		struct fleet_call *call = &ag->calls[i];

		if (!call->reply && call->later) {
			for (j = first[i]; j < first[i + 1]; j++)
				ag->cands[members[j]].alone = true;
		} else if (!call->reply ||
			   reply_take(ag, call->reply, members, first[i], first[i + 1])) {
			failed++;
		}
		if (call->reply)
			freeReplyObject(call->reply);
		call->reply = NULL;
	}
	return failed;
}

/*
 * Pushes every candidate's usage; true when every call made it. Candidates
 * whose tag's call got TRYAGAIN go again at once, one key per call.
 */
static bool redis_sync(struct agent *ag)
{
	static int members[AGENT_CANDIDATES_MAX], first[AGENT_CANDIDATES_MAX + 1];
	int ncalls, failed, pass;

	if (!ag->n)
		return fleet_redis_ready(&ag->redis) == 0;
	if (fleet_redis_ready(&ag->redis))
		return false;
	ag->sent_ns = monotonic_ns();
	failed = 0;
	for (pass = 0; pass < 2; pass++) {
		ncalls = calls_build(ag, members, first, pass == 1);
		if (!ncalls)
			continue;
		fleet_redis_run(&ag->redis, ag->calls, ncalls);
		failed += calls_settle(ag, ncalls, members, first);
	}
	return !failed;
}

/* The hint the datapath reads: the share is 1/N of the period, on until live_until. */
static int hint_write(struct agent *ag, bool on)
{
	__u32 zero = 0;

	fleet_hint_plan(ag->opt.period_ns, ag->hosts, &ag->hint);
	ag->hint.live_until = on ? fleet_live_until(monotonic_ns(), ag->opt.period_ns) : 0;
	return bpf_map_update_elem(ag->st.maps.fleet, &zero, &ag->hint, 0) ? -errno : 0;
}

/*
 * Counts the agents heartbeating, this one included: N for the share and
 * for split. The agent counts the names Redis lists, never a number it
 * claims: at most AGENT_HOSTS_MAX, and a list without this agent is wrong.
 */
static void heartbeat(struct agent *ag)
{
	static const char key[] = AGENT_HEARTBEAT_KEY;
	char window[16], max[16];
	const char *argv[7] = { "EVAL", fleet_heartbeat_script, "1", key, ag->member, window, max };
	size_t len[7];
	redisReply *r;
	int i, n;

	snprintf(window, sizeof(window), "%d", AGENT_HOST_WINDOW_MS);
	snprintf(max, sizeof(max), "%d", AGENT_HOSTS_MAX);
	for (i = 0; i < 7; i++)
		len[i] = strlen(argv[i]);
	r = fleet_redis_command_slot(&ag->redis, key_slot(key, strlen(key)), 7, argv, len);
	if (!r)
		return;
	n = fleet_heartbeat_hosts(r, ag->member, AGENT_HOSTS_MAX);
	freeReplyObject(r);
	if (n < 0) {
		ag->redis.errors[FLEET_ERR_REPLY]++;
		snprintf(ag->redis.last_error, sizeof(ag->redis.last_error),
			 "the heartbeat's reply is no list of at most %d agents with this one",
			 AGENT_HOSTS_MAX);
		return;
	}
	if ((uint32_t)n != ag->hosts) {
		fprintf(stderr, "sluice agent: %s: %d agents in the fleet\n", ag->ifname, n);
		ag->hosts = (uint32_t)n;
		hint_write(ag, true);
	}
}

/* A clean stop leaves the count at once, rather than after AGENT_HOST_WINDOW_MS. */
static void heartbeat_leave(struct agent *ag)
{
	static const char key[] = AGENT_HEARTBEAT_KEY;
	const char *argv[3] = { "ZREM", key, ag->member };
	size_t len[3] = { 4, sizeof(key) - 1, strlen(ag->member) };
	uint64_t budget = ag->redis.timeout_ns;
	redisReply *r;

	if (!ag->up)
		return;
	fleet_redis_round(&ag->redis, budget < AGENT_LEAVE_NS ? budget : AGENT_LEAVE_NS);
	r = fleet_redis_command_slot(&ag->redis, key_slot(key, sizeof(key) - 1), 3, argv, len);
	if (r)
		freeReplyObject(r);
}

/* A changed policy (set, apply) costs its sources' packets anew; a gone one drops them. */
static void candidates_repolicy(struct agent *ag)
{
	const struct sluice_policy *p;
	int i;

	for (i = 0; i < ag->n; i++) {
		struct candidate *c = &ag->cands[i];

		p = policy_of(ag, c->key.policy);
		if (!p || !policy_syncable(p)) {
			c->gone = true;
			continue;
		}
		c->cost = p->interval;
		c->limit = p->limit;
	}
}

/* Policies of the live set, reread once a second: a changed policy is picked up. */
static int policies_read(struct agent *ag)
{
	__u32 i, key;
	int err = config_read(&ag->st.maps, &ag->cfg);

	if (err)
		return err;
	memset(ag->policies, 0, sizeof(ag->policies));
	for (i = 0; i < SLUICE_MAX_POLICIES; i++) {
		key = ag->cfg.policy_set * SLUICE_MAX_POLICIES + i;
		bpf_map_lookup_elem(ag->st.maps.policies, &key, &ag->policies[i]);
	}
	candidates_repolicy(ag);
	return 0;
}

static const char *mode_name(const struct agent *ag)
{
	if (ag->up)
		return ag->opt.shadow ? "shadow" : "synced";
	return ag->opt.fallback == FALLBACK_SPLIT ? "fallback-split" : "fallback-local";
}

static void report(struct agent *ag, uint64_t now)
{
	struct rusage ru;
	uint64_t unpushed = 0;
	int i;

	for (i = 0; i < ag->n; i++)
		unpushed += ag->cands[i].unpushed;
	getrusage(RUSAGE_SELF, &ru);
	ag->rep.pid = getpid();
	ag->rep.up = ag->up;
	snprintf(ag->rep.mode, sizeof(ag->rep.mode), "%s", mode_name(ag));
	ag->rep.period_ns = ag->opt.period_ns;
	ag->rep.hosts = ag->hosts;
	ag->rep.candidates = (uint64_t)ag->n;
	ag->rep.calls = ag->redis.calls;
	/* last_sync_ns is taken after this round's start: a sync this round is no lag */
	ag->rep.lag_ns = now > ag->last_sync_ns ? now - ag->last_sync_ns : 0;
	ag->rep.unpushed = unpushed;
	ag->rep.cpu_s = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	memcpy(ag->rep.errors, ag->redis.errors, sizeof(ag->rep.errors));
	fleet_report_write(ag->ifname, &ag->rep);
}

/* Says once when the fleet is lost or found again, with why. */
static void tell_change(struct agent *ag)
{
	if (ag->up == ag->was_up)
		return;
	if (ag->up)
		fprintf(stderr, "sluice agent: %s: Redis reached, %s (%d sources)\n", ag->ifname,
			mode_name(ag), ag->n);
	else
		fprintf(stderr, "sluice agent: %s: Redis unreachable (%s): %s\n", ag->ifname,
			ag->redis.last_error[0] ? ag->redis.last_error : "no node answered",
			mode_name(ag));
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

/* One period. */
static int round_run(struct agent *ag)
{
	uint64_t now = monotonic_ns(), started;
	bool up;
	int err;

	if (now - ag->cfg_read_ns >= NSEC_PER_SEC) {
		err = policies_read(ag);
		if (err)
			return err;
		ag->cfg_read_ns = now;
	}
	ring_buffer__consume(ag->ring);
	err = usage_read(ag);
	if (err)
		return err;
	started = monotonic_ns();
	fleet_redis_round(&ag->redis, AGENT_ROUND_CALLS * ag->redis.timeout_ns);
	up = redis_sync(ag);
	if (stop_pending(ag))
		return 0; /* what a stop cut short says nothing of Redis: up stays as it was */
	ag->up = up;
	if (monotonic_ns() - started > ag->rep.rtt_max_ns)
		ag->rep.rtt_max_ns = monotonic_ns() - started;
	if (ag->rep.rounds && now - ag->round_ns > ag->rep.gap_max_ns)
		ag->rep.gap_max_ns = now - ag->round_ns;
	ag->round_ns = now;
	if (ag->up) {
		ag->last_sync_ns = monotonic_ns();
		if (ag->n) /* else no call went out, and sent_ns is an older round's */
			ag->slack_ns =
				fleet_slack_note(&ag->slack, now, ag->last_sync_ns - ag->sent_ns);
		if (!ag->opt.shadow)
			ag->since_sent = (monotonic_ns() - ag->sent_ns) << SLUICE_TIME_SHIFT;
		err = sync_all(ag, SLUICE_FLEET_ADVANCE, arg_advance);
	} else if (ag->opt.fallback == FALLBACK_SPLIT && !ag->opt.shadow) {
		err = sync_all(ag, SLUICE_FLEET_CHARGE, arg_split);
	}
	candidates_prune(ag);
	if (!err)
		err = hint_write(ag, true); /* still alive: live_until moves on */
	if (now - ag->heartbeat_ns >= AGENT_HEARTBEAT_NS && ag->up) {
		heartbeat(ag);
		ag->heartbeat_ns = now;
	}
	tell_change(ag);
	ag->rep.rounds++;
	if (now - ag->report_ns >= NSEC_PER_SEC / 4) {
		report(ag, now);
		ag->report_ns = now;
	}
	return err;
}

/* Setup. */

/* Every live rule must be one the agent can sync. */
static int policies_supported(struct agent *ag)
{
	int i;

	for (i = 0; i < SLUICE_MAX_POLICIES; i++) {
		const struct sluice_policy *p = &ag->policies[i];

		if (!p->interval || policy_syncable(p))
			continue;
		return fail_input("agent",
				  "%s: %s %d %s; the agent syncs packet rates under gcra only",
				  ag->ifname, i ? "rule" : "the default", i,
				  p->meter == SLUICE_METER_FIXED_WINDOW ||
						  p->meter == SLUICE_METER_SLIDING_WINDOW
					  ? "uses a window algorithm"
				  : p->meter == SLUICE_METER_WARMUP ? "has a warm-up"
								    : "limits bandwidth");
	}
	return -1;
}

/* The sync program, on the interface's pinned maps; the XDP program stays unloaded. */
static int sync_load(struct agent *ag)
{
	int err = sync_open(&ag->st, &ag->sync);

	if (err)
		return err;
	ag->ring = ring_buffer__new(ag->st.fleet_ring_fd, on_candidate, ag, NULL);
	return ag->ring ? 0 : -errno;
}

/* One agent per interface: a lock beside its report. */
static int agent_lock(const char *ifname)
{
	char path[128];
	int fd;

	mkdir("/run/sluice", 0755);
	mkdir(SLUICE_FLEET_DIR, 0755);
	snprintf(path, sizeof(path), "%s/%s.lock", SLUICE_FLEET_DIR, ifname);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return -EBUSY;
	}
	return fd;
}

static int agent_setup(struct agent *ag, struct cli_args *a)
{
	struct endpoint seeds[ENDPOINTS_MAX];
	const char *why;
	char host[64];
	int n, err;

	ag->ifname = a->ifname;
	ag->opt = a->cmd.agent;
	ag->hosts = (uint32_t)a->cmd.agent.hosts;
	n = parse_endpoints(a->cmd.agent.redis, seeds, ENDPOINTS_MAX, &why);
	if (n < 0)
		return n;
	if (ag->opt.password_file && password_read(ag->opt.password_file, ag->password, &why))
		return -EACCES;
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
	index_rebuild(ag);
	err = policies_read(ag);
	return err ?: sync_load(ag);
}

static void agent_free(struct agent *ag)
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

/* Sleeps about one period (jittered by up to a tenth); true when told to stop. */
static bool period_wait(const struct agent *ag, uint64_t started)
{
	uint64_t span = ag->opt.period_ns, jitter = span / 10, elapsed = monotonic_ns() - started;
	uint64_t wait;
	struct timespec ts;

	span = span - jitter + (jitter ? (uint64_t)random() % (2 * jitter + 1) : 0);
	wait = elapsed < span ? span - elapsed : 0;
	ts.tv_sec = (time_t)(wait / NSEC_PER_SEC);
	ts.tv_nsec = (long)(wait % NSEC_PER_SEC);
	return sigtimedwait(&ag->stop, NULL, &ts) >= 0;
}

static int agent_loop(struct agent *ag)
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
 * SIGINT and SIGTERM blocked from the start, so that a stop at any moment
 * ends the agent as a clean stop does (the hint cleared): waited for
 * between rounds, and ending any Redis wait at once through the signalfd.
 */
static int agent_signals(struct agent *ag)
{
	sigemptyset(&ag->stop);
	sigaddset(&ag->stop, SIGINT);
	sigaddset(&ag->stop, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &ag->stop, NULL))
		return -errno;
	ag->stop_fd = signalfd(-1, &ag->stop, SFD_NONBLOCK | SFD_CLOEXEC);
	return ag->stop_fd < 0 ? -errno : 0;
}

static int agent_run(struct cli_args *a, struct state *unused)
{
	struct agent *ag = calloc(1, sizeof(*ag));
	int lock_fd, err, ret = EXIT_OK;

	(void)unused;
	if (!ag)
		return fail_runtime("agent", -ENOMEM, "out of memory");
	ag->stop_fd = -1;
	err = agent_signals(ag);
	if (err) {
		free(ag);
		return fail_runtime("agent", err, "cannot wait for signals");
	}
	err = state_open_cmd("agent", a->ifname, &ag->st);
	if (err) {
		close(ag->stop_fd);
		free(ag);
		return err;
	}
	lock_fd = agent_lock(a->ifname);
	if (lock_fd < 0) {
		ret = fail_runtime("agent", lock_fd, "%s: another agent runs for it", a->ifname);
		goto out;
	}
	err = agent_setup(ag, a);
	if (!err) {
		ret = policies_supported(ag);
		if (ret >= 0)
			goto out;
		ret = EXIT_OK;
	}
	err = err ?: hint_write(ag, true);
	if (!err)
		err = agent_loop(ag);
	heartbeat_leave(ag);
	hint_write(ag, false);
	fleet_report_remove(a->ifname);
	if (err)
		ret = fail_runtime("agent", err, "%s: the fleet agent failed", a->ifname);
out:
	if (lock_fd >= 0)
		close(lock_fd);
	agent_free(ag);
	free(ag);
	return ret;
}

const struct command cmd_agent = {
	.id = CMD_AGENT,
	.name = "agent",
	.summary = "share each source's limit with other hosts through Redis",
	.synopsis = "IFACE --redis HOST:PORT[,HOST:PORT...] [--period DURATION] [--fallback MODE] "
		    "[--hosts N] [--shadow] [--redis-user USER --redis-password-file FILE]",
	.description =
		"Run in the foreground until SIGINT or SIGTERM, syncing the usage of IFACE's\n"
		"heavy sources with every other host's through Redis (a single node or a\n"
		"Redis Cluster), so that a source gets its limit once across the fleet, not\n"
		"once per host. Packets never wait for Redis: each host meters locally and\n"
		"the agent moves a source's state forward every period. While Redis cannot be\n"
		"reached each host keeps its own limit (--fallback local) or a 1/N share of it\n"
		"(split), and says so in status and the exporter. See docs/fleet.md.",
	.iface = IFACE_REQUIRED,
	.caps = CAPS_LOAD,
	.state = USE_DAEMON,
	.check = agent_check,
	.run = agent_run,
};
