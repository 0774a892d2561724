// SPDX-License-Identifier: GPL-2.0
/* sluice-flood: the command line. Every value is checked before anything is sent. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "flood_opts.h"

#define DEFAULT_SRC4 "10.77.0.1"
#define DEFAULT_SRC6 "fd00:77::1"
#define DEFAULT_SIZE 64

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: " PROG " IFACE --dst-mac MAC --dst IP --sources N [options]\n"
		"\n"
		"Send UDP datagrams or TCP SYNs over IPv4 or IPv6 out of IFACE, cycling\n"
		"the source address round-robin over N addresses. Frames are generated\n"
		"by an XDP program run with BPF_PROG_TEST_RUN in live-frames mode and\n"
		"transmitted with XDP_TX, or where the kernel refuses that, stamped by\n"
		"the same code in userspace and sent through a packet socket. Every IP,\n"
		"UDP and TCP checksum is correct, so a receiving stack accepts what\n"
		"reaches it.\n"
		"\n"
		"Options:\n"
		"  --dst-mac MAC      destination MAC address (required)\n"
		"  --dst IP           destination address (required; IPv6 with --ipv6)\n"
		"  --sources N        number of distinct source addresses (required)\n"
		"  --src IP           first source address (default " DEFAULT_SRC4 ",\n"
		"                     or " DEFAULT_SRC6 " with --ipv6)\n"
		"  --ipv6             send IPv6 (default IPv4)\n"
		"  --v6-prefixes K    spread the IPv6 sources over K consecutive /64s\n"
		"                     (default N: each source in a /64 of its own)\n"
		"  --mix-src IP       first address of a second source set mixed into\n"
		"                     the flood (same family as the main set)\n"
		"  --mix-sources M    number of addresses in the second set\n"
		"  --mix-every K      K >= 2: frames 0, K, 2K, ... of the run come from\n"
		"                     the second set (the three --mix options go together)\n"
		"  --proto udp|tcp-syn  UDP datagrams (default), or TCP SYNs with the\n"
		"                     options a Linux client sends\n"
		"  --src-mac MAC      source MAC address (default: IFACE's own)\n"
		"  --size BYTES       frame size without FCS, up to %d (default %d, or\n"
		"                     the smallest frame that fits: 70 for IPv6 UDP,\n"
		"                     74 for IPv4 TCP SYN, 94 for IPv6 TCP SYN)\n"
		"  --dport PORT       destination port (default 9000)\n"
		"  --duration SECS    send for SECS seconds (default 5)\n"
		"  --count N          send exactly N frames instead (N main-set frames\n"
		"                     when mixing; see below)\n"
		"  --rate PPS         pace to PPS frames per second (default: full speed)\n"
		"  --sender auto|live|packet  live XDP frames, a packet socket (slower),\n"
		"                     or live frames where the kernel and IFACE take\n"
		"                     them and the packet socket otherwise (default)\n"
		"  --quiet            print only the number of frames sent\n"
		"  --force            allow an interface that is not veth or loopback\n"
		"  --help             show this text\n"
		"\n"
		"IPv4 sources are --src, --src + 1, ... IPv6 source i lies in /64 number\n"
		"i mod K (counting up from the /64 of --src) at host number i / K\n"
		"(counting up from the host part of --src): 1000000 sources over 1000\n"
		"/64s are 1000 hosts in each. Bytes beyond the headers are UDP payload\n"
		"or SYN data.\n"
		"\n"
		"Mixing: frame n of the run (from 0) carries the second set's next\n"
		"address if n is a multiple of K, else the main set's next address; each\n"
		"set cycles round-robin on its own, and the main set advances only on\n"
		"its own frames. Second-set IPv4 addresses are --mix-src, --mix-src + 1,\n"
		"...; IPv6 ones count up the host part of --mix-src, all in its /64.\n"
		"With --count N the run sends N main-set frames and stops after the last,\n"
		"having sent ceil(N / (K - 1)) second-set frames among them: --sources N\n"
		"--count N sends each main source exactly once. --rate and --duration\n"
		"count the frames of both sets.\n"
		"\n"
		"The count printed at the end is the number of frames handed to the\n"
		"device (the packet socket sends a frame the device refused again);\n"
		"with --rate and --duration it is RATE*SECS, or less if the machine\n"
		"cannot keep up. The CPU time printed after it is\n"
		"this process's, which includes receive work the kernel ran on its time\n"
		"(a veth peer's NAPI runs on the sending CPU). When mixing, a second line\n"
		"'mixed N frames from M sources' follows: N of the frames counted were\n"
		"the second set's, M is --mix-sources. --quiet prints the total alone;\n"
		"of a total T, ceil(T / K) frames were mixed.\n"
		"\n"
		"While it runs, whichever sender sends, the program is also attached to\n"
		"IFACE, natively where the driver can (a veth then also delivers frames\n"
		"its peer sends back with XDP_TX), else in generic (skb) mode, which\n"
		"keeps each test run from waiting for an RCU grace period; it passes\n"
		"all real traffic and is detached when the process exits.\n"
		"\n"
		"veth: frames sent with XDP_TX into a veth are delivered only if the\n"
		"PEER end has NAPI enabled, i.e. an XDP program attached to the peer\n"
		"(e.g. 'ip link set dev PEER xdp obj pass.o sec xdp') or GRO enabled on\n"
		"it ('ethtool -K PEER gro on'). Otherwise the kernel drops them\n"
		"silently; " PROG " checks for this up front, and then sends through\n"
		"the packet socket (--sender auto) or refuses to run (--sender live).\n"
		"The peer's XDP ring holds 256 frames: at full speed a receiver slower\n"
		"than the sender loses frames, which " PROG " reports as tx drops.\n",
		MAX_FRAME, DEFAULT_SIZE);
}

/* Decimal only, no sign, no trailing junk: "1e6" or "-1" are mistakes here. */
static int parse_u64(const char *s, __u64 min, __u64 max, __u64 *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
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

/* Exactly six colon-separated pairs of hex digits. */
static int parse_mac(const char *s, unsigned char mac[ETH_ALEN])
{
	unsigned int b[ETH_ALEN];
	int i;

	if (strlen(s) != 3 * ETH_ALEN - 1)
		return -EINVAL;
	for (i = 0; i < 3 * ETH_ALEN - 1; i++) {
		bool colon = i % 3 == 2;

		if (colon ? s[i] != ':' : !strchr("0123456789abcdefABCDEF", s[i]))
			return -EINVAL;
	}
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
		return -EINVAL;
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = b[i];
	return 0;
}

static int parse_proto(const char *s, enum flood_proto *out)
{
	if (!strcmp(s, "udp"))
		*out = FLOOD_UDP;
	else if (!strcmp(s, "tcp-syn"))
		*out = FLOOD_TCP_SYN;
	else
		return -EINVAL;
	return 0;
}

static int parse_sender(const char *s, enum flood_sender *out)
{
	if (!strcmp(s, "auto"))
		*out = FLOOD_SENDER_AUTO;
	else if (!strcmp(s, "live"))
		*out = FLOOD_SENDER_LIVE;
	else if (!strcmp(s, "packet"))
		*out = FLOOD_SENDER_PACKET;
	else
		return -EINVAL;
	return 0;
}

enum {
	OPT_DST_MAC = 256,
	OPT_DST,
	OPT_SOURCES,
	OPT_SRC,
	OPT_IPV6,
	OPT_V6_PREFIXES,
	OPT_MIX_SRC,
	OPT_MIX_SOURCES,
	OPT_MIX_EVERY,
	OPT_PROTO,
	OPT_SRC_MAC,
	OPT_SIZE,
	OPT_DPORT,
	OPT_DURATION,
	OPT_COUNT,
	OPT_RATE,
	OPT_SENDER,
	OPT_QUIET,
	OPT_FORCE,
	OPT_HELP,
};

/* clang-format off */
static const struct option long_opts[] = {
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "sources", required_argument, NULL, OPT_SOURCES },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "v6-prefixes", required_argument, NULL, OPT_V6_PREFIXES },
	{ "mix-src", required_argument, NULL, OPT_MIX_SRC },
	{ "mix-sources", required_argument, NULL, OPT_MIX_SOURCES },
	{ "mix-every", required_argument, NULL, OPT_MIX_EVERY },
	{ "proto", required_argument, NULL, OPT_PROTO },
	{ "src-mac", required_argument, NULL, OPT_SRC_MAC },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "sender", required_argument, NULL, OPT_SENDER },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "help", no_argument, NULL, OPT_HELP },
	{}
};
/* clang-format on */

static const char *opt_name(int opt)
{
	const struct option *lo;

	for (lo = long_opts; lo->name; lo++)
		if (lo->val == opt)
			return lo->name;
	return "?";
}

static int invalid(int opt, const char *arg)
{
	/* The one bound that is not obvious from the option's meaning. */
	const char *hint = opt == OPT_MIX_EVERY ? " (2 or more: 1 would leave no main frames)" : "";

	fprintf(stderr, PROG ": invalid value for --%s: '%s'%s\n", opt_name(opt), arg, hint);
	return -EINVAL;
}

/* Applies one option; returns -EINVAL with the complaint already printed. */
static int apply_opt(struct flood_opts *o, int opt, const char *arg)
{
	int err = 0;

	switch (opt) {
	case OPT_DST_MAC:
		err = parse_mac(arg, o->dst_mac);
		o->have_dst_mac = true;
		break;
	case OPT_SRC_MAC:
		err = parse_mac(arg, o->src_mac);
		o->have_src_mac = true;
		break;
	case OPT_DST: /* addresses wait until the family is known */
		o->dst_arg = arg;
		break;
	case OPT_SRC:
		o->src_arg = arg;
		break;
	case OPT_MIX_SRC:
		o->mix_src_arg = arg;
		break;
	case OPT_MIX_SOURCES:
		err = parse_u64(arg, 1, UINT32_MAX, &o->mix_sources);
		break;
	case OPT_MIX_EVERY:
		err = parse_u64(arg, 2, UINT32_MAX, &o->mix_every);
		break;
	case OPT_IPV6:
		o->ipv6 = true;
		break;
	case OPT_V6_PREFIXES:
		err = parse_u64(arg, 1, UINT32_MAX, &o->v6_prefixes);
		break;
	case OPT_PROTO:
		err = parse_proto(arg, &o->proto);
		break;
	case OPT_SOURCES:
		err = parse_u64(arg, 1, UINT32_MAX, &o->sources);
		break;
	case OPT_SIZE:
		err = parse_u64(arg, 1, MAX_FRAME, &o->size);
		break;
	case OPT_DPORT:
		err = parse_u64(arg, 1, UINT16_MAX, &o->dport);
		break;
	case OPT_DURATION:
		err = parse_seconds(arg, &o->duration);
		break;
	case OPT_COUNT:
		err = parse_u64(arg, 1, UINT64_MAX, &o->count);
		break;
	case OPT_RATE:
		err = parse_u64(arg, 1, UINT32_MAX, &o->rate);
		break;
	case OPT_SENDER:
		err = parse_sender(arg, &o->sender);
		break;
	case OPT_QUIET:
		o->quiet = true;
		break;
	case OPT_FORCE:
		o->force = true;
		break;
	default:
		return -EINVAL;
	}
	return err ? invalid(opt, arg) : 0;
}

static int parse_addr(struct flood_opts *o, int opt, const char *arg, unsigned char *out)
{
	if (inet_pton(o->ipv6 ? AF_INET6 : AF_INET, arg, out) == 1)
		return 0;
	fprintf(stderr, PROG ": invalid value for --%s: '%s' (an %s address%s)\n", opt_name(opt),
		arg, o->ipv6 ? "IPv6" : "IPv4", o->ipv6 ? "" : "; IPv6 needs --ipv6");
	return -EINVAL;
}

/* The last source must not wrap past the top of the address space. */
static int check_range(const struct flood_opts *o)
{
	__u64 hosts;

	if (!o->ipv6) {
		if (o->sources - 1 <= UINT32_MAX - flood_be(o->src, 4))
			return 0;
	} else {
		hosts = (o->sources + o->v6_prefixes - 1) / o->v6_prefixes;
		if (o->v6_prefixes - 1 <= UINT64_MAX - flood_be(o->src, 8) &&
		    hosts - 1 <= UINT64_MAX - flood_be(o->src + 8, 8))
			return 0;
	}
	fprintf(stderr, PROG ": --sources %llu from --src runs past the end of the address space\n",
		(unsigned long long)o->sources);
	return -EINVAL;
}

/*
 * The second set: its first address, that its last one stays in range
 * (IPv4 counts up the whole address, IPv6 the host part within the /64),
 * and that --count main frames plus the mixed ones fit the frame counter.
 */
static int check_mix(struct flood_opts *o)
{
	__u64 first, max;

	if (!o->mix_every)
		return 0;
	if (parse_addr(o, OPT_MIX_SRC, o->mix_src_arg, o->mix_src))
		return -EINVAL;
	first = o->ipv6 ? flood_be(o->mix_src + 8, 8) : flood_be(o->mix_src, 4);
	max = o->ipv6 ? UINT64_MAX : UINT32_MAX;
	if (o->mix_sources - 1 > max - first) {
		fprintf(stderr,
			PROG ": --mix-sources %llu from --mix-src runs past the end of %s\n",
			(unsigned long long)o->mix_sources,
			o->ipv6 ? "its /64" : "the address space");
		return -EINVAL;
	}
	if (o->count > UINT64_MAX - flood_mixed_for(o, o->count)) {
		fprintf(stderr,
			PROG ": --count %llu with --mix-every %llu comes to 2^64 frames or more\n",
			(unsigned long long)o->count, (unsigned long long)o->mix_every);
		return -EINVAL;
	}
	return 0;
}

/* Addresses, prefixes and frame size, once the family and protocol are known. */
static int check_layout(struct flood_opts *o)
{
	const char *src = o->src_arg ? o->src_arg : o->ipv6 ? DEFAULT_SRC6 : DEFAULT_SRC4;
	__u64 min;

	if (parse_addr(o, OPT_DST, o->dst_arg, o->dst) || parse_addr(o, OPT_SRC, src, o->src))
		return -EINVAL;
	if (o->v6_prefixes && !o->ipv6) {
		fprintf(stderr, PROG ": --v6-prefixes needs --ipv6\n");
		return -EINVAL;
	}
	if (!o->v6_prefixes)
		o->v6_prefixes = o->sources;
	if (o->v6_prefixes > o->sources) {
		fprintf(stderr, PROG ": --v6-prefixes %llu is more than --sources %llu\n",
			(unsigned long long)o->v6_prefixes, (unsigned long long)o->sources);
		return -EINVAL;
	}
	min = flood_min_size(o);
	if (!o->size)
		o->size = min > DEFAULT_SIZE ? min : DEFAULT_SIZE;
	if (o->size < min) {
		fprintf(stderr,
			PROG ": --size %llu is too small: these frames need at least %llu\n",
			(unsigned long long)o->size, (unsigned long long)min);
		return -EINVAL;
	}
	if (check_range(o))
		return -EINVAL;
	return check_mix(o);
}

/* The options of the second set come all three or not at all. */
static int check_mix_given(const struct flood_opts *o)
{
	const char *missing = NULL;

	if (!o->mix_src_arg && !o->mix_sources && !o->mix_every)
		return 0;
	if (!o->mix_src_arg)
		missing = "--mix-src";
	else if (!o->mix_sources)
		missing = "--mix-sources";
	else if (!o->mix_every)
		missing = "--mix-every";
	if (!missing)
		return 0;
	fprintf(stderr, PROG ": missing %s: --mix-src, --mix-sources and --mix-every go together\n",
		missing);
	return -EINVAL;
}

/* Checks that need all options seen: presence and combinations. */
static int check_opts(struct flood_opts *o, bool have_duration)
{
	const char *missing = NULL;

	if (!o->ifname)
		missing = "IFACE";
	else if (!o->have_dst_mac)
		missing = "--dst-mac";
	else if (!o->dst_arg)
		missing = "--dst";
	else if (!o->sources)
		missing = "--sources";
	if (missing) {
		fprintf(stderr, PROG ": missing %s (see --help)\n", missing);
		return -EINVAL;
	}
	if (check_mix_given(o))
		return -EINVAL;
	if (have_duration && o->count) {
		fprintf(stderr, PROG ": --duration and --count are mutually exclusive\n");
		return -EINVAL;
	}
	if (o->count)
		o->duration = 0;
	return check_layout(o);
}

int flood_parse_args(int argc, char **argv, struct flood_opts *o)
{
	bool have_duration = false;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		if (opt == OPT_HELP) {
			usage(stdout);
			exit(0);
		}
		if (opt == '?')
			return -EINVAL; /* getopt has said what was wrong */
		if (opt == OPT_DURATION)
			have_duration = true;
		err = apply_opt(o, opt, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		o->ifname = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return check_opts(o, have_duration);
}
