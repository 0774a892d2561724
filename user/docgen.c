// SPDX-License-Identifier: GPL-2.0
/*
 * sluice-docgen: what the build derives from the option and command tables.
 *   sluice-docgen man FILE        FILE with @OPTIONS@, @CONF_OPTIONS@, @TIME_UNITS@ and
 *                                 @RATE_PERIODS@ filled in (scdoc)
 *   sluice-docgen completion      the bash completion script
 *   sluice-docgen completion zsh  the zsh one (_sluice)
 *   sluice-docgen completion fish the fish one (sluice.fish)
 * It sits beside main.c, above every layer: it reads both tables.
 */
#include <ctype.h>
#include <stdint.h>
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

/*
 * The table walks the bash, zsh and fish scripts share: which options a command
 * takes, whether one takes a value, and the words of each verb.
 */

/* The next option after i that command cmd takes (cmd < 0: any), or OPT_MAX. */
static int next_option(int i, int cmd)
{
	for (i++; i < OPT_MAX; i++)
		if (cmd < 0 || option_takes(cmd, 0, i))
			break;
	return i;
}

/* What an option's value is: none (a flag), free text, a file, or one of words. */
enum value_kind { VALUE_NONE, VALUE_FREE, VALUE_FILE, VALUE_WORDS };

static enum value_kind value_kind(const struct option_def *o)
{
	if (!o->metavar)
		return VALUE_NONE;
	if (!o->values)
		return VALUE_FREE;
	return o->values[0] == '@' ? VALUE_FILE : VALUE_WORDS;
}

/* An option whose next word is always its value. */
static bool takes_value(const struct option_def *o)
{
	return o->metavar && !o->value_optional;
}

/* The first n bytes of s inside single quotes, for both shells. */
static void put_quoted(FILE *out, const char *s, size_t n, const char *escape_also)
{
	for (; n > 0 && *s; s++, n--) {
		if (*s == '\'')
			fputs("'\\''", out);
		else if (strchr(escape_also, *s))
			fprintf(out, "\\%c", *s);
		else
			fputc(*s, out);
	}
}

/* The help of an option as a short line: a long one up to its first clause. */
static void put_help(FILE *out, const char *help, const char *escape_also)
{
	size_t n = strlen(help);

	if (n > 60)
		n = strcspn(help, ";:");
	if (n > 60)
		n = strcspn(help, ",(");
	while (n > 0 && help[n - 1] == ' ')
		n--;
	put_quoted(out, help, n, escape_also);
}

/* Every verb and alias of c, each after sep. */
static void verb_words(FILE *out, const struct command *c, const char *sep)
{
	const struct verb *v;
	const char *a;

	for (v = c->verbs; v && v->name; v++) {
		fprintf(out, "%s%s", sep, v->name);
		if (v->aliases)
			fputs(sep, out);
		for (a = v->aliases; a && *a; a++)
			if (*a == ' ')
				fputs(sep, out);
			else
				fputc(*a, out);
	}
}

static const char *iface_kind(const struct command *c)
{
	return c->iface == IFACE_NONE ? "none" : c->id == CMD_ATTACH ? "all" : "attached";
}

static void command_names(FILE *out, const char *sep)
{
	const struct command *const *c;

	for (c = command_table; *c; c++)
		fprintf(out, "%s%s", sep, (*c)->name);
}

/* What completes each word after a command's name. */
enum word_kind { WORD_VERB, WORD_COMMAND, WORD_IFACE };

static const char *const word_kind_names[] = { "verb", "command", "interface" };

/* The words c takes after its name, in order, into kinds: how many. */
static int command_words(const struct command *c, enum word_kind kinds[3])
{
	int n = 0;

	if (c->verbs)
		kinds[n++] = WORD_VERB;
	if (c->id == CMD_HELP)
		kinds[n++] = WORD_COMMAND;
	if (c->iface != IFACE_NONE)
		kinds[n++] = WORD_IFACE;
	return n;
}

/* The words of a verb or command word (a shell's function lists interfaces). */
static void kind_words(FILE *out, const struct command *c, enum word_kind kind)
{
	if (kind == WORD_VERB)
		verb_words(out, c, " ");
	else if (kind == WORD_COMMAND)
		command_names(out, " ");
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
		if (value_kind(o) == VALUE_FREE)
			fprintf(out, ")\n\t\treturn 0 ;;\n");
		else if (value_kind(o) == VALUE_FILE)
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
			verb_words(out, *c, " ");
		fprintf(out, "'\n\t\tifaces=%s ;;\n", iface_kind(*c));
	}
	fprintf(out, "\tesac\n");
}

static void completion_header(FILE *out, const char *shell)
{
	fprintf(out,
		"# %s completion for sluice(8): generated by sluice-docgen from the option\n"
		"# and command tables; do not edit.\n\n",
		shell);
}

static int completion(void)
{
	const struct command *const *c;

	completion_header(stdout, "bash");
	printf("_sluice_ifaces()\n{\n"
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

/* zsh: an _arguments spec for each spelling of option o. */
static void zsh_option(FILE *out, const struct option_def *o)
{
	const char *opener = o->value_optional ? "=-" : takes_value(o) ? "=" : "";
	char spelled[3] = { '-', o->short_name, 0 };
	int n;

	for (n = o->short_name ? 0 : 1; n < 2; n++) {
		if (n == 0)
			fprintf(out, " \\\n\t\t'%s%s[", spelled, takes_value(o) ? "+" : "");
		else
			fprintf(out, " \\\n\t\t'--%s%s[", o->name, opener);
		put_help(out, o->help, "[]");
		fprintf(out, "]");
		if (o->metavar)
			fprintf(out, ":%s:", o->metavar);
		switch (value_kind(o)) {
		case VALUE_FILE:
			fprintf(out, "_files");
			break;
		case VALUE_WORDS:
			fprintf(out, "(%s)", o->values);
			break;
		case VALUE_FREE:
			fprintf(out, " ");
			break;
		case VALUE_NONE:
			break;
		}
		fprintf(out, "'");
	}
}

static void zsh_command(FILE *out, const struct command *c)
{
	enum word_kind kinds[3];
	int i, n = command_words(c, kinds);

	fprintf(out, "\t%s)\n\t\t_arguments -s -S", c->name);
	for (i = next_option(-1, c->id); i < OPT_MAX; i = next_option(i, c->id))
		zsh_option(out, &option_table[i]);
	for (i = 0; i < n; i++) {
		fprintf(out, " \\\n\t\t'%d:%s:", i + 1, word_kind_names[kinds[i]]);
		if (kinds[i] == WORD_IFACE) {
			fprintf(out, "_sluice_ifaces %s'", iface_kind(c));
			continue;
		}
		fputc('(', out);
		kind_words(out, c, kinds[i]);
		fprintf(out, ")'");
	}
	fprintf(out, " ;;\n");
}

static int completion_zsh(FILE *out)
{
	const struct command *const *c;
	int i;

	fprintf(out, "#compdef sluice\n");
	completion_header(out, "zsh");
	fprintf(out,
		"_sluice_ifaces()\n{\n"
		"\tlocal -a ifaces\n"
		"\tif [[ $1 == attached && -r /sys/fs/bpf/sluice ]]; then\n"
		"\t\tifaces=(${(f)\"$(ls /sys/fs/bpf/sluice 2>/dev/null | grep -v ':')\"})\n"
		"\telif [[ $1 == attached && -x /sys/fs/bpf && ! -e /sys/fs/bpf/sluice ]]; then\n"
		"\t\tifaces=() # no pin root (the last detach removes it): nothing is attached\n"
		"\telse\n"
		"\t\tifaces=(${(f)\"$(ls /sys/class/net 2>/dev/null)\"})\n"
		"\tfi\n"
		"\t_describe -t interfaces interface ifaces\n}\n\n"
		"_sluice()\n{\n"
		"\tlocal curcontext=$curcontext state line ret=1\n"
		"\tlocal -a commands\n"
		"\tcommands=(");
	for (c = command_table; *c; c++) {
		fprintf(out, "\n\t\t'%s:", (*c)->name);
		put_quoted(out, (*c)->summary ? (*c)->summary : "", SIZE_MAX, "");
		fprintf(out, "'");
	}
	fprintf(out, "\n\t)\n\t_arguments -C -s -S");
	for (i = next_option(-1, -1); i < OPT_MAX; i = next_option(i, -1))
		if (option_table[i].scope == SCOPE_GLOBAL)
			zsh_option(out, &option_table[i]);
	/* main.c reads --version before the table, as the bash script knows. */
	fprintf(out, " \\\n\t\t'--version[print the version and exit]'");
	fprintf(out, " \\\n\t\t'1:command:->command' \\\n\t\t'*::argument:->argument' && ret=0\n"
		     "\tcase $state in\n"
		     "\tcommand)\n\t\t_describe -t commands 'sluice command' commands && ret=0 ;;\n"
		     "\targument)\n\t\tcurcontext=${curcontext%%:*:*}:sluice-$line[1]:\n"
		     "\t\tcase $line[1] in\n");
	for (c = command_table; *c; c++)
		zsh_command(out, *c);
	fprintf(out, "\t\tesac && ret=0 ;;\n\tesac\n\treturn ret\n}\n\n_sluice \"$@\"\n");
	return EXIT_OK;
}

/* fish: one complete line for option o, for the commands that take it. */
static void fish_option(FILE *out, int id)
{
	const struct option_def *o = &option_table[id];
	const struct command *const *c;

	fprintf(out, "complete -c sluice -n '__sluice_command");
	for (c = command_table; *c; c++)
		if (o->scope != SCOPE_GLOBAL && option_takes((*c)->id, 0, id))
			fprintf(out, " %s", (*c)->name);
	fprintf(out, "' -l %s", o->name);
	if (o->short_name)
		fprintf(out, " -s %c", o->short_name);
	if (value_kind(o) == VALUE_FILE)
		fprintf(out, " -r -F");
	else if (value_kind(o) == VALUE_WORDS)
		fprintf(out, " -x -a '%s'", o->values);
	else if (takes_value(o))
		fprintf(out, " -x");
	fprintf(out, " -d '");
	put_help(out, o->help, "");
	fprintf(out, "'\n");
}

static void fish_command(FILE *out, const struct command *c)
{
	enum word_kind kinds[3];
	int i, n = command_words(c, kinds);

	fprintf(out, "complete -c sluice -n '__sluice_at 0' -a %s -d '", c->name);
	put_quoted(out, c->summary ? c->summary : "", SIZE_MAX, "");
	fprintf(out, "'\n");
	for (i = 0; i < n; i++) {
		fprintf(out, "complete -c sluice -n '__sluice_at %d %s' -a '", i + 1, c->name);
		if (kinds[i] == WORD_IFACE)
			fprintf(out, "(__sluice_ifaces %s)", iface_kind(c));
		else
			kind_words(out, c, kinds[i]);
		fprintf(out, "' -d %s\n", word_kind_names[kinds[i]]);
	}
}

static int completion_fish(FILE *out)
{
	const struct command *const *c;
	int i;

	completion_header(out, "fish");
	fprintf(out,
		"# The words before the cursor that are not options or their values.\n"
		"function __sluice_words\n"
		"\tset -l skip 0\n"
		"\tfor w in (commandline -opc)[2..-1]\n"
		"\t\tif test $skip = 1; or begin; test $skip = 2; and string match -qr '^[0-9]' -- $w; end\n"
		"\t\t\tset skip 0\n\t\t\tcontinue\n\t\tend\n"
		"\t\tset skip 0\n"
		"\t\tswitch $w\n\t\tcase");
	for (i = next_option(-1, -1); i < OPT_MAX; i = next_option(i, -1))
		if (option_table[i].value_optional)
			fprintf(out, " --%s", option_table[i].name);
	fprintf(out, "\n\t\t\tset skip 2\n\t\tcase");
	for (i = next_option(-1, -1); i < OPT_MAX; i = next_option(i, -1))
		if (takes_value(&option_table[i])) {
			fprintf(out, " --%s", option_table[i].name);
			if (option_table[i].short_name)
				fprintf(out, " -%c", option_table[i].short_name);
		}
	fprintf(out,
		"\n\t\t\tset skip 1\n\t\tcase '-*'\n\t\tcase '*'\n\t\t\techo $w\n\t\tend\n\tend\nend\n\n"
		"# __sluice_at N [COMMAND]: N words so far (the first COMMAND).\n"
		"function __sluice_at\n"
		"\tset -l w (__sluice_words)\n"
		"\ttest (count $w) = $argv[1]; or return 1\n"
		"\ttest (count $argv) = 1; or test \"$w[1]\" = \"$argv[2]\"\nend\n\n"
		"# __sluice_command [COMMAND...]: one of them is the command (none: any).\n"
		"function __sluice_command\n"
		"\tset -l w (__sluice_words)\n"
		"\ttest (count $argv) = 0; or contains -- \"$w[1]\" $argv\nend\n\n"
		"function __sluice_ifaces\n"
		"\tif test \"$argv[1]\" = attached; and test -r /sys/fs/bpf/sluice\n"
		"\t\tls /sys/fs/bpf/sluice 2>/dev/null | string match -v '*:*'\n"
		"\telse if test \"$argv[1]\" = attached; and test -x /sys/fs/bpf; and not test -e /sys/fs/bpf/sluice\n"
		"\t\t# no pin root (the last detach removes it): nothing is attached\n"
		"\telse\n"
		"\t\tls /sys/class/net 2>/dev/null\n"
		"\tend\nend\n\n"
		"complete -c sluice -f\n"
		"complete -c sluice -n '__sluice_at 0' -l version -d 'print the version and exit'\n");
	for (c = command_table; *c; c++)
		fish_command(out, *c);
	for (i = next_option(-1, -1); i < OPT_MAX; i = next_option(i, -1))
		fish_option(out, i);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "man"))
		return man(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "completion"))
		return completion();
	if (argc == 3 && !strcmp(argv[1], "completion") && !strcmp(argv[2], "zsh"))
		return completion_zsh(stdout);
	if (argc == 3 && !strcmp(argv[1], "completion") && !strcmp(argv[2], "fish"))
		return completion_fish(stdout);
	fprintf(stderr, "usage: sluice-docgen man FILE | completion [zsh | fish]\n");
	return EXIT_BAD_INPUT;
}
