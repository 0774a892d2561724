/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict parsers for everything an operator types: rates, counts, prefix
 * lengths, actions, modes. Each returns 0 or a negative errno and, on
 * error, points *why at a short explanation.
 */
#ifndef SLUICE_ARGS_H
#define SLUICE_ARGS_H

#include <stdint.h>

#define NSEC_PER_SEC 1000000000ULL

/* Exit statuses shared by every command. */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_RUNTIME = 1,
	EXIT_BAD_INPUT = 2,
};

/* `packets` per `period_ns`, exactly as typed: 30/m is 30 per 60 s. */
struct rate {
	uint64_t packets;
	uint64_t period_ns;
};

/* Highest rate we accept: one packet per nanosecond. */
#define RATE_MAX_PER_SEC 1000000000ULL
#define BURST_MAX	 1000000000ULL
#define MAX_SOURCES_MAX	 100000000ULL

int parse_rate(const char *s, struct rate *rate, const char **why);
int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why);
/* Seconds with an optional fraction ("1", "0.25"), to nanoseconds. */
int parse_seconds(const char *s, uint64_t min_ns, uint64_t max_ns, uint64_t *out, const char **why);
struct sockaddr_storage;
/* A numeric listen address: "127.0.0.1:9723", "[::1]:9723"; port 0 picks one. */
int parse_listen(const char *s, struct sockaddr_storage *addr, const char **why);
int parse_prefix(const char *s, unsigned int max, unsigned int *out, const char **why);
int parse_action(const char *s, uint32_t *action, const char **why);
int parse_mode(const char *s, uint32_t *xdp_flags, const char **why);

const char *action_name(uint32_t action);
/* "500/s", "30/m": the canonical spelling of a rate, for status output. */
void format_rate(char *buf, unsigned long len, const struct rate *rate);

#include <getopt.h>

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
#endif /* SLUICE_ARGS_H */
