// SPDX-License-Identifier: GPL-2.0
/*
 * The fleet's datapath (docs/fleet.md), under the test clock: the sync
 * program reads a bucket, moves its TAT forward (never back) and charges
 * it; fleet debt past the burst survives a refusal only while an agent
 * runs; a source crossing its share of a period reaches the ring once.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "sluice.h"
#include "sluice_test.skel.h"
#include "fixture.h"
#include "fleet/plan.h"
#include "frames.h"
#include "harness.h"
#include "suites.h"

#define MS (1000000ULL << SLUICE_TIME_SHIFT) /* a millisecond of meter time */

static struct sluice_key source_key(const char *addr)
{
	struct sluice_key k = { .family = SLUICE_FAMILY_IPV4, .prefix_len = 32 };

	inet_pton(AF_INET, addr, &k.addr[0]);
	return k;
}

/* One sync entry; returns it as the program left it. */
static struct sluice_fleet_entry sync_entry(struct fixture *fx, const struct sluice_fleet_entry *in)
{
	static struct sluice_fleet_batch b;
	unsigned char frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .data_in = frame, .data_size_in = sizeof(frame),
		    .repeat = 1);
	int fd = bpf_map__fd(fx->test->maps.fleet_batch);
	__u32 zero = 0;

	memset(&b, 0, sizeof(b));
	b.count = 1;
	b.e[0] = *in;
	if (bpf_map_update_elem(fd, &zero, &b, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(fx->test->progs.sluice_fleet_sync), &run) ||
	    bpf_map_lookup_elem(fd, &zero, &b))
		b.e[0].found = -99;
	return b.e[0];
}

/* One sync entry: op on key with arg. */
static struct sluice_fleet_entry sync_one(struct fixture *fx, const struct sluice_key *key,
					  __u32 op, __u64 arg)
{
	struct sluice_fleet_entry in = { .key = *key, .op = op, .arg = arg };

	return sync_entry(fx, &in);
}

static int candidates;
static struct sluice_fleet_candidate last;

static int on_candidate(void *ctx, void *data, size_t len)
{
	(void)ctx;
	if (len >= sizeof(last))
		memcpy(&last, data, sizeof(last));
	candidates++;
	return 0;
}

static void case_sync(struct fixture *fx, struct frame *f, const struct sluice_key *key,
		      const struct settings *s)
{
	struct sluice_key none = source_key("198.51.100.99");
	struct sluice_fleet_entry e;

	e = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.found == 1 && e.passed == 1 && e.tat_delta == MS,
	      "fleet READ: the bucket's passed count and TAT", "found %d passed %llu delta %llu",
	      e.found, (unsigned long long)e.passed, (unsigned long long)e.tat_delta);
	e = sync_one(fx, &none, SLUICE_FLEET_READ, 0);
	check(e.found == 0, "fleet READ: a source without a bucket is not found", "found %d",
	      e.found);
	e = sync_one(fx, key, SLUICE_FLEET_ADVANCE, 500 * MS);
	check(e.found == 1 && e.tat_delta == 500 * MS,
	      "fleet ADVANCE moves the TAT to now + 500 ms", "delta %llu ms",
	      (unsigned long long)(e.tat_delta / MS));
	e = sync_one(fx, key, SLUICE_FLEET_ADVANCE, 100 * MS);
	check(e.tat_delta == 500 * MS, "fleet ADVANCE never moves a TAT back", "delta %llu ms",
	      (unsigned long long)(e.tat_delta / MS));
	e = sync_one(fx, key, SLUICE_FLEET_CHARGE, 50 * MS);
	check(e.tat_delta == 550 * MS, "fleet CHARGE adds to the TAT", "delta %llu ms",
	      (unsigned long long)(e.tat_delta / MS));
	/* An agent runs: a refused packet keeps the fleet's debt past the burst. */
	fx->test->data_fleet->fleet_hint.live_until = ~0ULL;
	fx->test->data_fleet->fleet_hint.debt_max = 10000 * MS;
	check(fixture_run(fx, f->data, f->len, 1) == XDP_DROP,
	      "a source the fleet moved 550 ms ahead is refused", "passed");
	e = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.tat_delta == 550 * MS, "with an agent, a refusal keeps the fleet's debt",
	      "delta %llu ms", (unsigned long long)(e.tat_delta / MS));
	/*
	 * No agent, or one killed (its live_until passed, not moved on): the
	 * cap of a policy change, one burst (100 ms at 1000/s). The same
	 * settings again, a new generation: past the over-limit cache.
	 */
	fx->test->data_fleet->fleet_hint.live_until = 1;
	fixture_configure(fx, s);
	fixture_run(fx, f->data, f->len, 1);
	e = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.tat_delta <= 100 * MS,
	      "without a live agent (live_until passed), a refusal caps debt at one burst",
	      "delta %llu ms", (unsigned long long)(e.tat_delta / MS));
}

/*
 * A sync step whose every compare-and-swap a meter step beats (the test
 * build's rival, bpf/table.h test_fleet_rivals: one unit on the TAT between
 * the step's read and its swap) writes nothing and says so: no delta it
 * never wrote. One lost race, then a won one, moves the TAT as asked.
 */
static void case_contended(struct fixture *fx, const struct sluice_key *key)
{
	volatile __u32 *rivals = &fx->test->bss->test_fleet_rivals;
	struct sluice_fleet_entry e, before;
	__u32 tries;

	before = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	*rivals = 1000;
	e = sync_one(fx, key, SLUICE_FLEET_ADVANCE, 900 * MS);
	tries = 1000 - *rivals;
	*rivals = 0;
	check(e.found == SLUICE_FLEET_CONTENDED && !e.tat_delta && !e.passed,
	      "fleet ADVANCE losing every race reports nothing written",
	      "found %d delta %llu ms passed %llu", e.found, (unsigned long long)(e.tat_delta / MS),
	      (unsigned long long)e.passed);
	e = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(before.found == 1 && e.tat_delta == before.tat_delta + tries && tries > 1,
	      "... and the TAT holds the rivals' steps alone",
	      "delta %llu, was %llu, %u rival steps", (unsigned long long)e.tat_delta,
	      (unsigned long long)before.tat_delta, tries);
	*rivals = 1000;
	e = sync_one(fx, key, SLUICE_FLEET_CHARGE, 50 * MS);
	*rivals = 0;
	check(e.found == SLUICE_FLEET_CONTENDED && !e.tat_delta,
	      "fleet CHARGE losing every race reports nothing written", "found %d delta %llu",
	      e.found, (unsigned long long)e.tat_delta);
	*rivals = 1;
	e = sync_one(fx, key, SLUICE_FLEET_ADVANCE, 900 * MS);
	*rivals = 0;
	before = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.found == 1 && e.tat_delta == 900 * MS && before.tat_delta == 900 * MS,
	      "fleet ADVANCE losing one race, then winning, moves the TAT",
	      "found %d delta %llu ms, then read %llu ms", e.found,
	      (unsigned long long)(e.tat_delta / MS), (unsigned long long)(before.tat_delta / MS));
}

/*
 * A change's rebase (SLUICE_FLEET_CAP with was_tat and to_tat): the TAT the
 * walk computed, later or earlier, while the bucket still holds what the
 * walk read; else, a packet having moved it since, only the cap.
 */
static void case_rebase(struct fixture *fx, const struct sluice_key *key, uint64_t now_ns)
{
	__u64 now = now_ns << SLUICE_TIME_SHIFT;
	struct sluice_fleet_entry in = { .key = *key, .op = SLUICE_FLEET_CAP, .arg = 100 * MS };
	struct sluice_fleet_entry e, read;

	read = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	in.was_tat = now + read.tat_delta;
	in.to_tat = now + 2000 * MS;
	e = sync_entry(fx, &in);
	read = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.found == 1 && read.tat_delta == 2000 * MS,
	      "fleet CAP with the TAT the walk read: set to the rebased one, even later",
	      "found %d, then %llu ms ahead", e.found, (unsigned long long)(read.tat_delta / MS));
	in.to_tat = now + 5000 * MS; /* was_tat is stale now */
	e = sync_entry(fx, &in);
	read = sync_one(fx, key, SLUICE_FLEET_READ, 0);
	check(e.found == 1 && read.tat_delta == 100 * MS,
	      "fleet CAP of a bucket moved since the walk read it: capped alone",
	      "found %d, then %llu ms ahead", e.found, (unsigned long long)(read.tat_delta / MS));
}

static void case_candidates(struct fixture *fx, struct frame *f, const struct sluice_key *key,
			    uint64_t now_ns)
{
	struct ring_buffer *rb;
	int i, after_share = -1;

	rb = ring_buffer__new(bpf_map__fd(fx->test->maps.fleet_ring), on_candidate, NULL, NULL);
	check(rb != NULL, "the fleet ring opens", "errno %d", errno);
	if (!rb)
		return;
	fleet_hint_plan(100000000, 3, &fx->test->data_fleet->fleet_hint);
	fx->test->data_fleet->fleet_hint.live_until = ~0ULL;
	/* 1000/s for 40 ms, within one period: crossing the 22-packet share once. */
	now_ns = (now_ns | ((1ULL << 30) - 1)) + 1; /* the start of a period (2^30 / 16 ns) */
	for (i = 0; i < 40; i++) {
		fixture_set_clock(fx, now_ns + (uint64_t)i * 1000000);
		fixture_run(fx, f->data, f->len, 1);
		ring_buffer__consume(rb);
		if (candidates && after_share < 0)
			after_share = i + 1;
	}
	check(candidates == 1 && !memcmp(&last.key, key, sizeof(*key)),
	      "a source crossing its share reaches the ring once per period", "%d records",
	      candidates);
	check(after_share >= 20 && after_share <= 24, "at its share: 22 packets of 1000/s in 67 ms",
	      "after %d packets", after_share);
	fx->test->data_fleet->fleet_hint.live_until = 0;
	ring_buffer__free(rb);
}

/* The way of key's bucket, its set in *set, or -1. */
static int bucket_way(struct fixture *fx, const struct sluice_key *key, __u32 *set)
{
	struct sluice_set st;

	return fixture_bucket_way(fx, key, set, &st);
}

/* Way w of set's word in map `fleet_usage`: period tag << 24 | units. */
static __u32 usage_word(struct fixture *fx, __u32 set, int w)
{
	struct sluice_fleet_usage u = {};

	bpf_map_lookup_elem(bpf_map__fd(fx->test->maps.fleet_usage), &set, &u);
	return u.way[w];
}

/*
 * A way given to a new source starts with no fleet usage, not the last
 * source's for the rest of the period. One set (a table of one source):
 * A passes 10 packets, then five others fill the set's other pairs, all
 * idle at once (a full burst each); B, in the same period, takes the
 * oldest, A's way.
 */
static void case_usage_handover(void)
{
	struct frame_spec spec = { .family = 4, .payload = 18 };
	struct sluice_key a = source_key("198.51.100.1"), b = source_key("198.51.100.50");
	uint64_t t0 = (100ULL * NSEC_PER_SEC | ((1ULL << 30) - 1)) + 1; /* a period's start */
	__u32 set_a = 0, set_b = 0, was, now;
	int i, way_a, way_b;
	struct fixture fx;
	struct settings s;
	struct frame f;
	char src[32];

	settings_per_second(&s, 100000, 100);
	if (fixture_open_test_clock(&fx, &s, 1)) {
		check(0, "fleet usage: the test-clock program loads", "failed");
		return;
	}
	fleet_hint_plan(100000000, 3, &fx.test->data_fleet->fleet_hint);
	fx.test->data_fleet->fleet_hint.live_until = ~0ULL;
	spec.src = "198.51.100.1";
	frame_build(&f, &spec);
	for (i = 0; i < 10; i++) {
		fixture_set_clock(&fx, t0 + (uint64_t)i * 1000);
		fixture_run(&fx, f.data, f.len, 1);
	}
	way_a = bucket_way(&fx, &a, &set_a);
	was = way_a < 0 ? 0 : usage_word(&fx, set_a, way_a);
	fixture_set_clock(&fx, t0 + 10000000);
	for (i = 2; i <= 6; i++) {
		snprintf(src, sizeof(src), "198.51.100.%d", i);
		spec.src = src;
		frame_build(&f, &spec);
		fixture_run(&fx, f.data, f.len, 1);
	}
	fixture_set_clock(&fx, t0 + 20000000);
	spec.src = "198.51.100.50";
	frame_build(&f, &spec);
	fixture_run(&fx, f.data, f.len, 1);
	way_b = bucket_way(&fx, &b, &set_b);
	check(way_a >= 0 && (was & 0xffffff) >= 9 && !fixture_has_bucket(&fx, &a) &&
		      way_b == way_a && set_b == set_a,
	      "fleet usage: a new source takes the way of one that used it this period",
	      "A in way %d (usage %#x), B in way %d of set %u (A's set %u), A %s", way_a, was,
	      way_b, set_b, set_a, fixture_has_bucket(&fx, &a) ? "kept" : "gone");
	now = way_b < 0 ? ~0U : usage_word(&fx, set_b, way_b);
	check(now == 0, "fleet usage: the new source starts with none of the last one's",
	      "usage %#x, A left %#x", now, was);
	fixture_set_clock(&fx, t0 + 20001000);
	fixture_run(&fx, f.data, f.len, 1);
	now = way_b < 0 ? ~0U : usage_word(&fx, set_b, way_b);
	check(now != 0 && (now & 0xffffff) <= (was & 0xffffff) / 9,
	      "fleet usage: then counts its own packets alone", "usage %#x after one, A's 9: %#x",
	      now, was);
	fixture_close(&fx);
}

void suite_fleet(void)
{
	struct frame_spec spec = { .family = 4, .src = "198.51.100.7", .payload = 18 };
	struct sluice_key key = source_key("198.51.100.7");
	uint64_t now_ns = 10 * NSEC_PER_SEC;
	struct fixture fx;
	struct settings s;
	struct frame f;

	settings_per_second(&s, 1000, 100);
	if (fixture_open_test_clock(&fx, &s, 4096)) {
		check(0, "fleet: the test-clock program loads", "failed");
		return;
	}
	frame_build(&f, &spec);
	fixture_set_clock(&fx, now_ns);
	check(fixture_run(&fx, f.data, f.len, 1) == XDP_PASS, "fleet: the first packet passes",
	      "refused");
	case_sync(&fx, &f, &key, &s);
	case_contended(&fx, &key);
	case_rebase(&fx, &key, now_ns);
	case_candidates(&fx, &f, &key, now_ns + 20 * NSEC_PER_SEC);
	fixture_close(&fx);
	case_usage_handover();
}
