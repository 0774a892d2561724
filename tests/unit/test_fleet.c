// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet's pure parts (docs/fleet.md): Redis Cluster key slots (CRC16
 * XMODEM, hash tags), the CLUSTER SLOTS reply into a slot map, MOVED and
 * ASK, the --redis list, the bound and the candidate hint, a reply's bytes
 * against the caps, N from the heartbeat, and the agent's report in status's
 * JSON against its Prometheus families.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "unit.h"
#include "base/clock.h"
#include "base/json.h"
#include "fleet/plan.h"
#include "fleet/report.h"
#include "fleet/resp.h"
#include "fleet/script.h"
#include "fleet/slots.h"
#include "outputs/report.h"
#include "values/endpoint.h"

static void test_slots(void)
{
	/* The cluster specification's own example, and slots redis-cli agrees with. */
	check(crc16_xmodem("123456789", 9) == 0x31c3, "CRC16 XMODEM of 123456789 is 0x31c3",
	      "got %#x", crc16_xmodem("123456789", 9));
	check(key_slot("foo", 3) == 12182, "slot of foo is 12182", "got %u", key_slot("foo", 3));
	check(key_slot("{user1000}.following", 21) == key_slot("user1000", 8),
	      "a hash tag routes by the tag alone", "got %u", key_slot("{user1000}.following", 21));
	check(key_slot("{}x", 3) == crc16_xmodem("{}x", 3) % REDIS_SLOTS,
	      "an empty tag is no tag: the whole key", "got %u", key_slot("{}x", 3));
	check(key_slot("a{b}{c}", 7) == key_slot("b", 1), "the first tag counts", "got %u",
	      key_slot("a{b}{c}", 7));
	check(key_slot("sluice:{s:07}:4:x", 17) == key_slot("s:07", 4),
	      "the agent's keys route by {s:NN}", "got %u", key_slot("sluice:{s:07}:4:x", 17));
}

static redisReply *reply_int(long long v)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_INTEGER;
	r->integer = v;
	return r;
}

static redisReply *reply_str(const char *s)
{
	redisReply *r = calloc(1, sizeof(*r));

	r->type = REDIS_REPLY_STRING;
	r->str = strdup(s);
	r->len = strlen(s);
	return r;
}

static redisReply *reply_array(size_t n, ...)
{
	redisReply *r = calloc(1, sizeof(*r));
	va_list ap;
	size_t i;

	r->type = REDIS_REPLY_ARRAY;
	r->elements = n;
	r->element = calloc(n, sizeof(*r->element));
	va_start(ap, n);
	for (i = 0; i < n; i++)
		r->element[i] = va_arg(ap, redisReply *);
	va_end(ap);
	return r;
}

static void test_slot_map(void)
{
	static struct slot_map map;
	struct endpoint nodes[8] = { { "10.0.0.1", 7001 } };
	int n = 1, err;
	redisReply *r =
		reply_array(2,
			    reply_array(4, reply_int(0), reply_int(5460),
					reply_array(3, reply_str("10.0.0.1"), reply_int(7001),
						    reply_str("id1")),
					reply_array(2, reply_str("10.0.0.4"), reply_int(7004))),
			    reply_array(3, reply_int(5461), reply_int(16383),
					reply_array(2, reply_str("10.0.0.2"), reply_int(7002))));

	err = slot_map_parse(r, &map, nodes, &n, 8);
	check(!err && n == 2, "CLUSTER SLOTS: two masters, the seed reused", "err %d n %d", err, n);
	check(map.node[0] == 0 && map.node[5460] == 0 && map.node[5461] == 1 &&
		      map.node[16383] == 1,
	      "CLUSTER SLOTS: each range to its master, replicas ignored", "%u %u %u %u",
	      map.node[0], map.node[5460], map.node[5461], map.node[16383]);
	freeReplyObject(r);
	r = reply_array(1, reply_array(3, reply_int(10), reply_int(5),
				       reply_array(2, reply_str("h"), reply_int(1))));
	check(slot_map_parse(r, &map, nodes, &n, 8) == -EPROTO,
	      "CLUSTER SLOTS: a backward range is refused", "accepted");
	freeReplyObject(r);
	r = reply_array(1, reply_array(3, reply_int(0), reply_int(10),
				       reply_array(2, reply_str("h"), reply_int(70000))));
	check(slot_map_parse(r, &map, nodes, &n, 8) == -EPROTO,
	      "CLUSTER SLOTS: a bad port is refused", "accepted");
	freeReplyObject(r);
	r = reply_array(0);
	err = slot_map_parse(r, &map, nodes, &n, 8);
	check(!err && map.node[42] == FLEET_SLOT_NONE,
	      "CLUSTER SLOTS: uncovered slots stay unknown", "err %d node %u", err, map.node[42]);
	freeReplyObject(r);
}

static void test_redirects(void)
{
	struct endpoint to = { "", 0 };
	uint16_t slot = 0;

	check(redirect_parse("MOVED 3999 127.0.0.1:6381", &slot, &to) == REDIRECT_MOVED &&
		      slot == 3999 && !strcmp(to.host, "127.0.0.1") && to.port == 6381,
	      "MOVED: slot and node", "slot %u %s:%u", slot, to.host, to.port);
	check(redirect_parse("ASK 3999 [::1]:6381", &slot, &to) == REDIRECT_ASK &&
		      !strcmp(to.host, "::1"),
	      "ASK: an IPv6 node", "host %s", to.host);
	check(redirect_parse("TRYAGAIN Multiple keys request during rehashing of slot", &slot,
			     &to) == REDIRECT_TRYAGAIN,
	      "TRYAGAIN: a split slot mid-migration, the same call later", "kind %d",
	      redirect_parse("TRYAGAIN x", &slot, &to));
	check(redirect_parse("MOVED 16384 h:1", &slot, &to) == REDIRECT_NONE,
	      "MOVED: a slot out of range is no redirection", "taken");
	check(redirect_parse("ERR unknown command", &slot, &to) == REDIRECT_NONE,
	      "an error that is no redirection", "taken");
	check(redirect_parse("NOSCRIPT No matching script", &slot, &to) == REDIRECT_NONE,
	      "NOSCRIPT is no redirection", "taken");
}

static void test_endpoints(void)
{
	static const struct {
		const char *in;
		int n;
	} cases[] = {
		{ "10.0.0.1:6379", 1 },
		{ "redis-a:6379,redis-b:6380", 2 },
		{ "[2001:db8::1]:7001,10.0.0.2:7002", 2 },
		{ "10.0.0.1", -EINVAL },
		{ "10.0.0.1:0", -EINVAL },
		{ "10.0.0.1:65536", -EINVAL },
		{ "2001:db8::1:7001", -EINVAL },
		{ "a:1,", -EINVAL },
		{ ":6379", -EINVAL },
		{ "a b:1", -EINVAL },
	};
	struct endpoint e[8];
	const char *why = NULL;
	char name[96];
	size_t i;
	int n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		n = parse_endpoints(cases[i].in, e, 8, &why);
		snprintf(name, sizeof(name), "--redis %s: %d", cases[i].in, cases[i].n);
		check(n == cases[i].n, name, "got %d", n);
	}
	n = parse_endpoints("[::1]:7001", e, 8, &why);
	check(n == 1 && !strcmp(e[0].host, "::1") && e[0].port == 7001, "[::1]:7001 parses",
	      "%s %u", e[0].host, e[0].port);
}

static void test_bound(void)
{
	struct fleet_bound in = { .rate = 1000,
				  .burst = 100,
				  .burst_local = 100,
				  .window_s = 1,
				  .period_s = 0.1,
				  .rtt_s = 0.001,
				  .hosts = 3 };
	struct sluice_fleet_hint h;
	double a = fleet_bound_admitted(&in);

	/* 1000 + 100 + 2 * (1000 * 0.201 + 100) = 1702 */
	check(a > 1701.9 && a < 1702.1, "A(1 s) for r 1000, b 100, T 100 ms, RTT 1 ms, N 3 is 1702",
	      "got %.2f", a);
	in.hosts = 1;
	check(fleet_bound_excess(&in) == 0, "one host: no excess over r*W + b", "got %.2f",
	      fleet_bound_excess(&in));
	fleet_hint_plan(100000000, 3, &h);
	check((1ULL << h.period_shift) <= (100000000ULL << SLUICE_TIME_SHIFT) &&
		      (2ULL << h.period_shift) > (100000000ULL << SLUICE_TIME_SHIFT),
	      "hint: the period is T rounded down to a power of two", "shift %u", h.period_shift);
	check(fleet_live_until(5000000000ULL, 100000000) ==
		      (5000000000ULL + FLEET_LIVE_PERIODS * 100000000ULL + FLEET_LIVE_NS)
			      << SLUICE_TIME_SHIFT,
	      "live_until: periods and a margin ahead of now, in meter time", "got %llu",
	      (unsigned long long)fleet_live_until(5000000000ULL, 100000000));
	{
		struct fleet_slack sl = { 0 };
		uint64_t t = 10 * FLEET_SLACK_WINDOW_NS, ms = 1000000ULL, got[4];

		got[0] = fleet_slack_note(&sl, t, 300 * ms);			   /* a late sync */
		got[1] = fleet_slack_note(&sl, t + FLEET_SLACK_WINDOW_NS, 5 * ms); /* kept */
		got[2] = fleet_slack_note(&sl, t + 2 * FLEET_SLACK_WINDOW_NS, 5 * ms); /* gone */
		got[3] = fleet_slack_note(&sl, t + 5 * FLEET_SLACK_WINDOW_NS,
					  7 * ms); /* after a gap */
		check(got[0] == 300 * ms && got[1] == 300 * ms && got[2] == 5 * ms &&
			      got[3] == 7 * ms,
		      "slack: a late sync counts for one to two windows, then only newer ones",
		      "%llu %llu %llu %llu ms", (unsigned long long)(got[0] / ms),
		      (unsigned long long)(got[1] / ms), (unsigned long long)(got[2] / ms),
		      (unsigned long long)(got[3] / ms));
	}
	/* At 1000/s (cost 1 ms), a share of that period over 3 hosts is 22 packets. */
	{
		uint64_t cost = 1000000ULL << SLUICE_TIME_SHIFT, per = (cost >> h.cost_shift) + 1;
		uint64_t packets = (h.share_units + per - 1) / per;

		check(packets >= 21 && packets <= 23,
		      "hint: 1000/s crosses its share after 22 packets", "got %llu",
		      (unsigned long long)packets);
		check(fleet_units_packets(&h, per * 22, cost) == 22, "hint: units back to packets",
		      "got %llu", (unsigned long long)fleet_units_packets(&h, per * 22, cost));
	}
	check(us_to_meter(meter_to_us(160000)) == 160000, "meter time to us and back", "got %llu",
	      (unsigned long long)us_to_meter(meter_to_us(160000)));
}

/* resp_scan on s whole: its result. */
static ssize_t scan(const char *s, size_t len)
{
	struct resp_scan st;

	resp_scan_reset(&st);
	return resp_scan(&st, s, len);
}

#define SCAN(lit) scan(lit, sizeof(lit) - 1)

/* A reply of n elements, each ":1": its length once whole. */
static ssize_t scan_array(size_t n)
{
	size_t len = 16 + 4 * n;
	char *buf = malloc(len);
	ssize_t got;
	size_t i, at;

	at = (size_t)snprintf(buf, len, "*%zu\r\n", n);
	for (i = 0; i < n; i++, at += 4)
		memcpy(buf + at, ":1\r\n", 4);
	got = scan(buf, at);
	free(buf);
	return got;
}

static void test_resp(void)
{
	static const char slots[] = "*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n"
				    ":7001\r\n$2\r\nid\r\n*0\r\n";
	static const char two[] = "*2\r\n:1\r\n$-1\r\n+OK\r\n";
	char line[RESP_LINE_MAX + 8];
	struct resp_scan st;
	ssize_t got = 0;
	size_t i;

	check(SCAN("+OK\r\n") == 5 && SCAN(":-42\r\n") == 6 && SCAN("$3\r\nabc\r\n") == 9 &&
		      SCAN("$-1\r\n") == 5 && SCAN("*-1\r\n") == 5 && SCAN("*0\r\n") == 4,
	      "RESP: each kind of reply, whole", "%zd %zd", SCAN("+OK\r\n"), SCAN(":-42\r\n"));
	check(SCAN("*2\r\n:1\r\n$-1\r\n+OK\r\n") == 13,
	      "RESP: one reply of a pipeline, its own bytes alone", "got %zd",
	      scan(two, sizeof(two) - 1));
	check(SCAN("$3\r\nab") == 0 && SCAN("*2\r\n:1\r\n") == 0 && SCAN("+OK\r") == 0,
	      "RESP: a reply not all here yet needs more", "%zd", SCAN("*2\r\n:1\r\n"));
	resp_scan_reset(&st);
	for (i = 1; i <= sizeof(slots) - 1 && !got; i++)
		got = resp_scan(&st, slots, i);
	check(got == (ssize_t)sizeof(slots) - 1 && i == sizeof(slots),
	      "RESP: CLUSTER SLOTS fed a byte at a time, whole at its last", "got %zd at %zu", got,
	      i);
	check(SCAN("*2000000000\r\n") == -EPROTO && SCAN("$1000000000\r\n") == -EPROTO,
	      "RESP: two billion elements or a 1 GB string are refused at their header", "%zd %zd",
	      SCAN("*2000000000\r\n"), SCAN("$1000000000\r\n"));
	check(scan_array(RESP_ARRAY_MAX) > 0 && scan_array(RESP_ARRAY_MAX + 1) == -EPROTO,
	      "RESP: an array of 16384 elements, not one more", "%zd",
	      scan_array(RESP_ARRAY_MAX + 1));
	check(SCAN("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n") > 0 &&
		      SCAN("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n") == -EPROTO,
	      "RESP: arrays 4 deep, not 5", "%zd", SCAN("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n"));
	memset(line, 'x', sizeof(line));
	line[0] = '-';
	check(scan(line, RESP_LINE_MAX - 1) == 0 && scan(line, RESP_LINE_MAX) == -EPROTO,
	      "RESP: a line without its end past 1024 bytes is refused", "%zd",
	      scan(line, RESP_LINE_MAX));
	check(SCAN("*01\r\n:1\r\n") == -EPROTO && SCAN(":+1\r\n") == -EPROTO &&
		      SCAN("$-2\r\n") == -EPROTO && SCAN("?\r\n") == -EPROTO &&
		      SCAN("$1\r\nab\r\n") == -EPROTO &&
		      SCAN(":99999999999999999999\r\n") == -EPROTO,
	      "RESP: what Redis never writes is refused", "%zd", SCAN("*01\r\n:1\r\n"));
}

static void test_heartbeat(void)
{
	redisReply *r = reply_array(2, reply_str("other"), reply_str("me"));

	check(fleet_heartbeat_hosts(r, "me", 1000) == 2, "heartbeat: N counts the names listed",
	      "got %d", fleet_heartbeat_hosts(r, "me", 1000));
	check(fleet_heartbeat_hosts(r, "you", 1000) == -EPROTO,
	      "heartbeat: a list without this agent is refused", "taken");
	check(fleet_heartbeat_hosts(r, "me", 1) == 1, "heartbeat: max + 1 names is N = max",
	      "got %d", fleet_heartbeat_hosts(r, "me", 1));
	freeReplyObject(r);
	r = reply_array(3, reply_str("a"), reply_str("me"), reply_str("b"));
	check(fleet_heartbeat_hosts(r, "me", 1) == -EPROTO,
	      "heartbeat: more names than asked for is refused", "taken");
	freeReplyObject(r);
	r = reply_int(4294967297LL);
	check(fleet_heartbeat_hosts(r, "me", 1000) == -EPROTO,
	      "heartbeat: a number Redis claims is never N", "taken");
	freeReplyObject(r);
	{
		uint64_t s = 1000000000ULL, w = 3 * s;

		check(fleet_hosts_heard(3, 1, 10 * s, 11 * s, w) == 3 &&
			      fleet_hosts_heard(3, 1, 10 * s, 13 * s, w) == 1 &&
			      fleet_hosts_heard(3, 1, 0, 11 * s, w) == 1 &&
			      fleet_hosts_heard(2, 3, 10 * s, 11 * s, w) == 3,
		      "heartbeat: within a window of its key coming back, N is not lowered (only then)",
		      "%u %u %u %u", fleet_hosts_heard(3, 1, 10 * s, 11 * s, w),
		      fleet_hosts_heard(3, 1, 10 * s, 13 * s, w),
		      fleet_hosts_heard(3, 1, 0, 11 * s, w),
		      fleet_hosts_heard(2, 3, 10 * s, 11 * s, w));
	}
}

/* Each Prometheus family exports the value status's JSON shows under its key. */
static void test_report_families(void)
{
	struct fleet_report rep = { .pid = 7,
				    .up = true,
				    .mode = "synced",
				    .period_ns = 11,
				    .hosts = 13,
				    .candidates = 17,
				    .lost = 19,
				    .calls = 23,
				    .lag_ns = 29,
				    .unpushed = 31,
				    .would_refuse = 37 };
	char *text = NULL, want[96];
	size_t len = 0;
	struct report rp;
	struct json j;
	FILE *out = open_memstream(&text, &len);
	int i, bad = -1;

	json_init(&j, out);
	report_json(&rp, &j);
	report_open(&rp, NULL);
	fleet_report_status(&rp, &rep);
	report_close(&rp);
	json_finish(&j);
	fclose(out);
	for (i = 0; i < fleet_nfamilies; i++) {
		snprintf(want, sizeof(want), "\"%s\":%llu", fleet_families[i].key,
			 (unsigned long long)fleet_family_value(&rep, &fleet_families[i]));
		if (!text || !strstr(text, want))
			bad = i;
	}
	check(bad < 0 && fleet_nfamilies >= 5,
	      "fleet report: every Prometheus family is a value status shows under its key",
	      "family %d in %s", bad, text ? text : "(none)");
	free(text);
}

/* report as a file holds it, parsed back: stale or not, as status judges. */
static bool stale_as_read(const char *report)
{
	struct fleet_report rep;
	FILE *f = fmemopen((void *)report, strlen(report), "r");

	if (!f)
		return false;
	fleet_report_parse(f, &rep);
	fclose(f);
	return fleet_report_stale(&rep);
}

/* A report of this process, stamped by the wall clock and the boot clock. */
static void report_stamped(char *buf, size_t len, uint64_t real_ns, uint64_t boot_ns)
{
	int n = snprintf(buf, len, "pid %d\nmode synced\nwritten_ns %llu\n", getpid(),
			 (unsigned long long)real_ns);

	if (boot_ns)
		snprintf(buf + n, len - (size_t)n, "written_boot_ns %llu\n",
			 (unsigned long long)boot_ns);
}

/*
 * A report's age is by CLOCK_BOOTTIME, which no clock step moves: a wall
 * clock stepped by years makes a live agent look neither dead nor a dead
 * one live. A report without written_boot_ns (an older agent's) is aged
 * by the wall clock, as before.
 */
static void test_report_age(void)
{
	const uint64_t minute = 60 * NSEC_PER_SEC;
	char rep[160];
	bool old_fresh;

	report_stamped(rep, sizeof(rep), NSEC_PER_SEC, boottime_ns());
	check(!stale_as_read(rep),
	      "fleet report: fresh by CLOCK_BOOTTIME, its wall-clock "
	      "stamp in 1970 (a clock stepped since) notwithstanding",
	      "%s", rep);
	report_stamped(rep, sizeof(rep), realtime_ns(), boottime_ns() - minute);
	check(stale_as_read(rep),
	      "fleet report: a minute old by CLOCK_BOOTTIME is stale, "
	      "its wall-clock stamp now notwithstanding",
	      "%s", rep);
	report_stamped(rep, sizeof(rep), realtime_ns(), 0);
	old_fresh = !stale_as_read(rep);
	report_stamped(rep, sizeof(rep), realtime_ns() - minute, 0);
	check(old_fresh && stale_as_read(rep),
	      "fleet report of an older agent (no written_boot_ns): aged by the wall clock",
	      "fresh one read fresh %d, a minute old one %s", old_fresh, rep);
}

/* What the agent writes carries the boot clock's stamp, which status ages it by. */
static void test_report_written(void)
{
	struct fleet_report rep = { .pid = getpid(), .mode = "synced", .period_ns = 100000000 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return;
	fleet_report_print(f, &rep);
	fclose(f);
	check(text && !stale_as_read(text) && strstr(text, "\nwritten_boot_ns "),
	      "fleet report: written with written_boot_ns, read back fresh", "%s",
	      text ? text : "(none)");
	free(text);
}

void suite_fleet(void)
{
	test_report_families();
	test_report_age();
	test_report_written();
	test_resp();
	test_heartbeat();
	test_slots();
	test_slot_map();
	test_redirects();
	test_endpoints();
	test_bound();
}
