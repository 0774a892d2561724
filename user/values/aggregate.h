/* SPDX-License-Identifier: GPL-2.0 */
/* An aggregate limit, [ipv4|ipv6]/LEN=RATE[,burst=N], parsed and formatted. */
#ifndef SLUICE_VALUES_AGGREGATE_H
#define SLUICE_VALUES_AGGREGATE_H

#include <stdint.h>
#include "values/rate.h"

struct aggregate {
	uint8_t family; /* 0: the rule's, or for the default by length (<= 32: IPv4) */
	uint8_t prefix_len;
	struct rate rate;
	struct burst burst; /* value 0: one second of rate */
};

int parse_aggregate(const char *s, struct aggregate *agg, const char **why);
void format_aggregate(char *buf, unsigned long len, const struct aggregate *agg);

#endif /* SLUICE_VALUES_AGGREGATE_H */
