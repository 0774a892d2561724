// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/fault.h"

void fault_point(const char *name, int sig)
{
	static bool raised; /* a reader that retries stops once, not on each try */
	const char *fault = getenv("SLUICE_FAULT");

	if (raised || !fault || strcmp(fault, name))
		return;
	raised = true;
	raise(sig);
}
