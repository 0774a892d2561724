// SPDX-License-Identifier: GPL-2.0
/*
 * Every match path of a policy through BPF_PROG_TEST_RUN, under a frozen
 * test clock: allow, deny, the most specific rule, protocol and port
 * classes, SYN, fragments, IPv6 extension headers, byte rates, marking
 * (with the rewritten bytes and checksums), and rule ids across apply.
 */
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "text/conf.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "reads/sources.h"
#include "pins/state.h"
#include "maps/policy_maps.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)

#define UDP4(addr, port)                                               \
	{                                                              \
		.family = 4, .src = addr, .payload = 18, .dport = port \
	}

static void case_lists(void)
{
	struct frame_spec allowed = UDP4("10.9.1.1", 0), denied = UDP4("10.8.1.1", 0),
			  both = UDP4("10.7.1.1", 0);
	struct fixture fx;
	int a, d, b;

	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 1\nallow 10.9.0.0/16\ndeny 10.8.0.0/16\n"
			      "allow 10.7.1.0/24\ndeny 10.7.0.0/16\n",
			      1024, NOW_NS)) {
		check(false, "allow and deny lists", "cannot load");
		return;
	}
	a = fixture_passes(&fx, &allowed, 5);
	d = fixture_passes(&fx, &denied, 5);
	b = fixture_passes(&fx, &both, 5);
	check(a == 5 && fixture_counter(&fx, SLUICE_CNT_ALLOWED) == 5 &&
		      fixture_bucket_count(&fx) == 0,
	      "allow: never limited, no bucket", "passed %d, buckets %d", a,
	      fixture_bucket_count(&fx));
	check(d == 0 && fixture_counter(&fx, SLUICE_CNT_DENIED) == 10,
	      "deny: always dropped, counted", "passed %d denied %llu", d,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_DENIED));
	check(b == 0, "a source on both lists is denied", "passed %d", b);
	fixture_close(&fx);
}

/* Makes the deny entry spelled cidr expire at expires_ns (test clock); false if it is not there. */
static bool deny_expires(struct policy_doc *doc, const char *cidr, uint64_t expires_ns)
{
	char text[64];
	size_t i;

	for (i = 0; i < doc->deny.count; i++) {
		format_cidr(text, sizeof(text), &doc->deny.items[i].cidr);
		if (!strcmp(text, cidr)) {
			doc->deny.items[i].expires_ns = expires_ns;
			return true;
		}
	}
	return false;
}

/* Timed entries: the deny list of case_timed_deny, and when each entry expires. */
static const char timed_conf[] =
	"default rate 1000/s burst 1000\n"
	"deny 10.6.1.0/24\n"				  /* alone, timed */
	"deny 10.8.0.0/16\ndeny 10.8.1.1/32\n"		  /* a timed /32 in a live /16 */
	"deny 10.5.0.0/16\ndeny 10.5.1.1/32\n"		  /* a timed /32 in a longer-timed /16 */
	"deny 10.4.0.0/16\ndeny 10.4.1.1/32\n"		  /* a longer-timed /32 in a timed /16 */
	"deny 10.3.0.0/16\n"				  /* permanent */
	"deny 2001:db8:1::/48\n"			  /* IPv6 alone, timed */
	"deny 2001:db8:2::/48\ndeny 2001:db8:2:1::/64\n"; /* timed /64 in a live /48 */

static const struct {
	const char *cidr;
	uint64_t after_s; /* expires this long after NOW_NS */
} timed_entries[] = {
	{ "10.6.1.0/24", 10 },	   { "10.8.1.1/32", 5 },       { "10.5.0.0/16", 30 },
	{ "10.5.1.1/32", 5 },	   { "10.4.0.0/16", 5 },       { "10.4.1.1/32", 30 },
	{ "2001:db8:1::/48", 10 }, { "2001:db8:2:1::/64", 5 },
};

static int timed_open(struct fixture *fx)
{
	struct policy_doc doc;
	size_t i;
	int err;

	err = doc_from_conf_text(timed_conf, &doc);
	for (i = 0; !err && i < sizeof(timed_entries) / sizeof(timed_entries[0]); i++)
		if (!deny_expires(&doc, timed_entries[i].cidr,
				  NOW_NS + timed_entries[i].after_s * NSEC_PER_SEC))
			err = -ENOENT;
	if (!err)
		err = fixture_open_policy(fx, &doc, 1024);
	doc_free(&doc);
	if (!err)
		fixture_set_clock(fx, NOW_NS);
	return err;
}

/* Does one frame from src pass at NOW_NS + at_ns? */
static bool passes_at(struct fixture *fx, const char *src, uint64_t at_ns)
{
	struct frame_spec spec = {
		.family = strchr(src, ':') ? 6 : 4, .src = src, .payload = 18, .dport = 53
	};

	fixture_set_clock(fx, NOW_NS + at_ns);
	return fixture_passes(fx, &spec, 1) == 1;
}

#define S(n) ((uint64_t)(n)*NSEC_PER_SEC)

/*
 * One frame of the timed list's: its source, when it comes, and whether it
 * must pass. The clock only goes forward for sources that get buckets.
 */
static const struct {
	const char *what, *src;
	uint64_t at_ns;
	bool pass;
} timed_probes[] = {
	{ "outside every entry: passed", "10.7.0.1", 0, true },
	{ "timed /24: denied before its expiry", "10.6.1.9", 0, false },
	{ "timed /24: denied 1 ns before its expiry", "10.6.1.9", S(10) - 1, false },
	{ "timed /24: passed at its expiry", "10.6.1.9", S(10), true },
	{ "timed /24: passed long after", "10.6.1.9", S(100), true },
	{ "timed /32 in a live /16: denied before", "10.8.1.1", 0, false },
	{ "timed /32 in a live /16: denied by the /16 after", "10.8.1.1", S(6), false },
	{ "timed /32 in a live /16: denied a day after", "10.8.1.1", S(86400), false },
	{ "expired /32 in a timed /16: denied by the /16", "10.5.1.1", S(6), false },
	{ "the timed /16 around it: denied", "10.5.9.9", S(6), false },
	{ "expired /32 in an expired /16: passed", "10.5.1.1", S(30), true },
	{ "a /32 outliving its /16: denied", "10.4.1.1", S(6), false },
	{ "its expired /16: passed", "10.4.9.9", S(6), true },
	{ "the /32 outliving its /16: passed once expired", "10.4.1.1", S(30), true },
	{ "permanent: denied", "10.3.0.1", 0, false },
	{ "permanent: denied ten years on", "10.3.0.1", S(3650ULL * 86400), false },
	{ "IPv6 timed /48: denied before", "2001:db8:1::1", S(9), false },
	{ "IPv6 timed /48: passed at its expiry", "2001:db8:1::1", S(10), true },
	{ "IPv6 expired /64 in a live /48: denied", "2001:db8:2:1::1", S(6), false },
	{ "IPv6 the live /48 around it: denied", "2001:db8:2:7::1", S(6), false },
};

static void case_timed_deny(void)
{
	struct fixture fx;
	size_t i;
	bool passed;

	if (timed_open(&fx)) {
		check(false, "timed deny entries", "cannot load");
		return;
	}
	for (i = 0; i < sizeof(timed_probes) / sizeof(timed_probes[0]); i++) {
		passed = passes_at(&fx, timed_probes[i].src, timed_probes[i].at_ns);
		check(passed == timed_probes[i].pass, timed_probes[i].what, "%s at +%.9f s: %s",
		      timed_probes[i].src, (double)timed_probes[i].at_ns / NSEC_PER_SEC,
		      passed ? "passed" : "dropped");
	}
	fixture_close(&fx);
}

static void case_most_specific(void)
{
	struct frame_spec in16 = UDP4("10.1.2.3", 0), in8 = UDP4("10.2.0.1", 0),
			  outside = UDP4("11.0.0.1", 0);
	struct fixture fx;
	int a, b, c;

	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 5\nrule 10.0.0.0/8 rate 1/s burst 1\n"
			      "rule 10.1.0.0/16 rate 1/s burst 3\n",
			      1024, NOW_NS)) {
		check(false, "most specific rule wins", "cannot load");
		return;
	}
	a = fixture_passes(&fx, &in16, 10);
	b = fixture_passes(&fx, &in8, 10);
	c = fixture_passes(&fx, &outside, 10);
	check(a == 3 && b == 1 && c == 5, "most specific CIDR wins (/16 over /8 over default)",
	      "/16 %d (want 3), /8 %d (want 1), default %d (want 5)", a, b, c);
	fixture_close(&fx);
}

static void case_classes(void)
{
	struct frame_spec to9000 = UDP4("10.3.0.1", 9000), to53 = UDP4("10.3.0.2", 53),
			  tcp9000 = { .family = 4,
				      .src = "10.3.0.3",
				      .l4 = IPPROTO_TCP,
				      .dport = 9000,
				      .tcp_flags = TCP_FLAG_ACK },
			  syn = { .family = 4,
				  .src = "10.3.0.4",
				  .l4 = IPPROTO_TCP,
				  .dport = 22,
				  .tcp_flags = TCP_FLAG_SYN },
			  synack = { .family = 4,
				     .src = "10.3.0.4",
				     .l4 = IPPROTO_TCP,
				     .dport = 22,
				     .tcp_flags = TCP_FLAG_SYN | TCP_FLAG_ACK };
	struct fixture fx;
	int a, b, c, d, e;

	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 5\n"
			      "rule 0.0.0.0/0 rate 1/s burst 2 proto udp dport 9000-9001\n"
			      "rule 0.0.0.0/0 rate 5/m burst 1 proto tcp dport 22 syn\n",
			      1024, NOW_NS)) {
		check(false, "protocol and port classes", "cannot load");
		return;
	}
	a = fixture_passes(&fx, &to9000, 10);
	b = fixture_passes(&fx, &to53, 10);
	c = fixture_passes(&fx, &tcp9000, 10);
	check(a == 2 && b == 5 && c == 5, "udp dport 9000-9001 class; other ports and TCP default",
	      "udp 9000 %d (want 2), udp 53 %d (want 5), tcp 9000 %d (want 5)", a, b, c);
	d = fixture_passes(&fx, &syn, 10);
	e = fixture_passes(&fx, &synack, 10);
	check(d == 1 && e == 5, "SYN class: SYN limited, SYN+ACK from the same source is not",
	      "syn %d (want 1), syn-ack %d (want 5)", d, e);
	fixture_close(&fx);
}

static void later_fragment(struct frame *f, const struct frame_spec *spec)
{
	((struct iphdr *)(f->data + frame_l3_offset(spec)))->frag_off = htons(185);
}

static void first_fragment(struct frame *f, const struct frame_spec *spec)
{
	((struct iphdr *)(f->data + frame_l3_offset(spec)))->frag_off = htons(0x2000);
}

static int fragment_passes(struct fixture *fx, const struct frame_spec *spec,
			   void (*mutate)(struct frame *, const struct frame_spec *), int n)
{
	struct frame f;
	int i, passed = 0;

	frame_build(&f, spec);
	mutate(&f, spec);
	for (i = 0; i < n; i++)
		passed += fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
	return passed;
}

static void case_fragments(void)
{
	struct frame_spec later = UDP4("10.5.1.1", 9000), first = UDP4("10.6.1.2", 9000),
			  later_outside = UDP4("10.6.1.3", 9000);
	struct fixture fx;
	int a, b, c;

	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 5\n"
			      "rule 0.0.0.0/0 rate 1/s burst 2 proto udp dport 9000\n"
			      "rule 10.5.0.0/16 rate 1/s burst 4\n",
			      1024, NOW_NS)) {
		check(false, "fragments", "cannot load");
		return;
	}
	a = fragment_passes(&fx, &later, later_fragment, 10);
	b = fragment_passes(&fx, &first, first_fragment, 10);
	c = fragment_passes(&fx, &later_outside, later_fragment, 10);
	check(a == 4 && b == 2 && c == 5,
	      "later fragments fall to class-less rules; the first keeps its class",
	      "later in /16 %d (want 4), first %d (want 2), later elsewhere %d (want 5)", a, b, c);
	fixture_close(&fx);
}

static void case_ipv6(void)
{
	struct frame_spec two = { .family = 6,
				  .src = "2001:db8:5::1",
				  .payload = 18,
				  .dport = 9000,
				  .v6_hopopts = 2 },
			  seven = { .family = 6,
				    .src = "2001:db8:6::1",
				    .payload = 18,
				    .dport = 9000,
				    .v6_hopopts = 7 },
			  in48 = {
				  .family = 6, .src = "2001:db8:7:1::1", .payload = 18, .dport = 53
			  };
	struct fixture fx;
	int a, b, c;

	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 5\n"
			      "rule ::/0 rate 1/s burst 2 proto udp dport 9000\n"
			      "rule 2001:db8:7::/48 rate 1/s burst 3\n",
			      1024, NOW_NS)) {
		check(false, "IPv6 rules", "cannot load");
		return;
	}
	a = fixture_passes(&fx, &two, 10);
	b = fixture_passes(&fx, &seven, 10);
	c = fixture_passes(&fx, &in48, 10);
	check(a == 2 && b == 5 && c == 3,
	      "IPv6: class found past 2 extension headers; past 6 it is not; /48 rule",
	      "2 ext %d (want 2), 7 ext %d (want 5), /48 %d (want 3)", a, b, c);
	fixture_close(&fx);
}

static void case_byte_rate(void)
{
	struct frame_spec small = UDP4("10.6.0.1", 0), big = UDP4("10.6.0.2", 0);
	struct fixture fx;
	int a, b, c;

	big.payload = 558; /* a 600-byte frame */
	if (fixture_open_conf(&fx, "default rate 8kbit/s burst 1000B\n", 1024, NOW_NS)) {
		check(false, "byte rate", "cannot load");
		return;
	}
	a = fixture_passes(&fx, &small, 30); /* 60-byte frames: 16 fit in 1000 bytes */
	b = fixture_passes(&fx, &big, 5);
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC / 2); /* 500 bytes more for each */
	c = fixture_passes(&fx, &small, 30);
	check(a == 16 && b == 1 && c == 9, "byte rate: a frame costs its length",
	      "60-byte frames %d (want 16), 600-byte %d (want 1), after 0.5 s %d (want 9)", a, b,
	      c);
	fixture_close(&fx);
}

/* Runs the frame twice and returns the second run's verdict and bytes. */
static int second_run(struct fixture *fx, const struct frame_spec *spec, struct frame *out)
{
	struct frame f;

	frame_build(&f, spec);
	fixture_run(fx, f.data, f.len, 1);
	out->len = f.len;
	return fixture_run_out(fx, f.data, f.len, out->data, sizeof(out->data));
}

static bool ipv4_checksum_ok(const struct frame *f, const struct frame_spec *spec)
{
	return ip_checksum(f->data + frame_l3_offset(spec), sizeof(struct iphdr)) == 0;
}

static void case_mark(void)
{
	struct frame_spec dscp4 = UDP4("10.4.0.1", 0), ect4 = UDP4("10.4.1.1", 0),
			  plain4 = UDP4("10.4.1.2", 0),
			  dscp6 = {
				  .family = 6, .src = "2001:db8:4::1", .payload = 18, .tos = 0x01
			  };
	const struct iphdr *iph;
	const struct ipv6hdr *ip6h;
	struct fixture fx;
	struct frame out;
	int v;

	dscp4.tos = 0x01; /* ECT(1): kept under a DSCP rewrite */
	ect4.tos = 0x02;  /* ECT(0) */
	if (fixture_open_conf(&fx,
			      "default rate 1/s burst 1\n"
			      "rule 10.4.0.0/24 rate 1/s burst 1 action mark dscp 46\n"
			      "rule 10.4.1.0/24 rate 1/s burst 1 action mark ecn\n"
			      "rule 2001:db8:4::/48 rate 1/s burst 1 action mark dscp 10\n",
			      1024, NOW_NS)) {
		check(false, "mark", "cannot load");
		return;
	}
	v = second_run(&fx, &dscp4, &out);
	iph = (const struct iphdr *)(out.data + frame_l3_offset(&dscp4));
	check(v == XDP_PASS && iph->tos == (46 << 2 | 0x01) && ipv4_checksum_ok(&out, &dscp4),
	      "mark dscp 46: TOS rewritten, ECN kept, IPv4 checksum valid",
	      "verdict %d tos 0x%02x checksum %s", v, iph->tos,
	      ipv4_checksum_ok(&out, &dscp4) ? "ok" : "bad");

	v = second_run(&fx, &ect4, &out);
	iph = (const struct iphdr *)(out.data + frame_l3_offset(&ect4));
	check(v == XDP_PASS && iph->tos == 0x03 && ipv4_checksum_ok(&out, &ect4),
	      "mark ecn: ECT(0) becomes CE, IPv4 checksum valid", "verdict %d tos 0x%02x", v,
	      iph->tos);
	v = second_run(&fx, &plain4, &out);
	check(v == XDP_DROP, "mark ecn: a Not-ECT packet is dropped", "verdict %d", v);

	v = second_run(&fx, &dscp6, &out);
	ip6h = (const struct ipv6hdr *)(out.data + frame_l3_offset(&dscp6));
	check(v == XDP_PASS &&
		      ((ip6h->priority << 4) | (ip6h->flow_lbl[0] >> 4)) == (10 << 2 | 0x01),
	      "mark dscp 10 on IPv6: traffic class rewritten, ECN kept", "verdict %d", v);
	check(fixture_counter(&fx, SLUICE_CNT_MARKED) == 3 &&
		      fixture_counter(&fx, SLUICE_CNT_DROPPED) == 1,
	      "marked and dropped counted", "marked %llu dropped %llu",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_MARKED),
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_DROPPED));
	fixture_close(&fx);
}

struct policy_search {
	uint32_t addr;
	int other, found;
};

static int policy_of(const struct sluice_key *key, const struct sluice_bucket *b, uint64_t read_ns,
		     void *ctx)
{
	struct policy_search *q = ctx;

	(void)b;
	(void)read_ns;
	if (key->addr[0] == q->addr && key->policy != q->other && q->found < 0)
		q->found = key->policy;
	return 0;
}

/* The policy id of a bucket the address has, other than `other` (-1: any). */
static int bucket_policy(struct fixture *fx, const char *addr, int other)
{
	struct policy_search q = { .other = other, .found = -1 };
	struct sluice_config cfg;

	inet_pton(AF_INET, addr, &q.addr);
	if (config_read(&fx->st.maps, &cfg) ||
	    table_walk(fx->st.maps.buckets, cfg.table_seed, policy_of, &q))
		return -1;
	return q.found;
}

/* A source drained before an apply, and what it passes after. */
struct kept_case {
	const char *addr, *what;
	bool kept; /* its limiter keeps its id: no bucket under another */
	int now;   /* passes of 5 at the change's moment; -1: none sent */
	int later; /* passes of 5 half a second on, untouched meanwhile; -1: none sent */
	int id;	   /* its bucket's id before the apply */
};

/* Sends 5 at each source whose case passes want sent at this moment. */
static void kept_sends(struct fixture *fx, struct kept_case *c, int n, bool later, int *passed)
{
	struct frame_spec spec;
	int i, want;

	for (i = 0; i < n; i++) {
		want = later ? c[i].later : c[i].now;
		spec = (struct frame_spec)UDP4(c[i].addr, 0);
		if (want >= 0)
			passed[i] = fixture_passes(fx, &spec, 5);
	}
}

/*
 * apply keeps a limiter's id while its meter keeps its shape, whatever
 * else changed, and caps the debt of every one it changed in one walk: a
 * bucket untouched since reads the new burst half a second on (one pass
 * per new interval of 2/s, where the old debt was 2 to 5 s deep). A fixed
 * window's count (2) meets the new limit (3). A rule from GCRA to a fixed
 * window, or to a window of another length, gets a new id and starts
 * afresh.
 */
static void case_rule_ids(void)
{
	const char *v1 = "default rate 1/s burst 5\nrule 10.0.0.0/8 rate 1/s burst 2\n"
			 "rule 11.0.0.0/8 rate 1/s burst 2\nrule 12.0.0.0/8 rate 1/s burst 2\n"
			 "rule 13.0.0.0/8 rate 300/m burst 2\n"
			 "rule 14.0.0.0/8 rate 2/s algorithm fixed-window\n"
			 "rule 15.0.0.0/8 rate 2/s algorithm fixed-window\n";
	const char *v2 = "default rate 2/s burst 2\nrule 10.0.0.0/8 rate 1/s burst 2\n"
			 "rule 11.0.0.0/8 rate 2/s burst 2\n"
			 "rule 12.0.0.0/8 rate 3/s algorithm fixed-window\n"
			 "rule 13.0.0.0/8 rate 5/s burst 2\n"
			 "rule 14.0.0.0/8 rate 3/s algorithm fixed-window\n"
			 "rule 15.0.0.0/8 rate 2/s algorithm fixed-window window 500ms\n";
	struct kept_case c[] = {
		{ "10.0.0.9", "apply: an unchanged rule keeps its buckets", true, 0, -1 },
		{ "11.0.0.9",
		  "apply: a rule at another rate keeps its buckets, debt capped at the change",
		  true, -1, 1 },
		{ "12.0.0.9",
		  "apply: a rule from gcra to a fixed window gets a new id, starts afresh", false,
		  3, -1 },
		{ "13.0.0.9", "apply: 300/m written as 5/s keeps the rule's buckets", true, 0, -1 },
		{ "14.0.0.9",
		  "apply: a fixed window at another rate keeps its count, met by the new limit",
		  true, 1, -1 },
		{ "15.0.0.9",
		  "apply: a fixed window of another length gets a new id, starts afresh", false, 1,
		  -1 },
		{ "20.0.0.9",
		  "apply: the default changed with rules, its debt capped in the same walk", true,
		  -1, 1 },
	};
	int i, n = (int)(sizeof(c) / sizeof(c[0])), now[8] = { 0 }, later[8] = { 0 }, other;
	struct policy_doc doc;
	struct fixture fx;

	if (fixture_open_conf(&fx, v1, 1024, NOW_NS) || doc_from_conf_text(v2, &doc)) {
		check(false, "rule ids across apply", "cannot load");
		return;
	}
	for (i = 0; i < n; i++) {
		struct frame_spec spec = UDP4(c[i].addr, 0);

		fixture_passes(&fx, &spec, 7);
		c[i].id = bucket_policy(&fx, c[i].addr, -1);
	}
	fixture_store(&fx, &doc);
	doc_free(&doc);
	kept_sends(&fx, c, n, false, now);
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC / 2);
	kept_sends(&fx, c, n, true, later);
	for (i = 0; i < n; i++) {
		other = bucket_policy(&fx, c[i].addr, c[i].id);
		check(c[i].id >= 0 && (c[i].kept ? other < 0 : other > 0) &&
			      (c[i].now < 0 || now[i] == c[i].now) &&
			      (c[i].later < 0 || later[i] == c[i].later),
		      c[i].what,
		      "id %d, bucket under another %d (want %s), passed %d then %d (want %d, %d)",
		      c[i].id, other, c[i].kept ? "none" : "one", now[i], later[i], c[i].now,
		      c[i].later);
	}
	fixture_close(&fx);
}

/* Every rule id in either set of policy slots, as a bitmap; -1 when unreadable. */
static int ids_live(struct fixture *fx, uint8_t *used)
{
	struct sluice_policy p;
	__u32 i;

	memset(used, 0, 1 << 16);
	for (i = 0; i < 2 * SLUICE_MAX_POLICIES; i++) {
		if (bpf_map_lookup_elem(fx->st.maps.policies, &i, &p))
			return -1;
		if (i % SLUICE_MAX_POLICIES && p.family != SLUICE_FAMILY_ANY)
			used[p.id] = 1;
	}
	return 0;
}

/*
 * Gives a rule another rate and a meter of another shape (GCRA and a fixed
 * window in turn), compiled as doc_add_rule does: it gets a new id.
 */
static int rule_reshape(struct rule *r, uint64_t amount)
{
	bool window = r->settings.algorithm == SLUICE_METER_GCRA;
	const char *why;

	r->settings.rate.amount = amount;
	r->settings.algorithm = window ? SLUICE_METER_FIXED_WINDOW : SLUICE_METER_GCRA;
	/* A window takes no burst. */
	r->settings.burst.value = r->settings.initial.value = 0;
	return policy_build(&r->policy, &r->settings, &r->match, 0, &why);
}

/* Changes every rule's rate and meter shape through the user library: new ids. */
static int rule_rate_change(struct fixture *fx, uint64_t amount)
{
	struct policy_doc doc;
	int i, err = policy_load(&fx->st.maps, &doc, true);

	for (i = 0; !err && i < doc.n_rules; i++)
		err = rule_reshape(&doc.rules[i], amount);
	err = err ?: fixture_store(fx, &doc);
	doc_free(&doc);
	return err;
}

/*
 * A reshaped rule must not get the id of a retired rule whose source still
 * has a bucket in debt: it would inherit the debt. The source spends its
 * one-packet burst under 1/h (id 1); two changes retire id 1 from both sets
 * of slots (ids 2, then 3). The next id is then set to next_id, and
 * `changes` more bring the ids round to 1: past the wrap from 65535, or at
 * once from 1, as in maps whose next id fell behind their slots' ids (a
 * test harness left such maps once; ids.c then walks the tables as after
 * a wrap).
 */
static void case_rule_id_reuse_fresh(uint16_t next_id, int changes, const char *what)
{
	struct frame_spec src = UDP4("10.9.0.1", 0);
	struct sluice_config cfg;
	struct fixture fx;
	int first, in_debt, after, id, i, err;

	if (fixture_open_conf(&fx, "default rate 100/s\nrule 10.9.0.0/16 rate 1/h burst 1\n", 1024,
			      NOW_NS)) {
		check(false, what, "cannot load");
		return;
	}
	first = fixture_passes(&fx, &src, 1);
	in_debt = fixture_passes(&fx, &src, 1);
	err = rule_rate_change(&fx, 2) ?: rule_rate_change(&fx, 3);
	err = err ?: config_read(&fx.st.maps, &cfg);
	cfg.next_policy_id = next_id;
	err = err ?: config_write(&fx.st.maps, &cfg);
	for (i = 0; !err && i < changes; i++)
		err = rule_rate_change(&fx, 4 + (uint64_t)i);
	fixture_set_clock(&fx, NOW_NS + NSEC_PER_SEC);
	after = fixture_passes(&fx, &src, 1);
	id = bucket_policy(&fx, "10.9.0.1", 1);
	check(!err && first == 1 && !in_debt && after == 1 && id > 1, what,
	      "err %d, passed %d then %d, after the changes %d (new bucket's id %d)", err, first,
	      in_debt, after, id);
	fixture_close(&fx);
}

/* debt of a burst `from` long as the same share of one `to` long, rounded up (debt.c). */
static __u64 share_of(__u64 debt, __u64 from, __u64 to)
{
	return (__u64)(((unsigned __int128)debt * to + from - 1) / from);
}

/*
 * A change of the default's new-source and proven-source budgets keeps
 * each budget's debt as the share of its burst it was, as for a source's
 * own bucket: half of each burst owed at 1/m (30 s) is half of each at
 * 10/s (half a second), not the old budget's debt, which would refuse
 * every new or proven source for 30 s after the budget was raised.
 */
static void case_budgets_rebased(void)
{
	const __u64 now = (__u64)NOW_NS << SLUICE_TIME_SHIFT;
	struct sluice_admission adm = { 0 };
	struct policy_doc doc;
	struct sluice_policy was, p;
	struct fixture fx;
	__u64 admit_want, proven_want;
	__u32 id;
	int err;

	if (fixture_open_conf(&fx,
			      "default rate 10/s prove tcp new-sources 1/m proven-sources 1/m\n",
			      1024, NOW_NS)) {
		check(false, "a change rebases the budgets' debt", "cannot load");
		return;
	}
	err = policy_load(&fx.st.maps, &doc, false);
	was = doc.dflt_policy;
	id = doc.dflt_id;
	doc_free(&doc);
	adm.admit_tat = now + was.admit_limit / 2;
	adm.proven_tat = now + was.prove_limit / 2;
	err = err ?: bpf_map_update_elem(fx.st.maps.admission, &id, &adm, BPF_ANY) ? -errno : 0;
	err = err
		      ?: doc_from_conf_text(
				 "default rate 10/s prove tcp new-sources 10/s proven-sources 10/s\n",
				 &doc);
	err = err ?: fixture_store(&fx, &doc);
	doc_free(&doc);
	err = err ?: policy_load(&fx.st.maps, &doc, false);
	p = doc.dflt_policy;
	err = err ?: doc.dflt_id == id ? 0 : -ENOENT;
	doc_free(&doc);
	err = err ?: bpf_map_lookup_elem(fx.st.maps.admission, &id, &adm) ? -errno : 0;
	admit_want = share_of(was.admit_limit / 2, was.admit_limit, p.admit_limit);
	proven_want = share_of(was.prove_limit / 2, was.prove_limit, p.prove_limit);
	check(!err && p.prove_limit != was.prove_limit && adm.admit_tat == now + admit_want &&
		      adm.proven_tat == now + proven_want,
	      "a change rebases the new-source and proven-source budgets' debt to their share",
	      "err %d; limits %llu -> %llu, proven %llu -> %llu; debt now %llu (want %llu), "
	      "proven %llu (want %llu)",
	      err, (unsigned long long)was.admit_limit, (unsigned long long)p.admit_limit,
	      (unsigned long long)was.prove_limit, (unsigned long long)p.prove_limit,
	      (unsigned long long)(adm.admit_tat - now), (unsigned long long)admit_want,
	      (unsigned long long)(adm.proven_tat - now), (unsigned long long)proven_want);
	fixture_close(&fx);
}

/*
 * Rule ids across the 16-bit wrap: next_policy_id is driven to 65530 and
 * one rule is reshaped 20 times beside two rules that never change (ids 1
 * and 2). No new id may be 0 or equal an id either set still holds, and
 * each new id starts with fresh admission and overflow buckets.
 */
static void case_rule_id_wrap(void)
{
	const struct sluice_admission stale = { ~0ULL >> 2, ~0ULL >> 2 };
	struct sluice_admission adm;
	struct sluice_config cfg;
	struct policy_doc doc;
	struct fixture fx;
	uint8_t *before = malloc(1 << 16);
	int round, i, collisions = 0, stale_left = 0, wrapped = 0, err;
	uint16_t id;
	__u32 key;

	if (!before || fixture_open_conf(&fx,
					 "default rate 100/s\n"
					 "rule 10.1.0.0/16 rate 10/s\n"
					 "rule 10.2.0.0/16 rate 20/s\n"
					 "rule 10.3.0.0/16 rate 1/s\n",
					 64, 10 * NSEC_PER_SEC)) {
		check(false, "rule ids across the wrap", "cannot load");
		free(before);
		return;
	}
	err = config_read(&fx.st.maps, &cfg);
	cfg.next_policy_id = 65530;
	err = err ?: config_write(&fx.st.maps, &cfg);
	/* Every id's admission state looks used: a reused id must be reset. */
	for (key = 0; !err && key < 65536; key++)
		err = bpf_map_update_elem(fx.st.maps.admission, &key, &stale, BPF_ANY);
	for (round = 0; !err && round < 20; round++) {
		err = ids_live(&fx, before) ?: policy_load(&fx.st.maps, &doc, true);
		if (err)
			break;
		for (i = 0; !err && i < doc.n_rules; i++)
			if (doc.rules[i].match.cidr.addr[0] == htonl(0x0a030000))
				err = rule_reshape(&doc.rules[i], 2 + (uint64_t)round);
		err = err ?: fixture_store(&fx, &doc);
		doc_free(&doc);
		err = err ?: policy_load(&fx.st.maps, &doc, false);
		for (i = 0; !err && i < doc.n_rules; i++) {
			id = doc.rules[i].id;
			if (doc.rules[i].match.cidr.addr[0] != htonl(0x0a030000))
				continue;
			collisions += !id || before[id];
			wrapped += id < 100;
			key = id;
			if (bpf_map_lookup_elem(fx.st.maps.admission, &key, &adm) ||
			    adm.admit_tat || adm.overflow_tat)
				stale_left++;
		}
		doc_free(&doc);
	}
	check(!err && !collisions && !stale_left && wrapped > 0,
	      "rule ids across the wrap: never 0, never one either set holds, admission reset",
	      "err %d, %d collisions, %d with stale admission, %d after the wrap", err, collisions,
	      stale_left, wrapped);
	fixture_close(&fx);
	free(before);
}

void suite_policy(void)
{
	case_lists();
	case_timed_deny();
	case_most_specific();
	case_classes();
	case_fragments();
	case_ipv6();
	case_byte_rate();
	case_mark();
	case_rule_ids();
	case_rule_id_wrap();
	case_budgets_rebased();
	case_rule_id_reuse_fresh(
		65535, 2,
		"after the ids wrap, a changed rule skips a retired id whose bucket is in debt");
	case_rule_id_reuse_fresh(1, 1,
				 "with the next id behind the slots' ids, a changed rule skips a "
				 "retired id whose bucket is in debt");
}
