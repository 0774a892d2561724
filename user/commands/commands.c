// SPDX-License-Identifier: GPL-2.0
/* The command table, and the help read from it and from the option table. */
#include <string.h>
#include <unistd.h>
#include "base/errors.h"
#include "commands/commands.h"

const struct command *const command_table[] = {
	&cmd_attach,   &cmd_set,   &cmd_detach, &cmd_status, &cmd_stats,   &cmd_rule,
	&cmd_allow,    &cmd_deny,  &cmd_apply,	&cmd_show,   &cmd_upgrade, &cmd_top,
	&cmd_exporter, &cmd_agent, &cmd_help,	NULL,
};

const struct verb edit_verbs[] = {
	{ "add", NULL, USE_CHANGE }, { "del", "delete rm", USE_CHANGE },
	{ "list", "ls show", USE_READ },  { "flush", NULL, USE_CHANGE },
	{ NULL, NULL, USE_NONE },
};

bool command_reads(enum state_use use)
{
	return use == USE_READ || use == USE_NONE;
}

uint64_t command_caps(const struct command *c, enum state_use use)
{
	if (command_reads(use))
		return 0;
	return geteuid() ? c->caps | CAPS_NOT_ROOT : c->caps;
}

const struct command *command_find(const char *name)
{
	const struct command *const *c;

	for (c = command_table; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

int command_unknown(const char *cmd, const char *word)
{
	const char *names[CMD_COUNT + 1], *near;
	size_t n;

	for (n = 0; command_table[n]; n++)
		names[n] = command_table[n]->name;
	near = nearest_name(word, names, n);
	if (near)
		return fail_input(cmd, "unknown command '%s' (did you mean '%s'?)", word, near);
	return fail_input(cmd, "unknown command '%s' (see 'sluice --help')", word);
}

/* Is word one of the space-separated words of list? */
static bool word_in(const char *list, const char *word)
{
	size_t n = strlen(word);

	while (list && *list) {
		if (!strncmp(list, word, n) && (list[n] == ' ' || !list[n]))
			return true;
		list = strchr(list, ' ');
		if (list)
			list++;
	}
	return false;
}

const struct verb *verb_find(const struct command *c, const char *word)
{
	const struct verb *v;

	for (v = c->verbs; v && v->name; v++)
		if (!strcmp(v->name, word) || word_in(v->aliases, word))
			return v;
	return NULL;
}

#define HELP_WIDTH 80

/* The length of the next word of a synopsis: a [bracketed group] is one word. */
static size_t synopsis_word(const char *s, size_t n)
{
	size_t i;
	int depth = 0;

	for (i = 0; i < n && (depth || s[i] != ' '); i++)
		depth += (s[i] == '[') - (s[i] == ']');
	return i;
}

/*
 * One form of the synopsis, n bytes of line, after "Usage: sluice NAME "
 * or its indent; a form too long for the line goes on under its first word.
 */
static void synopsis_form(FILE *out, const struct command *c, const char *prefix,
			  const char *line, size_t n)
{
	int col = fprintf(out, "%s sluice %s", prefix, c->name), indent = col + 1;
	size_t w;

	while (n) {
		w = synopsis_word(line, n);
		if (col > indent && col + 1 + (int)w > HELP_WIDTH)
			col = fprintf(out, "\n%*s", indent - 1, "") - 1;
		col += fprintf(out, " %.*s", (int)w, line);
		line += w, n -= w;
		while (n && *line == ' ')
			line++, n--;
	}
	fputc('\n', out);
}

/* Each form of the synopsis, one per line of it, after "Usage:" or its indent. */
static void synopsis_print(FILE *out, const struct command *c)
{
	const char *line = c->synopsis;
	bool first = true;

	do {
		size_t n = strcspn(line, "\n");

		synopsis_form(out, c, first ? "Usage:" : "      ", line, n);
		first = false;
		line += n;
	} while (*line++);
}

void command_help(FILE *out, const struct command *c)
{
	synopsis_print(out, c);
	fprintf(out, "\n%s\n", c->description);
	fprintf(out, "\nOptions:\n");
	options_help(out, c->id);
	if (c->help_more)
		c->help_more(out);
}

void commands_usage(FILE *out)
{
	const struct command *const *c;

	fprintf(out, "Usage: sluice [-j|--json] [-p|--pretty] [--wait SECONDS] COMMAND [ARGS]\n"
		     "       sluice help COMMAND, or sluice COMMAND --help, for its options\n\n"
		     "A per-source packet rate limiter in XDP.\n\nCommands:\n");
	for (c = command_table; *c; c++)
		fprintf(out, "  %-9s %s\n", (*c)->name, (*c)->summary);
	fprintf(out, "\nOptions for every command:\n");
	options_help(out, CMD_HELP);
	fprintf(out, "\nExit status: 0 success, 1 system failure, 2 bad input.\n");
}
