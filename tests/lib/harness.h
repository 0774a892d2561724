/* SPDX-License-Identifier: GPL-2.0 */
/* Named checks and the closing "N passed, N failed" line. */
#ifndef SLUICE_TEST_HARNESS_H
#define SLUICE_TEST_HARNESS_H

#include <stdbool.h>

/* Records one named check; detail (printf-style) explains a failure. */
void check(bool ok, const char *name, const char *detail_fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prints the closing line; returns the process exit status. */
int harness_finish(void);

#endif /* SLUICE_TEST_HARNESS_H */
