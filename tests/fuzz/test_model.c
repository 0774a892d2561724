// SPDX-License-Identifier: GPL-2.0
/*
 * Model-based differential test of the datapath. Random sequences of
 * packets of random sizes, idle gaps (some ending at or near a window's
 * edge), CPU switches (sources come back to a CPU whose over-limit cache
 * holds them) and policy changes (apply, set, rule add and del, through the
 * user library those commands use) go through the XDP program
 * (BPF_PROG_TEST_RUN, test clock) and through the reference model
 * (model.c); every packet's verdict must agree: pass, drop, would-drop,
 * mark (with the rewritten class), allow or deny. Policies use every
 * algorithm (GCRA, warm-up, fixed and sliding window), packet and byte
 * rates, aggregates and lists; the default and the rules go back and
 * forth between algorithms, windows and rates, and keep or restart their
 * sources' state as docs/design.md says ("What a change does to a
 * source's state").
 *
 *   test-model [--seed N|random] [--seconds S] [--sequences N] [--only K]
 *              [--verbose] [--classify] [--shrink-seconds S]
 *              [--debt touch|change|kept] [--no-wrap] [--no-forged]
 *
 * By default it runs DEFAULT_SEQUENCES sequences of seed DEFAULT_SEED, the
 * same every time (make test); --seconds S runs for S seconds instead, and
 * --seed random draws a seed (make fuzz). A disagreement prints the seed,
 * the sequence, the packet, the verdicts and the events that led there,
 * shrunk to a shorter sequence that still disagrees, and which known
 * cause explains it; `--seed N --only K` replays sequence K of seed N.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice_test.skel.h"
#include "text/conf.h"
#include "values/cidr.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "model.h"

#define START_NS (1000 * NSEC_PER_SEC)
/*
 * Far above what a sequence uses: nothing is evicted, and the aggregate
 * table (a sixteenth: 4096 buckets in 5120 ways) has room for every forged
 * /24 at once, which the model, knowing no capacity, assumes.
 */
#define MAX_SOURCES	  65536
#define MAX_EVENTS	  1500
#define MAX_POOL	  12
#define MAX_LIVE	  16
#define TEXT_LEN	  1024
#define FRAME_BYTES_MAX	  9000
#define OUT_BYTES	  (FRAME_BYTES_MAX + 256)
#define SPOOF_SOURCES	  2500	/* /24s: more than an LRU of 1024 (the old table) kept */
#define SPOOF_GAP_NS	  10000 /* between forged packets: 25 ms for a flood */
#define MAX_DETAILED	  3	/* failures shrunk and explained; later ones get one line */
#define WRAP_NEXT_ID	  65533 /* rule ids this close to the top of their range */
#define DEFAULT_SEED	  1
#define DEFAULT_SEQUENCES 20

/* splitmix64: one stream per sequence, the same on every machine. */
struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static uint64_t between(struct rng *r, uint64_t lo, uint64_t hi)
{
	return lo + below(r, hi - lo + 1);
}

static bool chance(struct rng *r, int percent)
{
	return below(r, 100) < (uint64_t)percent;
}

#define PICK(r, a) ((a)[below(r, sizeof(a) / sizeof((a)[0]))])

enum event_kind {
	EV_PACKET,
	EV_APPLY,	/* the whole policy, lists included (sluice apply) */
	EV_SET,		/* the default replaced (sluice set) */
	EV_RULE_ADD,	/* sluice rule add; an existing match is deleted first */
	EV_RULE_DEL,	/* sluice rule del */
	EV_RULE_CHANGE, /* apply: the live policy, one rule's settings changed (or it added) */
	EV_CPU,		/* later packets run on another CPU */
	EV_SPOOF,	/* one packet from each of `count` new sources, each in its own /24 */
	EV_LIST,	/* sluice allow|deny add|del CIDR (text) */
};

struct event {
	enum event_kind kind;
	/* The clock moves this far first; with align_ns, gap_ns past (or before) its next edge. */
	uint64_t gap_ns, align_ns;
	bool before;
	/* EV_PACKET */
	int src; /* index into the sequence's source pool */
	uint32_t len;
	uint8_t proto, tcp_flags, tos; /* proto IPPROTO_ICMP: ICMPv6 for an IPv6 source */
	uint16_t dport, sport;
	uint8_t icmp_type, icmp_code;
	bool dst_other; /* to OTHER_DST (OTHER_DST6), not frames.c's destination */
	/* EV_CPU */
	int cpu;
	/* EV_SPOOF */
	int count;
	/* EV_LIST */
	bool deny, add;
	/* Policy events: config-file text */
	char *text;
};

struct sequence {
	uint64_t seed;
	int index;
	bool wrap_ids; /* start with rule ids about to wrap */
	bool spoof;    /* floods of forged sources, past the aggregate table's size */
	bool rerate;   /* a few sources, their rules changed often: kept or started afresh */
	char pool[MAX_POOL][48];
	int n_pool;
	char *initial; /* the policy at attach */
	struct event *ev;
	int n;
};

/* ---- Policies ---- */

/* Rule matches: nested CIDRs, classes on the same CIDR, both families. */
static const char *const rule_matches[] = {
	"10.1.0.0/16",
	"10.1.2.0/24",
	"10.2.0.0/16 proto udp dport 53",
	"10.2.0.0/16 proto tcp syn",
	"10.2.0.0/16",
	"2001:db8:1::/48",
	"2001:db8:1:2::/64",
	"2001:db8:1::/48 proto udp dport 53",
	/* Match classes (issue 36.1), on CIDRs that other rules share. */
	"10.2.0.0/16 proto udp sport 123 length 200-1500",
	"10.1.0.0/16 proto tcp tcp-flags SYN,ACK/SYN",
	"10.2.0.0/16 dst 198.51.100.0/24",
	"10.1.2.0/24 proto icmp icmp-type 8/0",
	"2001:db8:1::/48 proto icmpv6 icmp-type 128",
	"2001:db8:1:2::/64 proto udp sport 123 dst 2001:db8:ff::/48",
	"10.1.0.0/16 proto tcp tcp-flags ALL/FIN,PSH,URG",
};

/* The destination of packets with dst_other: inside the --dst rules' CIDRs. */
#define OTHER_DST  "198.51.100.7"
#define OTHER_DST6 "2001:db8:ff:1::7"

#define N_MATCHES (int)(sizeof(rule_matches) / sizeof(rule_matches[0]))

/* Sources: inside and around those CIDRs, some sharing a /24 or a /48. */
static const char *const source_patterns[] = {
	"10.1.2.%d",	      "10.1.7.%d",	"10.2.0.%d",	    "10.2.9.%d",
	"10.9.4.%d",	      "192.0.2.%d",	"2001:db8:1:2::%x", "2001:db8:1:3::%x",
	"2001:db8:1:2:%x::1", "2001:db8:9::%x",
};

static const char *const shared_sources[] = {
	"10.2.0.%d",
	"10.2.9.%d",
	"2001:db8:1:2::%x",
	"2001:db8:1:3::%x",
};

/* Sources of two /24s under the default, for the forged floods. */
static const char *const limited_24s[] = { "10.9.4.%d", "192.0.2.%d" };

static const char *const packet_rates[] = {
	"1/s", "3/s", "10/s", "100/s", "250/s", "1k/s", "7k/s", "30/m", "2/h", "1M/s", "16M/s",
};
static const char *const byte_rates[] = {
	"12kB/s", "64kbit/s", "200kbit/s", "1mbit/s", "10mbit/s", "100kB/s", "1MB/s", "1gbit/s",
};
static const char *const byte_bursts[] = { "1500B", "9000B", "12kB", "64kB", "100kB", "1514B" };
static const char *const new_source_rates[] = { "1/s", "2/s", "1/m", "5/s" };
static const char *const agg_packet_rates[] = { "5/s", "20/s", "100/s", "1k/s" };
static const char *const agg_byte_rates[] = { "1mbit/s", "50kB/s", "200kB/s" };

/*
 * The meters of docs/algorithms.md. A window's rate and length (none: the
 * rate's period) make limits from one packet to a few thousand bytes, at
 * least a full frame (1514 bytes) and within what each algorithm counts;
 * one spelling for each window, so that equal lines mean equal settings.
 */
enum algorithm { ALG_GCRA, ALG_WARMUP, ALG_FIXED, ALG_SLIDING };

struct window_combo {
	const char *rate, *window;
	unsigned int ms;
	bool bytes;
};

static const struct window_combo window_combos[] = {
	{ "1/s", "", 1000, false },	     { "1/s", "2s", 2000, false },
	{ "1/s", "10s", 10000, false },	     { "3/s", "", 1000, false },
	{ "3/s", "2s", 2000, false },	     { "10/s", "", 1000, false },
	{ "10/s", "100ms", 100, false },     { "10/s", "500ms", 500, false },
	{ "10/s", "2s", 2000, false },	     { "100/s", "10ms", 10, false },
	{ "100/s", "50ms", 50, false },	     { "100/s", "100ms", 100, false },
	{ "250/s", "4ms", 4, false },	     { "250/s", "20ms", 20, false },
	{ "30/m", "", 60000, false },	     { "30/m", "2s", 2000, false },
	{ "30/m", "10s", 10000, false },     { "1k/s", "1ms", 1, false },
	{ "1k/s", "5ms", 5, false },	     { "1k/s", "10ms", 10, false },
	{ "7k/s", "1ms", 1, false },	     { "2/h", "", 3600000, false },
	{ "12kB/s", "", 1000, true },	     { "12kB/s", "500ms", 500, true },
	{ "64kbit/s", "", 1000, true },	     { "64kbit/s", "2s", 2000, true },
	{ "100kbit/s", "", 1000, true },     { "200kbit/s", "100ms", 100, true },
	{ "200kbit/s", "500ms", 500, true }, { "1mbit/s", "100ms", 100, true },
	{ "1mbit/s", "20ms", 20, true },     { "100kB/s", "100ms", 100, true },
	{ "100kB/s", "20ms", 20, true },     { "1MB/s", "5ms", 5, true },
	{ "10mbit/s", "2ms", 2, true },
};

#define N_WINDOW_COMBOS (int)(sizeof(window_combos) / sizeof(window_combos[0]))

/*
 * Warm-ups of 3 to 3000 permits (odd counts too, whose middle permit
 * straddles the knee of the cost line), all shorter than the test clock's
 * start, so a new source is cold from its first packet.
 */
static const char *const warmup_combos[][2] = {
	{ "1/s", "3s" },    { "1/s", "10s" },	  { "3/s", "2s" },  { "7/s", "1s" },
	{ "10/s", "1s" },   { "10/s", "5s" },	  { "30/m", "1m" }, { "100/s", "1s" },
	{ "100/s", "30s" }, { "250/s", "500ms" }, { "1k/s", "2s" }, { "7k/s", "100ms" },
};

#define N_WARMUP_COMBOS (int)(sizeof(warmup_combos) / sizeof(warmup_combos[0]))

/* How a limiter meters its sources; combo indexes window_combos or warmup_combos. */
struct shape {
	enum algorithm alg;
	int combo;
};

static struct shape gen_shape(struct rng *r)
{
	uint64_t p = below(r, 20);
	struct shape m = { ALG_GCRA, 0 };

	m.alg = p < 8 ? ALG_GCRA : p < 11 ? ALG_WARMUP : p < 15 ? ALG_FIXED : ALG_SLIDING;
	if (m.alg == ALG_WARMUP)
		m.combo = (int)below(r, N_WARMUP_COMBOS);
	else if (m.alg != ALG_GCRA)
		m.combo = (int)below(r, N_WINDOW_COMBOS);
	return m;
}

/*
 * A shape a default keeps its sources through (docs/design.md): GCRA at
 * any rate, the same window and unit at another rate, the same warm-up.
 */
static struct shape sibling_shape(struct rng *r, struct shape m)
{
	const struct window_combo *w = &window_combos[m.combo];
	int same[N_WINDOW_COMBOS], n = 0, i;

	if (m.alg != ALG_FIXED && m.alg != ALG_SLIDING)
		return m;
	for (i = 0; i < N_WINDOW_COMBOS; i++)
		if (window_combos[i].ms == w->ms && window_combos[i].bytes == w->bytes)
			same[n++] = i;
	m.combo = same[below(r, (uint64_t)n)];
	return m;
}

static void append(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* One aggregate of the family (4 or 6), for a rule of that family or the default. */
static void gen_aggregate(struct rng *r, char *buf, size_t len, int family, bool any_family,
			  bool v4_prefix_24, int nth)
{
	static const int v4[][2] = { { 24, 16 }, { 16, 8 } }, v6[] = { 48, 56 };
	const char *fam = any_family ? (family == 4 ? "ipv4" : "ipv6") : "";
	int plen = family == 4 ? v4[v4_prefix_24][nth] : v6[nth];

	if (chance(r, 65)) {
		append(buf, len, " aggregate %s/%d=%s", fam, plen, PICK(r, agg_packet_rates));
		if (chance(r, 50))
			append(buf, len, ",burst=%d", (int)between(r, 1, 30));
	} else {
		append(buf, len, " aggregate %s/%d=%s", fam, plen, PICK(r, agg_byte_rates));
		if (chance(r, 50))
			append(buf, len, ",burst=%s", PICK(r, byte_bursts));
	}
}

/* The rate and meter of a limiter of shape m; whether it counts bytes and has a burst. */
static void gen_meter(struct rng *r, char *buf, size_t len, const struct shape *m, bool *bytes,
		      int *burst)
{
	static const char *const names[] = {
		[ALG_FIXED] = "fixed-window", [ALG_SLIDING] = "sliding-window"
	};
	const struct window_combo *w = &window_combos[m->combo];

	*bytes = false;
	*burst = 0;
	if (m->alg == ALG_WARMUP) {
		append(buf, len, " rate %s warmup %s", warmup_combos[m->combo][0],
		       warmup_combos[m->combo][1]);
		return;
	}
	if (m->alg != ALG_GCRA) {
		*bytes = w->bytes;
		append(buf, len, " rate %s algorithm %s", w->rate, names[m->alg]);
		if (*w->window)
			append(buf, len, " window %s", w->window);
		return;
	}
	*bytes = chance(r, 40);
	if (*bytes) {
		append(buf, len, " rate %s", PICK(r, byte_rates));
		if (chance(r, 55)) {
			*burst = 1;
			append(buf, len, " burst %s", PICK(r, byte_bursts));
		}
	} else {
		append(buf, len, " rate %s", PICK(r, packet_rates));
		if (chance(r, 55)) {
			*burst = (int)between(r, 1, 40);
			append(buf, len, " burst %d", *burst);
		}
	}
}

/* A limiter's options, canonical: one spelling per setting, in one order. */
static void gen_limiter(struct rng *r, char *buf, size_t len, int family, const struct shape *m)
{
	bool bytes, prefix24 = false;
	const char *key;
	int n_agg, i, b;

	gen_meter(r, buf, len, m, &bytes, &b);
	switch (below(r, 10)) {
	case 0:
	case 1:
		append(buf, len, " action dry-run");
		break;
	case 2:
		append(buf, len, " action mark dscp %d", (int)below(r, 64));
		break;
	case 3:
		append(buf, len, " action mark ecn");
		break;
	case 4:
		append(buf, len, " action mark dscp %d ecn", (int)below(r, 64));
		break;
	}
	if (family != 6 && chance(r, 10)) {
		prefix24 = true;
		append(buf, len, " ipv4-prefix 24");
	}
	/* A destination or pair key (issue 36.2): no aggregates then, which are the source's. */
	key = chance(r, 20) ? (chance(r, 50) ? " key dst" : " key pair") : "";
	append(buf, len, "%s", key);
	if (chance(r, 20))
		append(buf, len, " new-sources %s", PICK(r, new_source_rates));
	if (chance(r, 15))
		append(buf, len, " overflow-rate %s", bytes ? "100kbit/s" : "5/s");
	if (b && chance(r, 20)) {
		if (bytes)
			append(buf, len, " initial-burst 1500B");
		else
			append(buf, len, " initial-burst %d", (int)between(r, 1, b));
	}
	n_agg = chance(r, 35) && !*key ? (int)between(r, 1, 2) : 0;
	for (i = 0; i < n_agg; i++) {
		int fam = family ? family : (i == 0 ? 4 : 6);

		gen_aggregate(r, buf, len, fam, !family, prefix24, i);
	}
}

static int match_family(const char *match)
{
	return strchr(match, ':') ? 6 : 4;
}

/* A rule of shape *want, or of one drawn when NULL. */
static void gen_rule_line(struct rng *r, char *buf, size_t len, int match, const struct shape *want)
{
	struct shape m = want ? *want : gen_shape(r);

	snprintf(buf, len, "rule %s", rule_matches[match]);
	gen_limiter(r, buf, len, match_family(rule_matches[match]), &m);
}

static void gen_default_line(struct rng *r, char *buf, size_t len, const struct shape *m)
{
	snprintf(buf, len, "default");
	gen_limiter(r, buf, len, 0, m);
}

/* Parses policy text as `sluice apply` does; 0 when it is a valid policy. */
static int parse_doc(const char *text, struct policy_doc *doc)
{
	const char *why;
	int err;

	err = doc_from_conf_text(text, doc);
	if (err)
		return err;
	err = doc_validate(doc, &why);
	if (err)
		doc_free(doc);
	return err;
}

/* Draws the parser rejects are drawn again: its complaint is not news. */
static bool text_valid(const char *text)
{
	int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
	struct policy_doc doc;
	bool ok;

	fflush(stderr);
	if (null >= 0)
		dup2(null, STDERR_FILENO);
	ok = !parse_doc(text, &doc);
	if (ok)
		doc_free(&doc);
	fflush(stderr);
	if (saved >= 0)
		dup2(saved, STDERR_FILENO);
	close(saved);
	close(null);
	return ok;
}

/*
 * A limiter line that the user library accepts (a few draws are out of
 * range); a default of shape *m (GCRA when none of its draws is valid), a
 * rule of shape *m, or of any when m is NULL.
 */
static char *gen_valid_line(struct rng *r, int match, struct shape *m)
{
	char line[TEXT_LEN], doc[2 * TEXT_LEN];
	int tries;

	for (tries = 0; tries < 50; tries++) {
		if (match < 0)
			gen_default_line(r, line, sizeof(line), m);
		else
			gen_rule_line(r, line, sizeof(line), match, m);
		snprintf(doc, sizeof(doc), "%s%s\n", match < 0 ? "" : "default rate 10/s\n", line);
		if (text_valid(doc))
			return strdup(line);
	}
	if (match < 0)
		*m = (struct shape){ ALG_GCRA, 0 };
	return strdup(match < 0 ? "default rate 10/s" : "rule 10.1.0.0/16 rate 10/s");
}

/*
 * The defaults a sequence has had: a change of the default goes back to
 * one of them, keeps the shape of the last (a default keeps its sources'
 * state), or takes a new one, so the default's algorithm, window and rate
 * go back and forth.
 */
#define MAX_DEFAULTS 6

struct defaults {
	char *line[MAX_DEFAULTS];
	struct shape shape[MAX_DEFAULTS];
	int n, last;
	/* Each match's shape, whose siblings its rule changes mostly take. */
	struct shape home[N_MATCHES];
};

static char *gen_default(struct rng *r, struct defaults *d)
{
	uint64_t p = below(r, 100);
	struct shape m;
	char *line;
	int i;

	if (d->n && p < 30) {
		d->last = (int)below(r, (uint64_t)d->n);
		return strdup(d->line[d->last]);
	}
	m = d->n && p < 65 ? sibling_shape(r, d->shape[d->last]) : gen_shape(r);
	line = gen_valid_line(r, -1, &m);
	i = d->n < MAX_DEFAULTS ? d->n++ : (int)below(r, MAX_DEFAULTS);
	free(d->line[i]);
	d->line[i] = strdup(line);
	d->shape[i] = m;
	d->last = i;
	return line;
}

static void defaults_free(struct defaults *d)
{
	int i;

	for (i = 0; i < d->n; i++)
		free(d->line[i]);
	memset(d, 0, sizeof(*d));
}

/* A whole policy: the default, some rules, sometimes allow and deny entries. */
static const int shared_matches[];
static const char *const allow_entries[] = { "10.1.2.3/32", "10.2.0.0/24", "2001:db8:1:3::/64" };
static const char *const deny_entries[] = { "10.1.7.0/24", "192.0.2.5/32", "2001:db8:9::/48" };

static char *gen_policy(struct rng *r, bool focus, struct defaults *d)
{
	char *text = calloc(1, 8 * TEXT_LEN), *line;
	bool used[N_MATCHES] = { false };
	struct shape want;
	int n = focus ? (int)between(r, 2, 4) : (int)below(r, 4), i, m;

	line = gen_default(r, d);
	append(text, 8 * TEXT_LEN, "%s\n", line);
	free(line);
	for (i = 0; i < n; i++) {
		m = focus ? shared_matches[below(r, 5)] : (int)below(r, N_MATCHES);
		if (used[m])
			continue;
		used[m] = true;
		/* Half the time near the match's own shape: a later apply keeps its state. */
		want = sibling_shape(r, d->home[m]);
		line = gen_valid_line(r, m, chance(r, 50) ? &want : NULL);
		append(text, 8 * TEXT_LEN, "%s\n", line);
		free(line);
	}
	if (chance(r, 20))
		append(text, 8 * TEXT_LEN, "allow %s\n", PICK(r, allow_entries));
	if (chance(r, 20))
		append(text, 8 * TEXT_LEN, "deny %s\n", PICK(r, deny_entries));
	if (!text_valid(text)) {
		free(text);
		return strdup("default rate 10/s\n");
	}
	return text;
}

/* ---- Sequences ---- */

/* A random gap: mostly short, sometimes across minutes or hours of idle. */
static uint64_t gen_gap_ns(struct rng *r, uint64_t p)
{
	if (p < 30)
		return 0;
	if (p < 55)
		return between(r, 1000, 100000);
	if (p < 75)
		return between(r, 100000, 10000000);
	if (p < 87)
		return between(r, 10000000, NSEC_PER_SEC);
	if (p < 95)
		return between(r, NSEC_PER_SEC, 60 * NSEC_PER_SEC);
	if (p < 99)
		return between(r, 60 * NSEC_PER_SEC, 600 * NSEC_PER_SEC);
	return between(r, 3600 * NSEC_PER_SEC, 5 * 3600 * NSEC_PER_SEC);
}

/* The windows' lengths (window_combos), for gaps that end at or near their edges. */
static const uint64_t edges_ms[] = { 1, 2, 4, 5, 10, 20, 50, 100, 500, 1000, 2000, 10000, 60000 };

/* The moment an event comes at, the clock at now before it. */
static uint64_t event_time(uint64_t now, const struct event *e)
{
	uint64_t edge;

	if (!e->align_ns)
		return now + e->gap_ns;
	edge = (now / e->align_ns + 1) * e->align_ns;
	if (!e->before)
		return edge + e->gap_ns;
	return edge - e->gap_ns > now ? edge - e->gap_ns : edge;
}

/*
 * Most gaps are random; some end at the next edge of a window length, or
 * just before or after it, so traffic crosses window boundaries.
 */
static void gen_gap(struct rng *r, struct event *e)
{
	uint64_t p = below(r, 100);

	if (chance(r, 8)) {
		e->align_ns = PICK(r, edges_ms) * 1000000;
		e->before = chance(r, 50);
		e->gap_ns = p < 25   ? 0
			    : p < 50 ? between(r, 1, 1000)
			    : p < 75 ? between(r, 1000, 1000000)
				     : between(r, 1, e->align_ns / 2);
		return;
	}
	e->gap_ns = gen_gap_ns(r, p);
}

static uint32_t gen_len(struct rng *r)
{
	switch (below(r, 8)) {
	case 0:
		return 60;
	case 1:
		return 1500;
	case 2:
		return 1514;
	case 3:
		return 9000;
	case 4:
		return (uint32_t)between(r, 1000, 9000);
	default:
		return (uint32_t)between(r, 60, 1514);
	}
}

static void gen_packet(struct rng *r, struct event *e, int prev_src, int n_pool)
{
	static const uint8_t tos[] = { 0, 0, 1, 2, 3, 0x10, 0xb8, 0xb9, 0x2e };

	e->kind = EV_PACKET;
	e->src = prev_src >= 0 && chance(r, 55) ? prev_src : (int)below(r, (uint64_t)n_pool);
	e->len = gen_len(r);
	e->tos = PICK(r, tos);
	e->dst_other = chance(r, 20);
	switch (below(r, 8)) {
	case 0:
		e->proto = IPPROTO_UDP;
		e->dport = 53;
		break;
	case 4: /* a reflection: from NTP's port */
		e->proto = IPPROTO_UDP;
		e->dport = 9000;
		e->sport = 123;
		break;
	case 5: /* echo request (8/0 or ICMPv6 128), or another type */
		e->proto = IPPROTO_ICMP;
		e->icmp_type = chance(r, 70) ? 8 : (uint8_t)below(r, 4);
		e->icmp_code = chance(r, 50) ? 0 : 1;
		break;
	case 6: /* a Christmas tree, or flags of no rule */
		e->proto = IPPROTO_TCP;
		e->dport = 80;
		e->tcp_flags = chance(r, 50) ? 0x29 : (uint8_t)below(r, 256);
		break;
	case 1:
		e->proto = IPPROTO_UDP;
		e->dport = 9000;
		break;
	case 2:
		e->proto = IPPROTO_TCP;
		e->dport = 80;
		e->tcp_flags = TCP_FLAG_SYN;
		break;
	default:
		e->proto = IPPROTO_TCP;
		e->dport = 80;
		e->tcp_flags = TCP_FLAG_ACK;
	}
}

static int cidr_parse(const char *text, struct model_cidr *c)
{
	char addr[64];
	const char *slash = strchr(text, '/');

	memset(c, 0, sizeof(*c));
	if (!slash || (size_t)(slash - text) >= sizeof(addr))
		return -1;
	memcpy(addr, text, (size_t)(slash - text));
	addr[slash - text] = '\0';
	c->len = (uint8_t)atoi(slash + 1);
	c->family = strchr(addr, ':') ? 6 : 4;
	return inet_pton(c->family == 4 ? AF_INET : AF_INET6, addr, c->addr) == 1 ? 0 : -1;
}

/*
 * The rule of the longest plain CIDR (no class) among rule_matches that
 * holds source src, or -1: a change of it meets that source's state.
 */
static int plain_match_of(const char *src)
{
	struct model_cidr host, c;
	char text[64];
	int i, best = -1, best_len = -1, bits, w;

	snprintf(text, sizeof(text), "%s/%d", src, strchr(src, ':') ? 128 : 32);
	if (cidr_parse(text, &host))
		return -1;
	for (i = 0; i < N_MATCHES; i++) {
		if (strchr(rule_matches[i], ' ') || cidr_parse(rule_matches[i], &c) ||
		    c.family != host.family || c.len <= best_len)
			continue;
		for (w = 0, bits = c.len; bits > 0; w++, bits -= 32)
			if ((ntohl(host.addr[w]) ^ ntohl(c.addr[w])) >>
			    (bits >= 32 ? 0 : 32 - bits))
				break;
		if (bits <= 0) {
			best = i;
			best_len = c.len;
		}
	}
	return best;
}

/* Matches that share sources (classes of one CIDR), where shared ids would show. */
static const int shared_matches[] = { 2, 3, 4, 5, 7 };

/*
 * A change of policy. Focused (ids about to wrap): mostly rules added and
 * deleted one at a time, so that rules from attach live on beside new ones.
 */
static void gen_policy_event(struct rng *r, struct event *e, const struct sequence *s,
			     struct defaults *d, const char *prev_src)
{
	bool focus = s->wrap_ids;
	static const int focused_kinds[] = { 3, 3, 3, 3, 3, 3, 2, 2, 1, 1, 5, 5 };
	static const int kinds[] = { 0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5 };
	char buf[TEXT_LEN];
	int m = focus ? PICK(r, shared_matches) : (int)below(r, N_MATCHES);
	struct shape want;

	switch (s->rerate && chance(r, 80) ? 5 : focus ? PICK(r, focused_kinds) : PICK(r, kinds)) {
	case 0:
		e->kind = EV_APPLY;
		e->text = gen_policy(r, false, d);
		break;
	case 1:
		e->kind = EV_SET;
		e->text = gen_default(r, d);
		break;
	case 4:
		e->kind = EV_LIST;
		e->deny = chance(r, 50);
		e->add = chance(r, 60);
		e->text = strdup(e->deny ? PICK(r, deny_entries) : PICK(r, allow_entries));
		break;
	case 5:
		/* Mostly the rule of the last source, in a shape that keeps its state. */
		if (prev_src && chance(r, 70) && plain_match_of(prev_src) >= 0)
			m = plain_match_of(prev_src);
		e->kind = EV_RULE_CHANGE;
		want = chance(r, 70) ? sibling_shape(r, d->home[m]) : gen_shape(r);
		e->text = gen_valid_line(r, m, &want);
		break;
	case 2:
		e->kind = EV_RULE_DEL;
		snprintf(buf, sizeof(buf), "rule %s rate 1/s", rule_matches[m]);
		e->text = strdup(buf);
		break;
	default:
		e->kind = EV_RULE_ADD;
		e->text = gen_valid_line(r, m, NULL);
	}
}

/*
 * Forged floods matter where a /24 is limited as a whole: the default gets
 * a slow /24 aggregate that a legitimate source can use up. The forged
 * sources fall under a rule of their own whose /24 buckets refill within
 * a millisecond: a table that never gives away a bucket holding state has
 * room for them, one that evicts the least recently used loses the
 * legitimate /24's.
 */
static void spoof_policy(struct rng *r, struct sequence *s)
{
	const char *rest = strchr(s->initial, '\n');
	char *text = calloc(1, 8 * TEXT_LEN);

	snprintf(text, 8 * TEXT_LEN,
		 "default rate %s aggregate ipv4/24=5/m,burst=%d\n"
		 "rule 10.64.0.0/10 rate 1k/s aggregate /24=1k/s%s",
		 PICK(r, packet_rates), (int)between(r, 1, 5), rest ? rest : "\n");
	if (text_valid(text)) {
		free(s->initial);
		s->initial = text;
	} else {
		free(text);
	}
}

static void sequence_generate(struct sequence *s, uint64_t seed, int index)
{
	struct rng r = { seed * 1000003 + (uint64_t)index };
	struct defaults d = { 0 };
	int i, prev = -1, policy_pct;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < N_MATCHES; i++)
		d.home[i] = gen_shape(&r);
	s->seed = seed;
	s->index = index;
	s->wrap_ids = chance(&r, 25);
	s->spoof = !s->wrap_ids && chance(&r, 15);
	s->rerate = !s->wrap_ids && !s->spoof && chance(&r, 30);
	s->n_pool = (int)between(&r, 2, MAX_POOL);
	for (i = 0; i < s->n_pool; i++)
		snprintf(s->pool[i], sizeof(s->pool[i]),
			 s->wrap_ids || s->rerate ? PICK(&r, shared_sources)
			 : s->spoof		  ? PICK(&r, limited_24s)
						  : PICK(&r, source_patterns),
			 (int)between(&r, 1, 6));
	s->initial = gen_policy(&r, s->wrap_ids, &d);
	if (s->spoof)
		spoof_policy(&r, s);
	s->n = (int)between(&r, 100, MAX_EVENTS);
	s->ev = calloc((size_t)s->n, sizeof(*s->ev));
	/* Forged floods keep their policy: under another, they would fill the table. */
	policy_pct = s->wrap_ids ? 4 : s->spoof ? 0 : s->rerate ? 6 : 3;
	for (i = 0; i < s->n; i++) {
		struct event *e = &s->ev[i];

		gen_gap(&r, e);
		if (chance(&r, policy_pct)) {
			gen_policy_event(&r, e, s, &d, prev >= 0 ? s->pool[prev] : NULL);
		} else if (chance(&r, 3)) {
			e->kind = EV_CPU;
			e->cpu = (int)below(&r, 2);
		} else if (s->spoof && chance(&r, 1)) {
			gen_packet(&r, e, -1, s->n_pool);
			e->kind = EV_SPOOF;
			e->count = SPOOF_SOURCES;
		} else {
			gen_packet(&r, e, prev, s->n_pool);
			prev = e->src;
		}
	}
	defaults_free(&d);
}

static void sequence_free(struct sequence *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		free(s->ev[i].text);
	free(s->ev);
	free(s->initial);
	memset(s, 0, sizeof(*s));
}

/* ---- Running a sequence through both ---- */

/*
 * Variants that tell disagreements apart: the over-limit cache emptied
 * before every packet, debt kept whole across policy changes (as the code
 * before issue 10 did) or capped only when a packet meets it, rule ids left
 * where a fresh attach puts them, byte buckets holding the limit as rounded
 * down rather than a whole burst, and every bucket of both sides forgotten
 * when the default or a rule changes shape (so a datapath that kept its
 * slots across such a change agrees).
 */
static struct {
	bool flush_hot;
	enum model_debt debt;
	bool no_wrap;
	bool stored_limits;
	bool no_spoof;
	bool forget_on_reshape;
} variant = { .debt = MODEL_DEBT_CAP_AT_CHANGE };

struct live_rule {
	char text[TEXT_LEN]; /* the line that made it: its match is the rule's */
	unsigned int instance;
};

struct runner {
	struct fixture fx;
	struct model m;
	struct live_rule live[SLUICE_MAX_POLICIES];
	int n_live;
	unsigned int next_instance;
	struct model_cidr allow[8], deny[8];
	size_t n_allow, n_deny;
	uint64_t now_ns;
	int ncpus;
	int reshaped;		   /* changes that started the default or a rule afresh */
	int rules_kept;		   /* rules that kept their buckets under other limits */
	struct sluice_stats stats; /* the counters after the last packet */
};

/* The test clock, for the user library's reads (struct policy_maps.now_ns). */
static const struct runner *clock_runner;

static uint64_t runner_now_ns(void)
{
	return clock_runner ? clock_runner->now_ns : START_NS;
}

/* The lines of policy text that start with word, one at a time. */
static const char *next_line(const char *p, char *line, size_t len)
{
	const char *end;
	size_t n;

	if (!p || !*p)
		return NULL;
	end = strchr(p, '\n');
	n = end ? (size_t)(end - p) : strlen(p);
	snprintf(line, len, "%.*s", (int)(n < len ? n : len - 1), p);
	return end ? end + 1 : p + n;
}

/* Lists from apply text, for the model. */
static void lists_from_text(struct runner *rn, const char *text)
{
	char line[TEXT_LEN];
	const char *p = text;

	rn->n_allow = rn->n_deny = 0;
	while ((p = next_line(p, line, sizeof(line)))) {
		if (!strncmp(line, "allow ", 6) && rn->n_allow < 8)
			cidr_parse(line + 6, &rn->allow[rn->n_allow++]);
		else if (!strncmp(line, "deny ", 5) && rn->n_deny < 8)
			cidr_parse(line + 5, &rn->deny[rn->n_deny++]);
	}
}

static int state_forget(struct fixture *fx);

/*
 * A rule of a live rule's match keeps its buckets while its meter keeps its
 * shape (docs/design.md, as for the default): else it is a new instance.
 * Counts the rules started afresh.
 */
static int rules_reshape(struct runner *rn, struct model_rule *rules)
{
	const struct model_rule *was;
	int i, j, fresh = 0;

	for (i = 1; i <= rn->n_live; i++) {
		for (was = NULL, j = 1; j < rn->m.n_rules && !was; j++)
			if (rn->m.rules[j].instance == rules[i].instance)
				was = &rn->m.rules[j];
		if (!was)
			continue;
		if (model_meter_same(was, &rules[i])) {
			rn->rules_kept += was->own.limit != rules[i].own.limit ||
					  was->own.interval != rules[i].own.interval;
			continue;
		}
		rules[i].instance = rn->live[i - 1].instance = rn->next_instance++;
		fresh++;
	}
	return fresh;
}

/*
 * The model's rules: the live slots' parameters, the runner's instances
 * (the model's own for the default).
 */
static int model_sync(struct runner *rn)
{
	struct model_rule rules[SLUICE_MAX_POLICIES];
	struct sluice_config cfg;
	struct sluice_policy p;
	__u32 index;
	int i, fresh, rules_fresh;

	if (config_read(&rn->fx.st.maps, &cfg))
		return -1;
	for (i = 0; i <= rn->n_live; i++) {
		index = cfg.policy_set * SLUICE_MAX_POLICIES + (__u32)i;
		if (bpf_map_lookup_elem(rn->fx.st.maps.policies, &index, &p))
			return -1;
		model_rule_from_policy(&rules[i], &p, i == 0, i ? rn->live[i - 1].instance : 0,
				       variant.stored_limits);
	}
	rules_fresh = rules_reshape(rn, rules);
	fresh = model_set_policy(&rn->m, rules, rn->n_live + 1, rn->allow, rn->n_allow, rn->deny,
				 rn->n_deny, rn->now_ns << SLUICE_TIME_SHIFT);
	if (fresh < 0)
		return -1;
	fresh += rules_fresh;
	rn->reshaped += fresh;
	if (fresh && variant.forget_on_reshape) {
		model_forget(&rn->m);
		return state_forget(&rn->fx);
	}
	return 0;
}

/* The length of a rule line's match: all before its rate, which every limiter states. */
static size_t match_len(const char *line)
{
	const char *rate = strstr(line, " rate ");

	return rate ? (size_t)(rate - line) : strlen(line);
}

/* A rule of a live rule's match is that rule, whatever its settings (model_sync reshapes it). */
static unsigned int instance_for(struct runner *rn, const char *line)
{
	size_t n = match_len(line);
	int i;

	for (i = 0; i < rn->n_live; i++)
		if (match_len(rn->live[i].text) == n && !strncmp(rn->live[i].text, line, n))
			return rn->live[i].instance;
	return rn->next_instance++;
}

/* The rule lines of policy text, as live rules (instances kept for live matches). */
static void live_from_text(struct runner *rn, const char *text)
{
	struct live_rule next[SLUICE_MAX_POLICIES];
	char line[TEXT_LEN];
	const char *p = text;
	int n = 0;

	while ((p = next_line(p, line, sizeof(line)))) {
		if (strncmp(line, "rule ", 5))
			continue;
		snprintf(next[n].text, sizeof(next[n].text), "%s", line);
		next[n].instance = instance_for(rn, line);
		n++;
	}
	memcpy(rn->live, next, (size_t)n * sizeof(next[0]));
	rn->n_live = n;
}

static int do_apply(struct runner *rn, const char *text)
{
	struct policy_doc doc;
	int err = parse_doc(text, &doc);

	if (!err)
		err = fixture_store(&rn->fx, &doc);
	doc_free(&doc);
	if (err)
		return err;
	live_from_text(rn, text);
	lists_from_text(rn, text);
	return 0;
}

/* sluice set: the live policy with another default, lists untouched. */
static int do_set(struct runner *rn, const char *line)
{
	struct policy_doc doc;
	int err = parse_doc(line, &doc);

	if (!err)
		err = fixture_configure(&rn->fx, &doc.dflt);
	doc_free(&doc);
	return err;
}

/* The rule a "rule ..." line describes (match and settings). */
static int rule_of_line(const char *line, struct rule *out)
{
	char text[2 * TEXT_LEN];
	struct policy_doc doc;
	int err;

	snprintf(text, sizeof(text), "default rate 1/s\n%s\n", line);
	err = parse_doc(text, &doc);
	if (!err)
		*out = doc.rules[0];
	doc_free(&doc);
	return err;
}

/*
 * The rule a line describes, the live policy it is to change (loaded
 * last) and where that holds a rule of its match (-1: nowhere).
 */
static int rule_and_live(struct runner *rn, const char *line, struct rule *r,
			 struct policy_doc *doc, int *at)
{
	int err = rule_of_line(line, r) ?: policy_load(&rn->fx.st.maps, doc, false);

	*at = err ? -1 : doc_find_rule(doc, &r->match);
	return err;
}

/* sluice rule del: load the live policy, drop the rule with this match, store. */
static int do_rule_del(struct runner *rn, const char *line)
{
	struct policy_doc doc;
	struct rule r;
	int err, i;

	err = rule_and_live(rn, line, &r, &doc, &i);
	if (err)
		return err;
	if (i >= 0) {
		memmove(&doc.rules[i], &doc.rules[i + 1],
			(size_t)(doc.n_rules - i - 1) * sizeof(doc.rules[0]));
		doc.n_rules--;
		err = policy_store(&rn->fx.st.maps, &doc, false);
		if (!err) {
			memmove(&rn->live[i], &rn->live[i + 1],
				(size_t)(rn->n_live - i - 1) * sizeof(rn->live[0]));
			rn->n_live--;
		}
	}
	doc_free(&doc);
	return err;
}

/* sluice rule add (after rule del when the match exists): appended, a new rule. */
static int do_rule_add(struct runner *rn, const char *line)
{
	const char *why;
	struct policy_doc doc;
	struct rule r;
	int err, i;

	err = do_rule_del(rn, line) ?: rule_and_live(rn, line, &r, &doc, &i);
	if (err)
		return err;
	err = doc_add_rule(&doc, &r.settings, &r.match, &why) ?: doc_validate(&doc, &why);
	if (!err)
		err = policy_store(&rn->fx.st.maps, &doc, false);
	if (!err) {
		snprintf(rn->live[rn->n_live].text, TEXT_LEN, "%s", line);
		rn->live[rn->n_live++].instance = rn->next_instance++;
	}
	doc_free(&doc);
	return err;
}

/*
 * The live policy with the rule of the line's match given its settings in
 * place, or added: as apply of the live policy's file with that line
 * edited. model_sync tells whether it keeps its buckets.
 */
static int do_rule_change(struct runner *rn, const char *line)
{
	struct policy_doc doc;
	const char *why;
	struct rule r;
	int err, i;

	err = rule_and_live(rn, line, &r, &doc, &i);
	if (err)
		return err;
	if (i >= 0)
		doc.rules[i] = r;
	else
		err = doc_add_rule(&doc, &r.settings, &r.match, &why);
	err = err ?: doc_validate(&doc, &why) ?: policy_store(&rn->fx.st.maps, &doc, false);
	doc_free(&doc);
	if (err)
		return err;
	if (i < 0) {
		i = rn->n_live++;
		rn->live[i].instance = rn->next_instance++;
	}
	snprintf(rn->live[i].text, TEXT_LEN, "%s", line);
	return 0;
}

/* The model's copy of a list after adding or removing c. */
static void list_model(struct model_cidr *l, size_t *n, const struct model_cidr *c, bool add)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!memcmp(&l[i], c, sizeof(*c)))
			break;
	if (add && i == *n && *n < 8)
		l[(*n)++] = *c;
	else if (!add && i < *n)
		l[i] = l[--*n];
}

/* sluice allow|deny add|del CIDR: the list alone, rules untouched. */
static int do_list(struct runner *rn, const struct event *e)
{
	struct cidr_list items = { 0 };
	struct list_change c = { .deny = e->deny, .add = e->add, .items = &items };
	struct model_cidr mc;
	struct cidr cidr;
	const char *why;
	bool host;
	int err;

	err = parse_cidr(e->text, &cidr, &host, &why);
	if (!err)
		err = cidr_list_add(&items, &cidr);
	if (!err)
		err = list_update(&rn->fx.st.maps, &c);
	free(items.items);
	if (!err && !cidr_parse(e->text, &mc)) {
		if (e->deny)
			list_model(rn->deny, &rn->n_deny, &mc, e->add);
		else
			list_model(rn->allow, &rn->n_allow, &mc, e->add);
	}
	/* Removing what the list does not hold changes nothing. */
	return err == -ENOENT ? 0 : err;
}

/* Rule ids as a long-lived interface has them, after ~65k rule changes. */
static int ids_near_wrap(struct runner *rn)
{
	struct sluice_config cfg;

	if (config_read(&rn->fx.st.maps, &cfg))
		return -1;
	cfg.next_policy_id = WRAP_NEXT_ID;
	return config_write(&rn->fx.st.maps, &cfg);
}

/* Every entry of an array map zeroed, in one call. */
static int array_zero(int fd, const struct bpf_map_info *info)
{
	size_t vsize = info->value_size, n = info->max_entries;
	__u32 *keys, count = (__u32)n, i;
	void *values;
	int err = -ENOMEM;

	if (info->type == BPF_MAP_TYPE_PERCPU_ARRAY)
		vsize = ((vsize + 7) & ~(size_t)7) * (size_t)libbpf_num_possible_cpus();
	keys = calloc(n, sizeof(*keys));
	values = calloc(n, vsize);
	if (keys && values) {
		for (i = 0; i < count; i++)
			keys[i] = i;
		err = bpf_map_update_batch(fd, keys, values, &count, NULL) ? -errno : 0;
	}
	free(keys);
	free(values);
	return err;
}

static int hash_clear(int fd, const struct bpf_map_info *info)
{
	char key[256];

	if (info->key_size > sizeof(key))
		return -E2BIG;
	while (!bpf_map_get_next_key(fd, NULL, key))
		if (bpf_map_delete_elem(fd, key))
			return -errno;
	return 0;
}

/* A map as its program found it at load: arrays zeroed, hashes emptied. */
static int map_forget(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
		return -ENOENT;
	return info.type == BPF_MAP_TYPE_ARRAY || info.type == BPF_MAP_TYPE_PERCPU_ARRAY
		       ? array_zero(fd, &info)
		       : hash_clear(fd, &info);
}

/* Forgets every bucket, admission and overflow state, aggregate and cached verdict. */
static int state_forget(struct fixture *fx)
{
	static const char *const names[] = { "buckets", "hot", "admission", "aggregates" };
	size_t i;
	int err = 0;

	for (i = 0; !err && i < sizeof(names) / sizeof(names[0]); i++)
		err = map_forget(
			bpf_map__fd(bpf_object__find_map_by_name(fx->test->obj, names[i])));
	return err;
}

/*
 * The loaded program as a fresh attach would leave it: no state, rule ids
 * from 1, the sequence's first policy applied. Loading anew for every
 * sequence would cost half a second.
 */
static int runner_open(struct runner *rn, struct fixture *fx, const struct sequence *s)
{
	struct sluice_config cfg;
	struct policy_doc doc;
	int err;

	memset(rn, 0, sizeof(*rn));
	rn->fx = *fx;
	rn->fx.st.maps.now_ns = runner_now_ns;
	clock_runner = rn;
	rn->next_instance = 1;
	rn->now_ns = START_NS;
	rn->ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	model_init(&rn->m, variant.debt);
	pin_thread_to_cpu(0);
	fixture_set_clock(&rn->fx, rn->now_ns);
	/*
	 * No rule of the last sequence may keep its id into this one, nor sway
	 * which ids this one gets: both sets of slots are emptied of rules,
	 * then zeroed as policy_create finds them, so that the default, too,
	 * starts at id 0 below the first id given. A default left at an id of
	 * the last sequence, past next_policy_id, would break what ids.c
	 * relies on before a wrap: no id at or past next_policy_id was ever
	 * given. Once the default moved off it, a new rule got that id, and
	 * with it the buckets the default had left under it.
	 */
	err = parse_doc("default rate 10/s\n", &doc);
	if (!err)
		err = policy_store(&rn->fx.st.maps, &doc, true);
	if (!err)
		err = policy_store(&rn->fx.st.maps, &doc, true);
	doc_free(&doc);
	if (!err)
		err = state_forget(&rn->fx);
	if (!err)
		err = map_forget(rn->fx.st.maps.policies);
	if (!err)
		err = config_read(&rn->fx.st.maps, &cfg);
	if (err)
		return err;
	cfg.next_policy_id = 1;
	cfg.ids_wrapped = 0;
	err = config_write(&rn->fx.st.maps, &cfg);
	if (!err)
		err = parse_doc(s->initial, &doc);
	if (err)
		return err;
	err = policy_store(&rn->fx.st.maps, &doc, true);
	doc_free(&doc);
	if (err)
		return err;
	live_from_text(rn, s->initial);
	lists_from_text(rn, s->initial);
	if (s->wrap_ids && !variant.no_wrap && ids_near_wrap(rn))
		return -1;
	fixture_stats(&rn->fx, &rn->stats);
	return model_sync(rn);
}

static void runner_close(struct runner *rn)
{
	clock_runner = NULL;
	model_free(&rn->m);
}

/* The frame of a packet event: headers as frames.c builds them, padded to len. */
static size_t build_frame(const char *src, const struct event *e, uint8_t *buf,
			  struct model_packet *pkt)
{
	int family = strchr(src, ':') ? 6 : 4;
	uint8_t icmp = family == 4 ? IPPROTO_ICMP : IPPROTO_ICMPV6;
	/* An echo request is type 8 in ICMP, 128 in ICMPv6. */
	uint8_t type = family == 6 && e->icmp_type == 8 ? 128 : e->icmp_type;
	struct frame_spec spec = { .family = family,
				   .src = src,
				   .l4 = e->proto == IPPROTO_TCP    ? IPPROTO_TCP
					 : e->proto == IPPROTO_ICMP ? icmp
								    : 0,
				   .dport = e->dport,
				   .sport = e->sport,
				   .tcp_flags = e->tcp_flags,
				   .icmp_type = type,
				   .icmp_code = e->icmp_code,
				   .dst = !e->dst_other ? NULL
					  : family == 4 ? OTHER_DST
							: OTHER_DST6,
				   .tos = e->tos };
	size_t l3 = frame_l3_offset(&spec), len;
	struct frame f;

	frame_build(&f, &spec);
	len = e->len > f.len ? e->len : f.len;
	memset(buf, 0, len);
	memcpy(buf, f.data, f.len);
	if (spec.family == 4) {
		uint8_t *ip = buf + l3;

		*(uint16_t *)(ip + 2) = htons((uint16_t)(len - l3));
		*(uint16_t *)(ip + 10) = 0;
		*(uint16_t *)(ip + 10) = ip_checksum(ip, 20);
		if (e->proto == IPPROTO_UDP)
			*(uint16_t *)(ip + 20 + 4) = htons((uint16_t)(len - l3 - 20));
	} else {
		*(uint16_t *)(buf + l3 + 4) = htons((uint16_t)(len - l3 - 40));
		if (e->proto == IPPROTO_UDP)
			*(uint16_t *)(buf + l3 + 40 + 4) = htons((uint16_t)(len - l3 - 40));
	}
	memset(pkt, 0, sizeof(*pkt));
	pkt->family = (uint8_t)spec.family;
	inet_pton(spec.family == 4 ? AF_INET : AF_INET6, src, pkt->addr);
	pkt->proto = spec.l4 ? spec.l4 : IPPROTO_UDP;
	pkt->dport = e->proto == IPPROTO_ICMP ? 0 : e->dport ? e->dport : 9000;
	pkt->sport = e->proto == IPPROTO_ICMP ? 0 : e->sport ? e->sport : 40000;
	pkt->syn = e->proto == IPPROTO_TCP && (e->tcp_flags & TCP_FLAG_SYN) &&
		   !(e->tcp_flags & TCP_FLAG_ACK);
	pkt->tcp_flags = e->proto == IPPROTO_TCP ? e->tcp_flags : 0;
	pkt->icmp_type = e->proto == IPPROTO_ICMP ? type : 0;
	pkt->icmp_code = e->proto == IPPROTO_ICMP ? e->icmp_code : 0;
	inet_pton(family == 4 ? AF_INET : AF_INET6,
		  spec.dst	? spec.dst
		  : family == 4 ? "192.0.2.1"
				: "2001:db8::1",
		  pkt->dst);
	pkt->tos = e->tos;
	pkt->len = (uint32_t)len;
	return len;
}

static uint8_t frame_tos(const uint8_t *buf, int family)
{
	const uint8_t *ip = buf + 14;

	return family == 4 ? ip[1] : (uint8_t)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
}

/* The datapath's verdict: its return value and the one counter that moved. */
static enum model_verdict datapath_verdict(int ret, const struct sluice_stats *a,
					   const struct sluice_stats *b)
{
	static const struct {
		enum sluice_counter c;
		int ret;
		enum model_verdict v;
	} map[] = {
		{ SLUICE_CNT_PASSED, XDP_PASS, MV_PASS },
		{ SLUICE_CNT_DROPPED, XDP_DROP, MV_DROP },
		{ SLUICE_CNT_WOULD_DROP, XDP_PASS, MV_WOULD },
		{ SLUICE_CNT_MARKED, XDP_PASS, MV_MARK },
		{ SLUICE_CNT_ALLOWED, XDP_PASS, MV_ALLOW },
		{ SLUICE_CNT_DENIED, XDP_DROP, MV_DENY },
	};
	enum model_verdict v = MV_ERROR;
	int i, moved = 0;

	for (i = 0; i < (int)(sizeof(map) / sizeof(map[0])); i++) {
		if (b->c[map[i].c].packets == a->c[map[i].c].packets)
			continue;
		moved++;
		if (b->c[map[i].c].packets == a->c[map[i].c].packets + 1 && ret == map[i].ret)
			v = map[i].v;
	}
	return moved == 1 ? v : MV_ERROR;
}

struct outcome {
	int failed_at;	/* event index of the first disagreement, -1: none */
	int meter;	/* the meter of the packet's rule there (enum sluice_meter), or -1 */
	int reshaped;	/* changes that started the default or a rule afresh, up to there */
	int rules_kept; /* rules that kept their buckets under other limits */
	uint64_t packets;
	char what[256];
};

static void hot_flush(struct runner *rn)
{
	static struct sluice_hot zero;
	int ncpu = libbpf_num_possible_cpus();
	__u32 cpu;

	for (cpu = 0; ncpu > 0 && cpu < (__u32)ncpu; cpu++)
		bpf_map_update_elem(rn->fx.st.maps.hot, &cpu, &zero, BPF_ANY);
}

static int run_packet(struct runner *rn, const char *src, const struct event *e, char *what,
		      size_t what_len)
{
	static uint8_t in[OUT_BYTES], out[OUT_BYTES];
	struct sluice_stats before, after;
	struct model_packet pkt;
	enum model_verdict want, got;
	uint8_t want_tos, got_tos;
	size_t len = build_frame(src, e, in, &pkt);
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = 1);
	int ret;

	want = model_packet(&rn->m, &pkt, rn->now_ns << SLUICE_TIME_SHIFT, &want_tos);
	before = rn->stats;
	if (variant.flush_hot)
		hot_flush(rn);
	ret = bpf_prog_test_run_opts(rn->fx.prog_fd, &opts) ? -errno : (int)opts.retval;
	fixture_stats(&rn->fx, &after);
	rn->stats = after;
	got = ret < 0 ? MV_ERROR : datapath_verdict(ret, &before, &after);
	got_tos = frame_tos(out, pkt.family);
	if (got == want && (want != MV_MARK || got_tos == want_tos))
		return 0;
#define MOVED(k) (unsigned long long)(after.c[k].packets - before.c[k].packets)
	snprintf(what, what_len,
		 "model %s, datapath %s (return %d; new %llu refused %llu overflow-drop %llu "
		 "full %llu)",
		 model_verdict_name(want), model_verdict_name(got), ret,
		 MOVED(SLUICE_CNT_NEW_SOURCE), MOVED(SLUICE_CNT_REFUSED),
		 MOVED(SLUICE_CNT_OVERFLOW_DROPPED), MOVED(SLUICE_CNT_INSERT_FULL));
#undef MOVED
	if (got == want)
		snprintf(what, what_len, "both mark, class 0x%02x (model) vs 0x%02x (datapath)",
			 want_tos, got_tos);
	return -1;
}

static void spoof_source(char *buf, size_t len, int k)
{
	snprintf(buf, len, "10.%d.%d.1", 64 + k / 256, k % 256);
}

static int run_spoof(struct runner *rn, const struct event *e, char *what, size_t what_len)
{
	char src[32], why[200];
	int k;

	for (k = 0; k < e->count; k++) {
		if (k) {
			rn->now_ns += SPOOF_GAP_NS;
			fixture_set_clock(&rn->fx, rn->now_ns);
		}
		spoof_source(src, sizeof(src), k);
		if (run_packet(rn, src, e, why, sizeof(why))) {
			snprintf(what, what_len, "forged source %s: %s", src, why);
			return -1;
		}
	}
	return 0;
}

static int run_event(struct runner *rn, const struct sequence *s, const struct event *e, char *what,
		     size_t what_len)
{
	int err = 0;

	rn->now_ns = event_time(rn->now_ns, e);
	fixture_set_clock(&rn->fx, rn->now_ns);
	switch (e->kind) {
	case EV_PACKET:
		return run_packet(rn, s->pool[e->src], e, what, what_len);
	case EV_SPOOF:
		return variant.no_spoof ? 0 : run_spoof(rn, e, what, what_len);
	case EV_CPU:
		if (e->cpu < rn->ncpus)
			pin_thread_to_cpu(e->cpu);
		return 0;
	case EV_APPLY:
		err = do_apply(rn, e->text);
		break;
	case EV_SET:
		err = do_set(rn, e->text);
		break;
	case EV_RULE_ADD:
		err = do_rule_add(rn, e->text);
		break;
	case EV_RULE_DEL:
		err = do_rule_del(rn, e->text);
		break;
	case EV_RULE_CHANGE:
		err = do_rule_change(rn, e->text);
		break;
	case EV_LIST:
		err = do_list(rn, e);
		break;
	}
	/* A change the library refuses (too many rules on one source) changes nothing. */
	if (err == -EINVAL || err == -E2BIG || err == -ERANGE)
		err = 0;
	if (!err)
		err = model_sync(rn);
	if (err)
		snprintf(what, what_len, "policy change failed: %s", strerror(-err));
	return err ? -1 : 0;
}

/* Runs events [0, n) of s (keep[i] false: skipped); the first disagreement. */
static struct fixture the_fixture;

static void run_sequence(const struct sequence *s, const bool *keep, int n, struct outcome *o)
{
	struct runner rn;
	int i;

	memset(o, 0, sizeof(*o));
	o->failed_at = -1;
	o->meter = -1;
	if (runner_open(&rn, &the_fixture, s)) {
		o->failed_at = 0;
		snprintf(o->what, sizeof(o->what), "cannot load the datapath");
		runner_close(&rn);
		return;
	}
	for (i = 0; i < n; i++) {
		if (keep && !keep[i])
			continue;
		if (run_event(&rn, s, &s->ev[i], o->what, sizeof(o->what))) {
			o->failed_at = i;
			o->meter = rn.m.last_meter;
			break;
		}
		o->packets += s->ev[i].kind == EV_PACKET ? 1
			      : s->ev[i].kind == EV_SPOOF && !variant.no_spoof
				      ? (uint64_t)s->ev[i].count
				      : 0;
	}
	o->reshaped = rn.reshaped;
	o->rules_kept = rn.rules_kept;
	runner_close(&rn);
}

/* ---- Reporting ---- */

static const char *const event_names[] = {
	[EV_PACKET] = "packet",
	[EV_APPLY] = "apply",
	[EV_SET] = "set",
	[EV_RULE_ADD] = "rule add",
	[EV_RULE_DEL] = "rule del",
	[EV_CPU] = "cpu",
	[EV_RULE_CHANGE] = "rule changed (apply)",
	[EV_SPOOF] = "forged",
	[EV_LIST] = "list",
};

static void print_event(const struct sequence *s, int i, uint64_t at_ns)
{
	const struct event *e = &s->ev[i];
	char text[TEXT_LEN * 8], *nl;

	if (e->align_ns)
		printf("       #%-4d t=%.6f s (%.9f %s the next %.3f s edge)  ", i,
		       (double)(at_ns - START_NS) / 1e9, (double)e->gap_ns / 1e9,
		       e->before ? "before" : "after", (double)e->align_ns / 1e9);
	else
		printf("       #%-4d t=%.6f s (+%.6f)  ", i, (double)(at_ns - START_NS) / 1e9,
		       (double)e->gap_ns / 1e9);
	switch (e->kind) {
	case EV_PACKET:
		printf("packet %s %s dport %u sport %u flags 0x%02x icmp %u/%u%s tos 0x%02x len "
		       "%u\n",
		       s->pool[e->src],
		       e->proto == IPPROTO_TCP	  ? "tcp"
		       : e->proto == IPPROTO_ICMP ? "icmp"
						  : "udp",
		       e->dport, e->sport, e->tcp_flags, e->icmp_type, e->icmp_code,
		       e->dst_other ? " to the --dst rules" : "", e->tos, e->len);
		break;
	case EV_CPU:
		printf("cpu %d\n", e->cpu);
		break;
	case EV_SPOOF:
		printf("forged: one %s packet (len %u) every 10 us from each of %d sources "
		       "10.64.0.1, 10.64.1.1, ...\n",
		       e->proto == IPPROTO_TCP ? "tcp" : "udp", e->len, e->count);
		break;
	case EV_LIST:
		printf("%s %s %s\n", e->deny ? "deny" : "allow", e->add ? "add" : "del", e->text);
		break;
	default:
		snprintf(text, sizeof(text), "%s", e->text);
		for (nl = text; (nl = strchr(nl, '\n'));)
			*nl = nl[1] ? ';' : '\0';
		printf("%s: %s\n", event_names[e->kind], text);
	}
}

static void print_sequence(const struct sequence *s, const bool *keep, int upto)
{
	uint64_t at = START_NS;
	char text[TEXT_LEN * 8], *nl;
	int i;

	snprintf(text, sizeof(text), "%s", s->initial);
	for (nl = text; (nl = strchr(nl, '\n'));)
		*nl = nl[1] ? ';' : '\0';
	printf("       attach: %s%s\n", text,
	       s->wrap_ids ? " (rule ids set to wrap: next 65533)" : "");
	for (i = 0; i <= upto && i < s->n; i++) {
		if (keep && !keep[i])
			continue;
		at = event_time(at, &s->ev[i]);
		print_event(s, i, at);
		if (s->ev[i].kind == EV_SPOOF)
			at += (uint64_t)(s->ev[i].count - 1) * SPOOF_GAP_NS;
	}
}

/*
 * A shorter sequence that still disagrees: events are dropped in chunks,
 * halving the chunk, for as long as the budget lasts.
 */
static int shrink(const struct sequence *s, int failed_at, bool *keep, double budget_s)
{
	time_t end = time(NULL) + (time_t)budget_s;
	struct outcome o;
	int chunk, i, j, last = failed_at;

	for (i = 0; i < s->n; i++)
		keep[i] = i <= failed_at;
	for (chunk = (failed_at + 1) / 2; chunk >= 1; chunk /= 2) {
		for (i = 0; i + chunk <= last && time(NULL) < end; i += chunk) {
			bool saved[MAX_EVENTS];
			int kept = 0;

			memcpy(saved, keep, sizeof(bool) * (size_t)s->n);
			for (j = i; j < i + chunk; j++) {
				kept += keep[j];
				keep[j] = false;
			}
			if (!kept)
				continue;
			run_sequence(s, keep, last + 1, &o);
			if (o.failed_at >= 0 && strncmp(o.what, "cannot", 6)) {
				last = o.failed_at;
				for (j = last + 1; j < s->n; j++)
					keep[j] = false;
			} else {
				memcpy(keep, saved, sizeof(bool) * (size_t)s->n);
			}
		}
	}
	return last;
}

/* ---- Unit checks of the model against hand-computed cases ---- */

#define T(ns) ((uint64_t)(ns) << SLUICE_TIME_SHIFT)

static struct model_rule unit_rule(uint64_t interval, uint64_t burst, bool bytes)
{
	struct model_rule r = { 0 };

	r.is_default = true;
	r.ipv4_prefix = 32;
	r.ipv6_prefix = 64;
	r.own = (struct model_limiter){ interval, bytes ? burst : burst * interval, bytes };
	r.initial = r.own.limit;
	r.admit = (struct model_limiter){ T(1000), T(1000) * 1000, false }; /* 1M/s */
	r.overflow = r.own;
	return r;
}

static struct model_packet unit_packet(const char *src, uint32_t len)
{
	struct model_packet p = { .family = 4, .proto = IPPROTO_UDP, .dport = 9, .len = len };

	inet_pton(AF_INET, src, p.addr);
	return p;
}

static enum model_verdict unit_send(struct model *m, const char *src, uint32_t len, uint64_t ns)
{
	struct model_packet p = unit_packet(src, len);
	uint8_t tos;

	return model_packet(m, &p, T(ns), &tos);
}

/* 10/s burst 5: 5 at once, then exactly one per 100 ms; early ones cost nothing. */
static void unit_burst_then_interval(void)
{
	struct model_rule r = unit_rule(T(100000000), 5, false);
	struct model m;
	int i, passed = 0, ok = 1;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	for (i = 0; i < 7; i++)
		passed += unit_send(&m, "10.0.0.1", 100, START_NS) == MV_PASS;
	for (i = 1; i <= 20; i++) {
		/* Half an interval early: refused, and it takes nothing. */
		ok &= unit_send(&m, "10.0.0.1", 100, START_NS + 100000000ULL * i - 50000000) ==
		      MV_DROP;
		ok &= unit_send(&m, "10.0.0.1", 100, START_NS + 100000000ULL * i) == MV_PASS;
		ok &= unit_send(&m, "10.0.0.1", 100, START_NS + 100000000ULL * i) == MV_DROP;
	}
	check(passed == 5 && ok, "model: burst 5 at once, then exactly one per interval",
	      "passed %d of 7 at once, pattern %s", passed, ok ? "ok" : "wrong");
	model_free(&m);
}

/* 1000 B/s burst 2000 B: two 1000-byte frames, then one per second; a frame = burst passes. */
static void unit_bytes(void)
{
	/* interval per byte: 1 ms of meter time, scaled by 2^16 */
	uint64_t interval = T(1000000) << SLUICE_BYTE_SHIFT;
	struct model_rule r = unit_rule(interval, T(1000000) * 2000, true);
	struct model m;
	int a, b, c, d, e, f;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_send(&m, "10.0.0.2", 1000, START_NS) == MV_PASS;
	b = unit_send(&m, "10.0.0.2", 1000, START_NS) == MV_PASS;
	c = unit_send(&m, "10.0.0.2", 1000, START_NS) == MV_DROP;
	d = unit_send(&m, "10.0.0.2", 1000, START_NS + NSEC_PER_SEC) == MV_PASS;
	e = unit_send(&m, "10.0.0.3", 2000, START_NS) == MV_PASS;
	f = unit_send(&m, "10.0.0.4", 2001, START_NS) == MV_DROP;
	check(a && b && c && d && e && f,
	      "model: byte rate takes the frame's bytes; a frame of the burst's size passes",
	      "%d %d %d %d %d %d", a, b, c, d, e, f);
	check(model_cost(&r.own, 1) == T(1000000) &&
		      model_cost(&(struct model_limiter){ 3, 0, true }, 1) == 1,
	      "model: byte cost rounds up", "cost(1) %llu",
	      (unsigned long long)model_cost(&r.own, 1));
	model_free(&m);
}

/*
 * A change keeps the share of its bucket a source holds. Tightened, 1/m
 * burst 5 drained, then 1/h burst 5: a minute later still empty (keeping
 * its TAT would have left it 4 of 5). Loosened, 1/s burst 5 holding 2,
 * then 10/s burst 5: still 2 (keeping its TAT, capped, would have left 0).
 */
static void unit_share_kept(void)
{
	struct model_rule slow = unit_rule(T(60 * NSEC_PER_SEC), 5, false);
	struct model_rule hourly = unit_rule(T(3600 * NSEC_PER_SEC), 5, false);
	struct model_rule second = unit_rule(T(NSEC_PER_SEC), 5, false);
	struct model_rule tenth = unit_rule(T(NSEC_PER_SEC / 10), 5, false);
	int i, drained = 0, later, kept = 0;
	struct model m;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &slow, 1, NULL, 0, NULL, 0, T(START_NS));
	for (i = 0; i < 5; i++)
		drained += unit_send(&m, "10.0.0.6", 100, START_NS) == MV_PASS;
	model_set_policy(&m, &hourly, 1, NULL, 0, NULL, 0, T(START_NS + 1000));
	later = unit_send(&m, "10.0.0.6", 100, START_NS + 61 * NSEC_PER_SEC);
	check(drained == 5 && later == MV_DROP,
	      "model: tightened 1/m -> 1/h, a drained source stays empty a minute on",
	      "%d passed, then %s", drained, model_verdict_name(later));
	model_free(&m);

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &second, 1, NULL, 0, NULL, 0, T(START_NS));
	for (i = 0; i < 3; i++)
		unit_send(&m, "10.0.0.7", 100, START_NS);
	model_set_policy(&m, &tenth, 1, NULL, 0, NULL, 0, T(START_NS + 1000));
	for (i = 0; i < 3; i++)
		kept += unit_send(&m, "10.0.0.7", 100, START_NS + 2000) == MV_PASS;
	check(kept == 2, "model: loosened 1/s -> 10/s, a source holding 2 of 5 still holds 2",
	      "%d of 3 passed", kept);
	model_free(&m);
}

/*
 * Debt past a new burst, where no old limit scales it: an aggregate /24 at
 * 1/h burst 1 drained, dropped by its rule, then back at 1000/s burst 1.
 */
static void unit_raise(enum model_debt debt, bool want_pass)
{
	struct model_rule r = unit_rule(T(1000000), 1000, false);
	struct model_aggregate hourly = { 4, 24, { T(3600 * NSEC_PER_SEC), 0, false } };
	struct model_aggregate fast = { 4, 24, { T(1000000), T(1000000), false } };
	struct model m;
	int first, after, next;

	hourly.lim.limit = hourly.lim.interval;
	model_init(&m, debt);
	r.n_aggregates = 1;
	r.agg[0] = hourly;
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	first = unit_send(&m, "10.0.0.5", 100, START_NS) == MV_PASS;
	r.n_aggregates = 0;
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS + 500));
	r.n_aggregates = 1;
	r.agg[0] = fast;
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS + 1000));
	after = unit_send(&m, "10.0.0.5", 100, START_NS + 1000 + 1000000);
	/* Capped when met: that packet finds it empty; the next, 1 ms on, passes. */
	next = unit_send(&m, "10.0.0.5", 100, START_NS + 1000 + 2000000);
	check(first && (after == MV_PASS) == want_pass &&
		      (next == MV_PASS) == (debt != MODEL_DEBT_KEPT),
	      debt == MODEL_DEBT_KEPT		? "model: debt kept whole refuses for an hour"
	      : debt == MODEL_DEBT_CAP_AT_TOUCH ? "model: debt capped at the next packet"
						: "model: debt capped at the change",
	      "first %d, 1 ms after the change: %s, 2 ms after: %s", first,
	      model_verdict_name(after), model_verdict_name(next));
	model_free(&m);
}

/* An aggregate of burst 2 over sources of burst 3; a refusal takes from neither. */
static void unit_aggregate(void)
{
	struct model_rule r = unit_rule(T(NSEC_PER_SEC), 3, false);
	struct model m;
	int a, b, c, d, e;

	r.n_aggregates = 1;
	r.agg[0] =
		(struct model_aggregate){ 4, 24, { T(NSEC_PER_SEC), T(2 * NSEC_PER_SEC), false } };
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_send(&m, "10.0.1.1", 100, START_NS) == MV_PASS;
	b = unit_send(&m, "10.0.1.2", 100, START_NS) == MV_PASS;
	c = unit_send(&m, "10.0.1.1", 100, START_NS) == MV_DROP;
	d = unit_send(&m, "10.0.2.1", 100, START_NS) == MV_PASS;
	/* One second on: the /24 has one packet again; 10.0.1.1 still has 2 of its own. */
	e = unit_send(&m, "10.0.1.1", 100, START_NS + NSEC_PER_SEC) == MV_PASS &&
	    unit_send(&m, "10.0.1.1", 100, START_NS + NSEC_PER_SEC) == MV_DROP;
	check(a && b && c && d && e, "model: aggregate /24 burst 2 shared, refusals take nothing",
	      "%d %d %d %d %d", a, b, c, d, e);
	model_free(&m);
}

/* One packet of src to dst through the model. */
static enum model_verdict unit_send_to(struct model *m, const char *src, const char *dst)
{
	struct model_packet p = unit_packet(src, 100);
	uint8_t tos;

	inet_pton(AF_INET, dst, p.dst);
	return model_packet(m, &p, T(START_NS), &tos);
}

/*
 * --key dst: sources share their destination's burst of 3; --key pair: a
 * bucket per source and destination.
 */
static void unit_key_kinds(void)
{
	struct model_rule r = unit_rule(T(NSEC_PER_SEC), 3, false);
	int i, to_a = 0, to_b = 0, pairs = 0;
	struct model m;
	char src[32];

	r.key = MODEL_KEY_DST;
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	for (i = 0; i < 10; i++) {
		snprintf(src, sizeof(src), "10.0.0.%d", i + 1);
		to_a += unit_send_to(&m, src, "192.0.2.1") == MV_PASS;
		to_b += unit_send_to(&m, src, "192.0.2.2") == MV_PASS;
	}
	model_free(&m);
	r.key = MODEL_KEY_PAIR;
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	for (i = 0; i < 5; i++)
		pairs += (unit_send_to(&m, "10.0.0.1", "192.0.2.1") == MV_PASS) +
			 (unit_send_to(&m, "10.0.0.1", "192.0.2.2") == MV_PASS) +
			 (unit_send_to(&m, "10.0.0.2", "192.0.2.1") == MV_PASS);
	check(to_a == 3 && to_b == 3 && pairs == 9,
	      "model: --key dst, 10 sources share each destination's burst; --key pair, one "
	      "bucket per pair",
	      "to a %d, to b %d (want 3 each), pairs %d (want 9)", to_a, to_b, pairs);
	model_free(&m);
}

/* new-sources 1/s: the second new source in a second goes to the overflow bucket. */
static void unit_admission(void)
{
	struct model_rule r = unit_rule(T(NSEC_PER_SEC), 5, false);
	struct model m;
	int a, b, c, d;

	r.admit = (struct model_limiter){ T(NSEC_PER_SEC), T(NSEC_PER_SEC), false };
	r.overflow = (struct model_limiter){ T(NSEC_PER_SEC), T(NSEC_PER_SEC), false };
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_send(&m, "10.0.3.1", 100, START_NS) == MV_PASS;
	b = unit_send(&m, "10.0.3.2", 100, START_NS) == MV_PASS; /* overflow's one */
	c = unit_send(&m, "10.0.3.3", 100, START_NS) == MV_DROP; /* overflow empty */
	d = unit_send(&m, "10.0.3.1", 100, START_NS) == MV_PASS; /* its own bucket */
	check(a && b && c && d, "model: admission budget, then the shared overflow bucket",
	      "%d %d %d %d", a, b, c, d);
	model_free(&m);
}

/* Mark: DSCP rewritten, ECN CE set, a Not-ECT packet dropped. */
static void unit_mark(void)
{
	struct model_rule r = unit_rule(T(NSEC_PER_SEC), 1, false);
	struct model_packet p = unit_packet("10.0.4.1", 100);
	struct model m;
	uint8_t t1, t2, t3;
	enum model_verdict v1, v2, v3;

	r.action = SLUICE_ACTION_MARK;
	r.mark_dscp = r.mark_ecn = true;
	r.dscp = 10;
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	model_packet(&m, &p, T(START_NS), &t1);
	p.tos = 0x02; /* ECT(0) */
	v1 = model_packet(&m, &p, T(START_NS), &t1);
	p.tos = 0x00;
	v2 = model_packet(&m, &p, T(START_NS), &t2);
	r.mark_ecn = false;
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	p.tos = 0xb9;
	v3 = model_packet(&m, &p, T(START_NS), &t3);
	check(v1 == MV_MARK && t1 == (10 << 2 | 3) && v2 == MV_DROP && v3 == MV_MARK &&
		      t3 == (10 << 2 | 1),
	      "model: mark rewrites DSCP and sets CE; Not-ECT is dropped", "%s 0x%02x %s %s 0x%02x",
	      model_verdict_name(v1), t1, model_verdict_name(v2), model_verdict_name(v3), t3);
	model_free(&m);
}

/* A default of `limit` packets per window of window_ns under a window algorithm. */
static struct model_rule unit_window(uint8_t meter, uint64_t window_ns, uint64_t limit)
{
	struct model_rule r = unit_rule(T(NSEC_PER_SEC), 1, false);

	r.meter = meter;
	r.window = T(window_ns);
	r.own = (struct model_limiter){ 1, limit, false };
	return r;
}

/* Packets of 10.0.5.1 sent at ns that pass. */
static int unit_passes(struct model *m, uint64_t ns, int n)
{
	int i, passed = 0;

	for (i = 0; i < n; i++)
		passed += unit_send(m, "10.0.5.1", 100, ns) == MV_PASS;
	return passed;
}

/* 3 per 1 s window: 3 pass, the rest of the window none, 3 again from its edge. */
static void unit_fixed_window(void)
{
	struct model_rule r = unit_window(SLUICE_METER_FIXED_WINDOW, NSEC_PER_SEC, 3);
	struct model m;
	int a, b, c;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_passes(&m, START_NS + 500000000, 5);
	b = unit_passes(&m, START_NS + NSEC_PER_SEC - 1, 1);
	c = unit_passes(&m, START_NS + NSEC_PER_SEC, 5);
	check(a == 3 && b == 0 && c == 3,
	      "model: fixed window of 3, then none, then 3 from the edge", "%d %d %d", a, b, c);
	model_free(&m);
}

/*
 * Sliding window of 3 per second, 3 counted in the window before: at
 * elapsed f the estimate is 3 (1 - f) + cur. One passes once 1 - f <= 2/3,
 * a second once 1 - f <= 1/3, with 1 - f rounded up to 16 ns: 666666660
 * and 333333330 ns before the edge pass exactly but not rounded up;
 * 666666656 and 333333328 ns before do.
 */
static void unit_sliding_window(void)
{
	struct model_rule r = unit_window(SLUICE_METER_SLIDING_WINDOW, NSEC_PER_SEC, 3);
	uint64_t next = START_NS + NSEC_PER_SEC, end = START_NS + 2 * NSEC_PER_SEC;
	struct model m;
	int a, b, c, d, e, f;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_passes(&m, START_NS, 4);
	b = unit_passes(&m, next, 1);
	c = unit_passes(&m, end - 666666660, 1);
	d = unit_passes(&m, end - 666666656, 2);
	e = unit_passes(&m, end - 333333330, 1);
	f = unit_passes(&m, end - 333333328, 2);
	check(a == 3 && b == 0 && c == 0 && d == 1 && e == 0 && f == 1,
	      "model: sliding window weighs the previous count, its weight rounded up",
	      "%d %d %d %d %d %d", a, b, c, d, e, f);
	model_free(&m);
}

/*
 * 10/s, warm-up 1 s: a cold source passes M / 2 = 5 in the ramp, which
 * takes the warm-up (2.8 + 2.4 + 2 + 1.6 + 1.2 intervals), then one per
 * interval; 5 s idle makes it cold again.
 */
static void unit_warmup(void)
{
	struct model_rule r = unit_rule(T(100000000), 1, false);
	int first = 0, second = 0, cold;
	uint64_t t;
	struct model m;

	r.meter = SLUICE_METER_WARMUP;
	r.warm_max = 10;
	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &r, 1, NULL, 0, NULL, 0, T(START_NS));
	for (t = 0; t < 2 * NSEC_PER_SEC; t += 1000000) {
		int p = unit_passes(&m, START_NS + t, 1);

		first += t < NSEC_PER_SEC ? p : 0;
		second += t >= NSEC_PER_SEC ? p : 0;
	}
	t = START_NS + 7 * NSEC_PER_SEC;
	cold = unit_passes(&m, t, 3) == 1 && !unit_passes(&m, t + 279000000, 1) &&
	       unit_passes(&m, t + 281000000, 1) == 1;
	check(first == 5 && second == 10 && cold,
	      "model: warm-up passes half its permits in the ramp, then the rate; idle makes it cold",
	      "%d in the first second, %d in the next, cold again %d", first, second, cold);
	model_free(&m);
}

/*
 * The default's window changes limit (its count kept, met by the new
 * limit), then algorithm (a new source again).
 */
static void unit_reshape(void)
{
	struct model_rule one = unit_window(SLUICE_METER_FIXED_WINDOW, NSEC_PER_SEC, 1);
	struct model_rule two = unit_window(SLUICE_METER_FIXED_WINDOW, NSEC_PER_SEC, 2);
	struct model_rule sliding = unit_window(SLUICE_METER_SLIDING_WINDOW, NSEC_PER_SEC, 2);
	uint64_t t = START_NS + 100;
	int a, b, c, d, same, fresh;
	struct model m;

	model_init(&m, MODEL_DEBT_CAP_AT_CHANGE);
	model_set_policy(&m, &one, 1, NULL, 0, NULL, 0, T(START_NS));
	a = unit_passes(&m, t, 2);
	same = model_set_policy(&m, &two, 1, NULL, 0, NULL, 0, T(t));
	b = unit_passes(&m, t, 2);
	fresh = model_set_policy(&m, &sliding, 1, NULL, 0, NULL, 0, T(t));
	c = unit_passes(&m, t, 3);
	d = model_set_policy(&m, &sliding, 1, NULL, 0, NULL, 0, T(t)) == 0 &&
	    !unit_passes(&m, t, 1);
	check(a == 1 && same == 0 && b == 1 && fresh == 1 && c == 2 && d,
	      "model: the default keeps a window's count at the same window, not at another algorithm",
	      "%d, same %d: %d, new %d: %d, %d", a, same, b, fresh, c, d);
	model_free(&m);
}

static void model_unit_checks(void)
{
	unit_fixed_window();
	unit_sliding_window();
	unit_warmup();
	unit_reshape();
	unit_burst_then_interval();
	unit_bytes();
	unit_share_kept();
	unit_raise(MODEL_DEBT_CAP_AT_CHANGE, true);
	unit_raise(MODEL_DEBT_KEPT, false);
	unit_raise(MODEL_DEBT_CAP_AT_TOUCH, false);
	unit_aggregate();
	unit_key_kinds();
	unit_admission();
	unit_mark();
}

/* A 9000-byte frame reaches the program whole (multi-buffer) and is costed as 9000 bytes. */
static void check_jumbo_frames(struct fixture *fx)
{
	static uint8_t buf[OUT_BYTES];
	struct event e = { .kind = EV_PACKET, .len = FRAME_BYTES_MAX, .proto = IPPROTO_UDP };
	struct sluice_stats a, b;
	struct model_packet pkt;
	size_t len = build_frame("192.0.2.200", &e, buf, &pkt);
	int ret;

	fixture_stats(fx, &a);
	ret = fixture_run(fx, buf, len, 1);
	fixture_stats(fx, &b);
	check(ret == XDP_PASS && b.c[SLUICE_CNT_PASSED].bytes - a.c[SLUICE_CNT_PASSED].bytes == len,
	      "model: a 9000-byte frame runs as one multi-buffer frame of 9000 bytes",
	      "return %d, %llu bytes counted", ret,
	      (unsigned long long)(b.c[SLUICE_CNT_PASSED].bytes - a.c[SLUICE_CNT_PASSED].bytes));
}

/* ---- Main ---- */

struct options {
	uint64_t seed;
	double seconds;
	int sequences; /* 0: as many as the time allows */
	int only;      /* -1: all */
	bool verbose;
	bool classify; /* explain every failure, not only the shrunk ones */
	double shrink_s;
};

static const char *const debt_names[] = {
	[MODEL_DEBT_CAP_AT_CHANGE] = "change",
	[MODEL_DEBT_CAP_AT_TOUCH] = "touch",
	[MODEL_DEBT_KEPT] = "kept",
};

static int debt_of(const char *name)
{
	int i;

	for (i = 0; i < (int)(sizeof(debt_names) / sizeof(debt_names[0])); i++)
		if (!strcmp(name, debt_names[i]))
			return i;
	return -1;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int i;

	bool timed = false, counted = false;

	memset(o, 0, sizeof(*o));
	o->seed = DEFAULT_SEED;
	o->sequences = DEFAULT_SEQUENCES;
	o->only = -1;
	o->shrink_s = 10;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--verbose") || !strcmp(a, "--classify")) {
			o->verbose |= !strcmp(a, "--verbose");
			o->classify |= !strcmp(a, "--classify");
			continue;
		}
		/* To look past a known, still open disagreement. */
		if (!strcmp(a, "--no-wrap") || !strcmp(a, "--no-forged")) {
			variant.no_wrap |= !strcmp(a, "--no-wrap");
			variant.no_spoof |= !strcmp(a, "--no-forged");
			continue;
		}
		if (!v) {
			fprintf(stderr, "test-model: %s needs a value\n", a);
			return -1;
		}
		i++;
		timed |= !strcmp(a, "--seconds");
		counted |= !strcmp(a, "--sequences");
		if (!strcmp(a, "--seed") && !strcmp(v, "random"))
			o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
		else if (!strcmp(a, "--seed"))
			o->seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(a, "--sequences"))
			o->sequences = atoi(v);
		else if (!strcmp(a, "--only"))
			o->only = atoi(v);
		else if (!strcmp(a, "--shrink-seconds"))
			o->shrink_s = atof(v);
		else if (!strcmp(a, "--debt") && debt_of(v) >= 0)
			variant.debt = (enum model_debt)debt_of(v);
		else {
			fprintf(stderr, "test-model: unknown option %s\n", a);
			return -1;
		}
	}
	if (timed && !counted)
		o->sequences = 0;
	return 0;
}

/* Whether the shrunk sequence agrees under a variant: what the disagreement is about. */
static bool agrees_with(const struct sequence *s, const bool *keep, int last)
{
	struct outcome o;

	run_sequence(s, keep, last + 1, &o);
	return o.failed_at < 0;
}

enum {
	CLASS_CACHE,
	CLASS_CACHE_SLIDING,
	CLASS_KEPT,
	CLASS_TOUCH,
	CLASS_RESHAPE,
	CLASS_ROUNDING,
	CLASS_WRAP,
	CLASS_FORGED,
	CLASS_NONE,
	CLASSES
};
static const char *const class_names[CLASSES] = { "cache",
						  "cache on a sliding window",
						  "debt kept",
						  "debt capped when met",
						  "limiter reshaped",
						  "burst rounding",
						  "id wrap",
						  "forged flood",
						  "unexplained" };
static unsigned long class_count[CLASSES];

/* Which variants agree where o disagreed: what the disagreement is about. */
static void diagnose(const struct sequence *s, const bool *keep, int last, const struct outcome *o)
{
	bool cache, debt, touch, wrap = false, rounding, forged = false, reshape = false, sliding;

	enum model_debt chosen = variant.debt;

	variant.flush_hot = true;
	cache = agrees_with(s, keep, last);
	variant.flush_hot = false;
	sliding = cache && o->meter == SLUICE_METER_SLIDING_WINDOW;
	if (o->reshaped) {
		variant.forget_on_reshape = true;
		reshape = agrees_with(s, keep, last);
		variant.forget_on_reshape = false;
	}
	variant.debt = MODEL_DEBT_KEPT;
	debt = chosen != MODEL_DEBT_KEPT && agrees_with(s, keep, last);
	variant.debt = MODEL_DEBT_CAP_AT_TOUCH;
	touch = chosen != MODEL_DEBT_CAP_AT_TOUCH && agrees_with(s, keep, last);
	variant.debt = chosen;
	variant.stored_limits = true;
	rounding = agrees_with(s, keep, last);
	variant.stored_limits = false;
	if (s->spoof && !variant.no_spoof) {
		variant.no_spoof = true;
		forged = agrees_with(s, keep, last);
		variant.no_spoof = false;
	}
	if (s->wrap_ids && !variant.no_wrap) {
		variant.no_wrap = true;
		wrap = agrees_with(s, keep, last);
		variant.no_wrap = false;
	}
	class_count[CLASS_CACHE] += cache && !sliding;
	class_count[CLASS_CACHE_SLIDING] += sliding;
	class_count[CLASS_KEPT] += debt;
	class_count[CLASS_TOUCH] += touch;
	class_count[CLASS_RESHAPE] += reshape;
	class_count[CLASS_ROUNDING] += rounding;
	class_count[CLASS_WRAP] += wrap;
	class_count[CLASS_FORGED] += forged;
	class_count[CLASS_NONE] +=
		!cache && !debt && !touch && !wrap && !rounding && !forged && !reshape;
	printf("     diagnosis:%s%s%s%s%s%s%s%s%s\n",
	       cache ? " agrees with the over-limit cache emptied before every packet (the cache "
		       "changed the verdict);"
		     : "",
	       sliding ? " the packet's rule counts a sliding window (the cache's moment for "
			 "it was too late);"
		       : "",
	       reshape ? " agrees when both sides forget every source once the default or a "
			 "rule changes algorithm, window, unit or warm-up (it kept its sources' "
			 "slots, read under another meter);"
		       : "",
	       debt ? " agrees when the model keeps debt beyond the new burst (a policy change "
		      "kept the old debt);"
		    : "",
	       wrap ? " agrees with rule ids far from wrapping (a wrapped id met a live or "
		      "recent one);"
		    : "",
	       touch ? " agrees when debt is capped at the next packet rather than at the "
		       "change (--debt touch);"
		     : "",
	       rounding ? " agrees when byte buckets hold the limit rounded down (a frame the "
			  "size of the burst is refused);"
			: "",
	       forged ? " agrees without the forged floods (they reset a limited aggregate);" : "",
	       !cache && !debt && !touch && !wrap && !rounding && !forged && !reshape
		       ? " none of the known variants explains it"
		       : "");
}

static void report_failure(const struct options *opt, const struct sequence *s,
			   const struct outcome *o)
{
	static bool keep[MAX_EVENTS];
	struct outcome again;
	int last, j, k;

	check(false, "model: datapath agrees with the model", "seed %llu sequence %d event %d: %s",
	      (unsigned long long)s->seed, s->index, o->failed_at, o->what);
	printf("     reproduce: build/test-model --seed %llu --only %d --verbose\n",
	       (unsigned long long)s->seed, s->index);
	last = shrink(s, o->failed_at, keep, opt->shrink_s);
	run_sequence(s, keep, last + 1, &again);
	for (k = j = 0; j <= last; j++)
		k += keep[j];
	printf("     shrunk to %d events, disagreeing at #%d: %s\n", k, again.failed_at,
	       again.failed_at >= 0 ? again.what : "(no longer fails)");
	print_sequence(s, keep, last);
	diagnose(s, keep, last, again.failed_at >= 0 ? &again : o);
	if (opt->verbose) {
		printf("     the whole prefix:\n");
		print_sequence(s, NULL, o->failed_at);
	}
}

int main(int argc, char **argv)
{
	struct options opt;
	struct sequence s;
	struct outcome o;
	uint64_t packets = 0;
	int seqs = 0, failed = 0, k, kept = 0, reshaped = 0;
	struct timespec t0, t1;
	double elapsed;

	if (parse_options(argc, argv, &opt))
		return 2;
	if (geteuid() != 0) {
		fprintf(stderr, "test-model: must run as root (BPF_PROG_TEST_RUN)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("     seed %llu (reproduce: build/test-model --seed %llu), debt capped at %s\n",
	       (unsigned long long)opt.seed, (unsigned long long)opt.seed,
	       debt_names[variant.debt]);
	model_unit_checks();
	if (fixture_open_conf(&the_fixture, "default rate 10/s\n", MAX_SOURCES, START_NS)) {
		check(false, "model: load the test-clock datapath", "cannot load");
		return harness_finish();
	}
	check_jumbo_frames(&the_fixture);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (k = opt.only >= 0 ? opt.only : 0;; k++) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (opt.only >= 0   ? k > opt.only
		    : opt.sequences ? seqs >= opt.sequences
				    : elapsed >= opt.seconds)
			break;
		sequence_generate(&s, opt.seed, k);
		run_sequence(&s, NULL, s.n, &o);
		seqs++;
		packets += o.packets;
		kept += o.rules_kept;
		reshaped += o.reshaped;
		if (o.failed_at >= 0 && ++failed > MAX_DETAILED) {
			check(false, "model: datapath agrees with the model",
			      "seed %llu sequence %d event %d: %s (not shrunk: reproduce with "
			      "--seed %llu --only %d)",
			      (unsigned long long)s.seed, s.index, o.failed_at, o.what,
			      (unsigned long long)s.seed, s.index);
			if (opt.classify)
				diagnose(&s, NULL, o.failed_at, &o);
		} else if (o.failed_at >= 0) {
			report_failure(&opt, &s, &o);
		} else if (opt.verbose) {
			printf("     sequence %d: %d events agree\n", k, s.n);
		}
		sequence_free(&s);
	}
	fixture_close(&the_fixture);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	elapsed = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("     %d sequences, %llu packets in %.1f s, seed %llu\n", seqs,
	       (unsigned long long)packets, elapsed, (unsigned long long)opt.seed);
	printf("     changes: %d rules kept their buckets under new limits, %d limiters started "
	       "afresh\n",
	       kept, reshaped);
	if (failed) {
		printf("     %d sequences disagree; explained by:", failed);
		for (k = 0; k < CLASSES; k++)
			printf(" %s %lu%s", class_names[k], class_count[k],
			       k + 1 < CLASSES ? "," : "\n");
	}
	if (!failed)
		check(seqs > 0, "model: every packet's verdict agrees with the model",
		      "no sequence ran");
	return harness_finish();
}
