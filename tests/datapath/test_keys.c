// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* sched_getaffinity */
/*
 * The key kinds (issue 36.2) through BPF_PROG_TEST_RUN: a rule keyed on the
 * destination (--key dst) or on the pair (--key pair), IPv4 and IPv6, tagged
 * and not, under a frozen test clock spread over every CPU, and hammered
 * from every CPU under the real clock; that the over-limit cache, keyed on
 * the source, never answers for them; the key's layout in the table; and
 * that the maps read back to the policy written (show).
 */
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <linux/if_ether.h>
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "text/conf.h"
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "maps/config.h"
#include "maps/policy_maps.h"
#include "suites.h"

#define NOW_NS (1000 * NSEC_PER_SEC)

static bool open_conf(struct fixture *fx, const char *what, const char *text)
{
	if (fixture_open_conf(fx, text, 1024, NOW_NS)) {
		check(false, what, "cannot load");
		return false;
	}
	return true;
}

/*
 * n frames, source i of n from "base" (IPv4 10.x.y.z or IPv6 base::i), to
 * dst, each on CPU i % ncpu (the frozen clock: no credit comes back): how
 * many pass.
 */
static int flood_passes(struct fixture *fx, struct frame_spec spec, int v6, int n, int ncpu)
{
	cpu_set_t was;
	char src[64];
	struct frame f;
	int i, passed = 0;

	if (sched_getaffinity(0, sizeof(was), &was))
		return -1;
	for (i = 0; i < n && passed >= 0; i++) {
		if (v6)
			snprintf(src, sizeof(src), "2001:db8:77:%x::%x", i / 256, i % 256 + 1);
		else
			snprintf(src, sizeof(src), "10.77.%d.%d", i / 250, i % 250 + 1);
		spec.src = src;
		if (frame_build(&f, &spec) || pin_thread_to_cpu(i % ncpu))
			passed = -1;
		else
			passed += fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
	}
	sched_setaffinity(0, sizeof(was), &was);
	return passed;
}

static int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/*
 * A destination rule: 300 sources to one address over every CPU pass its
 * burst exactly; another address of the rule has its own bucket; an
 * address outside it takes the default (per source).
 */
static void case_dst(void)
{
	int ncpu = online_cpus(), t, a, b, c, d, e, g;
	struct fixture fx;

	if (!open_conf(&fx, "--key dst",
		       "default rate 1/s burst 1000\n"
		       "rule 10.77.0.0/16 rate 1/s burst 20 key dst\n"
		       "rule 2001:db8:77::/48 rate 1/s burst 30 key dst ipv6-prefix 128\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec v4 = { .family = 4, .payload = 18 },
				  v6 = { .family = 6, .payload = 18 };

		frame_spec_tag_both(&v4, t);
		frame_spec_tag_both(&v6, t);
		v4.dst = t ? "198.51.100.1" : "198.51.100.2";
		a = flood_passes(&fx, v4, 0, 300, ncpu);
		v4.dst = t ? "198.51.100.3" : "198.51.100.4";
		b = flood_passes(&fx, v4, 0, 10, ncpu);
		v6.dst = t ? "2001:db8:ff::1" : "2001:db8:ff::2";
		c = flood_passes(&fx, v6, 1, 300, ncpu);
		/* ipv6-prefix 128: the next address is another bucket. */
		v6.dst = t ? "2001:db8:ff::3" : "2001:db8:ff::4";
		d = flood_passes(&fx, v6, 1, 10, ncpu);
		e = fixture_passes(
			&fx, &(struct frame_spec){ .family = 4, .src = "10.78.0.1", .payload = 18 },
			5);
		g = fixture_passes(
			&fx,
			&(struct frame_spec){ .family = 6, .src = "2001:db8:78::1", .payload = 18 },
			5);
		check(a == 20 && b == 10 && c == 30 && d == 10 && e == 5 && g == 5,
		      t ? "--key dst, two VLAN tags: 300 sources over every CPU pass one burst"
			: "--key dst: 300 sources to one address over every CPU pass its burst, "
			  "exactly; another address its own",
		      "v4 %d (want 20), other address %d (want 10), v6 %d (want 30), other %d "
		      "(want 10), outside %d and %d (want 5); %d CPUs",
		      a, b, c, d, e, g, ncpu);
	}
	fixture_close(&fx);
}

/* The destination masked to the prefix: a /24 is one bucket for every address in it. */
static void case_dst_prefix(void)
{
	struct frame_spec spec = { .family = 4, .payload = 18 };
	int ncpu = online_cpus(), a, b, c;
	struct fixture fx;

	if (!open_conf(&fx, "--key dst with --ipv4-prefix 24",
		       "default rate 1/s burst 1000\n"
		       "rule 10.77.0.0/16 rate 1/s burst 12 key dst ipv4-prefix 24\n"))
		return;
	spec.dst = "198.51.100.10";
	a = flood_passes(&fx, spec, 0, 8, ncpu);
	spec.dst = "198.51.100.200";
	b = flood_passes(&fx, spec, 0, 8, ncpu);
	spec.dst = "198.51.101.10";
	c = flood_passes(&fx, spec, 0, 8, ncpu);
	check(a == 8 && b == 4 && c == 8,
	      "--key dst --ipv4-prefix 24: one bucket per destination /24",
	      ".10 %d (want 8), .200 %d (want 4), next /24 %d (want 8)", a, b, c);
	fixture_close(&fx);
}

/*
 * A pair rule: one bucket per source and destination. The same source to
 * two addresses, and two sources to one, are four buckets; an IPv6 pair
 * keeps 64 bits of each, so the low 64 bits of either share one.
 */
static void case_pair(void)
{
	struct fixture fx;
	int t, a, b, c, d, e, f, g;

	if (!open_conf(&fx, "--key pair",
		       "default rate 1/s burst 1000\n"
		       "rule 10.79.0.0/16 rate 1/s burst 3 key pair\n"
		       "rule 2001:db8:79::/48 rate 1/s burst 4 key pair\n"))
		return;
	for (t = 0; t < 2; t++) {
		struct frame_spec s1d1 = { .family = 4, .payload = 18 }, s1d2, s2d1,
				  v6 = { .family = 6, .payload = 18 }, v6_low, v6_other;

		frame_spec_tag_both(&s1d1, t);
		frame_spec_tag_both(&v6, t);
		s1d1.src = t ? "10.79.0.1" : "10.79.0.2";
		s1d1.dst = "198.51.100.1";
		s1d2 = s1d1;
		s1d2.dst = "198.51.100.2";
		s2d1 = s1d1;
		s2d1.src = t ? "10.79.0.3" : "10.79.0.4";
		v6.src = t ? "2001:db8:79:1::1" : "2001:db8:79:2::1";
		v6.dst = "2001:db8:ff:1::1";
		/* The same /64s: one bucket with the first. */
		v6_low = v6;
		v6_low.src = t ? "2001:db8:79:1::99" : "2001:db8:79:2::99";
		v6_low.dst = "2001:db8:ff:1::77";
		v6_other = v6;
		v6_other.dst = "2001:db8:ff:2::1";
		a = fixture_passes(&fx, &s1d1, 10);
		b = fixture_passes(&fx, &s1d2, 10);
		c = fixture_passes(&fx, &s2d1, 10);
		d = fixture_passes(&fx, &s1d1, 10);
		e = fixture_passes(&fx, &v6, 3);
		f = fixture_passes(&fx, &v6_low, 10);
		g = fixture_passes(&fx, &v6_other, 10);
		check(a == 3 && b == 3 && c == 3 && d == 0 && e == 3 && f == 1 && g == 4,
		      t ? "--key pair, two VLAN tags: a bucket per pair, IPv4 and IPv6 /64s"
			: "--key pair: a bucket per source and destination; an IPv6 pair's low "
			  "64 bits share it",
		      "s1>d1 %d (want 3), s1>d2 %d (want 3), s2>d1 %d (want 3), s1>d1 again %d "
		      "(want 0); v6 %d (want 3), same /64s %d (want 1), other /64 %d (want 4)",
		      a, b, c, d, e, f, g);
	}
	fixture_close(&fx);
}

/*
 * The over-limit cache keys on the source: a source over a destination's
 * limit (or a pair's) must still reach other destinations, and the
 * refused packets must still count in the destination's bucket.
 */
static void case_hot_cache(void)
{
	struct frame_spec to1 = { .family = 4,
				  .src = "10.80.0.1",
				  .payload = 18,
				  .dst = "198.51.100.1" },
			  to2,
			  p1 = { .family = 6,
				 .src = "2001:db8:80::1",
				 .payload = 18,
				 .dst = "2001:db8:ff::1" },
			  p2;
	struct sluice_key key = { .family = SLUICE_FAMILY_IPV4 | SLUICE_KEY_DST, .prefix_len = 32 };
	struct sluice_bucket bk = { 0 };
	struct policy_doc doc;
	struct fixture fx;
	int a, b, c, d, e, f, err;

	to2 = to1;
	to2.dst = "198.51.100.2";
	p2 = p1;
	p2.dst = "2001:db8:fe::1";
	if (!open_conf(&fx, "the over-limit cache and key kinds",
		       "default rate 1/s burst 1000\n"
		       "rule 10.80.0.0/16 rate 1/s burst 2 key dst\n"
		       "rule 2001:db8:80::/48 rate 1/s burst 2 key pair\n"))
		return;
	a = fixture_passes(&fx, &to1, 10);
	b = fixture_passes(&fx, &to2, 10);
	c = fixture_passes(&fx, &to1, 5);
	d = fixture_passes(&fx, &p1, 10);
	e = fixture_passes(&fx, &p2, 10);
	f = fixture_passes(&fx, &p1, 5);
	doc_init(&doc);
	err = policy_load(&fx.st.maps, &doc, false);
	key.policy = err || doc.n_rules < 1 ? 0 : doc.rules[0].id;
	for (int i = 0; i < doc.n_rules; i++)
		if (doc.rules[i].match.cidr.family == SLUICE_FAMILY_IPV4)
			key.policy = doc.rules[i].id;
	inet_pton(AF_INET, "198.51.100.1", &key.addr[0]);
	err = err ?: fixture_bucket(&fx, &key, &bk);
	check(a == 2 && b == 2 && c == 0 && d == 2 && e == 2 && f == 0 && !err && bk.passed == 2 &&
		      bk.dropped == 13,
	      "a source over one destination's limit still reaches another (the cache never "
	      "answers for a key kind)",
	      "v4 dst: %d, other dst %d, first again %d (want 2 2 0); v6 pair: %d %d %d; "
	      "bucket err %d passed %llu dropped %llu (want 2, 13)",
	      a, b, c, d, e, f, err, (unsigned long long)bk.passed, (unsigned long long)bk.dropped);
	doc_free(&doc);
	fixture_close(&fx);
}

/*
 * The table holds a destination key as SLUICE_KEY_DST | 4 with the
 * destination, and a pair's as SLUICE_KEY_PAIR with both addresses; no
 * source key for either.
 */
static void case_layout(void)
{
	struct frame_spec v4 = { .family = 4,
				 .src = "10.81.0.9",
				 .payload = 18,
				 .dst = "198.51.100.9" },
			  v6 = { .family = 6,
				 .src = "2001:db8:81:5::9",
				 .payload = 18,
				 .dst = "2001:db8:ff:6::9" };
	struct sluice_key dst = { .family = SLUICE_FAMILY_IPV4 | SLUICE_KEY_DST, .prefix_len = 32 },
			  src = { .family = SLUICE_FAMILY_IPV4, .prefix_len = 32 },
			  pair = { .family = SLUICE_FAMILY_IPV6 | SLUICE_KEY_PAIR,
				   .prefix_len = 64 };
	struct in6_addr a6;
	struct policy_doc doc;
	struct fixture fx;
	int i, err, has_dst, has_src, has_pair;

	if (!open_conf(&fx, "key layout",
		       "default rate 1/s burst 10\n"
		       "rule 10.81.0.0/16 rate 1/s burst 2 key dst\n"
		       "rule 2001:db8:81::/48 rate 1/s burst 2 key pair\n"))
		return;
	fixture_passes(&fx, &v4, 1);
	fixture_passes(&fx, &v6, 1);
	doc_init(&doc);
	err = policy_load(&fx.st.maps, &doc, false);
	for (i = 0; !err && i < doc.n_rules; i++) {
		if (doc.rules[i].match.cidr.family == SLUICE_FAMILY_IPV4)
			dst.policy = src.policy = doc.rules[i].id;
		else
			pair.policy = doc.rules[i].id;
	}
	inet_pton(AF_INET, "198.51.100.9", &dst.addr[0]);
	inet_pton(AF_INET, "10.81.0.9", &src.addr[0]);
	inet_pton(AF_INET6, "2001:db8:81:5::", &a6);
	memcpy(&pair.addr[0], &a6, 8);
	inet_pton(AF_INET6, "2001:db8:ff:6::", &a6);
	memcpy(&pair.addr[2], &a6, 8);
	has_dst = fixture_has_bucket(&fx, &dst);
	has_src = fixture_has_bucket(&fx, &src);
	has_pair = fixture_has_bucket(&fx, &pair);
	check(!err && has_dst == 1 && has_src == 0 && has_pair == 1 &&
		      fixture_bucket_count(&fx) == 2,
	      "a dst key is the destination under SLUICE_KEY_DST, a pair both /64s under "
	      "SLUICE_KEY_PAIR",
	      "err %d: dst %d, src %d, pair %d (want 1 0 1), %d buckets (want 2)", err, has_dst,
	      has_src, has_pair, fixture_bucket_count(&fx));
	doc_free(&doc);
	fixture_close(&fx);
}

/* The configuration counts the policies with a key kind, none once none has one. */
static void check_key_kinds_flag(struct fixture *fx, const struct policy_doc *doc)
{
	struct settings s = doc->dflt;
	struct sluice_config cfg;
	struct policy_doc plain;
	const char *why;
	int kinds, err;

	kinds = config_read(&fx->st.maps, &cfg) ? -1 : cfg.key_kinds;
	check(kinds == 4, "the configuration counts the policies keyed on more than the source",
	      "key_kinds %d (want 4)", kinds);
	doc_init(&plain);
	s.key_kind = KEY_SRC;
	err = doc_set_default(&plain, &s, &why);
	err = err ?: policy_store(&fx->st.maps, &plain, false);
	kinds = err || config_read(&fx->st.maps, &cfg) ? -1 : cfg.key_kinds;
	check(kinds == 0, "a policy keyed on sources alone says none", "err %d, key_kinds %d", err,
	      kinds);
	doc_free(&plain);
}

/* What the maps hold reads back (show) as the policy written. */
static void case_show(void)
{
	static const char text[] = "default rate 1/s burst 5 key dst\n"
				   "rule 10.0.0.0/8 rate 1/s ipv4-prefix 24 key pair\n"
				   "rule 10.1.0.0/16 rate 1/s proto udp sport 53 key dst\n"
				   "rule 2001:db8::/32 rate 1/s key pair\n"
				   "rule 2001:db9::/32 rate 1/s\n";
	struct policy_doc doc;
	struct fixture fx;
	char *out;
	int err;

	if (!open_conf(&fx, "show of key kinds", text))
		return;
	out = fixture_show(&fx, &doc, &err);
	check(!err && out && strstr(out, "burst 5 key dst\n") &&
		      strstr(out, "rate 1/s ipv4-prefix 24 key pair\n") &&
		      strstr(out, "key dst proto udp sport 53") &&
		      strstr(out, "2001:db8::/32 rate 1/s key pair") &&
		      strstr(out, "2001:db9::/32 rate 1/s\n"),
	      "the maps read back as every key kind written", "err %d, got:\n%s", err,
	      out ? out : "");
	check_key_kinds_flag(&fx, &doc);
	free(out);
	doc_free(&doc);
	fixture_close(&fx);
}

/* Refused with one reason: what needs a source's bucket, and an IPv6 pair past 64 bits. */
static void case_refused(void)
{
	static const char *const bad[] = {
		"default rate 1/s\nrule ::/0 rate 1/s key pair ipv6-prefix 80\n",
		"default rate 1/s key pair ipv6-prefix 96\n",
		"default rate 1/s\nrule 10.0.0.0/8 rate 1/s key dst aggregate /16=5/s\n",
		"default rate 1/s\nrule 10.0.0.0/8 rate 1/s key pair prove tcp\n",
		"default rate 1/s\nrule 10.0.0.0/8 rate 1/s key sideways\n",
	};
	struct policy_doc doc;
	unsigned int i, refused = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		doc_init(&doc);
		refused += doc_from_conf_text(bad[i], &doc) != 0;
		doc_free(&doc);
	}
	doc_init(&doc);
	check(refused == sizeof(bad) / sizeof(bad[0]) &&
		      !doc_from_conf_text("default rate 1/s\nrule 10.0.0.0/8 rate 1/s key pair\n"
					  "rule ::/0 rate 1/s ipv6-prefix 64 key pair\n",
					  &doc),
	      "an IPv6 pair past 64 bits, --aggregate or --prove with a kind, an unknown kind: "
	      "refused",
	      "%u of %zu refused", refused, sizeof(bad) / sizeof(bad[0]));
	doc_free(&doc);
}

/* Every CPU's thread at once, under the real clock. */
struct hammer {
	pthread_t thread;
	int cpu, err;
	struct fixture *fx;
	struct frame frame;
	pthread_barrier_t *start;
	uint64_t begin_ns, end_ns;
};

#define HAMMER_RUNS   10
#define HAMMER_REPEAT 100000

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	int i, ret;

	h->err = pin_thread_to_cpu(h->cpu);
	pthread_barrier_wait(h->start);
	h->begin_ns = monotonic_ns();
	for (i = 0; i < HAMMER_RUNS && !h->err; i++) {
		ret = fixture_run(h->fx, h->frame.data, h->frame.len, HAMMER_REPEAT);
		if (ret < 0)
			h->err = ret;
	}
	h->end_ns = monotonic_ns();
	return NULL;
}

/*
 * One destination (or one pair) from every CPU at once, a source of its
 * own per CPU for dst: never more than burst + rate x elapsed (+1 per
 * CPU), and more than the burst.
 */
static void hammer_kind(const char *name, uint8_t kind, int v6)
{
	const uint64_t rate = 100000, burst = 1000;
	int ncpu = online_cpus(), i, err = 0;
	uint64_t first = UINT64_MAX, last = 0, passed, dropped, ceiling;
	struct frame_spec spec = { .family = v6 ? 6 : 4, .payload = 18 };
	struct sluice_stats st = { 0 };
	pthread_barrier_t start;
	struct hammer *h;
	struct fixture fx;
	struct settings s;
	char src[64];

	settings_per_second(&s, rate, burst);
	s.key_kind = kind;
	h = calloc((size_t)ncpu, sizeof(*h));
	if (!h || fixture_open_real_clock(&fx, &s, 64)) {
		check(false, name, "cannot load");
		free(h);
		return;
	}
	pthread_barrier_init(&start, NULL, (unsigned int)ncpu);
	for (i = 0; i < ncpu; i++) {
		if (v6)
			snprintf(src, sizeof(src), "2001:db8:90::%x", kind == KEY_DST ? i + 1 : 1);
		else
			snprintf(src, sizeof(src), "10.90.0.%d", kind == KEY_DST ? i + 1 : 1);
		spec.src = src;
		h[i] = (struct hammer){ .cpu = i, .fx = &fx, .start = &start };
		err |= frame_build(&h[i].frame, &spec);
	}
	for (i = 0; i < ncpu && !err; i++)
		pthread_create(&h[i].thread, NULL, hammer_run, &h[i]);
	for (i = 0; i < ncpu && !err; i++) {
		pthread_join(h[i].thread, NULL);
		err = h[i].err;
		first = h[i].begin_ns < first ? h[i].begin_ns : first;
		last = h[i].end_ns > last ? h[i].end_ns : last;
	}
	fixture_stats(&fx, &st);
	passed = st.c[SLUICE_CNT_PASSED].packets;
	dropped = st.c[SLUICE_CNT_DROPPED].packets;
	ceiling = burst + rate * (last - first) / NSEC_PER_SEC + (uint64_t)ncpu;
	check(!err && passed <= ceiling && passed > burst &&
		      passed + dropped == (uint64_t)ncpu * HAMMER_RUNS * HAMMER_REPEAT,
	      name, "err %d passed %llu, at most %llu, more than %llu (%d CPUs, %.3f s)", err,
	      (unsigned long long)passed, (unsigned long long)ceiling, (unsigned long long)burst,
	      ncpu, (double)(last - first) / 1e9);
	printf("     %s: %llu passed of %llu over %.3f s on %d CPUs; ceiling %llu\n", name,
	       (unsigned long long)passed, (unsigned long long)(passed + dropped),
	       (double)(last - first) / 1e9, ncpu, (unsigned long long)ceiling);
	pthread_barrier_destroy(&start);
	fixture_close(&fx);
	free(h);
}

void suite_keys(void)
{
	case_dst();
	case_dst_prefix();
	case_pair();
	case_hot_cache();
	case_layout();
	case_show();
	case_refused();
	hammer_kind("--key dst from every CPU, a source each, 100k/s burst 1000: never over",
		    KEY_DST, 0);
	hammer_kind("--key dst IPv6 from every CPU: never over", KEY_DST, 1);
	hammer_kind("--key pair from every CPU, one pair, 100k/s burst 1000: never over", KEY_PAIR,
		    0);
	hammer_kind("--key pair IPv6 from every CPU: never over", KEY_PAIR, 1);
}
