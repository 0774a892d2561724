// SPDX-License-Identifier: GPL-2.0
/*
 * The source table under churn from every CPU at once (production build,
 * real clock): a table of 16 ways, sources whose buckets refill at once
 * (16M/s) so their ways keep changing hands, and among them one source
 * over its own rule's limit whose bucket must stay exact. Afterwards every
 * way must be whole: its tag the key's, in one of the key's two sets; and
 * every set's filter word exactly its ways' tag bits.
 */
#include <arpa/inet.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fixture.h"
#include "frames.h"
#include "harness.h"
#include "reads/counters.h"
#include "suites.h"
#include "table_hash.h"

#define CHURN_ROUNDS 40000
/* Per CPU, each used in turn: a small table's few ways, or more than a large table holds. */
#define CHURN_SMALL 256
#define CHURN_LARGE CHURN_ROUNDS
#define HOT_RATE    1000
#define HOT_BURST   10

struct churner {
	pthread_t thread;
	int cpu;
	struct fixture *fx;
	const struct frame *hot;
	struct frame *churn;
	int n_churn;
	int ipv6; /* this CPU churns IPv6 sources (two ways each) */
	pthread_barrier_t *start;
	uint64_t begin_ns, end_ns, hot_passed, sent;
	int err;
};

/* A churning source, then the hot one, round after round. */
static void *churn_run(void *arg)
{
	struct churner *c = arg;
	const struct frame *f;
	int i, ret;

	c->err = pin_thread_to_cpu(c->cpu);
	pthread_barrier_wait(c->start);
	c->begin_ns = monotonic_ns();
	for (i = 0; i < CHURN_ROUNDS && !c->err; i++) {
		f = &c->churn[i % c->n_churn];
		ret = fixture_run(c->fx, f->data, f->len, 1);
		ret = ret < 0 ? ret : fixture_run(c->fx, c->hot->data, c->hot->len, 1);
		if (ret < 0)
			c->err = ret;
		c->hot_passed += ret == XDP_PASS;
		c->sent += 2;
	}
	c->end_ns = monotonic_ns();
	return NULL;
}

/* A key the test sends: the churners' (10.0.0.0/8, 2001:db8::/32) or the hot source's. */
static int churned_key(const struct sluice_key *key)
{
	if (key->family == SLUICE_FAMILY_IPV6)
		return key->addr[0] == htonl(0x20010db8);
	return key->family == SLUICE_FAMILY_IPV4 &&
	       ((ntohl(key->addr[0]) >> 24) == 10 || key->addr[0] == htonl(0xc0000201));
}

/*
 * Bucket ways that name no key the test sent (the churners' sources in
 * 10.0.0.0/8, and the hot source): a tag, ext or key way written half for
 * one source and half for another, or a key placed in neither of its sets.
 */
static int torn_ways(struct fixture *fx, int *valid)
{
	struct sluice_config cfg;
	struct table_place pl;
	struct sluice_key key;
	struct sluice_set s;
	__u32 i;
	int w, torn = 0;

	*valid = 0;
	if (config_read(&fx->st.maps, &cfg))
		return -1;
	for (i = 0; i < cfg.table_sets; i++) {
		if (bpf_map_lookup_elem(fx->st.maps.buckets, &i, &s))
			return -1;
		for (w = 0; w < SLUICE_SET_WAYS; w++) {
			if (!s.ways.tag[w] || s.ways.ext[w] == SLUICE_EXT_KEY)
				continue;
			(*valid)++;
			if (table_key_at(&key, &s, i, w, cfg.table_seed, cfg.table_sets)) {
				torn++;
				continue;
			}
			table_place(&pl, &key, cfg.table_seed, cfg.table_sets);
			torn += !churned_key(&key) || (i != pl.set[0] && i != pl.set[1]);
		}
	}
	return torn;
}

/*
 * Sets whose filter word (struct sluice_filter) is not exactly the bits of
 * their bucket ways' tags, computed here from the ways: a missing bit
 * would hide a bucket (a wrong new source), an extra one wastes lookups.
 */
static int filter_wrong(struct fixture *fx)
{
	struct sluice_config cfg;
	struct sluice_filter f;
	struct sluice_set s;
	__u32 i, index, want;
	int w, wrong = 0;

	if (config_read(&fx->st.maps, &cfg))
		return -1;
	for (i = 0; i < cfg.table_sets; i++) {
		index = i / SLUICE_FILTER_SETS;
		if (bpf_map_lookup_elem(fx->st.maps.buckets, &i, &s) ||
		    bpf_map_lookup_elem(fx->st.filter_fd, &index, &f))
			return -1;
		want = 0;
		for (w = 0; w < SLUICE_SET_WAYS; w++)
			if (s.ways.tag[w] && s.ways.ext[w] != SLUICE_EXT_KEY)
				want |= table_filter_bits(s.ways.tag[w]);
		wrong += f.mask[i % SLUICE_FILTER_SETS] != want;
	}
	return wrong;
}

static int churn_frames(struct churner *c)
{
	struct frame_spec spec = { .family = c->ipv6 ? 6 : 4, .payload = 18 };
	char addr[48];
	int i;

	c->churn = calloc((size_t)c->n_churn, sizeof(*c->churn));
	if (!c->churn)
		return -1;
	for (i = 0; i < c->n_churn; i++) {
		if (c->ipv6)
			snprintf(addr, sizeof(addr), "2001:db8:%x:%x::1", c->cpu, i);
		else
			snprintf(addr, sizeof(addr), "10.%d.%d.%d", 60 + c->cpu, i / 250,
				 i % 250 + 1);
		spec.src = addr;
		frame_build(&c->churn[i], &spec);
	}
	return 0;
}

/*
 * All CPUs churn sources through a table while one source stays over its
 * limit: a small table (every key in a key way), or a large one (IPv4 keys
 * inline) that odd CPUs churn with IPv6 pairs, so each kind of way gives
 * way to the other.
 */
static void case_churn(__u32 max_sources)
{
	int large = max_sources > CHURN_SMALL;
	struct frame_spec hot_spec = { .family = 4, .src = "192.0.2.1", .payload = 18 };
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i, err = 0, torn, valid;
	uint64_t first = UINT64_MAX, last = 0, hot = 0, sent = 0, ceiling;
	struct sluice_stats st = {};
	pthread_barrier_t start;
	struct churner *c;
	struct policy_doc doc = {};
	struct fixture fx;
	struct settings s;
	struct frame hot_frame;

	char policy[160];

	snprintf(policy, sizeof(policy),
		 "default rate 16M/s burst 1 new-sources 16M/s\n"
		 "rule 192.0.2.0/24 rate %d/s burst %d new-sources 16M/s\n",
		 HOT_RATE, HOT_BURST);
	settings_per_second(&s, 1, 1);
	frame_build(&hot_frame, &hot_spec);
	c = calloc((size_t)ncpu, sizeof(*c));
	if (!c || fixture_open_real_clock(&fx, &s, max_sources)) {
		check(false, "table churn", "cannot load");
		free(c);
		return;
	}
	if (doc_from_conf_text(policy, &doc) || fixture_store(&fx, &doc)) {
		check(false, "table churn", "cannot apply the policy");
		goto out;
	}
	pthread_barrier_init(&start, NULL, (unsigned int)ncpu);
	for (i = 0; i < ncpu; i++) {
		c[i] = (struct churner){ .cpu = i,
					 .fx = &fx,
					 .hot = &hot_frame,
					 .start = &start,
					 .n_churn = large ? CHURN_LARGE : CHURN_SMALL,
					 .ipv6 = large && (i & 1) };
		err = err ?: churn_frames(&c[i]);
	}
	for (i = 0; i < ncpu && !err; i++)
		pthread_create(&c[i].thread, NULL, churn_run, &c[i]);
	for (i = 0; i < ncpu && !err; i++) {
		pthread_join(c[i].thread, NULL);
		err = err ?: c[i].err;
		first = c[i].begin_ns < first ? c[i].begin_ns : first;
		last = c[i].end_ns > last ? c[i].end_ns : last;
		hot += c[i].hot_passed;
		sent += c[i].sent;
	}
	fixture_stats(&fx, &st);
	ceiling = HOT_BURST + HOT_RATE * (last - first) / NSEC_PER_SEC + (uint64_t)ncpu;
	check(!err && hot <= ceiling && hot > HOT_BURST,
	      large ? "all CPUs churn a large table, IPv4 and IPv6: the source over its limit stays exact"
		    : "all CPUs churn a small table: the source over its limit stays exact",
	      "err %d hot passed %llu, at most %llu (%.3f s)", err, (unsigned long long)hot,
	      (unsigned long long)ceiling, (double)(last - first) / 1e9);
	check(st.c[SLUICE_CNT_PASSED].packets + st.c[SLUICE_CNT_DROPPED].packets == sent &&
		      fixture_counter(&fx, SLUICE_CNT_EVICTED) > 0,
	      "every churned packet counted once, ways changed hands",
	      "passed %llu + dropped %llu of %llu, %llu evicted",
	      (unsigned long long)st.c[SLUICE_CNT_PASSED].packets,
	      (unsigned long long)st.c[SLUICE_CNT_DROPPED].packets, (unsigned long long)sent,
	      (unsigned long long)fixture_counter(&fx, SLUICE_CNT_EVICTED));
	torn = torn_ways(&fx, &valid);
	check(torn == 0 && valid > 0, "after the churn every way is whole: its key's tag and set",
	      "%d of %d ways torn", torn, valid);
	torn = filter_wrong(&fx);
	check(torn == 0, "after the churn each set's filter word is exactly its ways' tag bits",
	      "%d sets differ", torn);
	printf("     churn: %llu packets on %d CPUs in %.3f s, %llu ways changed hands; the hot "
	       "source passed %llu (ceiling %llu)\n",
	       (unsigned long long)sent, ncpu, (double)(last - first) / 1e9,
	       (unsigned long long)fixture_counter(&fx, SLUICE_CNT_EVICTED),
	       (unsigned long long)hot, (unsigned long long)ceiling);
	pthread_barrier_destroy(&start);
out:
	doc_free(&doc);
	fixture_close(&fx);
	for (i = 0; i < ncpu; i++)
		free(c[i].churn);
	free(c);
}

void suite_table(void)
{
	case_churn(8);
	/* 4846 sets, IPv4 keys inline; 80,000 sources pass through its 58,152 ways. */
	case_churn(50000);
}
