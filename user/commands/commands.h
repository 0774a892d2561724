/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The command table: for each command its words, what it needs (root, the
 * lock, an opened interface) and its functions. main.c parses, checks,
 * takes what a command needs and calls it once; each command lives in
 * user/commands/<name>.c.
 */
#ifndef SLUICE_COMMANDS_COMMANDS_H
#define SLUICE_COMMANDS_COMMANDS_H

#include "outputs/busiest.h"
#include "outputs/report.h"

#include <stdbool.h>
#include <stdio.h>
#include "base/caps.h"
#include "pins/state.h"
#include "text/options.h"

/* What a command needs before it runs, taken (and released) by the dispatch. */
enum state_use {
	USE_NONE,   /* nothing pinned, or it finds what it reads itself */
	USE_LOCK,   /* the command lock only: it creates or removes state */
	USE_READ,   /* IFACE's state, opened */
	USE_CHANGE, /* the command lock, then IFACE's state opened */
	/*
	 * A daemon that changes IFACE's state for as long as it runs (the
	 * agent): it opens it itself, read-write, and holds no command lock.
	 */
	USE_DAEMON,
};

enum iface_arg { IFACE_NONE, IFACE_REQUIRED, IFACE_OPTIONAL };

struct verb {
	const char *name;
	const char *aliases; /* space-separated other spellings: "delete rm" */
	enum state_use state;
};

struct command {
	enum command_id id;
	const char *name;
	const char *summary;	  /* one line, for 'sluice --help' */
	const char *synopsis;	  /* usage lines, each after "sluice NAME " */
	const char *description;  /* for --help and the man page */
	const struct verb *verbs; /* ends with a NULL name; NULL: no verb */
	enum iface_arg iface;	  /* the positional after the verb */
	bool more_args;		  /* more positionals, which check() reads; else refused */
	/*
	 * The capabilities its changing uses (USE_LOCK, USE_CHANGE) need; a
	 * use that reads needs none, only permission on the pins.
	 */
	uint64_t caps;
	enum state_use state; /* when there are no verbs */
	/* Checks that need no privilege; -1 to go on, else the exit status. */
	int (*check)(struct cli_args *a);
	/* st: opened by the dispatch for USE_READ and USE_CHANGE, else NULL. */
	int (*run)(struct cli_args *a, struct state *st);
	/* More --help text after the options (such as the counters of stats). */
	void (*help_more)(FILE *out);
};

extern const struct command cmd_attach, cmd_set, cmd_detach, cmd_status, cmd_stats, cmd_rule,
	cmd_allow, cmd_deny, cmd_apply, cmd_show, cmd_upgrade, cmd_top, cmd_exporter, cmd_agent,
	cmd_help;

/* add, del (delete, rm), list (ls, show), flush: the verbs of rule, allow and deny. */
extern const struct verb edit_verbs[];

/* Every command, in the order 'sluice --help' lists them; ends with NULL. */
extern const struct command *const command_table[];

const struct command *command_find(const char *name);
/* "unknown command 'stast' (did you mean 'stats'?)"; EXIT_BAD_INPUT. */
int command_unknown(const char *cmd, const char *word);
/* --help of one command. */
void command_help(FILE *out, const struct command *c);
/* 'sluice --help'. */
void commands_usage(FILE *out);
struct json;
/* IFACE's entry of 'sluice status --json' as key's value; null when it is not attached. */
void status_json_named(struct json *j, const char *key, const char *ifname);
/*
 * Measured (docs/operations.md): writing maps and creating the idle
 * configuration's map takes CAP_BPF; loading the program also CAP_PERFMON
 * (the verifier refuses sluice's without it) and attaching it to a link
 * CAP_NET_ADMIN. detach only unpins root's files.
 */
#define CAPS_CHANGE CAP_BIT(CAP_BPF)
#define CAPS_LOAD   (CAP_BIT(CAP_BPF) | CAP_BIT(CAP_NET_ADMIN) | CAP_BIT(CAP_PERFMON))
#define CAPS_UNPIN  0
/* Run by another uid: to open root's pins and lock, and to give what it pins to root. */
#define CAPS_NOT_ROOT (CAP_BIT(CAP_DAC_OVERRIDE) | CAP_BIT(CAP_CHOWN))
/*
 * What a command with this state use needs: its caps to change, none to
 * read; and, run by another uid than root, CAPS_NOT_ROOT.
 */
bool command_reads(enum state_use use);
uint64_t command_caps(const struct command *c, enum state_use use);
/* A verb's canonical name for word (or an alias), or NULL. */
const struct verb *verb_find(const struct command *c, const char *word);

/* The columns of status (top's are in outputs/busiest.h), which the unit tests check. */
extern const struct report_col status_cols[];
extern const int status_ncols;

#endif /* SLUICE_COMMANDS_COMMANDS_H */
