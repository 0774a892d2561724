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
 * one core without AF_XDP. A kernel that refuses live frames gets the
 * same frames from a packet socket (flood_packet.c), which --sender picks.
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

/* What the kernel answers for an operation it does not support; not in libc's errno.h. */
#define KERNEL_ENOTSUPP 524

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

/* Sends up to FRAMES frames; 0 or a negative errno. */
typedef int (*send_fn)(void *sender, __u64 frames);

/*
 * Sends until the frame limit, the deadline or a signal, in chunks that
 * --rate paces. The cursor is the authority on what went out: it also
 * covers a chunk that a signal cut short. Returns 0 or a negative errno.
 */
static int flood(const struct flood_opts *o, send_fn send, void *sender,
		 const struct flood_cursor *cursor, __u64 *elapsed)
{
	__u64 limit = frame_limit(o), chunk = chunk_size(o);
	__u64 start, deadline, left;
	int err = 0;

	start = flood_now_ns();
	deadline = o->count ? UINT64_MAX : start + (__u64)(o->duration * NSEC_PER_SEC);
	while (!stop && cursor->sent < limit && flood_now_ns() < deadline) {
		left = limit - cursor->sent;
		err = send(sender, left < chunk ? left : chunk);
		if (err)
			break;
		if (o->rate)
			pace(start, cursor->sent, o->rate);
	}
	*elapsed = flood_now_ns() - start;
	/* A signal interrupts a chunk part-way; that is a normal stop. */
	if (err == -EINTR && stop)
		err = 0;
	return err;
}

/* The live sender: the program, run on live frames of the template. */
struct live {
	struct xdp_md ctx;
	struct bpf_test_run_opts topts;
	int prog_fd;
};

static int live_send(void *sender, __u64 frames)
{
	struct live *l = sender;

	l->topts.repeat = frames;
	return bpf_prog_test_run_opts(l->prog_fd, &l->topts);
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

static void set_rodata(struct flood *skel, __u64 tag, const struct flood_template *t)
{
	memcpy((void *)&skel->rodata->plan, &t->plan, sizeof(t->plan));
	skel->rodata->frame_tag = tag;
	memcpy((void *)skel->rodata->headers, t->data, sizeof(skel->rodata->headers));
}

/* Kernels that refuse live frames at all answer the first test run so. */
static bool live_refused(int err)
{
	return err == -EPERM || err == -EOPNOTSUPP || err == -KERNEL_ENOTSUPP;
}

/*
 * Live frames cannot go out: *refused is set so that --sender auto falls
 * back to the packet socket; --sender live insists, so the reason is printed.
 */
static void live_refusal(const struct flood_opts *o, bool *refused, const char *fmt, ...)
{
	va_list args;

	*refused = true;
	if (o->sender != FLOOD_SENDER_LIVE)
		return;
	fprintf(stderr, PROG ": %s: ", o->ifname);
	va_start(args, fmt);
	vfprintf(stderr, fmt, args);
	va_end(args);
	fputc('\n', stderr);
}

/*
 * Floods with live frames. Where the device cannot take XDP frames or the
 * kernel refuses live frames, nothing is sent and *refused is set (see
 * live_refusal). Returns 0 or a negative errno.
 */
static int run_live(const struct flood_opts *o, struct flood *skel, const struct flood_template *t,
		    struct flood_cursor *sent, __u64 *elapsed, bool *refused)
{
	struct live l = { .ctx = { .data_end = o->size, .ingress_ifindex = o->ifindex } };
	char msg[128];
	int err;

	if (flood_xdp_xmit_supported(o->ifindex) == 0) {
		live_refusal(o, refused,
			     "cannot transmit XDP frames right now; for a veth, attach an XDP "
			     "program to its peer or enable GRO on the peer (see --help)");
		return -EOPNOTSUPP;
	}
	l.prog_fd = bpf_program__fd(skel->progs.xdp_flood);
	l.topts = (struct bpf_test_run_opts){ .sz = sizeof(l.topts),
					      .data_in = t->data,
					      .data_size_in = o->size,
					      .ctx_in = &l.ctx,
					      .ctx_size_in = sizeof(l.ctx),
					      .flags = BPF_F_TEST_XDP_LIVE_FRAMES,
					      .batch_size = LIVE_BATCH };
	err = flood(o, live_send, &l, &skel->bss->cursor, elapsed);
	*sent = skel->bss->cursor;
	if (live_refused(err) && !sent->sent) {
		live_refusal(o, refused,
			     "this kernel refuses live XDP frames (BPF_PROG_TEST_RUN: %s); "
			     "--sender packet sends through a packet socket",
			     err == -KERNEL_ENOTSUPP ? "not supported" : strerror(-err));
	} else if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, PROG ": BPF_PROG_TEST_RUN: %s\n", msg);
	}
	return err;
}

/* Floods through a packet socket. Returns 0 or a negative errno. */
static int run_packet(const struct flood_opts *o, const struct flood_template *t,
		      struct flood_cursor *sent, __u64 *elapsed)
{
	struct flood_packet *p;
	int err = flood_packet_open(o, t, &p);

	if (err) {
		fprintf(stderr, PROG ": packet socket on %s: %s\n", o->ifname, strerror(-err));
		return err;
	}
	err = flood(o, flood_packet_send, p, flood_packet_cursor(p), elapsed);
	*sent = *flood_packet_cursor(p);
	if (err)
		fprintf(stderr, PROG ": sendmmsg: %s\n", strerror(-err));
	flood_packet_close(p);
	return err;
}

/*
 * The program, loaded and attached to IFACE (keep_in_dispatcher) for the
 * whole run, whichever sender sends: a veth then also delivers what its
 * peer sends back with XDP_TX (sluice's SYN-ACKs), which it drops without
 * NAPI on this end. NULL, with the complaint printed, if it will not load.
 */
static struct flood *program_up(const struct flood_opts *o, __u64 tag,
				const struct flood_template *t, int *link_fd)
{
	struct flood *skel = flood__open();
	char msg[128];
	int err;

	if (!skel) {
		fprintf(stderr, PROG ": opening BPF skeleton: %s\n", strerror(errno));
		return NULL;
	}
	set_rodata(skel, tag, t);
	err = flood__load(skel);
	if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		fprintf(stderr, PROG ": loading BPF program: %s\n", msg);
		flood__destroy(skel);
		return NULL;
	}
	*link_fd = keep_in_dispatcher(skel, o->ifindex);
	if (*link_fd < 0)
		fprintf(stderr,
			PROG ": warning: cannot attach to %s (%s); live frames wait for RCU "
			     "on every test run, and frames its peer sends back with XDP_TX "
			     "may be lost\n",
			o->ifname, strerror(-*link_fd));
	return skel;
}

/* Floods with the sender --sender picks; returns the process exit code. */
static int run(const struct flood_opts *o)
{
	struct flood_cursor sent = { 0 };
	bool refused = false;
	struct flood_template t;
	__u64 elapsed = 0, drops, tag;
	int err = 0, link_fd = -1;
	struct flood *skel;

	/* Only needs to be unlikely in real traffic, not secret. */
	if (getrandom(&tag, sizeof(tag), 0) != sizeof(tag))
		tag = flood_now_ns() ^ ((__u64)getpid() << 32);
	flood_build(o, tag, &t);
	skel = program_up(o, tag, &t, &link_fd);
	if (!skel)
		return EXIT_RUNTIME;
	drops = flood_tx_dropped(o->ifname);
	if (o->sender != FLOOD_SENDER_PACKET)
		err = run_live(o, skel, &t, &sent, &elapsed, &refused);
	if (refused && o->sender == FLOOD_SENDER_LIVE)
		goto out;
	if (refused || o->sender == FLOOD_SENDER_PACKET)
		err = run_packet(o, &t, &sent, &elapsed);
	drops = flood_tx_dropped(o->ifname) - drops;
	report(o, sent.sent, sent.mixed, elapsed);
	if (drops)
		fprintf(stderr, PROG ": warning: %s counted %llu tx drops during the run\n",
			o->ifname, (unsigned long long)drops);
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
	/* No SA_RESTART: a signal must cut a long send short. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	libbpf_set_print(libbpf_print);
	return run(&o);
}
