// SPDX-License-Identifier: GPL-2.0
/*
 * Floors for the benchmarks (docs/benchmarks.md): programs that do only the
 * work any exact per-source limiter must do for a packet, with the
 * datapath's own code, then drop it. A target set against bare XDP_DROP
 * can then be set against what the machine allows. Then the floors of the
 * table's layout, for the paths that read more than one line. The first
 * are attached by `ip link` (bench-compare); all are timed by
 * build/sluice-bench, frags-aware like sluice_xdp, so that the
 * benchmark's rotator can tail-call them.
 * Non-IP and malformed frames pass, as the datapath passes them.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "sluice.h"
#include "table_hash.h"
#include "floor.h"
#include "../../bpf/parse.h"
#include "../../bpf/clock.h"
#include "../../bpf/key.h"
#include "../../bpf/cookie.h"

/* The key's seeds: fixed, odd and non-zero (the datapath's are random). */
const volatile __u64 floor_seed[3] = { 0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
				       0x165667b19e3779f9ULL };

/*
 * The default source table's lines, as many as it has (floor.h). Mappable,
 * as the table is, only so that each value is one cache line.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_SETS *FLOOR_LINES_PER_SET);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct floor_line);
} floor_sets SEC(".maps");

/*
 * A filter of the sources a table tracks, the size of the default source
 * table's (map buckets_filter: a 32-bit word per set, about 3 bits a
 * source), so cache resident where the table is not.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_SETS);
	__type(key, __u32);
	__type(value, __u32);
} floor_filter_words SEC(".maps");

_Static_assert(SLUICE_DEFAULT_IPV6_PREFIX == 64, "floor_key's IPv6 mask is a /64's");

/*
 * The datapath's parse, whole: what it found is kept (the barrier), so no
 * header read is optimised away for want of a use.
 */
static __always_inline int floor_parsed(struct xdp_md *ctx, struct packet *pkt)
{
	int ret = parse_packet(ctx, pkt);

	asm volatile("" : : "r"(pkt) : "memory");
	return ret == PARSE_IP;
}

/* The default rule's key: an IPv4 source as a /32, an IPv6 one as its /64. */
static __always_inline void floor_key(struct sluice_key *key, const struct packet *pkt)
{
	const struct sluice_policy p = {
		.id = 1,
		.ipv4_prefix = 32,
		.ipv4_mask = 0xffffffff,
		.ipv6_prefix = SLUICE_DEFAULT_IPV6_PREFIX,
		.ipv6_mask = { 0xffffffff, 0xffffffff, 0, 0 },
	};

	classify_key(key, pkt, &p);
}

/* Reading the headers: what any limiter does before it knows the source. */
SEC("xdp.frags")
int floor_parse(struct xdp_md *ctx)
{
	struct packet pkt;

	return floor_parsed(ctx, &pkt) ? XDP_DROP : XDP_PASS;
}

/*
 * Reading the headers and the precise clock: an exact meter needs the
 * moment of each packet (GCRA decides against its time), and jiffies are
 * too coarse for it.
 */
SEC("xdp.frags")
int floor_clock(struct xdp_md *ctx)
{
	struct packet pkt;

	if (!floor_parsed(ctx, &pkt) || !clock_now())
		return XDP_PASS;
	return XDP_DROP;
}

/* The source's two sets, placed as the datapath places its key. */
static __always_inline int floor_place(struct xdp_md *ctx, struct table_place *place)
{
	__u64 seed[3] = { floor_seed[0], floor_seed[1], floor_seed[2] };
	struct sluice_key key;
	struct packet pkt;

	if (!floor_parsed(ctx, &pkt))
		return 0;
	floor_key(&key, &pkt);
	table_place(place, &key, seed, FLOOR_SETS);
	return 1;
}

/* Line `line` of set `set` in floor_sets (NULL past its end). */
static __always_inline struct floor_line *floor_set_line(__u32 set, __u32 line)
{
	__u32 index = set * FLOOR_LINES_PER_SET + line;

	return bpf_map_lookup_elem(&floor_sets, &index);
}

/*
 * The source's line of a table the default source table's size, its key
 * placed as the datapath places it (NULL for a frame it passes): the state
 * of a source lives somewhere in it, so any table-based limiter reads at
 * least that line, a miss once the sources' lines outgrow the caches.
 */
static __always_inline struct floor_line *floor_line_of(struct xdp_md *ctx)
{
	struct table_place place;

	if (!floor_place(ctx, &place))
		return NULL;
	/* The datapath's own placement: its first set's first line. */
	return floor_set_line(place.set[0], 0);
}

/* Reading the headers, placing the source's key and reading its line. */
SEC("xdp.frags")
int floor_table(struct xdp_md *ctx)
{
	const struct floor_line *line = floor_line_of(ctx);

	/* The byte is used, so its load stays. */
	if (!line || line->b[0] == 0xff)
		return XDP_PASS;
	return XDP_DROP;
}

/*
 * The table's line and the precise clock: an exact meter of a source whose
 * moment is near (every packet of a source under its limit) needs both.
 * The clock is read once the line's load is under way, as the datapath
 * reads it.
 */
SEC("xdp.frags")
int floor_meter(struct xdp_md *ctx)
{
	const struct floor_line *line = floor_line_of(ctx);

	if (!line || line->b[0] == 0xff || !clock_now())
		return XDP_PASS;
	return XDP_DROP;
}

/*
 * floor_meter's work, then the packet passed, as an exact meter must pass
 * a packet on time (scenario c, every packet of 1,000,000 sources at 1/s):
 * what the stack then does with it (in the benchmark, a raw PREROUTING
 * drop) is the same whoever passed it. The packet passes whatever the
 * line holds; the byte's test only keeps its load.
 */
SEC("xdp.frags")
int floor_pass(struct xdp_md *ctx)
{
	const struct floor_line *line = floor_line_of(ctx);

	if (line && line->b[0] == 0xff)
		return XDP_DROP;
	return clock_now() ? XDP_PASS : XDP_DROP;
}

/*
 * Refusing a forged source past a new-source budget: the headers, the key
 * placed, one word of a filter of the tracked sources that says the source
 * is new, and the early clock the budget is counted against. The least an
 * exact limiter that keeps its table from a spoofed flood must do for
 * each of the flood's packets (scenario s), where it reads no table line.
 */
SEC("xdp.frags")
int floor_filter(struct xdp_md *ctx)
{
	struct table_place place;
	__u32 *word;

	if (!floor_place(ctx, &place))
		return XDP_PASS;
	word = bpf_map_lookup_elem(&floor_filter_words, &place.set[0]);
	/* The word is used, so its load stays. */
	if (!word || *word == 0xffffffff || !clock_early())
		return XDP_PASS;
	return XDP_DROP;
}

/*
 * A source far over 10/s (scenario a) refused exactly with the
 * jiffies as its cheap clock: its line, and the precise clock only where
 * the jiffies cannot rule its next moment out. The jiffies counter may
 * trail the clock by CLOCK_JIFFY_LAG ticks less its tick of margin
 * (bpf/clock.h), so any exact meter that trusts them reads the clock in
 * those last ticks before each moment; at the moment the source's packet
 * conforms and its next moment is set, in its line.
 */
#define FLOOR_INTERVAL_NS 100000000ULL /* 10/s */
#define FLOOR_JIFFY_LAG	  (CLOCK_JIFFY_LAG - 1)

/* The first precise reading and its jiffy, for the tick's length. */
struct floor_tick {
	__u64 ref_ns;
	__u64 ref_jiffy;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct floor_tick);
} floor_ticks SEC(".maps");

/* A source's next moment and the jiffy before which it certainly has not come. */
struct floor_moment {
	__u64 moment_ns;
	__u64 bound_jiffy;
};

_Static_assert(sizeof(struct floor_moment) <= sizeof(struct floor_line), "a moment fits its line");

/*
 * The tick's length, measured from the first reading (rounded up, so a
 * wait is never counted a tick too long); 0 until 64 ticks have passed.
 * Only at a moment: once per source per interval.
 */
static __always_inline __u64 floor_tick_ns(__u64 now, __u64 jiffy)
{
	struct floor_tick *t;
	__u32 zero = 0;

	t = bpf_map_lookup_elem(&floor_ticks, &zero);
	if (!t)
		return 0;
	if (!t->ref_ns) {
		t->ref_ns = now;
		t->ref_jiffy = jiffy;
		return 0;
	}
	if (jiffy - t->ref_jiffy < 64)
		return 0;
	return (now - t->ref_ns) / (jiffy - t->ref_jiffy) + 1;
}

/*
 * A source far over 10/s refused exactly from its moment m: the jiffies
 * rule out all but the last ticks before the moment, the precise clock
 * decides those, and at the moment the next is set (the packet, which a
 * limiter would pass, is dropped: cheaper).
 */
static __always_inline int floor_moment_step(struct floor_moment *m)
{
	__u64 jiffy, now, tick, ticks;

	jiffy = bpf_jiffies64();
	if (jiffy < m->bound_jiffy)
		return XDP_DROP;
	now = bpf_ktime_get_ns();
	if (now < m->moment_ns)
		return XDP_DROP;
	m->moment_ns = now + FLOOR_INTERVAL_NS;
	tick = floor_tick_ns(now, jiffy);
	ticks = tick ? FLOOR_INTERVAL_NS / tick : 0;
	m->bound_jiffy = ticks > FLOOR_JIFFY_LAG ? jiffy + ticks - FLOOR_JIFFY_LAG : 0;
	return XDP_DROP;
}

SEC("xdp.frags")
int floor_jiffies(struct xdp_md *ctx)
{
	struct floor_moment *m = (void *)floor_line_of(ctx);

	return m ? floor_moment_step(m) : XDP_PASS;
}

/*
 * The least state that refuses many sources over 10/s exactly (scenario
 * b): each source's moment and jiffy bound, 16 bytes, in an array of as
 * many slots as the over-limit cache has IPv4 ways, found by a keyed hash
 * of its key. No check of whose a slot is: sources that share one share a
 * moment, which only spares clock reads.
 */
#define FLOOR_MOMENT_SLOTS (2 * SLUICE_HOT_SETS)
_Static_assert((FLOOR_MOMENT_SLOTS & (FLOOR_MOMENT_SLOTS - 1)) == 0, "a mask picks a slot");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FLOOR_MOMENT_SLOTS);
	__type(key, __u32);
	__type(value, struct floor_moment);
} floor_moment_slots SEC(".maps");

SEC("xdp.frags")
int floor_moments(struct xdp_md *ctx)
{
	__u64 seed[3] = { floor_seed[0], floor_seed[1], floor_seed[2] };
	struct floor_moment *m;
	struct sluice_key key;
	struct packet pkt;
	__u32 slot;

	if (!floor_parsed(ctx, &pkt))
		return XDP_PASS;
	floor_key(&key, &pkt);
	slot = (__u32)table_hash(&key, seed) & (FLOOR_MOMENT_SLOTS - 1);
	m = bpf_map_lookup_elem(&floor_moment_slots, &slot);
	return m ? floor_moment_step(m) : XDP_PASS;
}

/*
 * The floors of the source table's layout (struct sluice_set, six lines a
 * set: tags, counts, TATs), for the paths of `make bench` that read more
 * than one line; sluice-bench times them behind the rotator. Each reads
 * lines of the source's sets, then the precise clock. A byte of each line is loaded
 * and dropped (as set_touch does), so the misses overlap; the clock's
 * ordered read then waits for all of them.
 */

/* Loads a byte of the line and drops it; 0 if there is no such line. */
static __always_inline int floor_touch(__u32 set, __u32 line)
{
	const struct floor_line *l = floor_set_line(set, line);

	if (!l)
		return 0;
	asm volatile("r0 = *(u8 *)(%[l] + 0)" ::[l] "r"(l) : "r0");
	return 1;
}

/*
 * A meter step's lines: all six of the source's first set (its tags, then
 * its way's count and TAT, which set_touch loads with the rest), and the
 * clock. A tracked source under its limit reads at least these.
 */
SEC("xdp.frags")
int floor_set(struct xdp_md *ctx)
{
	struct table_place place;
	int touched = 0;
	__u32 line;

	if (!floor_place(ctx, &place))
		return XDP_PASS;
	for (line = 0; line < FLOOR_LINES_PER_SET; line++)
		touched += floor_touch(place.set[0], line);
	if (touched != FLOOR_LINES_PER_SET || !clock_now())
		return XDP_PASS;
	return XDP_DROP;
}

/*
 * A refusal's lines: the tags and the TATs of both sets (lines 0, 4 and
 * 5), and the clock. A new source refused by a full table reads at least
 * these: its tags are in neither set, and every way's TAT is after now.
 */
SEC("xdp.frags")
int floor_refuse(struct xdp_md *ctx)
{
	struct table_place place;
	int touched = 0, i;

	if (!floor_place(ctx, &place))
		return XDP_PASS;
	for (i = 0; i < 2; i++)
		touched += floor_touch(place.set[i], FLOOR_TAGS_LINE) +
			   floor_touch(place.set[i], FLOOR_TAT_LINE) +
			   floor_touch(place.set[i], FLOOR_TAT_LINE + 1);
	if (touched != 6 || !clock_now())
		return XDP_PASS;
	return XDP_DROP;
}

/*
 * Answering a SYN with a cookie SYN-ACK (--prove): the headers read, the
 * kernel's cookie, the frame turned around, its checksums, and XDP_TX.
 */
SEC("xdp.frags")
int floor_synack(struct xdp_md *ctx)
{
	struct packet pkt;

	if (!floor_parsed(ctx, &pkt))
		return XDP_PASS;
	return prove_answer(ctx, pkt.l3_off) ? XDP_DROP : XDP_TX;
}

char LICENSE[] SEC("license") = "GPL";
