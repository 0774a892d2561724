/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The option table: every option sluice knows, declared once as data (name,
 * short form, metavar, parser, scope, which commands and config statements
 * take it, help line). The getopt tables, config-file parsing, the field
 * order of `show`, each command's --help, the man pages' OPTIONS sections
 * and bash completion all come from it. Adding an option is one entry here
 * plus its behaviour.
 */
#ifndef SLUICE_TEXT_OPTIONS_H
#define SLUICE_TEXT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include "policy/policy.h"

/* Every command, so that an option can say which ones take it. */
enum command_id {
	CMD_ATTACH,
	CMD_SET,
	CMD_DETACH,
	CMD_STATUS,
	CMD_STATS,
	CMD_RULE,
	CMD_ALLOW,
	CMD_DENY,
	CMD_APPLY,
	CMD_SHOW,
	CMD_UPGRADE,
	CMD_TOP,
	CMD_EXPORTER,
	CMD_AGENT,
	CMD_HELP,
	CMD_COUNT,
};

#define ON(cmd)	 (1U << CMD_##cmd)
#define ON_EVERY ((1U << CMD_COUNT) - 1)
/* The commands that change the policy of an attached interface. */
#define ON_POLICY (ON(ATTACH) | ON(SET) | ON(RULE))

/* What an option shapes. */
enum option_scope {
	SCOPE_LIMITER, /* one limiter: the default's or a rule's settings */
	SCOPE_MATCH,   /* what a rule applies to */
	SCOPE_COMMAND, /* how one command runs */
	SCOPE_GLOBAL,  /* every command, also before the command word */
};

/* Config statements that take an option (sluice.conf(5)). */
#define STMT_DEFAULT (1U << 0)
#define STMT_RULE    (1U << 1)
#define STMT_ATTACH  (1U << 2) /* what attach fixes: mode, max-sources, group */
#define STMT_COUNT   3

enum option_id {
	/* Limiter options, in the order `show` prints them. */
	OPT_RATE,
	OPT_ALGORITHM,
	OPT_WINDOW,
	OPT_BURST,
	OPT_WARMUP,
	OPT_ACTION,
	OPT_DSCP,
	OPT_ECN,
	OPT_IPV4_PREFIX,
	OPT_IPV6_PREFIX,
	OPT_NEW_SOURCES,
	OPT_OVERFLOW_RATE,
	OPT_INITIAL_BURST,
	OPT_ON_FULL,
	OPT_PROVE,
	OPT_PROVEN_SOURCES,
	OPT_AGGREGATE,
	/* Match options. */
	OPT_PROTO,
	OPT_DPORT,
	OPT_SYN,
	/* Command options. */
	OPT_MODE,
	OPT_MAX_SOURCES,
	OPT_GROUP,
	OPT_MULTIPROG,
	OPT_FILE,
	OPT_TIMEOUT,
	OPT_CHECK,
	OPT_REPLACE,
	OPT_PROMETHEUS,
	OPT_WATCH,
	OPT_COUNT,
	OPT_LIMIT,
	OPT_SORT,
	OPT_LISTEN,
	OPT_REDIS,
	OPT_PERIOD,
	OPT_FALLBACK,
	OPT_HOSTS,
	OPT_SHADOW,
	OPT_REDIS_USER,
	OPT_REDIS_PASSWORD_FILE,
	/* Global options. */
	OPT_JSON,
	OPT_PRETTY,
	OPT_WAIT,
	OPT_HELP,
	OPT_MAX,
};

enum top_sort { SORT_DROPS, SORT_PASSED, SORT_RATE };

/* agent --fallback: what a host does while Redis cannot be reached. */
enum fleet_fallback { FALLBACK_LOCAL, FALLBACK_SPLIT };

/* N, from --hosts or counted in Redis, is at most this (docs/fleet.md). */
#define AGENT_HOSTS_MAX 1000

/* What `sluice agent` is told. */
struct agent_args {
	const char *redis; /* HOST:PORT[,...], checked */
	uint64_t period_ns;
	enum fleet_fallback fallback;
	uint64_t hosts; /* N for split until agents are counted in Redis */
	bool shadow;
	const char *user;
	const char *password_file;
};

/* Everything a command line says, filled from the option table. */
struct cli_args {
	enum command_id command;
	const char *name; /* the command word as canonical: "rule" */
	const char *verb; /* canonical ("del" for "rm"), NULL without verbs */
	const char *ifname;
	char **args; /* positional arguments after verb and interface */
	int nargs;
	bool given[OPT_MAX];
	struct settings settings; /* SCOPE_LIMITER options */
	struct match match;	  /* SCOPE_MATCH options */
	uint32_t xdp_flags;
	bool multiprog; /* attach through libxdp's dispatcher */
	uint64_t max_sources;
	unsigned int group; /* gid, when given[OPT_GROUP] */
	const char *file;
	uint64_t timeout_ns; /* deny add --timeout; 0: never expires */
	bool json, pretty, prometheus;
	uint64_t watch_ns; /* 0: print once */
	uint64_t count;
	uint64_t limit;
	enum top_sort sort;
	struct sockaddr_storage listen;
	uint64_t wait_ns;
	struct agent_args agent;
	/* What a command's check parsed for its run: a policy file, CIDRs. */
	struct policy_doc *doc;
	struct cidr_list items;
};

struct option_def {
	const char *name;
	char short_name;     /* 0: none */
	const char *metavar; /* NULL: a flag */
	bool value_optional; /* --watch [SECONDS]: a value only when it looks like one */
	enum option_scope scope;
	unsigned int commands;	 /* ON(...) bits */
	unsigned int statements; /* STMT_* bits */
	const char *values;	 /* the words it takes, for help and completion */
	int (*apply)(struct cli_args *a, const char *value, const char **why);
	/* Limiter and match options: false when s/m holds the default (show omits it). */
	bool (*format)(const struct settings *s, const struct match *m, char *buf, size_t len);
	/* Options of the attach statement: false when the file does not state it. */
	bool (*format_attach)(const struct attach_settings *as, char *buf, size_t len);
	const char *help;
};

/* Indexed by enum option_id. */
extern const struct option_def option_table[OPT_MAX];

/* Defaults of every field, before any option. */
void cli_args_init(struct cli_args *a);
/* The first option of scope given on the command line, or -1 when none was. */
int option_given_in(const struct cli_args *a, enum option_scope scope);
/* "drops", "passed" or "rate": the words of --sort. */
const char *sort_name(enum top_sort sort);
/* The option called name ("rate", no dashes), or -1. */
int option_find(const char *name);
/* The short option c, or -1. */
int option_find_short(char c);
/* Does command cmd (or config statement stmt, when cmd < 0) take option id? */
bool option_takes(int cmd, unsigned int stmt, enum option_id id);
/*
 * Applies option id, value NULL for flags, records it as given; a
 * repeated option (but --aggregate) replaces the earlier value.
 */
int option_apply(struct cli_args *a, enum option_id id, const char *value, const char **why);

/* "rate 500/s burst 1000 action mark dscp 8": only what differs from defaults. */
void format_settings(char *buf, size_t len, const struct settings *s);
/* "proto tcp dport 22 syn", or "" for no L4 class. */
void format_match(char *buf, size_t len, const struct match *m);
/* "mode native max-sources 1000000": what as states, "" when nothing. */
void format_attach_settings(char *buf, size_t len, const struct attach_settings *as);
/* The statement words: "default", "rule", "attach", by STMT_* bit number. */
const char *statement_name(unsigned int bit);

/* "--rate RATE" or "-n, --limit N", as help and man pages show an option. */
void option_usage(const struct option_def *o, char *buf, size_t len);
/* The options command cmd takes, one per line with help, as --help shows them. */
void options_help(FILE *out, enum command_id cmd);

/*
 * The known name nearest to word, for "did you mean": within an edit
 * distance of 2 (or a third of the word), else NULL.
 */
const char *nearest_name(const char *word, const char *const *names, size_t n);

#endif /* SLUICE_TEXT_OPTIONS_H */
