#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Both sets of the list tries hold the same entries after every kind of
# change (allow and deny add and del, timed, a prefix that encloses
# others, flush, apply of a file with lists, rule and set), so a change
# replays only itself; a host ban under a longer timed prefix folds its
# denied_until exactly; a writer killed between its flip and its second
# replay leaves the lists_mirrored pin absent and the next change repairs
# the idle set first; and a reader during changes sees the old list or
# the new one, never part of a change.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

PINS() { echo "/sys/fs/bpf/sluice/$LAB_HOST"; }

# set_dump TRIE SET: that set's entries, sorted, each as "prefixlen addr value".
set_dump() {
	bpftool map dump pinned "$(PINS)/$1" -j |
		jq -c --argjson s "$2" '[.[] | select(.formatted.key.set == $s)
			| [.formatted.key.prefixlen, .formatted.key.addr, .value]] | sort'
}

# sets_equal: every list trie holds the same entries in both sets, and the pin says so.
sets_equal() {
	local t
	for t in allow_v4 allow_v6 deny_v4 deny_v6; do
		if [ "$(set_dump $t 0)" != "$(set_dump $t 1)" ]; then
			CHECK_DETAIL="$t: set 0 $(set_dump $t 0 | head -c 300) set 1 $(set_dump $t 1 | head -c 300)"
			return 1
		fi
	done
	[ -e "$(PINS)/lists_mirrored" ] || {
		CHECK_DETAIL="no lists_mirrored pin"
		return 1
	}
}

# live_set: the list set the live configuration names (struct sluice_config's third word).
live_set() {
	bpftool map dump pinned "$(PINS)/config_live" -j | jq -r '.[0].value[8] | ltrimstr("0x") | tonumber'
}

# entries_in TRIE SET: how many entries that set holds.
entries_in() {
	set_dump "$1" "$2" | jq length
}

# after NAME COMMAND...: runs a change, then checks it worked and left the sets equal.
after() {
	local name=$1 out rc
	shift
	out=$("$SLUICE" "$@" 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "$name: exit 0" test "$rc" = 0
	check "$name: both list sets equal" sets_equal
}

test_equal_after_each_change() {
	local f=$LAB_TMP/policy.conf
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s >/dev/null
	after "allow add" allow add "$LAB_HOST" 198.51.100.0/24 2001:db8::/32 203.0.113.9
	after "allow del" allow del "$LAB_HOST" 203.0.113.9
	after "deny add of hosts" deny add "$LAB_HOST" 192.0.2.1 192.0.2.2 2001:db8::1
	after "deny add --timeout" deny add "$LAB_HOST" 192.0.2.3 --timeout 1h
	after "deny add again, longer" deny add "$LAB_HOST" 192.0.2.3 --timeout 2h
	after "deny del" deny del "$LAB_HOST" 192.0.2.2
	after "deny add of a prefix enclosing hosts" deny add "$LAB_HOST" 192.0.2.0/24 --timeout 3h
	after "deny del of that prefix" deny del "$LAB_HOST" 192.0.2.0/24
	after "set" set "$LAB_HOST" --rate 20k/s
	after "rule" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1k/s
	"$SLUICE" show "$LAB_HOST" >"$f"
	echo "deny 198.18.0.1/32" >>"$f"
	after "apply of a file that adds a deny entry" apply "$LAB_HOST" -f "$f"
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "apply: the file's entry is on the list" grep -qx "198.18.0.1/32" <<<"$CHECK_DETAIL"
	after "deny flush" deny flush "$LAB_HOST"
	after "allow flush" allow flush "$LAB_HOST"
	check "flushed: no deny entry in either set" \
		test "$(entries_in deny_v4 0) $(entries_in deny_v4 1)" = "0 0"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

# until_of SET CIDR-ADDR PREFIXLEN: denied_until_ns of that entry of deny_v4.
until_of() {
	bpftool map dump pinned "$(PINS)/deny_v4" -j |
		jq -r --argjson s "$1" --argjson p "$2" \
			'.[] | select(.formatted.key.set == $s and .formatted.key.prefixlen == $p)
			| .formatted.value.denied_until_ns' | head -1
}

expires_of() {
	bpftool map dump pinned "$(PINS)/deny_v4" -j |
		jq -r --argjson s "$1" --argjson p "$2" \
			'.[] | select(.formatted.key.set == $s and .formatted.key.prefixlen == $p)
			| .formatted.value.expires_ns' | head -1
}

test_fold() {
	local s outer
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s >/dev/null
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.0/24 --timeout 1h >/dev/null
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.7 --timeout 1m >/dev/null
	s=$(live_set)
	outer=$(expires_of "$s" 56)
	CHECK_DETAIL="host until $(until_of "$s" 64), /24 expires $outer"
	check "a 1m host ban under a 1h /24: denied_until is the /24's expiry" \
		test "$(until_of "$s" 64)" = "$outer" -a "$(until_of $((1 - s)) 64)" = "$outer"
	check "... and its own expiry stays 1m" test "$(expires_of "$s" 64)" -lt "$outer"
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.7 --timeout 2h >/dev/null
	s=$(live_set)
	CHECK_DETAIL="host until $(until_of "$s" 64), expires $(expires_of "$s" 64)"
	check "extended to 2h: denied_until is its own expiry, past the /24's" \
		test "$(until_of "$s" 64)" = "$(expires_of "$s" 64)" -a "$(until_of "$s" 64)" -gt "$outer"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

test_repair() {
	local gen0 s rc out
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s >/dev/null
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.1 >/dev/null
	SLUICE_FAULT=lists-after-flip "$SLUICE" deny add "$LAB_HOST" 192.0.2.2 >/dev/null 2>&1
	rc=$?
	check "killed between the flip and the second replay (SIGKILL: 137)" test "$rc" = 137
	check "... no lists_mirrored pin left" test ! -e "$(PINS)/lists_mirrored"
	s=$(live_set)
	CHECK_DETAIL="live $(entries_in deny_v4 "$s"), idle $(entries_in deny_v4 $((1 - s)))"
	check "... the live set holds the change, the idle set does not" \
		test "$(entries_in deny_v4 "$s") $(entries_in deny_v4 $((1 - s)))" = "2 1"
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "... deny list shows the change" test "$CHECK_DETAIL" = "192.0.2.1/32
192.0.2.2/32"
	out=$("$SLUICE" deny add "$LAB_HOST" 192.0.2.3 2>&1)
	CHECK_DETAIL="exit $?: $out"
	check "the next change repairs first: exit 0" test -z "$out"
	check "... both sets equal, pinned so" sets_equal
	s=$(live_set)
	check "... three entries in each set" \
		test "$(entries_in deny_v4 "$s") $(entries_in deny_v4 $((1 - s)))" = "3 3"
	out=$(SLUICE_FAULT=lists-after-flip "$SLUICE" deny del "$LAB_HOST" 192.0.2.1 2>&1)
	"$SLUICE" deny del "$LAB_HOST" 192.0.2.9 >/dev/null 2>&1
	check "a deny del of an absent entry after a killed del: the sets repaired all the same" \
		sets_equal
	CHECK_DETAIL=$("$SLUICE" deny list "$LAB_HOST")
	check "... the killed del took effect" test "$CHECK_DETAIL" = "192.0.2.2/32
192.0.2.3/32"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

# reader OUT: reads deny list --json until told to stop, one count of 198.19.x entries a line.
reader() {
	while [ ! -e "$LAB_TMP/stop" ]; do
		"$SLUICE" deny list "$LAB_HOST" --json | jq '[.[] | select(.cidr | startswith("198.19."))] | length'
	done >"$1"
}

test_atomic() {
	local i bad
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s >/dev/null
	awk 'BEGIN { for (i = 0; i < 1000; i++) printf "198.19.%d.%d/32\n", int(i / 256), i % 256 }' \
		>"$LAB_TMP/batch"
	"$SLUICE" deny add "$LAB_HOST" 192.0.2.1 >/dev/null
	reader "$LAB_TMP/reads" &
	for i in 1 2 3 4 5 6 7 8; do
		"$SLUICE" deny add "$LAB_HOST" -f "$LAB_TMP/batch" >/dev/null
		"$SLUICE" deny del "$LAB_HOST" -f "$LAB_TMP/batch" >/dev/null
	done
	touch "$LAB_TMP/stop"
	wait
	bad=$(grep -cvxE '0|1000' "$LAB_TMP/reads")
	CHECK_DETAIL="$bad of $(wc -l <"$LAB_TMP/reads") reads saw part of a change: $(grep -vxE '0|1000' "$LAB_TMP/reads" | head -3 | tr '\n' ' ')"
	check "a reader during 16 changes of 1000 entries sees all of a change or none" test "$bad" = 0
	check "... and read during them ($(wc -l <"$LAB_TMP/reads") reads)" \
		test "$(wc -l <"$LAB_TMP/reads")" -ge 2
	check "... both sets equal after" sets_equal
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

lab_up || {
	echo "0 passed, 1 failed"
	exit 1
}
test_equal_after_each_change
test_fold
test_repair
test_atomic
lab_finish
