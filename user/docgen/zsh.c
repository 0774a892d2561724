// SPDX-License-Identifier: GPL-2.0
/* sluice-docgen completion zsh: _sluice. */
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "docgen/docgen.h"

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

int completion_zsh(FILE *out)
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
