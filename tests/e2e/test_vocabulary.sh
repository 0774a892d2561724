#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One vocabulary: every option a command's --help lists is in the man page
# and in bash completion for that command; the man pages render without a
# warning; completion offers commands, verbs, option values, every
# interface for attach and only attached ones for the rest; long options
# are never abbreviated; unknown names get the nearest one.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

COMPLETION=build/sluice.bash

# comp WORD...: what completion offers for the last word, space-separated.
comp() {
	bash -c '
		source /usr/share/bash-completion/bash_completion 2>/dev/null
		source "$0"
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_sluice
		echo "${COMPREPLY[*]}"' "$COMPLETION" sluice "$@"
}

# has LIST WORD...: every WORD is a word of LIST.
has() {
	local list=" $1 " w
	shift
	for w in "$@"; do
		[[ $list == *" $w "* ]] || { CHECK_DETAIL="'$w' not in: $1"; return 1; }
	done
}

lacks() {
	[[ " $1 " != *" $2 "* ]] || { CHECK_DETAIL="'$2' in: $1"; return 1; }
}

commands=$("$SLUICE" --help | awk '/^Commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }')
check "sluice --help lists 15 commands" test "$(wc -w <<<"$commands")" = 15

man_text=$(MANWIDTH=80 man -l build/sluice.8 2>/dev/null)
for f in build/sluice.8 build/sluice.conf.5; do
	warnings=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
	CHECK_DETAIL=$warnings
	check "$f renders without warnings" test -z "$warnings"
done

# Each command's options, as its --help lists them.
for c in $commands; do
	opts=$("$SLUICE" "$c" --help | grep -oE '^  (-[a-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | tr '\n' ' ')
	check "$c --help lists options" test -n "$opts"
	missing=""
	for o in $opts; do
		grep -qE -- "^ +(-[a-z], )?$o\b" <<<"$man_text" || missing+=" $o"
	done
	CHECK_DETAIL=$missing
	check "sluice.8 describes every option of $c" test -z "$missing"
	check "completion offers every option of $c" has "$(comp "$c" --)" $opts
done
conf_text=$(MANWIDTH=80 man -l build/sluice.conf.5 2>/dev/null)
for o in rate burst action dscp ecn ipv4-prefix ipv6-prefix new-sources overflow-rate \
	initial-burst on-full aggregate proto dport syn; do
	check "sluice.conf.5 describes $o" grep -qE "^ +$o\b" <<<"$conf_text"
done

# Time units: every spelling sluice.conf(5) lists parses, and of the spellings
# people try, none it does not list; for durations and for rates' periods.
PROBE_UNITS="s sec secs second seconds m min mins minute minutes h hr hrs hour hours
	d day days w wk week weeks ms msec us usec ns y S M H D Min"
# listed_units PHRASE: the spellings in the sentence of conf_text after PHRASE.
listed_units() {
	tr -s ' \n' ' ' <<<"$conf_text" | sed 's/\xe2\x80\x90 //g' | grep -o "$1 [^.]*\." |
		sed "s/^$1//; s/[;,.]/ /g; s/ or / /g" | xargs -n1 | sort -u | tr '\n' ' '
}
# unit_mismatch LISTED UNKNOWN-MESSAGE ARGS-BEFORE ARGS-AFTER: words accepted xor listed.
unit_mismatch() {
	local listed=" $1 " unknown=$2 before=$3 after=$4 u out bad=""
	for u in $PROBE_UNITS $1; do
		out=$("$SLUICE" $before"$u"$after 2>&1)
		if grep -qF "$unknown" <<<"$out"; then
			[[ $listed == *" $u "* ]] && bad+=" $u(listed,refused)"
		else
			[[ $listed == *" $u "* ]] || bad+=" $u(accepted,unlisted)"
		fi
	done
	CHECK_DETAIL="listed: $1;$bad"
	[ -n "$1" ] && [ -z "$bad" ]
}
durations_listed=$(listed_units "other spellings:")
check "durations take exactly the units sluice.conf.5 lists" \
	unit_mismatch "$durations_listed" "expected a duration with its unit" \
	"deny add nosuchif0 10.0.0.0/8 --timeout 2" ""
periods_listed=$(listed_units "from a second to an hour:")
check "rates take exactly the periods sluice.conf.5 lists" \
	unit_mismatch "$periods_listed" "unknown time unit" "attach nosuchif0 --rate 5/" ""
check "a period is spelled as a duration" \
	bash -c '[ -z "$(comm -13 <(xargs -n1 <<<"$0" | sort) <(xargs -n1 <<<"$1" | sort))" ]' \
	"$durations_listed" "$periods_listed"

check "completion: commands" has "$(comp '')" $commands
check "completion: st -> status stats" test "$(comp st)" = "status stats"
check "completion: rule verbs" has "$(comp rule '')" add del delete rm list ls show flush
check "completion: allow verbs" has "$(comp allow '')" add del list flush
check "completion: --action values" test "$(comp attach x --action '')" = "drop mark dry-run"
check "completion: --mode values" has "$(comp attach x --mode '')" native generic skb
check "completion: --sort values" has "$(comp top x --sort '')" drops passed rate
check "completion: --proto values" has "$(comp rule add x 10.0.0.0/8 --rate 1/s --proto '')" tcp udp
check "completion: help COMMAND" has "$(comp help '')" $commands
check "completion: -j before the command" test "$(comp -j st)" = "status stats"
check "completion: set offers no attach-only option" lacks "$(comp set x --)" --mode

lab_up

# Every check that needs no privilege comes before the privilege check.
nobody() { runuser -u nobody -- "$SLUICE" "$@" >/dev/null 2>&1; echo $?; }
printf 'default rate 5/s\nrule 10.0.0.0/8 rate 1/s bogus 1\n' >"$LAB_TMP/bad.conf"
chmod 755 "$LAB_TMP"
chmod 644 "$LAB_TMP/bad.conf"
check "unprivileged: a bad rate is bad input (2)" test "$(nobody attach lo --rate fast)" = 2
check "unprivileged: a good line needs root (1)" test "$(nobody attach lo --rate 5/s)" = 1
check "unprivileged: a bad config file is bad input (2)" test "$(nobody apply lo -f "$LAB_TMP/bad.conf")" = 2
check "unprivileged: rule add without --rate is bad input (2)" test "$(nobody rule add lo 10.0.0.0/8)" = 2
check "unprivileged: an unknown interface is bad input (2)" test "$(nobody attach nosuch0 --rate 5/s)" = 2
check "unprivileged: help works" test "$(nobody help stats)" = 0
printf 'default rate 5/s\nrule 10.0.0.0/8 rate 1/s\ndeny 192.0.2.1\n' >"$LAB_TMP/ok.conf"
chmod 644 "$LAB_TMP/ok.conf"
check "unprivileged: apply --check of a good file exits 0" test "$(nobody apply --check -f "$LAB_TMP/ok.conf")" = 0
check "apply --check says what it read" grep -q 'ok (default, 1 rules, 0 allow, 1 deny)' <<<"$(runuser -u nobody -- "$SLUICE" apply --check -f "$LAB_TMP/ok.conf")"
check "unprivileged: apply --check of a bad file exits 2" test "$(nobody apply --check -f "$LAB_TMP/bad.conf")" = 2
check "apply --check reads standard input" bash -c "'$SLUICE' apply --check -f - <'$LAB_TMP/ok.conf'"
check "apply --check takes no interface" test "$(nobody apply --check lo -f "$LAB_TMP/ok.conf")" = 2
check "apply without --check needs an interface" test "$(nobody apply -f "$LAB_TMP/ok.conf")" = 2

check "completion: attach offers every interface" has "$(comp attach '')" lo "$LAB_HOST"
check "completion: detach offers no unattached interface" lacks "$(comp detach '')" "$LAB_HOST"
check "attach the lab interface" "$SLUICE" attach "$LAB_HOST" --rate 100/s
for c in detach set stats top show upgrade; do
	check "completion: $c offers the attached interface" has "$(comp "$c" '')" "$LAB_HOST"
	check "completion: $c offers no unattached interface" lacks "$(comp "$c" '')" lo
done
check "completion: rule add offers the attached interface" has "$(comp rule add '')" "$LAB_HOST"
check "completion: after the interface, nothing" test -z "$(comp stats "$LAB_HOST" '')"

# Long options are matched whole, and a near miss is named.
out=$("$SLUICE" set "$LAB_HOST" --rat 5/s 2>&1)
check "--rat is refused with exit 2" test $? = 2
check "--rat: did you mean --rate" grep -q "did you mean '--rate'" <<<"$out"
check "--rat changed nothing" grep -q 'rate 100/s' <<<"$("$SLUICE" show "$LAB_HOST")"
out=$("$SLUICE" stast "$LAB_HOST" 2>&1)
check "stast: did you mean stats" grep -q "did you mean 'stats'" <<<"$out"
out=$("$SLUICE" stat "$LAB_HOST" 2>&1)
check "stat: did you mean stats (a prefix of status too)" grep -q "did you mean 'stats'" <<<"$out"
# Each synopsis form starts "sluice CMD"; a long one wraps under its words, not as a new form.
for c in $commands; do
	check "$c --help: every synopsis line within 80 columns" \
		bash -c '! "$0" "$1" --help | sed -n "/^Usage/,/^\$/p" | grep -q ".\{81\}"' "$SLUICE" "$c"
done
usage=$("$SLUICE" agent --help | sed -n '/^Usage/,/^$/p')
check "agent --help: one synopsis form, with IFACE and --redis" \
	test "$(grep -c 'sluice agent' <<<"$usage")" = 1 -a -n "$(grep 'sluice agent IFACE --redis' <<<"$usage")"
out=$("$SLUICE" set "$LAB_HOST" --mode native 2>&1)
check "an option of another command is named as such" grep -q 'not an option of set' <<<"$out"
check "help set = set --help" test "$("$SLUICE" help set)" = "$("$SLUICE" set --help)"
check "-j anywhere: errors as JSON" jq -e .error <<<"$("$SLUICE" stats nosuch0 -j 2>/dev/null)"
check "-j before the command" jq -e 'type == "array"' <<<"$("$SLUICE" -j status)"
check "-p: indented JSON" test "$("$SLUICE" -p status "$LAB_HOST" | wc -l)" -gt 3
check "-p output is the same JSON" test "$("$SLUICE" -p status "$LAB_HOST" | jq -c 'del(.[].uptime_s?)')" = "$("$SLUICE" -j status "$LAB_HOST" | jq -c 'del(.[].uptime_s?)')"
check "rule ls = rule list" test "$("$SLUICE" rule ls "$LAB_HOST")" = "$("$SLUICE" rule list "$LAB_HOST")"
for l in rule allow deny; do
	check "$l show = $l list" test "$("$SLUICE" "$l" show "$LAB_HOST" -j)" = "$("$SLUICE" "$l" list "$LAB_HOST" -j)"
done
check "rule add" "$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s
check "rule add" "$SLUICE" rule add "$LAB_HOST" 10.1.0.0/16 --rate 5/s --proto udp
check "rule rm" "$SLUICE" rule rm "$LAB_HOST" 10.1.0.0/16 --proto udp
check "rule flush" "$SLUICE" rule flush "$LAB_HOST"
check "no rule left" test "$("$SLUICE" rule list "$LAB_HOST" -j | jq length)" = 0
check "deny add" "$SLUICE" deny add "$LAB_HOST" 192.0.2.0/24 198.51.100.7
check "deny delete" "$SLUICE" deny delete "$LAB_HOST" 198.51.100.7
check "deny flush" "$SLUICE" deny flush "$LAB_HOST"
check "deny list empty" test -z "$("$SLUICE" deny ls "$LAB_HOST")"
check "detach" "$SLUICE" detach "$LAB_HOST"
check "--mode skb" "$SLUICE" attach "$LAB_HOST" --rate 100/s --mode skb
check "skb is generic" grep -q generic <<<"$("$SLUICE" status "$LAB_HOST")"
# An interface name the kernel allows but UTF-8 does not: every JSON output
# stays UTF-8 (U+FFFD in its place) and carries the raw bytes as ifname_hex.
ODD=$'slz\xff'$$
ODD_PEER=sly$$
trap '"$SLUICE" detach "$ODD" >/dev/null 2>&1; ip link del "$ODD" 2>/dev/null; lab_down' EXIT
odd_hex=$(printf '%s' "$ODD" | od -An -tx1 | tr -d ' \n')
# iconv refuses any byte sequence that is not UTF-8; jq then parses the JSON.
strict_utf8() { iconv -f UTF-8 -t UTF-8 >/dev/null; }
strict_json() { local in; in=$(cat); strict_utf8 <<<"$in" && jq -e . <<<"$in" >/dev/null; }
check "a veth with a non-UTF-8 name" ip link add "$ODD" type veth peer name "$ODD_PEER"
check "attach to it" "$SLUICE" attach "$ODD" --rate 10/s
for cmd in "status" "stats" "top"; do
	out=$("$SLUICE" $cmd "$ODD" --json)
	check "$cmd --json of it is strict UTF-8 JSON" strict_json <<<"$out"
	check "$cmd --json gives ifname_hex" test "$(jq -r '(if type == "array" then .[0] else . end).ifname_hex' <<<"$out")" = "$odd_hex"
done
check "status --json of a UTF-8 name has no ifname_hex" test "$("$SLUICE" status "$LAB_HOST" -j | jq '.[0] | has("ifname_hex")')" = false
out=$("$SLUICE" stats "$ODD" --prometheus)
check "Prometheus labels of it are UTF-8" strict_utf8 <<<"$out"
check "promtool accepts them" promtool check metrics <<<"$out"
check "detach it" "$SLUICE" detach "$ODD"
ip link del "$ODD" 2>/dev/null
lab_finish
