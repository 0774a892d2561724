/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The match classes a rule may name beyond protocol and destination port:
 * TCP flags, ICMP type and code, frame length ranges, as typed and shown.
 */
#ifndef SLUICE_VALUES_CLASSES_H
#define SLUICE_VALUES_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * TCP flags as iptables' --tcp-flags MASK COMP says them: the flags in
 * mask must be those in value, the others in mask clear. Mask 0: any.
 */
struct tcp_flags_match {
	uint8_t mask, value;
};

/* An ICMP or ICMPv6 type, and optionally its code. */
struct icmp_match {
	uint8_t type, code;
	bool type_given, code_given;
};

/* "SYN,ACK/SYN", "ALL/FIN,PSH,URG", "RST/RST": names in any case, ALL and NONE. */
int parse_tcp_flags(const char *s, struct tcp_flags_match *f, const char **why);
/* As parse_tcp_flags reads it back, upper case in the header's order. */
void format_tcp_flags(char *buf, size_t len, const struct tcp_flags_match *f);
/* "TYPE" or "TYPE/CODE", each 0-255. */
int parse_icmp_type(const char *s, struct icmp_match *m, const char **why);
void format_icmp_type(char *buf, size_t len, const struct icmp_match *m);
/* "LEN" or "LO-HI", bytes 1-65535, low to high (a longer frame counts as 65535). */
int parse_length_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why);

#endif /* SLUICE_VALUES_CLASSES_H */
