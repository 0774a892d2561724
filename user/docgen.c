// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-docgen: what the build derives from the option and command tables.
 *   sluice-docgen man FILE        FILE with @OPTIONS@, @CONF_OPTIONS@, @TIME_UNITS@ and
 *                                 @RATE_PERIODS@ filled in (scdoc)
 *   sluice-docgen completion      the bash completion script
 * It sits beside main.c, above every layer: it reads both tables.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "commands/commands.h"
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

static int man(const char *path)
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

/* The words of option id for completion: "--rate" and "-n" forms. */
static void completion_option_words(FILE *out, enum command_id cmd)
{
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		if (!option_takes(cmd, 0, i))
			continue;
		fprintf(out, " --%s", option_table[i].name);
		if (option_table[i].short_name)
			fprintf(out, " -%c", option_table[i].short_name);
	}
}

/* case "$prev" in --action) words...;; esac: the values of each option. */
static void completion_values(FILE *out)
{
	int i;

	fprintf(out, "\tcase \"$prev\" in\n");
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (!o->metavar || o->value_optional)
			continue;
		fprintf(out, "\t--%s", o->name);
		if (o->short_name)
			fprintf(out, " | -%c", o->short_name);
		if (!o->values)
			fprintf(out, ")\n\t\treturn 0 ;;\n");
		else if (o->values[0] == '@')
			fprintf(out,
				")\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\t\treturn 0 ;;\n");
		else
			fprintf(out,
				")\n\t\tCOMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n\t\treturn 0 ;;\n",
				o->values);
	}
	fprintf(out, "\tesac\n");
}

/* In the word loop: an option's value is not a positional argument. */
static void completion_skip_values(FILE *out)
{
	const char *sep = "\t\t";
	int i;

	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->value_optional)
			fprintf(out, "\t\t--%s) [[ ${COMP_WORDS[i+1]} == [0-9]* ]] && ((i++)) ;;\n",
				o->name);
	}
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (!o->metavar || o->value_optional)
			continue;
		fprintf(out, "%s--%s", sep, o->name);
		if (o->short_name)
			fprintf(out, " | -%c", o->short_name);
		sep = " | ";
	}
	fprintf(out, ") ((i++)) ;;\n");
}

static void completion_verbs(FILE *out, const struct command *c)
{
	const struct verb *v;

	for (v = c->verbs; v->name; v++)
		fprintf(out, " %s%s%s", v->name, v->aliases ? " " : "",
			v->aliases ? v->aliases : "");
}

/* Per command: its options, its verbs, and which interfaces its IFACE can be. */
static void completion_commands(FILE *out)
{
	const struct command *const *c;

	fprintf(out, "\tcase \"$command\" in\n");
	for (c = command_table; *c; c++) {
		fprintf(out, "\t%s)\n\t\topts='", (*c)->name);
		completion_option_words(out, (*c)->id);
		fprintf(out, "'\n\t\tverbs='");
		if ((*c)->verbs)
			completion_verbs(out, *c);
		fprintf(out, "'\n\t\tifaces=%s ;;\n",
			(*c)->iface == IFACE_NONE ? "none"
			: (*c)->id == CMD_ATTACH  ? "all"
						  : "attached");
	}
	fprintf(out, "\tesac\n");
}

static int completion(void)
{
	const struct command *const *c;

	printf("# bash completion for sluice(8): generated by sluice-docgen from the option\n"
	       "# and command tables; do not edit.\n\n"
	       "_sluice_ifaces()\n{\n"
	       "\tif [ \"$1\" = attached ] && [ -r /sys/fs/bpf/sluice ]; then\n"
	       "\t\tls /sys/fs/bpf/sluice 2>/dev/null | grep -v ':'\n"
	       "\telif [ \"$1\" = attached ] && [ -x /sys/fs/bpf ] && [ ! -e /sys/fs/bpf/sluice ]; then\n"
	       "\t\t: # no pin root (the last detach removes it): nothing is attached\n"
	       "\telse\n"
	       "\t\tls /sys/class/net 2>/dev/null\n"
	       "\tfi\n}\n\n"
	       "_sluice()\n{\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	       "\tlocal command='' i positional=0 opts verbs ifaces\n"
	       "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tcase ${COMP_WORDS[i]} in\n");
	completion_skip_values(stdout);
	printf("\t\t-*) ;;\n"
	       "\t\t*) if [ -z \"$command\" ]; then command=${COMP_WORDS[i]}; else ((positional++)); fi ;;\n"
	       "\t\tesac\n"
	       "\tdone\n");
	completion_values(stdout);
	printf("\tif [ -z \"$command\" ]; then\n\t\tCOMPREPLY=($(compgen -W '");
	for (c = command_table; *c; c++)
		printf("%s ", (*c)->name);
	printf("--json -j --pretty -p --wait --help --version' -- \"$cur\"))\n\t\treturn 0\n\tfi\n");
	completion_commands(stdout);
	printf("\tif [[ $cur == -* ]]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	       "\telif [ \"$command\" = help ] && [ $positional = 0 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W '");
	for (c = command_table; *c; c++)
		printf("%s ", (*c)->name);
	printf("' -- \"$cur\"))\n"
	       "\telif [ -n \"$verbs\" ] && [ $positional = 0 ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$verbs\" -- \"$cur\"))\n"
	       "\telif [ \"$ifaces\" != none ] && [ $positional = $((${#verbs} > 0)) ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W \"$(_sluice_ifaces $ifaces)\" -- \"$cur\"))\n"
	       "\tfi\n"
	       "\treturn 0\n}\n\n"
	       "complete -F _sluice sluice\n");
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "man"))
		return man(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "completion"))
		return completion();
	fprintf(stderr, "usage: sluice-docgen man FILE | completion\n");
	return EXIT_BAD_INPUT;
}
