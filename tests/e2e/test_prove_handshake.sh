#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# --prove through a real kernel's TCP, IPv4 and IPv6, on a veth pair: a
# client whose SYN sluice answers with a cookie SYN-ACK resets it, resends
# its SYN, and gets its page from a real HTTP server; the counters and the
# proven mark say so. Small enough for the Debian 12 VM (tools/vm-check.sh),
# where it shows the same on Linux 6.1. The flood is test_prove.sh's.
set -u
cd "$(dirname "$0")/../.."
source tests/e2e/lab.sh

PASS_PROG=build/xdp_pass.bpf.o
HOST6=fd00:5e:$(($$ % 9000))::1
PEER6=fd00:5e:$(($$ % 9000))::2
HTTP_PORT=8080

# The peer runs an XDP program: only then does a veth deliver XDP_TX frames.
# IPv6 on for this link only, without router chatter: no DAD, no RS.
prove_lab_up() {
	lab_up || return 1
	sysctl -qw "net.ipv6.conf.$LAB_HOST.disable_ipv6=0" &&
		ip netns exec "$LAB_NS" sysctl -qw "net.ipv6.conf.$LAB_PEER.disable_ipv6=0" &&
		ip addr add "$HOST6/64" dev "$LAB_HOST" nodad &&
		ip -n "$LAB_NS" addr add "$PEER6/64" dev "$LAB_PEER" nodad &&
		ip -n "$LAB_NS" link set dev "$LAB_PEER" xdp obj "$PASS_PROG" sec xdp &&
		neighbours_fixed
}

# No neighbour discovery: its packets come from the peer's address, and
# would give it a bucket before its first SYN.
neighbours_fixed() {
	local host_mac peer_mac
	host_mac=$(cat "/sys/class/net/$LAB_HOST/address")
	peer_mac=$(ip netns exec "$LAB_NS" cat "/sys/class/net/$LAB_PEER/address")
	ip neigh replace "$PEER6" lladdr "$peer_mac" dev "$LAB_HOST" nud permanent &&
		ip neigh replace "$LAB_PEER_IP" lladdr "$peer_mac" dev "$LAB_HOST" nud permanent &&
		ip -n "$LAB_NS" neigh replace "$HOST6" lladdr "$host_mac" dev "$LAB_PEER" nud permanent &&
		ip -n "$LAB_NS" neigh replace "$LAB_HOST_IP" lladdr "$host_mac" dev "$LAB_PEER" \
			nud permanent
}

http_up() {
	python3 -m http.server "$HTTP_PORT" --bind :: --directory "$LAB_TMP" >/dev/null 2>&1 &
	LAB_PIDS+=($!)
	echo proven >"$LAB_TMP/index.html"
	local i
	for i in $(seq 50); do
		curl -s -m 1 "http://$LAB_HOST_IP:$HTTP_PORT/" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# fetch URL: the page, from the peer's namespace, within 3 s.
fetch() {
	ip netns exec "$LAB_NS" curl -s -g -m 3 "$1"
}

counter() {
	"$SLUICE" stats "$LAB_HOST" --json | jq -r ".counters.$1.packets"
}

page_is() {
	[ "$(fetch "$1")" = proven ]
}

counter_is() {
	CHECK_DETAIL="$1 is $(counter "$1"), want $2"
	[ "$(counter "$1")" = "$2" ]
}

counter_at_least() {
	CHECK_DETAIL="$1 is $(counter "$1"), want at least $2"
	[ "$(counter "$1")" -ge "$2" ]
}

# top_proven ADDRESS: whether `top --json` marks its bucket as proven.
top_proven() {
	"$SLUICE" top "$LAB_HOST" --json | jq -r --arg a "$1/" \
		'[.sources[] | select(.prefix | startswith($a)) | .proven] | first'
}

top_marks() {
	CHECK_DETAIL="top says proven: $(top_proven "$1"), want $2"
	[ "$(top_proven "$1")" = "$2" ]
}

prove_lab_up || {
	echo "FAIL the lab"
	lab_finish
	exit 1
}
check "an HTTP server answers before sluice" http_up

"$SLUICE" attach "$LAB_HOST" --rate 100/s --prove tcp-always >/dev/null
check "IPv4: the page comes through --prove tcp-always" page_is "http://$LAB_HOST_IP:$HTTP_PORT/"
check "IPv4: one SYN-ACK sent from XDP" counter_is synacks_sent 1
check "IPv4: its cookie came back in the client's RST" counter_is cookies_good 1
check "IPv4: and proved the source" counter_is proven 1
check "no RST carried a wrong cookie" counter_is cookies_bad 0
check "top marks the proven source" top_marks "$LAB_PEER_IP" true
check "IPv4: a proven source's next connection needs no cookie" page_is "http://$LAB_HOST_IP:$HTTP_PORT/"
check "IPv4: so no second SYN-ACK" counter_is synacks_sent 1
check "IPv6: the page comes through --prove tcp-always" page_is "http://[$HOST6]:$HTTP_PORT/"
check "IPv6: a SYN-ACK and a proof of its own" counter_is proven 2
"$SLUICE" detach "$LAB_HOST" >/dev/null

# Within the new-source budget, --prove tcp leaves the handshake to the kernel.
"$SLUICE" attach "$LAB_HOST" --rate 100/s --prove tcp >/dev/null
check "--prove tcp: within the budget the page comes" page_is "http://$LAB_HOST_IP:$HTTP_PORT/"
check "--prove tcp: and no SYN-ACK came from XDP" counter_is synacks_sent 0
check "top: a source admitted by the budget is not marked proven" top_marks "$LAB_PEER_IP" false
"$SLUICE" detach "$LAB_HOST" >/dev/null

# Past it: a budget of one new source a minute, spent by the IPv4 client.
"$SLUICE" attach "$LAB_HOST" --rate 100/s --new-sources 1/m --prove tcp >/dev/null
fetch "http://$LAB_HOST_IP:$HTTP_PORT/" >/dev/null
check "--prove tcp: past the budget a new source proves itself" page_is "http://[$HOST6]:$HTTP_PORT/"
check "--prove tcp: through a SYN-ACK from XDP" counter_at_least synacks_sent 1
check "--prove tcp: and a good cookie" counter_is proven 1
"$SLUICE" detach "$LAB_HOST" >/dev/null

# Without --prove the same budget leaves the second source to the overflow bucket.
"$SLUICE" attach "$LAB_HOST" --rate 100/s --new-sources 1/m --overflow-rate 1/m \
	--burst 1 >/dev/null
fetch "http://$LAB_HOST_IP:$HTTP_PORT/" >/dev/null
check "without --prove: past the budget a new source starves" \
	bash -c "! ip netns exec $LAB_NS curl -s -g -m 2 http://[$HOST6]:$HTTP_PORT/ >/dev/null"
check "without --prove: no SYN-ACK from XDP" counter_is synacks_sent 0

lab_finish
