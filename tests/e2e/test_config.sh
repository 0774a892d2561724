#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# One file describes an interface: attach -f (its attach statement and its
# policy, all or nothing), show printing it back, attach --replace keeping
# bucket state (shown with traffic) or saying what it resets, apply of the
# same file twice changing nothing, apply refusing other attach settings
# and unattached interfaces, detach twice, and bad input as nobody; a file
# that starts with a byte order mark, and invisible characters in messages.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

CONF=$LAB_TMP/iface.conf
SRC=$LAB_NET.1.7 # the one source the traffic checks send from

# try ARGS...: runs sluice, sets RC, OUT (stdout and stderr) and LINES.
try() {
	OUT=$("$SLUICE" "$@" 2>&1)
	RC=$?
	LINES=$(grep -c . <<<"$OUT")
}

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

# Nothing of sluice on the interface: no pins, no XDP program on the link.
nothing_attached() {
	[ ! -e "/sys/fs/bpf/sluice/$LAB_HOST" ] && [ ! -e "/sys/fs/bpf/sluice/$LAB_HOST:attaching" ] &&
		! ip link show "$LAB_HOST" | grep -q xdp
}

# status --json FIELD of the lab interface.
status_of() {
	"$SLUICE" status "$LAB_HOST" --json | jq -r ".[0].$1"
}

# The policy maps byte for byte and the generation: what a no-op must not touch.
maps_dump() {
	local dir=/sys/fs/bpf/sluice/$LAB_HOST map
	for map in config generation policies rules_v4 rules_v6 allow_v4 allow_v6 deny_v4 deny_v6 \
		admission; do
		bpftool map dump pinned "$dir/$map"
	done
}

# send N [PPS]: N frames from SRC (1000 a second), then prints "PASSED
# DROPPED", what sluice counted for them (counter deltas).
send() {
	local p0 d0
	p0=$(stat passed)
	d0=$(stat dropped)
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" --dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" \
		--dst "$LAB_HOST_IP" --dport "$LAB_PORT" --src "$SRC" --sources 1 --count "$1" \
		--rate "${2:-1000}" >/dev/null 2>"$LAB_TMP/flood.err"
	echo "$(($(stat passed) - p0)) $(($(stat dropped) - d0))"
}

write_conf() { # FILE RATE [ATTACH-LINE]
	cat >"$1" <<CONF
# $LAB_HOST: the whole interface
${3-attach max-sources 5000}
default rate $2 burst 5
rule 192.0.2.0/24 rate 5/s proto udp dport 53
allow 198.51.100.0/24
deny 203.0.113.0/24
CONF
}

test_round_trip() {
	local shown
	write_conf "$CONF" 1/m "attach mode generic max-sources 5000"
	try attach "$LAB_HOST" -f "$CONF"
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach -f: attached" test "$RC" = 0
	CHECK_DETAIL="$(status_of mode) $(status_of max_sources)"
	check "attach -f: the file's mode and max-sources take effect (status: generic, 5000)" \
		test "$(status_of mode)" = generic -a "$(status_of max_sources)" = 5000
	check "attach -f: the link runs generic XDP" bash -c "ip link show '$LAB_HOST' | grep -q xdpgeneric"
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/show1"
	CHECK_DETAIL=$(head -1 "$LAB_TMP/show1")
	check "show: first line is the attach statement" \
		test "$(head -1 "$LAB_TMP/show1")" = "attach mode generic max-sources 5000"
	check "show: the file's policy" test "$(grep -c '^rule\|^allow\|^deny' "$LAB_TMP/show1")" = 3
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	try attach "$LAB_HOST" -f "$LAB_TMP/show1"
	shown=$("$SLUICE" show "$LAB_HOST")
	CHECK_DETAIL=$(diff <(echo "$shown") "$LAB_TMP/show1")
	check "show -> attach -f -> show prints the same" test "$RC" = 0 -a "$shown" = "$(cat "$LAB_TMP/show1")"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	try attach "$LAB_HOST" -f - <"$LAB_TMP/show1"
	shown=$("$SLUICE" show "$LAB_HOST")
	check "attach -f - reads standard input" test "$RC" = 0 -a "$shown" = "$(cat "$LAB_TMP/show1")"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

test_bad_files() {
	printf 'attach max-sources 5000\ndefault rate 1/s\nrule 10.0.0.0/8 rate 1/x\n' >"$LAB_TMP/bad.conf"
	try attach "$LAB_HOST" -f "$LAB_TMP/bad.conf"
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach -f of a bad file: one line naming line and column, exit 2" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F 'bad.conf:3:' <<<"$OUT")"
	check "attach -f of a bad file: nothing attached (no pin, no XDP program)" nothing_attached
	printf 'attach mode offload\ndefault rate 1/s\n' >"$LAB_TMP/badmode.conf"
	try attach "$LAB_HOST" -f "$LAB_TMP/badmode.conf" --replace
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach --replace -f with a bad mode: exit 2, one line" test "$RC" = 2 -a "$LINES" = 1
	check "attach --replace -f with a bad mode: nothing attached" nothing_attached
	try attach "$LAB_HOST" -f "$LAB_TMP/nonexistent.conf"
	check "attach -f of a missing file: exit 2, nothing attached" test "$RC" = 2 -a "$LINES" = 1
	try attach "$LAB_HOST" -f ''
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach -f '': exit 2, one line saying the file name is empty" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F "an empty file name" <<<"$OUT")"
	check "attach -f '': nothing attached" nothing_attached
	write_conf "$CONF" 1/m
	try attach "$LAB_HOST" -f "$CONF" --max-sources 10
	CHECK_DETAIL=$OUT
	check "attach -f with --max-sources: refused, exit 2, names the attach statement" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F "'max-sources' in its attach statement" <<<"$OUT")"
	try attach "$LAB_HOST" -f "$CONF" --rate 5/s
	check "attach -f with --rate: refused, exit 2" test "$RC" = 2 -a "$LINES" = 1
	check "after the refusals nothing is attached" nothing_attached
	try apply "$LAB_HOST" -f "$CONF"
	CHECK_DETAIL=$OUT
	check "apply on an interface not attached: exit 2, points to attach -f" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F "sluice attach $LAB_HOST -f $CONF" <<<"$OUT")"
	check "apply on an interface not attached: nothing attached" nothing_attached
	try apply --check -f ''
	CHECK_DETAIL="exit $RC: $OUT"
	check "apply --check -f '': exit 2, one line saying the file name is empty" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F "an empty file name" <<<"$OUT")"
}

# A source over its limit stays refused across attach --replace with the same file.
test_replace_keeps_buckets() {
	local passed dropped gen before
	write_conf "$CONF" 1/m
	try attach "$LAB_HOST" -f "$CONF" --replace
	CHECK_DETAIL=$OUT
	check "attach --replace on an interface not attached: attaches" test "$RC" = 0
	read -r passed dropped < <(send 20)
	CHECK_DETAIL="passed $passed, dropped $dropped"
	check "a source sends 20 at 1/m burst 5: 5 pass, 15 dropped" test "$passed" = 5 -a "$dropped" = 15
	try attach "$LAB_HOST" -f "$CONF"
	check "attach twice without --replace: exit 2 (already attached)" \
		test "$RC" = 2 -a -n "$(grep -F 'already attached' <<<"$OUT")"
	gen=$(status_of generation)
	before=$(maps_dump)
	try attach "$LAB_HOST" -f "$CONF" --replace
	CHECK_DETAIL=$OUT
	check "attach --replace, same file: exit 0, nothing changed, program and buckets kept" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing changed' <<<"$OUT")" -a -n "$(grep -F 'kept its program and buckets' <<<"$OUT")"
	check "attach --replace, same file: generation and policy maps untouched" \
		test "$(status_of generation)" = "$gen" -a "$(maps_dump)" = "$before"
	read -r passed dropped < <(send 10)
	CHECK_DETAIL="passed $passed, dropped $dropped"
	check "right after --replace the source is still over its limit: 10 sent, 0 pass" \
		test "$passed" = 0 -a "$dropped" = 10

	# A changed rate: applied live, the same buckets (debt capped at the new burst).
	write_conf "$LAB_TMP/fast.conf" 1000/s "attach max-sources 5000"
	try attach "$LAB_HOST" -f "$LAB_TMP/fast.conf" --replace
	CHECK_DETAIL=$OUT
	check "attach --replace with a changed rate: exit 0, buckets kept" \
		test "$RC" = 0 -a -n "$(grep -F 'kept its program and buckets' <<<"$OUT")"
	check "attach --replace with a changed rate: show has it" \
		grep -q '^default rate 1k/s burst 5$' <<<"$("$SLUICE" show "$LAB_HOST")"
	check "attach --replace with a changed rate: the generation moved" \
		test "$(status_of generation)" -gt "$gen"
	# Its debt is capped at the new burst: at most its first packet waits an interval.
	read -r passed dropped < <(send 10 100)
	CHECK_DETAIL="passed $passed, dropped $dropped"
	check "under the new rate the source passes again (9 or 10 of 10 at 100/s)" test "$passed" -ge 9

	# Back to the slow rate, flood it, then another max-sources: attached afresh.
	try attach "$LAB_HOST" -f "$CONF" --replace
	send 20 >/dev/null
	write_conf "$LAB_TMP/big.conf" 1/m "attach max-sources 6000"
	try attach "$LAB_HOST" -f "$LAB_TMP/big.conf" --replace
	CHECK_DETAIL=$OUT
	check "attach --replace with another max-sources: says so and that buckets start empty" \
		test "$RC" = 0 -a -n "$(grep -F 'max-sources 6000 (running 5000): attached afresh, buckets start empty' <<<"$OUT")"
	check "  status shows max-sources 6000" test "$(status_of max_sources)" = 6000
	read -r passed dropped < <(send 20)
	CHECK_DETAIL="passed $passed, dropped $dropped"
	check "  the source's bucket was reset: 5 of 20 pass again" test "$passed" = 5
}

test_apply_idempotent() {
	local gen before shown
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/now.conf"
	gen=$(status_of generation)
	before=$(maps_dump)
	try apply "$LAB_HOST" -f "$LAB_TMP/big.conf"
	CHECK_DETAIL=$OUT
	check "apply of the running policy: exit 0, 'nothing changed'" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing changed' <<<"$OUT")"
	try apply "$LAB_HOST" -f "$LAB_TMP/big.conf"
	check "apply of it twice: exit 0 again" test "$RC" = 0
	CHECK_DETAIL=$(diff <(echo "$before") <(maps_dump) | head -5)
	check "apply twice: generation and policy maps byte for byte unchanged" \
		test "$(status_of generation)" = "$gen" -a "$(maps_dump)" = "$before"
	try apply "$LAB_HOST" -f "$LAB_TMP/now.conf"
	check "apply of what show printed: a no-op too" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing changed' <<<"$OUT")" -a "$(status_of generation)" = "$gen"

	# Attach settings that differ: refused, nothing changed.
	write_conf "$LAB_TMP/other.conf" 3/s "attach max-sources 7000"
	try apply "$LAB_HOST" -f "$LAB_TMP/other.conf"
	CHECK_DETAIL=$OUT
	check "apply of a file with another max-sources: exit 2, one line, names attach --replace" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F 'max-sources 7000 (running 6000)' <<<"$OUT" | grep -F 'attach')"
	write_conf "$LAB_TMP/other.conf" 3/s "attach group nogroup"
	try apply "$LAB_HOST" -f "$LAB_TMP/other.conf"
	CHECK_DETAIL=$OUT
	check "apply of a file with another group: exit 2, says --replace keeps the buckets" \
		test "$RC" = 2 -a "$LINES" = 1 -a -n "$(grep -F 'group nogroup (running none)' <<<"$OUT" |
			grep -F 'which keeps the buckets')"
	write_conf "$LAB_TMP/other.conf" 3/s "attach mode generic"
	try apply "$LAB_HOST" -f "$LAB_TMP/other.conf"
	CHECK_DETAIL=$OUT
	check "apply of a file with another mode: exit 2" \
		test "$RC" = 2 -a -n "$(grep -F 'mode generic (running native)' <<<"$OUT")"
	shown=$("$SLUICE" show "$LAB_HOST")
	check "after the refusals: show, generation and maps unchanged" \
		test "$shown" = "$(cat "$LAB_TMP/now.conf")" -a "$(status_of generation)" = "$gen" -a "$(maps_dump)" = "$before"
	write_conf "$LAB_TMP/noattach.conf" 3/s ""
	try apply "$LAB_HOST" -f "$LAB_TMP/noattach.conf"
	check "apply of a file without an attach statement: applied (nothing to check)" \
		test "$RC" = 0 -a "$(status_of generation)" -gt "$gen"
}

test_nobody() {
	chmod -R a+rX "$LAB_TMP"
	local args
	for args in "attach|$LAB_HOST|-f|$LAB_TMP/bad.conf" "attach|$LAB_HOST|-f|$LAB_TMP/badmode.conf|--replace" \
		"attach|$LAB_HOST|-f|$CONF|--rate|5/s" "attach|$LAB_HOST|-f|$LAB_TMP/nonexistent.conf" \
		"attach|nosuchif0|-f|$CONF|--replace" "apply|$LAB_HOST|-f|$LAB_TMP/bad.conf" \
		"apply|$LAB_HOST|-f|$CONF|--replace"; do
		local a=()
		IFS='|' read -r -a a <<<"$args"
		OUT=$(as_nobody "$SLUICE" "${a[@]}" 2>&1)
		RC=$?
		CHECK_DETAIL="exit $RC: $OUT"
		check "as nobody, bad input is refused before privilege, exit 2: ${a[*]}" \
			test "$RC" = 2 -a -z "$(grep -F 'root' <<<"$OUT")"
	done
	OUT=$(as_nobody "$SLUICE" attach "$LAB_HOST" -f "$CONF" --replace 2>&1)
	RC=$?
	CHECK_DETAIL="exit $RC: $OUT"
	check "as nobody, a good attach -f --replace fails on privilege only, exit 1" test "$RC" = 1
}

test_detach_twice() {
	try detach "$LAB_HOST"
	check "detach: exit 0" test "$RC" = 0
	check "detach: nothing left" nothing_attached
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT"
	check "detach again: exit 0, says there was nothing to detach" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing to detach' <<<"$OUT")"
	try detach nosuchif0
	check "detach of a name that is no interface: exit 2" test "$RC" = 2 -a "$LINES" = 1
}

# Algorithms in a file: attach -f, show, apply of show's output, show again;
# status and rule list name them; a fixed window counts per window.
test_algorithms() {
	local shown passed dropped
	cat >"$CONF" <<CONF
attach mode native max-sources 5000
default rate 100/m algorithm fixed-window
rule 192.0.2.0/24 rate 50/s algorithm sliding-window window 10s
rule 198.51.100.0/24 rate 20/s warmup 5s
CONF
	try attach "$LAB_HOST" -f "$CONF"
	CHECK_DETAIL="exit $RC: $OUT"
	check "algorithms: attach -f of a file naming them" test "$RC" = 0
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/algo1"
	CHECK_DETAIL=$(diff "$CONF" "$LAB_TMP/algo1")
	check "algorithms: show prints the file back" test -z "$CHECK_DETAIL"
	try apply "$LAB_HOST" -f "$LAB_TMP/algo1"
	shown=$("$SLUICE" show "$LAB_HOST")
	CHECK_DETAIL="exit $RC: $OUT; $(diff <(echo "$shown") "$LAB_TMP/algo1")"
	check "algorithms: show -> apply -> show prints the same" \
		test "$RC" = 0 -a "$shown" = "$(cat "$LAB_TMP/algo1")"
	CHECK_DETAIL="$(status_of algorithm) $(status_of window_ns) $(status_of warmup_ns)"
	check "algorithms: status --json says fixed-window over 60 s" \
		test "$CHECK_DETAIL" = "fixed-window 60000000000 0"
	CHECK_DETAIL=$("$SLUICE" rule list "$LAB_HOST" --json |
		jq -c 'map([.cidr, .algorithm, .window_ns, .warmup_ns])')
	check "algorithms: rule list --json names each rule's algorithm, window and warm-up" \
		test "$CHECK_DETAIL" = '[["192.0.2.0/24","sliding-window",10000000000,0],["198.51.100.0/24","gcra",0,5000000000]]'
	# 250 frames in a quarter second: 100 pass, or up to 200 if a minute's edge falls inside.
	read -r passed dropped < <(send 250)
	CHECK_DETAIL="passed $passed dropped $dropped"
	check "algorithms: 100/m fixed-window passes its limit per window, at most twice that at an edge" \
		test "$passed" -ge 100 -a "$passed" -le 200 -a $((passed + dropped)) = 250
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

# refused_saying WHAT ARGS...: exit 2 and one line, containing WHAT as typed here
# (an escape such as \ufeff is looked for literally).
refused_saying() {
	local what=$1
	shift
	try "$@"
	CHECK_DETAIL="exit $RC: $OUT"
	[ "$RC" = 2 ] && [ "$LINES" = 1 ] && grep -qF -- "$what" <<<"$OUT"
}

# A byte order mark opens a file as an editor saved it; anywhere else, an
# invisible or control character in a message is written so it shows.
test_invisible() {
	local shown
	write_conf "$LAB_TMP/plain.conf" 1/m
	{ printf '\xef\xbb\xbf'; cat "$LAB_TMP/plain.conf"; } >"$LAB_TMP/bom.conf"
	try attach "$LAB_HOST" -f "$LAB_TMP/bom.conf"
	shown=$("$SLUICE" show "$LAB_HOST" 2>&1)
	CHECK_DETAIL="exit $RC: $OUT; $shown"
	check "attach -f of a file that starts with a UTF-8 byte order mark: attached, as the file says" \
		test "$RC" = 0 -a -n "$(head -1 <<<"$shown" | grep -x 'attach .*max-sources 5000')" -a \
		"$(tail -n +2 <<<"$shown")" = "$(grep -v '^#\|^attach' "$LAB_TMP/plain.conf")"
	try apply "$LAB_HOST" -f "$LAB_TMP/bom.conf"
	CHECK_DETAIL="exit $RC: $OUT"
	check "apply of it: the running policy, nothing changed" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing changed' <<<"$OUT")"
	printf '\xef\xbb\xbf10.77.0.0/16\n' >"$LAB_TMP/bom.list"
	try deny add "$LAB_HOST" -f "$LAB_TMP/bom.list"
	CHECK_DETAIL="exit $RC: $OUT"
	check "deny add -f of a list that starts with one: added" \
		test "$RC" = 0 -a "$("$SLUICE" deny list "$LAB_HOST" | grep -c '^10.77.0.0/16$')" = 1
	{ head -2 "$LAB_TMP/plain.conf"; printf '\xef\xbb\xbf'; tail -n +3 "$LAB_TMP/plain.conf"; } \
		>"$LAB_TMP/bom3.conf"
	check "a byte order mark on line 3: refused, shown as \\ufeff" \
		refused_saying "bom3.conf:3:1: unknown statement '\\ufeffdefault'" \
		apply "$LAB_HOST" -f "$LAB_TMP/bom3.conf"
	printf 'default rate 1/m burst 5\nrule 192.0.2.0/24 rate\xe2\x80\x8b 5/s\n' >"$LAB_TMP/zw.conf"
	check "a zero width space after an option: shown as \\u200b" \
		refused_saying "zw.conf:2:19: unknown option 'rate\\u200b'" \
		apply "$LAB_HOST" -f "$LAB_TMP/zw.conf"
	printf 'default rate 1/m\x1b[2J burst 5\n' >"$LAB_TMP/esc.conf"
	check "a terminal escape in a value: shown as \\x1b, the screen untouched" \
		refused_saying "bad rate '1/m\\x1b[2J'" apply "$LAB_HOST" -f "$LAB_TMP/esc.conf"
	check "a no-break space typed in an option's value: shown as \\u00a0" \
		refused_saying "bad value '5/s\\u00a0' for --rate" \
		set "$LAB_HOST" --rate $'5/s\u00a0'
	printf '\xff\xfed\0e\0' >"$LAB_TMP/utf16.conf"
	check "a UTF-16 file: named as such" \
		refused_saying "utf16.conf:1:1: a UTF-16 byte order mark (expected UTF-8 text)" \
		apply "$LAB_HOST" -f "$LAB_TMP/utf16.conf"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

# The attach statement's options, as the parser lists them, are each in apply's
# help and in the statement's synopsis of sluice.conf(5).
test_attach_statement_docs() {
	local opts opt help synopsis
	opts=$(printf 'attach\n' | "$SLUICE" apply --check -f - 2>&1 |
		sed -n "s/.*expected an option after 'attach' (\(.*\))$/\1/p" | tr -d ,)
	help=$("$SLUICE" apply --help | grep '^ *attach ')
	synopsis=$(grep -m1 '^\*attach\* ' docs/sluice.conf.5.scd.in)
	CHECK_DETAIL="options '$opts'"
	check "the attach statement's options are known" test -n "$opts"
	for opt in $opts; do
		CHECK_DETAIL="$help"
		check "apply --help shows '$opt' in the attach statement" grep -qw -- "$opt" <<<"$help"
		CHECK_DETAIL="$synopsis"
		check "sluice.conf(5)'s synopsis shows '$opt' in the attach statement" \
			grep -qF -- "*$opt*" <<<"$synopsis"
	done
	CHECK_DETAIL=$("$SLUICE" apply --help | grep '^ *deny ')
	check "apply --help shows deny's 'until TIME'" grep -qF 'deny CIDR [until TIME]' <<<"$CHECK_DETAIL"
}

lab_up || { echo "0 passed, 1 failed"; exit 1; }
test_attach_statement_docs
test_round_trip
test_algorithms
test_bad_files
test_replace_keeps_buckets
test_apply_idempotent
test_nobody
test_detach_twice
test_invisible
lab_finish
