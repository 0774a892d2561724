/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The audit trail of the penalty box: the datapath bans without a word,
 * so the first reader that notices a ban (deny list, stats, status, the
 * exporter) writes its one audit line. A note in the pinned map
 * `ban_notes`, inserted only if absent, says which reader got there
 * first: each ban gets exactly one line, however many readers run.
 */
#ifndef SLUICE_OUTPUTS_BAN_AUDIT_H
#define SLUICE_OUTPUTS_BAN_AUDIT_H

#include "pins/state.h"
#include "policy/policy.h"

/*
 * Writes a line for each ban not written yet (doc names the rules; NULL:
 * the live policy's);
 * returns how many. A reader that may not write the pins (not root)
 * writes none, and leaves them to one that may.
 */
int ban_audit_notice(const struct state *st, const struct policy_doc *doc, const char *reader);

#endif /* SLUICE_OUTPUTS_BAN_AUDIT_H */
