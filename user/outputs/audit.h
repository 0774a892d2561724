/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The audit trail: one syslog line for each command that changed an
 * interface, saying who, the command as typed, and what it changed (old ->
 * new, with the configuration generation). The dispatch takes a snapshot
 * of the interface before and after a command that may change it; the
 * difference is the line, so every command is audited in one place and a
 * command that changed nothing writes nothing.
 */
#ifndef SLUICE_OUTPUTS_AUDIT_H
#define SLUICE_OUTPUTS_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "sluice.h"
#include "policy/policy.h"

/* What a change can be told by: cheap to read (no list or table walk). */
struct audit_snapshot {
	bool present; /* anything pinned for the interface */
	bool read;    /* its configuration and policy were read: this layout */
	unsigned int prog_id;
	unsigned int group; /* the group that may read the pins (a gid_t), STATE_NO_GROUP: none */
	struct sluice_config cfg;
	struct policy_doc *doc; /* default and rules, no lists; NULL unless read */
};

int audit_snapshot_take(const char *ifname, struct audit_snapshot *s);
void audit_snapshot_free(struct audit_snapshot *s);
/* Did anything change: pinned or not, the generation, the program, the group? */
bool audit_changed(const struct audit_snapshot *before, const struct audit_snapshot *after);

#define AUDIT_LOGIN_UID_UNSET 4294967295UL /* (uid_t)-1 in /proc/self/loginuid */

struct audit_who {
	unsigned long uid, euid;
	unsigned long login_uid; /* AUDIT_LOGIN_UID_UNSET: none */
	const char *sudo_user;	 /* $SUDO_USER, or NULL */
};

/* The process's real and effective uid, $SUDO_USER and the login uid. */
void audit_who_read(struct audit_who *w);

struct audit_event {
	const char *ifname;
	const char *command, *verb; /* "deny", "add"; verb NULL without verbs */
	int argc;
	char **argv; /* as typed, argv[0] first */
	struct audit_who who;
	const struct audit_snapshot *before, *after;
	int exit_status;
	uint64_t timeout_ns; /* deny add --timeout, said apart: the command may be cut short */
};

/* A line is never longer: a command with many arguments is summarised. */
#define AUDIT_LINE_MAX 2048
/* The part of it the command as typed may take. */
#define AUDIT_ARGS_MAX 640

/*
 * The line for e, in buf (at most AUDIT_LINE_MAX bytes used): printable
 * ASCII only, so no control character or newline from an argument, an
 * interface name or $SUDO_USER reaches the log.
 */
void audit_format(char *buf, size_t len, const struct audit_event *e);
/* syslog(3), facility LOG_AUTHPRIV, priority LOG_NOTICE, ident "sluice". */
void audit_log(const char *line);

#endif /* SLUICE_OUTPUTS_AUDIT_H */
