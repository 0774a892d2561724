/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The table of the floor programs (tools/floor.bpf.c): an array of the
 * default source table's cache lines, sized as the datapath sizes its
 * table (table_sets_for sets of struct sluice_set), so that a line read
 * from it misses the caches as often as one of the table's would. Shared
 * by the programs and the tools that load them (sluice-floor, sluice-bench).
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

/* One line of the table: the value of map floor_sets. */
struct floor_line {
	__u8 b[FLOOR_LINE];
};

#ifndef __bpf__
#include <errno.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"

/*
 * The floor programs, loaded, with floor_sets sized to the default source
 * table's bytes in lines (the object cannot size it: see floor.bpf.c).
 * NULL with errno set on failure.
 */
static inline struct floor *floor_load(void)
{
	__u64 bytes = (__u64)table_sets_for(SLUICE_DEFAULT_MAX_SOURCES) * sizeof(struct sluice_set);
	struct floor *skel = floor__open();
	int err;

	if (!skel)
		return NULL;
	err = bpf_map__set_max_entries(skel->maps.floor_sets, (__u32)(bytes / FLOOR_LINE));
	if (!err)
		err = floor__load(skel);
	if (err) {
		floor__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}
#endif

#endif /* SLUICE_FLOOR_H */
