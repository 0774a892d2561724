// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include "base/signals.h"

void stop_signals(sigset_t *set)
{
	struct sigaction hup;

	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	if (sigaction(SIGHUP, NULL, &hup) || hup.sa_handler != SIG_IGN)
		sigaddset(set, SIGHUP);
}
