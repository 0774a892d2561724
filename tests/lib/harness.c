// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include "harness.h"

static int checks_passed, checks_failed;

void check(bool ok, const char *name, const char *detail_fmt, ...)
{
	va_list ap;

	if (ok) {
		checks_passed++;
		printf("ok   %s\n", name);
		return;
	}
	checks_failed++;
	printf("FAIL %s: ", name);
	va_start(ap, detail_fmt);
	vprintf(detail_fmt, ap);
	va_end(ap);
	putchar('\n');
}

int harness_finish(void)
{
	printf("%d passed, %d failed\n", checks_passed, checks_failed);
	return checks_failed ? 1 : 0;
}
