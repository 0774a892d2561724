// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include "sluice.h"
#include "args.h"
#include "output.h"

struct unit {
	const char *name;
	uint64_t value;
};

static const struct unit multipliers[] = {
	{ "", 1 },
	{ "k", 1000 },
	{ "M", 1000000 },
	{ NULL, 0 },
};

static const struct unit periods[] = {
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ NULL, 0 },
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

/* NUMBER with an optional k or M, running up to `end` (or the string end). */
static int parse_scaled(const char *s, const char *end, uint64_t *out, const char **why)
{
	const struct unit *mult;
	uint64_t v;
	int err;

	err = parse_digits(&s, &v, why);
	if (err)
		return err;
	mult = unit_find(multipliers, s, (size_t)(end - s));
	if (!mult) {
		*why = "unknown multiplier (use k or M)";
		return -EINVAL;
	}
	if (v > UINT64_MAX / mult->value) {
		*why = "number is too large";
		return -ERANGE;
	}
	*out = v * mult->value;
	return 0;
}

int parse_rate(const char *s, struct rate *rate, const char **why)
{
	const struct unit *period;
	const char *slash;
	uint64_t packets;
	int err;

	slash = strchr(s, '/');
	if (!slash) {
		*why = "expected PACKETS/UNIT, e.g. 500/s, 30/m, 10k/s";
		return -EINVAL;
	}
	err = parse_scaled(s, slash, &packets, why);
	if (err)
		return err;
	period = unit_find(periods, slash + 1, strlen(slash + 1));
	if (!period) {
		*why = "unknown time unit (use s, m or h)";
		return -EINVAL;
	}
	if (!packets) {
		*why = "rate must be greater than zero";
		return -EINVAL;
	}
	/* packets / period <= RATE_MAX_PER_SEC, without overflowing. */
	if (packets / (period->value / NSEC_PER_SEC) > RATE_MAX_PER_SEC) {
		*why = "rate is too high (at most 1000M/s)";
		return -ERANGE;
	}
	rate->packets = packets;
	rate->period_ns = period->value;
	return 0;
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

static const char *const action_names[SLUICE_ACTION_MAX] = {
	[SLUICE_ACTION_DROP] = "drop",
	[SLUICE_ACTION_DRY_RUN] = "dry-run",
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
	*why = "expected drop or dry-run";
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

void format_rate(char *buf, unsigned long len, const struct rate *rate)
{
	const struct unit *period = periods;

	while (period->name && period->value != rate->period_ns)
		period++;
	if (period->name)
		snprintf(buf, len, "%llu/%s", (unsigned long long)rate->packets, period->name);
	else
		snprintf(buf, len, "%llu/%lluns", (unsigned long long)rate->packets,
			 (unsigned long long)rate->period_ns);
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

const char *cli_option_name(const struct option *options, int val)
{
	for (; options->name; options++)
		if (options->val == val)
			return options->name;
	return "?";
}
