// SPDX-License-Identifier: GPL-2.0
/*
 * The match classes (issue 36.1) through BPF_PROG_TEST_RUN, under a frozen
 * test clock: source port, frame length, TCP flags, ICMP and ICMPv6 type
 * and code, destination CIDR, each IPv4 and IPv6, tagged and not; what
 * non-first fragments match; that the over-limit cache never answers for
 * a rule a match class chose; and that the maps read back to the policy
 * written (show).
 */
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "text/conf.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "maps/config.h"
#include "maps/policy_maps.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)
/* A frame's length past its L4 header, for the length it should have. */
#define V4_UDP_OVERHEAD (14 + 20 + 8)
#define V6_UDP_OVERHEAD (14 + 40 + 8)

static bool open_conf(struct fixture *fx, const char *what, const char *text)
{
	if (fixture_open_conf(fx, text, 1024, NOW_NS)) {
		check(false, what, "cannot load");
		return false;
	}
	return true;
}

static void case_sport(void)
{
	struct fixture fx;
	int t, a, b, c, d;

	if (!open_conf(&fx, "--sport",
		       "default rate 1/s burst 5\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 proto udp sport 123\n"
		       "rule ::/0 rate 1/s burst 3 proto udp sport 53-54\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec ntp = { .family = 4, .payload = 18, .sport = 123 },
				  other = { .family = 4, .payload = 18, .sport = 124 },
				  dns6 = { .family = 6, .payload = 18, .sport = 54 },
				  other6 = { .family = 6, .payload = 18, .sport = 55 };

		ntp.src = t ? "10.1.0.1" : "10.1.0.2";
		other.src = t ? "10.1.0.3" : "10.1.0.4";
		dns6.src = t ? "2001:db8:1:1::1" : "2001:db8:1:2::1";
		other6.src = t ? "2001:db8:1:3::1" : "2001:db8:1:4::1";
		frame_spec_tag_both(&ntp, t);
		frame_spec_tag_both(&other, t);
		frame_spec_tag_both(&dns6, t);
		frame_spec_tag_both(&other6, t);
		a = fixture_passes(&fx, &ntp, 10);
		b = fixture_passes(&fx, &other, 10);
		c = fixture_passes(&fx, &dns6, 10);
		d = fixture_passes(&fx, &other6, 10);
		check(a == 2 && b == 5 && c == 3 && d == 5,
		      t ? "--sport, two VLAN tags: IPv4 123 and IPv6 53-54 limited, others not"
			: "--sport: IPv4 123 and IPv6 53-54 limited, other ports default",
		      "v4 123 %d (want 2), 124 %d (want 5), v6 54 %d (want 3), 55 %d (want 5)", a,
		      b, c, d);
	}
	fixture_close(&fx);
}

static void case_length(void)
{
	struct fixture fx;
	int t, a, b, c, d, e;

	if (!open_conf(&fx, "--length",
		       "default rate 1/s burst 5\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 proto udp sport 123 length 200-1500\n"
		       "rule ::/0 rate 1/s burst 3 length 300-300\n"))
		return;
	for (t = 0; t < 2; t++) {
		size_t tags = t ? 8 : 0;
		struct frame_spec big = { .family = 4, .sport = 123 },
				  edge = { .family = 4, .sport = 123 },
				  small = { .family = 4, .sport = 123 },
				  v6 = { .family = 6,
					 .l4 = IPPROTO_TCP,
					 .tcp_flags = TCP_FLAG_ACK },
				  v6_short = { .family = 6 };

		big.src = t ? "10.2.0.1" : "10.2.0.2";
		edge.src = t ? "10.2.0.3" : "10.2.0.4";
		small.src = t ? "10.2.0.5" : "10.2.0.6";
		v6.src = t ? "2001:db8:2:1::1" : "2001:db8:2:2::1";
		v6_short.src = t ? "2001:db8:2:3::1" : "2001:db8:2:4::1";
		frame_spec_tag_both(&big, t);
		frame_spec_tag_both(&edge, t);
		frame_spec_tag_both(&small, t);
		frame_spec_tag_both(&v6, t);
		frame_spec_tag_both(&v6_short, t);
		big.payload = 1000;
		edge.payload = 200 - V4_UDP_OVERHEAD - tags;  /* exactly 200 bytes */
		small.payload = 199 - V4_UDP_OVERHEAD - tags; /* 199 */
		v6.payload = 300 - (14 + 40 + 20) - tags;     /* exactly 300 */
		v6_short.payload = 299 - V6_UDP_OVERHEAD - tags;
		a = fixture_passes(&fx, &big, 10);
		b = fixture_passes(&fx, &edge, 10);
		c = fixture_passes(&fx, &small, 10);
		d = fixture_passes(&fx, &v6, 10);
		e = fixture_passes(&fx, &v6_short, 10);
		check(a == 2 && b == 2 && c == 5 && d == 3 && e == 5,
		      t ? "--length, two VLAN tags: the frame's bytes, tags included, both ends"
			: "--length: 200-1500 takes 1042 and 200 bytes, not 199; IPv6 300-300",
		      "1042 B %d (want 2), 200 B %d (want 2), 199 B %d (want 5), v6 300 B %d (want "
		      "3), 299 B %d (want 5)",
		      a, b, c, d, e);
	}
	fixture_close(&fx);
}

static void case_tcp_flags(void)
{
	struct fixture fx;
	int t, a, b, c, d, e;

	if (!open_conf(&fx, "--tcp-flags",
		       "default rate 1/s burst 5\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 proto tcp tcp-flags SYN,ACK/SYN\n"
		       "rule 0.0.0.0/0 rate 1/s burst 1 proto tcp tcp-flags ALL/FIN,PSH,URG\n"
		       "rule ::/0 rate 1/s burst 3 proto tcp tcp-flags RST/RST\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec syn = { .family = 4, .l4 = IPPROTO_TCP, .tcp_flags = 0x02 },
				  synack = { .family = 4, .l4 = IPPROTO_TCP, .tcp_flags = 0x12 },
				  xmas = { .family = 4, .l4 = IPPROTO_TCP, .tcp_flags = 0x29 },
				  rst6 = { .family = 6, .l4 = IPPROTO_TCP, .tcp_flags = 0x14 },
				  ack6 = { .family = 6, .l4 = IPPROTO_TCP, .tcp_flags = 0x10 };

		syn.src = t ? "10.3.0.1" : "10.3.0.2";
		synack.src = t ? "10.3.0.3" : "10.3.0.4";
		xmas.src = t ? "10.3.0.5" : "10.3.0.6";
		rst6.src = t ? "2001:db8:3:1::1" : "2001:db8:3:2::1";
		ack6.src = t ? "2001:db8:3:3::1" : "2001:db8:3:4::1";
		frame_spec_tag_both(&syn, t);
		frame_spec_tag_both(&synack, t);
		frame_spec_tag_both(&xmas, t);
		frame_spec_tag_both(&rst6, t);
		frame_spec_tag_both(&ack6, t);
		a = fixture_passes(&fx, &syn, 10);
		b = fixture_passes(&fx, &synack, 10);
		c = fixture_passes(&fx, &xmas, 10);
		d = fixture_passes(&fx, &rst6, 10);
		e = fixture_passes(&fx, &ack6, 10);
		check(a == 2 && b == 5 && c == 1 && d == 3 && e == 5,
		      t ? "--tcp-flags, two VLAN tags: SYN, Christmas tree, IPv6 RST"
			: "--tcp-flags: SYN,ACK/SYN takes SYN not SYN-ACK; ALL/FIN,PSH,URG; IPv6 "
			  "RST/RST takes RST-ACK, not ACK",
		      "syn %d (want 2), syn-ack %d (want 5), xmas %d (want 1), v6 rst-ack %d (want "
		      "3), v6 ack %d (want 5)",
		      a, b, c, d, e);
	}
	fixture_close(&fx);
}

static void case_icmp(void)
{
	struct fixture fx;
	int t, a, b, c, d, e, f;

	if (!open_conf(&fx, "--icmp-type",
		       "default rate 1/s burst 5\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 proto icmp icmp-type 8\n"
		       "rule 0.0.0.0/0 rate 1/s burst 1 proto icmp icmp-type 3/4\n"
		       "rule ::/0 rate 1/s burst 3 proto icmpv6 icmp-type 128\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec echo = { .family = 4, .l4 = IPPROTO_ICMP, .icmp_type = 8 },
				  reply = { .family = 4, .l4 = IPPROTO_ICMP, .icmp_type = 0 },
				  frag = { .family = 4,
					   .l4 = IPPROTO_ICMP,
					   .icmp_type = 3,
					   .icmp_code = 4 },
				  unreach = { .family = 4,
					      .l4 = IPPROTO_ICMP,
					      .icmp_type = 3,
					      .icmp_code = 1 },
				  echo6 = { .family = 6, .l4 = IPPROTO_ICMPV6, .icmp_type = 128 },
				  reply6 = { .family = 6, .l4 = IPPROTO_ICMPV6, .icmp_type = 129 };

		echo.src = t ? "10.4.0.1" : "10.4.0.2";
		reply.src = t ? "10.4.0.3" : "10.4.0.4";
		frag.src = t ? "10.4.0.5" : "10.4.0.6";
		unreach.src = t ? "10.4.0.7" : "10.4.0.8";
		echo6.src = t ? "2001:db8:4:1::1" : "2001:db8:4:2::1";
		reply6.src = t ? "2001:db8:4:3::1" : "2001:db8:4:4::1";
		frame_spec_tag_both(&echo, t);
		frame_spec_tag_both(&reply, t);
		frame_spec_tag_both(&frag, t);
		frame_spec_tag_both(&unreach, t);
		frame_spec_tag_both(&echo6, t);
		frame_spec_tag_both(&reply6, t);
		a = fixture_passes(&fx, &echo, 10);
		b = fixture_passes(&fx, &reply, 10);
		c = fixture_passes(&fx, &frag, 10);
		d = fixture_passes(&fx, &unreach, 10);
		e = fixture_passes(&fx, &echo6, 10);
		f = fixture_passes(&fx, &reply6, 10);
		check(a == 2 && b == 5 && c == 1 && d == 5 && e == 3 && f == 5,
		      t ? "--icmp-type, two VLAN tags: type, type/code, ICMPv6"
			: "--icmp-type: 8 not 0; 3/4 not 3/1; ICMPv6 128 not 129",
		      "echo %d (want 2), reply %d (want 5), 3/4 %d (want 1), 3/1 %d (want 5), v6 "
		      "128 %d (want 3), 129 %d (want 5)",
		      a, b, c, d, e, f);
	}
	fixture_close(&fx);
}

static void case_dst(void)
{
	struct fixture fx;
	int t, a, b, c, d;

	if (!open_conf(&fx, "--dst",
		       "default rate 1/s burst 5\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 dst 198.51.100.0/24\n"
		       "rule ::/0 rate 1/s burst 3 proto udp dst 2001:db8:ff::/48\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec in = { .family = 4, .payload = 18, .dst = "198.51.100.7" },
				  out = { .family = 4, .payload = 18, .dst = "198.51.101.7" },
				  in6 = { .family = 6, .payload = 18, .dst = "2001:db8:ff:9::1" },
				  out6 = { .family = 6, .payload = 18, .dst = "2001:db8:fe::1" };

		in.src = t ? "10.5.0.1" : "10.5.0.2";
		out.src = t ? "10.5.0.3" : "10.5.0.4";
		in6.src = t ? "2001:db8:5:1::1" : "2001:db8:5:2::1";
		out6.src = t ? "2001:db8:5:3::1" : "2001:db8:5:4::1";
		frame_spec_tag_both(&in, t);
		frame_spec_tag_both(&out, t);
		frame_spec_tag_both(&in6, t);
		frame_spec_tag_both(&out6, t);
		a = fixture_passes(&fx, &in, 10);
		b = fixture_passes(&fx, &out, 10);
		c = fixture_passes(&fx, &in6, 10);
		d = fixture_passes(&fx, &out6, 10);
		check(a == 2 && b == 5 && c == 3 && d == 5,
		      t ? "--dst, two VLAN tags: IPv4 /24 and IPv6 /48"
			: "--dst: IPv4 /24 and IPv6 /48 limited, other destinations default",
		      "v4 in %d (want 2), out %d (want 5), v6 in %d (want 3), out %d (want 5)", a,
		      b, c, d);
	}
	fixture_close(&fx);
}

static void later_fragment(struct frame *f, const struct frame_spec *spec)
{
	((struct iphdr *)(f->data + frame_l3_offset(spec)))->frag_off = htons(185);
}

static int fragment_passes(struct fixture *fx, const struct frame_spec *spec, int n)
{
	struct frame f;
	int i, passed = 0;

	frame_build(&f, spec);
	later_fragment(&f, spec);
	for (i = 0; i < n; i++)
		passed += fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
	return passed;
}

/*
 * A later fragment has no L4 header: no source port, flags or type. It
 * does not match a rule that needs one; it does match a length or a
 * destination (a rule without a protocol).
 */
static void case_fragments(void)
{
	struct frame_spec big = { .family = 4, .src = "10.6.0.1", .payload = 1000, .sport = 123 },
			  small = { .family = 4, .src = "10.6.0.2", .payload = 18, .sport = 123 },
			  to = { .family = 4,
				 .src = "10.7.0.1",
				 .payload = 18,
				 .sport = 123,
				 .dst = "198.51.100.9" },
			  first = { .family = 4, .src = "10.6.0.3", .payload = 1000, .sport = 123 };
	struct fixture fx;
	int a, b, c, d;

	if (!open_conf(&fx, "fragments and match classes",
		       "default rate 1/s burst 5\n"
		       "rule 10.6.0.0/16 rate 1/s burst 1 proto udp sport 123\n"
		       "rule 10.6.0.0/16 rate 1/s burst 3 length 500-1500\n"
		       "rule 10.7.0.0/16 rate 1/s burst 1 proto udp sport 123\n"
		       "rule 10.7.0.0/16 rate 1/s burst 2 dst 198.51.100.0/24\n"))
		return;
	a = fragment_passes(&fx, &big, 10);
	b = fragment_passes(&fx, &small, 10);
	c = fragment_passes(&fx, &to, 10);
	d = fixture_passes(&fx, &first, 10);
	check(a == 3 && b == 5 && c == 2 && d == 1,
	      "a later fragment: no --sport, but --length and --dst; a whole datagram --sport",
	      "later 1042 B %d (want 3, length), later 60 B %d (want 5), later to the /24 %d "
	      "(want 2, dst), whole %d (want 1, sport)",
	      a, b, c, d);
	fixture_close(&fx);
}

/*
 * The over-limit cache keys on source, protocol, destination port and SYN.
 * A source over the limit of a --sport rule must not have its other
 * traffic of that class refused by it, whichever comes first.
 */
static void case_hot_cache(void)
{
	struct frame_spec
		ntp = { .family = 4, .src = "10.8.0.1", .payload = 18, .sport = 123 },
		other = { .family = 4, .src = "10.8.0.1", .payload = 18, .sport = 5000 },
		ntp6 = { .family = 6, .src = "2001:db8:8:1::1", .payload = 18, .sport = 123 },
		other6 = { .family = 6, .src = "2001:db8:8:1::1", .payload = 18, .sport = 5000 };
	struct fixture fx;
	int a, b, c, d, e, f;

	if (!open_conf(&fx, "the over-limit cache and match classes",
		       "default rate 1/s burst 20\n"
		       "rule 0.0.0.0/0 rate 1/s burst 2 proto udp sport 123\n"
		       "rule ::/0 rate 1/s burst 2 proto udp sport 123\n"))
		return;
	a = fixture_passes(&fx, &ntp, 10);
	b = fixture_passes(&fx, &other, 10);
	c = fixture_passes(&fx, &ntp, 5);
	d = fixture_passes(&fx, &ntp6, 10);
	e = fixture_passes(&fx, &other6, 10);
	f = fixture_passes(&fx, &ntp6, 5);
	check(a == 2 && b == 10 && c == 0 && d == 2 && e == 10 && f == 0,
	      "a source over a --sport rule's limit: its other ports still take the default",
	      "v4: 123 %d (want 2), then 5000 %d (want 10), 123 again %d (want 0); v6: %d, %d, "
	      "%d",
	      a, b, c, d, e, f);
	fixture_close(&fx);
}

/*
 * The configuration says which match classes its rules use, and nothing
 * once none does: the datapath then reads none of them.
 */
static void check_matches_flag(struct fixture *fx, const struct policy_doc *doc)
{
	struct sluice_config cfg;
	struct policy_doc plain;
	const char *why;
	int matches, err;

	matches = config_read(&fx->st.maps, &cfg) ? -1 : cfg.matches;
	check(matches == (SLUICE_POL_MATCH_SPORT | SLUICE_POL_MATCH_LENGTH |
			  SLUICE_POL_MATCH_TCP_FLAGS | SLUICE_POL_MATCH_DST |
			  SLUICE_POL_MATCH_ICMP_TYPE | SLUICE_POL_MATCH_ICMP_CODE),
	      "the configuration names the match classes its rules use", "matches 0x%x", matches);
	doc_init(&plain);
	err = doc_set_default(&plain, &doc->dflt, &why);
	err = err ?: policy_store(&fx->st.maps, &plain, false);
	matches = err || config_read(&fx->st.maps, &cfg) ? -1 : cfg.matches;
	check(matches == 0, "a policy without match classes says none", "err %d, matches 0x%x", err,
	      matches);
	doc_free(&plain);
}

/* What the maps hold reads back (show) as the policy written. */
static void case_show(void)
{
	static const char text[] =
		"default rate 1/s burst 5\n"
		"rule 0.0.0.0/0 rate 1/s burst 2 proto udp sport 123 length 200-1500\n"
		"rule 10.0.0.0/8 rate 1/s proto tcp tcp-flags SYN,ACK/SYN dst 192.0.2.0/24\n"
		"rule 10.1.0.0/16 rate 1/s proto icmp icmp-type 3/4\n"
		"rule 2001:db8::/32 rate 1/s proto icmpv6 icmp-type 128 dst 2001:db8:ff::/48\n";
	struct policy_doc doc;
	struct fixture fx;
	char *out;
	int err;

	if (!open_conf(&fx, "show of match classes", text))
		return;
	out = fixture_show(&fx, &doc, &err);
	check_matches_flag(&fx, &doc);
	check(!err && out && strstr(out, "sport 123 length 200-1500") &&
		      strstr(out, "proto tcp tcp-flags SYN,ACK/SYN dst 192.0.2.0/24") &&
		      strstr(out, "proto icmp icmp-type 3/4") &&
		      strstr(out, "proto icmpv6 icmp-type 128 dst 2001:db8:ff::/48"),
	      "the maps read back as every match class written", "err %d, got:\n%s", err,
	      out ? out : "");
	free(out);
	doc_free(&doc);
	fixture_close(&fx);
}

void suite_match(void)
{
	case_sport();
	case_length();
	case_tcp_flags();
	case_icmp();
	case_dst();
	case_fragments();
	case_hot_cache();
	case_show();
}
