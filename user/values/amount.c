// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_link.h>
#include "args.h"
#include "output.h"

struct unit {
	const char *name;
	uint64_t value;
	uint8_t kind; /* enum sluice_rate_unit */
};

/* Amount suffixes: packets, bits and bytes, SI multipliers, spelled apart. */
static const struct unit amounts[] = {
	{ "", 1, SLUICE_UNIT_PACKETS },		  { "k", 1000, SLUICE_UNIT_PACKETS },
	{ "M", 1000000, SLUICE_UNIT_PACKETS },	  { "bit", 1, SLUICE_UNIT_BITS },
	{ "kbit", 1000, SLUICE_UNIT_BITS },	  { "mbit", 1000000, SLUICE_UNIT_BITS },
	{ "Mbit", 1000000, SLUICE_UNIT_BITS },	  { "gbit", 1000000000, SLUICE_UNIT_BITS },
	{ "Gbit", 1000000000, SLUICE_UNIT_BITS }, { "B", 1, SLUICE_UNIT_BYTES },
	{ "kB", 1000, SLUICE_UNIT_BYTES },	  { "MB", 1000000, SLUICE_UNIT_BYTES },
	{ "GB", 1000000000, SLUICE_UNIT_BYTES },  { NULL, 0, 0 },
};

static const struct unit periods[] = {
	{ "s", NSEC_PER_SEC, 0 },
	{ "m", 60 * NSEC_PER_SEC, 0 },
	{ "h", 3600 * NSEC_PER_SEC, 0 },
	{ NULL, 0, 0 },
};

static const struct unit *unit_find(const struct unit *table, const char *s, size_t len)
{
	for (; table->name; table++)
		if (strlen(table->name) == len && !strncmp(table->name, s, len))
			return table;
	return NULL;
}

/* Decimal digits only: no sign, no spaces, no hex, no overflow. */
static int parse_digits(const char **s, uint64_t *out, const char **why)
{
	const char *p = *s;
	uint64_t v = 0;

	if (*p < '0' || *p > '9') {
		*why = "expected a number";
		return -EINVAL;
	}
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10) {
			*why = "number is too large";
			return -ERANGE;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*s = p;
	*out = v;
	return 0;
}

/* NUMBER with a suffix from `amounts`, running up to `end`. */
static int parse_amount(const char *s, const char *end, uint64_t *out, const struct unit **unit,
			const char **why)
{
	uint64_t v;
	int err;

	err = parse_digits(&s, &v, why);
	if (err)
		return err;
	*unit = unit_find(amounts, s, (size_t)(end - s));
	if (!*unit) {
		*why = "unknown unit (packets: k, M; bits: kbit, mbit, gbit; bytes: B, kB, MB, GB)";
		return -EINVAL;
	}
	if (v > UINT64_MAX / (*unit)->value) {
		*why = "number is too large";
		return -ERANGE;
	}
	*out = v * (*unit)->value;
	return 0;
}

int parse_rate(const char *s, struct rate *rate, const char **why)
{
	const struct unit *period, *unit;
	uint64_t amount, per_second_max;
	const char *slash;
	int err;

	slash = strchr(s, '/');
	if (!slash) {
		*why = "expected AMOUNT/UNIT, e.g. 500/s, 30/m, 10k/s, 10mbit/s, 500kB/s";
		return -EINVAL;
	}
	err = parse_amount(s, slash, &amount, &unit, why);
	if (err)
		return err;
	period = unit_find(periods, slash + 1, strlen(slash + 1));
	if (!period) {
		*why = "unknown time unit (use s, m or h)";
		return -EINVAL;
	}
	if (!amount) {
		*why = "rate must be greater than zero";
		return -EINVAL;
	}
	per_second_max = unit->kind == SLUICE_UNIT_PACKETS ? RATE_MAX_PER_SEC
			 : unit->kind == SLUICE_UNIT_BITS  ? 8 * BYTE_RATE_MAX_PER_SEC
							   : BYTE_RATE_MAX_PER_SEC;
	if (amount / (period->value / NSEC_PER_SEC) > per_second_max) {
		*why = unit->kind == SLUICE_UNIT_PACKETS ? "rate is too high (at most 1000M/s)"
							 : "rate is too high (at most 1000gbit/s)";
		return -ERANGE;
	}
	rate->amount = amount;
	rate->period_ns = period->value;
	rate->unit = unit->kind;
	return 0;
}

int parse_burst(const char *s, struct burst *burst, const char **why)
{
	const struct unit *unit;
	uint64_t v;
	int err;

	err = parse_amount(s, s + strlen(s), &v, &unit, why);
	if (err)
		return err;
	if (unit->kind == SLUICE_UNIT_BITS) {
		*why = "a burst is in packets or bytes (B, kB, MB, GB), not bits";
		return -EINVAL;
	}
	burst->bytes = unit->kind == SLUICE_UNIT_BYTES;
	if (!v || v > (burst->bytes ? BURST_BYTES_MAX : BURST_MAX)) {
		*why = burst->bytes ? "must be between 1B and 1099511627776B"
				    : "must be between 1 and 1000000000";
		return -ERANGE;
	}
	burst->value = v;
	return 0;
}

/* Counts take the packet multipliers k and M only. */
static int parse_scaled(const char *s, const char *end, uint64_t *out, const char **why)
{
	const struct unit *unit;
	int err;

	err = parse_amount(s, end, out, &unit, why);
	if (!err && unit->kind != SLUICE_UNIT_PACKETS) {
		*why = "expected a plain number (k and M allowed)";
		return -EINVAL;
	}
	return err;
}

int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why)
{
	static char msg[96];
	uint64_t v;
	int err;

	err = parse_scaled(s, s + strlen(s), &v, why);
	if (err)
		return err;
	if (v < min || v > max) {
		snprintf(msg, sizeof(msg), "must be between %llu and %llu", (unsigned long long)min,
			 (unsigned long long)max);
		*why = msg;
		return -ERANGE;
	}
	*out = v;
	return 0;
}

/* Whole seconds to nanoseconds, refusing what would overflow. */
static int seconds_to_ns(uint64_t whole, uint64_t *ns, const char **why)
{
	if (whole > UINT64_MAX / NSEC_PER_SEC / 2) {
		*why = "number is too large";
		return -ERANGE;
	}
	*ns = whole * NSEC_PER_SEC;
	return 0;
}

int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why)
{
	static char msg[96];
	uint64_t whole, ns, scale = NSEC_PER_SEC / 10;
	int err;

	err = parse_digits(&s, &whole, why);
	if (!err)
		err = seconds_to_ns(whole, &ns, why);
	if (err)
		return err;
	if (*s == '.' && s[1]) {
		/* Up to nanoseconds; a digit beyond is a mistake, not rounding. */
		for (s++; *s >= '0' && *s <= '9' && scale; s++, scale /= 10)
			ns += (uint64_t)(*s - '0') * scale;
	}
	if (*s) {
		*why = "expected seconds, e.g. 1 or 0.5";
		return -EINVAL;
	}
	if (ns < min_ns || ns > max_ns) {
		snprintf(msg, sizeof(msg), "must be between %g and %g seconds",
			 (double)min_ns / NSEC_PER_SEC, (double)max_ns / NSEC_PER_SEC);
		*why = msg;
		return -ERANGE;
	}
	*out = ns;
	return 0;
}

/* "[v6]:port" or "v4:port": the address part, unbracketed, into buf. */
static int listen_split(const char *s, char *buf, size_t len, const char **port, bool *v6)
{
	const char *colon, *start = s, *end;

	*v6 = *s == '[';
	if (*v6) {
		start = s + 1;
		end = strchr(start, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		end = colon;
	}
	if ((size_t)(end - start) >= len)
		return -EINVAL;
	memcpy(buf, start, (size_t)(end - start));
	buf[end - start] = '\0';
	*port = colon + 1;
	return 0;
}

int parse_listen(const char *s, struct sockaddr_storage *addr, const char **why)
{
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)addr;
	struct sockaddr_in *in = (struct sockaddr_in *)addr;
	char host[INET6_ADDRSTRLEN];
	const char *port;
	uint64_t p;
	bool v6;

	memset(addr, 0, sizeof(*addr));
	if (listen_split(s, host, sizeof(host), &port, &v6)) {
		*why = "expected ADDR:PORT, e.g. 127.0.0.1:9723 or [::1]:9723";
		return -EINVAL;
	}
	if (parse_digits(&port, &p, why) || *port || p > 65535) {
		*why = "port must be a number from 0 to 65535";
		return -EINVAL;
	}
	if (v6 && inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		return 0;
	}
	if (!v6 && inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		return 0;
	}
	*why = "not a numeric IPv4 address or bracketed IPv6 address";
	return -EINVAL;
}

int parse_prefix(const char *s, unsigned int max, unsigned int *out, const char **why)
{
	static char msg[64];
	uint64_t v;
	int err;

	if (*s == '/')
		s++;
	err = parse_digits(&s, &v, why);
	if (err)
		return err;
	if (*s) {
		*why = "expected a prefix length";
		return -EINVAL;
	}
	if (v > max) {
		snprintf(msg, sizeof(msg), "prefix length must be at most %u", max);
		*why = msg;
		return -ERANGE;
	}
	*out = (unsigned int)v;
	return 0;
}

#define AGGREGATE_SYNTAX "expected [ipv4|ipv6]/LEN=RATE[,burst=N], such as /24=5000/s"

/* "ipv4/", "ipv6/" or "/": the family spelled out, if it was. */
static int parse_aggregate_family(const char **s, uint8_t *family, const char **why)
{
	*family = 0;
	if (!strncmp(*s, "ipv4/", 5) || !strncmp(*s, "ipv6/", 5)) {
		*family = (*s)[3] == '4' ? SLUICE_FAMILY_IPV4 : SLUICE_FAMILY_IPV6;
		*s += 4;
	}
	if (**s != '/') {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	(*s)++;
	return 0;
}

int parse_aggregate(const char *s, struct aggregate *agg, const char **why)
{
	char rate[64], prefix[8];
	const char *eq, *comma;
	unsigned int len;
	int err;

	memset(agg, 0, sizeof(*agg));
	err = parse_aggregate_family(&s, &agg->family, why);
	if (err)
		return err;
	eq = strchr(s, '=');
	if (!eq || eq == s || (size_t)(eq - s) >= sizeof(prefix)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	memcpy(prefix, s, (size_t)(eq - s));
	prefix[eq - s] = '\0';
	err = parse_prefix(prefix, agg->family == SLUICE_FAMILY_IPV4 ? 32 : 128, &len, why);
	if (err)
		return err;
	agg->prefix_len = (uint8_t)len;
	comma = strchr(eq + 1, ',');
	if (!comma)
		comma = eq + 1 + strlen(eq + 1);
	if ((size_t)(comma - eq - 1) >= sizeof(rate)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	memcpy(rate, eq + 1, (size_t)(comma - eq - 1));
	rate[comma - eq - 1] = '\0';
	err = parse_rate(rate, &agg->rate, why);
	if (err || !*comma)
		return err;
	if (strncmp(comma, ",burst=", 7)) {
		*why = AGGREGATE_SYNTAX;
		return -EINVAL;
	}
	return parse_burst(comma + 7, &agg->burst, why);
}

static const char *const action_names[SLUICE_ACTION_MAX] = {
	[SLUICE_ACTION_DROP] = "drop",
	[SLUICE_ACTION_DRY_RUN] = "dry-run",
	[SLUICE_ACTION_MARK] = "mark",
};

const char *action_name(uint32_t action)
{
	return action < SLUICE_ACTION_MAX ? action_names[action] : "unknown";
}

int parse_action(const char *s, uint32_t *action, const char **why)
{
	uint32_t i;

	for (i = 0; i < SLUICE_ACTION_MAX; i++) {
		if (!strcmp(s, action_names[i])) {
			*action = i;
			return 0;
		}
	}
	*why = "expected drop, mark or dry-run";
	return -EINVAL;
}

int parse_mode(const char *s, uint32_t *xdp_flags, const char **why)
{
	if (!strcmp(s, "native")) {
		*xdp_flags = XDP_FLAGS_DRV_MODE;
		return 0;
	}
	if (!strcmp(s, "generic")) {
		*xdp_flags = XDP_FLAGS_SKB_MODE;
		return 0;
	}
	*why = "expected native or generic";
	return -EINVAL;
}

/* The largest suffix of `kind` that divides v exactly, so it parses back. */
static const struct unit *unit_exact(uint64_t v, uint8_t kind)
{
	const struct unit *u, *best = NULL;

	for (u = amounts; u->name; u++)
		if (u->kind == kind && !(v % u->value) && (!best || u->value > best->value) &&
		    (kind != SLUICE_UNIT_BITS || islower(u->name[0]) || u->name[0] == 'b'))
			best = u;
	return best;
}

void format_rate(char *buf, unsigned long len, const struct rate *rate)
{
	const struct unit *period = periods, *u = unit_exact(rate->amount, rate->unit);

	while (period->name && period->value != rate->period_ns)
		period++;
	snprintf(buf, len, "%llu%s/%s", (unsigned long long)(rate->amount / u->value), u->name,
		 period->name ? period->name : "?");
}

void format_burst(char *buf, unsigned long len, const struct burst *burst)
{
	const struct unit *u =
		unit_exact(burst->value, burst->bytes ? SLUICE_UNIT_BYTES : SLUICE_UNIT_PACKETS);

	snprintf(buf, len, "%llu%s", (unsigned long long)(burst->value / u->value), u->name);
}

void format_aggregate(char *buf, unsigned long len, const struct aggregate *agg)
{
	const char *family = agg->family == SLUICE_FAMILY_IPV4	 ? "ipv4"
			     : agg->family == SLUICE_FAMILY_IPV6 ? "ipv6"
								 : "";
	char rate[48], burst[48] = "";

	format_rate(rate, sizeof(rate), &agg->rate);
	if (agg->burst.value) {
		memcpy(burst, ",burst=", 8);
		format_burst(burst + 7, sizeof(burst) - 7, &agg->burst);
	}
	snprintf(buf, len, "%s/%u=%s%s", family, agg->prefix_len, rate, burst);
}

int parse_cidr(const char *s, struct cidr *cidr, bool *host_bits, const char **why)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	unsigned int len, max, i;
	uint32_t mask;
	int err;

	memset(cidr, 0, sizeof(*cidr));
	if (alen >= sizeof(addr)) {
		*why = "expected an IPv4 or IPv6 address or CIDR";
		return -EINVAL;
	}
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, cidr->addr) == 1) {
		cidr->family = SLUICE_FAMILY_IPV4;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, cidr->addr) == 1) {
		cidr->family = SLUICE_FAMILY_IPV6;
		max = 128;
	} else {
		*why = "expected an IPv4 or IPv6 address or CIDR";
		return -EINVAL;
	}
	len = max;
	if (slash) {
		err = parse_prefix(slash + 1, max, &len, why);
		if (err)
			return err;
	}
	cidr->len = (uint8_t)len;
	*host_bits = false;
	for (i = 0; i < 4; i++) {
		int bits = (int)len - 32 * (int)i;

		mask = bits >= 32 ? 0xffffffffU : bits <= 0 ? 0 : htonl(0xffffffffU << (32 - bits));
		if (cidr->addr[i] & ~mask)
			*host_bits = true;
		cidr->addr[i] &= mask;
	}
	return 0;
}

void format_cidr(char *buf, unsigned long len, const struct cidr *cidr)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(cidr->family == SLUICE_FAMILY_IPV4 ? AF_INET : AF_INET6, cidr->addr, addr,
		  sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, cidr->len);
}

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 },
};

int parse_proto(const char *s, uint8_t *proto, const char **why)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		if (!strcmp(s, protos[i].name)) {
			*proto = protos[i].proto;
			return 0;
		}
	}
	*why = "expected tcp, udp, icmp or icmpv6";
	return -EINVAL;
}

const char *proto_name(uint8_t proto)
{
	size_t i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == proto)
			return protos[i].name;
	return "any";
}

int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why)
{
	uint64_t a, b;
	int err;

	err = parse_digits(&s, &a, why);
	if (err)
		return err;
	b = a;
	if (*s == '-') {
		s++;
		err = parse_digits(&s, &b, why);
		if (err)
			return err;
	}
	if (*s) {
		*why = "expected PORT or PORT-PORT";
		return -EINVAL;
	}
	if (!a || a > 65535 || b > 65535 || b < a) {
		*why = "ports are 1-65535, low to high";
		return -ERANGE;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

/* ":" then every option with a one-letter value, as getopt wants them: "n:h". */
static void short_options(const struct option *options, char *buf, size_t len)
{
	size_t n = 0;

	buf[n++] = ':';
	for (; options->name && n + 3 < len; options++) {
		if (options->val <= ' ' || options->val > '~')
			continue;
		buf[n++] = (char)options->val;
		if (options->has_arg == required_argument)
			buf[n++] = ':';
	}
	buf[n] = '\0';
}

int cli_next_option(const char *cmd, int argc, char **argv, const struct option *options)
{
	char shorts[64];
	int opt;

	opterr = 0;
	short_options(options, shorts, sizeof(shorts));
	opt = getopt_long(argc, argv, shorts, options, NULL);
	if (opt == '?') {
		error_line(cmd, "unknown option '%s'", argv[optind - 1]);
		return '?';
	}
	if (opt == ':') {
		error_line(cmd, "option '%s' needs a value", argv[optind - 1]);
		return '?';
	}
	return opt;
}

int cli_one_positional(const char *cmd, int argc, char **argv, const char *what, const char **out)
{
	if (optind >= argc) {
		error_line(cmd, "missing %s", what);
		return -EINVAL;
	}
	if (optind + 1 < argc) {
		error_line(cmd, "unexpected argument '%s'", argv[optind + 1]);
		return -EINVAL;
	}
	*out = argv[optind];
	return 0;
}

/* The kernel's isspace(): ASCII whitespace and Latin-1's no-break space. */
static bool kernel_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

int ifname_check(const char *name, const char **why)
{
	size_t len = strnlen(name, IF_NAMESIZE);
	const char *p;

	*why = NULL;
	if (!len)
		*why = "empty";
	else if (len == IF_NAMESIZE)
		*why = "longer than 15 bytes";
	else if (!strcmp(name, ".") || !strcmp(name, ".."))
		*why = "'.' and '..' name no interface";
	for (p = name; !*why && *p; p++) {
		if (*p == '/' || *p == ':')
			*why = "no interface name has a '/' or ':'";
		else if (kernel_isspace((unsigned char)*p))
			*why = "no interface name has whitespace";
	}
	return *why ? -EINVAL : 0;
}

int cli_ifname(const char *cmd, const char *name)
{
	char shown[24];
	const char *why;
	size_t i;

	if (!ifname_check(name, &why))
		return EXIT_OK;
	/* The name as given, but on one line and short. */
	for (i = 0; i + 1 < sizeof(shown) && name[i]; i++)
		shown[i] = isprint((unsigned char)name[i]) ? name[i] : '?';
	shown[i] = '\0';
	return fail_input(cmd, "bad interface name '%s%s': %s", shown, name[i] ? "..." : "", why);
}

int cli_one_ifname(const char *cmd, int argc, char **argv, const char **out)
{
	if (cli_one_positional(cmd, argc, argv, "interface name", out))
		return EXIT_BAD_INPUT;
	return cli_ifname(cmd, *out);
}

const char *cli_option_name(const struct option *options, int val)
{
	for (; options->name; options++)
		if (options->val == val)
			return options->name;
	return "?";
}
