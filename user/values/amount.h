/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict parsers for everything an operator types: rates, bursts, counts,
 * prefix lengths, CIDRs, ports, protocols, actions, modes. Each returns 0
 * or a negative errno and, on error, points *why at a short explanation.
 */
#ifndef SLUICE_ARGS_H
#define SLUICE_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include "sluice.h"

#define NSEC_PER_SEC 1000000000ULL

/* Exit statuses shared by every command. */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,
	EXIT_BAD_INPUT = 2,
};

/*
 * `amount` units per `period_ns`, exactly as typed: 30/m is 30 packets per
 * 60 s, 10mbit/s is 10,000,000 bits per second.
 */
struct rate {
	uint64_t amount;
	uint64_t period_ns;
	uint8_t unit; /* enum sluice_rate_unit */
};

/* A burst as typed: a count of packets, or bytes when it had a byte suffix. */
struct burst {
	uint64_t value; /* 0: derive from the rate */
	bool bytes;
};

/* An aggregate limit as typed: [ipv4|ipv6]/LEN=RATE[,burst=N]. */
struct aggregate {
	uint8_t family; /* 0: the rule's, or for the default by length (<= 32: IPv4) */
	uint8_t prefix_len;
	struct rate rate;
	struct burst burst; /* value 0: one second of rate */
};

struct cidr {
	uint8_t family; /* SLUICE_FAMILY_IPV4 or _IPV6 */
	uint8_t len;
	uint32_t addr[4]; /* network byte order, host bits clear */
};

/* Highest packet rate we accept: one packet per nanosecond. */
#define RATE_MAX_PER_SEC 1000000000ULL
/* Highest byte rate: 1 Tbit/s. */
#define BYTE_RATE_MAX_PER_SEC 125000000000ULL
/* Highest rates a limit meters within 0.1% (user/policy.c); new-sources may go higher. */
#define RATE_METERED_MAX_PER_SEC      16000000ULL
#define BYTE_RATE_METERED_MAX_PER_SEC 960000000ULL
#define BURST_MAX		      1000000000ULL
#define BURST_BYTES_MAX		      (1ULL << 40)
#define MAX_SOURCES_MAX		      100000000ULL

int parse_rate(const char *s, struct rate *rate, const char **why);
int parse_burst(const char *s, struct burst *burst, const char **why);
int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why);
/* Seconds with an optional fraction ("1", "0.25"), to nanoseconds. */
int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why);
struct sockaddr_storage;
/* A numeric listen address: "127.0.0.1:9723", "[::1]:9723"; port 0 picks one. */
int parse_listen(const char *s, struct sockaddr_storage *addr, const char **why);
int parse_prefix(const char *s, unsigned int max, unsigned int *out, const char **why);
int parse_aggregate(const char *s, struct aggregate *agg, const char **why);
int parse_action(const char *s, uint32_t *action, const char **why);
int parse_mode(const char *s, uint32_t *xdp_flags, const char **why);
/* A CIDR or a bare address; *host_bits tells that host bits were cleared. */
int parse_cidr(const char *s, struct cidr *cidr, bool *host_bits, const char **why);
int parse_proto(const char *s, uint8_t *proto, const char **why);
int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi, const char **why);

const char *action_name(uint32_t action);
const char *proto_name(uint8_t proto);
/* Canonical spellings that parse back to the same value. */
void format_rate(char *buf, unsigned long len, const struct rate *rate);
void format_burst(char *buf, unsigned long len, const struct burst *burst);
void format_cidr(char *buf, unsigned long len, const struct cidr *cidr);
void format_aggregate(char *buf, unsigned long len, const struct aggregate *agg);

/*
 * getopt_long with our error style: returns the next option, -1 at the
 * end, or '?' after printing "sluice CMD: ..." for an unknown option or a
 * missing argument. Each process parses one command, so getopt's global
 * state starts fresh.
 */
int cli_next_option(const char *cmd, int argc, char **argv, const struct option *options);
/* The long name of the option whose value is `val`, for messages. */
const char *cli_option_name(const struct option *options, int val);
/* Exactly one positional argument left, named `what` in errors. */
int cli_one_positional(const char *cmd, int argc, char **argv, const char *what, const char **out);
/*
 * 0 when name could name a network interface, as the kernel's
 * dev_valid_name() has it: 1 to 15 bytes, not "." or "..", no '/', ':' or
 * whitespace; else -EINVAL and why not. Names become paths under bpffs, so
 * every command checks its interface name here before touching any path.
 */
int ifname_check(const char *name, const char **why);
/* The same for a command: EXIT_OK, or one line and EXIT_BAD_INPUT. */
int cli_ifname(const char *cmd, const char *name);
/* cli_one_positional() for the interface name, checked. */
int cli_one_ifname(const char *cmd, int argc, char **argv, const char **out);

#endif /* SLUICE_ARGS_H */
