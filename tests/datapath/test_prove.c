// SPDX-License-Identifier: GPL-2.0
/*
 * --prove through BPF_PROG_TEST_RUN with crafted frames (bpf/cookie.h,
 * bpf/prove.h): the SYN-ACK a new source's SYN gets, checked field by field
 * and against checksums computed here; the RST a Linux client answers it
 * with proves the source; and no RST that does not carry that exact cookie
 * ever does, over a sweep of sequence numbers, addresses and ports.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)
#define L3     ETH_HLEN
#define L4     (ETH_HLEN + sizeof(struct iphdr))
/* RST sequence numbers tried against one SYN-ACK's cookie. */
#define SWEEP 2000

static struct iphdr *ip_of(void *frame)
{
	return (struct iphdr *)((uint8_t *)frame + L3);
}

static struct tcphdr *tcp_of(void *frame)
{
	return (struct tcphdr *)((uint8_t *)frame + L4);
}

/* A Linux client's SYN from src:sport, 20 bytes of options as its payload. */
static void syn_from(struct frame *f, const char *src, uint16_t sport)
{
	struct frame_spec spec = {
		.family = 4, .src = src, .l4 = IPPROTO_TCP, .tcp_flags = TCP_FLAG_SYN, .payload = 20
	};

	frame_build(f, &spec);
	tcp_of(f->data)->source = htons(sport);
	tcp_of(f->data)->seq = htonl(0x12345678);
}

/* The RST its client would send back: the SYN's addresses and ports, sequence seq. */
static void rst_from(struct frame *f, const char *src, uint16_t sport, uint32_t seq)
{
	struct frame_spec spec = { .family = 4, .src = src, .l4 = IPPROTO_TCP, .tcp_flags = 0x04 };

	frame_build(f, &spec);
	tcp_of(f->data)->source = htons(sport);
	tcp_of(f->data)->seq = htonl(seq);
}

static uint16_t tcp_checksum(const struct iphdr *ip, const struct tcphdr *th, size_t len)
{
	uint8_t buf[12 + 60];

	memcpy(buf, &ip->saddr, 4);
	memcpy(buf + 4, &ip->daddr, 4);
	buf[8] = 0;
	buf[9] = IPPROTO_TCP;
	buf[10] = (uint8_t)(len >> 8);
	buf[11] = (uint8_t)len;
	memcpy(buf + 12, th, len);
	return ip_checksum(buf, 12 + len);
}

static struct sluice_key key_of(const char *src)
{
	struct sluice_key key = { .family = SLUICE_FAMILY_IPV4, .prefix_len = 32 };

	inet_pton(AF_INET, src, key.addr);
	return key;
}

static int open_proving(struct fixture *fx, const char *extra)
{
	char text[256];

	snprintf(text, sizeof(text), "default rate 10/s %s\n", extra);
	return fixture_open_conf(fx, text, 4096, NOW_NS);
}

/* The SYN-ACK, field by field; its cookie in *cookie. */
static void case_synack(void)
{
	struct frame syn, out;
	struct fixture fx;
	struct iphdr *ip;
	struct tcphdr *th, want;
	int ret;

	if (open_proving(&fx, "prove tcp-always")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	syn_from(&syn, "11.0.0.1", 40000);
	memset(&out, 0, sizeof(out));
	ret = fixture_run_out(&fx, syn.data, syn.len, out.data, sizeof(out.data));
	ip = ip_of(out.data);
	th = tcp_of(out.data);
	check(ret == XDP_TX, "prove: a new source's SYN is sent back (XDP_TX)", "verdict %d", ret);
	check(!memcmp(out.data, syn.data + 6, 6) && !memcmp(out.data + 6, syn.data, 6),
	      "prove: MAC addresses swapped", " ");
	check(ip->saddr == ip_of(syn.data)->daddr && ip->daddr == ip_of(syn.data)->saddr,
	      "prove: IP addresses swapped", " ");
	check(ntohs(ip->tot_len) == 40 && ip->ihl == 5 && ip->ttl == 64,
	      "prove: a 40-byte IPv4 packet", "tot_len %u", ntohs(ip->tot_len));
	check(ip_checksum(ip, sizeof(*ip)) == 0, "prove: its IPv4 header checksum is right", " ");
	check(th->source == htons(9000) && th->dest == htons(40000), "prove: ports swapped",
	      "%u > %u", ntohs(th->source), ntohs(th->dest));
	check(th->syn && th->ack && !th->rst && !th->fin && !th->psh && th->doff == 5,
	      "prove: exactly SYN and ACK, a 20-byte header", " ");
	check(ntohl(th->ack_seq) != 0x12345679, "prove: its ACK is not the client's ISN + 1", " ");
	check(tcp_checksum(ip, th, sizeof(*th)) == 0, "prove: its TCP checksum is right", " ");
	check(fixture_counter(&fx, SLUICE_CNT_SYNACK_SENT) == 1, "prove: counted in synacks_sent",
	      " ");
	check(fixture_bucket_count(&fx) == 0, "prove: the SYN got no bucket", " ");

	/* The same SYN again gets the same cookie: it depends on nothing stored. */
	memcpy(&want, th, sizeof(want));
	fixture_run_out(&fx, syn.data, syn.len, out.data, sizeof(out.data));
	check(tcp_of(out.data)->ack_seq == want.ack_seq, "prove: a SYN sent again, the same cookie",
	      " ");
	fixture_close(&fx);
}

/* One's complement sum over the IPv6 pseudo-header and the TCP segment: 0 when right. */
static uint16_t tcp6_checksum(const struct ipv6hdr *ip6, const struct tcphdr *th, size_t len)
{
	uint8_t buf[40 + 60];

	memcpy(buf, &ip6->saddr, 16);
	memcpy(buf + 16, &ip6->daddr, 16);
	memset(buf + 32, 0, 8);
	buf[34] = (uint8_t)(len >> 8);
	buf[35] = (uint8_t)len;
	buf[39] = IPPROTO_TCP;
	memcpy(buf + 40, th, len);
	return ip_checksum(buf, 40 + len);
}

/* IPv6, and IPv4 behind a VLAN tag: answered too, the tag kept. */
static void case_ipv6_and_vlan(void)
{
	struct frame_spec v6 = { .family = 6,
				 .src = "2001:db8::7",
				 .l4 = IPPROTO_TCP,
				 .tcp_flags = TCP_FLAG_SYN,
				 .payload = 20 };
	struct frame_spec vlan = { .vlan_tpids = { ETH_P_8021Q },
				   .family = 4,
				   .src = "11.0.0.9",
				   .l4 = IPPROTO_TCP,
				   .tcp_flags = TCP_FLAG_SYN,
				   .payload = 20 };
	struct frame syn, out;
	struct ipv6hdr *ip6;
	struct tcphdr *th;
	struct fixture fx;
	size_t l3;

	if (open_proving(&fx, "prove tcp-always")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	frame_build(&syn, &v6);
	l3 = frame_l3_offset(&v6);
	check(fixture_run_out(&fx, syn.data, syn.len, out.data, sizeof(out.data)) == XDP_TX,
	      "prove IPv6: a new source's SYN is sent back", " ");
	ip6 = (struct ipv6hdr *)(out.data + l3);
	th = (struct tcphdr *)(ip6 + 1);
	check(!memcmp(&ip6->daddr, &((struct ipv6hdr *)(syn.data + l3))->saddr, 16) &&
		      ntohs(ip6->payload_len) == sizeof(*th) && th->syn && th->ack && th->doff == 5,
	      "prove IPv6: a 20-byte SYN-ACK to the SYN's source", " ");
	check(tcp6_checksum(ip6, th, sizeof(*th)) == 0, "prove IPv6: its TCP checksum is right",
	      " ");

	frame_build(&syn, &vlan);
	l3 = frame_l3_offset(&vlan);
	check(fixture_run_out(&fx, syn.data, syn.len, out.data, sizeof(out.data)) == XDP_TX,
	      "prove VLAN: a tagged SYN is sent back", " ");
	check(!memcmp(out.data + 12, syn.data + 12, l3 - 12), "prove VLAN: its tag kept", " ");
	th = (struct tcphdr *)(out.data + l3 + sizeof(struct iphdr));
	check(th->syn && th->ack &&
		      tcp_checksum((struct iphdr *)(out.data + l3), th, sizeof(*th)) == 0,
	      "prove VLAN: a SYN-ACK with a right checksum", " ");
	fixture_close(&fx);
}

/* The cookie a SYN from src:sport gets; 0 when it was not answered. */
static uint32_t cookie_for(struct fixture *fx, const char *src, uint16_t sport)
{
	struct frame syn, out;

	syn_from(&syn, src, sport);
	if (fixture_run_out(fx, syn.data, syn.len, out.data, sizeof(out.data)) != XDP_TX)
		return 0;
	return ntohl(tcp_of(out.data)->ack_seq);
}

static int run_rst(struct fixture *fx, const char *src, uint16_t sport, uint32_t seq)
{
	struct frame rst;

	rst_from(&rst, src, sport, seq);
	return fixture_run(fx, rst.data, rst.len, 1);
}

/* The RST a Linux client sends proves the source; its SYN then passes. */
static void case_proof(void)
{
	struct sluice_key key = key_of("11.0.0.2");
	struct fixture fx;
	struct frame syn;
	uint32_t cookie;

	if (open_proving(&fx, "prove tcp-always")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	cookie = cookie_for(&fx, "11.0.0.2", 40001);
	run_rst(&fx, "11.0.0.2", 40001, cookie);
	check(fixture_counter(&fx, SLUICE_CNT_COOKIE_GOOD) == 1,
	      "prove: the client's RST brings the cookie back", " ");
	check(fixture_has_bucket(&fx, &key) == 1, "prove: its source has a bucket", " ");
	check(fixture_counter(&fx, SLUICE_CNT_PROVEN) == 1, "prove: counted in proven", " ");
	syn_from(&syn, "11.0.0.2", 40001);
	check(fixture_run(&fx, syn.data, syn.len, 1) == XDP_PASS,
	      "prove: the SYN it sends again reaches the kernel", " ");
	fixture_close(&fx);
}

/*
 * Forged RSTs: every sequence number but the cookie (the numbers just
 * around it first), from the source and port its SYN-ACK went to, and the
 * cookie itself from another source or port: none proves anything. The
 * new-source budget is spent first, so the forged RSTs, which go on as any
 * packet of a new source, cannot get a bucket that way either.
 */
static void case_forged(void)
{
	struct frame_spec udp = { .family = 4, .src = "11.0.0.99", .payload = 18 };
	struct sluice_key key = key_of("11.0.0.3");
	uint32_t cookie, seq, proved = 0;
	struct fixture fx;
	struct frame f;
	int i;

	if (open_proving(&fx, "prove tcp-always new-sources 1/m")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	frame_build(&f, &udp);
	fixture_run(&fx, f.data, f.len, 1);
	cookie = cookie_for(&fx, "11.0.0.3", 40002);
	srandom(37);
	for (i = 0; i < SWEEP; i++) {
		seq = i < 8 ? cookie + (uint32_t)(i - 4) + (i >= 4) : (uint32_t)random() * 2 + 1;
		if (seq == cookie)
			continue;
		run_rst(&fx, "11.0.0.3", 40002, seq);
	}
	run_rst(&fx, "11.0.0.4", 40002, cookie);
	run_rst(&fx, "11.0.0.3", 40003, cookie);
	proved = (uint32_t)fixture_counter(&fx, SLUICE_CNT_COOKIE_GOOD);
	check(proved == 0, "prove: no RST without its own cookie proves a source", "%u of %d did",
	      proved, SWEEP + 2);
	check(fixture_counter(&fx, SLUICE_CNT_COOKIE_BAD) >= SWEEP - 1,
	      "prove: each counted in cookies_bad", " ");
	check(fixture_has_bucket(&fx, &key) == 0 && fixture_counter(&fx, SLUICE_CNT_PROVEN) == 0,
	      "prove: and no source got a bucket by one", " ");
	fixture_close(&fx);
}

/* prove tcp: SYN-ACKs only once the new-source budget refuses. */
static void case_past_budget(void)
{
	struct sluice_key first = key_of("11.0.0.5");
	struct fixture fx;
	struct frame syn;

	if (open_proving(&fx, "prove tcp new-sources 1/m")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	syn_from(&syn, "11.0.0.5", 40004);
	check(fixture_run(&fx, syn.data, syn.len, 1) == XDP_PASS && fixture_has_bucket(&fx, &first),
	      "prove tcp: within the budget a SYN passes and gets a bucket", " ");
	syn_from(&syn, "11.0.0.6", 40005);
	check(fixture_run(&fx, syn.data, syn.len, 1) == XDP_TX,
	      "prove tcp: past the budget a SYN is answered with a cookie", " ");
	check(fixture_counter(&fx, SLUICE_CNT_REFUSED) == 0,
	      "prove tcp: not sent to the overflow bucket", " ");
	fixture_close(&fx);
}

/* What --prove leaves alone: non-TCP traffic, and SYNs of a rule without it. */
static void case_leaves_alone(void)
{
	struct frame_spec udp = { .family = 4, .src = "11.0.0.7", .payload = 18 };
	struct fixture fx;
	struct frame f;

	if (open_proving(&fx, "prove tcp-always")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	frame_build(&f, &udp);
	check(fixture_run(&fx, f.data, f.len, 1) == XDP_PASS &&
		      fixture_counter(&fx, SLUICE_CNT_SYNACK_SENT) == 0,
	      "prove: a UDP datagram of a new source passes as before", " ");
	fixture_close(&fx);
	if (open_proving(&fx, "")) {
		check(false, "prove: the program loads", "cannot open");
		return;
	}
	syn_from(&f, "11.0.0.8", 40006);
	check(fixture_run(&fx, f.data, f.len, 1) == XDP_PASS &&
		      fixture_counter(&fx, SLUICE_CNT_SYNACK_SENT) == 0,
	      "prove off: a new source's SYN passes as before", " ");
	fixture_close(&fx);
}

/*
 * The fuzz target (tests/fuzz/run.sh): for about `seconds`, RSTs with random
 * sequence numbers, from sources and ports whose SYNs got cookies and from
 * others, with a new seed each run (printed); a source is proven only by
 * the exact cookie its own SYN-ACK carried.
 */
void suite_prove_fuzz(unsigned int seconds)
{
	struct frame_spec udp = { .family = 4, .src = "11.1.0.99", .payload = 18 };
	uint32_t cookies[16], seq, exact = 0, tries = 0;
	unsigned int seed = (unsigned int)time(NULL);
	time_t end = time(NULL) + seconds;
	char src[32];
	struct fixture fx;
	struct frame f;
	int i;

	if (open_proving(&fx, "prove tcp-always new-sources 1/h")) {
		check(false, "prove fuzz: the program loads", "cannot open");
		return;
	}
	frame_build(&f, &udp);
	fixture_run(&fx, f.data, f.len, 1);
	for (i = 0; i < 16; i++) {
		snprintf(src, sizeof(src), "11.1.0.%d", i + 1);
		cookies[i] = cookie_for(&fx, src, (uint16_t)(41000 + i));
	}
	srandom(seed);
	while (time(NULL) < end) {
		i = (int)(random() % 16);
		seq = (uint32_t)random() ^ ((uint32_t)random() << 16);
		if (random() % 64 == 0)
			seq = cookies[i] + (uint32_t)(random() % 9) - 4;
		if (seq == cookies[i])
			continue;
		snprintf(src, sizeof(src), "11.1.0.%d", i + 1);
		/* Half of them from a port no SYN came from. */
		run_rst(&fx, src, (uint16_t)(41000 + i + (random() & 1) * 16), seq);
		tries++;
	}
	exact = (uint32_t)fixture_counter(&fx, SLUICE_CNT_COOKIE_GOOD);
	check(exact == 0, "prove fuzz: no RST without its exact cookie proves a source",
	      "%u of %u did (seed %u)", exact, tries, seed);
	check(fixture_counter(&fx, SLUICE_CNT_COOKIE_BAD) >= tries,
	      "prove fuzz: every one was checked, and failed", "%llu of %u",
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_COOKIE_BAD), tries);
	printf("     prove fuzz: %u forged RSTs, seed %u\n", tries, seed);
	fixture_close(&fx);
}

void suite_prove(void)
{
	case_synack();
	case_ipv6_and_vlan();
	case_proof();
	case_forged();
	case_past_budget();
	case_leaves_alone();
}
