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

#include "flood.h"

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
		"transmitted with XDP_TX. Every IP, UDP and TCP checksum is correct, so\n"
		"a receiving stack accepts what reaches it.\n"
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
		"  --proto udp|tcp-syn  UDP datagrams (default), or TCP SYNs with the\n"
		"                     options a Linux client sends\n"
		"  --src-mac MAC      source MAC address (default: IFACE's own)\n"
		"  --size BYTES       frame size without FCS, up to %d (default %d, or\n"
		"                     the smallest frame that fits: 70 for IPv6 UDP,\n"
		"                     74 for IPv4 TCP SYN, 94 for IPv6 TCP SYN)\n"
		"  --dport PORT       destination port (default 9000)\n"
		"  --duration SECS    send for SECS seconds (default 5)\n"
		"  --count N          send exactly N frames instead\n"
		"  --rate PPS         pace to PPS frames per second (default: full speed)\n"
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
		"The count printed at the end is the number of frames the XDP program\n"
		"handed to the device; with --rate and --duration it is RATE*SECS, or\n"
		"less if the machine cannot keep up. The CPU time printed after it is\n"
		"this process's, which includes receive work the kernel ran on its time\n"
		"(a veth peer's NAPI runs on the sending CPU).\n"
		"\n"
		"While it runs, the program is also attached to IFACE in generic (skb)\n"
		"mode, which keeps each test run from waiting for an RCU grace period;\n"
		"it passes all real traffic and is detached when the process exits.\n"
		"\n"
		"veth: frames sent with XDP_TX into a veth are delivered only if the\n"
		"PEER end has NAPI enabled, i.e. an XDP program attached to the peer\n"
		"(e.g. 'ip link set dev PEER xdp obj pass.o sec xdp') or GRO enabled on\n"
		"it ('ethtool -K PEER gro on'). Otherwise the kernel drops them\n"
		"silently; " PROG " checks for this up front and refuses to run.\n"
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

enum {
	OPT_DST_MAC = 256,
	OPT_DST,
	OPT_SOURCES,
	OPT_SRC,
	OPT_IPV6,
	OPT_V6_PREFIXES,
	OPT_PROTO,
	OPT_SRC_MAC,
	OPT_SIZE,
	OPT_DPORT,
	OPT_DURATION,
	OPT_COUNT,
	OPT_RATE,
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
	{ "proto", required_argument, NULL, OPT_PROTO },
	{ "src-mac", required_argument, NULL, OPT_SRC_MAC },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "rate", required_argument, NULL, OPT_RATE },
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
	fprintf(stderr, PROG ": invalid value for --%s: '%s'\n", opt_name(opt), arg);
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
	return check_range(o);
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
