// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include "sluice.h"
#include "values/number.h"
#include "values/words.h"

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "tcp", IPPROTO_TCP },
	{ "udp", IPPROTO_UDP },
	{ "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 },
};

static const char *const action_names[SLUICE_ACTION_MAX] = {
	[SLUICE_ACTION_DROP] = "drop",
	[SLUICE_ACTION_DRY_RUN] = "dry-run",
	[SLUICE_ACTION_MARK] = "mark",
};

const char *action_name(uint32_t action)
{
	return action < SLUICE_ACTION_MAX ? action_names[action] : "unknown";
}

/* The index of s in names[0..n), or -1. */
static int word_index(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int parse_action(const char *s, uint32_t *action, const char **why)
{
	int i = word_index(s, action_names, SLUICE_ACTION_MAX);

	if (i < 0) {
		*why = "expected drop, mark or dry-run";
		return -EINVAL;
	}
	*action = (uint32_t)i;
	return 0;
}

/* The algorithms an operator names; a warm-up is GCRA's (--warmup). */
static const char *const algorithm_names[SLUICE_METER_WARMUP] = {
	[SLUICE_METER_GCRA] = "gcra",
	[SLUICE_METER_FIXED_WINDOW] = "fixed-window",
	[SLUICE_METER_SLIDING_WINDOW] = "sliding-window",
};

const char *algorithm_name(uint8_t algorithm)
{
	if (algorithm == SLUICE_METER_WARMUP)
		return "gcra";
	return algorithm < SLUICE_METER_WARMUP ? algorithm_names[algorithm] : "unknown";
}

int parse_algorithm(const char *s, uint8_t *algorithm, const char **why)
{
	int i = word_index(s, algorithm_names, SLUICE_METER_WARMUP);

	if (i < 0) {
		*why = "expected gcra, sliding-window or fixed-window";
		return -EINVAL;
	}
	*algorithm = (uint8_t)i;
	return 0;
}

int parse_mode(const char *s, uint32_t *xdp_flags, const char **why)
{
	if (!strcmp(s, "native")) {
		*xdp_flags = XDP_FLAGS_DRV_MODE;
		return 0;
	}
	/* skb: what ip link and xdp-loader call generic mode. */
	if (!strcmp(s, "generic") || !strcmp(s, "skb")) {
		*xdp_flags = XDP_FLAGS_SKB_MODE;
		return 0;
	}
	*why = "expected native, generic or skb";
	return -EINVAL;
}

/* The group named, or numbered, s; NULL when the system knows none. */
static const struct group *group_lookup(const char *s)
{
	char *end;
	unsigned long n;

	if (s[0] >= '0' && s[0] <= '9') {
		n = strtoul(s, &end, 10);
		return *end || n >= (gid_t)-1 ? NULL : getgrgid((gid_t)n);
	}
	return getgrnam(s);
}

int parse_group(const char *s, unsigned int *gid, const char **why)
{
	const struct group *g;

	/* A group name cannot hold these; refusing them keeps show's output one word. */
	if (!s[0] || s[0] == '-' || strlen(s) > 32 || s[strcspn(s, " \t\n:/#\"'")]) {
		*why = "expected a group name";
		return -EINVAL;
	}
	g = group_lookup(s);
	if (!g) {
		*why = "no such group";
		return -ENOENT;
	}
	if (!g->gr_gid) {
		*why = "root's group reads the pins already: name another";
		return -EINVAL;
	}
	*gid = g->gr_gid;
	return 0;
}

void format_group(char *buf, size_t len, unsigned int gid)
{
	const struct group *g = getgrgid((gid_t)gid);

	if (g && !strchr(g->gr_name, ' '))
		snprintf(buf, len, "%s", g->gr_name);
	else
		snprintf(buf, len, "%u", gid);
}

const char *mode_name(uint32_t xdp_flags)
{
	if (xdp_flags & XDP_FLAGS_DRV_MODE)
		return "native";
	return xdp_flags & XDP_FLAGS_SKB_MODE ? "generic" : "auto";
}

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
	return parse_u16_range(s, lo, hi, "expected PORT or PORT-PORT",
			       "ports are 1-65535, low to high", why);
}

/*
 * The DSCP classes with names: class selectors csN = N << 3 (RFC 2474),
 * assured forwarding afXY = X << 3 | Y << 1, class X and drop precedence Y
 * (RFC 2597), expedited forwarding ef (RFC 3246).
 */
static const struct {
	const char *name;
	uint8_t dscp;
} dscp_classes[] = {
	{ "cs0", 0 },	{ "cs1", 8 },	{ "cs2", 16 },	{ "cs3", 24 },	{ "cs4", 32 },
	{ "cs5", 40 },	{ "cs6", 48 },	{ "cs7", 56 },	{ "af11", 10 }, { "af12", 12 },
	{ "af13", 14 }, { "af21", 18 }, { "af22", 20 }, { "af23", 22 }, { "af31", 26 },
	{ "af32", 28 }, { "af33", 30 }, { "af41", 34 }, { "af42", 36 }, { "af43", 38 },
	{ "ef", 46 },
};

#define N_DSCP_CLASSES (sizeof(dscp_classes) / sizeof(dscp_classes[0]))

int parse_dscp(const char *s, uint8_t *dscp, const char **why)
{
	const char *p = s;
	uint64_t v;
	size_t i;

	for (i = 0; i < N_DSCP_CLASSES; i++) {
		if (!strcasecmp(s, dscp_classes[i].name)) {
			*dscp = dscp_classes[i].dscp;
			return 0;
		}
	}
	if (parse_digits(&p, &v, why) || *p || v > DSCP_MAX) {
		*why = "expected 0-63 or a class: cs0-cs7, af11-af43, ef";
		return -EINVAL;
	}
	*dscp = (uint8_t)v;
	return 0;
}

const char *dscp_name(uint8_t dscp)
{
	size_t i;

	for (i = 0; i < N_DSCP_CLASSES; i++)
		if (dscp_classes[i].dscp == dscp)
			return dscp_classes[i].name;
	return NULL;
}
