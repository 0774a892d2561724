#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Match classes end to end (issue 36.1), on a veth pair into a namespace:
# a reflection flood from NTP's port (123) in large replies is limited by a
# rule "proto udp sport 123 length 200-1500" while small packets from port
# 123 pass unlimited under the default; a TCP-flags rule limits Christmas-
# tree segments, not plain ACKs; an ICMP-type rule limits echo requests, not
# timestamp requests. Every packet goes from the namespace's own address to
# the host end of the pair: nothing is forged, nothing leaves the machine.
set -u
cd "$(dirname "$0")/../.."
source tests/e2e/lab.sh

# send KIND COUNT [SIZE]: from inside the namespace to the host end.
#   udp123: UDP from port 123 to port 9000, SIZE payload bytes
#   xmas, ack: TCP segments with FIN+PSH+URG, or ACK alone (raw)
#   echo, timestamp: ICMP type 8, or 13 (raw)
send() {
	ip netns exec "$LAB_NS" python3 -c '
import socket, struct, sys
kind, count, size, dst, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]

def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff

if kind == "udp123":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 123))
    for _ in range(count):
        s.sendto(b"x" * size, (dst, 9000))
elif kind in ("xmas", "ack"):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    flags = 0x29 if kind == "xmas" else 0x10
    for i in range(count):
        h = struct.pack("!HHIIBBHHH", 40000, 9000, i, 0, 5 << 4, flags, 1024, 0, 0)
        pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(h))
        h = h[:16] + struct.pack("!H", csum(pseudo + h)) + h[18:]
        s.sendto(h, (dst, 0))
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    t = 8 if kind == "echo" else 13
    body = b"\0" * (0 if t == 8 else 12)
    for i in range(count):
        h = struct.pack("!BBHHH", t, 0, 0, 4242, i) + body
        h = h[:2] + struct.pack("!H", csum(h)) + h[4:]
        s.sendto(h, (dst, 0))
' "$1" "$2" "${3:-0}" "$LAB_HOST_IP" "$LAB_PEER_IP"
}

# rule_count RULE COUNTER: one rule's packets of passed or dropped.
rule_count() {
	"$SLUICE" stats "$LAB_HOST" --json |
		jq -r --arg r "$1" ".rules[] | select(.rule == \$r) | .counters.$2.packets"
}

NTP_RULE="0.0.0.0/0 proto udp sport 123 length 200-1500"
XMAS_RULE="0.0.0.0/0 proto tcp tcp-flags ALL/FIN,PSH,URG"
ECHO_RULE="0.0.0.0/0 proto icmp icmp-type 8"

# counts_before RULE: the rule's passed and dropped, and the default's
# passed, into the caller's p0, d0 and dp0, which limited and untouched read.
counts_before() {
	p0=$(rule_count "$1" passed)
	d0=$(rule_count "$1" dropped)
	dp0=$(rule_count default passed)
}

# Sent N since counts_before: passed within the burst and a second's rate,
# the rest dropped, every packet counted.
limited() { # limited RULE N
	local p d
	p=$(($(rule_count "$1" passed) - p0))
	d=$(($(rule_count "$1" dropped) - d0))
	CHECK_DETAIL="passed $p, dropped $d of $2"
	[ "$p" -ge 10 ] && [ "$p" -le 30 ] && [ $((p + d)) -eq "$2" ]
}

# The rule saw none of the N sent since counts_before, and the default passed them all.
untouched() { # untouched RULE N
	local p d dp
	p=$(($(rule_count "$1" passed) - p0))
	d=$(($(rule_count "$1" dropped) - d0))
	dp=$(($(rule_count default passed) - dp0))
	CHECK_DETAIL="rule passed $p dropped $d, default passed $dp of $2"
	[ "$p" -eq 0 ] && [ "$d" -eq 0 ] && [ "$dp" -ge "$2" ]
}

test_reflection() {
	local p0 d0 dp0
	counts_before "$NTP_RULE"
	send udp123 300 1000
	check "300 NTP replies of 1042 bytes from port 123: limited to burst + rate" \
		limited "$NTP_RULE" 300
	counts_before "$NTP_RULE"
	send udp123 300 48
	check "300 NTP packets of 90 bytes from port 123: the default passes them all" \
		untouched "$NTP_RULE" 300
}

test_tcp_flags() {
	local p0 d0 dp0
	counts_before "$XMAS_RULE"
	send xmas 300
	check "300 Christmas-tree segments (FIN+PSH+URG): limited" \
		limited "$XMAS_RULE" 300
	counts_before "$XMAS_RULE"
	send ack 300
	check "300 ACK segments of the same source: not the rule's" \
		untouched "$XMAS_RULE" 300
}

test_icmp_type() {
	local p0 d0 dp0
	counts_before "$ECHO_RULE"
	send echo 300
	check "300 echo requests (ICMP 8): limited" limited "$ECHO_RULE" 300
	counts_before "$ECHO_RULE"
	send timestamp 300
	check "300 timestamp requests (ICMP 13): not the rule's" \
		untouched "$ECHO_RULE" 300
}

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
cat >"$LAB_TMP/match.conf" <<CONF
default rate 100k/s
rule 0.0.0.0/0 rate 10/s burst 10 proto udp sport 123 length 200-1500
rule 0.0.0.0/0 rate 10/s burst 10 proto tcp tcp-flags ALL/FIN,PSH,URG
rule 0.0.0.0/0 rate 10/s burst 10 proto icmp icmp-type 8
CONF
out=$("$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/match.conf" 2>&1)
CHECK_DETAIL=$out
check "attach -f with match classes" test $? = 0
# A first packet each way, so that ARP is done before anything is counted.
ip netns exec "$LAB_NS" ping -c 1 -W 1 "$LAB_HOST_IP" >/dev/null 2>&1
test_reflection
test_tcp_flags
test_icmp_type
"$SLUICE" detach "$LAB_HOST" >/dev/null
lab_finish
