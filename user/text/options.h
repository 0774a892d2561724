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
	OPT_KEY,
	OPT_NEW_SOURCES,
	OPT_OVERFLOW_RATE,
	OPT_INITIAL_BURST,
	OPT_ON_FULL,
	OPT_PROVE,
	OPT_PROVEN_SOURCES,
	OPT_AGGREGATE,
	OPT_BAN_AFTER,
	OPT_BAN_FOR,
	OPT_BAN_ESCALATE,
	OPT_BAN_MEMORY,
	OPT_BAN_MAX,
	/* Match options. */
	OPT_PROTO,
	OPT_DPORT,
	OPT_SYN,
	OPT_SPORT,
	OPT_TCP_FLAGS,
	OPT_ICMP_TYPE,
	OPT_LENGTH,
	OPT_DST,
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

/*
 * Each command's own options, and what its check parsed for its run: the
 * union in struct cli_args holds the running command's.
 */
struct list_args {	     /* allow and deny */
	uint64_t timeout_ns; /* deny add --timeout; 0: never expires */
	struct cidr_list items;
};

struct apply_args {
	struct policy_doc *doc;
};

struct stats_args {
	bool prometheus;
	uint64_t watch_ns; /* 0: print once */
	uint64_t count;
};

struct top_args {
	uint64_t limit;
	enum top_sort sort;
};

struct exporter_args {
	struct sockaddr_storage listen;
};

struct attach_args {
	bool multiprog; /* attach through libxdp's dispatcher */
	struct policy_doc *doc;
};

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
	const char *file; /* -f: what the command reads instead of arguments */
	bool given[OPT_MAX];
	/* Global options. */
	bool json, pretty;
	uint64_t wait_ns;
	/* What commands that set a policy are told: IN_SETTINGS, IN_MATCH, IN_ATTACH. */
	struct settings settings;
	struct match match;
	struct attach_settings attach;
	union { /* IN_COMMAND: the options of the command a->command only */
		struct attach_args attach;
		struct apply_args apply;
		struct list_args list;
		struct stats_args stats;
		struct top_args top;
		struct exporter_args exporter;
		struct agent_args agent;
	} cmd;
};

/* The struct an option's value is a member of. */
enum option_home {
	IN_NONE,     /* a flag only recorded in cli_args.given */
	IN_ARGS,     /* struct cli_args itself: what any command line can say */
	IN_SETTINGS, /* struct settings: one limiter */
	IN_MATCH,    /* struct match: what a rule applies to */
	IN_ATTACH,   /* struct attach_settings: what attach fixes */
	IN_COMMAND,  /* the command's own struct in cli_args.cmd */
};

/* How a value is parsed and shown: one parser per type (options.c). */
enum option_type {
	TYPE_FLAG,	  /* bool, set by the bare option */
	TYPE_STRING,	  /* const char *, the word itself */
	TYPE_NAME,	  /* const char *, a word without spaces */
	TYPE_WORD,	  /* the index of the value among .values, in a member of any size */
	TYPE_COUNT,	  /* uint64_t in [min, max] */
	TYPE_DURATION,	  /* uint64_t ns in [min, max], "90s", "1h30m" */
	TYPE_SECONDS,	  /* uint64_t ns in [min, max], "0.5" */
	TYPE_TIMEOUT,	  /* a duration a deny entry may last */
	TYPE_PREFIX,	  /* unsigned int, a prefix length up to max */
	TYPE_RATE,	  /* struct rate */
	TYPE_BURST,	  /* struct burst */
	TYPE_ALGORITHM,	  /* uint8_t SLUICE_METER_* */
	TYPE_ACTION,	  /* uint32_t SLUICE_ACTION_* */
	TYPE_DSCP,	  /* uint8_t, a number or class name */
	TYPE_AGGREGATE,	  /* struct aggregate[], counted in the next member: repeatable */
	TYPE_PROTO,	  /* uint8_t IPPROTO_* */
	TYPE_PORT_RANGE,  /* uint16_t lo, then hi */
	TYPE_TCP_FLAGS,	  /* struct tcp_flags_match */
	TYPE_ICMP_TYPE,	  /* struct icmp_match */
	TYPE_LENGTH,	  /* uint16_t lo, then hi: frame bytes */
	TYPE_CIDR,	  /* struct cidr */
	TYPE_MODE,	  /* uint32_t XDP_FLAGS_* */
	TYPE_GROUP,	  /* unsigned int gid */
	TYPE_LISTEN,	  /* struct sockaddr_storage */
	TYPE_ENDPOINTS,	  /* const char *, a checked HOST:PORT[,...] list */
	TYPE_BAN_AFTER,	  /* struct ban_after: N[/PERIOD] */
	TYPE_FACTOR,	  /* uint32_t thousandths, 1 to 100 */
	TYPE_COUNT_TYPES, /* not a type */
};

struct option_def {
	const char *name;
	char short_name;     /* 0: none */
	const char *metavar; /* NULL: a flag */
	bool value_optional; /* --watch [SECONDS]: a value only when it looks like one */
	enum option_scope scope;
	unsigned int commands;	 /* ON(...) bits */
	unsigned int statements; /* STMT_* bits */
	const char *values;	 /* the words it takes, for help, completion and TYPE_WORD */
	enum option_type type;
	enum option_home home;
	size_t offset, size; /* of the member in its home */
	bool marks;	     /* it also sets a bool member at marked_offset */
	size_t marked_offset;
	bool shown_when_marked; /* show prints it when marked, not when it differs from the default
				 */
	uint64_t min, max;	/* counts, durations and prefixes */
	const char *dflt;	/* IN_COMMAND: the value before any option, parsed as typed */
	const char *bare;	/* value_optional: the value of the bare option */
	const char *help;
};

/* Indexed by enum option_id. */
extern const struct option_def option_table[OPT_MAX];

/*
 * Defaults of every field before any option: those of command cmd's own
 * options, or with cmd -1, of what a config statement may say.
 */
void cli_args_init(struct cli_args *a, int cmd);
/* The first option of scope given on the command line, or -1 when none was. */
int option_given_in(const struct cli_args *a, enum option_scope scope);
/* "--rate, --burst, ... or --aggregate": the options of scope that command cmd takes. */
void option_names_in(char *buf, size_t len, int cmd, enum option_scope scope);
/* "drops", "passed" or "rate": the words of --sort. */
const char *sort_name(enum top_sort sort);
/* The option called name ("rate", no dashes), or -1. */
int option_find(const char *name);
/* The short option c, or -1. */
int option_find_short(char c);
/* Does command cmd (or config statement stmt, when cmd < 0) take option id? */
bool option_takes(int cmd, unsigned int stmt, enum option_id id);
/* option_apply: applied, but the value was changed; *why says how (host bits). */
#define OPTION_WARNED 1

/*
 * Applies option id, value NULL for flags, records it as given; a
 * repeated option (but --aggregate) replaces the earlier value. 0,
 * OPTION_WARNED, or -errno with *why.
 */
int option_apply(struct cli_args *a, enum option_id id, const char *value, const char **why);

/* Limiter option o's value (and its mark) from one settings to another, as set does. */
void option_copy_setting(const struct option_def *o, const struct settings *from,
			 struct settings *to);
/* "rate 500/s burst 1000 action mark dscp 8": only what differs from defaults. */
void format_settings(char *buf, size_t len, const struct settings *s);
/* Limiter option o's value in s as show writes it; false (and "") at the default. */
bool format_setting(const struct option_def *o, const struct settings *s, char *buf, size_t len);
/*
 * The longest text format_match writes: every class at its widest
 * ("tcp-flags" with seven names each side, an IPv6 "dst") fits.
 */
#define MATCH_TEXT_MAX 256
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
