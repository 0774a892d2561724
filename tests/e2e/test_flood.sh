#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# End to end on a veth pair: sluice on the host side, a flood from 1,000
# sources out of a namespace, a sink counting what crossed per source.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SOURCES=1000
RATE=50   # per source, per second
BURST=50
PPS=250000 # offered: 250 per source per second, five times the rate

# within EXPECTED GOT PERCENT: |GOT - EXPECTED| <= PERCENT% of EXPECTED (at least 1).
within() {
	awk -v e="$1" -v g="$2" -v p="$3" 'BEGIN {
		tol = e * p / 100; if (tol < 1) tol = 1
		d = g - e; if (d < 0) d = -d
		exit !(d <= tol) }'
}

test_attach() {
	local out
	out=$("$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST" 2>&1)
	CHECK_DETAIL=$out
	check "attach says it got native mode" grep -q "in native mode" <<<"$out"
	CHECK_DETAIL=$("$SLUICE" attach "$LAB_HOST" --rate 1/s 2>&1)
	check "a second attach is refused with exit 2" test "$("$SLUICE" attach "$LAB_HOST" --rate 1/s >/dev/null 2>&1; echo $?)" = 2
	check "status lists the interface as native" \
		test "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].mode')" = native
}

# Every source must get burst + rate x time, within 2%.
per_source_ok() {
	local secs=$1 file=$2 expected
	expected=$(awk -v b="$BURST" -v r="$RATE" -v s="$secs" 'BEGIN { printf "%d", b + int(r * s) }')
	awk -v e="$expected" -v n="$SOURCES" '
		/^[0-9]+\./ { seen++; d = $2 - e; if (d < 0) d = -d
			      if (d > e * 0.02 && d > 1) { bad++; if (bad <= 3) printf "%s got %d, ", $1, $2 } }
		END { printf "expected %d per source, %d of %d sources seen, %d off", e, seen, n, bad
		      exit !(seen == n && bad == 0) }' "$file"
}

test_flood() {
	local sent secs passed dropped received txdrop
	read -r sent secs txdrop < <(flood_into_sink "$LAB_TMP/sink" "$SOURCES" 5 "$PPS")
	[ -n "$sent" ] || { check "sink starts" false; return; }
	passed=$(stat passed)
	dropped=$(stat dropped)
	received=$(awk '/^total/ { print $2 }' "$LAB_TMP/sink")
	echo "     flood: $sent sent in $secs s, $txdrop lost in the veth ring, $passed passed, $dropped dropped, $received received"

	CHECK_DETAIL=$(per_source_ok "$secs" "$LAB_TMP/sink")
	check "each of $SOURCES sources held to burst + rate x time (2%)" per_source_ok "$secs" "$LAB_TMP/sink"
	CHECK_DETAIL="passed $passed, received $received"
	check "passed counter equals packets received, to the packet" test "$passed" = "$received"
	CHECK_DETAIL="passed $passed + dropped $dropped vs sent $sent - ring drops $txdrop"
	check "passed + dropped equals packets that reached sluice" \
		test $((passed + dropped)) = $((sent - txdrop))
	CHECK_DETAIL="new_sources $(stat new_sources)"
	check "one bucket created per source" test "$(stat new_sources)" = "$SOURCES"
}

test_set_mid_flood() {
	local slow fast want_slow=$((SOURCES * 20)) want_fast=$((SOURCES * 60))
	"$SLUICE" set "$LAB_HOST" --rate 20/s --burst 10 >/dev/null
	# 1.5 + 2 + the set + 1 + 2 s of measuring: 7 s left the second window
	# at the flood's end once the set (a walk of the table, under the flood)
	# took half a second, and a window past it counts time with no flood.
	flood "$SOURCES" 9 "$PPS" >/dev/null &
	LAB_PIDS+=($!)
	sleep 1.5 # let the bucket state settle to the new rate
	slow=$(rate_over passed 2)
	"$SLUICE" set "$LAB_HOST" --rate 60/s >/dev/null
	sleep 1
	fast=$(rate_over passed 2)
	wait "${LAB_PIDS[-1]}"
	CHECK_DETAIL="measured $slow pps, want $want_slow"
	check "before set: passed rate is sources x 20/s (5%)" within "$want_slow" "$slow" 5
	CHECK_DETAIL="measured $fast pps, want $want_fast"
	check "after set mid-flood: passed rate is sources x 60/s (5%)" within "$want_fast" "$fast" 5
}

test_dry_run() {
	local before_pass before_drop before_would before_tx sent secs passed would txdrop
	"$SLUICE" set "$LAB_HOST" --action dry-run >/dev/null
	before_pass=$(stat passed)
	before_drop=$(stat dropped)
	before_would=$(stat would_drop)
	before_tx=$(peer_tx_dropped)
	sink_start "$LAB_TMP/sink2" || { check "sink starts" false; return; }
	read -r sent secs < <(flood "$SOURCES" 2 100000)
	sleep 0.5
	sink_stop
	txdrop=$(($(peer_tx_dropped) - before_tx))
	passed=$(($(stat passed) - before_pass))
	would=$(($(stat would_drop) - before_would))
	CHECK_DETAIL="received $(awk '/^total/ { print $2 }' "$LAB_TMP/sink2") of $sent sent ($txdrop ring drops)"
	check "dry-run: every packet crosses" \
		test "$(awk '/^total/ { print $2 }' "$LAB_TMP/sink2")" = $((sent - txdrop))
	CHECK_DETAIL="passed $passed would_drop $would"
	check "dry-run: over-limit packets counted as would-drop" \
		test "$would" -gt 0 -a $((passed + would)) = $((sent - txdrop))
	check "dry-run: nothing dropped" test "$(stat dropped)" = "$before_drop"
}

# A fixed window of 100 per second per source: each source gets the whole
# limit in every window the flood fills, never more than the limit in each
# window it touches.
test_fixed_window() {
	local sent secs txdrop limit=100 full touched
	printf 'default rate %d/s algorithm fixed-window\n' "$limit" >"$LAB_TMP/fixed.conf"
	CHECK_DETAIL=$("$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/fixed.conf" 2>&1)
	check "apply a fixed window of $limit per second" \
		test "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].algorithm')" = fixed-window
	read -r sent secs txdrop < <(flood_into_sink "$LAB_TMP/sink3" "$SOURCES" 4 "$PPS")
	[ -n "$sent" ] || { check "sink starts" false; return; }
	full=$(awk -v s="$secs" 'BEGIN { printf "%d", s - 1 }')
	touched=$(awk -v s="$secs" 'BEGIN { printf "%d", s + 2 - (s == int(s)) }')
	CHECK_DETAIL=$(awk -v lo=$((limit * full)) -v hi=$((limit * touched)) -v n="$SOURCES" '
		/^[0-9]+\./ { seen++; if ($2 < lo || $2 > hi) { bad++; if (bad <= 3) printf "%s got %d, ", $1, $2 } }
		END { printf "%d to %d per source, %d of %d seen, %d outside", lo, hi, seen, n, bad
		      exit !(seen == n && bad == 0) }' "$LAB_TMP/sink3")
	check "fixed-window: each source gets $limit per window filled, at most $limit per window touched ($secs s)" \
		grep -q " 0 outside" <<<"$CHECK_DETAIL"
	# The GCRA buckets of before the apply stay listed as replaced-N until they idle out.
	check "top shows the window's count for fixed-window sources" \
		test "$("$SLUICE" top "$LAB_HOST" -n 5000 --json | jq -r '[.sources[] | select(.rule == "default")][0] | "\(.algorithm) \(.window_count != null) \(.limit)"')" = "fixed-window true $limit"
}

test_detach() {
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "detach: no XDP program left on the interface" \
		bash -c "! ip link show $LAB_HOST | grep -q xdp"
	check "detach: no pinned state left" test ! -e "/sys/fs/bpf/sluice/$LAB_HOST"
}

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
test_attach
test_flood
test_set_mid_flood
test_dry_run
test_fixed_window
test_detach
lab_finish
