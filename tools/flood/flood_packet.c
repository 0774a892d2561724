// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood's second sender: a packet socket bound to the device, for
 * kernels that refuse BPF_PROG_TEST_RUN's live frames (some hardened or
 * sandboxed kernels answer EPERM even to root). The frames are the XDP
 * program's, stamped here by the same code (flood_stamp.h) into a batch of
 * buffers that each hold the template, and handed to the device with
 * sendmmsg() past the qdisc. Slower than live frames, as every frame is an
 * skb, but the same frames in the same order.
 */
#define _GNU_SOURCE /* sendmmsg */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/if_packet.h>

#include "flood_opts.h"

/* Frames per sendmmsg(). */
#define PACKET_BATCH 64
/* How long a device may refuse every frame before the run gives up. */
#define STALL_NS NSEC_PER_SEC
/* The pause after a refusal: a veth's peer drains its ring meanwhile. */
#define BACKOFF_NS 50000L

struct flood_packet {
	int fd;
	struct flood_plan plan;
	struct flood_cursor cursor;
	unsigned char *frames; /* PACKET_BATCH buffers of the frame's size */
	struct iovec iov[PACKET_BATCH];
	struct mmsghdr msgs[PACKET_BATCH];
};

static int packet_socket(int ifindex)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex };
	int one = 1, fd, err;

	/* Protocol 0: the socket sends and receives nothing. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Only a speed-up: the frames then skip the device's qdisc. */
	(void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	return fd;
}

int flood_packet_open(const struct flood_opts *o, const struct flood_template *t,
		      struct flood_packet **out)
{
	struct flood_packet *p = calloc(1, sizeof(*p));
	int i;

	if (!p)
		return -ENOMEM;
	p->plan = t->plan;
	p->frames = malloc(PACKET_BATCH * o->size);
	p->fd = p->frames ? packet_socket(o->ifindex) : -ENOMEM;
	if (p->fd < 0) {
		i = p->fd;
		free(p->frames);
		free(p);
		return i;
	}
	for (i = 0; i < PACKET_BATCH; i++) {
		memcpy(p->frames + i * o->size, t->data, o->size);
		p->iov[i].iov_base = p->frames + i * o->size;
		p->iov[i].iov_len = o->size;
		p->msgs[i].msg_hdr.msg_iov = &p->iov[i];
		p->msgs[i].msg_hdr.msg_iovlen = 1;
	}
	*out = p;
	return 0;
}

/* Stamps buffers 0..n-1 as the next n frames, from a copy of the cursor. */
static void stamp_batch(struct flood_packet *p, int n)
{
	struct flood_cursor c = p->cursor;
	int i, mix;

	for (i = 0; i < n; i++) {
		mix = flood_mixed_turn(&p->plan, &c);
		if (p->plan.ipv6)
			flood_stamp_ipv6(p->iov[i].iov_base, &p->plan, &c, p->plan.tcp, mix);
		else
			flood_stamp_ipv4(p->iov[i].iov_base, &p->plan, &c, p->plan.tcp, mix);
		flood_advance(&p->plan, &c, mix);
	}
}

/* The cursor past the first n of the stamped frames, which went out. */
static void count_sent(struct flood_packet *p, int n)
{
	while (n--)
		flood_advance(&p->plan, &p->cursor, flood_mixed_turn(&p->plan, &p->cursor));
}

/*
 * Sends the n stamped frames, in order. A frame the device refused
 * (ENOBUFS: a veth whose peer's ring is full) did not go out and is sent
 * again after a pause, so that every frame counted reached the device.
 */
static int send_batch(struct flood_packet *p, int n)
{
	struct timespec pause = { .tv_nsec = BACKOFF_NS };
	__u64 stalled = 0;
	int done = 0, sent;

	while (done < n) {
		sent = sendmmsg(p->fd, p->msgs + done, n - done, 0);
		if (sent > 0) {
			count_sent(p, sent);
			done += sent;
			stalled = 0;
			continue;
		}
		if (errno != ENOBUFS && errno != EAGAIN)
			return -errno;
		if (!stalled)
			stalled = flood_now_ns();
		else if (flood_now_ns() - stalled > STALL_NS)
			return -ENOBUFS;
		nanosleep(&pause, NULL);
	}
	return 0;
}

int flood_packet_send(void *packet, __u64 frames)
{
	struct flood_packet *p = packet;
	int n, err = 0;

	while (!err && frames) {
		n = frames < PACKET_BATCH ? (int)frames : PACKET_BATCH;
		stamp_batch(p, n);
		err = send_batch(p, n);
		frames -= n;
	}
	return err;
}

const struct flood_cursor *flood_packet_cursor(const struct flood_packet *p)
{
	return &p->cursor;
}

void flood_packet_close(struct flood_packet *p)
{
	if (!p)
		return;
	close(p->fd);
	free(p->frames);
	free(p);
}
