#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Smoke test of sluice-flood: IPv4 and IPv6, UDP and TCP SYN frames sent
# out of the host end of a veth must be accepted by the stack in the
# namespace, as its own SNMP counters (nstat) show: every datagram reaches
# UDP with a good checksum, every SYN is answered with a reset. No sluice
# here; the frames cross untouched.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

FRAMES=2000
SOURCES=50
PPS=20000 # paced, so the receiving ring never overflows and counts are exact
PEER_IP6=fd00:250::2
SRC6=fd00:250:1::1 # sources in fd00:250:1:0::/64, fd00:250:1:1::/64, ...
# nstat keeps its last reading in a file: one of our own, not a shared one.
export NSTAT_HISTORY=$LAB_TMP/nstat.history

# Without XDP on the peer, veth delivers XDP_TX frames only with NAPI: GRO on.
# IPv6 is switched on for the peer only: the lab keeps it off elsewhere.
receiver_up() {
	ip netns exec "$LAB_NS" ethtool -K "$LAB_PEER" gro on >/dev/null &&
		ip netns exec "$LAB_NS" sysctl -qw "net.ipv6.conf.$LAB_PEER.disable_ipv6=0" &&
		ip -n "$LAB_NS" addr add "$PEER_IP6/64" dev "$LAB_PEER" nodad &&
		ip -n "$LAB_NS" route add fd00:250::/32 dev "$LAB_PEER"
}

# gen ARGS...: FRAMES frames from the host end to the peer; prints the count sent.
gen() {
	"$FLOOD" "$LAB_HOST" --dst-mac "$(ip netns exec "$LAB_NS" cat "/sys/class/net/$LAB_PEER/address")" \
		--sources "$SOURCES" --count "$FRAMES" --rate "$PPS" --quiet "$@" 2>"$LAB_TMP/gen.err"
}

# counter NAME: its change over the last reading (nstat lists only changes).
counter() {
	awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }' "$LAB_TMP/nstat"
}

# accepted LABEL COUNTERS -- GEN_ARGS...: each of COUNTERS must read exactly
# the number of frames sent, and no checksum or header error may appear.
accepted() {
	local label=$1 sent c want=() errs
	shift
	while [ "$1" != -- ]; do
		want+=("$1")
		shift
	done
	shift
	ip netns exec "$LAB_NS" nstat -n
	sent=$(gen "$@")
	sleep 0.3
	ip netns exec "$LAB_NS" nstat >"$LAB_TMP/nstat"
	CHECK_DETAIL="$(cat "$LAB_TMP/gen.err")"
	check "$label: $FRAMES frames sent" test "$sent" = "$FRAMES"
	for c in "${want[@]}"; do
		CHECK_DETAIL="$c = $(counter "$c")"
		check "$label: $c counts all $FRAMES" test "$(counter "$c")" = "$FRAMES"
	done
	errs=$(grep -E 'CsumErrors|InErrs|InHdrErrors|InErrors|InDiscards' "$LAB_TMP/nstat" |
		awk '$2 > 0' | tr -s ' ' | tr '\n' ';')
	CHECK_DETAIL=$errs
	check "$label: no checksum or header errors" test -z "$errs"
}

test_frames_accepted() {
	accepted "IPv4 UDP" IpInReceives UdpNoPorts -- \
		--dst "$LAB_PEER_IP" --src "$LAB_SRC_BASE"
	accepted "IPv4 TCP SYN" TcpInSegs TcpOutRsts -- \
		--dst "$LAB_PEER_IP" --src "$LAB_SRC_BASE" --proto tcp-syn
	accepted "IPv6 UDP" Ip6InReceives Udp6NoPorts -- \
		--ipv6 --dst "$PEER_IP6" --src "$SRC6" --v6-prefixes 5 --size 128
	accepted "IPv6 TCP SYN" TcpInSegs TcpOutRsts -- \
		--ipv6 --dst "$PEER_IP6" --src "$SRC6" --proto tcp-syn
}

# exit_code CMD...: prints CMD's exit status, and keeps its stderr in gen.err.
exit_code() {
	"$@" >/dev/null 2>"$LAB_TMP/gen.err"
	echo $?
}

test_refusals() {
	local mac=02:00:00:00:00:01
	ip -n "$LAB_NS" link add slb$$ type bridge 2>/dev/null
	check "a bridge is refused without --force (exit 2)" \
		test "$(exit_code ip netns exec "$LAB_NS" "$FLOOD" slb$$ --dst-mac $mac \
			--dst 10.0.0.1 --sources 1 --count 1)" = 2
	CHECK_DETAIL=$(cat "$LAB_TMP/gen.err")
	check "the refusal says why" grep -q "only veth and loopback" "$LAB_TMP/gen.err"
	check "an IPv6 --dst without --ipv6 is bad input" \
		test "$(exit_code "$FLOOD" "$LAB_HOST" --dst-mac $mac --dst fd00::1 --sources 1)" = 2
	check "--v6-prefixes without --ipv6 is bad input" \
		test "$(exit_code "$FLOOD" "$LAB_HOST" --dst-mac $mac --dst 10.0.0.1 --sources 4 \
			--v6-prefixes 2)" = 2
	check "a frame too small for an IPv6 SYN is bad input" \
		test "$(exit_code "$FLOOD" "$LAB_HOST" --dst-mac $mac --ipv6 --dst fd00::1 \
			--sources 1 --proto tcp-syn --size 93)" = 2
}

lab_up && receiver_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
test_frames_accepted
test_refusals
lab_finish
