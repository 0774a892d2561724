#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Policies end to end on the veth lab: two rates side by side, a denied
# CIDR that sees nothing, an allowed CIDR that sees everything, an apply
# mid-flood, and /24 aggregates over per-source limits.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SOURCES=1000 # LAB_NET.1.0 - LAB_NET.4.231
PPS=250000   # 250 per source per second

# Sources per /24: .1 rule 20/s, .2 denied, .3 allowed, .4 default 50/s.
write_policy() {
	cat >"$1" <<CONF
# e2e policy
default rate 50/s burst 50
rule $LAB_NET.1.0/24 rate 20/s burst 20
allow $LAB_NET.3.0/24
deny $LAB_NET.2.0/24
CONF
}

# group_check NAME FILE PREFIX EXPECTED: every source of PREFIX got EXPECTED,
# within GROUP_TOLERANCE percent (2 unless a troubled run set it).
group_check() {
	local name=$1 file=$2 prefix=$3 expected=$4 tol=${GROUP_TOLERANCE:-2}
	CHECK_DETAIL=$(awk -v p="$prefix" -v e="$expected" -v t="$tol" '
		index($1, p) == 1 { n++; d = $2 - e; if (d < 0) d = -d
				   if (d > e * t / 100 && d > 1) { bad++; if (bad <= 3) printf "%s got %d, ", $1, $2 } }
		END { printf "%d sources, %d off (want %d each, %s%%)", n, bad, e, t }' "$file")
	check "$name" awk -v p="$prefix" -v e="$expected" -v t="$tol" '
		index($1, p) == 1 { n++; d = $2 - e; if (d < 0) d = -d; if (d > e * t / 100 && d > 1) bad++ }
		END { exit !(n > 200 && bad == 0) }' "$file"
}

# The flood lost frames in the veth ring, or the generator fell behind its
# rate: the host was busy. Frames then go missing in bursts, so sources
# get uneven shares of them, and a late start costs each source a little
# of its allowance: allow 5% instead of 2%, and say so.
troubled_run() {
	local sent=$1 lost=$2 want=$3
	if [ "$lost" -gt 0 ] || [ "$sent" -lt $((want * 99 / 100)) ]; then
		echo "     (a busy host: $lost frames lost, $sent of $want sent; per-source checks at 5%)"
		GROUP_TOLERANCE=5
	else
		GROUP_TOLERANCE=2
	fi
}

# sent_to SENT FIRST END: packets the round-robin flood sent to sources
# FIRST..END-1 (the first SENT % SOURCES sources got one more).
sent_to() {
	awk -v sent="$1" -v a="$2" -v b="$3" -v n="$SOURCES" 'BEGIN {
		r = sent % n; t = int(sent / n) * (b - a)
		if (r > a) t += (r < b ? r : b) - a
		printf "%d", t }'
}

test_two_rates_and_lists() {
	local sent secs lost
	write_policy "$LAB_TMP/policy.conf"
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/policy.conf" || { check "apply" false; return; }
	read -r sent secs lost < <(flood_into_sink "$LAB_TMP/sink" "$SOURCES" 4 "$PPS")
	[ -n "$sent" ] || { check "sink starts" false; return; }
	echo "     flood: $sent sent in $secs s, $lost lost in the veth ring"
	troubled_run "$sent" "$lost" $((PPS * 4))
	group_check "rule $LAB_NET.1.0/24 at 20/s: each source gets 20 + 20 x t" "$LAB_TMP/sink" \
		"$LAB_NET.1." "$(awk -v s="$secs" 'BEGIN { printf "%d", 20 + int(20 * s) }')"
	group_check "default at 50/s: each source gets 50 + 50 x t" "$LAB_TMP/sink" \
		"$LAB_NET.4." "$(awk -v s="$secs" 'BEGIN { printf "%d", 50 + int(50 * s) }')"
	# Round-robin frames the veth ring lost are lost evenly across sources.
	group_check "allowed $LAB_NET.3.0/24: each source gets everything that reached sluice" \
		"$LAB_TMP/sink" "$LAB_NET.3." "$(((sent - lost) / SOURCES))"
	CHECK_DETAIL="$(grep -c "^$LAB_NET.2." "$LAB_TMP/sink") denied sources got packets"
	check "denied $LAB_NET.2.0/24: no packet crosses" bash -c "! grep -qF '$LAB_NET.2.' '$LAB_TMP/sink'"
	local want_denied want_allowed
	want_denied=$(sent_to "$sent" 256 512)
	want_allowed=$(sent_to "$sent" 512 768)
	# Frames the veth ring lost never reached sluice: exact when none were.
	CHECK_DETAIL="denied $(stat denied) (want $want_denied), allowed $(stat allowed) (want $want_allowed), $lost lost in the ring"
	check "denied and allowed counters match what reached sluice, to the packet" \
		awk -v d="$(stat denied)" -v a="$(stat allowed)" -v wd="$want_denied" \
		-v wa="$want_allowed" -v l="$lost" 'BEGIN { exit !(d <= wd && a <= wa &&
			wd - d <= l && wa - a <= l && (wd - d) + (wa - a) <= l) }'
}

# The flood outlasts the second window by seconds: an apply on a busy host
# (the generator holds one of two cores) took over a second, and a window
# reaching past the flood's end read a rate 10-15% short.
test_apply_mid_flood() {
	local before after denied0 denied want
	flood "$SOURCES" 12 "$PPS" >/dev/null &
	LAB_PIDS+=($!)
	sleep 1.5
	before=$(rate_over passed 2)
	# The /24 rule goes to 60/s and the deny list goes: its sources fall to the default.
	sed -e "s|rule $LAB_NET.1.0/24 rate 20/s burst 20|rule $LAB_NET.1.0/24 rate 60/s burst 20|" \
		-e '/^deny/d' "$LAB_TMP/policy.conf" >"$LAB_TMP/policy2.conf"
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/policy2.conf"
	sleep 1
	denied0=$(stat denied)
	after=$(rate_over passed 2)
	denied=$(($(stat denied) - denied0))
	wait "${LAB_PIDS[-1]}"
	want=$((256 * 60 + 256 * 50 + 232 * 50))
	CHECK_DETAIL="before $before pps (want $((256 * 20 + 232 * 50))), after $after pps (want $want)"
	check "apply mid-flood: passed rate moves to the new policy (5%)" \
		awk -v g="$after" -v w="$want" -v b="$before" -v wb=$((256 * 20 + 232 * 50)) \
		'BEGIN { exit !(g > w * 0.95 && g < w * 1.05 && b > wb * 0.95 && b < wb * 1.05) }'
	CHECK_DETAIL="$denied denied after apply"
	check "apply mid-flood: the removed deny list denies nothing more" test "$denied" = 0
	check "show prints what was applied" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -v '^attach ' | diff - <(grep -v '^#' '$LAB_TMP/policy2.conf')"
}

test_bad_apply_changes_nothing() {
	local before out rc
	before=$("$SLUICE" show "$LAB_HOST")
	printf 'default rate 50/s\nrule 10.0.0.0/8 rate 20/s\nrule 10.1.0.0/16 rate nope\n' \
		>"$LAB_TMP/bad.conf"
	out=$("$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/bad.conf" 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "a bad config names line and column, exits 2" \
		test "$rc" = 2 -a -n "$(grep -o 'bad.conf:3:23: bad rate' <<<"$out")"
	check "a bad config changes nothing" test "$("$SLUICE" show "$LAB_HOST")" = "$before"
}

# prefix_totals FILE: "PREFIX TOTAL MAX" per /24 of the sink's counts.
prefix_totals() {
	awk '$1 ~ /^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$/ {
	       split($1, o, "."); p = o[1] "." o[2] "." o[3]; t[p] += $2
	       if ($2 > m[p]) m[p] = $2 }
	     END { for (p in t) print p, t[p], m[p] }' "$1" | sort
}

test_aggregates() {
	local sent secs lost want per_source
	# 1000 sources in four /24s, each source allowed 50/s, each /24 3000/s.
	"$SLUICE" apply "$LAB_HOST" -f <(echo "default rate 50/s burst 50 aggregate /24=3000/s,burst=1000") ||
		{ check "apply an aggregate" false; return; }
	read -r sent secs lost < <(flood_into_sink "$LAB_TMP/agg" "$SOURCES" 4 "$PPS")
	[ -n "$sent" ] || { check "sink starts" false; return; }
	echo "     flood: $sent sent in $secs s, $lost lost in the veth ring"
	troubled_run "$sent" "$lost" $((PPS * 4))
	want=$(awk -v s="$secs" 'BEGIN { printf "%d", 1000 + 3000 * s }')
	per_source=$(awk -v s="$secs" 'BEGIN { printf "%d", 50 + 50 * s }')
	prefix_totals "$LAB_TMP/agg" >"$LAB_TMP/agg.totals"
	CHECK_DETAIL="$(tr '\n' ';' <"$LAB_TMP/agg.totals") want $want per /24"
	check "aggregate /24=3000/s: each /24 gets 1000 + 3000 x t in all (${GROUP_TOLERANCE}%)" \
		awk -v w="$want" -v t="$GROUP_TOLERANCE" '{ n++; d = $2 - w; if (d < 0) d = -d; if (d > w * t / 100) bad++ }
			END { exit !(n == 4 && bad == 0) }' "$LAB_TMP/agg.totals"
	CHECK_DETAIL="per-source maximum $(awk '{ print $3 }' "$LAB_TMP/agg.totals" | sort -n | tail -1), allowed $per_source"
	check "no source passes more than its own 50 + 50 x t" \
		awk -v m="$per_source" '$3 > m { bad++ } END { exit bad > 0 }' "$LAB_TMP/agg.totals"
	check "show prints the aggregate back" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -qx 'default rate 50/s burst 50 aggregate /24=3k/s,burst=1k'"
	"$SLUICE" set "$LAB_HOST" --aggregate none >/dev/null
	check "set --aggregate none removes it" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -qx 'default rate 50/s burst 50'"
}

# applies_unchanged FILE WHAT: apply of show's output (FILE) says "nothing
# changed", and show afterwards prints FILE again.
applies_unchanged() {
	local out
	out=$("$SLUICE" apply "$LAB_HOST" -f "$1" 2>&1)
	CHECK_DETAIL=$out
	check "apply of show's output with $2 is a no-op" grep -q "nothing changed" <<<"$out"
	out=$("$SLUICE" show "$LAB_HOST")
	check "show after that apply is identical" test "$out" = "$(cat "$1")"
}

# --prove and --proven-sources: show prints them, apply of show's output
# changes nothing, bad uses change nothing, set --prove off turns proof off.
test_prove_round_trip() {
	local out rc before
	"$SLUICE" set "$LAB_HOST" --prove tcp --proven-sources 500/s >/dev/null
	check "show prints --prove and --proven-sources" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -q '^default .*prove tcp proven-sources 500/s'"
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/prove.conf"
	out=$("$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/prove.conf" 2>&1)
	CHECK_DETAIL=$out
	check "apply of show's output is a no-op" grep -q "nothing changed" <<<"$out"
	before=$("$SLUICE" show "$LAB_HOST")
	out=$("$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proto udp --prove tcp 2>&1)
	rc=$?
	CHECK_DETAIL="rc $rc: $out"
	check "--prove on a UDP-only rule: one line, exit 2" \
		test "$rc" = 2 -a "$(wc -l <<<"$out")" = 1
	out=$("$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proven-sources 5/s 2>&1)
	rc=$?
	CHECK_DETAIL="rc $rc: $out"
	check "--proven-sources without --prove: one line, exit 2" \
		test "$rc" = 2 -a "$(wc -l <<<"$out")" = 1
	check "neither changed the policy" test "$before" = "$("$SLUICE" show "$LAB_HOST")"
	"$SLUICE" set "$LAB_HOST" --prove off >/dev/null
	check "set --prove off turns proof and its budget off" \
		bash -c "! '$SLUICE' show '$LAB_HOST' | grep -q prove"
}

# Match classes (issue 36.1): rule add takes each, show prints it, apply of
# show's output changes nothing, and the file's text reads back the same.
test_match_round_trip() {
	"$SLUICE" rule add "$LAB_HOST" 0.0.0.0/0 --rate 100/s --proto udp --sport 123 \
		--length 200-1500 >/dev/null &&
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proto tcp \
			--tcp-flags syn,ack/syn --dst 192.0.2.0/24 >/dev/null &&
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proto icmp --icmp-type 3/4 \
			>/dev/null &&
		"$SLUICE" rule add "$LAB_HOST" 2001:db8::/32 --rate 5/s --proto icmpv6 \
			--icmp-type 128 --dst 2001:db8:ff::/48 >/dev/null
	check "rule add takes --sport, --length, --tcp-flags, --icmp-type and --dst" test $? = 0
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/classes.conf"
	CHECK_DETAIL=$(cat "$LAB_TMP/classes.conf")
	check "show prints each match class as typed, canonically" \
		bash -c "grep -qx 'rule 0.0.0.0/0 rate 100/s proto udp sport 123 length 200-1500' '$LAB_TMP/classes.conf' &&
			grep -qx 'rule 10.0.0.0/8 rate 5/s proto tcp tcp-flags SYN,ACK/SYN dst 192.0.2.0/24' '$LAB_TMP/classes.conf' &&
			grep -qx 'rule 10.0.0.0/8 rate 5/s proto icmp icmp-type 3/4' '$LAB_TMP/classes.conf' &&
			grep -qx 'rule 2001:db8::/32 rate 5/s proto icmpv6 icmp-type 128 dst 2001:db8:ff::/48' '$LAB_TMP/classes.conf'"
	applies_unchanged "$LAB_TMP/classes.conf" "match classes"
	"$SLUICE" rule del "$LAB_HOST" 10.0.0.0/8 --proto icmp --icmp-type 3/4 >/dev/null
	check "rule del names a rule by its match classes" \
		bash -c "! '$SLUICE' show '$LAB_HOST' | grep -q 'icmp-type 3/4' && '$SLUICE' show '$LAB_HOST' | grep -q 'tcp-flags'"
	"$SLUICE" rule del "$LAB_HOST" 0.0.0.0/0 --proto udp --sport 123 --length 200-1500 >/dev/null
	"$SLUICE" rule del "$LAB_HOST" 10.0.0.0/8 --proto tcp --tcp-flags SYN,ACK/SYN --dst 192.0.2.0/24 >/dev/null
	"$SLUICE" rule del "$LAB_HOST" 2001:db8::/32 --proto icmpv6 --icmp-type 128 --dst 2001:db8:ff::/48 >/dev/null
	check "rule del of each leaves no match class" bash -c "! '$SLUICE' show '$LAB_HOST' | grep -qE 'sport|tcp-flags|icmp-type|length|dst'"
}

# The penalty box (issue 36.3): rule add takes its options, show prints them
# back as typed (defaults left out), and apply of show's output changes nothing.
test_ban_round_trip() {
	"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --ban-after 1.5k/10s --ban-for 30s \
		--ban-escalate 1.5 --ban-memory 10m --ban-max 1h >/dev/null &&
		"$SLUICE" rule add "$LAB_HOST" 2001:db8::/32 --rate 5/s --ban-after 100 >/dev/null
	check "rule add takes --ban-after, --ban-for, --ban-escalate, --ban-memory, --ban-max" \
		test $? = 0
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/ban.conf"
	CHECK_DETAIL=$(cat "$LAB_TMP/ban.conf")
	check "show prints the penalty box as typed" \
		bash -c "grep -qx 'rule 10.0.0.0/8 rate 5/s ban-after 1500/10s ban-for 30s ban-escalate 1.5 ban-memory 10m ban-max 1h' '$LAB_TMP/ban.conf' &&
			grep -qx 'rule 2001:db8::/32 rate 5/s ban-after 100/1s' '$LAB_TMP/ban.conf'"
	applies_unchanged "$LAB_TMP/ban.conf" "a penalty box"
	"$SLUICE" rule del "$LAB_HOST" 10.0.0.0/8 >/dev/null
	"$SLUICE" rule del "$LAB_HOST" 2001:db8::/32 >/dev/null
	check "rule del leaves no penalty box" bash -c "! '$SLUICE' show '$LAB_HOST' | grep -q ban-"
	"$SLUICE" set "$LAB_HOST" --ban-after 100 --ban-for 2m >/dev/null
	check "set gives the default a penalty box" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -q '^default .*ban-after 100/1s ban-for 2m\$'"
	"$SLUICE" set "$LAB_HOST" --ban-after none >/dev/null
	check "set --ban-after none ends it, its other settings with it" \
		bash -c "! '$SLUICE' show '$LAB_HOST' | grep -q ban-"
}

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
"$SLUICE" attach "$LAB_HOST" --rate 50/s --burst 50 >/dev/null
test_two_rates_and_lists
test_apply_mid_flood
test_bad_apply_changes_nothing
test_aggregates
test_prove_round_trip
test_match_round_trip
test_ban_round_trip
"$SLUICE" detach "$LAB_HOST" >/dev/null
lab_finish
