// SPDX-License-Identifier: GPL-2.0
/* Runs every datapath suite; needs root for BPF_PROG_TEST_RUN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "suites.h"

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;

	if (geteuid() != 0) {
		fprintf(stderr, "test-datapath: must run as root (BPF_PROG_TEST_RUN)\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The fuzz target over RST sequence numbers: tests/fuzz/run.sh. */
	if (only && !strcmp(only, "prove-fuzz")) {
		suite_prove_fuzz(argc > 2 ? (unsigned int)atoi(argv[2]) : 10);
		return harness_finish();
	}
	if (!only || !strcmp(only, "parse"))
		suite_parse();
	if (!only || !strcmp(only, "meter"))
		suite_meter();
	if (!only || !strcmp(only, "policy"))
		suite_policy();
	if (!only || !strcmp(only, "match"))
		suite_match();
	if (!only || !strcmp(only, "keys"))
		suite_keys();
	if (!only || !strcmp(only, "pressure"))
		suite_pressure();
	if (!only || !strcmp(only, "aggregate"))
		suite_aggregate();
	if (!only || !strcmp(only, "concurrency"))
		suite_concurrency();
	if (!only || !strcmp(only, "table"))
		suite_table();
	if (!only || !strcmp(only, "counts"))
		suite_counts();
	if (!only || !strcmp(only, "algorithms"))
		suite_algorithms();
	if (!only || !strcmp(only, "fleet"))
		suite_fleet();
	if (!only || !strcmp(only, "prove"))
		suite_prove();
	if (!only || !strcmp(only, "ban"))
		suite_ban();
	return harness_finish();
}
