#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Times allow/deny list changes of N entries on a veth pair of its own:
#   tools/list_timing.sh [SLUICE] [N...]     (as root; default build/sluice 100000)
# Prints one line per step: seconds, exit status, command. For before/after
# figures, run it with two builds of sluice. BANS=N (up to 65536) first puts
# N bans in force in the penalty box (keys in 100.64.0.0/16, straight into
# its map), which deny del must weigh for each CIDR it is given.
set -u
SLUICE=${1:-build/sluice}
shift
SIZES=${*:-100000}
DEV=sltime$$
LIST=$(mktemp /tmp/sluice-timing.XXXXXX)

cleanup() {
	"$SLUICE" detach "$DEV" >/dev/null 2>&1
	ip link del "$DEV" 2>/dev/null
	rm -f "$LIST"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# fill_bans N: N bans in force, written into the pinned map with bpftool.
fill_bans() {
	python3 - "$1" "/sys/fs/bpf/sluice/$DEV/bans" >"$LIST" <<-'EOF'
		import struct, sys
		for i in range(int(sys.argv[1])):
		    # struct sluice_key: IPv4, /32, rule id 1; struct sluice_ban: in force for ages
		    key = struct.pack("<BBH", 4, 32, 1) + bytes([100, 64, i >> 8 & 255, i & 255]) + bytes(12)
		    ban = struct.pack("<QQQQQQII", 0, 1, 1 << 62, 10**9, 5, 10**10, 1, 1)
		    print("map update pinned", sys.argv[2], "key hex", key.hex(" "), "value hex", ban.hex(" "))
	EOF
	bpftool batch file "$LIST" >/dev/null
}

timed() {
	local t0 rc
	t0=$(date +%s%N)
	"$@" >/dev/null
	rc=$?
	printf '%8.3f s  exit %d  %s\n' "$(($(date +%s%N) - t0))e-9" "$rc" "${*:2}"
}

ip link add "$DEV" type veth peer name "${DEV}p" || exit 1
ip link set "$DEV" up
"$SLUICE" attach "$DEV" --rate 100/s >/dev/null || exit 1
if [ "${BANS:-0}" -gt 0 ]; then
	fill_bans "$BANS" || exit 1
	echo "== $BANS bans in force"
fi
for n in $SIZES; do
	awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++)
		printf "10.%d.%d.%d/32\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$LIST"
	echo "== $n entries"
	timed "$SLUICE" deny add "$DEV" -f "$LIST"
	timed "$SLUICE" deny add "$DEV" 192.0.2.1
	timed "$SLUICE" deny list "$DEV"
	timed "$SLUICE" deny del "$DEV" -f "$LIST"
	timed "$SLUICE" deny del "$DEV" 192.0.2.1
done
