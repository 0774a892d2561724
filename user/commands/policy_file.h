/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What apply, show and attach share about a whole policy file: the attach
 * settings of a running interface and how they compare with a file's, and
 * replacing a live policy with a file's, or leaving it alone when it is
 * already the same.
 */
#ifndef SLUICE_COMMANDS_POLICY_FILE_H
#define SLUICE_COMMANDS_POLICY_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include "pins/state.h"
#include "policy/policy.h"

/*
 * The attach settings of the running state: the XDP mode the kernel reports
 * (not stated when it is neither native nor generic) and max-sources as
 * attached. -EPROTO for state of another layout.
 */
int attach_settings_live(const struct state *st, struct attach_settings *as);
/*
 * Does want differ from live? Only what want states is compared, and with
 * unstated_default also its max-sources when not stated (attach -f gives the
 * default then). Names the first difference in buf: "max-sources 5000
 * (running 1000000)".
 */
bool attach_settings_differ(const struct attach_settings *want, const struct attach_settings *live,
			    bool unstated_default, char *buf, size_t len);
/*
 * For apply: EXIT_BAD_INPUT (one line, nothing changed) when the file
 * states attach settings the running state does not have; else EXIT_OK.
 */
int attach_settings_check(const char *cmd, const struct state *st, const char *file,
			  const struct attach_settings *want);
/*
 * Makes doc (default, rules, lists) the live policy in one step, as apply
 * does. When the live policy is already doc, nothing is written and the
 * generation stays: the one "nothing to change" return, nothing_to_change().
 * An exit status.
 */
int policy_replace_cmd(const char *cmd, struct state *st, struct policy_doc *doc);
/*
 * attach --replace on an interface sluice may be attached to. EXIT_OK (or a
 * failure's exit status) when it is done here: the program and buckets kept,
 * the group changed in place, the policy replaced or already the same
 * (nothing_to_change() only when the group is the same too). -1 to go on with a fresh attach,
 * *remove_old saying that the old state (stale, of another layout, or of
 * other attach settings) must be removed once the new program has loaded.
 */
int attach_replace(const char *ifname, struct policy_doc *doc, bool *remove_old);

#endif /* SLUICE_COMMANDS_POLICY_FILE_H */
