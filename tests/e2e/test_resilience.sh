#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Upgrades without losing state, a refused foreign layout, link down/up, a
# vanished interface, kill -9 in the middle of changes and of attach, and
# concurrent commands, on the veth lab.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SOURCES=1000
RATE=20
BURST=20

prog_id() {
	"$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].prog_id'
}

test_upgrade_mid_flood() {
	local sent secs before after expected
	sink_start "$LAB_TMP/sink" || { check "sink starts" false; return; }
	flood "$SOURCES" 4 250000 >"$LAB_TMP/flood.out" &
	LAB_PIDS+=($!)
	sleep 2
	before=$(prog_id)
	CHECK_DETAIL=$("$SLUICE" upgrade "$LAB_HOST" 2>&1)
	check "upgrade mid-flood succeeds" "$SLUICE" status "$LAB_HOST"
	after=$(prog_id)
	wait "${LAB_PIDS[-1]}"
	sleep 0.5
	sink_stop
	read -r sent secs <"$LAB_TMP/flood.out"
	CHECK_DETAIL="program $before -> $after"
	check "upgrade swapped the program" test "$before" != "$after" -a "$after" -gt 0
	expected=$(awk -v s="$secs" 'BEGIN { printf "%d", '$BURST' + int('$RATE' * s) }')
	CHECK_DETAIL=$(awk -v e="$expected" '/^[0-9]+\./ { n++; d = $2 - e; if (d < 0) d = -d
		if (d > e * 0.02 && d > 1) bad++ } END { printf "%d sources, %d not at %d", n, bad, e }' \
		"$LAB_TMP/sink")
	check "no bucket reset: every source still gets burst + rate x time (2%)" \
		awk -v e="$expected" -v n="$SOURCES" '/^[0-9]+\./ { c++; d = $2 - e; if (d < 0) d = -d
			if (d > e * 0.02 && d > 1) bad++ } END { exit !(c == n && bad == 0) }' "$LAB_TMP/sink"
}

# Rewrites the live configuration's layout version, as an older sluice would have left it.
set_layout_version() {
	local version=$1 dir=/sys/fs/bpf/sluice/$LAB_HOST id bytes
	set -- $(bpftool -j map lookup pinned "$dir/config" key 0 0 0 0 | jq -r '.value[]')
	id=$(($4 << 24 | $3 << 16 | $2 << 8 | $1))
	bytes=$(bpftool -j map lookup id "$id" key 0 0 0 0 | jq -r '.value[4:][]' | tr '\n' ' ')
	bpftool map update id "$id" key 0 0 0 0 value "$version" 0 0 0 $bytes
}

test_foreign_layout() {
	local out rc ours
	ours=$(awk '/define SLUICE_LAYOUT_VERSION/ { print $3 }' include/sluice.h)
	set_layout_version 1
	out=$("$SLUICE" upgrade "$LAB_HOST" 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "upgrade refuses state of another layout, saying what to do" \
		test "$rc" = 1 -a -n "$(grep -o 'another layout version.*detach.*then attach and apply' <<<"$out")"
	out=$("$SLUICE" show "$LAB_HOST" 2>&1)
	CHECK_DETAIL=$out
	check "other commands refuse it too, and do not reset it" \
		test -n "$(grep -o 'another layout version' <<<"$out")"
	set_layout_version "$ours"
	check "with the layout restored, commands work again" "$SLUICE" show "$LAB_HOST"
}

test_link_down_up() {
	ip link set "$LAB_HOST" down
	ip link set "$LAB_HOST" up
	check "link down and up keeps the program" \
		test "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].state')" = ok
}

test_kill_9() {
	local i pid
	printf 'default rate 20/s burst 20\nrule 10.1.0.0/24 rate 5/s\n' >"$LAB_TMP/a.conf"
	printf 'default rate 20/s burst 20\nrule 10.2.0.0/24 rate 7/s\ndeny 10.3.0.0/24\n' >"$LAB_TMP/b.conf"
	local t0 whole
	# Start from a, whole, and time a whole apply (of b): the kills land at
	# random moments across it, however long this host takes, and whatever
	# they interrupt the policy must be a or b.
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/a.conf" >/dev/null
	t0=$(date +%s%N)
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/b.conf" >/dev/null
	whole=$((($(date +%s%N) - t0) / 1000))
	for i in $(seq 20); do
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/$([ $((i % 2)) = 0 ] && echo a || echo b).conf" &
		pid=$!
		sleep "$(awk -v us="$whole" -v r="$RANDOM" 'BEGIN { printf "%.6f", us * r / 32768 / 1e6 }')"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# The policy alone: show's first line says how the interface is attached.
	"$SLUICE" show "$LAB_HOST" | grep -v '^attach ' >"$LAB_TMP/after-kills"
	CHECK_DETAIL=$(cat "$LAB_TMP/after-kills")
	check "after 20 kill -9 mid-apply, the policy is one of the two, whole" bash -c \
		"diff -q '$LAB_TMP/after-kills' '$LAB_TMP/a.conf' >/dev/null || diff -q '$LAB_TMP/after-kills' '$LAB_TMP/b.conf' >/dev/null"
	check "after kill -9, filtering is still attached" \
		test "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].state')" = ok
	check "after kill -9, a new apply works" "$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/a.conf"
}

test_concurrent_commands() {
	local i pids=()
	for i in $(seq 10); do
		"$SLUICE" rule add "$LAB_HOST" "10.$((100 + i)).0.0/16" --rate "${i}/s" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	CHECK_DETAIL="$("$SLUICE" rule list "$LAB_HOST" | grep -c '^10\.1[01][0-9]\.') of 10 rules present"
	check "10 concurrent rule adds are serialised: none lost" \
		test "$("$SLUICE" rule list "$LAB_HOST" | grep -c '^10\.1[01][0-9]\.')" = 10
}

# Killed at any moment, attach leaves the interface whole or, once the next
# command has cleared what it staged, untouched.
test_kill_9_attach() {
	local i pid whole=0 none=0 bad=0
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	for i in $(seq 20); do
		"$SLUICE" attach "$LAB_HOST" --rate 10/s >/dev/null 2>&1 &
		pid=$!
		sleep "$(printf '0.%03d' $((RANDOM % 300)))"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		if [ ! -d "/sys/fs/bpf/sluice/$LAB_HOST" ]; then
			none=$((none + 1))
		elif [ "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].state')" = ok ]; then
			whole=$((whole + 1))
		else
			bad=$((bad + 1))
		fi
		"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
		if ip -d link show "$LAB_HOST" | grep -q 'prog/xdp' ||
			ls -A /sys/fs/bpf/sluice 2>/dev/null | grep -q "$LAB_HOST"; then
			bad=$((bad + 1))
		fi
	done
	CHECK_DETAIL="$whole whole, $none not attached, $bad half-made or left running"
	check "20 x kill -9 mid-attach: attached whole, or nothing left once cleared" \
		test "$bad" = 0
	echo "     kill -9 mid-attach: $whole attached whole, $none not attached"
	check "after kill -9 mid-attach, attach works" \
		"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST"
}

test_vanished_interface() {
	ip link del "$LAB_HOST"
	CHECK_DETAIL=$("$SLUICE" status 2>&1 | grep "$LAB_HOST")
	check "a vanished interface shows as stale" \
		bash -c "'$SLUICE' status | grep '$LAB_HOST' | grep -q 'stale: interface is gone'"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "detach cleans the stale pins" test ! -e "/sys/fs/bpf/sluice/$LAB_HOST"
}

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST" >/dev/null
test_upgrade_mid_flood
test_foreign_layout
test_link_down_up
test_kill_9
test_concurrent_commands
test_kill_9_attach
test_vanished_interface
lab_finish
