#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The penalty box end to end (issue 36.3), on a veth pair into a namespace:
# a source its own limit refuses past --ban-after is banned by the datapath,
# shown in deny list with why and until when, counted in stats, JSON and
# Prometheus; the ban holds while its bucket would pass it, expires,
# escalates on a repeat up to --ban-max, survives upgrade and applies that
# change the rule (keeping its id or not), and deny del and deny flush lift it. A source staying under its limit
# is never banned while forged sources flood the rule's overflow bucket.
set -u
cd "$(dirname "$0")/../.."
source tests/e2e/lab.sh

RULE_CIDR=$LAB_NET.0.0/16
OFF=$LAB_NET.2.1    # the offender
REAL=$LAB_NET.3.1   # a real source under its limit
FORGED=$LAB_NET.10.0 # forged sources count up from here

# burst SRC PPS SECONDS [SOURCES]: a flood from SRC (and the SOURCES-1 after it).
burst() {
	flood "${4:-1}" "$3" "$2" "$1" >/dev/null
}

counter() { # counter NAME: the interface's packets of a counter
	"$SLUICE" stats "$LAB_HOST" --json | jq -r ".counters.$1.packets"
}

rule_passed() {
	"$SLUICE" stats "$LAB_HOST" --json |
		jq -r --arg r "$RULE_CIDR" '.rules[] | select(.rule == $r) | .counters.passed.packets'
}

# ban_field SRC FIELD: a field of SRC's ban in deny list --json ("" when not banned).
ban_field() {
	"$SLUICE" deny list "$LAB_HOST" --json |
		jq -r --arg c "$1/32" ".[] | objects | select(.cidr == \$c) | .ban.$2"
}

test_ban() {
	local line
	burst "$OFF" 2000 1
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST" --json)
	check "a source refused past --ban-after is banned, level 1 for 8s" \
		test "$(ban_field "$OFF" level)" = 1 -a "$(ban_field "$OFF" length_s)" = 8
	check "deny list --json says why: the rule and the refusals in the period" \
		test "$(ban_field "$OFF" rule)" = "$RULE_CIDR" -a \
		"$(ban_field "$OFF" refused)" -gt 200 -a "$(ban_field "$OFF" period_ms)" = 10000
	line=$("$SLUICE" deny list "$LAB_HOST" | grep "^$OFF/32 ")
	CHECK_DETAIL=$line
	check "deny list says until when and why" \
		grep -qE "^$OFF/32 expires in [0-9.]+s ban: [0-9]+ refused in 10s, level 1, for 8s, rule $RULE_CIDR\$" <<<"$line"
	CHECK_DETAIL="bans $(counter bans), banned $(counter banned)"
	check "stats --json counts the ban and the banned packets" \
		test "$(counter bans)" = 1 -a "$(counter banned)" -gt 0
	check "stats --prometheus counts the ban" \
		bash -c "'$SLUICE' stats '$LAB_HOST' --prometheus | grep -qE '^sluice_bans_total\{[^}]*\} 1\$'"
	check "stats prints bans" bash -c "'$SLUICE' stats '$LAB_HOST' | grep -qE '^ *bans +1( |\$)'"
}

test_ban_holds_and_expires() {
	local p0 b0
	p0=$(rule_passed)
	b0=$(counter banned)
	burst "$OFF" 20 1 # under its limit: its bucket would pass every one
	CHECK_DETAIL="passed $(($(rule_passed) - p0)), banned $(($(counter banned) - b0))"
	check "a banned source is dropped though its bucket would pass it" \
		test "$(rule_passed)" = "$p0" -a $(($(counter banned) - b0)) -ge 15
	local i
	for i in $(seq 100); do # 8s from the ban, at most 10
		[ -z "$(ban_field "$OFF" level)" ] && break
		sleep 0.1
	done
	check "the ban expires within its 8s: deny list no longer shows it" \
		test -z "$(ban_field "$OFF" level)"
	p0=$(rule_passed)
	burst "$OFF" 20 1
	CHECK_DETAIL="passed $(($(rule_passed) - p0))"
	check "after the ban, the source passes again" test $(($(rule_passed) - p0)) -ge 15
}

test_ban_escalates() {
	burst "$OFF" 2000 1
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "a repeat within --ban-memory escalates: level 2, 8s x 10 capped at --ban-max 30s" \
		test "$(ban_field "$OFF" level)" = 2 -a "$(ban_field "$OFF" length_s)" = 30 -a \
		"$(counter bans)" = 2
}

# rule_id: the id of the rule, which keys its buckets and bans.
rule_id() {
	"$SLUICE" rule list "$LAB_HOST" --json | jq -r --arg c "$RULE_CIDR" '.[] | select(.cidr == $c) | .id'
}

# apply_edited SED: the live policy, edited, applied again.
apply_edited() {
	"$SLUICE" show "$LAB_HOST" | sed "$1" >"$LAB_TMP/changed.conf"
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/changed.conf" >/dev/null
}

# While banned (30s): upgrade, then applies that change the rule: its rate
# (it keeps its id), its algorithm (a new id), and back (another).
test_ban_survives() {
	local p0 id
	"$SLUICE" upgrade "$LAB_HOST" >/dev/null
	check "the ban survives upgrade" test "$(ban_field "$OFF" level)" = 2
	id=$(rule_id)
	apply_edited 's|rate 50/s|rate 60/s|'
	CHECK_DETAIL="id $id -> $(rule_id); $("$SLUICE" show "$LAB_HOST"; "$SLUICE" deny list "$LAB_HOST")"
	check "the ban stays with its rule through an apply of another rate (the same id)" \
		test "$(rule_id)" = "$id" -a "$(ban_field "$OFF" level)" = 2 -a \
		"$(ban_field "$OFF" rule)" = "$RULE_CIDR"
	apply_edited 's|rate 60/s burst 50|rate 60/s algorithm sliding-window|'
	CHECK_DETAIL="id $id -> $(rule_id); $("$SLUICE" show "$LAB_HOST"; "$SLUICE" deny list "$LAB_HOST")"
	check "the ban follows its rule to a new id through an apply of another algorithm" \
		test "$(rule_id)" != "$id" -a "$(ban_field "$OFF" level)" = 2 -a \
		"$(ban_field "$OFF" rule)" = "$RULE_CIDR"
	id=$(rule_id)
	apply_edited 's|rate 60/s algorithm sliding-window|rate 60/s burst 50|'
	check "and back to gcra (a new id again), still banned" \
		test "$(rule_id)" != "$id" -a "$(ban_field "$OFF" level)" = 2
	p0=$(rule_passed)
	burst "$OFF" 20 0.5
	check "and still drops the source" test "$(rule_passed)" = "$p0"
}

test_deny_del_lifts() {
	local p0 rc
	# One CIDR neither listed nor banned refuses the whole command.
	"$SLUICE" deny del "$LAB_HOST" "$OFF" 203.0.113.9 >/dev/null 2>&1
	rc=$?
	check "deny del of a ban and of a CIDR neither listed nor banned: exit 2, the ban stays" \
		test "$rc" = 2 -a "$(ban_field "$OFF" level)" = 2
	"$SLUICE" deny add "$LAB_HOST" 198.51.100.0/24 >/dev/null
	"$SLUICE" deny del "$LAB_HOST" 198.51.100.0/24 "$OFF" >/dev/null
	rc=$?
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "deny del of a listed entry and a ban in one command: both gone" \
		test "$rc" = 0 -a -z "$(ban_field "$OFF" level)" -a -z "$CHECK_DETAIL"
	p0=$(rule_passed)
	burst "$OFF" 20 1
	CHECK_DETAIL="passed $(($(rule_passed) - p0))"
	check "the lifted source passes" test $(($(rule_passed) - p0)) -ge 15
}

# deny flush with nothing listed lifts the bans alone; the over-limit cache
# answers a banned flood (bpf/hot.h), and must let the lifted source pass at once.
test_deny_flush_lifts() {
	local p0 rc
	burst "$OFF" 2000 1
	check "banned again (a third time)" test -n "$(ban_field "$OFF" level)"
	burst "$OFF" 2000 0.5 # answered by the cache now
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
	rc=$?
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "deny flush lifts the ban" test "$rc" = 0 -a -z "$(ban_field "$OFF" level)"
	p0=$(rule_passed)
	burst "$OFF" 20 1
	CHECK_DETAIL="passed $(($(rule_passed) - p0))"
	check "the source lifted by deny flush passes at once" test $(($(rule_passed) - p0)) -ge 15
}

test_spoof_never_bans() {
	local bans0 ovf0 pid
	bans0=$(counter bans)
	ovf0=$(counter overflow_dropped)
	burst "$REAL" 10 0.5 # its bucket, before the flood
	burst "$FORGED" 20000 3 5000 &
	pid=$!
	burst "$REAL" 40 3 # under its 60/s
	wait "$pid"
	CHECK_DETAIL="bans $bans0 -> $(counter bans), overflow drops +$(($(counter overflow_dropped) - ovf0)); $("$SLUICE" deny list "$LAB_HOST")"
	check "forged sources flooding the overflow bucket ban nobody, the real source neither" \
		test "$(counter bans)" = "$bans0" -a -z "$(ban_field "$REAL" level)" -a \
		$(($(counter overflow_dropped) - ovf0)) -gt 1000
}

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
"$SLUICE" attach "$LAB_HOST" --rate 100k/s >/dev/null &&
	"$SLUICE" rule add "$LAB_HOST" "$RULE_CIDR" --rate 50/s --burst 50 --new-sources 20/s \
		--overflow-rate 20/s --ban-after 200/10s --ban-for 8s --ban-escalate 10 \
		--ban-memory 1m --ban-max 30s >/dev/null
check "attach with a penalty box" test $? = 0
test_ban
test_ban_holds_and_expires
test_ban_escalates
test_ban_survives
test_deny_del_lifts
test_deny_flush_lifts
test_spoof_never_bans
"$SLUICE" detach "$LAB_HOST" >/dev/null
lab_finish
