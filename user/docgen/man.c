// SPDX-License-Identifier: GPL-2.0
/* sluice-docgen man: sluice(8)'s and sluice.conf(5)'s generated parts. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "docgen/docgen.h"
#include "values/rate.h"

/* Help lines are written for a terminal: a sentence for the man page. */
static void man_sentence(FILE *out, const char *help)
{
	fprintf(out, "\t%c%s.\n", toupper((unsigned char)help[0]), help + 1);
}

/* "*attach*, *set*, *rule*": the commands (or statements) that take option id. */
static void man_takers(FILE *out, enum option_id id, bool statements)
{
	const struct command *const *c;
	const char *sep = "";
	unsigned int s;

	if (statements) {
		for (s = 0; s < STMT_COUNT; s++)
			if (option_takes(-1, 1U << s, id)) {
				fprintf(out, "%s*%s*", sep, statement_name(s));
				sep = ", ";
			}
		return;
	}
	for (c = command_table; *c; c++)
		if (option_takes((*c)->id, 0, id) && (*c)->id != CMD_HELP) {
			fprintf(out, "%s*%s*", sep, (*c)->name);
			sep = ", ";
		}
}

static void man_metavar(FILE *out, const struct option_def *o)
{
	if (!o->metavar)
		return;
	fprintf(out, o->value_optional ? " [_%s_]" : " _%s_", o->metavar);
}

/* The OPTIONS of sluice(8): every option, with the commands that take it. */
static void man_options(FILE *out)
{
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->short_name)
			fprintf(out, "*-%c*, ", o->short_name);
		fprintf(out, "*--%s*", o->name);
		man_metavar(out, o);
		fputc('\n', out);
		man_sentence(out, o->help);
		if (o->values)
			fprintf(out, "\n\tValues: %s.\n",
				o->values[0] == '@' ? "a file name" : o->values);
		fprintf(out, "\n\t%s: ", o->scope == SCOPE_GLOBAL ? "Accepted by" : "Taken by");
		man_takers(out, i, false);
		fprintf(out, ".\n\n");
	}
}

/* The OPTIONS of sluice.conf(5): those a statement takes, without dashes. */
static void man_conf_options(FILE *out)
{
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (!o->statements)
			continue;
		fprintf(out, "*%s*", o->name);
		man_metavar(out, o);
		fputc('\n', out);
		man_sentence(out, o->help);
		fprintf(out, "\n\tIn: ");
		man_takers(out, i, true);
		fprintf(out, ". On the command line: *--%s*.\n\n", o->name);
	}
}

/*
 * The time units as the parser knows them, smallest first, each with its
 * other spellings: "*us*; *ms*; *s*, *sec* or *second*; ...". periods:
 * only those a rate may be per.
 */
static void man_time_units(FILE *out, bool periods)
{
	struct {
		const char *name;
		bool alias, period;
	} u[32];
	const char *sep = "";
	int n = 0, first, end, j;
	uint64_t ns;

	while (n < 32 && (u[n].name = time_unit_at((size_t)n, &ns, &u[n].alias, &u[n].period)))
		n++;
	/* From the smallest: each unit, then its other spellings. */
	for (end = n; end > 0; end = first) {
		for (first = end - 1; first > 0 && u[first].alias; first--)
			;
		if (periods && !u[first].period)
			continue;
		fprintf(out, "%s", sep);
		sep = "; ";
		for (j = first; j < end; j++)
			fprintf(out, "%s*%s*",
				j == first     ? ""
				: j == end - 1 ? " or "
					       : ", ",
				u[j].name);
	}
	fprintf(out, ".\n");
}

int man_page(const char *path)
{
	char line[4096];
	FILE *in = fopen(path, "r");

	if (!in)
		return fail_runtime("docgen", -1, "cannot open %s", path);
	while (fgets(line, sizeof(line), in)) {
		if (!strcmp(line, "@OPTIONS@\n"))
			man_options(stdout);
		else if (!strcmp(line, "@CONF_OPTIONS@\n"))
			man_conf_options(stdout);
		else if (!strcmp(line, "@TIME_UNITS@\n"))
			man_time_units(stdout, false);
		else if (!strcmp(line, "@RATE_PERIODS@\n"))
			man_time_units(stdout, true);
		else
			fputs(line, stdout);
	}
	fclose(in);
	return EXIT_OK;
}
