/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where a test stops or kills a command at one moment of its work:
 * SLUICE_FAULT=NAME. Each point names itself and the signal it raises.
 */
#ifndef SLUICE_BASE_FAULT_H
#define SLUICE_BASE_FAULT_H

/*
 * The points: lists-after-flip (SIGKILL, between a list change's flip and
 * its second replay); counters-after-policy (SIGSTOP, a reader between the
 * policy it read and that policy's per-rule counters, so a test can run
 * changes meanwhile, then SIGCONT it); top-between-reads (SIGSTOP, top
 * between its read of the source table and of the policy).
 */
#define FAULT_LISTS_AFTER_FLIP	    "lists-after-flip"
#define FAULT_COUNTERS_AFTER_POLICY "counters-after-policy"
#define FAULT_TOP_BETWEEN_READS	    "top-between-reads"

/* Raises sig when SLUICE_FAULT names this point; at most once a process. */
void fault_point(const char *name, int sig);

#endif /* SLUICE_BASE_FAULT_H */
