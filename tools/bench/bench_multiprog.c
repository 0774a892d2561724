// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-bench-multiprog: what libxdp's dispatcher (attach --multiprog)
 * costs per packet, from BPF_PROG_TEST_RUN with `repeat` on a 64-byte IPv4
 * UDP frame. No interface is touched: the dispatcher is libxdp's own object
 * (xdp-dispatcher.o), configured as libxdp configures it, and sluice is
 * loaded as the extension that replaces one of its functions, as libxdp
 * loads it. Three limiters with the same policy, each with maps of its own:
 *
 * - direct: sluice's program, as a plain attach runs it;
 * - alone: sluice the only program of a dispatcher. libxdp then replaces the
 *   dispatcher's main function itself, so this is the extension's call;
 * - second: sluice in the second slot, after a slot whose stub returns at
 *   once and chains on (another program at its cheapest): the dispatcher's
 *   loop, two calls and the chain-call checks.
 *
 * Two paths: a packet under its limit (passed) and one over it, answered by
 * the over-limit cache (sluice's cheapest path, where a fixed cost weighs
 * most). Each round times the three in turn; the ratios to direct are taken
 * within the round; medians and min-max over the rounds are printed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/prog_dispatcher.h>
/* sluice.h before the skeleton: the fleet hint's type */
#include "sluice.h"
#include "sluice.skel.h"
#include "frames.h"
#include "maps/policy_maps.h"
#include "pins/multiprog.h"
#include "pins/datapath.h"
#include "pins/state.h"
#include "policy/policy.h"

#ifndef XDP_OBJECT_DIR
#define XDP_OBJECT_DIR "/usr/lib/bpf"
#endif
#define REPEAT 1000000
#define ROUNDS 15

enum { DIRECT, ALONE, SECOND, KINDS };
static const char *const kind_names[KINDS] = { "direct", "dispatcher, sluice alone",
					       "dispatcher, sluice second" };

struct limiter {
	struct sluice *skel;
	struct bpf_object *dispatcher; /* NULL for direct */
	struct bpf_link *link;
	int fd; /* what BPF_PROG_TEST_RUN runs */
};

/* The dispatcher object's configuration, as libxdp sets it for `progs` slots. */
static int dispatcher_configure(struct bpf_object *obj, int progs)
{
	struct xdp_dispatcher_config c;
	struct bpf_map *map, *rodata = NULL;
	const void *init = NULL;
	size_t size = 0;
	int i;

	bpf_object__for_each_map(map, obj) if (strstr(bpf_map__name(map), ".rodata")) rodata = map;
	if (rodata)
		init = bpf_map__initial_value(rodata, &size);
	/* Its read-only data is the configuration alone (libxdp relies on it too). */
	if (!init || size != sizeof(c))
		return -ENOENT;
	memcpy(&c, init, sizeof(c));
	c.magic = XDP_DISPATCHER_MAGIC;
	c.dispatcher_version = XDP_DISPATCHER_VERSION;
	c.num_progs_enabled = (__u8)progs;
	for (i = 0; i < progs; i++) {
		c.chain_call_actions[i] = (1U << XDP_PASS) | (1U << XDP_DISPATCHER_RETVAL);
		c.run_prios[i] = MP_RUN_PRIO;
	}
	return bpf_map__set_initial_value(rodata, &c, sizeof(c));
}

static int dispatcher_open(struct limiter *l, int progs)
{
	char path[512];
	const char *dir = getenv("LIBXDP_OBJECT_PATH") ?: XDP_OBJECT_DIR;
	int err;

	snprintf(path, sizeof(path), "%s/xdp-dispatcher.o", dir);
	l->dispatcher = bpf_object__open_file(path, NULL);
	if (!l->dispatcher) {
		fprintf(stderr, "sluice-bench-multiprog: cannot open %s (LIBXDP_OBJECT_PATH)\n",
			path);
		return -errno;
	}
	err = dispatcher_configure(l->dispatcher, progs);
	if (!err)
		err = bpf_object__load(l->dispatcher);
	if (!err)
		l->fd = bpf_program__fd(
			bpf_object__find_program_by_name(l->dispatcher, "xdp_dispatcher"));
	return err;
}

/* sluice at `rate`/s, burst `burst`: direct, or into the dispatcher's slot `func`. */
static int limiter_open(struct limiter *l, int kind, uint64_t rate, uint64_t burst)
{
	const char *func = kind == ALONE ? "xdp_dispatcher" : "prog1";
	struct bpf_program *prog;
	struct policy_doc doc;
	struct settings s;
	struct state st;
	const char *why;
	int err;

	memset(l, 0, sizeof(*l));
	doc_init(&doc);
	s = doc.dflt;
	s.rate.amount = rate;
	s.rate.period_ns = NSEC_PER_SEC;
	s.burst.value = burst;
	if (doc_set_default(&doc, &s, &why) || doc_validate(&doc, &why))
		return -EINVAL;
	if (kind != DIRECT && (err = dispatcher_open(l, kind == ALONE ? 1 : 2)))
		return err;
	l->skel = sluice_open_here();
	if (!l->skel)
		return -errno;
	prog = l->skel->progs.sluice_xdp;
	if (kind != DIRECT) {
		/* As libxdp loads a program for its dispatcher: an extension, frags its. */
		bpf_program__set_type(prog, BPF_PROG_TYPE_EXT);
		bpf_program__set_expected_attach_type(prog, 0);
		bpf_program__set_flags(prog, bpf_program__flags(prog) & ~BPF_F_XDP_HAS_FRAGS);
		bpf_program__set_attach_target(prog, l->fd, func);
	}
	if (getenv("SLUICE_DEBUG"))
		bpf_program__set_log_level(prog, 1);
	err = state_prepare(l->skel->obj, SLUICE_DEFAULT_MAX_SOURCES) ?: sluice__load(l->skel);
	if (err)
		return err;
	if (kind == DIRECT) {
		l->fd = bpf_program__fd(prog);
	} else {
		l->link = bpf_program__attach_freplace(prog, l->fd, func);
		if (!l->link)
			return -errno;
	}
	state_from_object(l->skel->obj, &st);
	return policy_create(&st.maps, SLUICE_DEFAULT_MAX_SOURCES, &doc);
}

static void limiter_close(struct limiter *l)
{
	bpf_link__destroy(l->link);
	sluice__destroy(l->skel);
	bpf_object__close(l->dispatcher);
}

static double run_once(int fd, const struct frame *f, __u32 *retval)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f->data, .data_size_in = (__u32)f->len,
		    .repeat = REPEAT);

	if (bpf_prog_test_run_opts(fd, &opts))
		return -1;
	*retval = opts.retval;
	return opts.duration;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "median (min-max)" of n values, sorted in place. */
static void spread(char *buf, size_t len, double *v, int n, const char *fmt)
{
	char med[24], lo[24], hi[24];

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	snprintf(med, sizeof(med), fmt, v[n / 2]);
	snprintf(lo, sizeof(lo), fmt, v[0]);
	snprintf(hi, sizeof(hi), fmt, v[n - 1]);
	snprintf(buf, len, "%s (%s-%s)", med, lo, hi);
}

/* kinds: KINDS, or only DIRECT where the kernel takes no extension program. */
static int bench_path(const char *path, const struct frame *f, uint64_t rate, uint64_t burst,
		      int kinds)
{
	double ns[KINDS][ROUNDS], ratio[KINDS][ROUNDS], extra[KINDS][ROUNDS];
	struct limiter l[KINDS];
	char a[128], b[128], c[128];
	__u32 ret[KINDS];
	int k, r, err = 0;

	for (k = 0; k < kinds && !err; k++)
		err = limiter_open(&l[k], k, rate, burst);
	for (r = 0; r < ROUNDS && !err; r++) {
		for (k = 0; k < kinds; k++)
			ns[k][r] = run_once(l[k].fd, f, &ret[k]);
		for (k = 0; k < kinds; k++) {
			if (ns[k][r] < 0 || ret[k] != ret[DIRECT])
				err = -EIO;
			ratio[k][r] = ns[k][r] / ns[DIRECT][r];
			extra[k][r] = ns[k][r] - ns[DIRECT][r];
		}
	}
	for (k = 0; k < kinds && !err; k++) {
		spread(a, sizeof(a), ns[k], ROUNDS, "%.1f");
		spread(b, sizeof(b), extra[k], ROUNDS, "%.1f");
		spread(c, sizeof(c), ratio[k], ROUNDS, "%.3f");
		printf("%-8s %-26s %-22s %-22s %s\n", path, kind_names[k], a, b, c);
	}
	while (k-- > 0)
		limiter_close(&l[k]);
	return err;
}

/*
 * Where the kernel takes no extension program, the dispatcher alone: libxdp's
 * object with 2 and with 10 slots enabled, each slot its stub (a call that
 * returns at once and chains on), against the object's own XDP_PASS
 * program. An extension replaces a stub's body with a jump to itself, so
 * sluice in a slot would cost about its direct figure plus this.
 */
static int bench_stubs(const struct frame *f)
{
	static const char *const names[] = { "xdp_pass (floor)", "dispatcher, 2 stub slots",
					     "dispatcher, 10 stub slots" };
	static const int slots[] = { 0, 2, 10 };
	double ns[3][ROUNDS], ratio[3][ROUNDS], extra[3][ROUNDS];
	struct limiter l[3];
	char a[128], b[128], c[128];
	__u32 ret;
	int k, r, err = 0;

	for (k = 0; k < 3 && !err; k++) {
		memset(&l[k], 0, sizeof(l[k]));
		err = dispatcher_open(&l[k], slots[k]);
		if (!err && !slots[k])
			l[k].fd = bpf_program__fd(
				bpf_object__find_program_by_name(l[k].dispatcher, "xdp_pass"));
	}
	for (r = 0; r < ROUNDS && !err; r++) {
		for (k = 0; k < 3; k++) {
			ns[k][r] = run_once(l[k].fd, f, &ret);
			if (ns[k][r] < 0 || ret != XDP_PASS)
				err = -EIO;
		}
		for (k = 0; k < 3; k++) {
			ratio[k][r] = ns[k][r] / ns[0][r];
			extra[k][r] = ns[k][r] - ns[0][r];
		}
	}
	for (k = 0; k < 3 && !err; k++) {
		spread(a, sizeof(a), ns[k], ROUNDS, "%.1f");
		spread(b, sizeof(b), extra[k], ROUNDS, "%.1f");
		spread(c, sizeof(c), ratio[k], ROUNDS, "%.3f");
		printf("%-8s %-26s %-22s %-22s %s\n", "stubs", names[k], a, b, c);
	}
	while (k-- > 0)
		limiter_close(&l[k]);
	return err;
}

/* libbpf's warnings, and with SLUICE_DEBUG set its debug output (the verifier's log). */
static int print_fn(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !getenv("SLUICE_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(void)
{
	struct frame_spec spec = { .family = 4, .src = "10.0.0.1", .payload = 18 };
	struct frame f;
	int err, ext;

	if (geteuid() != 0) {
		fprintf(stderr, "sluice-bench-multiprog: must run as root (BPF_PROG_TEST_RUN)\n");
		return 2;
	}
	frame_build(&f, &spec);
	ext = mp_supported();
	libbpf_set_print(print_fn);
	printf("BPF_PROG_TEST_RUN, %d runs x %d rounds per figure; medians (min-max); "
	       "64-byte IPv4 UDP frame\n",
	       REPEAT, ROUNDS);
	if (ext)
		printf("this kernel refuses extension programs (freplace: %s): sluice direct, "
		       "and the dispatcher with its stubs\n",
		       strerror(-ext));
	printf("%-8s %-26s %-22s %-22s %s\n", "path", "attached", "ns/packet", "extra ns",
	       "ratio to first");
	/* Under its limit: a burst no run exhausts. Over it: 1/s, burst 1. */
	err = bench_path("passed", &f, RATE_METERED_MAX_PER_SEC, BURST_MAX, ext ? 1 : KINDS);
	if (!err)
		err = bench_path("over", &f, 1, 1, ext ? 1 : KINDS);
	if (!err && ext)
		err = bench_stubs(&f);
	if (err)
		fprintf(stderr, "sluice-bench-multiprog: %s\n", strerror(-err));
	return err ? 1 : 0;
}
