#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What one list change costs on a big deny list, end to end: the real
# `sluice deny` command against an interface of a veth pair into a
# namespace of its own (removed however the script ends).
#   tools/bench/lists.sh [SLUICE]      (as root; default build/sluice)
# (a) one `deny del` then one `deny add` of an address on a list of
#     1,000,000 IPv4 entries (a list at its capacity: each set of the trie
#     holds 1,000,000), RUNS times (default 20): median, min and max, in ms.
# (b) `deny add -f` of 100,000 new entries to a list of 900,000, and the
#     `deny del -f` of them, once each, in ms.
# (c) one `deny add` or `deny del` on an empty list, RUNS times each: the
#     floor every change pays (startup, and the flip, whose map-in-map
#     update waits for running programs: an RCU grace period).
# Run it with two builds of sluice for before/after figures.
set -u
SLUICE=${1:-build/sluice}
RUNS=${RUNS:-20}
NS=sluice-bench-$$
DEV=slbl$$
TMP=$(mktemp -d /tmp/sluice-bench-lists.XXXXXX)

cleanup() {
	"$SLUICE" detach "$DEV" >/dev/null 2>&1
	ip link del "$DEV" 2>/dev/null
	ip netns del "$NS" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# hosts FIRST COUNT: COUNT /32s counting up from 11.0.0.0 + FIRST.
hosts() {
	awk -v f="$1" -v n="$2" 'BEGIN { for (i = f; i < f + n; i++)
		printf "11.%d.%d.%d/32\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }'
}

# ms COMMAND...: milliseconds the command took; exits if it failed.
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null || {
		echo "failed: $*" >&2
		exit 1
	}
	t1=$(date +%s%N)
	awk -v ns=$((t1 - t0)) 'BEGIN { printf "%.2f\n", ns / 1e6 }'
}

# summary NAME: median, min and max of the figures on stdin.
summary() {
	sort -g | awk -v name="$1" '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%-44s median %9.2f ms  min %9.2f  max %9.2f  (%d runs)\n", name, m, v[1], v[NR], NR }'
}

ip netns add "$NS" &&
	ip link add "$DEV" type veth peer name "${DEV}p" netns "$NS" &&
	ip link set "$DEV" up &&
	ip -n "$NS" link set "${DEV}p" up || exit 1
"$SLUICE" attach "$DEV" --rate 100/s >/dev/null || exit 1
echo "sluice: $SLUICE ($(git -C "$(dirname "$SLUICE")/.." log -1 --format=%h 2>/dev/null))"
lscpu | grep 'Model name' | sed 's/^ */cpu: /'

# (c) the floor: one change of an empty list (the flip's wait for running programs, startup).
for i in $(seq "$RUNS"); do
	ms "$SLUICE" deny add "$DEV" 11.0.0.7 >>"$TMP/empty"
	ms "$SLUICE" deny del "$DEV" 11.0.0.7 >>"$TMP/empty"
done
summary "deny add or del of one, empty list" <"$TMP/empty"
hosts 0 900000 >"$TMP/base"
hosts 900000 100000 >"$TMP/more"
echo "load of 900,000: $(ms "$SLUICE" deny add "$DEV" -f "$TMP/base") ms"
echo "deny add -f 100,000 to 900,000: $(ms "$SLUICE" deny add "$DEV" -f "$TMP/more") ms"
echo "deny del -f 100,000 from 1,000,000: $(ms "$SLUICE" deny del "$DEV" -f "$TMP/more") ms"
"$SLUICE" deny add "$DEV" -f "$TMP/more" >/dev/null || exit 1
for i in $(seq "$RUNS"); do
	ms "$SLUICE" deny del "$DEV" 11.0.0.7 >>"$TMP/del"
	ms "$SLUICE" deny add "$DEV" 11.0.0.7 >>"$TMP/add"
done
summary "deny del of one, list of 1,000,000" <"$TMP/del"
summary "deny add of one, list of 999,999" <"$TMP/add"
