// SPDX-License-Identifier: GPL-2.0
/* sluice-docgen: see docgen.h. */
#include <stdio.h>
#include <string.h>
#include "base/errors.h"
#include "docgen/docgen.h"

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "man"))
		return man_page(argv[2]);
	if (argc == 2 && !strcmp(argv[1], "completion"))
		return completion_bash();
	if (argc == 3 && !strcmp(argv[1], "completion") && !strcmp(argv[2], "zsh"))
		return completion_zsh(stdout);
	if (argc == 3 && !strcmp(argv[1], "completion") && !strcmp(argv[2], "fish"))
		return completion_fish(stdout);
	fprintf(stderr, "usage: sluice-docgen man FILE | completion [zsh | fish]\n");
	return EXIT_BAD_INPUT;
}
