/* SPDX-License-Identifier: GPL-2.0 */
/* The signals that end a long-running command (the agent, the exporter) cleanly. */
#ifndef SLUICE_BASE_SIGNALS_H
#define SLUICE_BASE_SIGNALS_H

#include <signal.h>

/*
 * SIGINT, SIGTERM and SIGHUP (a terminal closed, systemctl kill -s HUP),
 * each a clean stop rather than a death by the default action; SIGHUP
 * left out when the process was started ignoring it (nohup), as asked.
 */
void stop_signals(sigset_t *set);

#endif /* SLUICE_BASE_SIGNALS_H */
