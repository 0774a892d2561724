// SPDX-License-Identifier: GPL-2.0
/* sluice-docgen completion fish: sluice.fish. */
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "docgen/docgen.h"

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

int completion_fish(FILE *out)
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
