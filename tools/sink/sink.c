// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-sink: receive UDP datagrams and count them per IPv4 source address.
 *
 * Tests compare these counts with what sluice-flood sent and what the limiter
 * let through, so the sink also reports the socket's own drop counter: a test
 * can then tell losses in the socket apart from losses in the path.
 */
#define _GNU_SOURCE /* recvmmsg() */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/sock_diag.h>
#include <linux/types.h>

#define PROG "sluice-sink"

#define EXIT_RUNTIME 1
#define EXIT_USAGE   2

#define RCVBUF_BYTES (64 << 20)
#define BATCH	     64
/* Room for 2M sources at a load factor of at most one half. */
#define MAX_SOURCES (2U << 20)
#define MAX_SLOTS   (2 * MAX_SOURCES)
#define MIN_SLOTS   1024

#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
/* Longest sleep in poll(), so deadlines are checked even when idle. */
#define MAX_WAIT_MS 100

struct sink_opts {
	__u64 port;
	struct in_addr bind;
	double duration;    /* seconds, 0: until signalled */
	double quiet_after; /* seconds, 0: never */
};

/* A slot is free while its count is 0: a stored source has at least one packet. */
struct src_entry {
	__u32 addr; /* host order, so sorting gives address order */
	__u64 count;
};

struct src_table {
	struct src_entry *slots;
	__u32 mask;
	__u32 used;
	__u64 overflow; /* packets from sources beyond MAX_SOURCES */
};

struct sink_stats {
	__u64 packets;
	__u32 drops; /* latest SO_RXQ_OVFL value; the kernel counter is 32 bits */
};

/* Per-batch receive state for recvmmsg(). */
struct rx_batch {
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in from[BATCH];
	char cmsg[BATCH][CMSG_SPACE(sizeof(__u32))];
	char scratch[64]; /* payloads are not looked at; share one buffer */
};

static volatile sig_atomic_t stop;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " --port PORT [options]\n"
		"\n"
		"Receive UDP datagrams on PORT and count them per IPv4 source address.\n"
		"Prints 'ready' on stderr once the socket is bound. When done, prints one\n"
		"line 'A.B.C.D COUNT' per source, sorted by address, then\n"
		"'total PACKETS packets from SOURCES sources, DROPS socket drops'.\n"
		"\n"
		"Options:\n"
		"  --port PORT            UDP port to receive on (required)\n"
		"  --bind IPV4            local address to bind (default 0.0.0.0)\n"
		"  --duration SECS        stop after SECS seconds (default: run until\n"
		"                         SIGINT or SIGTERM)\n"
		"  --quiet-after SECS     stop once no packet has arrived for SECS seconds,\n"
		"                         counted from the first packet\n"
		"  --help                 show this text\n"
		"\n"
		"Up to %u distinct sources are counted one by one; packets from further\n"
		"sources count toward the total only, with a warning.\n",
		MAX_SOURCES);
}

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

static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e6)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_port(const char *s, __u64 *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > UINT16_MAX)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_PORT = 256,
	OPT_BIND,
	OPT_DURATION,
	OPT_QUIET_AFTER,
	OPT_HELP,
};

/* clang-format off */
static const struct option long_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "quiet-after", required_argument, NULL, OPT_QUIET_AFTER },
	{ "help", no_argument, NULL, OPT_HELP },
	{}
};
/* clang-format on */

static int apply_opt(struct sink_opts *o, int opt, const char *arg, const char *name)
{
	int err;

	switch (opt) {
	case OPT_PORT:
		err = parse_port(arg, &o->port);
		break;
	case OPT_BIND:
		err = inet_pton(AF_INET, arg, &o->bind) == 1 ? 0 : -EINVAL;
		break;
	case OPT_DURATION:
		err = parse_seconds(arg, &o->duration);
		break;
	case OPT_QUIET_AFTER:
		err = parse_seconds(arg, &o->quiet_after);
		break;
	default:
		return -EINVAL;
	}
	if (err)
		fprintf(stderr, PROG ": invalid value for --%s: '%s'\n", name, arg);
	return err;
}

static int parse_args(int argc, char **argv, struct sink_opts *o)
{
	int opt, idx, err;

	while ((opt = getopt_long(argc, argv, "", long_opts, &idx)) != -1) {
		if (opt == OPT_HELP) {
			usage(stdout);
			exit(0);
		}
		if (opt == '?')
			return -EINVAL; /* getopt has said what was wrong */
		err = apply_opt(o, opt, optarg, long_opts[idx].name);
		if (err)
			return err;
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->port) {
		fprintf(stderr, PROG ": missing --port (see --help)\n");
		return -EINVAL;
	}
	return 0;
}

static struct src_entry *table_slot(struct src_entry *slots, __u32 mask, __u32 addr)
{
	/* Fibonacci hashing spreads consecutive addresses, the common case. */
	__u32 i = (addr * 2654435769U) & mask;

	while (slots[i].count && slots[i].addr != addr)
		i = (i + 1) & mask;
	return &slots[i];
}

static int table_resize(struct src_table *t, __u32 nslots)
{
	struct src_entry *slots, *e;
	__u32 i;

	slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (i = 0; t->slots && i <= t->mask; i++) {
		if (!t->slots[i].count)
			continue;
		e = table_slot(slots, nslots - 1, t->slots[i].addr);
		*e = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->mask = nslots - 1;
	return 0;
}

/* Counts one packet from ADDR; -ENOMEM only if growing the table failed. */
static int table_count(struct src_table *t, __u32 addr)
{
	struct src_entry *e = table_slot(t->slots, t->mask, addr);
	int err;

	if (e->count) {
		e->count++;
		return 0;
	}
	if (t->used >= MAX_SOURCES) {
		t->overflow++;
		return 0;
	}
	if (2 * (t->used + 1) > t->mask + 1) {
		err = table_resize(t, 2 * (t->mask + 1));
		if (err)
			return err;
		e = table_slot(t->slots, t->mask, addr);
	}
	e->addr = addr;
	e->count = 1;
	t->used++;
	return 0;
}

static int cmp_addr(const void *a, const void *b)
{
	__u32 x = ((const struct src_entry *)a)->addr;
	__u32 y = ((const struct src_entry *)b)->addr;

	return x < y ? -1 : x > y;
}

/* Sorts the sources to the front of the table, by address, and prints them. */
static void table_print(struct src_table *t)
{
	__u32 i, n = 0;

	for (i = 0; i <= t->mask; i++)
		if (t->slots[i].count)
			t->slots[n++] = t->slots[i];
	qsort(t->slots, n, sizeof(*t->slots), cmp_addr);
	for (i = 0; i < n; i++) {
		__u32 a = t->slots[i].addr;

		printf("%u.%u.%u.%u %llu\n", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff,
		       (unsigned long long)t->slots[i].count);
	}
}

static int open_socket(const struct sink_opts *o)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(o->port),
		.sin_addr = o->bind,
	};
	int one = 1, size = RCVBUF_BYTES;
	int fd, err;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* FORCE ignores net.core.rmem_max; without CAP_NET_ADMIN settle for less. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)))
		goto fail;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		goto fail;
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

static void batch_init(struct rx_batch *b)
{
	int i;

	memset(b, 0, sizeof(*b));
	for (i = 0; i < BATCH; i++) {
		b->iov[i].iov_base = b->scratch;
		b->iov[i].iov_len = sizeof(b->scratch);
		b->msgs[i].msg_hdr.msg_iov = &b->iov[i];
		b->msgs[i].msg_hdr.msg_iovlen = 1;
		b->msgs[i].msg_hdr.msg_name = &b->from[i];
		b->msgs[i].msg_hdr.msg_control = b->cmsg[i];
	}
}

/* The kernel shrinks these per message, so they are reset before each call. */
static void batch_reset(struct rx_batch *b)
{
	int i;

	for (i = 0; i < BATCH; i++) {
		b->msgs[i].msg_hdr.msg_namelen = sizeof(b->from[i]);
		b->msgs[i].msg_hdr.msg_controllen = sizeof(b->cmsg[i]);
	}
}

/* SO_RXQ_OVFL: the socket's drop count, sent only once it is non-zero. */
static void note_drops(struct msghdr *mh, struct sink_stats *st)
{
	struct cmsghdr *c;
	__u32 drops;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SO_RXQ_OVFL)
			continue;
		memcpy(&drops, CMSG_DATA(c), sizeof(drops));
		if (drops > st->drops)
			st->drops = drops;
	}
}

/* Receives what is queued, one batch; returns packets taken or -errno. */
static int receive_batch(int fd, struct rx_batch *b, struct src_table *t, struct sink_stats *st)
{
	int i, n, err;

	batch_reset(b);
	n = recvmmsg(fd, b->msgs, BATCH, MSG_DONTWAIT, NULL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	for (i = 0; i < n; i++) {
		struct msghdr *mh = &b->msgs[i].msg_hdr;

		note_drops(mh, st);
		if (mh->msg_namelen < sizeof(struct sockaddr_in))
			continue;
		err = table_count(t, ntohl(b->from[i].sin_addr.s_addr));
		if (err)
			return err;
		st->packets++;
	}
	return n;
}

/* Milliseconds poll() may sleep; -1 when the sink should stop now. */
static int wait_ms(const struct sink_opts *o, __u64 deadline, __u64 last_rx)
{
	__u64 now = now_ns(), until = now + MAX_WAIT_MS * NSEC_PER_MSEC;

	if (deadline && deadline < until)
		until = deadline;
	if (o->quiet_after && last_rx) {
		__u64 quiet_end = last_rx + (__u64)(o->quiet_after * NSEC_PER_SEC);

		if (quiet_end < until)
			until = quiet_end;
	}
	if (now >= until)
		return -1;
	return (until - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
}

static int sink(int fd, const struct sink_opts *o, struct src_table *t, struct sink_stats *st)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	__u64 deadline = 0, last_rx = 0;
	struct rx_batch *b;
	int n, ms, err = 0;

	b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	batch_init(b);
	if (o->duration)
		deadline = now_ns() + (__u64)(o->duration * NSEC_PER_SEC);
	while (!stop) {
		n = receive_batch(fd, b, t, st);
		if (n < 0) {
			err = n;
			break;
		}
		if (n > 0)
			last_rx = now_ns();
		if (n == BATCH)
			continue; /* more may be queued; deadlines can wait a batch */
		ms = wait_ms(o, deadline, last_rx);
		if (ms < 0)
			break;
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR) {
			err = -errno;
			break;
		}
	}
	free(b);
	return err;
}

/*
 * SO_RXQ_OVFL only reports drops on packets that were received after them;
 * SO_MEMINFO also sees drops after the last packet.
 */
static __u32 final_drops(int fd, __u32 seen)
{
	__u32 mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 && len == sizeof(mem) &&
	    mem[SK_MEMINFO_DROPS] > seen)
		return mem[SK_MEMINFO_DROPS];
	return seen;
}

int main(int argc, char **argv)
{
	struct sink_opts o = { .bind = { htonl(INADDR_ANY) } };
	struct sigaction sa = { .sa_handler = on_signal };
	struct src_table t = {};
	struct sink_stats st = {};
	int fd, err;

	if (parse_args(argc, argv, &o))
		return EXIT_USAGE;
	err = table_resize(&t, MIN_SLOTS);
	if (err) {
		fprintf(stderr, PROG ": %s\n", strerror(-err));
		return EXIT_RUNTIME;
	}
	/* No SA_RESTART: poll() must return so the sink can finish up. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = open_socket(&o);
	if (fd < 0) {
		fprintf(stderr, PROG ": binding UDP port %llu: %s\n", (unsigned long long)o.port,
			strerror(-fd));
		err = fd;
		goto out;
	}
	fprintf(stderr, "ready\n");
	err = sink(fd, &o, &t, &st);
	if (err)
		fprintf(stderr, PROG ": receiving: %s\n", strerror(-err));
	st.drops = final_drops(fd, st.drops);
	close(fd);
	table_print(&t);
	printf("total %llu packets from %u sources, %u socket drops\n",
	       (unsigned long long)st.packets, t.used, st.drops);
	if (t.overflow)
		fprintf(stderr,
			PROG ": warning: %llu packets came from sources beyond the first %u\n",
			(unsigned long long)t.overflow, MAX_SOURCES);
out:
	free(t.slots);
	return err ? EXIT_RUNTIME : 0;
}
