/* SPDX-License-Identifier: GPL-2.0 */
/* The unit suites besides the parsers', run by test_args.c's main. */
#ifndef SLUICE_TEST_UNIT_H
#define SLUICE_TEST_UNIT_H

void suite_output(void);
void suite_options(void);
void suite_fleet(void);
void suite_placement(void);
void suite_jiffy(void);
void suite_report(void);
void suite_bans(void);

#include <stddef.h>
/* Runs fn with stdout captured into buf (test_output.c). */
void capture_stdout(void (*fn)(void *), void *arg, char *buf, size_t len);

#endif /* SLUICE_TEST_UNIT_H */
