// SPDX-License-Identifier: GPL-2.0
/* The option table, and everything read from it: parsing, show, help, suggestions. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "text/options.h"
#include "values/endpoint.h"
#include "values/listen.h"
#include "values/words.h"

#define WATCH_MIN_NS   (NSEC_PER_SEC / 10)
#define WATCH_MAX_NS   (3600 * NSEC_PER_SEC)
#define WAIT_MAX_NS    (1000000 * NSEC_PER_SEC)
#define LISTEN_DEFAULT "127.0.0.1:9723"
#define PERIOD_MIN_NS  (NSEC_PER_SEC / 1000)
#define PERIOD_MAX_NS  (10 * NSEC_PER_SEC)

/* Appends a word (printf-style) to buf, space-separated, keeping it terminated. */
static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 1 < len) {
		buf[used++] = ' ';
		buf[used] = '\0';
	}
	if (used >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Where option o's member is in a, or NULL for IN_NONE. */
static void *member_of(struct cli_args *a, const struct option_def *o)
{
	char *home[] = {
		[IN_NONE] = NULL,
		[IN_ARGS] = (char *)a,
		[IN_SETTINGS] = (char *)&a->settings,
		[IN_MATCH] = (char *)&a->match,
		[IN_ATTACH] = (char *)&a->attach,
		[IN_COMMAND] = (char *)&a->cmd,
	};

	return home[o->home] ? home[o->home] + o->offset : NULL;
}

/* The n-th word of a space-separated list into buf; false past its end. */
static bool nth_word(const char *list, unsigned int n, char *buf, size_t len)
{
	size_t w;

	for (; list && *list; n--) {
		w = strcspn(list, " ");
		if (!n) {
			snprintf(buf, len, "%.*s", (int)w, list);
			return true;
		}
		list += w + (list[w] == ' ');
	}
	return false;
}

/* "expected off, tcp or tcp-always": what a TYPE_WORD option takes. */
static const char *expected_words(const char *list)
{
	static char msg[128];
	char word[32];
	unsigned int i, n = 0;

	while (nth_word(list, n, word, sizeof(word)))
		n++;
	snprintf(msg, sizeof(msg), "expected");
	for (i = 0; i < n; i++) {
		nth_word(list, i, word, sizeof(word));
		append(msg, sizeof(msg), "%s%s%s", i + 1 == n && n > 1 ? "or " : "", word,
		       i + 2 < n ? "," : "");
	}
	return msg;
}

static void store_index(void *field, size_t size, unsigned int i)
{
	if (size == sizeof(uint8_t))
		*(uint8_t *)field = (uint8_t)i;
	else
		*(uint32_t *)field = i;
}

static unsigned int load_index(const void *field, size_t size)
{
	return size == sizeof(uint8_t) ? *(const uint8_t *)field : *(const uint32_t *)field;
}

static int parse_word(const struct option_def *o, void *field, const char *v, const char **why)
{
	char word[32];
	unsigned int i;

	for (i = 0; nth_word(o->values, i, word, sizeof(word)); i++)
		if (!strcmp(v, word)) {
			store_index(field, o->size, i);
			return 0;
		}
	*why = expected_words(o->values);
	return -EINVAL;
}

/* Each --aggregate adds one, counted in the member after the array; "none" clears them. */
static int parse_aggregates(const struct option_def *o, void *field, const char *v,
			    const char **why)
{
	struct aggregate *aggs = field;
	unsigned int *n = (unsigned int *)((char *)field + o->size);
	int err;

	if (!strcmp(v, "none")) {
		*n = 0;
		return 0;
	}
	if (*n == SLUICE_MAX_AGGREGATES) {
		*why = "at most 4 aggregates per rule";
		return -E2BIG;
	}
	err = parse_aggregate(v, &aggs[*n], why);
	if (!err)
		(*n)++;
	return err;
}

static int parse_name(const char *v, const char **field, const char **why)
{
	if (!*v || strpbrk(v, " \t\r\n")) {
		*why = "expected an ACL user name without spaces";
		return -EINVAL;
	}
	*field = v;
	return 0;
}

static int parse_endpoint_list(const char *v, const char **field, const char **why)
{
	struct endpoint e[ENDPOINTS_MAX];
	int n = parse_endpoints(v, e, ENDPOINTS_MAX, why);

	if (n < 0)
		return n;
	*field = v;
	return 0;
}

static int parse_timeout(const char *v, uint64_t *field, const char **why)
{
	int err = parse_duration(v, NSEC_PER_SEC, UINT64_MAX, field, why);

	return err ?: ban_length_check(*field, why);
}

/*
 * A CIDR, its host bits cleared as a rule's own CIDR's are: OPTION_WARNED
 * with what was used in *why, for the caller's warning, which names the
 * command or the file's line.
 */
static int parse_cidr_option(const char *v, struct cidr *c, const char **why)
{
	static char used[96];
	char norm[64];
	bool host_bits;
	int err;

	err = parse_cidr(v, c, &host_bits, why);
	if (err || !host_bits)
		return err;
	format_cidr(norm, sizeof(norm), c);
	snprintf(used, sizeof(used), "has host bits set; using %s", norm);
	*why = used;
	return OPTION_WARNED;
}

/* Parses v, as o's type says, into o's member; v is NULL for a flag. */
static int parse_typed(const struct option_def *o, void *field, const char *v, const char **why)
{
	switch (o->type) {
	case TYPE_FLAG:
		*(bool *)field = true;
		return 0;
	case TYPE_STRING:
		*(const char **)field = v;
		return 0;
	case TYPE_NAME:
		return parse_name(v, field, why);
	case TYPE_WORD:
		return parse_word(o, field, v, why);
	case TYPE_COUNT:
		return parse_count(v, o->min, o->max, field, why);
	case TYPE_DURATION:
		return parse_duration(v, o->min, o->max, field, why);
	case TYPE_SECONDS:
		return parse_seconds(v, o->min, o->max, field, why);
	case TYPE_TIMEOUT:
		return parse_timeout(v, field, why);
	case TYPE_PREFIX:
		return parse_prefix(v, (unsigned int)o->max, field, why);
	case TYPE_RATE:
		return parse_rate(v, field, why);
	case TYPE_BURST:
		return parse_burst(v, field, why);
	case TYPE_ALGORITHM:
		return parse_algorithm(v, field, why);
	case TYPE_ACTION:
		return parse_action(v, field, why);
	case TYPE_DSCP:
		return parse_dscp(v, field, why);
	case TYPE_AGGREGATE:
		return parse_aggregates(o, field, v, why);
	case TYPE_PROTO:
		return parse_proto(v, field, why);
	case TYPE_PORT_RANGE:
		return parse_port_range(v, field, (uint16_t *)field + 1, why);
	case TYPE_TCP_FLAGS:
		return parse_tcp_flags(v, field, why);
	case TYPE_ICMP_TYPE:
		return parse_icmp_type(v, field, why);
	case TYPE_LENGTH:
		return parse_length_range(v, field, (uint16_t *)field + 1, why);
	case TYPE_CIDR:
		return parse_cidr_option(v, field, why);
	case TYPE_MODE:
		return parse_mode(v, field, why);
	case TYPE_GROUP:
		return parse_group(v, field, why);
	case TYPE_LISTEN:
		return parse_listen(v, field, why);
	case TYPE_ENDPOINTS:
		return parse_endpoint_list(v, field, why);
	case TYPE_BAN_AFTER:
		return parse_ban_after(v, field, why);
	case TYPE_FACTOR:
		return parse_factor(v, field, why);
	default:
		*why = "no parser for this type";
		return -EINVAL;
	}
}

/* Every aggregate, each with its own "aggregate" word. */
static void format_aggregates(const struct option_def *o, const void *field, char *buf, size_t len)
{
	const struct aggregate *aggs = field;
	unsigned int i, n = *(const unsigned int *)((const char *)field + o->size);
	char one[96];

	buf[0] = '\0';
	for (i = 0; i < n && i < SLUICE_MAX_AGGREGATES; i++) {
		format_aggregate(one, sizeof(one), &aggs[i]);
		append(buf, len, "%s%s", i ? "aggregate " : "", one);
	}
}

static void format_port_range(const uint16_t *range, char *buf, size_t len)
{
	if (range[0] == range[1])
		snprintf(buf, len, "%u", range[0]);
	else
		snprintf(buf, len, "%u-%u", range[0], range[1]);
}

/* o's member as show writes it, in the words it was parsed from. */
static void format_typed(const struct option_def *o, const void *field, char *buf, size_t len)
{
	buf[0] = '\0';
	switch (o->type) {
	case TYPE_WORD:
		nth_word(o->values, load_index(field, o->size), buf, len);
		break;
	case TYPE_COUNT:
		snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)field);
		break;
	case TYPE_DURATION:
		format_duration(buf, len, *(const uint64_t *)field);
		break;
	case TYPE_PREFIX:
		snprintf(buf, len, "%u", *(const unsigned int *)field);
		break;
	case TYPE_RATE:
		format_rate(buf, len, field);
		break;
	case TYPE_BURST:
		format_burst(buf, len, field);
		break;
	case TYPE_ALGORITHM:
		snprintf(buf, len, "%s", algorithm_name(*(const uint8_t *)field));
		break;
	case TYPE_ACTION:
		snprintf(buf, len, "%s", action_name(*(const uint32_t *)field));
		break;
	case TYPE_DSCP:
		snprintf(buf, len, "%u", *(const uint8_t *)field);
		break;
	case TYPE_AGGREGATE:
		format_aggregates(o, field, buf, len);
		break;
	case TYPE_BAN_AFTER:
		format_ban_after(buf, len, field);
		break;
	case TYPE_FACTOR:
		format_factor(buf, len, *(const uint32_t *)field);
		break;
	case TYPE_PROTO:
		snprintf(buf, len, "%s", proto_name(*(const uint8_t *)field));
		break;
	case TYPE_PORT_RANGE:
	case TYPE_LENGTH:
		format_port_range(field, buf, len);
		break;
	case TYPE_TCP_FLAGS:
		format_tcp_flags(buf, len, field);
		break;
	case TYPE_ICMP_TYPE:
		format_icmp_type(buf, len, field);
		break;
	case TYPE_CIDR:
		format_cidr(buf, len, field);
		break;
	case TYPE_MODE:
		snprintf(buf, len, "%s", mode_name(*(const uint32_t *)field));
		break;
	case TYPE_GROUP:
		format_group(buf, len, *(const unsigned int *)field);
		break;
	default:
		break;
	}
}

/* The member _m of struct _t, in home _home, that an option's value goes to. */
#define MEMBER(_home, _t, _m) \
	.home = _home, .offset = offsetof(_t, _m), .size = sizeof(((_t *)0)->_m)
/* Two adjacent members as one value: a range's low and high ends. */
#define MEMBERS(_home, _t, _first, _last)              \
	.home = _home, .offset = offsetof(_t, _first), \
	.size = offsetof(_t, _last) + sizeof(((_t *)0)->_last) - offsetof(_t, _first)
/* The bool member _m of the same struct that says the option was given. */
#define MARKS(_t, _m) .marks = true, .marked_offset = offsetof(_t, _m)

#define LIMITER(_name, _meta, _values, _type, _member)                                  \
	.name = _name, .metavar = _meta, .scope = SCOPE_LIMITER, .commands = ON_POLICY, \
	.statements = STMT_DEFAULT | STMT_RULE, .values = _values, .type = _type,       \
	MEMBER(IN_SETTINGS, struct settings, _member)
/* What shapes a bucket's key: attach and rule add, not set (fixed while the rule lives). */
#define KEYING(_name, _meta, _type, _member)                                                      \
	.name = _name, .metavar = _meta, .scope = SCOPE_LIMITER,                                  \
	.commands = ON(ATTACH) | ON(RULE), .statements = STMT_DEFAULT | STMT_RULE, .type = _type, \
	MEMBER(IN_SETTINGS, struct settings, _member)
#define PREFIX(_name, _max, _member, _given) \
	KEYING(_name, "N", TYPE_PREFIX, _member), .max = _max, MARKS(struct settings, _given)
#define MATCH(_name, _meta, _values, _type)                                          \
	.name = _name, .metavar = _meta, .scope = SCOPE_MATCH, .commands = ON(RULE), \
	.statements = STMT_RULE, .values = _values, .type = _type
#define FIXED(_name, _meta, _values, _type, _member, _given)                                       \
	.name = _name, .metavar = _meta, .scope = SCOPE_COMMAND, .commands = ON(ATTACH),           \
	.statements = STMT_ATTACH, .values = _values, .type = _type,                               \
	MEMBER(IN_ATTACH, struct attach_settings, _member), MARKS(struct attach_settings, _given), \
	.shown_when_marked = true
#define COMMAND(_name, _meta, _cmds, _type) \
	.name = _name, .metavar = _meta, .scope = SCOPE_COMMAND, .commands = _cmds, .type = _type
#define GLOBAL(_name, _short, _meta, _type)                                           \
	.name = _name, .short_name = _short, .metavar = _meta, .scope = SCOPE_GLOBAL, \
	.commands = ON_EVERY, .type = _type

/* The aggregates' count follows them; a port range's high end its low end. */
_Static_assert(offsetof(struct settings, n_aggregates) ==
		       offsetof(struct settings, aggregates) +
			       sizeof(((struct settings *)0)->aggregates),
	       "TYPE_AGGREGATE counts in the member after the array");
_Static_assert(offsetof(struct match, dport_hi) ==
			       offsetof(struct match, dport_lo) + sizeof(uint16_t) &&
		       offsetof(struct match, sport_hi) ==
			       offsetof(struct match, sport_lo) + sizeof(uint16_t) &&
		       offsetof(struct match, len_hi) ==
			       offsetof(struct match, len_lo) + sizeof(uint16_t),
	       "TYPE_PORT_RANGE and TYPE_LENGTH write hi after lo");

const struct option_def option_table[OPT_MAX] = {
	[OPT_RATE] = { LIMITER("rate", "RATE", NULL, TYPE_RATE, rate),
		       .help = "the limit per source: packets (500/s, 30/m, 1.5k/s) or bandwidth "
			       "(10mbit/s, 500kB/s)" },
	[OPT_ALGORITHM] = { LIMITER("algorithm", "ALGORITHM", "gcra sliding-window fixed-window",
				    TYPE_ALGORITHM, algorithm),
			    .help = "how a source is counted: gcra (a token bucket, the default), "
				    "sliding-window (the weighted estimate over two windows) or "
				    "fixed-window; a window allows --rate per its unit" },
	[OPT_WINDOW] = { LIMITER("window", "DURATION", NULL, TYPE_DURATION, window_ns),
			 .min = WINDOW_MIN_NS, .max = WINDOW_MAX_NS,
			 .help = "window algorithms: the window's length (1ms to 24h, such as 10s; "
				 "default the rate's unit); the limit per window is --rate times it" },
	[OPT_BURST] = { LIMITER("burst", "N", NULL, TYPE_BURST, burst),
			.help = "bucket depth in packets, or bytes for a bandwidth (64kB); default "
				"one second of rate, at least 1 packet or 64 kB" },
	[OPT_WARMUP] = { LIMITER("warmup", "DURATION", NULL, TYPE_DURATION, warmup_ns),
			 .min = WINDOW_MIN_NS, .max = WINDOW_MAX_NS,
			 .help = "gcra, packet rates: an idle or new source ramps up to --rate over "
				 "DURATION (1ms to 24h), its first packets 3 times as far apart "
				 "(Guava's SmoothWarmingUp), instead of taking a burst" },
	[OPT_ACTION] = { LIMITER("action", "ACTION", "drop mark dry-run", TYPE_ACTION, action),
			 .help = "what happens over the limit: drop (default), mark (with --dscp "
				 "and/or --ecn), or dry-run (pass, but count would-drops)" },
	[OPT_DSCP] = { LIMITER("dscp", "N", NULL, TYPE_DSCP, dscp),
		       MARKS(struct settings, mark_dscp), .shown_when_marked = true,
		       .help = "mark: rewrite the DSCP of over-limit packets to N: 0-63, or a class name (ef, "
			       "af11-af43, cs0-cs7)" },
	[OPT_ECN] = { LIMITER("ecn", NULL, NULL, TYPE_FLAG, mark_ecn),
		      .help = "mark: set ECN CE on over-limit packets; drop those not ECN-capable" },
	/* Not on set: a bucket's key is its prefix and kind, fixed while the rule lives. */
	[OPT_IPV4_PREFIX] = { PREFIX("ipv4-prefix", 32, ipv4_prefix, ipv4_prefix_given),
			      .help = "sources share a bucket per IPv4 /N (default 32)" },
	[OPT_IPV6_PREFIX] = { PREFIX("ipv6-prefix", 128, ipv6_prefix, ipv6_prefix_given),
			      .help = "sources share a bucket per IPv6 /N (default 64)" },
	[OPT_KEY] = { KEYING("key", "KIND", TYPE_WORD, key_kind), .values = "src dst pair",
		      .help = "what a bucket is keyed on: src, each source (default); dst, each "
			      "destination address, so no address receives more than the rate; "
			      "pair, each source and destination pair. --ipv4-prefix and "
			      "--ipv6-prefix apply to each address in the key; an IPv6 pair needs "
			      "--ipv6-prefix 64 or shorter" },
	[OPT_NEW_SOURCES] = { LIMITER("new-sources", "RATE", NULL, TYPE_RATE, new_sources),
			      .help = "new buckets admitted per rule (default 10k/s); other new "
				      "sources share the overflow bucket" },
	[OPT_OVERFLOW_RATE] = { LIMITER("overflow-rate", "RATE", NULL, TYPE_RATE, overflow),
				.help = "the overflow bucket's rate (default: --rate, with --burst)" },
	[OPT_INITIAL_BURST] = { LIMITER("initial-burst", "N", NULL, TYPE_BURST, initial),
				.help = "credit of a new bucket (default: the whole burst)" },
	[OPT_ON_FULL] = { LIMITER("on-full", "ACTION", "drop pass", TYPE_WORD, on_full_pass),
			  .help = "when a bucket cannot be created at all: drop (default) or pass" },
	[OPT_PROVE] = { LIMITER("prove", "WHEN", "off tcp tcp-always", TYPE_WORD, prove),
			.help = "make a TCP client prove its address before it gets a bucket: "
				"tcp answers a new source's SYN the new-source budget refuses with "
				"a SYN cookie from XDP, tcp-always every new source's SYN; off "
				"(default) sends refused sources to the overflow bucket" },
	[OPT_PROVEN_SOURCES] = { LIMITER("proven-sources", "RATE", NULL, TYPE_RATE, proven_sources),
				 .help = "new buckets per rule for sources that proved their "
					 "address (default 10k/s), apart from --new-sources" },
	[OPT_AGGREGATE] = { LIMITER("aggregate", "[ipv4|ipv6]/LEN=RATE[,burst=N]", "none",
				    TYPE_AGGREGATE, aggregates),
			    .help = "also limit each wider prefix as a whole, such as /24=5000/s "
				    "(repeatable, up to 4; a length up to 32 is IPv4 unless ipv6/ is "
				    "written; none clears them)" },
	[OPT_BAN_AFTER] = { LIMITER("ban-after", "N[/PERIOD]", "none", TYPE_BAN_AFTER, ban_after),
			    .help = "the penalty box: a source (a key) its own limit refused more "
				    "than N packets within PERIOD (1ms to 1d, default 1s) is banned, "
				    "decided in the datapath: 1500/10s. Refusals of the shared "
				    "overflow bucket never count; not with --aggregate; none (on set) "
				    "ends it" },
	[OPT_BAN_FOR] = { LIMITER("ban-for", "DURATION", NULL, TYPE_DURATION, ban_for_ns),
			  .min = BAN_LENGTH_MIN_NS, .max = BAN_LENGTH_MAX_NS,
			  .help = "with --ban-after: how long a first ban lasts (1s to 365d, "
				  "default 1m); a banned key gets the rule's --action" },
	[OPT_BAN_ESCALATE] = { LIMITER("ban-escalate", "FACTOR", NULL, TYPE_FACTOR,
				       ban_escalate_milli),
			       .help = "with --ban-after: each repeat (banned again within "
				       "--ban-memory of the last ban's end) lasts FACTOR times the "
				       "last (1 to 100, such as 2 or 1.5; default 1)" },
	[OPT_BAN_MEMORY] = { LIMITER("ban-memory", "DURATION", NULL, TYPE_DURATION, ban_memory_ns),
			     .min = BAN_LENGTH_MIN_NS, .max = BAN_LENGTH_MAX_NS,
			     .help = "with --ban-after: how long after a ban ends a new one counts "
				     "as a repeat (1s to 365d, default 1h)" },
	[OPT_BAN_MAX] = { LIMITER("ban-max", "DURATION", NULL, TYPE_DURATION, ban_max_ns),
			  .min = BAN_LENGTH_MIN_NS, .max = BAN_LENGTH_MAX_NS,
			  .help = "with --ban-after: the longest a ban lasts, however often it "
				  "repeats (1s to 365d, at least --ban-for; default 1d)" },
	[OPT_PROTO] = { MATCH("proto", "PROTO", "tcp udp icmp icmpv6", TYPE_PROTO),
			MEMBER(IN_MATCH, struct match, proto),
			.help = "the rule applies to this protocol only" },
	[OPT_DPORT] = { MATCH("dport", "PORT[-PORT]", NULL, TYPE_PORT_RANGE),
			MEMBERS(IN_MATCH, struct match, dport_lo, dport_hi),
			.help = "the rule applies to this destination port or range only" },
	[OPT_SYN] = { MATCH("syn", NULL, NULL, TYPE_FLAG), MEMBER(IN_MATCH, struct match, syn),
		      .help = "the rule applies to TCP connection attempts only (SYN without ACK)" },
	[OPT_SPORT] = { MATCH("sport", "PORT[-PORT]", NULL, TYPE_PORT_RANGE),
			MEMBERS(IN_MATCH, struct match, sport_lo, sport_hi),
			.help = "the rule applies to this source port or range only, such as a "
				"reflection's service port (udp 53, 123, 389, 1900, 11211)" },
	[OPT_TCP_FLAGS] = { MATCH("tcp-flags", "MASK/FLAGS", NULL, TYPE_TCP_FLAGS),
			    MEMBER(IN_MATCH, struct match, tcp_flags),
			    .help = "the rule applies to TCP packets whose flags of MASK are "
				    "exactly FLAGS, as iptables' --tcp-flags MASK FLAGS: "
				    "comma-separated FIN SYN RST PSH ACK URG ECE CWR, or ALL, NONE "
				    "(SYN,ACK/SYN, ALL/FIN,PSH,URG)" },
	[OPT_ICMP_TYPE] = { MATCH("icmp-type", "TYPE[/CODE]", NULL, TYPE_ICMP_TYPE),
			    MEMBER(IN_MATCH, struct match, icmp),
			    .help = "the rule applies to this ICMP or ICMPv6 type only (0-255), "
				    "and code if given (8 echo request, 3/4 fragmentation needed, "
				    "128 ICMPv6 echo request)" },
	[OPT_LENGTH] = { MATCH("length", "LEN[-LEN]", NULL, TYPE_LENGTH),
			 MEMBERS(IN_MATCH, struct match, len_lo, len_hi),
			 .help = "the rule applies to frames of this length or range only, in "
				 "bytes from the Ethernet header on (1-65535; a longer frame counts "
				 "as 65535)" },
	[OPT_DST] = { MATCH("dst", "CIDR", NULL, TYPE_CIDR), MEMBER(IN_MATCH, struct match, dst),
		      .help = "the rule applies to packets to this destination address or CIDR "
			      "only, of the rule's family" },
	[OPT_MODE] = { FIXED("mode", "MODE", "native generic skb", TYPE_MODE, xdp_flags,
			     mode_given),
		       .help = "native or generic (skb) XDP; default native when the driver "
			       "can" },
	[OPT_MAX_SOURCES] = { FIXED("max-sources", "N", NULL, TYPE_COUNT, max_sources,
				    max_sources_given),
			      .min = 1, .max = MAX_SOURCES_MAX,
			      .help = "buckets tracked at once (default 1000000; an IPv6 "
				      "source counts as two); a new source takes the place of "
				      "one idle long enough to have refilled" },
	[OPT_GROUP] = { FIXED("group", "GROUP", NULL, TYPE_GROUP, group, group_given),
			.help = "let the members of GROUP read the pinned state (stats, top, "
				"status, the exporter) without root or capabilities: its directory "
				"0750 and its maps 0640, root:GROUP" },
	[OPT_MULTIPROG] = { COMMAND("multiprog", NULL, ON(ATTACH), TYPE_FLAG),
			    MEMBER(IN_COMMAND, struct attach_args, multiprog),
			    .help = "run through libxdp's dispatcher, beside xdp-filter or other "
				    "programs loaded through libxdp (run priority 20; only a passed "
				    "packet goes on to the next program)" },
	[OPT_FILE] = { COMMAND("file", "FILE", ON(ATTACH) | ON(APPLY) | ON(ALLOW) | ON(DENY),
			       TYPE_STRING),
		       .short_name = 'f', .values = "@file", MEMBER(IN_ARGS, struct cli_args, file),
		       .help = "read from FILE ('-' is standard input); attach: the whole "
			       "policy and attach settings, in the format of sluice.conf(5)" },
	[OPT_TIMEOUT] = { COMMAND("timeout", "DURATION", ON(DENY), TYPE_TIMEOUT),
			  MEMBER(IN_COMMAND, struct list_args, timeout_ns),
			  .help = "deny add: the entries stop denying after DURATION (90s, 10m, "
				  "1h30m, 2d; 1s to 3650d), in the datapath; adding again never "
				  "shortens an entry, without --timeout makes it permanent" },
	[OPT_CHECK] = { COMMAND("check", NULL, ON(APPLY), TYPE_FLAG),
			.help = "only check FILE, as apply would before changing anything: no "
				"interface, no root, nothing changed" },
	[OPT_REPLACE] = { COMMAND("replace", NULL, ON(ATTACH) | ON(RULE), TYPE_FLAG),
			  .help = "attach: if IFACE is attached already, make it what this attach "
				  "describes, keeping bucket state unless --max-sources, --mode "
				  "or the layout changes; an unchanged policy is left alone. rule "
				  "add: change the rule of the same CIDR and class in place, its "
				  "sources keeping their state while its meter keeps its shape" },
	[OPT_PROMETHEUS] = { COMMAND("prometheus", NULL, ON(STATS), TYPE_FLAG),
			     MEMBER(IN_COMMAND, struct stats_args, prometheus),
			     .help = "the Prometheus text exposition format" },
	[OPT_WATCH] = { COMMAND("watch", "SECONDS", ON(STATS), TYPE_SECONDS),
			MEMBER(IN_COMMAND, struct stats_args, watch_ns), .value_optional = true,
			.bare = "1", .min = WATCH_MIN_NS, .max = WATCH_MAX_NS,
			.help = "redraw every SECONDS (default 1, 0.1 to 3600) with per-second "
				"rates; Ctrl-C stops" },
	[OPT_COUNT] = { COMMAND("count", "N", ON(STATS), TYPE_COUNT),
			MEMBER(IN_COMMAND, struct stats_args, count), .min = 1, .max = UINT32_MAX,
			.help = "with --watch: stop after N intervals" },
	[OPT_LIMIT] = { COMMAND("limit", "N", ON(TOP), TYPE_COUNT),
			MEMBER(IN_COMMAND, struct top_args, limit), .short_name = 'n', .min = 1,
			.max = MAX_SOURCES_MAX, .dflt = "20",
			.help = "sources to show (default 20)" },
	[OPT_SORT] = { COMMAND("sort", "KEY", ON(TOP), TYPE_WORD),
		       MEMBER(IN_COMMAND, struct top_args, sort), .values = "drops passed rate",
		       .dflt = "drops",
		       .help = "drops (default), passed, or rate: packets per second over a "
			       "one-second window (top then takes a second)" },
	[OPT_LISTEN] = { COMMAND("listen", "ADDR:PORT", ON(EXPORTER), TYPE_LISTEN),
			 MEMBER(IN_COMMAND, struct exporter_args, listen), .dflt = LISTEN_DEFAULT,
			 .help = "a numeric address: 192.0.2.1:9723, [::1]:9723; [::]:9723 and "
				 "0.0.0.0:9723 are every address ([::] IPv4 too); port 0 picks "
				 "a free port (default " LISTEN_DEFAULT ")" },
	[OPT_REDIS] = { COMMAND("redis", "HOST:PORT[,HOST:PORT...]", ON(AGENT), TYPE_ENDPOINTS),
			MEMBER(IN_COMMAND, struct agent_args, redis),
			.help = "the Redis node, or seed nodes of a Redis Cluster, that the "
				"fleet shares (an IPv6 address in brackets); plain TCP: reach "
				"another site through a tunnel" },
	[OPT_PERIOD] = { COMMAND("period", "DURATION", ON(AGENT), TYPE_DURATION),
			 MEMBER(IN_COMMAND, struct agent_args, period_ns), .min = PERIOD_MIN_NS,
			 .max = PERIOD_MAX_NS, .dflt = "100ms",
			 .help = "how often usage is synced, T (default 100ms, jittered by up "
				 "to a tenth; 1ms to 10s)" },
	[OPT_FALLBACK] = { COMMAND("fallback", "MODE", ON(AGENT), TYPE_WORD),
			   MEMBER(IN_COMMAND, struct agent_args, fallback), .values = "local split",
			   .help = "while Redis cannot be reached: local (each host its full "
				   "limit, the default) or split (each host 1/N of it, N the "
				   "agents last counted in Redis, else --hosts)" },
	[OPT_HOSTS] = { COMMAND("hosts", "N", ON(AGENT), TYPE_COUNT),
			MEMBER(IN_COMMAND, struct agent_args, hosts), .min = 1,
			.max = AGENT_HOSTS_MAX, .dflt = "1",
			.help = "hosts in the fleet until the agents heartbeating in Redis are "
				"counted (default 1): the candidate share and --fallback split" },
	[OPT_SHADOW] = { COMMAND("shadow", NULL, ON(AGENT), TYPE_FLAG),
			 MEMBER(IN_COMMAND, struct agent_args, shadow),
			 .help = "compute the global verdict and count what it would refuse, "
				 "without changing local limits" },
	[OPT_REDIS_USER] = { COMMAND("redis-user", "USER", ON(AGENT), TYPE_NAME),
			     MEMBER(IN_COMMAND, struct agent_args, user),
			     .help = "the Redis ACL user to AUTH as (with --redis-password-file)" },
	[OPT_REDIS_PASSWORD_FILE] = { COMMAND("redis-password-file", "FILE", ON(AGENT),
					      TYPE_STRING),
				      MEMBER(IN_COMMAND, struct agent_args, password_file),
				      .values = "@file",
				      .help = "AUTH with the password in FILE (its first line; "
					      "refused when others may read it)" },
	[OPT_JSON] = { GLOBAL("json", 'j', NULL, TYPE_FLAG), MEMBER(IN_ARGS, struct cli_args, json),
		       .help = "JSON output (errors too), also before the command" },
	[OPT_PRETTY] = { GLOBAL("pretty", 'p', NULL, TYPE_FLAG),
			 MEMBER(IN_ARGS, struct cli_args, pretty),
			 .help = "JSON output, indented (implies --json)" },
	[OPT_WAIT] = { GLOBAL("wait", 0, "SECONDS", TYPE_SECONDS),
		       MEMBER(IN_ARGS, struct cli_args, wait_ns), .max = WAIT_MAX_NS,
		       .help = "wait at most SECONDS for another sluice command to finish "
			       "(default: as long as it takes); then exit 1, nothing changed" },
	[OPT_HELP] = { GLOBAL("help", 'h', NULL, TYPE_FLAG), .help = "show this help and exit" },
};

/* Does option o apply to command cmd, or with cmd -1 to some config statement? */
static bool option_in(const struct option_def *o, int cmd)
{
	return cmd < 0 ? o->statements : o->commands & (1U << cmd);
}

void cli_args_init(struct cli_args *a, int cmd)
{
	const char *why;
	int i;

	memset(a, 0, sizeof(*a));
	/* The union cli_args.cmd is the command's: CMD_COUNT, none, for a config statement. */
	a->command = cmd < 0 ? CMD_COUNT : (enum command_id)cmd;
	settings_default(&a->settings);
	a->attach.max_sources = SLUICE_DEFAULT_MAX_SOURCES;
	a->wait_ns = UINT64_MAX;
	for (i = 0; i < OPT_MAX; i++)
		if (option_table[i].dflt && option_in(&option_table[i], cmd))
			parse_typed(&option_table[i], member_of(a, &option_table[i]),
				    option_table[i].dflt, &why);
}

int option_given_in(const struct cli_args *a, enum option_scope scope)
{
	int i;

	for (i = 0; i < OPT_MAX; i++)
		if (a->given[i] && option_table[i].scope == scope)
			return i;
	return -1;
}

void option_names_in(char *buf, size_t len, int cmd, enum option_scope scope)
{
	int i, n = 0, total = 0;
	size_t at = 0;

	for (i = 0; i < OPT_MAX; i++)
		total += option_table[i].scope == scope && option_in(&option_table[i], cmd);
	buf[0] = '\0';
	for (i = 0; i < OPT_MAX && at < len; i++) {
		if (option_table[i].scope != scope || !option_in(&option_table[i], cmd))
			continue;
		n++;
		at += (size_t)snprintf(buf + at, len - at, "%s--%s",
				       n == 1	    ? ""
				       : n == total ? " or "
						    : ", ",
				       option_table[i].name);
	}
}

const char *sort_name(enum top_sort sort)
{
	static char word[16];

	nth_word(option_table[OPT_SORT].values, sort, word, sizeof(word));
	return word;
}

int option_find(const char *name)
{
	int i;

	for (i = 0; i < OPT_MAX; i++)
		if (!strcmp(option_table[i].name, name))
			return i;
	return -1;
}

int option_find_short(char c)
{
	int i;

	for (i = 0; c && i < OPT_MAX; i++)
		if (option_table[i].short_name == c)
			return i;
	return -1;
}

bool option_takes(int cmd, unsigned int stmt, enum option_id id)
{
	if (cmd < 0)
		return option_table[id].statements & stmt;
	return option_table[id].commands & (1U << cmd);
}

int option_apply(struct cli_args *a, enum option_id id, const char *value, const char **why)
{
	const struct option_def *o = &option_table[id];
	char *field = member_of(a, o);
	int err = 0;

	if (!value)
		value = o->bare;
	if (field)
		err = parse_typed(o, field, value, why);
	if (err < 0)
		return err;
	if (o->marks)
		*(bool *)(field - o->offset + o->marked_offset) = true;
	a->given[id] = true;
	return err;
}

/* o's member and what it marks, from one home struct to another: set's replace. */
void option_copy_setting(const struct option_def *o, const struct settings *from,
			 struct settings *to)
{
	/* An aggregate's count follows its array (TYPE_AGGREGATE). */
	size_t size = o->size + (o->type == TYPE_AGGREGATE ? sizeof(unsigned int) : 0);

	memcpy((char *)to + o->offset, (const char *)from + o->offset, size);
	if (o->marks)
		*(bool *)((char *)to + o->marked_offset) = true;
}

/*
 * Is o's member in base worth a word of show: stated, where the option
 * marks that, else unlike the default in dflt.
 */
static bool shown(const struct option_def *o, const char *base, const char *dflt)
{
	const char *field = base + o->offset;

	if (o->type == TYPE_AGGREGATE)
		return *(const unsigned int *)(field + o->size);
	if (o->type == TYPE_MODE && !*(const uint32_t *)field)
		return false;
	if (o->shown_when_marked)
		return *(const bool *)(base + o->marked_offset);
	return memcmp(field, dflt + o->offset, o->size);
}

/* o's member in base as show writes it; false when show leaves it out. */
static bool format_shown(const struct option_def *o, const void *base, const void *dflt, char *buf,
			 size_t len)
{
	buf[0] = '\0';
	if (!shown(o, base, dflt))
		return false;
	format_typed(o, (const char *)base + o->offset, buf, len);
	return true;
}

/* The options of one home that show prints, in table order: "rate 500/s burst 1000". */
static void format_home(char *buf, size_t len, enum option_home home, const void *base,
			const void *dflt)
{
	char v[640];
	int i;

	buf[0] = '\0';
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->home != home || !format_shown(o, base, dflt, v, sizeof(v)))
			continue;
		if (o->metavar)
			append(buf, len, "%s %s", o->name, v);
		else
			append(buf, len, "%s", o->name);
	}
}

bool format_setting(const struct option_def *o, const struct settings *s, char *buf, size_t len)
{
	struct settings dflt;

	settings_default(&dflt);
	return format_shown(o, s, &dflt, buf, len);
}

void format_settings(char *buf, size_t len, const struct settings *s)
{
	struct settings dflt;

	settings_default(&dflt);
	format_home(buf, len, IN_SETTINGS, s, &dflt);
}

void format_match(char *buf, size_t len, const struct match *m)
{
	static const struct match any;

	format_home(buf, len, IN_MATCH, m, &any);
}

void format_attach_settings(char *buf, size_t len, const struct attach_settings *as)
{
	format_home(buf, len, IN_ATTACH, as, as);
}

const char *statement_name(unsigned int bit)
{
	static const char *const names[STMT_COUNT] = { "default", "rule", "attach" };

	return bit < STMT_COUNT ? names[bit] : "?";
}

void option_usage(const struct option_def *o, char *buf, size_t len)
{
	int n = o->short_name ? snprintf(buf, len, "-%c, --%s", o->short_name, o->name)
			      : snprintf(buf, len, "--%s", o->name);

	if (n < 0 || (size_t)n >= len || !o->metavar)
		return;
	snprintf(buf + n, len - (size_t)n, o->value_optional ? " [%s]" : " %s", o->metavar);
}

/* Prints text from column `indent` on, wrapped before `width`. */
static void wrap(FILE *out, const char *text, int col, int indent, int width)
{
	const char *word = text;

	while (*word) {
		int n = (int)strcspn(word, " ");

		if (col > indent && col + 1 + n > width) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", n, word);
		col += n;
		word += n;
		while (*word == ' ')
			word++;
	}
	fputc('\n', out);
}

void options_help(FILE *out, enum command_id cmd)
{
	char usage[96];
	int i, col;

	for (i = 0; i < OPT_MAX; i++) {
		if (!option_takes(cmd, 0, i))
			continue;
		option_usage(&option_table[i], usage, sizeof(usage));
		col = fprintf(out, "  %s", usage);
		if (col > 24) {
			fputc('\n', out);
			col = 0;
		}
		fprintf(out, "%*s", 26 - col, "");
		wrap(out, option_table[i].help, 26, 26, 80);
	}
}

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

/* Levenshtein distance, for names of at most 63 characters. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, prev, cur, row[64];

	if (la >= 64 || lb >= 64)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = a[i - 1] == b[j - 1] ? prev : 1 + min3(prev, row[j - 1], cur);
			prev = cur;
		}
	}
	return row[lb];
}

const char *nearest_name(const char *word, const char *const *names, size_t n)
{
	size_t i, d, edits, best_d = SIZE_MAX, best_edits = SIZE_MAX, limit = strlen(word) / 3;
	const char *best = NULL;

	if (limit < 2)
		limit = 2;
	for (i = 0; i < n; i++) {
		d = edits = edit_distance(word, names[i]);
		/* A prefix of a name ("--rat") is as near as a typo... */
		if (strlen(word) >= 2 && !strncmp(names[i], word, strlen(word)))
			d = 1;
		/* ...and of two as near, the fewer edits wins: "stat" is "stats", not "status". */
		if (d < best_d || (d == best_d && edits < best_edits)) {
			best_d = d;
			best_edits = edits;
			best = names[i];
		}
	}
	return best_d <= limit ? best : NULL;
}
