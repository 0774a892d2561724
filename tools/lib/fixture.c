// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* pthread_setaffinity_np */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "sluice_test.skel.h"
#include "text/conf.h"
#include "fixture.h"
#include "maps/percpu.h"
#include "pins/datapath.h"
#include "reads/sources.h"
#include "table_hash.h"

int pin_thread_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The affinity stay_on_this_cpu replaced, for back_to_every_cpu. */
static cpu_set_t affinity_before;

int stay_on_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t one;

	if (cpu < 0 || sched_getaffinity(0, sizeof(affinity_before), &affinity_before))
		return -1;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -1 : cpu;
}

void back_to_every_cpu(void)
{
	sched_setaffinity(0, sizeof(affinity_before), &affinity_before);
}

struct sluice_hot *fixture_hot(struct fixture *fx, int cpu)
{
	struct sluice_hot *c = malloc(sizeof(*c));
	__u32 key = (__u32)cpu;

	if (c && bpf_map_lookup_elem(fx->st.maps.hot, &key, c)) {
		free(c);
		return NULL;
	}
	return c;
}

void settings_per_second(struct settings *s, uint64_t packets, uint64_t burst)
{
	settings_default(s);
	s->rate.amount = packets;
	s->rate.period_ns = NSEC_PER_SEC;
	s->rate.unit = SLUICE_UNIT_PACKETS;
	s->burst.value = burst;
}

int fixture_configure(struct fixture *fx, const struct settings *s)
{
	struct policy_doc doc;
	const char *why;
	int err;

	err = policy_load(&fx->st.maps, &doc, true);
	if (!err)
		err = doc_set_default(&doc, s, &why) ?: policy_store(&fx->st.maps, &doc, false);
	doc_free(&doc);
	return err;
}

int fixture_store(struct fixture *fx, struct policy_doc *doc)
{
	const char *why;

	if (doc_validate(doc, &why))
		return -EINVAL;
	return policy_store(&fx->st.maps, doc, true);
}

/* The test-clock fixture opened last, whose clock the library's steps on buckets read. */
static const struct fixture *clock_owner;

static uint64_t fixture_now_ns(void)
{
	return clock_owner && clock_owner->test ? clock_owner->test->bss->test_now_ns
						: monotonic_ns();
}

/* Both builds share their map and program names, so the rest is common. */
static int fixture_finish_open(struct fixture *fx, struct bpf_object *obj, uint32_t max_sources,
			       struct policy_doc *doc)
{
	const char *why;

	fx->prog_fd = bpf_program__fd(bpf_object__find_program_by_name(obj, "sluice_xdp"));
	state_from_object(obj, &fx->st);
	if (fx->test) {
		clock_owner = fx;
		fx->st.maps.now_ns = fixture_now_ns;
		fx->sync.prog_fd = bpf_program__fd(fx->test->progs.sluice_fleet_sync);
		fx->sync.batch_fd = bpf_map__fd(fx->test->maps.fleet_batch);
		fx->st.maps.sync = &fx->sync;
	}
	if (doc_validate(doc, &why))
		return -EINVAL;
	return policy_create(&fx->st.maps, max_sources, doc);
}

int fixture_open_policy(struct fixture *fx, struct policy_doc *doc, uint32_t max_sources)
{
	int err;

	memset(fx, 0, sizeof(*fx));
	fx->test = sluice_test__open();
	if (!fx->test)
		return -errno;
	err = state_prepare(fx->test->obj, max_sources);
	if (!err)
		err = sluice_test__load(fx->test);
	if (!err)
		err = fixture_finish_open(fx, fx->test->obj, max_sources, doc);
	if (err)
		fixture_close(fx);
	return err;
}

int fixture_open_test_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources)
{
	struct policy_doc doc;

	doc_init(&doc);
	/* A default that does not compile is refused by fixture_finish_open. */
	doc_set_default(&doc, s, &(const char *){ NULL });
	return fixture_open_policy(fx, &doc, max_sources);
}

int fixture_open_build(struct fixture *fx, const struct settings *s, uint32_t max_sources,
		       bool compat)
{
	struct policy_doc doc;
	int err;

	memset(fx, 0, sizeof(*fx));
	doc_init(&doc);
	doc_set_default(&doc, s, &(const char *){ NULL });
	fx->real = datapath_open(compat);
	if (!fx->real)
		return -errno;
	err = state_prepare(fx->real->obj, max_sources);
	if (!err)
		err = sluice__load(fx->real);
	if (!err)
		err = fixture_finish_open(fx, fx->real->obj, max_sources, &doc);
	if (err)
		fixture_close(fx);
	return err;
}

int fixture_open_real_clock(struct fixture *fx, const struct settings *s, uint32_t max_sources)
{
	return fixture_open_build(fx, s, max_sources, !kernel_casts_xdp_ctx());
}

void fixture_close(struct fixture *fx)
{
	if (clock_owner == fx)
		clock_owner = NULL;
	if (fx->hot_map)
		munmap(fx->hot_map, fx->hot_bytes);
	sluice_test__destroy(fx->test);
	sluice__destroy(fx->real);
	memset(fx, 0, sizeof(*fx));
}

void fixture_set_clock(struct fixture *fx, uint64_t now_ns)
{
	/* Jiffies tick as the kernel's do, in step with the test's time. */
	fx->test->bss->test_jiffies = now_ns / jiffy_ns();
	fx->test->bss->test_now_ns = now_ns;
}

void fixture_set_jiffies_at(struct fixture *fx, uint64_t ns)
{
	fx->test->bss->test_jiffies = ns / jiffy_ns();
}

void fixture_set_early_lag(struct fixture *fx, uint64_t lag_ns)
{
	fx->test->bss->test_early_lag_ns = lag_ns;
}

/* The hot map's values, mapped once (their stride is the value's size, a multiple of 8). */
static int hot_map_open(struct fixture *fx)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *m;

	if (fx->hot_map)
		return 0;
	if (bpf_obj_get_info_by_fd(fx->st.maps.hot, &info, &len))
		return -errno;
	fx->hot_bytes = (size_t)info.max_entries * sizeof(struct sluice_hot);
	m = mmap(NULL, fx->hot_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fx->st.maps.hot, 0);
	if (m == MAP_FAILED)
		return -errno;
	fx->hot_map = m;
	return 0;
}

/* Read from the mapped values: a head without copying the CPU's 2 MiB of lines. */
int fixture_hot_head(struct fixture *fx, int cpu, struct sluice_hot_head *head)
{
	int err = hot_map_open(fx);

	if (err)
		return err;
	if (cpu < 0 || (size_t)cpu >= fx->hot_bytes / sizeof(struct sluice_hot))
		return -ENOENT;
	*head = ((struct sluice_hot *)fx->hot_map + cpu)->head;
	return 0;
}

int fixture_hot_forget(struct fixture *fx)
{
	struct sluice_hot *c;
	size_t cpu;
	int err = hot_map_open(fx);

	if (err)
		return err;
	for (cpu = 0; cpu < fx->hot_bytes / sizeof(*c); cpu++) {
		c = (struct sluice_hot *)fx->hot_map + cpu;
		memset(c->line, 0, sizeof(c->line));
	}
	return 0;
}

int fixture_run(struct fixture *fx, const void *data, size_t len, uint32_t repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = (__u32)len,
		    .repeat = repeat);

	if (bpf_prog_test_run_opts(fx->prog_fd, &opts))
		return -errno;
	return (int)opts.retval;
}

int fixture_run_out(struct fixture *fx, const void *data, size_t len, void *out, size_t out_len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = (__u32)len,
		    .data_out = out, .data_size_out = (__u32)out_len, .repeat = 1);

	if (bpf_prog_test_run_opts(fx->prog_fd, &opts))
		return -errno;
	return (int)opts.retval;
}

int fixture_stats(struct fixture *fx, struct sluice_stats *sum)
{
	return stats_read(fx->st.stats_fd, sum);
}

uint64_t fixture_counter(struct fixture *fx, enum sluice_counter which)
{
	struct sluice_stats st = {};

	fixture_stats(fx, &st);
	return st.c[which].packets;
}

int fixture_bucket_count(struct fixture *fx)
{
	uint64_t n;

	return table_count(fx->st.maps.buckets, &n) ? -1 : (int)n;
}

int fixture_bucket(struct fixture *fx, const struct sluice_key *key, struct sluice_bucket *b)
{
	struct sluice_config cfg;
	int err = config_read(&fx->st.maps, &cfg);

	return err ? err : table_lookup(fx->st.maps.buckets, &cfg, key, b);
}

int fixture_has_bucket(struct fixture *fx, const struct sluice_key *key)
{
	struct sluice_bucket b;

	return !fixture_bucket(fx, key, &b);
}

int fixture_bucket_way(struct fixture *fx, const struct sluice_key *key, __u32 *set,
		       struct sluice_set *s)
{
	struct sluice_config cfg;
	struct table_place pl;
	int i, w;

	if (config_read(&fx->st.maps, &cfg))
		return -1;
	table_place(&pl, key, cfg.table_seed, cfg.table_sets);
	for (i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(fx->st.maps.buckets, &pl.set[i], s))
			return -1;
		/* A paired key's bucket is in an even way, its key way after it. */
		for (w = 0; w < SLUICE_SET_WAYS; w++)
			if (s->ways.tag[w] == (pl.tag | (__u32)i) && s->ways.ext[w] == pl.ext) {
				*set = pl.set[i];
				return w;
			}
	}
	return -1;
}

/* A policy from config text, through the same parser `sluice apply` uses. */
int doc_from_conf_text(const char *text, struct policy_doc *doc)
{
	char path[] = "/tmp/sluice-test-policy.XXXXXX", err[512];
	int fd = mkstemp(path), ret = -1;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) == (ssize_t)strlen(text))
		ret = conf_parse(path, doc, err, sizeof(err));
	if (ret)
		fprintf(stderr, "policy: %s\n", err);
	close(fd);
	unlink(path);
	return ret;
}

int fixture_open_conf(struct fixture *fx, const char *text, uint32_t max_sources, uint64_t now_ns)
{
	struct policy_doc doc;
	int err;

	err = doc_from_conf_text(text, &doc);
	if (err)
		return err;
	err = fixture_open_policy(fx, &doc, max_sources);
	doc_free(&doc);
	if (!err)
		fixture_set_clock(fx, now_ns);
	return err;
}

char *fixture_show(struct fixture *fx, struct policy_doc *doc, int *err)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	doc_init(doc);
	*err = policy_load(&fx->st.maps, doc, false);
	if (*err)
		return NULL;
	f = open_memstream(&out, &len);
	if (!f) {
		*err = -errno;
		return NULL;
	}
	conf_write(f, doc);
	fclose(f);
	return out;
}

int fixture_passes(struct fixture *fx, const struct frame_spec *spec, int n)
{
	struct frame f;
	int i, passed = 0;

	if (frame_build(&f, spec))
		return -1;
	for (i = 0; i < n; i++)
		passed += fixture_run(fx, f.data, f.len, 1) == XDP_PASS;
	return passed;
}
