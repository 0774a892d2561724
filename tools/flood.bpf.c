// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-flood packet generator, XDP side.
 *
 * Run through BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: the kernel
 * hands this program copies of a UDP/IPv4 template frame built by userspace,
 * and every frame for which it returns XDP_TX is transmitted out of the
 * device named by the test run's ingress_ifindex.
 *
 * Within one test run, live-frame pages are recycled without restoring their
 * contents, so a frame may still hold what the program wrote into an earlier
 * frame.  Every field that varies (source address, header checksum) is
 * therefore written in full, never adjusted in place.
 *
 * Userspace also attaches this program to the sending device in generic mode
 * while it runs (see keep_in_dispatcher() in flood.c), so it may see frames
 * the device really received.  Those lack the template's tag and are passed.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

/* Set by userspace before load. */
const volatile __u32 src_base; /* first source address, host order */
const volatile __u32 n_sources = 1;
/*
 * One's complement sum of the template's IPv4 header words, taken with the
 * checksum and source address fields zeroed, folded to 16 bits.
 */
const volatile __u32 csum_base;
/* Random value at the start of the template's UDP payload. */
const volatile __u64 frame_tag;

/*
 * Frames handed to the device so far.  It doubles as the sequence number that
 * picks the source, so sources cycle round-robin across test runs too.
 * Userspace runs the program from one thread only, hence no atomics.
 */
__u64 sent;

static __always_inline __u16 csum_with_saddr(__u32 base, __be32 saddr)
{
	/* Adding the address as two native 16-bit halves is byte-order safe. */
	__u32 sum = base + (saddr & 0xffff) + (saddr >> 16);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

SEC("xdp")
int xdp_flood(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	void *data = (void *)(long)ctx->data;
	struct iphdr *iph = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(iph + 1);
	__u64 *tag = (void *)(udp + 1);
	__be32 saddr;

	if ((void *)(tag + 1) > data_end || *tag != frame_tag)
		return XDP_PASS;

	saddr = bpf_htonl(src_base + (__u32)(sent % n_sources));
	iph->saddr = saddr;
	iph->check = csum_with_saddr(csum_base, saddr);
	sent++;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
