/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition format (version 0.0.4) for one or more
 * interfaces: every family once, with HELP and TYPE, then one series per
 * interface (and rule, and reason). Every series of a family carries the
 * same label names. Used by `stats --prometheus` and the exporter alike.
 */
#ifndef SLUICE_PROM_H
#define SLUICE_PROM_H

#include <stdbool.h>
#include <stdio.h>
#include "reads/counters.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_iface {
	const char *ifname;
	const struct sample *s; /* NULL: its state could not be read; only sluice_up says so */
	bool attached;		/* the program runs on the interface (status "ok") */
};

/*
 * name="v", one label of a series: the value escapes backslash, double
 * quote and newline, and as the format is UTF-8, bytes of it that are not
 * come out as U+FFFD. An interface name may hold any of them.
 */
void prom_label(FILE *out, const char *name, const char *v);

/*
 * sluice_build_info, the counters and gauges of each interface, and
 * sluice_up: 1 for an interface read whose program runs, else 0.
 */
void prom_write(FILE *out, const struct prom_iface *ifs, int n);
/* The exporter's own counter: table walks per interface (walks[i] for ifs[i]). */
void prom_write_walks(FILE *out, const struct prom_iface *ifs, const uint64_t *walks, int n);

#endif /* SLUICE_PROM_H */
