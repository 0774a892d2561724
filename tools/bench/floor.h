/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The table of the floor programs (tools/bench/floor.bpf.c): an array of the
 * default source table's cache lines, sized as the datapath sizes its
 * table (SLUICE_TABLE_SETS sets of struct sluice_set), so that a line read
 * from it misses the caches as often as one of the table's would.
 */
#ifndef SLUICE_FLOOR_H
#define SLUICE_FLOOR_H

#include "sluice.h"
#include "table_hash.h"

#define FLOOR_LINE 64
/* The default source table's sets, and the lines of each. */
#define FLOOR_SETS	    SLUICE_TABLE_SETS(SLUICE_DEFAULT_MAX_SOURCES)
#define FLOOR_LINES_PER_SET (sizeof(struct sluice_set) / FLOOR_LINE)

_Static_assert(sizeof(struct sluice_set) % FLOOR_LINE == 0, "a set is whole lines");

/* The lines of a set that hold its tags and its TATs (floor_refuse). */
#define FLOOR_TAGS_LINE (__builtin_offsetof(struct sluice_set, ways.tag) / FLOOR_LINE)
#define FLOOR_TAT_LINE	(__builtin_offsetof(struct sluice_set, ways.tat) / FLOOR_LINE)

_Static_assert(__builtin_offsetof(struct sluice_set, ways.tat) % FLOOR_LINE == 0 &&
		       sizeof(((struct sluice_ways *)0)->tat) > FLOOR_LINE &&
		       sizeof(((struct sluice_ways *)0)->tat) <= 2 * FLOOR_LINE,
	       "a set's TATs start a line and take two");

/* One line of the table: the value of map floor_sets. */
struct floor_line {
	__u8 b[FLOOR_LINE];
};

#endif /* SLUICE_FLOOR_H */
