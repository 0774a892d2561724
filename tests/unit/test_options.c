// SPDX-License-Identifier: GPL-2.0
/*
 * The option table and the command line parsed from it: whole-word long
 * options, short clusters, optional values, which command takes what, and
 * show's spelling parsing back to the same settings for every option.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "harness.h"
#include "unit.h"
#include "text/cli.h"
#include "text/options.h"

/* Parses argv (NULL-terminated, after the command word) for cmd; -1 when accepted. */
static int parse(enum command_id cmd, struct cli_args *a, char *const *words)
{
	char *argv[32] = { "test" };
	int argc = 1, ret, saved = dup(2);

	while (*words && argc < 31)
		argv[argc++] = *words++;
	cli_args_init(a, (int)cmd);
	/* Errors are the point of half of these cases: keep stderr quiet. */
	freopen("/dev/null", "w", stderr);
	ret = cli_parse("test", cmd, argc, argv, a);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return ret;
}

static void test_long_options(void)
{
	struct cli_args a;
	int ret;

	ret = parse(CMD_SET, &a, (char *[]){ "--rate", "5/s", "eth0", NULL });
	check(ret == -1 && a.given[OPT_RATE] && a.nargs == 1 && !strcmp(a.args[0], "eth0"),
	      "--rate VALUE, then a positional", "nargs %d", a.nargs);
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--rate=5/s", NULL }) == -1 && a.given[OPT_RATE],
	      "--rate=VALUE", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--rat", "5/s", NULL }) == 2,
	      "a prefix of a long option is refused", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--mode", "native", NULL }) == 2,
	      "another command's option is refused", " ");
	cli_args_free(&a);
	check(parse(CMD_ATTACH, &a, (char *[]){ "--mode", "skb", NULL }) == -1 && a.given[OPT_MODE],
	      "attach takes --mode", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--ecn=1", NULL }) == 2, "a flag takes no value", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--rate", NULL }) == 2, "a missing value", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--rate", "fast", NULL }) == 2, "a bad value", " ");
	cli_args_free(&a);
	check(parse(CMD_SET, &a, (char *[]){ "--", "--rate", NULL }) == -1 && a.nargs == 1 &&
		      !a.given[OPT_RATE],
	      "-- ends the options", " ");
	cli_args_free(&a);
}

static void test_short_and_optional(void)
{
	struct cli_args a;
	int ret;

	ret = parse(CMD_TOP, &a, (char *[]){ "-n5", "eth0", NULL });
	check(ret == -1 && a.cmd.top.limit == 5 && a.nargs == 1, "-n5", "limit %llu",
	      (unsigned long long)a.cmd.top.limit);
	cli_args_free(&a);
	check(parse(CMD_TOP, &a, (char *[]){ "-jp", "-n", "7", NULL }) == -1 && a.json &&
		      a.pretty && a.cmd.top.limit == 7,
	      "-jp -n 7", " ");
	cli_args_free(&a);
	check(parse(CMD_TOP, &a, (char *[]){ "-x", NULL }) == 2, "an unknown short option", " ");
	cli_args_free(&a);
	check(parse(CMD_STATS, &a, (char *[]){ "--watch", "2", "eth0", NULL }) == -1 &&
		      a.cmd.stats.watch_ns == 2000000000ULL && a.nargs == 1,
	      "--watch 2 takes the number", " ");
	cli_args_free(&a);
	check(parse(CMD_STATS, &a, (char *[]){ "--watch", "eth0", NULL }) == -1 &&
		      a.cmd.stats.watch_ns == 1000000000ULL && a.nargs == 1,
	      "--watch eth0 leaves the interface", " ");
	cli_args_free(&a);
	check(parse(CMD_STATS, &a, (char *[]){ "--watch=0.5", NULL }) == -1 &&
		      a.cmd.stats.watch_ns == 500000000ULL,
	      "--watch=0.5", " ");
	cli_args_free(&a);
	check(parse(CMD_RULE, &a,
		    (char *[]){ "--aggregate", "/24=5/s", "--aggregate", "/16=50/s", NULL }) ==
			      -1 &&
		      a.settings.n_aggregates == 2,
	      "--aggregate repeats", " ");
	cli_args_free(&a);
}

/* A sample value for every limiter and match option, to round-trip through show. */
static const char *const samples[OPT_MAX] = {
	[OPT_RATE] = "1.5k/s",
	[OPT_BURST] = "300",
	[OPT_ACTION] = "mark",
	[OPT_DSCP] = "10",
	[OPT_IPV4_PREFIX] = "24",
	[OPT_IPV6_PREFIX] = "56",
	[OPT_KEY] = "pair",
	[OPT_NEW_SOURCES] = "20k/s",
	[OPT_OVERFLOW_RATE] = "100/s",
	[OPT_INITIAL_BURST] = "20",
	[OPT_ON_FULL] = "pass",
	[OPT_AGGREGATE] = "/24=5000/s",
	[OPT_PROTO] = "udp",
	[OPT_DPORT] = "53-54",
	[OPT_ALGORITHM] = "sliding-window",
	[OPT_WINDOW] = "1500ms",
	[OPT_WARMUP] = "2m",
	[OPT_PROVE] = "tcp-always",
	[OPT_PROVEN_SOURCES] = "500/s",
	[OPT_BAN_AFTER] = "1.5k/10s",
	[OPT_BAN_FOR] = "30s",
	[OPT_BAN_ESCALATE] = "1.5",
	[OPT_BAN_MEMORY] = "10m",
	[OPT_BAN_MAX] = "1h",
	[OPT_SPORT] = "123",
	[OPT_TCP_FLAGS] = "syn,ack,fin,rst/syn",
	[OPT_ICMP_TYPE] = "3/4",
	[OPT_LENGTH] = "200-1500",
	[OPT_DST] = "192.0.2.0/24",
};

/* Every class at its widest fits what show and rule names keep for it, uncut. */
static void test_widest_match(void)
{
	char shown[MATCH_TEXT_MAX + 64];
	struct cli_args a;
	const char *why;
	int err = 0;

	cli_args_init(&a, CMD_RULE);
	err |= option_apply(&a, OPT_PROTO, "icmpv6", &why);
	err |= option_apply(&a, OPT_DPORT, "65534-65535", &why);
	err |= option_apply(&a, OPT_SYN, NULL, &why);
	err |= option_apply(&a, OPT_SPORT, "65534-65535", &why);
	err |= option_apply(&a, OPT_TCP_FLAGS,
			    "FIN,SYN,RST,PSH,ACK,URG,ECE/FIN,SYN,RST,PSH,ACK,URG,ECE", &why);
	err |= option_apply(&a, OPT_ICMP_TYPE, "255/255", &why);
	err |= option_apply(&a, OPT_LENGTH, "65534-65535", &why);
	err |= option_apply(&a, OPT_DST, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127", &why);
	format_match(shown, sizeof(shown), &a.match);
	check(!err && strlen(shown) < MATCH_TEXT_MAX - 1 &&
		      strstr(shown, "dst ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127"),
	      "the widest match fits MATCH_TEXT_MAX", "%zu bytes: '%s'", strlen(shown), shown);
}

/* Show's words ("NAME [VALUE] ...") applied to b through the option table; 1 if one is refused. */
static int apply_words(struct cli_args *b, char *words)
{
	const char *why;

	for (char *w = strtok(words, " "); w; w = strtok(NULL, " ")) {
		int id = option_find(w);

		if (id < 0 ||
		    option_apply(b, id, option_table[id].metavar ? strtok(NULL, " ") : NULL, &why))
			return 1;
	}
	return 0;
}

static void test_show_round_trip(void)
{
	char shown[640], name[96];
	struct cli_args a, b;
	const char *why;
	int i, err = 0;

	cli_args_init(&a, CMD_RULE);
	for (i = 0; i < OPT_MAX; i++) {
		const struct option_def *o = &option_table[i];

		if (o->scope != SCOPE_LIMITER && o->scope != SCOPE_MATCH)
			continue;
		check(o->statements && o->home, o->name, "no statement or format");
		err |= option_apply(&a, i, o->metavar ? samples[i] : NULL, &why);
		snprintf(name, sizeof(name), "show prints --%s when set", o->name);
		format_settings(shown, sizeof(shown), &a.settings);
		if (o->scope == SCOPE_MATCH)
			format_match(shown, sizeof(shown), &a.match);
		check(strstr(shown, o->name) != NULL, name, "got '%s'", shown);
	}
	check(!err, "every sample value parses", " ");
	/* What show prints, parsed back word by word through the same table. */
	format_settings(shown, sizeof(shown), &a.settings);
	cli_args_init(&b, CMD_RULE);
	err |= apply_words(&b, shown);
	check(!err && settings_equal(&a.settings, &b.settings),
	      "show parses back to the same settings", " ");
	/* And the match: every class, in the words show writes. */
	format_match(shown, sizeof(shown), &a.match);
	check(strstr(shown, "tcp-flags FIN,SYN,RST,ACK/SYN") && strstr(shown, "icmp-type 3/4") &&
		      strstr(shown, "length 200-1500") && strstr(shown, "sport 123") &&
		      strstr(shown, "dst 192.0.2.0/24"),
	      "show writes each match class canonically", "got '%s'", shown);
	err |= apply_words(&b, shown);
	b.match.cidr = a.match.cidr;
	check(!err && match_equal(&a.match, &b.match), "show parses back to the same match", " ");
	test_widest_match();
}

static void test_takers(void)
{
	check(option_takes(CMD_SET, 0, OPT_RATE) && !option_takes(CMD_SET, 0, OPT_MODE) &&
		      !option_takes(CMD_SET, 0, OPT_IPV4_PREFIX),
	      "set takes --rate, not --mode or --ipv4-prefix", " ");
	check(option_takes(-1, STMT_RULE, OPT_PROTO) && !option_takes(-1, STMT_DEFAULT, OPT_PROTO),
	      "proto is a rule statement's option only", " ");
	check(!option_takes(-1, STMT_DEFAULT, OPT_MODE) &&
		      option_takes(-1, STMT_ATTACH, OPT_MODE) &&
		      option_takes(-1, STMT_ATTACH, OPT_MAX_SOURCES) &&
		      !option_takes(-1, STMT_ATTACH, OPT_RATE),
	      "mode and max-sources are the attach statement's options, and only they", " ");
	check(option_takes(CMD_ATTACH, 0, OPT_FILE) && option_takes(CMD_ATTACH, 0, OPT_REPLACE) &&
		      !option_takes(CMD_APPLY, 0, OPT_REPLACE),
	      "attach takes -f and --replace", " ");
	for (int i = 0; i < OPT_MAX; i++)
		if (option_table[i].statements & STMT_ATTACH)
			check(option_table[i].home == IN_ATTACH, option_table[i].name,
			      "an attach option that is not in struct attach_settings");
	check(option_takes(CMD_DETACH, 0, OPT_WAIT) && option_takes(CMD_EXPORTER, 0, OPT_HELP),
	      "--wait and --help go with every command", " ");
	check(option_find("rat") < 0 && option_find("rate") == OPT_RATE, "option_find is exact",
	      " ");
}

/* set's "nothing to change" names every limiter option it takes, from the table. */
static void test_names_in(void)
{
	char names[1024], list[1040], want[40], last[40];
	bool all = true;
	int i;

	option_names_in(names, sizeof(names), CMD_SET, SCOPE_LIMITER);
	snprintf(list, sizeof(list), "%s,", names);
	for (i = 0; i < OPT_MAX; i++) {
		snprintf(want, sizeof(want), "--%s,", option_table[i].name);
		snprintf(last, sizeof(last), "--%s or", option_table[i].name);
		if (option_table[i].scope == SCOPE_LIMITER && option_takes(CMD_SET, 0, i) &&
		    !strstr(list, want) && !strstr(list, last))
			all = false;
	}
	check(all && strstr(names, "--prove") && !strstr(names, "--mode") &&
		      !strstr(names, "--dport") && strstr(names, " or --"),
	      "set's options are named from the table", "%s", names);
	option_names_in(names, 12, CMD_SET, SCOPE_LIMITER);
	check(strlen(names) < 12, "the names stay within their buffer", "%s", names);
}

static void test_nearest(void)
{
	static const char *const names[] = { "status", "stats", "show", "set" };
	const char *n;

	n = nearest_name("stast", names, 4);
	check(n && !strcmp(n, "stats"), "nearest of stast is stats", "got %s", n ? n : "none");
	n = nearest_name("sho", names, 4);
	check(n && !strcmp(n, "show"), "nearest of sho is show", "got %s", n ? n : "none");
	check(!nearest_name("frobnicate", names, 4), "nothing near frobnicate", " ");
	/* A prefix of both: the one fewer edits away. */
	n = nearest_name("stat", names, 4);
	check(n && !strcmp(n, "stats"), "nearest of stat is stats, not status", "got %s",
	      n ? n : "none");
}

void suite_options(void)
{
	test_long_options();
	test_short_and_optional();
	test_show_round_trip();
	test_takers();
	test_names_in();
	test_nearest();
}
