// SPDX-License-Identifier: GPL-2.0
/*
 * Random frames through the XDP program with BPF_PROG_TEST_RUN, for a
 * number of seconds, under two policies in turn: a plain one, and one with
 * every match class, key kind and a ban. Templates of every shape (VLAN
 * tags, IPv4 options, later fragments, IPv6 extension chains, TCP, UDP,
 * ICMP) mutated at random, and pure noise. The program must never return
 * XDP_ABORTED (or anything but PASS and DROP), each frame must land in the
 * counter the reference parser predicts, and every IP frame must meter the
 * bucket of the rule and key that the reference (reference.c, reading the
 * frame; ref_rules.c, reading sluice(8)'s rules) predicts. `--seeds DIR`
 * writes the templates as a corpus.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "text/conf.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "ref_rules.h"
#include "reference.h"

/* The plain policy: a port, SYN, and the default. */
static const struct frame_spec plain_templates[] = {
	{ .family = 4, .src = "10.1.2.3", .payload = 18 },
	{ .family = 4, .src = "10.1.2.4", .payload = 18, .dport = 9000 },
	{ .family = 4, .src = "10.1.2.5", .l4 = IPPROTO_TCP, .dport = 22, .tcp_flags = 0x02 },
	{ .vlan_tpids = { 0x8100 }, .family = 4, .src = "10.1.2.6", .payload = 40 },
	{ .vlan_tpids = { 0x88a8, 0x8100 }, .family = 6, .src = "2001:db8::6", .payload = 8 },
	{ .family = 6, .src = "2001:db8::7", .payload = 18, .v6_hopopts = 2 },
	{ .family = 6, .src = "2001:db8::8", .l4 = IPPROTO_TCP, .dport = 22, .tcp_flags = 0x02 },
	{ .family = 6, .src = "2001:db8::9", .payload = 30, .v6_hopopts = 6 },
	{ .family = 0, .ethertype = 0x0806 },
};

static const char plain_text[] =
	"default rate 1/s burst 1 new-sources 16M/s\n"
	"rule 0.0.0.0/0 rate 1/s burst 1 new-sources 16M/s proto udp dport 9000\n"
	"rule ::/0 rate 1/s burst 1 new-sources 16M/s proto tcp dport 22 syn\n";

#define ANY_ICMP .icmp_type = -1, .icmp_code = -1

/* The same rules as data (--syn is SYN without ACK), for ref_rules.c. */
static const struct ref_rule plain_rules[] = {
	{ 1, 4, "0.0.0.0/0", IPPROTO_UDP, .dport = { 9000, 9000 }, ANY_ICMP, .prefix = 32 },
	{ 2, 6, "::/0", IPPROTO_TCP, .dport = { 22, 22 }, .flags_mask = 0x12, .flags = 0x02,
	  ANY_ICMP, .prefix = 64 },
};

/*
 * Every match class and key kind (issue 36), with ties the order added
 * breaks (7 and 8), a longer CIDR over a heavier class (9), and bans.
 */
#define R "rate 1/s burst 1 new-sources 16M/s "
static const char class_text[] =
	"default " R "\n"
	"rule 0.0.0.0/0 " R "proto udp sport 53\n"
	"rule 0.0.0.0/0 " R "proto udp sport 100-200 dport 9000 key dst\n"
	"rule 0.0.0.0/0 " R "proto tcp tcp-flags SYN,ACK/SYN key pair\n"
	"rule 0.0.0.0/0 " R "proto tcp tcp-flags ALL/FIN,PSH,URG\n"
	"rule 0.0.0.0/0 " R "proto icmp icmp-type 8\n"
	"rule 0.0.0.0/0 " R "proto icmp icmp-type 3/4 key dst ipv4-prefix 24\n"
	"rule 0.0.0.0/0 " R "length 100-200\n"
	"rule 0.0.0.0/0 " R "dst 10.9.0.0/16 key dst ipv4-prefix 24\n"
	"rule 10.1.0.0/16 " R "proto udp ipv4-prefix 24 ban-after 3/10s ban-for 1s\n"
	"rule ::/0 " R "proto icmpv6 icmp-type 128 key pair ipv6-prefix 48\n"
	"rule ::/0 " R "dst 2001:db8:1::/48 key dst\n"
	"rule ::/0 " R "proto tcp sport 1000-2000 ban-after 3/10s ban-for 1s\n"
	"rule ::/0 " R "length 60-90\n";
#undef R

static const struct ref_rule class_rules[] = {
	{ 1, 4, "0.0.0.0/0", IPPROTO_UDP, .sport = { 53, 53 }, ANY_ICMP, .prefix = 32 },
	{ 2, 4, "0.0.0.0/0", IPPROTO_UDP, .dport = { 9000, 9000 }, .sport = { 100, 200 }, ANY_ICMP,
	  .key = REF_KEY_DST, .prefix = 32 },
	{ 3, 4, "0.0.0.0/0", IPPROTO_TCP, .flags_mask = 0x12, .flags = 0x02, ANY_ICMP,
	  .key = REF_KEY_PAIR, .prefix = 32 },
	{ 4, 4, "0.0.0.0/0", IPPROTO_TCP, .flags_mask = 0xff, .flags = 0x29, ANY_ICMP,
	  .prefix = 32 },
	{ 5, 4, "0.0.0.0/0", IPPROTO_ICMP, .icmp_type = 8, .icmp_code = -1, .prefix = 32 },
	{ 6, 4, "0.0.0.0/0", IPPROTO_ICMP, .icmp_type = 3, .icmp_code = 4, .key = REF_KEY_DST,
	  .prefix = 24 },
	{ 7, 4, "0.0.0.0/0", .length = { 100, 200 }, ANY_ICMP, .prefix = 32 },
	{ 8, 4, "0.0.0.0/0", ANY_ICMP, .dst = "10.9.0.0/16", .key = REF_KEY_DST, .prefix = 24 },
	{ 9, 4, "10.1.0.0/16", IPPROTO_UDP, ANY_ICMP, .prefix = 24 },
	{ 10, 6, "::/0", IPPROTO_ICMPV6, .icmp_type = 128, .icmp_code = -1, .key = REF_KEY_PAIR,
	  .prefix = 48 },
	{ 11, 6, "::/0", ANY_ICMP, .dst = "2001:db8:1::/48", .key = REF_KEY_DST, .prefix = 64 },
	{ 12, 6, "::/0", IPPROTO_TCP, .sport = { 1000, 2000 }, ANY_ICMP, .prefix = 64 },
	{ 13, 6, "::/0", .length = { 60, 90 }, ANY_ICMP, .prefix = 64 },
};

static const struct frame_spec class_templates[] = {
	{ .family = 4, .src = "10.2.0.1", .payload = 18, .sport = 53 },
	{ .family = 4, .src = "10.2.0.2", .payload = 18, .sport = 150 },
	{ .family = 4, .src = "10.2.0.3", .l4 = IPPROTO_TCP, .tcp_flags = 0x02 },
	{ .family = 4, .src = "10.2.0.4", .l4 = IPPROTO_TCP, .tcp_flags = 0x12 },
	{ .vlan_tpids = { 0x8100 },
	  .family = 4,
	  .src = "10.2.0.5",
	  .l4 = IPPROTO_TCP,
	  .tcp_flags = 0x29 },
	{ .family = 4, .src = "10.2.0.6", .l4 = IPPROTO_ICMP, .icmp_type = 8 },
	{ .family = 4,
	  .src = "10.2.0.7",
	  .l4 = IPPROTO_ICMP,
	  .icmp_type = 3,
	  .icmp_code = 4,
	  .dst = "10.3.4.5" },
	{ .family = 4, .src = "10.2.0.8", .l4 = IPPROTO_ICMP, .icmp_type = 3, .icmp_code = 1 },
	{ .family = 4, .src = "10.2.0.9", .payload = 100, .dst = "10.9.1.2" },
	{ .vlan_tpids = { 0x88a8, 0x8100 },
	  .family = 4,
	  .src = "10.2.0.10",
	  .dst = "10.9.1.3",
	  .payload = 18 },
	{ .family = 4, .src = "10.1.2.3", .payload = 18, .sport = 53 },
	{ .family = 6,
	  .src = "2001:db8::1",
	  .l4 = IPPROTO_ICMPV6,
	  .icmp_type = 128,
	  .dst = "2001:db8:2::7" },
	{ .family = 6,
	  .src = "2001:db8::2",
	  .payload = 18,
	  .dst = "2001:db8:1::5",
	  .v6_hopopts = 1 },
	{ .vlan_tpids = { 0x8100 },
	  .family = 6,
	  .src = "2001:db8::3",
	  .l4 = IPPROTO_TCP,
	  .sport = 1500,
	  .tcp_flags = 0x10 },
	{ .family = 6, .src = "2001:db8::4", .payload = 10 },
	{ .family = 0, .ethertype = 0x0806 },
};

struct phase {
	const char *name, *text;
	const struct frame_spec *templates;
	size_t n_templates;
	const struct ref_rule *rules;
	size_t n_rules;
	bool bans; /* has rules with --ban-after, whose keys the frames must get banned */
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const struct phase phases[] = {
	{ "plain", plain_text, plain_templates, COUNT(plain_templates), plain_rules,
	  COUNT(plain_rules) },
	{ "classes", class_text, class_templates, COUNT(class_templates), class_rules,
	  COUNT(class_rules), true },
};

static uint32_t rnd(void)
{
	return (uint32_t)random();
}

/* An untagged IPv4 frame made a later fragment: no L4 header to see (sluice(8), Rules). */
static void make_later_fragment(struct frame *f)
{
	if (f->len >= 34 && f->data[12] == 0x08 && f->data[13] == 0x00)
		f->data[21] = (uint8_t)(1 + rnd() % 255);
}

/* A template, then a few of: byte flips, a truncation, random bytes. */
static void make_frame(struct frame *f, const struct phase *ph)
{
	int i, n;

	if (rnd() % 10 == 0) {
		f->len = 14 + rnd() % 200;
		for (i = 0; i < (int)f->len; i++)
			f->data[i] = (uint8_t)rnd();
		return;
	}
	frame_build(f, &ph->templates[rnd() % ph->n_templates]);
	n = (int)(rnd() % 4);
	for (i = 0; i < n; i++)
		f->data[rnd() % f->len] ^= (uint8_t)(1 << (rnd() % 8));
	if (rnd() % 8 == 0)
		make_later_fragment(f);
	if (rnd() % 4 == 0)
		f->len = 14 + rnd() % (f->len - 13);
	/* New sources (and destinations) keep metering paths busy. */
	if (f->len >= 34 && rnd() % 2)
		f->data[29 + rnd() % 4] = (uint8_t)rnd();
}

static enum sluice_counter counter_moved(const struct sluice_stats *a, const struct sluice_stats *b)
{
	int i;

	for (i = 0; i < SLUICE_CNT_NEW_SOURCE; i++)
		if (b->c[i].packets != a->c[i].packets)
			return (enum sluice_counter)i;
	return SLUICE_CNT_MAX;
}

#define MAX_RULE_ID 16

struct tally {
	unsigned long frames, fresh, bad_verdict, bad_class, bad_key;
	unsigned long fresh_of[MAX_RULE_ID]; /* keys' first frames by rule id (0: the default) */
};

static void report(const char *what, const struct frame *f)
{
	size_t i;

	printf("     %s; frame:", what);
	for (i = 0; i < f->len && i < 64; i++)
		printf(" %02x", f->data[i]);
	printf("\n");
}

/*
 * The bucket of the rule and key the reference picks must exist after the
 * frame; a key that had none before ("fresh") can only have got it from
 * this frame, so there the check says the frame chose that rule and key.
 */
static void check_key(struct fixture *fx, const struct phase *ph, const struct frame *f,
		      const struct sluice_key *key, bool existed, struct tally *t)
{
	struct sluice_bucket b;

	if (fixture_bucket(fx, key, &b)) {
		if (!t->bad_key++) {
			printf("     %s: rule %u, key family %#x prefix %u\n", ph->name,
			       key->policy, key->family, key->prefix_len);
			report("no bucket for the reference's rule and key", f);
		}
	} else if (!existed) {
		t->fresh++;
		t->fresh_of[key->policy % MAX_RULE_ID]++;
	}
}

static void one_frame(struct fixture *fx, const struct phase *ph, struct tally *t)
{
	struct sluice_stats before, after;
	struct ref_packet ref;
	enum ref_class want;
	enum sluice_counter moved;
	struct sluice_bucket b;
	struct sluice_key key;
	struct frame f;
	bool existed;
	int verdict;

	make_frame(&f, ph);
	want = ref_parse(f.data, f.len, &ref);
	if (want == REF_IP)
		ref_rule_key(ref_rule_pick(ph->rules, ph->n_rules, &ref, f.len), &ref, &key);
	existed = want == REF_IP && !fixture_bucket(fx, &key, &b);
	fixture_stats(fx, &before);
	verdict = fixture_run(fx, f.data, f.len, 1);
	fixture_stats(fx, &after);
	t->frames++;
	if (verdict != XDP_PASS && verdict != XDP_DROP) {
		if (!t->bad_verdict++)
			report("verdict is neither PASS nor DROP", &f);
		return;
	}
	moved = counter_moved(&before, &after);
	if ((want == REF_NON_IP) != (moved == SLUICE_CNT_NON_IP) ||
	    (want == REF_MALFORMED) != (moved == SLUICE_CNT_MALFORMED)) {
		if (!t->bad_class++)
			report("counter disagrees with the reference class", &f);
		return;
	}
	if (want == REF_IP)
		check_key(fx, ph, &f, &key, existed, t);
}

static int write_seeds(const char *dir)
{
	char path[512];
	struct frame f;
	size_t p, i;
	FILE *out;

	for (p = 0; p < COUNT(phases); p++) {
		for (i = 0; i < phases[p].n_templates; i++) {
			frame_build(&f, &phases[p].templates[i]);
			snprintf(path, sizeof(path), "%s/template-%s-%zu", dir, phases[p].name, i);
			out = fopen(path, "w");
			if (!out || fwrite(f.data, 1, f.len, out) != f.len) {
				perror(path);
				return 1;
			}
			fclose(out);
		}
	}
	return 0;
}

/* Rules (and the default) no key's first frame chose: the templates must reach each. */
static size_t rules_unreached(const struct phase *ph, const struct tally *t)
{
	size_t i, n = !t->fresh_of[0];

	for (i = 0; i < ph->n_rules; i++)
		n += !t->fresh_of[ph->rules[i].id % MAX_RULE_ID];
	return n;
}

/* Random frames through the phase's policy for `seconds`; its checks. */
static void run_phase(const struct phase *ph, double seconds)
{
	struct tally t = { 0 };
	struct sluice_stats st;
	struct fixture fx;
	time_t end;

	if (fixture_open_conf(&fx, ph->text, 1 << 20, 1000 * NSEC_PER_SEC)) {
		check(false, ph->name, "cannot load the datapath");
		return;
	}
	end = time(NULL) + (time_t)seconds;
	do
		one_frame(&fx, ph, &t);
	while (time(NULL) < end);
	if (fixture_stats(&fx, &st))
		memset(&st, 0, sizeof(st));
	fixture_close(&fx);
	printf("     %s: %lu random frames in %.0f s, %lu of them a key's first; %llu bans, %llu banned\n",
	       ph->name, t.frames, seconds, t.fresh,
	       (unsigned long long)st.c[SLUICE_CNT_BANS].packets,
	       (unsigned long long)st.c[SLUICE_CNT_BANNED].packets);
	check(t.frames > 0 && !t.bad_verdict, "fuzz: never XDP_ABORTED or another verdict",
	      "%s: %lu bad verdicts", ph->name, t.bad_verdict);
	check(!t.bad_class, "fuzz: every frame counted in the class the reference predicts",
	      "%s: %lu disagreements", ph->name, t.bad_class);
	check(!t.bad_key && t.fresh > 0,
	      "fuzz: every IP frame metered under the reference's rule and key",
	      "%s: %lu disagreements (%lu keys' first frames)", ph->name, t.bad_key, t.fresh);
	check(!rules_unreached(ph, &t),
	      "fuzz: every rule and the default chose some key's first frame", "%s: %zu never did",
	      ph->name, rules_unreached(ph, &t));
	if (ph->bans)
		check(st.c[SLUICE_CNT_BANS].packets && st.c[SLUICE_CNT_BANNED].packets,
		      "fuzz: keys over their --ban-after were banned, and their frames refused",
		      "%s: none", ph->name);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	size_t p;

	if (argc > 2 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	srandom((unsigned int)time(NULL));
	for (p = 0; p < COUNT(phases); p++)
		run_phase(&phases[p], seconds / COUNT(phases));
	return harness_finish();
}
