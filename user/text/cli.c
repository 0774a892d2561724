// SPDX-License-Identifier: GPL-2.0
/* getopt_long with sluice's error style, and the positional arguments. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "text/cli.h"
#include "values/iface.h"

/* ":" then every option with a one-letter value, as getopt wants them: "n:h". */
static void short_options(const struct option *options, char *buf, size_t len)
{
	size_t n = 0;

	buf[n++] = ':';
	for (; options->name && n + 3 < len; options++) {
		if (options->val <= ' ' || options->val > '~')
			continue;
		buf[n++] = (char)options->val;
		if (options->has_arg == required_argument)
			buf[n++] = ':';
	}
	buf[n] = '\0';
}

int cli_next_option(const char *cmd, int argc, char **argv, const struct option *options)
{
	char shorts[64];
	int opt;

	opterr = 0;
	short_options(options, shorts, sizeof(shorts));
	opt = getopt_long(argc, argv, shorts, options, NULL);
	if (opt == '?') {
		error_line(cmd, "unknown option '%s'", argv[optind - 1]);
		return '?';
	}
	if (opt == ':') {
		error_line(cmd, "option '%s' needs a value", argv[optind - 1]);
		return '?';
	}
	return opt;
}

int cli_one_positional(const char *cmd, int argc, char **argv, const char *what, const char **out)
{
	if (optind >= argc) {
		error_line(cmd, "missing %s", what);
		return -EINVAL;
	}
	if (optind + 1 < argc) {
		error_line(cmd, "unexpected argument '%s'", argv[optind + 1]);
		return -EINVAL;
	}
	*out = argv[optind];
	return 0;
}

int cli_ifname(const char *cmd, const char *name)
{
	char shown[24];
	const char *why;
	size_t i;

	if (!ifname_check(name, &why))
		return EXIT_OK;
	/* The name as given, but on one line and short. */
	for (i = 0; i + 1 < sizeof(shown) && name[i]; i++)
		shown[i] = isprint((unsigned char)name[i]) ? name[i] : '?';
	shown[i] = '\0';
	return fail_input(cmd, "bad interface name '%s%s': %s", shown, name[i] ? "..." : "", why);
}

int cli_one_ifname(const char *cmd, int argc, char **argv, const char **out)
{
	if (cli_one_positional(cmd, argc, argv, "interface name", out))
		return EXIT_BAD_INPUT;
	return cli_ifname(cmd, *out);
}

const char *cli_option_name(const struct option *options, int val)
{
	for (; options->name; options++)
		if (options->val == val)
			return options->name;
	return "?";
}
