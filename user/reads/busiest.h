/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The busiest sources, as top shows them: each tracked source with its
 * rate since an earlier reading and whether it is limited now, the best
 * first by drops, packets passed or rate.
 */
#ifndef SLUICE_READS_BUSIEST_H
#define SLUICE_READS_BUSIEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "policy/policy.h"
#include "reads/sources.h"
#include "text/options.h"

/* One source as shown. */
struct top_row {
	const struct source_row *src;
	double pps;	       /* NAN when not measured */
	int limited;	       /* 1 yes, 0 no, -1 unknown rule */
	uint64_t next_pass_ns; /* until the next packet would pass, when limited */
	uint8_t meter;	       /* enum sluice_meter of its rule */
	uint64_t level;	       /* what its slot holds (slot_level), of level_max */
	uint64_t level_max;
	bool proven; /* its source proved its address (--prove) */
};

struct top_view {
	struct policy_doc doc; /* the live policy, for rule names and limits */
	struct top_row *rows;
	size_t n;
	uint64_t time_ns;
	double window_s; /* NAN when rates were not measured */
};

/*
 * Reads the table (twice, a window apart, when sorting by rate) into v, its
 * rows over the table now; moves the best limit rows to the front, in order,
 * and marks which of them proved their address.
 */
int busiest_read(const struct policy_maps *m, int proven_fd, enum top_sort sort, uint64_t limit,
		 struct top_view *v, struct source_table *now);

#endif /* SLUICE_READS_BUSIEST_H */
