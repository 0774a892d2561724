// SPDX-License-Identifier: GPL-2.0
/*
 * Random frames through the XDP program with BPF_PROG_TEST_RUN, for a
 * number of seconds: templates of every shape (VLAN tags, IPv4 options,
 * fragments, IPv6 extension chains, TCP, UDP) mutated at random, and pure
 * noise. The program must never return XDP_ABORTED (or anything but PASS
 * and DROP), each frame must land in the counter the reference parser
 * predicts, and every IP frame must meter the bucket of the key the
 * reference predicts. `--seeds DIR` writes the templates as a corpus.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
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
#include "reference.h"

static const struct frame_spec templates[] = {
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

#define N_TEMPLATES (sizeof(templates) / sizeof(templates[0]))

static const char policy_text[] =
	"default rate 1/s burst 1 new-sources 16M/s\n"
	"rule 0.0.0.0/0 rate 1/s burst 1 new-sources 16M/s proto udp dport 9000\n"
	"rule ::/0 rate 1/s burst 1 new-sources 16M/s proto tcp dport 22 syn\n";

static uint32_t rnd(void)
{
	return (uint32_t)random();
}

/* A template, then a few of: byte flips, a truncation, random bytes. */
static void make_frame(struct frame *f)
{
	int i, n;

	if (rnd() % 10 == 0) {
		f->len = 14 + rnd() % 200;
		for (i = 0; i < (int)f->len; i++)
			f->data[i] = (uint8_t)rnd();
		return;
	}
	frame_build(f, &templates[rnd() % N_TEMPLATES]);
	n = (int)(rnd() % 4);
	for (i = 0; i < n; i++)
		f->data[rnd() % f->len] ^= (uint8_t)(1 << (rnd() % 8));
	if (rnd() % 4 == 0)
		f->len = 14 + rnd() % (f->len - 13);
	/* New sources keep metering paths busy. */
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

/* The bucket key the reference says this frame meters (ids: rules 1 and 2). */
static void expected_key(const struct ref_packet *r, struct sluice_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)r->family;
	if (r->family == 4) {
		k->prefix_len = 32;
		memcpy(k->addr, r->addr, 4);
		k->policy = r->proto == IPPROTO_UDP && r->dport == 9000 ? 1 : 0;
	} else {
		k->prefix_len = 64;
		memcpy(k->addr, r->addr, 8);
		k->policy = r->proto == IPPROTO_TCP && r->dport == 22 && r->syn ? 2 : 0;
	}
}

struct tally {
	unsigned long frames, bad_verdict, bad_class, bad_key;
};

static void report(const char *what, const struct frame *f)
{
	size_t i;

	printf("     %s; frame:", what);
	for (i = 0; i < f->len && i < 64; i++)
		printf(" %02x", f->data[i]);
	printf("\n");
}

static void one_frame(struct fixture *fx, struct tally *t)
{
	struct sluice_stats before, after;
	struct ref_packet ref;
	enum ref_class want;
	enum sluice_counter moved;
	struct sluice_key key;
	struct sluice_bucket b;
	struct frame f;
	int verdict;

	make_frame(&f);
	want = ref_parse(f.data, f.len, &ref);
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
	if (want != REF_IP)
		return;
	expected_key(&ref, &key);
	if (fixture_bucket(fx, &key, &b)) {
		if (!t->bad_key++)
			report("no bucket for the reference key", &f);
	}
}

static int write_seeds(const char *dir)
{
	char path[512];
	struct frame f;
	size_t i;
	FILE *out;

	for (i = 0; i < N_TEMPLATES; i++) {
		frame_build(&f, &templates[i]);
		snprintf(path, sizeof(path), "%s/template-%zu", dir, i);
		out = fopen(path, "w");
		if (!out || fwrite(f.data, 1, f.len, out) != f.len) {
			perror(path);
			return 1;
		}
		fclose(out);
	}
	return 0;
}

static int load(struct fixture *fx)
{
	char path[] = "/tmp/sluice-fuzz-policy.XXXXXX", err[256];
	struct policy_doc doc;
	FILE *out;
	int fd, ret;

	fd = mkstemp(path);
	out = fd < 0 ? NULL : fdopen(fd, "w");
	if (!out)
		return -errno;
	fputs(policy_text, out);
	fclose(out);
	ret = conf_parse(path, &doc, err, sizeof(err));
	unlink(path);
	if (!ret)
		ret = fixture_open_policy(fx, &doc, 1 << 20);
	doc_free(&doc);
	return ret;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 30;
	struct tally t = { 0 };
	struct fixture fx;
	time_t end;

	if (argc > 2 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	srandom((unsigned int)time(NULL));
	if (load(&fx)) {
		check(false, "load the datapath", "cannot load");
		return harness_finish();
	}
	fixture_set_clock(&fx, 1000 * NSEC_PER_SEC);
	end = time(NULL) + (time_t)seconds;
	while (time(NULL) < end)
		one_frame(&fx, &t);
	fixture_close(&fx);
	printf("     %lu random frames in %.0f s\n", t.frames, seconds);
	check(t.frames > 0 && !t.bad_verdict, "fuzz: never XDP_ABORTED or another verdict",
	      "%lu bad verdicts", t.bad_verdict);
	check(!t.bad_class, "fuzz: every frame counted in the class the reference predicts",
	      "%lu disagreements", t.bad_class);
	check(!t.bad_key, "fuzz: every IP frame metered under the reference's key",
	      "%lu disagreements", t.bad_key);
	return harness_finish();
}
