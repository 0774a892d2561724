/* SPDX-License-Identifier: GPL-2.0 */
/* sluice-flood: what the option parser, frame builder and device code share. */
#ifndef SLUICE_FLOOD_OPTS_H
#define SLUICE_FLOOD_OPTS_H

#include <stdbool.h>
#include <time.h>
#include <linux/if_ether.h>
#include <linux/types.h>

#include "flood_stamp.h"

#define PROG "sluice-flood"

/* Exit codes: runtime failure, bad command line. */
#define EXIT_RUNTIME 1
#define EXIT_USAGE   2

#define NSEC_PER_SEC 1000000000ULL

/* The monotonic clock in ns: what pacing, deadlines and the stall timer count in. */
static inline __u64 flood_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

#define MIN_FRAME 60   /* Ethernet minimum without FCS */
#define MAX_FRAME 1514 /* 1500-byte MTU plus Ethernet header */

enum flood_proto {
	FLOOD_UDP,
	FLOOD_TCP_SYN,
};

/* How frames reach the device: live XDP frames, a packet socket, or the first that works. */
enum flood_sender {
	FLOOD_SENDER_AUTO,
	FLOOD_SENDER_LIVE,
	FLOOD_SENDER_PACKET,
};

struct flood_opts {
	const char *ifname;
	int ifindex;
	unsigned char dst_mac[ETH_ALEN];
	unsigned char src_mac[ETH_ALEN];
	bool have_dst_mac;
	bool have_src_mac;
	bool ipv6;
	enum flood_proto proto;
	const char *dst_arg; /* parsed once the family is known */
	const char *src_arg;
	unsigned char dst[16]; /* network order; IPv4 uses the first 4 bytes */
	unsigned char src[16]; /* first source */
	__u64 sources;
	__u64 v6_prefixes; /* /64s the IPv6 sources are spread over */
	/* The second set (see flood_mixed_for()); all zero if there is none. */
	const char *mix_src_arg;
	unsigned char mix_src[16];
	__u64 mix_sources;
	__u64 mix_every; /* 2 or more */
	__u64 size;	 /* 0 until parsed: the default depends on the layout */
	__u64 dport;
	double duration; /* seconds; 0 when --count is used */
	__u64 count;
	__u64 rate; /* 0: as fast as possible */
	enum flood_sender sender;
	bool quiet;
	bool force;
};

/*
 * The template frame and the plan either sender stamps each copy by
 * (flood_stamp.h): the sources, and the checksum sums of everything the
 * checksums cover except the source address, which is added per frame.
 */
struct flood_template {
	unsigned char data[MAX_FRAME];
	struct flood_plan plan;
};

/* The N bytes at P as a big-endian number. */
static inline __u64 flood_be(const unsigned char *p, int n)
{
	__u64 v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/*
 * Frames 0, K, 2K, ... of a run come from the second set, so every K frames
 * hold K - 1 of the main set.  Returns the second-set frames a run sends
 * along with MAIN main-set frames when it ends right after the last of them.
 */
static inline __u64 flood_mixed_for(const struct flood_opts *o, __u64 main)
{
	if (!o->mix_every || !main)
		return 0;
	return (main - 1) / (o->mix_every - 1) + 1;
}

/* Parses and checks the command line; prints what was wrong. 0 or -EINVAL. */
int flood_parse_args(int argc, char **argv, struct flood_opts *o);

/* Smallest frame that holds the headers and the tag for these options. */
__u64 flood_min_size(const struct flood_opts *o);
/* Fills T from O; the tag marks the frames as the generator's own. */
void flood_build(const struct flood_opts *o, __u64 tag, struct flood_template *t);

/*
 * Resolves IFACE, refuses anything but veth and loopback unless forced, and
 * fills in the source MAC. Returns 0 or the exit code to use.
 */
int flood_setup_device(struct flood_opts *o);
/* 1 if the device takes XDP_TX frames now, 0 if not, negative errno if unknown. */
int flood_xdp_xmit_supported(int ifindex);
/* The device's tx_dropped counter, where a veth counts frames its peer refused. */
__u64 flood_tx_dropped(const char *ifname);

/*
 * The packet-socket sender (flood_packet.c), for kernels that refuse live
 * XDP frames: the same frames, stamped in userspace.
 */
struct flood_packet;
/* A socket bound to the device, and a batch of buffers holding the template. 0 or -errno. */
int flood_packet_open(const struct flood_opts *o, const struct flood_template *t,
		      struct flood_packet **out);
/* Stamps and sends FRAMES frames; 0, or a negative errno with the cursor on what went out. */
int flood_packet_send(void *packet, __u64 frames);
const struct flood_cursor *flood_packet_cursor(const struct flood_packet *p);
void flood_packet_close(struct flood_packet *p);

#endif /* SLUICE_FLOOD_OPTS_H */
