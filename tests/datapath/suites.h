/* SPDX-License-Identifier: GPL-2.0 */
/* The BPF_PROG_TEST_RUN suites, run in order by datapath_main.c. */
#ifndef SLUICE_TEST_SUITES_H
#define SLUICE_TEST_SUITES_H

void suite_parse(void);
void suite_meter(void);
void suite_policy(void);
void suite_match(void);
void suite_keys(void);
void suite_pressure(void);
void suite_aggregate(void);
void suite_concurrency(void);
void suite_table(void);
void suite_counts(void);
void suite_algorithms(void);
void suite_fleet(void);
void suite_prove(void);
void suite_ban(void);
void suite_prove_fuzz(unsigned int seconds);

#endif /* SLUICE_TEST_SUITES_H */
