/* SPDX-License-Identifier: GPL-2.0 */
/* From what the operator typed to the struct sluice_config the datapath reads. */
#ifndef SLUICE_POLICY_H
#define SLUICE_POLICY_H

#include <stdint.h>
#include "sluice.h"
#include "args.h"

struct settings {
	struct rate rate;
	uint64_t burst; /* 0: one second of rate, at least 1 */
	uint32_t action;
	unsigned int ipv4_prefix;
	unsigned int ipv6_prefix;
};

void settings_default(struct settings *s);
/* Nanoseconds per jiffy, the resolution of the coarse clock. */
uint64_t jiffy_ns(void);
/* Validates and precomputes everything the fast path needs. */
int config_build(struct sluice_config *cfg, const struct settings *s, const char **why);
/* The settings a configuration was built from (for `set` and `status`). */
void config_settings(const struct sluice_config *cfg, struct settings *s);

#endif /* SLUICE_POLICY_H */
