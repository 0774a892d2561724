// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include "policy.h"

/* TATs stay below 2^62 so max(TAT, now) + T can never wrap. */
#define TOLERANCE_MAX (1ULL << 62)

void settings_default(struct settings *s)
{
	memset(s, 0, sizeof(*s));
	s->action = SLUICE_ACTION_DROP;
	s->ipv4_prefix = SLUICE_DEFAULT_IPV4_PREFIX;
	s->ipv6_prefix = SLUICE_DEFAULT_IPV6_PREFIX;
}

static uint32_t prefix_mask(unsigned int bits)
{
	if (!bits)
		return 0;
	if (bits >= 32)
		return 0xffffffffU;
	return htonl(0xffffffffU << (32 - bits));
}

static void masks_build(struct sluice_config *cfg)
{
	int i;

	cfg->ipv4_mask = prefix_mask(cfg->ipv4_prefix);
	for (i = 0; i < 4; i++) {
		int bits = (int)cfg->ipv6_prefix - 32 * i;

		cfg->ipv6_mask[i] = prefix_mask(bits < 0 ? 0 : (unsigned int)bits);
	}
}

uint64_t jiffy_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res))
		return UINT64_MAX;
	return (uint64_t)res.tv_sec * NSEC_PER_SEC + (uint64_t)res.tv_nsec;
}

static uint64_t default_burst(const struct rate *rate)
{
	uint64_t per_second = rate->packets / (rate->period_ns / NSEC_PER_SEC);

	return per_second ? per_second : 1;
}

int config_build(struct sluice_config *cfg, const struct settings *s, const char **why)
{
	uint64_t period = s->rate.period_ns << SLUICE_TIME_SHIFT;
	uint64_t burst = s->burst ? s->burst : default_burst(&s->rate);
	uint64_t tick;

	if (!s->rate.packets || !s->rate.period_ns) {
		*why = "rate must be greater than zero";
		return -EINVAL;
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->layout_version = SLUICE_LAYOUT_VERSION;
	cfg->action = s->action;
	/* Round T up: never admit faster than asked. */
	cfg->interval = (period + s->rate.packets - 1) / s->rate.packets;
	if (burst - 1 > TOLERANCE_MAX / cfg->interval) {
		*why = "burst is too large for this rate";
		return -ERANGE;
	}
	cfg->tolerance = (burst - 1) * cfg->interval;
	cfg->rate_packets = s->rate.packets;
	cfg->rate_period_ns = s->rate.period_ns;
	cfg->burst = burst;
	cfg->flags = s->burst ? SLUICE_CFG_BURST_EXPLICIT : 0;
	cfg->ipv4_prefix = s->ipv4_prefix;
	cfg->ipv6_prefix = s->ipv6_prefix;
	masks_build(cfg);

	tick = jiffy_ns() << SLUICE_TIME_SHIFT;
	if (tick < (NSEC_PER_SEC << SLUICE_TIME_SHIFT))
		cfg->jiffy_recip = (1ULL << SLUICE_JIFFY_RECIP_SHIFT) / tick;
	return 0;
}

void config_settings(const struct sluice_config *cfg, struct settings *s)
{
	settings_default(s);
	s->rate.packets = cfg->rate_packets;
	s->rate.period_ns = cfg->rate_period_ns;
	s->burst = cfg->flags & SLUICE_CFG_BURST_EXPLICIT ? cfg->burst : 0;
	s->action = cfg->action;
	s->ipv4_prefix = cfg->ipv4_prefix;
	s->ipv6_prefix = cfg->ipv6_prefix;
}
