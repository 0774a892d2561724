/* SPDX-License-Identifier: GPL-2.0 */
#ifndef SLUICE_OUTPUTS_COUNTERS_H
#define SLUICE_OUTPUTS_COUNTERS_H

#include "reads/counters.h"
#include "outputs/report.h"

/* A counter pair's columns: packets, bytes, and with an earlier sample pps, bits/s. */
enum counter_pair_col {
	COUNTER_PACKETS,
	COUNTER_BYTES,
	COUNTER_PPS,
	COUNTER_BPS,
	COUNTER_PAIR_COLS
};
extern const struct report_col counter_pair_cols[COUNTER_PAIR_COLS];

/*
 * The counters of one interface on stdout: per outcome, per rule and the
 * table's state. With prev (an earlier sample), per-second rates too.
 */
/* The one description of a sample, as text or JSON (stats --json, the exporter's API). */
void counters_report(struct report *r, const char *ifname, const struct sample *s,
		     const struct sample *prev);
/* 0, or the JSON writer's error. */
int counters_json(const char *ifname, const struct sample *s, const struct sample *prev);
void counters_table(const char *ifname, const struct sample *s, const struct sample *prev);

#endif /* SLUICE_OUTPUTS_COUNTERS_H */
