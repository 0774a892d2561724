// SPDX-License-Identifier: GPL-2.0
/*
 * Parsing and classification through BPF_PROG_TEST_RUN: crafted frames,
 * each a named case with its expected verdict, counter and bucket key.
 * Every limited case uses rate 1/s with burst 1 and a frozen test clock, so
 * the first copy of a frame passes and the second is over the limit.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <stdio.h>
#include <string.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

#define TPID_Q	0x8100
#define TPID_AD 0x88a8

struct parse_case {
	const char *name;
	struct frame_spec spec;
	/* Breaks the frame after building it (truncation, bad fields). */
	void (*mutate)(struct frame *f, const struct frame_spec *spec);
	/* SLUICE_CNT_PASSED: limited by source; otherwise passed and counted here. */
	enum sluice_counter expect;
	const char *key_addr; /* masked source the bucket is keyed on */
	/* Prefix length + 1, so that 0 keeps the default (/32, /64): use PFX(). */
	unsigned int ipv4_prefix1;
	unsigned int ipv6_prefix1;
};

#define PFX(n) ((n) + 1)

static struct iphdr *ipv4_of(struct frame *f, const struct frame_spec *spec)
{
	return (struct iphdr *)(f->data + frame_l3_offset(spec));
}

static void cut_to_ethernet(struct frame *f, const struct frame_spec *spec)
{
	(void)spec;
	f->len = ETH_HLEN;
}

static void cut_half_tag(struct frame *f, const struct frame_spec *spec)
{
	(void)spec;
	f->len = ETH_HLEN + 2;
}

static void cut_ipv4(struct frame *f, const struct frame_spec *spec)
{
	f->len = frame_l3_offset(spec) + sizeof(struct iphdr) - 1;
}

static void cut_ipv6(struct frame *f, const struct frame_spec *spec)
{
	f->len = frame_l3_offset(spec) + sizeof(struct ipv6hdr) - 1;
}

static void ihl_4(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->ihl = 4;
}

static void ihl_15_short(struct frame *f, const struct frame_spec *spec)
{
	/* 60 bytes of header claimed, fewer in the frame. */
	ipv4_of(f, spec)->ihl = 15;
	f->len = frame_l3_offset(spec) + 40;
}

static void tot_len_short(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->tot_len = htons(19);
}

static void version_6_in_ipv4(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->version = 6;
}

static void version_4_in_ipv6(struct frame *f, const struct frame_spec *spec)
{
	((struct ipv6hdr *)(f->data + frame_l3_offset(spec)))->version = 4;
}

static void first_fragment(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->frag_off = htons(0x2000); /* MF, offset 0 */
}

static void later_fragment(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->frag_off = htons(185); /* offset 1480, no L4 header */
}

static void ihl_set(struct frame *f, const struct frame_spec *spec, int ihl)
{
	ipv4_of(f, spec)->ihl = ihl;
}

static void ihl_0(struct frame *f, const struct frame_spec *spec)
{
	ihl_set(f, spec, 0);
}

static void ihl_1(struct frame *f, const struct frame_spec *spec)
{
	ihl_set(f, spec, 1);
}

static void ihl_2(struct frame *f, const struct frame_spec *spec)
{
	ihl_set(f, spec, 2);
}

static void ihl_3(struct frame *f, const struct frame_spec *spec)
{
	ihl_set(f, spec, 3);
}

/* 40 bytes of options, present: the payload is reused as options. */
static void ihl_15_present(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->ihl = 15;
}

static void tot_len_long(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->tot_len = htons(9000);
}

static void tot_len_header_only(struct frame *f, const struct frame_spec *spec)
{
	ipv4_of(f, spec)->tot_len = htons(20);
}

static void cut_after_ipv4(struct frame *f, const struct frame_spec *spec)
{
	f->len = frame_l3_offset(spec) + sizeof(struct iphdr) + 4; /* half a TCP/UDP header */
}

static void cut_first_ipv6_ext(struct frame *f, const struct frame_spec *spec)
{
	f->len = frame_l3_offset(spec) + sizeof(struct ipv6hdr) + 1;
}

static uint8_t *ipv6_ext(struct frame *f, const struct frame_spec *spec, int i)
{
	return f->data + frame_l3_offset(spec) + sizeof(struct ipv6hdr) + 8 * i;
}

/* Hop-by-hop, then routing, then destination options, then UDP. */
static void ipv6_mixed_chain(struct frame *f, const struct frame_spec *spec)
{
	ipv6_ext(f, spec, 0)[0] = IPPROTO_ROUTING;
	ipv6_ext(f, spec, 1)[0] = IPPROTO_DSTOPTS;
	ipv6_ext(f, spec, 2)[0] = IPPROTO_UDP;
}

static void ipv6_fragment(struct frame *f, const struct frame_spec *spec, uint16_t frag_off)
{
	uint8_t *ext = ipv6_ext(f, spec, 0);

	((struct ipv6hdr *)(f->data + frame_l3_offset(spec)))->nexthdr = IPPROTO_FRAGMENT;
	ext[0] = IPPROTO_UDP;
	ext[1] = 0;
	ext[2] = frag_off >> 8;
	ext[3] = frag_off & 0xff;
}

static void ipv6_first_fragment(struct frame *f, const struct frame_spec *spec)
{
	ipv6_fragment(f, spec, 0x0001); /* offset 0, more fragments */
}

static void ipv6_later_fragment(struct frame *f, const struct frame_spec *spec)
{
	ipv6_fragment(f, spec, 185 << 3);
}

#define V4(addr) .family = 4, .src = addr, .payload = 18
#define V6(addr) .family = 6, .src = addr, .payload = 18

/* clang-format off: one case per entry */
static const struct parse_case cases[] = {
	{ "ipv4 udp", { V4("10.0.0.1") }, NULL, SLUICE_CNT_PASSED, "10.0.0.1" },
	{ "ipv6 udp", { V6("2001:db8:1:2:3::4") }, NULL, SLUICE_CNT_PASSED, "2001:db8:1:2::" },
	{ "ipv4 one 802.1Q tag",
	  { { TPID_Q }, V4("10.0.0.2") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "10.0.0.2" },
	{ "ipv4 802.1ad + 802.1Q",
	  { { TPID_AD, TPID_Q }, V4("10.0.0.3") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "10.0.0.3" },
	{ "ipv6 802.1Q + 802.1Q",
	  { { TPID_Q, TPID_Q }, V6("2001:db8::9") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8::" },
	{ "ipv4 first fragment",
	  { V4("10.0.0.4") },
	  first_fragment,
	  SLUICE_CNT_PASSED,
	  "10.0.0.4" },
	{ "ipv4 later fragment",
	  { V4("10.0.0.5") },
	  later_fragment,
	  SLUICE_CNT_PASSED,
	  "10.0.0.5" },
	{ "ipv4 /24 prefix masks the host",
	  { V4("10.1.2.200") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "10.1.2.0",
	  PFX(24) },
	{ "ipv4 /0 prefix: one bucket for all",
	  { V4("203.0.113.7") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "0.0.0.0",
	  PFX(0) },
	{ "ipv6 /48 prefix",
	  { V6("2001:db8:abcd:12ff::1") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8:abcd::",
	  0,
	  PFX(48) },
	{ "ipv6 /128 prefix",
	  { V6("2001:db8::abcd") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8::abcd",
	  0,
	  PFX(128) },
	{ "ipv6 /33 prefix splits a word",
	  { V6("2001:db8:ffff::1") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8:8000::",
	  0,
	  PFX(33) },
	{ "arp is not ip", { .ethertype = ETH_P_ARP }, NULL, SLUICE_CNT_NON_IP },
	{ "three vlan tags are not parsed",
	  { { TPID_AD, TPID_Q, TPID_Q }, V4("10.0.0.6") },
	  NULL,
	  SLUICE_CNT_NON_IP },
	{ "truncated ethernet: vlan tag missing",
	  { { TPID_Q }, V4("10.0.0.7") },
	  cut_to_ethernet,
	  SLUICE_CNT_MALFORMED },
	{ "truncated ethernet: half a vlan tag",
	  { { TPID_Q }, V4("10.0.0.7") },
	  cut_half_tag,
	  SLUICE_CNT_MALFORMED },
	{ "truncated ipv4 header", { V4("10.0.0.8") }, cut_ipv4, SLUICE_CNT_MALFORMED },
	{ "truncated ipv6 header", { V6("2001:db8::8") }, cut_ipv6, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 4", { V4("10.0.0.9") }, ihl_4, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 15 past the frame", { V4("10.0.0.10") }, ihl_15_short, SLUICE_CNT_MALFORMED },
	{ "ipv4 tot_len below header", { V4("10.0.0.11") }, tot_len_short, SLUICE_CNT_MALFORMED },
	{ "ipv4 ethertype, version 6",
	  { V4("10.0.0.12") },
	  version_6_in_ipv4,
	  SLUICE_CNT_MALFORMED },
	{ "ipv6 ethertype, version 4",
	  { V6("2001:db8::12") },
	  version_4_in_ipv6,
	  SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 0", { V4("10.0.1.0") }, ihl_0, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 1", { V4("10.0.1.1") }, ihl_1, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 2", { V4("10.0.1.2") }, ihl_2, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 3", { V4("10.0.1.3") }, ihl_3, SLUICE_CNT_MALFORMED },
	{ "ipv4 ihl 15 with its options present",
	  { .family = 4, .src = "10.0.1.15", .payload = 60 },
	  ihl_15_present,
	  SLUICE_CNT_PASSED,
	  "10.0.1.15" },
	{ "ipv4 tot_len larger than the frame",
	  { V4("10.0.1.16") },
	  tot_len_long,
	  SLUICE_CNT_PASSED,
	  "10.0.1.16" },
	{ "ipv4 tot_len equal to the header",
	  { V4("10.0.1.17") },
	  tot_len_header_only,
	  SLUICE_CNT_PASSED,
	  "10.0.1.17" },
	{ "ipv4 truncated udp header: limited by address",
	  { V4("10.0.1.18") },
	  cut_after_ipv4,
	  SLUICE_CNT_PASSED,
	  "10.0.1.18" },
	{ "ipv4 truncated tcp header: limited by address",
	  { .family = 4, .src = "10.0.1.19", .l4 = IPPROTO_TCP },
	  cut_after_ipv4,
	  SLUICE_CNT_PASSED,
	  "10.0.1.19" },
	{ "ipv4 tcp later fragment",
	  { .family = 4, .src = "10.0.1.20", .l4 = IPPROTO_TCP },
	  later_fragment,
	  SLUICE_CNT_PASSED,
	  "10.0.1.20" },
	{ "ipv4 maximal frame (3000 bytes)",
	  { .family = 4, .src = "10.0.1.22", .payload = 2958 },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "10.0.1.22" },
	{ "ipv4 behind 802.1Q + 802.1ad",
	  { { TPID_Q, TPID_AD }, V4("10.0.1.23") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "10.0.1.23" },
	{ "ipv4 802.1Q tag, truncated ipv4",
	  { { TPID_Q }, V4("10.0.1.24") },
	  cut_ipv4,
	  SLUICE_CNT_MALFORMED },
	{ "ipv6 hop-by-hop, routing, dest options chain",
	  { .family = 6, .src = "2001:db8:1::1", .payload = 18, .v6_hopopts = 3 },
	  ipv6_mixed_chain,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 6 extension headers (the walk limit)",
	  { .family = 6, .src = "2001:db8:1::6", .payload = 18, .v6_hopopts = 6 },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 7 extension headers (past the limit)",
	  { .family = 6, .src = "2001:db8:1::7", .payload = 18, .v6_hopopts = 7 },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 truncated extension header",
	  { .family = 6, .src = "2001:db8:1::8", .payload = 18, .v6_hopopts = 1 },
	  cut_first_ipv6_ext,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 first fragment",
	  { .family = 6, .src = "2001:db8:1::9", .payload = 18, .v6_hopopts = 1 },
	  ipv6_first_fragment,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 later fragment",
	  { .family = 6, .src = "2001:db8:1::10", .payload = 18, .v6_hopopts = 1 },
	  ipv6_later_fragment,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv6 tcp",
	  { .family = 6, .src = "2001:db8:1::11", .l4 = IPPROTO_TCP },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "2001:db8:1::" },
	{ "ipv4-mapped ipv6 source is keyed as ipv6",
	  { V6("::ffff:10.0.0.1") },
	  NULL,
	  SLUICE_CNT_PASSED,
	  "::" },
};
/* clang-format on */

static void key_of(const struct parse_case *c, const struct settings *s, struct sluice_key *key)
{
	memset(key, 0, sizeof(*key));
	key->family = (uint8_t)c->spec.family;
	key->prefix_len = (uint8_t)(c->spec.family == 4 ? s->ipv4_prefix : s->ipv6_prefix);
	inet_pton(c->spec.family == 4 ? AF_INET : AF_INET6, c->key_addr, key->addr);
}

/* Limited: first copy passes and creates exactly the expected bucket, second drops. */
static void expect_limited(struct fixture *fx, const struct parse_case *c, const struct settings *s,
			   int first, int second)
{
	struct sluice_stats st = {};
	struct sluice_key key;

	key_of(c, s, &key);
	fixture_stats(fx, &st);
	check(first == XDP_PASS && second == XDP_DROP && fixture_bucket_count(fx) == 1 &&
		      fixture_has_bucket(fx, &key) && st.c[SLUICE_CNT_PASSED].packets == 1 &&
		      st.c[SLUICE_CNT_DROPPED].packets == 1 &&
		      st.c[SLUICE_CNT_NEW_SOURCE].packets == 1,
	      c->name, "verdicts %d,%d buckets %d key found %d passed %llu dropped %llu", first,
	      second, fixture_bucket_count(fx), fixture_has_bucket(fx, &key),
	      (unsigned long long)st.c[SLUICE_CNT_PASSED].packets,
	      (unsigned long long)st.c[SLUICE_CNT_DROPPED].packets);
}

/* Untouched: both copies pass, land in one counter, and create no bucket. */
static void expect_untouched(struct fixture *fx, const struct parse_case *c, int first, int second)
{
	struct sluice_stats st = {};

	fixture_stats(fx, &st);
	check(first == XDP_PASS && second == XDP_PASS && fixture_bucket_count(fx) == 0 &&
		      st.c[c->expect].packets == 2 && st.c[SLUICE_CNT_PASSED].packets == 0,
	      c->name, "verdicts %d,%d buckets %d counter %llu", first, second,
	      fixture_bucket_count(fx), (unsigned long long)st.c[c->expect].packets);
}

static void run_case(const struct parse_case *c)
{
	struct fixture fx;
	struct settings s;
	struct frame f;
	int first, second;

	settings_per_second(&s, 1, 1);
	if (c->ipv4_prefix1)
		s.ipv4_prefix = c->ipv4_prefix1 - 1;
	if (c->ipv6_prefix1)
		s.ipv6_prefix = c->ipv6_prefix1 - 1;
	if (frame_build(&f, &c->spec) || fixture_open_test_clock(&fx, &s, 64)) {
		check(false, c->name, "cannot build the frame or load the program");
		return;
	}
	if (c->mutate)
		c->mutate(&f, &c->spec);
	first = fixture_run(&fx, f.data, f.len, 1);
	second = fixture_run(&fx, f.data, f.len, 1);
	if (c->expect == SLUICE_CNT_PASSED)
		expect_limited(&fx, c, &s, first, second);
	else
		expect_untouched(&fx, c, first, second);
	fixture_close(&fx);
}

/* Two hosts of one /24 share a bucket; a third in another /24 does not. */
static void case_shared_prefix(void)
{
	struct frame_spec a = { V4("10.9.8.1") }, b = { V4("10.9.8.2") }, c = { V4("10.9.9.1") };
	struct frame fa, fb, fc;
	struct fixture fx;
	struct settings s;
	int ra, rb, rc;

	settings_per_second(&s, 1, 1);
	s.ipv4_prefix = 24;
	frame_build(&fa, &a);
	frame_build(&fb, &b);
	frame_build(&fc, &c);
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "ipv4 /24 shares one bucket", "cannot load");
		return;
	}
	ra = fixture_run(&fx, fa.data, fa.len, 1);
	rb = fixture_run(&fx, fb.data, fb.len, 1);
	rc = fixture_run(&fx, fc.data, fc.len, 1);
	check(ra == XDP_PASS && rb == XDP_DROP && rc == XDP_PASS && fixture_bucket_count(&fx) == 2,
	      "ipv4 /24 shares one bucket", "verdicts %d,%d,%d buckets %d", ra, rb, rc,
	      fixture_bucket_count(&fx));
	fixture_close(&fx);
}

/* Dry run passes the over-limit packet and counts it as would-drop. */
static void case_dry_run(void)
{
	struct frame_spec spec = { V4("10.0.0.20") };
	struct sluice_stats st = {};
	struct fixture fx;
	struct settings s;
	struct frame f;
	int first, second;

	settings_per_second(&s, 1, 1);
	s.action = SLUICE_ACTION_DRY_RUN;
	frame_build(&f, &spec);
	if (fixture_open_test_clock(&fx, &s, 64)) {
		check(false, "dry-run passes and counts", "cannot load");
		return;
	}
	first = fixture_run(&fx, f.data, f.len, 1);
	second = fixture_run(&fx, f.data, f.len, 1);
	fixture_stats(&fx, &st);
	check(first == XDP_PASS && second == XDP_PASS && st.c[SLUICE_CNT_WOULD_DROP].packets == 1 &&
		      st.c[SLUICE_CNT_WOULD_DROP].bytes == f.len &&
		      st.c[SLUICE_CNT_DROPPED].packets == 0,
	      "dry-run passes and counts", "verdicts %d,%d would_drop %llu", first, second,
	      (unsigned long long)st.c[SLUICE_CNT_WOULD_DROP].packets);
	fixture_close(&fx);
}

void suite_parse(void)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	case_shared_prefix();
	case_dry_run();
}
