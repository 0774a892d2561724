/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sluice-flood's frame stamping, shared by both senders: the XDP program
 * (flood.bpf.c), which stamps copies of the template in the kernel, and the
 * packet-socket sender (flood_packet.c), which stamps its own buffers. Each
 * frame gets its source address and both checksums written in full, never
 * adjusted in place, from the plan (fixed for the run) and the cursor (the
 * next source of each set, and what went out so far).
 */
#ifndef SLUICE_FLOOD_STAMP_H
#define SLUICE_FLOOD_STAMP_H

#include <linux/types.h>
#include "flood_layout.h"

/*
 * The XDP program keeps its plan in read-only data that userspace fills
 * before load: read through volatile, or the compiler folds each field to
 * its zero initializer.
 */
#ifdef __bpf__
#define FLOOD_RO const volatile
#else
#define FLOOD_RO const
#endif

#define FLOOD_STAMP static inline __attribute__((always_inline))

struct flood_plan {
	__u8 ipv6;
	__u8 tcp;
	__u32 src_base;	  /* IPv4: first source address, host order */
	__u64 src6_hi;	  /* IPv6: first source, upper and lower */
	__u64 src6_lo;	  /*       64 bits, host order */
	__u32 n_sources;  /* at least 1 */
	__u32 n_prefixes; /* IPv6: /64s the sources are spread over, at least 1 */
	/*
	 * The second set, mixed in: frames 0, K, 2K, ... of the run are its,
	 * where K is mix_every (0: no second set). Its addresses count up from
	 * the first one, for IPv6 in the host part only.
	 */
	__u32 mix_every;
	__u32 mix_base; /* IPv4, host order */
	__u64 mix6_hi;	/* IPv6, host order */
	__u64 mix6_lo;
	__u32 n_mix; /* at least 1 */
	/*
	 * One's complement sums, folded to 16 bits, of what each checksum
	 * covers with the source address and checksum fields zeroed: the IPv4
	 * header, and the L4 pseudo-header plus datagram or segment.
	 */
	__u32 ip_csum_base;
	__u32 l4_csum_base;
};

/*
 * Frames handed to the device so far, how many of them were the second
 * set's, and the next source of each set: an index into the N main sources
 * and, for IPv6, its /64 and its host within the /64; an index into the
 * second set. Sources cycle round-robin across sends too. One thread
 * stamps, hence no atomics.
 */
struct flood_cursor {
	__u64 sent;
	__u64 mixed;
	__u32 src_idx;
	__u32 pfx_idx;
	__u32 host_idx;
	__u32 mix_idx;
};

/* Host to network order, for the BPF target and userspace alike. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define flood_be32(v) __builtin_bswap32(v)
#define flood_be64(v) __builtin_bswap64(v)
#else
#define flood_be32(v) (v)
#define flood_be64(v) (v)
#endif

FLOOD_STAMP __u16 flood_csum_finish(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The L4 checksum; UDP sends a computed zero as all ones, zero meaning none. */
FLOOD_STAMP __u16 flood_l4_csum(__u32 sum, int is_tcp)
{
	__u16 csum = flood_csum_finish(sum);

	return !is_tcp && csum == 0 ? 0xffff : csum;
}

/* Sum of a big-endian value's 16-bit words as they lie in memory. */
FLOOD_STAMP __u32 flood_words_sum64(__u64 be)
{
	return (be & 0xffff) + ((be >> 16) & 0xffff) + ((be >> 32) & 0xffff) + (be >> 48);
}

/* Whether the frame about to go out is the second set's. */
FLOOD_STAMP int flood_mixed_turn(FLOOD_RO struct flood_plan *p, const struct flood_cursor *c)
{
	return p->mix_every && c->sent % p->mix_every == 0;
}

/*
 * The frame that went out counted; the next source of its set. IPv6
 * sources walk the /64s first, then the hosts within them. The second set
 * cycles on its own; the main set's indices stay put for it.
 */
FLOOD_STAMP void flood_advance(FLOOD_RO struct flood_plan *p, struct flood_cursor *c, int mix)
{
	c->sent++;
	if (mix) {
		if (++c->mix_idx >= p->n_mix)
			c->mix_idx = 0;
		c->mixed++;
		return;
	}
	if (++c->src_idx >= p->n_sources) {
		c->src_idx = 0;
		c->pfx_idx = 0;
		c->host_idx = 0;
		return;
	}
	if (++c->pfx_idx >= p->n_prefixes) {
		c->pfx_idx = 0;
		c->host_idx++;
	}
}

/* The cursor's source and both checksums into an IPv4 frame of the template's layout. */
FLOOD_STAMP void flood_stamp_ipv4(void *data, FLOOD_RO struct flood_plan *p,
				  const struct flood_cursor *c, int is_tcp, int mix)
{
	__u32 *saddr = (__u32 *)((__u8 *)data + FLOOD_ETH_LEN + 12);
	__u16 *ip_check = (__u16 *)((__u8 *)data + FLOOD_ETH_LEN + 10);
	__u16 *l4_check = (__u16 *)((__u8 *)data + FLOOD_CSUM_OFF(0, is_tcp));
	__u32 be = flood_be32(mix ? p->mix_base + c->mix_idx : p->src_base + c->src_idx);
	/* Adding the address as two native 16-bit halves is byte-order safe. */
	__u32 sum = (be & 0xffff) + (be >> 16);

	*saddr = be;
	*ip_check = flood_csum_finish(p->ip_csum_base + sum);
	*l4_check = flood_l4_csum(p->l4_csum_base + sum, is_tcp);
}

/* The same for IPv6, which has no header checksum. */
FLOOD_STAMP void flood_stamp_ipv6(void *data, FLOOD_RO struct flood_plan *p,
				  const struct flood_cursor *c, int is_tcp, int mix)
{
	__u8 *saddr = (__u8 *)data + FLOOD_ETH_LEN + 8;
	__u16 *l4_check = (__u16 *)((__u8 *)data + FLOOD_CSUM_OFF(1, is_tcp));
	__u64 hi = flood_be64(mix ? p->mix6_hi : p->src6_hi + c->pfx_idx);
	__u64 lo = flood_be64(mix ? p->mix6_lo + c->mix_idx : p->src6_lo + c->host_idx);

	__builtin_memcpy(saddr, &hi, sizeof(hi));
	__builtin_memcpy(saddr + 8, &lo, sizeof(lo));
	*l4_check = flood_l4_csum(p->l4_csum_base + flood_words_sum64(hi) + flood_words_sum64(lo),
				  is_tcp);
}

#endif /* SLUICE_FLOOD_STAMP_H */
