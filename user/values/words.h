/* SPDX-License-Identifier: GPL-2.0 */
/* The words an operator types: actions, XDP modes, protocols and port ranges. */
#ifndef SLUICE_VALUES_WORDS_H
#define SLUICE_VALUES_WORDS_H

#include <stdbool.h>
#include <stdint.h>

int parse_action(const char *s, uint32_t *action, const char **why);
const char *action_name(uint32_t action);
/* native, or generic (also spelled skb, as xdp-loader does). */
int parse_mode(const char *s, uint32_t *xdp_flags, const char **why);
/* "native" or "generic" for the flags parse_mode gives; "auto" for 0. */
const char *mode_name(uint32_t xdp_flags);
/*
 * A group of the system (getgrnam, or a number getgrgid knows), but root's:
 * root reads the pins anyway. gid_t as an unsigned int, to keep this header
 * free of system types.
 */
int parse_group(const char *s, unsigned int *gid, const char **why);
/* The group's name, or its number when it has none (for show, which parse_group reads back). */
void format_group(char *buf, size_t len, unsigned int gid);
#define DSCP_MAX 63
/* 0-63, or a class name, any case: cs0-cs7, af11-af43 (drop precedence 1-3), ef. */
int parse_dscp(const char *s, uint8_t *dscp, const char **why);
/* The lowercase class name of a DSCP value, or NULL when it has none. */
const char *dscp_name(uint8_t dscp);
/* gcra, fixed-window or sliding-window: an enum sluice_meter below SLUICE_METER_WARMUP. */
int parse_algorithm(const char *s, uint8_t *algorithm, const char **why);
const char *algorithm_name(uint8_t algorithm);
int parse_proto(const char *s, uint8_t *proto, const char **why);
const char *proto_name(uint8_t proto);
int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why);

#endif /* SLUICE_VALUES_WORDS_H */
