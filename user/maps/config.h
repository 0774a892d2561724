/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live configuration (config.c).
 */
#ifndef SLUICE_MAPS_CONFIG_H
#define SLUICE_MAPS_CONFIG_H

#include <stdint.h>
#include "sluice.h"
#include "pins/state.h"

/*
 * The live configuration, from its pin (config_live: read permission
 * suffices), else, for older state, the map-in-map's slot (CAP_SYS_ADMIN).
 */
int config_read(const struct policy_maps *m, struct sluice_config *cfg);
/*
 * The sources the table holds at most: what attach was given (cfg, as
 * config_read gave it), or for state from before cfg said, the table's size.
 */
int table_max_sources(const struct policy_maps *m, const struct sluice_config *cfg,
		      uint64_t *max_sources);
/* The layout version of the live configuration, whatever its layout (for status). */
int config_layout(const struct policy_maps *m, __u32 *layout);
/*
 * Publishes cfg in one step, with the next generation number: raises the
 * generation first (retiring every cached over-limit decision), then swaps
 * the fully written configuration in and pins it as config_live
 * (when m->dir is a directory).
 */
int config_write(const struct policy_maps *m, struct sluice_config *cfg);

/*
 * Publishes the live configuration again, unchanged, as a new generation:
 * for a change outside it (upgrade swaps the program), which retires the
 * cached decisions and moves the generation and changed_at like any other.
 */
int config_republish(const struct policy_maps *m);

/* config_read, refusing another layout (-EPROTO). */
int config_load(const struct policy_maps *m, struct sluice_config *cfg);

#endif /* SLUICE_MAPS_CONFIG_H */
