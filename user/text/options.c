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

#define WATCH_DEFAULT_NS  NSEC_PER_SEC
#define WATCH_MIN_NS	  (NSEC_PER_SEC / 10)
#define WATCH_MAX_NS	  (3600 * NSEC_PER_SEC)
#define WAIT_MAX_NS	  (1000000 * NSEC_PER_SEC)
#define TOP_DEFAULT	  20
#define LISTEN_DEFAULT	  "127.0.0.1:9723"
#define PERIOD_DEFAULT_NS (100 * NSEC_PER_SEC / 1000)
#define PERIOD_MIN_NS	  (NSEC_PER_SEC / 1000)
#define PERIOD_MAX_NS	  (10 * NSEC_PER_SEC)

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

/* Limiter options. */

static int apply_rate(struct cli_args *a, const char *v, const char **why)
{
	return parse_rate(v, &a->settings.rate, why);
}

static int apply_burst(struct cli_args *a, const char *v, const char **why)
{
	return parse_burst(v, &a->settings.burst, why);
}

static int apply_algorithm(struct cli_args *a, const char *v, const char **why)
{
	return parse_algorithm(v, &a->settings.algorithm, why);
}

static int apply_window(struct cli_args *a, const char *v, const char **why)
{
	return parse_duration(v, WINDOW_MIN_NS, WINDOW_MAX_NS, &a->settings.window_ns, why);
}

static int apply_warmup(struct cli_args *a, const char *v, const char **why)
{
	return parse_duration(v, WINDOW_MIN_NS, WINDOW_MAX_NS, &a->settings.warmup_ns, why);
}

static int apply_action(struct cli_args *a, const char *v, const char **why)
{
	return parse_action(v, &a->settings.action, why);
}

static int apply_dscp(struct cli_args *a, const char *v, const char **why)
{
	int err = parse_dscp(v, &a->settings.dscp, why);

	if (!err)
		a->settings.mark_dscp = true;
	return err;
}

static int apply_ecn(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->settings.mark_ecn = true;
	return 0;
}

static int apply_ipv4_prefix(struct cli_args *a, const char *v, const char **why)
{
	a->settings.ipv4_prefix_given = true;
	return parse_prefix(v, 32, &a->settings.ipv4_prefix, why);
}

static int apply_ipv6_prefix(struct cli_args *a, const char *v, const char **why)
{
	a->settings.ipv6_prefix_given = true;
	return parse_prefix(v, 128, &a->settings.ipv6_prefix, why);
}

static int apply_new_sources(struct cli_args *a, const char *v, const char **why)
{
	return parse_rate(v, &a->settings.new_sources, why);
}

static int apply_overflow_rate(struct cli_args *a, const char *v, const char **why)
{
	return parse_rate(v, &a->settings.overflow, why);
}

static int apply_initial_burst(struct cli_args *a, const char *v, const char **why)
{
	return parse_burst(v, &a->settings.initial, why);
}

static int apply_on_full(struct cli_args *a, const char *v, const char **why)
{
	if (strcmp(v, "drop") && strcmp(v, "pass")) {
		*why = "expected drop or pass";
		return -EINVAL;
	}
	a->settings.on_full_pass = !strcmp(v, "pass");
	return 0;
}

static int apply_prove(struct cli_args *a, const char *v, const char **why)
{
	static const char *const modes[] = {
		[PROVE_OFF] = "off", [PROVE_TCP] = "tcp", [PROVE_TCP_ALWAYS] = "tcp-always"
	};
	unsigned int i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(v, modes[i])) {
			a->settings.prove = (uint8_t)i;
			return 0;
		}
	*why = "expected off, tcp or tcp-always";
	return -EINVAL;
}

static int apply_proven_sources(struct cli_args *a, const char *v, const char **why)
{
	return parse_rate(v, &a->settings.proven_sources, why);
}

/* Each --aggregate adds one; "none" clears them. */
static int apply_aggregate(struct cli_args *a, const char *v, const char **why)
{
	struct settings *s = &a->settings;
	int err;

	if (!strcmp(v, "none")) {
		s->n_aggregates = 0;
		return 0;
	}
	if (s->n_aggregates == SLUICE_MAX_AGGREGATES) {
		*why = "at most 4 aggregates per rule";
		return -E2BIG;
	}
	err = parse_aggregate(v, &s->aggregates[s->n_aggregates], why);
	if (!err)
		s->n_aggregates++;
	return err;
}

/* Match options. */

static int apply_proto(struct cli_args *a, const char *v, const char **why)
{
	return parse_proto(v, &a->match.proto, why);
}

static int apply_dport(struct cli_args *a, const char *v, const char **why)
{
	return parse_port_range(v, &a->match.dport_lo, &a->match.dport_hi, why);
}

static int apply_syn(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->match.syn = true;
	return 0;
}

/* Command options. */

static int apply_multiprog(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->multiprog = true;
	return 0;
}

static int apply_mode(struct cli_args *a, const char *v, const char **why)
{
	return parse_mode(v, &a->xdp_flags, why);
}

static int apply_max_sources(struct cli_args *a, const char *v, const char **why)
{
	return parse_count(v, 1, MAX_SOURCES_MAX, &a->max_sources, why);
}

static int apply_group(struct cli_args *a, const char *v, const char **why)
{
	return parse_group(v, &a->group, why);
}

static int apply_file(struct cli_args *a, const char *v, const char **why)
{
	(void)why;
	a->file = v;
	return 0;
}

static int apply_timeout(struct cli_args *a, const char *v, const char **why)
{
	int err = parse_duration(v, NSEC_PER_SEC, UINT64_MAX, &a->timeout_ns, why);

	return err ?: ban_length_check(a->timeout_ns, why);
}

static int apply_check(struct cli_args *a, const char *v, const char **why)
{
	(void)a, (void)v, (void)why;
	return 0;
}

static int apply_replace(struct cli_args *a, const char *v, const char **why)
{
	(void)a, (void)v, (void)why;
	return 0;
}

static int apply_prometheus(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->prometheus = true;
	return 0;
}

static int apply_watch(struct cli_args *a, const char *v, const char **why)
{
	a->watch_ns = WATCH_DEFAULT_NS;
	return v ? parse_seconds(v, WATCH_MIN_NS, WATCH_MAX_NS, &a->watch_ns, why) : 0;
}

static int apply_count(struct cli_args *a, const char *v, const char **why)
{
	return parse_count(v, 1, UINT32_MAX, &a->count, why);
}

static int apply_limit(struct cli_args *a, const char *v, const char **why)
{
	return parse_count(v, 1, MAX_SOURCES_MAX, &a->limit, why);
}

static const char *const sort_names[] = {
	[SORT_DROPS] = "drops",
	[SORT_PASSED] = "passed",
	[SORT_RATE] = "rate",
};

static int apply_sort(struct cli_args *a, const char *v, const char **why)
{
	size_t i;

	for (i = 0; i < sizeof(sort_names) / sizeof(sort_names[0]); i++) {
		if (!strcmp(v, sort_names[i])) {
			a->sort = (enum top_sort)i;
			return 0;
		}
	}
	*why = "expected drops, passed or rate";
	return -EINVAL;
}

static int apply_listen(struct cli_args *a, const char *v, const char **why)
{
	return parse_listen(v, &a->listen, why);
}

static int apply_redis(struct cli_args *a, const char *v, const char **why)
{
	struct endpoint e[ENDPOINTS_MAX];
	int n = parse_endpoints(v, e, ENDPOINTS_MAX, why);

	if (n < 0)
		return n;
	a->agent.redis = v;
	return 0;
}

static int apply_period(struct cli_args *a, const char *v, const char **why)
{
	return parse_duration(v, PERIOD_MIN_NS, PERIOD_MAX_NS, &a->agent.period_ns, why);
}

static int apply_fallback(struct cli_args *a, const char *v, const char **why)
{
	if (strcmp(v, "local") && strcmp(v, "split")) {
		*why = "expected local or split";
		return -EINVAL;
	}
	a->agent.fallback = strcmp(v, "local") ? FALLBACK_SPLIT : FALLBACK_LOCAL;
	return 0;
}

static int apply_hosts(struct cli_args *a, const char *v, const char **why)
{
	return parse_count(v, 1, AGENT_HOSTS_MAX, &a->agent.hosts, why);
}

static int apply_shadow(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->agent.shadow = true;
	return 0;
}

static int apply_redis_user(struct cli_args *a, const char *v, const char **why)
{
	if (!*v || strpbrk(v, " \t\r\n")) {
		*why = "expected an ACL user name without spaces";
		return -EINVAL;
	}
	a->agent.user = v;
	return 0;
}

static int apply_redis_password_file(struct cli_args *a, const char *v, const char **why)
{
	(void)why;
	a->agent.password_file = v;
	return 0;
}

static int apply_json(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->json = true;
	return 0;
}

static int apply_pretty(struct cli_args *a, const char *v, const char **why)
{
	(void)v, (void)why;
	a->pretty = true;
	return 0;
}

static int apply_wait(struct cli_args *a, const char *v, const char **why)
{
	return parse_seconds(v, 0, WAIT_MAX_NS, &a->wait_ns, why);
}

static int apply_help(struct cli_args *a, const char *v, const char **why)
{
	(void)a, (void)v, (void)why;
	return 0;
}

/* How show prints each limiter and match option: false at the default. */

static bool show_rate(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	format_rate(buf, len, &s->rate);
	return true;
}

static bool show_burst(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	format_burst(buf, len, &s->burst);
	return s->burst.value;
}

static bool show_algorithm(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%s", algorithm_name(s->algorithm));
	return s->algorithm != SLUICE_METER_GCRA;
}

static bool show_window(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	format_duration(buf, len, s->window_ns);
	return s->window_ns;
}

static bool show_warmup(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	format_duration(buf, len, s->warmup_ns);
	return s->warmup_ns;
}

static bool show_action(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%s", action_name(s->action));
	return s->action != SLUICE_ACTION_DROP;
}

static bool show_dscp(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%u", s->dscp);
	return s->mark_dscp;
}

static bool show_ecn(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m, (void)len;
	buf[0] = '\0';
	return s->mark_ecn;
}

static bool show_ipv4_prefix(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%u", s->ipv4_prefix);
	return s->ipv4_prefix != SLUICE_DEFAULT_IPV4_PREFIX;
}

static bool show_ipv6_prefix(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%u", s->ipv6_prefix);
	return s->ipv6_prefix != SLUICE_DEFAULT_IPV6_PREFIX;
}

static bool show_new_sources(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	if (s->new_sources.amount)
		format_rate(buf, len, &s->new_sources);
	return s->new_sources.amount;
}

static bool show_overflow_rate(const struct settings *s, const struct match *m, char *buf,
			       size_t len)
{
	(void)m;
	if (s->overflow.amount)
		format_rate(buf, len, &s->overflow);
	return s->overflow.amount;
}

static bool show_initial_burst(const struct settings *s, const struct match *m, char *buf,
			       size_t len)
{
	(void)m;
	format_burst(buf, len, &s->initial);
	return s->initial.value;
}

static bool show_on_full(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "pass");
	return s->on_full_pass;
}

static bool show_prove(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)m;
	snprintf(buf, len, "%s", s->prove == PROVE_TCP_ALWAYS ? "tcp-always" : "tcp");
	return s->prove != PROVE_OFF;
}

static bool show_proven_sources(const struct settings *s, const struct match *m, char *buf,
				size_t len)
{
	(void)m;
	if (s->proven_sources.amount)
		format_rate(buf, len, &s->proven_sources);
	return s->proven_sources.amount;
}

/* Every aggregate, each with its own "aggregate" word. */
static bool show_aggregate(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	char one[96];
	unsigned int i;

	(void)m;
	buf[0] = '\0';
	for (i = 0; i < s->n_aggregates && i < SLUICE_MAX_AGGREGATES; i++) {
		format_aggregate(one, sizeof(one), &s->aggregates[i]);
		append(buf, len, "%s%s", i ? "aggregate " : "", one);
	}
	return s->n_aggregates;
}

static bool show_proto(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)s;
	snprintf(buf, len, "%s", proto_name(m->proto));
	return m->proto;
}

static bool show_dport(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)s;
	if (m->dport_lo == m->dport_hi)
		snprintf(buf, len, "%u", m->dport_lo);
	else
		snprintf(buf, len, "%u-%u", m->dport_lo, m->dport_hi);
	return m->dport_hi;
}

static bool show_syn(const struct settings *s, const struct match *m, char *buf, size_t len)
{
	(void)s, (void)len;
	buf[0] = '\0';
	return m->syn;
}

/* How show prints the attach statement's options: false when not stated. */

static bool show_mode(const struct attach_settings *as, char *buf, size_t len)
{
	snprintf(buf, len, "%s", mode_name(as->xdp_flags));
	return as->mode_given && as->xdp_flags;
}

static bool show_max_sources(const struct attach_settings *as, char *buf, size_t len)
{
	snprintf(buf, len, "%llu", (unsigned long long)as->max_sources);
	return as->max_sources_given;
}

static bool show_group(const struct attach_settings *as, char *buf, size_t len)
{
	format_group(buf, len, as->group);
	return as->group_given;
}

#define LIMITER(_name, _meta, _values, _fn, _help)                                               \
	{                                                                                        \
		.name = _name, .metavar = _meta, .scope = SCOPE_LIMITER, .commands = ON_POLICY,  \
		.statements = STMT_DEFAULT | STMT_RULE, .values = _values, .apply = apply_##_fn, \
		.format = show_##_fn, .help = _help                                              \
	}
#define PREFIX(_name, _fn, _help)                                                          \
	{                                                                                  \
		.name = _name, .metavar = "N", .scope = SCOPE_LIMITER,                     \
		.commands = ON(ATTACH) | ON(RULE), .statements = STMT_DEFAULT | STMT_RULE, \
		.apply = apply_##_fn, .format = show_##_fn, .help = _help                  \
	}
#define MATCH(_name, _meta, _values, _fn, _help)                                             \
	{                                                                                    \
		.name = _name, .metavar = _meta, .scope = SCOPE_MATCH, .commands = ON(RULE), \
		.statements = STMT_RULE, .values = _values, .apply = apply_##_fn,            \
		.format = show_##_fn, .help = _help                                          \
	}

const struct option_def option_table[OPT_MAX] = {
	[OPT_RATE] = LIMITER("rate", "RATE", NULL, rate,
			     "the limit per source: packets (500/s, 30/m, 1.5k/s) or bandwidth "
			     "(10mbit/s, 500kB/s)"),
	[OPT_ALGORITHM] =
		LIMITER("algorithm", "ALGORITHM", "gcra sliding-window fixed-window", algorithm,
			"how a source is counted: gcra (a token bucket, the default), "
			"sliding-window (the weighted estimate over two windows) or "
			"fixed-window; a window allows --rate per its unit"),
	[OPT_WINDOW] = LIMITER("window", "DURATION", NULL, window,
			       "window algorithms: the window's length (1ms to 24h, such as 10s; "
			       "default the rate's unit); the limit per window is --rate times it"),
	[OPT_BURST] = LIMITER("burst", "N", NULL, burst,
			      "bucket depth in packets, or bytes for a bandwidth (64kB); default "
			      "one second of rate, at least 1 packet or 64 kB"),
	[OPT_WARMUP] = LIMITER("warmup", "DURATION", NULL, warmup,
			       "gcra, packet rates: an idle or new source ramps up to --rate over "
			       "DURATION (1ms to 24h), its first packets 3 times as far apart "
			       "(Guava's SmoothWarmingUp), instead of taking a burst"),
	[OPT_ACTION] = LIMITER("action", "ACTION", "drop mark dry-run", action,
			       "what happens over the limit: drop (default), mark (with --dscp "
			       "and/or --ecn), or dry-run (pass, but count would-drops)"),
	[OPT_DSCP] = LIMITER(
		"dscp", "N", NULL, dscp,
		"mark: rewrite the DSCP of over-limit packets to N: 0-63, or a class name (ef, "
		"af11-af43, cs0-cs7)"),
	[OPT_ECN] = LIMITER("ecn", NULL, NULL, ecn,
			    "mark: set ECN CE on over-limit packets; drop those not ECN-capable"),
	/* Not on set: a bucket's key is its prefix, fixed while the rule lives. */
	[OPT_IPV4_PREFIX] = PREFIX("ipv4-prefix", ipv4_prefix,
				   "sources share a bucket per IPv4 /N (default 32)"),
	[OPT_IPV6_PREFIX] = PREFIX("ipv6-prefix", ipv6_prefix,
				   "sources share a bucket per IPv6 /N (default 64)"),
	[OPT_NEW_SOURCES] = LIMITER("new-sources", "RATE", NULL, new_sources,
				    "new buckets admitted per rule (default 10k/s); other new "
				    "sources share the overflow bucket"),
	[OPT_OVERFLOW_RATE] = LIMITER("overflow-rate", "RATE", NULL, overflow_rate,
				      "the overflow bucket's rate (default: --rate, with --burst)"),
	[OPT_INITIAL_BURST] = LIMITER("initial-burst", "N", NULL, initial_burst,
				      "credit of a new bucket (default: the whole burst)"),
	[OPT_ON_FULL] = LIMITER("on-full", "ACTION", "drop pass", on_full,
				"when a bucket cannot be created at all: drop (default) or pass"),
	[OPT_PROVE] = LIMITER("prove", "WHEN", "off tcp tcp-always", prove,
			      "make a TCP client prove its address before it gets a bucket: "
			      "tcp answers a new source's SYN the new-source budget refuses with "
			      "a SYN cookie from XDP, tcp-always every new source's SYN; off "
			      "(default) sends refused sources to the overflow bucket"),
	[OPT_PROVEN_SOURCES] = LIMITER("proven-sources", "RATE", NULL, proven_sources,
				       "new buckets per rule for sources that proved their "
				       "address (default 10k/s), apart from --new-sources"),
	[OPT_AGGREGATE] = LIMITER("aggregate", "[ipv4|ipv6]/LEN=RATE[,burst=N]", "none", aggregate,
				  "also limit each wider prefix as a whole, such as /24=5000/s "
				  "(repeatable, up to 4; a length up to 32 is IPv4 unless ipv6/ is "
				  "written; none clears them)"),
	[OPT_PROTO] = MATCH("proto", "PROTO", "tcp udp icmp icmpv6", proto,
			    "the rule applies to this protocol only"),
	[OPT_DPORT] = MATCH("dport", "PORT[-PORT]", NULL, dport,
			    "the rule applies to this destination port or range only"),
	[OPT_SYN] = MATCH("syn", NULL, NULL, syn,
			  "the rule applies to TCP connection attempts only (SYN without ACK)"),
	[OPT_MODE] = { .name = "mode",
		       .metavar = "MODE",
		       .scope = SCOPE_COMMAND,
		       .commands = ON(ATTACH),
		       .statements = STMT_ATTACH,
		       .values = "native generic skb",
		       .apply = apply_mode,
		       .format_attach = show_mode,
		       .help = "native or generic (skb) XDP; default native when the driver "
			       "can" },
	[OPT_MAX_SOURCES] = { .name = "max-sources",
			      .metavar = "N",
			      .scope = SCOPE_COMMAND,
			      .commands = ON(ATTACH),
			      .statements = STMT_ATTACH,
			      .apply = apply_max_sources,
			      .format_attach = show_max_sources,
			      .help = "buckets tracked at once (default 1000000; an IPv6 "
				      "source counts as two); a new source takes the place of "
				      "one idle long enough to have refilled" },
	[OPT_GROUP] = { .name = "group",
			.metavar = "GROUP",
			.scope = SCOPE_COMMAND,
			.commands = ON(ATTACH),
			.statements = STMT_ATTACH,
			.apply = apply_group,
			.format_attach = show_group,
			.help = "let the members of GROUP read the pinned state (stats, top, "
				"status, the exporter) without root or capabilities: its directory "
				"0750 and its maps 0640, root:GROUP" },
	[OPT_MULTIPROG] = { .name = "multiprog",
			    .scope = SCOPE_COMMAND,
			    .commands = ON(ATTACH),
			    .apply = apply_multiprog,
			    .help = "run through libxdp's dispatcher, beside xdp-filter or other "
				    "programs loaded through libxdp (run priority 20; only a passed "
				    "packet goes on to the next program)" },
	[OPT_FILE] = { .name = "file",
		       .short_name = 'f',
		       .metavar = "FILE",
		       .scope = SCOPE_COMMAND,
		       .commands = ON(ATTACH) | ON(APPLY) | ON(ALLOW) | ON(DENY),
		       .values = "@file",
		       .apply = apply_file,
		       .help = "read from FILE ('-' is standard input); attach: the whole "
			       "policy and attach settings, in the format of sluice.conf(5)" },
	[OPT_TIMEOUT] = { .name = "timeout",
			  .metavar = "DURATION",
			  .scope = SCOPE_COMMAND,
			  .commands = ON(DENY),
			  .apply = apply_timeout,
			  .help = "deny add: the entries stop denying after DURATION (90s, 10m, "
				  "1h30m, 2d; 1s to 3650d), in the datapath; adding again never "
				  "shortens an entry, without --timeout makes it permanent" },
	[OPT_CHECK] = { .name = "check",
			.scope = SCOPE_COMMAND,
			.commands = ON(APPLY),
			.apply = apply_check,
			.help = "only check FILE, as apply would before changing anything: no "
				"interface, no root, nothing changed" },
	[OPT_REPLACE] = { .name = "replace",
			  .scope = SCOPE_COMMAND,
			  .commands = ON(ATTACH),
			  .apply = apply_replace,
			  .help = "if IFACE is attached already, make it what this attach "
				  "describes, keeping bucket state unless --max-sources, --mode "
				  "or the layout changes; an unchanged policy is left alone" },
	[OPT_PROMETHEUS] = { .name = "prometheus",
			     .scope = SCOPE_COMMAND,
			     .commands = ON(STATS),
			     .apply = apply_prometheus,
			     .help = "the Prometheus text exposition format" },
	[OPT_WATCH] = { .name = "watch",
			.metavar = "SECONDS",
			.value_optional = true,
			.scope = SCOPE_COMMAND,
			.commands = ON(STATS),
			.apply = apply_watch,
			.help = "redraw every SECONDS (default 1, 0.1 to 3600) with per-second "
				"rates; Ctrl-C stops" },
	[OPT_COUNT] = { .name = "count",
			.metavar = "N",
			.scope = SCOPE_COMMAND,
			.commands = ON(STATS),
			.apply = apply_count,
			.help = "with --watch: stop after N intervals" },
	[OPT_LIMIT] = { .name = "limit",
			.short_name = 'n',
			.metavar = "N",
			.scope = SCOPE_COMMAND,
			.commands = ON(TOP),
			.apply = apply_limit,
			.help = "sources to show (default 20)" },
	[OPT_SORT] = { .name = "sort",
		       .metavar = "KEY",
		       .scope = SCOPE_COMMAND,
		       .commands = ON(TOP),
		       .values = "drops passed rate",
		       .apply = apply_sort,
		       .help = "drops (default), passed, or rate: packets per second over a "
			       "one-second window (top then takes a second)" },
	[OPT_LISTEN] = { .name = "listen",
			 .metavar = "ADDR:PORT",
			 .scope = SCOPE_COMMAND,
			 .commands = ON(EXPORTER),
			 .apply = apply_listen,
			 .help = "a numeric address: 192.0.2.1:9723, [::1]:9723; [::]:9723 and "
				 "0.0.0.0:9723 are every address ([::] IPv4 too); port 0 picks "
				 "a free port (default " LISTEN_DEFAULT ")" },
	[OPT_REDIS] = { .name = "redis",
			.metavar = "HOST:PORT[,HOST:PORT...]",
			.scope = SCOPE_COMMAND,
			.commands = ON(AGENT),
			.apply = apply_redis,
			.help = "the Redis node, or seed nodes of a Redis Cluster, that the "
				"fleet shares (an IPv6 address in brackets); plain TCP: reach "
				"another site through a tunnel" },
	[OPT_PERIOD] = { .name = "period",
			 .metavar = "DURATION",
			 .scope = SCOPE_COMMAND,
			 .commands = ON(AGENT),
			 .apply = apply_period,
			 .help = "how often usage is synced, T (default 100ms, jittered by up "
				 "to a tenth; 1ms to 10s)" },
	[OPT_FALLBACK] = { .name = "fallback",
			   .metavar = "MODE",
			   .scope = SCOPE_COMMAND,
			   .commands = ON(AGENT),
			   .values = "local split",
			   .apply = apply_fallback,
			   .help = "while Redis cannot be reached: local (each host its full "
				   "limit, the default) or split (each host 1/N of it, N the "
				   "agents last counted in Redis, else --hosts)" },
	[OPT_HOSTS] = { .name = "hosts",
			.metavar = "N",
			.scope = SCOPE_COMMAND,
			.commands = ON(AGENT),
			.apply = apply_hosts,
			.help = "hosts in the fleet until the agents heartbeating in Redis are "
				"counted (default 1): the candidate share and --fallback split" },
	[OPT_SHADOW] = { .name = "shadow",
			 .scope = SCOPE_COMMAND,
			 .commands = ON(AGENT),
			 .apply = apply_shadow,
			 .help = "compute the global verdict and count what it would refuse, "
				 "without changing local limits" },
	[OPT_REDIS_USER] = { .name = "redis-user",
			     .metavar = "USER",
			     .scope = SCOPE_COMMAND,
			     .commands = ON(AGENT),
			     .apply = apply_redis_user,
			     .help = "the Redis ACL user to AUTH as (with --redis-password-file)" },
	[OPT_REDIS_PASSWORD_FILE] = { .name = "redis-password-file",
				      .metavar = "FILE",
				      .scope = SCOPE_COMMAND,
				      .commands = ON(AGENT),
				      .values = "@file",
				      .apply = apply_redis_password_file,
				      .help = "AUTH with the password in FILE (its first line; "
					      "refused when others may read it)" },
	[OPT_JSON] = { .name = "json",
		       .short_name = 'j',
		       .scope = SCOPE_GLOBAL,
		       .commands = ON_EVERY,
		       .apply = apply_json,
		       .help = "JSON output (errors too), also before the command" },
	[OPT_PRETTY] = { .name = "pretty",
			 .short_name = 'p',
			 .scope = SCOPE_GLOBAL,
			 .commands = ON_EVERY,
			 .apply = apply_pretty,
			 .help = "JSON output, indented (implies --json)" },
	[OPT_WAIT] = { .name = "wait",
		       .metavar = "SECONDS",
		       .scope = SCOPE_GLOBAL,
		       .commands = ON_EVERY,
		       .apply = apply_wait,
		       .help = "wait at most SECONDS for another sluice command to finish "
			       "(default: as long as it takes); then exit 1, nothing changed" },
	[OPT_HELP] = { .name = "help",
		       .short_name = 'h',
		       .scope = SCOPE_GLOBAL,
		       .commands = ON_EVERY,
		       .apply = apply_help,
		       .help = "show this help and exit" },
};

void cli_args_init(struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	settings_default(&a->settings);
	a->max_sources = SLUICE_DEFAULT_MAX_SOURCES;
	a->limit = TOP_DEFAULT;
	a->sort = SORT_DROPS;
	a->wait_ns = UINT64_MAX;
	a->agent.period_ns = PERIOD_DEFAULT_NS;
	a->agent.hosts = 1;
	parse_listen(LISTEN_DEFAULT, &a->listen, &(const char *){ NULL });
}

int option_given_in(const struct cli_args *a, enum option_scope scope)
{
	int i;

	for (i = 0; i < OPT_MAX; i++)
		if (a->given[i] && option_table[i].scope == scope)
			return i;
	return -1;
}

const char *sort_name(enum top_sort sort)
{
	return sort_names[sort];
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
	int err = option_table[id].apply(a, value, why);

	if (!err)
		a->given[id] = true;
	return err;
}

/* The options of one scope that differ from their defaults, in table order. */
static void format_scope(char *buf, size_t len, enum option_scope scope, const struct settings *s,
			 const struct match *m)
{
	char v[640];
	int i;

	buf[0] = '\0';
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->scope != scope || !o->format(s, m, v, sizeof(v)))
			continue;
		if (o->metavar)
			append(buf, len, "%s %s", o->name, v);
		else
			append(buf, len, "%s", o->name);
	}
}

void format_settings(char *buf, size_t len, const struct settings *s)
{
	static const struct match none;

	format_scope(buf, len, SCOPE_LIMITER, s, &none);
}

void format_match(char *buf, size_t len, const struct match *m)
{
	struct settings s;

	settings_default(&s);
	format_scope(buf, len, SCOPE_MATCH, &s, m);
}

void format_attach_settings(char *buf, size_t len, const struct attach_settings *as)
{
	char v[64];
	int i;

	buf[0] = '\0';
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->format_attach && o->format_attach(as, v, sizeof(v)))
			append(buf, len, "%s %s", o->name, v);
	}
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
	size_t i, d, best_d = SIZE_MAX, limit = strlen(word) / 3;
	const char *best = NULL;

	if (limit < 2)
		limit = 2;
	for (i = 0; i < n; i++) {
		d = edit_distance(word, names[i]);
		/* A prefix of a name ("--rat") is as near as a typo. */
		if (strlen(word) >= 2 && !strncmp(names[i], word, strlen(word)))
			d = 1;
		if (d < best_d) {
			best_d = d;
			best = names[i];
		}
	}
	return best_d <= limit ? best : NULL;
}
