/* SPDX-License-Identifier: GPL-2.0 */
/* The busiest sources of a reading (reads/busiest.h) as top shows them. */
#ifndef SLUICE_OUTPUTS_BUSIEST_H
#define SLUICE_OUTPUTS_BUSIEST_H

#include <stddef.h>
#include "outputs/report.h"
#include "reads/busiest.h"

/* top's columns, which the unit tests check against their text and JSON. */
extern const struct report_col top_cols[];
extern const int top_ncols;

/* The first shown rows of v, sorted by sort, as top's table or its JSON object. */
void busiest_report(struct report *rp, const char *ifname, const struct top_view *v,
		    const char *sort, size_t shown);

#endif /* SLUICE_OUTPUTS_BUSIEST_H */
