/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The policy language, shared by the command line and config files: the
 * same option names (rate, burst, action, dscp, ecn, ipv4-prefix,
 * ipv6-prefix, new-sources, overflow-rate, initial-burst, on-full,
 * aggregate (repeatable); and for rules proto, dport, syn, sport, tcp-flags,
 * icmp-type, length, dst) mean the same in both. A config file is
 * one statement per line:
 *
 *   default OPTIONS...
 *   rule CIDR OPTIONS...
 *   allow CIDR
 *   deny CIDR [until YYYY-MM-DDTHH:MM:SSZ]
 *   attach [mode MODE] [max-sources N] [group GROUP]
 *
 * with # comments and blank lines. `sluice show` prints this format back.
 */
#ifndef SLUICE_TEXT_CONF_H
#define SLUICE_TEXT_CONF_H

#include <stdio.h>
#include "policy/policy.h"
#include "text/options.h"

/*
 * Parses a whole config file into doc. On error, fills err with
 * "FILE:LINE:COL: what was expected" and returns a negative errno.
 */
int conf_parse(const char *path, struct policy_doc *doc, char *err, size_t errlen);
void conf_write(FILE *out, const struct policy_doc *doc);
/*
 * Reads a CIDR list file: one per line, # comments, blank lines. Errors
 * name FILE:LINE; host bits set are cleared with a warning on stderr.
 */
int cidr_file_parse(const char *path, struct cidr_list *list, char *err, size_t errlen);
/* A CIDR from the command line: warns on stderr when host bits were set. */
int cidr_arg(const char *cmd, const char *s, struct cidr *c, const char **why);

/*
 * The name the rule with this policy id is shown under: "default", or its
 * CIDR and class ("0.0.0.0/0 proto tcp dport 22 syn"); a rule changed or
 * deleted since shows as "replaced-N".
 */
void rule_name(const struct policy_doc *doc, uint16_t policy, char *buf, size_t len);

#endif /* SLUICE_TEXT_CONF_H */
