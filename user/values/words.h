/* SPDX-License-Identifier: GPL-2.0 */
/* The words an operator types: actions, XDP modes, protocols and port ranges. */
#ifndef SLUICE_VALUES_WORDS_H
#define SLUICE_VALUES_WORDS_H

#include <stdint.h>

int parse_action(const char *s, uint32_t *action, const char **why);
const char *action_name(uint32_t action);
int parse_mode(const char *s, uint32_t *xdp_flags, const char **why);
int parse_proto(const char *s, uint8_t *proto, const char **why);
const char *proto_name(uint8_t proto);
int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why);

#endif /* SLUICE_VALUES_WORDS_H */
