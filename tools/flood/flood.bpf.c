// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood packet generator, XDP side.
 *
 * Run through BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel
 * hands this program copies of a template frame built by userspace (IPv4 or
 * IPv6, UDP or TCP SYN; see flood_layout.h), and every frame for which it
 * returns XDP_TX is transmitted out of the device named by the test run's
 * ingress_ifindex. The stamping itself is flood_stamp.h's, which the
 * packet-socket sender shares.
 *
 * Within one test run, live-frame pages are recycled without restoring their
 * contents, so a frame may still hold what the program wrote into an earlier
 * frame, and a frame of the second source set may land where a main-set
 * frame was.  Every field that varies (source address, checksums) is
 * therefore written in full, never adjusted in place. A receiver may also
 * have rewritten the page (sluice's --prove sends a SYN back in the same
 * page as its SYN-ACK), so the headers before the tag are written again
 * from the template's copy in `headers` each time.
 *
 * Userspace also attaches this program to the sending device in generic mode
 * while it runs (see keep_in_dispatcher() in flood.c), so it may see frames
 * the device really received.  Those lack the template's tag and are passed.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "flood_stamp.h"

/* Set by userspace before load; the verifier prunes the layouts not chosen. */
const volatile struct flood_plan plan = { .n_sources = 1, .n_prefixes = 1, .n_mix = 1 };
/* Random value at FLOOD_TAG_OFF of the template. */
const volatile __u64 frame_tag;
/* The template's bytes before the tag: Ethernet, IP and L4 headers. */
const volatile __u8 headers[FLOOD_TAG_OFF(1, 1)];

/* Userspace runs the program from one thread only, hence no atomics. */
struct flood_cursor cursor;

/*
 * The template's first len bytes (even) into the frame, read through
 * volatile: a plain copy of a const array is folded to its zero initializer.
 */
static __always_inline void put_headers(void *data, __u32 len)
{
	const volatile __u16 *from = (const volatile __u16 *)headers;
	__u16 *to = data;
	__u32 i;

#pragma unroll
	for (i = 0; i < len / 2; i++)
		to[i] = from[i];
}

/* The frame came from our template, and holds everything we write. */
static __always_inline int ours(void *data, void *end, __u32 tag_off)
{
	__u64 *tag = data + tag_off;

	return (void *)(tag + 1) <= end && *tag == frame_tag;
}

static __always_inline int stamp(void *data, void *end, int is_ipv6, int is_tcp, int mix)
{
	if (!ours(data, end, FLOOD_TAG_OFF(is_ipv6, is_tcp)))
		return XDP_PASS;
	put_headers(data, FLOOD_TAG_OFF(is_ipv6, is_tcp));
	if (is_ipv6)
		flood_stamp_ipv6(data, &plan, &cursor, is_tcp, mix);
	else
		flood_stamp_ipv4(data, &plan, &cursor, is_tcp, mix);
	return XDP_TX;
}

SEC("xdp")
int xdp_flood(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	int mix = flood_mixed_turn(&plan, &cursor);
	int act;

	if (plan.ipv6)
		act = plan.tcp ? stamp(data, data_end, 1, 1, mix)
			       : stamp(data, data_end, 1, 0, mix);
	else
		act = plan.tcp ? stamp(data, data_end, 0, 1, mix)
			       : stamp(data, data_end, 0, 0, mix);
	if (act == XDP_TX)
		flood_advance(&plan, &cursor, mix);
	return act;
}

char LICENSE[] SEC("license") = "GPL";
