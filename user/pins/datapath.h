/* SPDX-License-Identifier: GPL-2.0 */
/* The datapath's skeleton, opened in the build this kernel can run. */
#ifndef SLUICE_PINS_DATAPATH_H
#define SLUICE_PINS_DATAPATH_H

#include <stdbool.h>

/* bpf_cast_to_kern_ctx (Linux 6.2), which the default build reads the frame's length through. */
bool kernel_casts_xdp_ctx(void);

struct sluice;
/*
 * The datapath's skeleton: the default build, or with `compat` the one
 * that reads the frame's length by the helper, as Linux 6.1 needs
 * (bpf/frame.h). Both have the same maps, programs and variables, so the
 * one skeleton serves them. NULL and errno on failure.
 */
struct sluice *datapath_open(bool compat);

/* datapath_open() of the build this kernel can run. */
struct sluice *datapath_open_here(void);

/*
 * The build this kernel runs, with what it can do switched on in its
 * read-only data (the cookie helpers); NULL and errno on failure.
 */
struct sluice *sluice_open_here(void);

#endif /* SLUICE_PINS_DATAPATH_H */
