#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What libxdp's dispatcher costs per packet: sluice attached directly on one
# veth and through the dispatcher (attach --multiprog) on another, same
# policy, each timed with BPF_PROG_TEST_RUN (bpftool prog run ... repeat) on
# one 64-byte IPv4 UDP frame, on one core. The direct figure times sluice's
# program; the multiprog one the dispatcher, which calls sluice's program.
# Two paths: a packet under its limit (passed), and one over it (dropped by
# the over-limit cache, sluice's cheapest path). RUNS rounds, the two
# attachments alternating within each; prints per round and medians, with
# min-max, of the ns and of the ratio taken within each round.
set -u
cd "$(dirname "$0")/../.."

SLUICE=${SLUICE:-build/sluice}
RUNS=${RUNS:-5}
REPEAT=${REPEAT:-2000000}
CPU=$(($(nproc) - 1))
DIRECT=slh$$ # names the test suite's leak check knows
SHARED=slx$$
TMP=$(mktemp -d /tmp/sluice-bench-mp.XXXXXX)
FRAME=$TMP/frame

down() {
	"$SLUICE" detach "$DIRECT" >/dev/null 2>&1
	"$SLUICE" detach "$SHARED" >/dev/null 2>&1
	ip link del "$DIRECT" 2>/dev/null
	ip link del "$SHARED" 2>/dev/null
	rm -rf "$TMP"
}
trap down EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
for tool in bpftool jq xxd; do
	command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }
done

# Ethernet, IPv4 10.0.0.1 -> 10.0.0.2, UDP 8000 -> 9000, 22 bytes of payload: 64 bytes.
printf '%s' 020000000002020000000001 0800 \
	4500003200000000401100000a0000010a000002 1f402328001e0000 \
	00000000000000000000000000000000000000000000 | xxd -r -p >"$FRAME"

ip link add "$DIRECT" type veth peer name sln$$ &&
	ip link add "$SHARED" type veth peer name sly$$ &&
	ip link set "$DIRECT" up && ip link set "$SHARED" up || exit 1
"$SLUICE" attach "$DIRECT" --rate 1/h --burst 1 >/dev/null || exit 1
"$SLUICE" attach "$SHARED" --rate 1/h --burst 1 --multiprog >/dev/null || exit 1
direct_id=$("$SLUICE" status "$DIRECT" --json | jq -r '.[0].prog_id')
dispatcher_id=$(ip -j -d link show "$SHARED" | jq -r '.[0].xdp.prog.id')

# ns PROG_ID: average ns per run of REPEAT runs, and the return value.
ns() {
	taskset -c "$CPU" bpftool prog run id "$1" data_in "$FRAME" repeat "$REPEAT" 2>&1 |
		awk '/Return value/ { gsub(/[^0-9]/, "", $3); r = $3; d = $NF; gsub(/ns/, "", d); print d, r }'
}

# both RATE BURST: sets the policy on both.
both() {
	"$SLUICE" set "$DIRECT" --rate "$1" --burst "$2" >/dev/null &&
		"$SLUICE" set "$SHARED" --rate "$1" --burst "$2" >/dev/null
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'; }

echo "CPU: $(lscpu | awk -F: '/Model name/ { gsub(/^ +/, "", $2); print $2; exit }'), core $CPU"
echo "commit $(git describe --always --dirty --abbrev=12 2>/dev/null), $REPEAT runs per figure, $RUNS rounds"
echo "direct program $direct_id, dispatcher $dispatcher_id"
printf '%-7s %-5s %8s %8s %8s %7s\n' path round direct shared extra ratio
for path in passed dropped; do
	if [ "$path" = passed ]; then
		both 16M/s 1000000000 # every packet conforms
	else
		both 1/h 1 # the first passes; the rest meet the over-limit cache
	fi
	: >"$TMP/$path"
	for r in $(seq "$RUNS"); do
		read -r d dret < <(ns "$direct_id")
		read -r s sret < <(ns "$dispatcher_id")
		[ "$dret" = "$sret" ] || echo "return values differ: $dret $sret" >&2
		echo "$d $s" >>"$TMP/$path"
		printf '%-7s %-5s %8s %8s %8s %7s\n' "$path" "$r" "$d" "$s" "$((s - d))" \
			"$(awk -v a="$d" -v b="$s" 'BEGIN { printf "%.2f", b / a }')"
	done
done
echo
printf '%-7s %-14s %-14s %-14s %-14s\n' path "direct ns" "shared ns" "extra ns" ratio
for path in passed dropped; do
	f=$TMP/$path
	printf '%-7s %-14s %-14s %-14s %-14s\n' "$path" \
		"$(cut -d' ' -f1 "$f" | median) ($(cut -d' ' -f1 "$f" | range))" \
		"$(cut -d' ' -f2 "$f" | median) ($(cut -d' ' -f2 "$f" | range))" \
		"$(awk '{ print $2 - $1 }' "$f" | median) ($(awk '{ print $2 - $1 }' "$f" | range))" \
		"$(awk '{ printf "%.2f\n", $2 / $1 }' "$f" | median) ($(awk '{ printf "%.2f\n", $2 / $1 }' "$f" | range))"
done
