/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sluice-docgen: what the build derives from the option and command tables.
 *   sluice-docgen man FILE        FILE with @OPTIONS@, @CONF_OPTIONS@, @TIME_UNITS@ and
 *                                 @RATE_PERIODS@ filled in (scdoc; man.c)
 *   sluice-docgen completion      the bash completion script (bash.c)
 *   sluice-docgen completion zsh  the zsh one, _sluice (zsh.c)
 *   sluice-docgen completion fish the fish one, sluice.fish (fish.c)
 * It sits beside main.c, above every layer: it reads both tables. The table
 * walks the three shells share are in words.c.
 */
#ifndef SLUICE_DOCGEN_H
#define SLUICE_DOCGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include "commands/commands.h"

/* Fills in FILE's markers, to stdout. */
int man_page(const char *path);
int completion_bash(void);
int completion_zsh(FILE *out);
int completion_fish(FILE *out);
/* What an option's value is: none (a flag), free text, a file, or one of words. */
enum value_kind { VALUE_NONE, VALUE_FREE, VALUE_FILE, VALUE_WORDS };
/* What completes each word after a command's name. */
enum word_kind { WORD_VERB, WORD_COMMAND, WORD_IFACE };

extern const char *const word_kind_names[];
/* The next option after i that command cmd takes (cmd < 0: any), or OPT_MAX. */
int next_option(int i, int cmd);
/* What option o's value is, for completion. */
enum value_kind value_kind(const struct option_def *o);
/* An option whose next word is always its value. */
bool takes_value(const struct option_def *o);
/* The first n bytes of s inside single quotes, for both shells. */
void put_quoted(FILE *out, const char *s, size_t n, const char *escape_also);
/* The help of an option as a short line: a long one up to its first clause. */
void put_help(FILE *out, const char *help, const char *escape_also);
/* Every verb and alias of c, each after sep. */
void verb_words(FILE *out, const struct command *c, const char *sep);
/* Which interfaces c's interface word completes: "attached", "any" or "none". */
const char *iface_kind(const struct command *c);
/* Every command's name, each after sep. */
void command_names(FILE *out, const char *sep);
/* The words c takes after its name, in order, into kinds: how many. */
int command_words(const struct command *c, enum word_kind kinds[3]);
/* The words of a verb or command word (a shell's function lists interfaces). */
void kind_words(FILE *out, const struct command *c, enum word_kind kind);
/* The first lines of each shell's script: what made it. */
void completion_header(FILE *out, const char *shell);

#endif /* SLUICE_DOCGEN_H */
