// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood: send UDP datagrams or TCP SYNs, IPv4 or IPv6, from many
 * source addresses, fast.
 *
 * The frames are not built by the socket layer: a template frame
 * (flood_frame.c) is handed to BPF_PROG_TEST_RUN in live-frames mode, and
 * the XDP program in flood.bpf.c stamps a source address and the checksums
 * into each copy and returns XDP_TX, which makes the kernel transmit it out
 * of the chosen interface. That reaches millions of frames per second on
 * one core without AF_XDP.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "flood_opts.h"
#include "flood.skel.h"

/* Frames per test run at full speed: about 10-20 ms of work at 2-3 Mpps. */
#define FULL_CHUNK 32768
/* Frames the kernel runs through the program before flushing to the device. */
#define LIVE_BATCH 64

#define NSEC_PER_SEC 1000000000ULL

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Sleeps until SENT frames are due at RATE frames per second after START. */
static void pace(__u64 start, __u64 sent, __u64 rate)
{
	__u64 due = start + (__u64)((double)sent * NSEC_PER_SEC / rate);
	struct timespec ts = { .tv_sec = due / NSEC_PER_SEC, .tv_nsec = due % NSEC_PER_SEC };

	while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/*
 * How many frames to send in total; UINT64_MAX when only time limits it.
 * --count counts main-set frames: the second set's come on top.
 */
static __u64 frame_limit(const struct flood_opts *o)
{
	if (o->count)
		return o->count + flood_mixed_for(o, o->count);
	if (o->rate)
		return (__u64)(o->rate * o->duration + 0.5);
	return UINT64_MAX;
}

/* Frames per test run: about 1 ms worth when pacing, so the rate is smooth. */
static __u64 chunk_size(const struct flood_opts *o)
{
	__u64 chunk = o->rate ? o->rate / 1000 : FULL_CHUNK;

	if (chunk < 1)
		chunk = 1;
	return chunk < FULL_CHUNK ? chunk : FULL_CHUNK;
}

/*
 * Runs the program until the frame limit, the deadline or a signal.  The
 * sent counter in .bss is the authority on what went out: it also covers a
 * test run that a signal cut short.  Returns 0 or a negative errno.
 */
static int flood(struct flood *skel, const struct flood_opts *o, const void *frame, __u64 *elapsed)
{
	struct xdp_md ctx = { .data_end = o->size, .ingress_ifindex = o->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frame, .data_size_in = o->size,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		    .batch_size = LIVE_BATCH);
	int prog_fd = bpf_program__fd(skel->progs.xdp_flood);
	__u64 limit = frame_limit(o), chunk = chunk_size(o);
	__u64 start, deadline, left;
	int err = 0;

	start = now_ns();
	deadline = o->count ? UINT64_MAX : start + (__u64)(o->duration * NSEC_PER_SEC);
	while (!stop && skel->bss->sent < limit && now_ns() < deadline) {
		left = limit - skel->bss->sent;
		topts.repeat = left < chunk ? left : chunk;
		err = bpf_prog_test_run_opts(prog_fd, &topts);
		if (err)
			break;
		if (o->rate)
			pace(start, skel->bss->sent, o->rate);
	}
	*elapsed = now_ns() - start;
	/* A signal interrupts a run part-way; that is a normal stop. */
	if (err == -EINTR && stop)
		err = 0;
	return err;
}

/*
 * CPU time of this process: the sending, and the receiving side's softirq
 * work whenever the kernel ran it on our time (as a veth peer's NAPI does).
 */
static double cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Scripts parse these lines: the first keeps its fields where they were. */
static void report(const struct flood_opts *o, __u64 sent, __u64 mixed, __u64 elapsed)
{
	double secs = (double)elapsed / NSEC_PER_SEC;

	if (o->quiet) {
		printf("%llu\n", (unsigned long long)sent);
		return;
	}
	printf("sent %llu packets in %.3f s (%.0f pps), cpu %.3f s\n", (unsigned long long)sent,
	       secs, secs > 0 ? sent / secs : 0, cpu_seconds());
	if (o->mix_every)
		printf("mixed %llu frames from %llu sources\n", (unsigned long long)mixed,
		       (unsigned long long)o->mix_sources);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/*
 * A test run with repeat > 1 adds the program to the kernel's XDP dispatcher
 * and takes it out again at the end, and each change waits for an RCU grace
 * period: 10-40 ms per call, which would rule out pacing in small chunks.
 * While the program is attached to some device it stays in the dispatcher
 * and test runs skip both changes.  Attach it in generic mode to IFACE itself:
 * it passes every frame that does not carry the template's tag, and the link
 * goes away with the process, however that ends.
 * Returns the link fd, or a negative errno if the device will not have it.
 */
static int keep_in_dispatcher(struct flood *skel, int ifindex)
{
	LIBBPF_OPTS(bpf_link_create_opts, native, .flags = XDP_FLAGS_DRV_MODE);
	LIBBPF_OPTS(bpf_link_create_opts, generic, .flags = XDP_FLAGS_SKB_MODE);
	int prog_fd = bpf_program__fd(skel->progs.xdp_flood);
	int fd;

	/* Native first: a veth then also delivers what its peer sends back with XDP_TX. */
	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &native);
	if (fd < 0)
		fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &generic);
	return fd < 0 ? -errno : fd;
}

static void set_rodata(struct flood *skel, const struct flood_opts *o, __u64 tag,
		       const struct flood_template *t)
{
	skel->rodata->ipv6 = o->ipv6;
	skel->rodata->tcp = o->proto == FLOOD_TCP_SYN;
	skel->rodata->src_base = flood_be(o->src, 4);
	skel->rodata->src6_hi = flood_be(o->src, 8);
	skel->rodata->src6_lo = flood_be(o->src + 8, 8);
	skel->rodata->n_sources = o->sources;
	skel->rodata->n_prefixes = o->v6_prefixes;
	if (o->mix_every) {
		skel->rodata->mix_every = o->mix_every;
		skel->rodata->mix_base = flood_be(o->mix_src, 4);
		skel->rodata->mix6_hi = flood_be(o->mix_src, 8);
		skel->rodata->mix6_lo = flood_be(o->mix_src + 8, 8);
		skel->rodata->n_mix = o->mix_sources;
	}
	skel->rodata->ip_csum_base = t->ip_csum_base;
	skel->rodata->l4_csum_base = t->l4_csum_base;
	skel->rodata->frame_tag = tag;
	memcpy((void *)skel->rodata->headers, t->data, sizeof(skel->rodata->headers));
}

/* Loads the program and floods; returns the process exit code. */
static int run(const struct flood_opts *o)
{
	struct flood_template t;
	int err, link_fd = -1;
	__u64 elapsed, drops, tag;
	struct flood *skel;
	char msg[128];

	/* Only needs to be unlikely in real traffic, not secret. */
	if (getrandom(&tag, sizeof(tag), 0) != sizeof(tag))
		tag = now_ns() ^ ((__u64)getpid() << 32);

	skel = flood__open();
	if (!skel) {
		fprintf(stderr, PROG ": opening BPF skeleton: %s\n", strerror(errno));
		return EXIT_RUNTIME;
	}
	flood_build(o, tag, &t);
	set_rodata(skel, o, tag, &t);
	err = flood__load(skel);
	if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, PROG ": loading BPF program: %s\n", msg);
		goto out;
	}
	link_fd = keep_in_dispatcher(skel, o->ifindex);
	if (link_fd < 0)
		fprintf(stderr,
			PROG ": warning: cannot attach to %s (%s); every test run "
			     "will wait for RCU, so sending is slower and burstier\n",
			o->ifname, strerror(-link_fd));
	drops = flood_tx_dropped(o->ifname);
	err = flood(skel, o, t.data, &elapsed);
	drops = flood_tx_dropped(o->ifname) - drops;
	report(o, skel->bss->sent, skel->bss->mixed, elapsed);
	if (drops)
		fprintf(stderr, PROG ": warning: %s counted %llu tx drops during the run\n",
			o->ifname, (unsigned long long)drops);
	if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, PROG ": BPF_PROG_TEST_RUN: %s\n", msg);
	}
out:
	if (link_fd >= 0)
		close(link_fd);
	flood__destroy(skel);
	return err ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	struct flood_opts o = {
		.dport = 9000,
		.duration = 5,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	int ret;

	if (flood_parse_args(argc, argv, &o))
		return EXIT_USAGE;
	ret = flood_setup_device(&o);
	if (ret)
		return ret;
	ret = flood_xdp_xmit_supported(o.ifindex);
	if (ret == 0) {
		fprintf(stderr,
			PROG ": %s cannot transmit XDP frames right now; for a veth, attach an XDP "
			     "program to its peer or enable GRO on the peer (see --help)\n",
			o.ifname);
		return EXIT_RUNTIME;
	}
	/* No SA_RESTART: a signal must cut a long test run short. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	libbpf_set_print(libbpf_print);
	return run(&o);
}
