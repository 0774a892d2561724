// SPDX-License-Identifier: GPL-2.0
/* sluice-docgen completion: the bash completion script. */
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "docgen/docgen.h"

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

int completion_bash(void)
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
