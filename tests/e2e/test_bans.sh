#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Timed bans (deny add --timeout) on a live interface: traffic from a
# banned source is dropped until the entry expires in the datapath, then
# passed; deny list shows the time left and then no longer the entry; show
# prints it with its UTC end and show -> apply -> show round-trips; deny del
# removes one early; adding again never shortens one; the longest ban
# round-trips and until past it is refused; a later change prunes
# expired entries from the trie; and the top | jq | deny add recipe of
# docs/operations.md bans the heaviest sources.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SRC=$LAB_NET.1.7 # the source the ban checks send from

# try ARGS...: runs sluice, sets RC and OUT (stdout and stderr).
try() {
	OUT=$("$SLUICE" "$@" 2>&1)
	RC=$?
}

# send SRC SOURCES N: N frames cycling over SOURCES sources from SRC, 1000 a second.
send() {
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" --dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" \
		--dst "$LAB_HOST_IP" --dport "$LAB_PORT" --src "$1" --sources "$2" --count "$3" \
		--rate 1000 >/dev/null 2>"$LAB_TMP/flood.err"
}

# sent_counts N: N frames from SRC; prints "PASSED DENIED", what sluice counted for them.
sent_counts() {
	local p0 d0
	p0=$(stat passed)
	d0=$(stat denied)
	send "$SRC" 1 "$1"
	echo "$(($(stat passed) - p0)) $(($(stat denied) - d0))"
}

# deny_json: the deny list as JSON.
deny_json() {
	"$SLUICE" deny list "$LAB_HOST" --json
}

# seconds_left CIDR: expires_in_s of CIDR in deny list --json ("null": permanent, "": absent).
seconds_left() {
	deny_json | jq -r --arg c "$1" '.[] | select(.cidr == $c) | .expires_in_s'
}

# Keys in each set of the deny trie, "SET0 SET1" (both hold the list): what a prune must shrink.
trie_keys() {
	bpftool map dump pinned "/sys/fs/bpf/sluice/$LAB_HOST/deny_v4" -j |
		jq -r '[map(select(.formatted.key.set == 0)), map(select(.formatted.key.set == 1))]
			| map(length) | "\(.[0]) \(.[1])"'
}

generation() {
	"$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].generation'
}

test_expiry() {
	local counts left shown until_s now_s
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s --burst 10k >/dev/null
	check "before the ban: 20 of 20 frames pass" test "$(sent_counts 20)" = "20 0"
	try deny add "$LAB_HOST" "$SRC" --timeout 3s
	CHECK_DETAIL="exit $RC: $OUT"
	check "deny add --timeout 3s: exit 0, nothing printed" test "$RC" = 0 -a -z "$OUT"
	counts=$(sent_counts 20)
	CHECK_DETAIL="passed, denied: $counts"
	check "while banned: 20 of 20 frames denied" test "$counts" = "0 20"
	left=$(seconds_left "$SRC/32")
	CHECK_DETAIL="expires_in_s $left: $(deny_json)"
	check "deny list --json: expires_in_s between 1 and 3" test "${left:-0}" -ge 1 -a "${left:-0}" -le 3
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "deny list: the entry and the time it has left" \
		grep -qxE "$SRC/32 expires in [123]s" <<<"$CHECK_DETAIL"
	shown=$("$SLUICE" show "$LAB_HOST" | grep "^deny ")
	until_s=$(date -d "$(awk '{ print $4 }' <<<"$shown")" +%s 2>/dev/null)
	now_s=$(date +%s)
	CHECK_DETAIL="$shown (now $now_s)"
	check "show: deny CIDR until the UTC moment it expires" \
		test -n "$until_s" -a "$((until_s - now_s))" -ge 1 -a "$((until_s - now_s))" -le 4 -a \
		"$(awk '{ print $1, $2, $3 }' <<<"$shown")" = "deny $SRC/32 until"
	sleep 3.5
	counts=$(sent_counts 20)
	CHECK_DETAIL="passed, denied: $counts"
	check "after the expiry: 20 of 20 frames pass, none denied" test "$counts" = "20 0"
	CHECK_DETAIL=$(deny_json)
	check "after the expiry: deny list --json is empty" test "$CHECK_DETAIL" = "[]"
	check "after the expiry: deny list prints nothing" test -z "$("$SLUICE" deny list "$LAB_HOST")"
	check "after the expiry: show prints no deny line" \
		test -z "$("$SLUICE" show "$LAB_HOST" | grep '^deny ')"
	try deny del "$LAB_HOST" "$SRC"
	CHECK_DETAIL="exit $RC: $OUT"
	check "deny del of an expired entry: exit 2, not on the list" \
		test "$RC" = 2 -a -n "$(grep -F 'is not on the deny list' <<<"$OUT")"
	CHECK_DETAIL="$(trie_keys) keys"
	check "the expired entry stays in the trie until a change" test "$(trie_keys)" = "1 1"
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.0/24 >/dev/null
	CHECK_DETAIL="$(trie_keys) keys: $(deny_json)"
	check "a later deny add prunes it: one key in each set, the new entry" \
		test "$(trie_keys)" = "1 1" -a "$(deny_json)" = '[{"cidr":"192.0.2.0/24","expires_in_s":null}]'
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
}

test_del_early_and_longest() {
	local counts gen
	"$SLUICE" deny add "$LAB_HOST" "$SRC" --timeout 1h >/dev/null
	check "deny add --timeout 1h: denied" test "$(sent_counts 5)" = "0 5"
	sleep 1.1
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "deny list: the time left as show writes a duration (59m5Ns, not 35NNs)" \
		grep -qxE "$SRC/32 expires in 59m5[0-9]s" <<<"$CHECK_DETAIL"
	gen=$(generation)
	"$SLUICE" deny add "$LAB_HOST" "$SRC" --timeout 10s >/dev/null
	CHECK_DETAIL="expires_in_s $(seconds_left "$SRC/32"), generation $gen -> $(generation)"
	check "adding again with a shorter timeout keeps the longer: nothing published" \
		test "$(seconds_left "$SRC/32")" -gt 3590 -a "$(generation)" = "$gen"
	"$SLUICE" deny add "$LAB_HOST" "$SRC" --timeout 2h >/dev/null
	CHECK_DETAIL="expires_in_s $(seconds_left "$SRC/32")"
	check "adding again with a longer timeout extends it" test "$(seconds_left "$SRC/32")" -gt 7190
	try deny del "$LAB_HOST" "$SRC"
	CHECK_DETAIL="exit $RC: $OUT"
	check "deny del removes a timed entry early" test "$RC" = 0 -a "$(deny_json)" = "[]"
	counts=$(sent_counts 5)
	CHECK_DETAIL="passed, denied: $counts"
	check "after deny del: frames pass" test "$counts" = "5 0"
	"$SLUICE" deny add "$LAB_HOST" "$SRC" --timeout 1h >/dev/null
	"$SLUICE" deny add "$LAB_HOST" "$SRC" >/dev/null
	CHECK_DETAIL=$(deny_json)
	check "a permanent add makes a timed entry permanent" test "$(seconds_left "$SRC/32")" = null
	"$SLUICE" deny add "$LAB_HOST" "$SRC" --timeout 1m >/dev/null
	check "a timed add leaves a permanent entry permanent" test "$(seconds_left "$SRC/32")" = null
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
}

test_round_trip() {
	local shown again gen
	printf '%s\n' 203.0.113.0/24 2001:db8:5::/48 | "$SLUICE" deny add "$LAB_HOST" -f - --timeout 1d
	"$SLUICE" deny add "$LAB_HOST" 198.51.100.0/24 >/dev/null
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/shown.conf"
	CHECK_DETAIL=$(grep '^deny' "$LAB_TMP/shown.conf" | tr '\n' '|')
	check "deny add -f - --timeout 1d: both entries shown with until, the permanent one without" \
		test "$(grep -cE '^deny (203\.0\.113\.0/24|2001:db8:5::/48) until [0-9T:-]+Z$' "$LAB_TMP/shown.conf")" = 2 -a \
		"$(grep -c '^deny 198.51.100.0/24$' "$LAB_TMP/shown.conf")" = 1
	gen=$(generation)
	try apply "$LAB_HOST" -f "$LAB_TMP/shown.conf"
	CHECK_DETAIL="exit $RC: $OUT"
	check "apply of what show printed: the running policy, nothing changed" \
		test "$RC" = 0 -a "$(generation)" = "$gen" -a -n "$(grep -F 'nothing changed' <<<"$OUT")"
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
	try apply "$LAB_HOST" -f "$LAB_TMP/shown.conf"
	again=$("$SLUICE" show "$LAB_HOST")
	CHECK_DETAIL="exit $RC: $OUT; $(diff <(echo "$again") "$LAB_TMP/shown.conf" | tr '\n' '|')"
	check "show -> flush -> apply -> show: the same text, until included" \
		test "$RC" = 0 -a "$again" = "$(cat "$LAB_TMP/shown.conf")"
	CHECK_DETAIL=$(deny_json)
	check "applied timed entries keep their time left (about a day)" \
		test "$(seconds_left 203.0.113.0/24)" -gt 86000 -a "$(seconds_left 2001:db8:5::/48)" -gt 86000
	printf 'default rate 10k/s burst 10k\ndeny 192.0.2.0/24 until 2001-01-01T00:00:00Z\ndeny 192.0.2.1/32\n' \
		>"$LAB_TMP/past.conf"
	try apply "$LAB_HOST" -f "$LAB_TMP/past.conf"
	CHECK_DETAIL="exit $RC: $OUT; $(deny_json)"
	check "apply of an entry whose until has passed: exit 0, the entry not applied" \
		test "$RC" = 0 -a "$(deny_json)" = '[{"cidr":"192.0.2.1/32","expires_in_s":null}]'
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
}

# The longest ban --timeout allows, shown with its end rounded to the second,
# applies back as it was; until past that limit is refused as --timeout is.
test_longest_round_trip() {
	local gen again far
	"$SLUICE" deny add "$LAB_HOST" 203.0.113.0/24 --timeout 3650d >/dev/null
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/longest.conf"
	gen=$(generation)
	try apply "$LAB_HOST" -f "$LAB_TMP/longest.conf"
	CHECK_DETAIL="exit $RC: $OUT; $(grep '^deny' "$LAB_TMP/longest.conf")"
	check "a 3650d ban, shown and applied at once: accepted, nothing changed" \
		test "$RC" = 0 -a "$(generation)" = "$gen"
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
	try apply "$LAB_HOST" -f "$LAB_TMP/longest.conf"
	again=$("$SLUICE" show "$LAB_HOST")
	CHECK_DETAIL="exit $RC: $OUT; $(diff <(echo "$again") "$LAB_TMP/longest.conf" | tr '\n' '|')"
	check "a 3650d ban: show -> flush -> apply -> show, the same text" \
		test "$RC" = 0 -a "$again" = "$(cat "$LAB_TMP/longest.conf")"
	CHECK_DETAIL=$(deny_json)
	check "... still a ban of about 3650d" test "$(seconds_left 203.0.113.0/24)" -gt $((3650 * 86400 - 60))
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
	far=$(date -u -d "@$(($(date +%s) + 3650 * 86400 + 120))" +%Y-%m-%dT%H:%M:%SZ)
	printf 'default rate 10k/s burst 10k\ndeny 192.0.2.0/24 until %s\n' "$far" >"$LAB_TMP/far.conf"
	try apply "$LAB_HOST" -f "$LAB_TMP/far.conf"
	CHECK_DETAIL="exit $RC: $OUT; $(deny_json)"
	check "until two minutes past 3650d from now: exit 2, one line, nothing denied" \
		test "$RC" = 2 -a "$(grep -c '' <<<"$OUT")" = 1 -a "$(deny_json)" = "[]" -a \
		-n "$(grep -F 'a deny entry lasts at most 3650d from now' <<<"$OUT")"
}

# The recipe of docs/operations.md, as written there but for the interface.
ban_heaviest() {
	"$SLUICE" top "$LAB_HOST" --json -n 2 |
		jq -r '.sources[] | select(.dropped > 0) | .prefix' |
		"$SLUICE" deny add "$LAB_HOST" -f - --timeout 10m
}

test_recipe() {
	local banned heavy="$LAB_NET.2.1/32 $LAB_NET.2.2/32" counts
	"$SLUICE" set "$LAB_HOST" --rate 10/s --burst 10 >/dev/null
	send "$LAB_NET.2.1" 2 600 # two heavy sources, 300 frames each: far over 10/s
	send "$LAB_NET.3.1" 3 6   # three light ones, 2 frames each
	ban_heaviest
	banned=$(deny_json | jq -r '.[].cidr' | sort | tr '\n' ' ')
	CHECK_DETAIL="banned: $banned; $(deny_json)"
	check "top --json | jq | deny add -f - --timeout 10m: the two heavy sources, nothing else" \
		test "$banned" = "$heavy "
	CHECK_DETAIL=$(deny_json)
	check "the recipe's bans expire in about 10 minutes" \
		test "$(deny_json | jq '[.[].expires_in_s | select(. > 590 and . <= 600)] | length')" = 2
	SRC=$LAB_NET.2.1 counts=$(sent_counts 10)
	CHECK_DETAIL="passed, denied: $counts"
	check "a banned heavy source is denied" test "$counts" = "0 10"
	"$SLUICE" deny flush "$LAB_HOST" >/dev/null
}

lab_up || {
	echo "0 passed, 1 failed"
	exit 1
}
test_expiry
test_del_early_and_longest
test_round_trip
test_longest_round_trip
test_recipe
lab_finish
