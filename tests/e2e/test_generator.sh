#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Smoke test of sluice-flood: IPv4 and IPv6, UDP and TCP SYN frames sent
# out of the host end of a veth must be accepted by the stack in the
# namespace, as its own SNMP counters (nstat) show: every datagram reaches
# UDP with a good checksum, every SYN is answered with a reset. A second
# source set mixed into the flood must reach every source of both sets as
# often as --help says, counted per source by sluice-sink (IPv4 UDP, sent
# from the namespace) and by nftables set counters in the namespace (the
# rest). No sluice here; the frames cross untouched.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

FRAMES=2000
SOURCES=50
PPS=20000 # paced, so the receiving ring never overflows and counts are exact
PEER_IP6=fd00:250::2
SRC6=fd00:250:1::1 # sources in fd00:250:1:0::/64, fd00:250:1:1::/64, ...
# Second sets: a /24 clear of the main sources, and hosts in a /64 of their
# own inside the peer's route (the SYNs' resets must find their way).
MIX_SRC=$LAB_NET.200.0
MIX_SRC6=fd00:250:ff::1
MIX_SOURCES=7
MIX_EVERY=4
# nstat keeps its last reading in a file: one of our own, not a shared one.
export NSTAT_HISTORY=$LAB_TMP/nstat.history

# Without XDP on the peer, veth delivers XDP_TX frames only with NAPI: GRO on,
# at both ends, as frames go both ways. IPv6 is switched on for the peer
# only: the lab keeps it off elsewhere. The nftables table counts frames to
# LAB_PORT per source address, in a set element of each.
receiver_up() {
	ip netns exec "$LAB_NS" ethtool -K "$LAB_PEER" gro on >/dev/null &&
		ethtool -K "$LAB_HOST" gro on >/dev/null &&
		ip netns exec "$LAB_NS" nft -f - <<-EOF &&
			table inet gen {
				set src4 { type ipv4_addr; flags dynamic; counter; size 65536; }
				set src6 { type ipv6_addr; flags dynamic; counter; size 65536; }
				chain pre {
					type filter hook prerouting priority -300; policy accept;
					meta l4proto { udp, tcp } th dport $LAB_PORT update @src4 { ip saddr }
					meta l4proto { udp, tcp } th dport $LAB_PORT update @src6 { ip6 saddr }
				}
			}
		EOF
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
# An IP layer's receive count leaves out the ICMP the namespace received:
# the generator sends none, but the namespace's own neighbour solicitations
# (for the sources it answers) are multicast and loop back into it.
counter() {
	awk -v n="$1" '$1 == n { v += $2 }
		n == "IpInReceives" && $1 == "IcmpInMsgs" { v -= $2 }
		n == "Ip6InReceives" && $1 == "Icmp6InMsgs" { v -= $2 }
		END { print v + 0 }' "$LAB_TMP/nstat"
}

# accepted LABEL TOTAL COUNTERS -- GEN_ARGS...: the generator must print
# TOTAL alone (--quiet), each of COUNTERS must read exactly TOTAL, and no
# checksum or header error may appear.
accepted() {
	local label=$1 total=$2 sent c want=() errs
	shift 2
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
	check "$label: $total frames sent" test "$sent" = "$total"
	for c in "${want[@]}"; do
		CHECK_DETAIL="$c = $(counter "$c")"
		check "$label: $c counts all $total" test "$(counter "$c")" = "$total"
	done
	# Not ICMP: resets to made-up sources find no neighbour, and the
	# unreachables the namespace then sends itself arrive seconds later, in
	# whichever run is being read. The generator sends no ICMP.
	errs=$(grep -E 'CsumErrors|InErrs|InHdrErrors|InErrors|InDiscards' "$LAB_TMP/nstat" |
		grep -v '^Icmp' | awk '$2 > 0' | tr -s ' ' | tr '\n' ';')
	CHECK_DETAIL=$errs
	check "$label: no checksum or header errors" test -z "$errs"
}

# Each sender --sender names: the default (live frames where the kernel
# takes them) and the packet socket, which stamps the same frames itself.
SENDERS=(auto packet)

test_frames_accepted() {
	local s
	for s in "${SENDERS[@]}"; do
		accepted "$s: IPv4 UDP" "$FRAMES" IpInReceives UdpNoPorts -- \
			--dst "$LAB_PEER_IP" --src "$LAB_SRC_BASE" --sender "$s"
		accepted "$s: IPv4 TCP SYN" "$FRAMES" TcpInSegs TcpOutRsts -- \
			--dst "$LAB_PEER_IP" --src "$LAB_SRC_BASE" --proto tcp-syn --sender "$s"
		accepted "$s: IPv6 UDP" "$FRAMES" Ip6InReceives Udp6NoPorts -- \
			--ipv6 --dst "$PEER_IP6" --src "$SRC6" --v6-prefixes 5 --size 128 --sender "$s"
		accepted "$s: IPv6 TCP SYN" "$FRAMES" TcpInSegs TcpOutRsts -- \
			--ipv6 --dst "$PEER_IP6" --src "$SRC6" --proto tcp-syn --sender "$s"
	done
}

# walk COUNT TOTAL SOURCES MIX_SOURCES EVERY: a mixed run as --help
# describes it, frame by frame: frame f is the second set's if f is a
# multiple of EVERY, and the run ends with the COUNT-th main-set frame
# (--count), or else after TOTAL frames (--duration). Prints "main I N" and
# "mix J N" for each source index I (J) that gets N frames, then
# "frames TOTAL MIXED".
walk() {
	awk -v c="$1" -v t="$2" -v n="$3" -v m="$4" -v k="$5" 'BEGIN {
		for (f = 0; c ? sent < c : f < t; f++)
			if (f % k == 0)
				mix[mixed++ % m]++
			else
				main[sent++ % n]++
		for (i in main)
			print "main", i, main[i]
		for (j in mix)
			print "mix", j, mix[j]
		print "frames", f, mixed
	}'
}

# awk functions for addresses as text that compares: IPv4 to a number and
# back, IPv6 into its 8 groups and back out in full, lower-case hex without
# leading zeros (nft prints the short form).
ADDR_AWK='
function num4(a,  p) { split(a, p, "."); return ((p[1] * 256 + p[2]) * 256 + p[3]) * 256 + p[4] }
function dot4(x) { return sprintf("%d.%d.%d.%d", int(x / 16777216), int(x / 65536) % 256, int(x / 256) % 256, x % 256) }
function hex(s,  v, i) {
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
function groups6(a, g,  c, h, t, hs, ts, nh, nt, i) {
	c = index(a, "::")
	h = c ? substr(a, 1, c - 1) : a
	t = c ? substr(a, c + 2) : ""
	nh = h == "" ? 0 : split(h, hs, ":")
	nt = t == "" ? 0 : split(t, ts, ":")
	for (i = 1; i <= 8; i++)
		g[i] = 0
	for (i = 1; i <= nh; i++)
		g[i] = hex(hs[i])
	for (i = 1; i <= nt; i++)
		g[8 - nt + i] = hex(ts[i])
}
function text6(g,  s, i) {
	s = sprintf("%x", g[1])
	for (i = 2; i <= 8; i++)
		s = s sprintf(":%x", g[i])
	return s
}
function full6(a,  g) { groups6(a, g); return text6(g) }
'

# addresses FAMILY MAIN_BASE PREFIXES MIX_BASE < WALK: "ADDRESS N" for each
# source the walk reaches. IPv6 main source i is in /64 number i mod
# PREFIXES at host i / PREFIXES, second-set source j at host j: the sets
# here are small enough that only the 4th and 8th groups count up.
addresses() {
	awk -v fam="$1" -v base="$2" -v p="$3" -v mbase="$4" "$ADDR_AWK"'
		fam == 4 && $1 == "main" { print dot4(num4(base) + $2), $3 }
		fam == 4 && $1 == "mix" { print dot4(num4(mbase) + $2), $3 }
		fam == 6 && $1 == "main" { groups6(base, g); g[4] += $2 % p; g[8] += int($2 / p); print text6(g), $3 }
		fam == 6 && $1 == "mix" { groups6(mbase, g); g[8] += $2; print text6(g), $3 }'
}

# nft_counts SET: "ADDRESS N" for each source the namespace counted in SET.
nft_counts() {
	ip netns exec "$LAB_NS" nft -j list set inet gen "$1" |
		jq -r '.nftables[].set.elem[]? | "\(.elem.val) \(.elem.counter.packets)"' |
		awk "$ADDR_AWK"'{ print index($1, ":") ? full6($1) : $1, $2 }'
}

# same_counts LABEL WANT GOT: the same "ADDRESS N" lines, in any order.
same_counts() {
	local d
	d=$(diff <(sort "$2") <(sort "$3") | grep '^[<>]' | head -4 | tr '\n' ';')
	CHECK_DETAIL="want <, got >: $d"
	check "$1" test -s "$2" -a -z "$d"
}

# mixed LABEL FAMILY PREFIXES COUNTERS -- GEN_ARGS...: FRAMES main-set frames
# with MIX_SOURCES mixed in every MIX_EVERY, out of the host end: accepted as
# above, and every source of both sets counted in the namespace as often as
# the walk says.
mixed() {
	local label=$1 fam=$2 p=$3 base mbase nset total
	shift 3
	base=$LAB_SRC_BASE mbase=$MIX_SRC nset=src4
	[ "$fam" = 6 ] && base=$SRC6 mbase=$MIX_SRC6 nset=src6
	walk "$FRAMES" 0 "$SOURCES" "$MIX_SOURCES" "$MIX_EVERY" >"$LAB_TMP/walk"
	total=$(awk '$1 == "frames" { print $2 }' "$LAB_TMP/walk")
	addresses "$fam" "$base" "$p" "$mbase" <"$LAB_TMP/walk" >"$LAB_TMP/want"
	ip netns exec "$LAB_NS" nft flush set inet gen "$nset"
	[ "$fam" = 6 ] && set -- "$@" --ipv6 --v6-prefixes "$p"
	accepted "$label" "$total" "$@" --src "$base" --mix-src "$mbase" \
		--mix-sources "$MIX_SOURCES" --mix-every "$MIX_EVERY"
	nft_counts "$nset" >"$LAB_TMP/got"
	same_counts "$label: each source of both sets as often as the walk says" \
		"$LAB_TMP/want" "$LAB_TMP/got"
}

test_mixed_accepted() {
	local s
	for s in "${SENDERS[@]}"; do
		mixed "$s: IPv4 TCP SYN, mixed" 4 - TcpInSegs TcpOutRsts -- \
			--dst "$LAB_PEER_IP" --proto tcp-syn --sender "$s"
		mixed "$s: IPv6 UDP, mixed" 6 5 Ip6InReceives Udp6NoPorts -- \
			--dst "$PEER_IP6" --size 128 --sender "$s"
		mixed "$s: IPv6 TCP SYN, mixed" 6 "$SOURCES" TcpInSegs TcpOutRsts -- \
			--dst "$PEER_IP6" --proto tcp-syn --sender "$s"
	done
}

# flood_to_host ARGS...: sluice-flood from the namespace to the sink's port on
# the host end; stdout in gen.out, stderr in gen.err, exit status printed.
flood_to_host() {
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" \
		--dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" --dst "$LAB_HOST_IP" \
		--dport "$LAB_PORT" --rate "$PPS" "$@" >"$LAB_TMP/gen.out" 2>"$LAB_TMP/gen.err"
	echo $?
}

# into_sink LABEL SOURCES MIX_SOURCES EVERY COUNT TOTAL RATE LIMIT...: a
# mixed IPv4 UDP run at RATE into sluice-sink, LIMIT being --count COUNT, or
# --duration making TOTAL frames. The printed lines must give the walk's
# totals and a time the rate allows for all of them, and the sink must count
# each source of both sets as often as the walk says.
into_sink() {
	local label=$1 n=$2 m=$3 k=$4 count=$5 limit=$6 rate=$7 rc out total mixed secs tx0 lost
	shift 7
	walk "$count" "$limit" "$n" "$m" "$k" >"$LAB_TMP/walk"
	read -r _ total mixed < <(grep '^frames' "$LAB_TMP/walk")
	addresses 4 "$LAB_SRC_BASE" - "$MIX_SRC" <"$LAB_TMP/walk" >"$LAB_TMP/want"
	sink_start "$LAB_TMP/sink" || { check "$label: the sink starts" false; return; }
	tx0=$(peer_tx_dropped)
	rc=$(flood_to_host --src "$LAB_SRC_BASE" --sources "$n" --mix-src "$MIX_SRC" \
		--mix-sources "$m" --mix-every "$k" --rate "$rate" "$@")
	sleep 0.3
	sink_stop
	lost=$(($(peer_tx_dropped) - tx0))
	out=$(cat "$LAB_TMP/gen.out" "$LAB_TMP/gen.err" | tr '\n' ';')

	CHECK_DETAIL="exit $rc: $out"
	check "$label: 'sent' gives $total frames as \$2, seconds as \$5" \
		grep -Eqx "$total [0-9]+\.[0-9]{3}" < <(awk '/^sent/ { print $2, $5 }' "$LAB_TMP/gen.out")
	check "$label: then one line 'mixed $mixed frames from $m sources'" \
		test "$(sed 1d "$LAB_TMP/gen.out")" = "mixed $mixed frames from $m sources"
	# Pacing sleeps until the last frame sent is due: printed to 1 ms.
	secs=$(awk '/^sent/ { print $5 }' "$LAB_TMP/gen.out")
	check "$label: paced over both sets, $total frames at $rate/s" \
		awk -v s="${secs:-0}" -v t="$total" -v r="$rate" 'BEGIN { exit !(s >= t / r - 0.0005) }'
	CHECK_DETAIL="$lost frames"
	check "$label: no frame lost in the veth ring" test "$lost" = 0
	grep -E '^[0-9]+\.' "$LAB_TMP/sink" >"$LAB_TMP/got"
	same_counts "$label: the sink sees each source of both sets as often as the walk says" \
		"$LAB_TMP/want" "$LAB_TMP/got"
	CHECK_DETAIL=$(grep '^total' "$LAB_TMP/sink")
	check "$label: the sink's total is the $total sent" \
		test "$(awk '/^total/ { print $2 }' "$LAB_TMP/sink")" = "$total"
}

# With --count the last frame is always a main one, whatever frame the
# second set started at. Only a total limit of one past a multiple of K
# (here 9 = 50/s x 0.18 s, with 20 ms to spare) shows the second set
# starting at frame 0.
test_mixed_into_sink() {
	into_sink "1000 sources once, 10 mixed every 5th" 1000 10 5 1000 0 "$PPS" --count 1000
	into_sink "300 sources wrapping, 7 mixed every 3rd" 300 7 3 1000 0 "$PPS" --count 1000
	into_sink "9 frames by --rate x --duration, every 4th mixed" 40 6 4 0 9 50 \
		--duration 0.18
}

# Bad second-set options, each on top of a command line that would flood the
# sink: exit 2, one line on stderr naming the fault, nothing on stdout, and
# nothing sent. Each case is "WHAT|WORDS IN THE ERROR|OPTIONS".
MIX_REFUSALS=(
	"--mix-src alone|missing --mix-sources|--mix-src 10.9.0.0"
	"--mix-sources alone|missing --mix-src|--mix-sources 5"
	"--mix-every alone|missing --mix-src|--mix-every 5"
	"no --mix-every|missing --mix-every|--mix-src 10.9.0.0 --mix-sources 5"
	"--mix-sources 0|--mix-sources: '0'|--mix-src 10.9.0.0 --mix-sources 0 --mix-every 5"
	"--mix-sources 2^32|--mix-sources: '4294967296'|--mix-src 10.9.0.0 --mix-sources 4294967296 --mix-every 5"
	"--mix-every 1|--mix-every: '1'|--mix-src 10.9.0.0 --mix-sources 5 --mix-every 1"
	"--mix-every 0|--mix-every: '0'|--mix-src 10.9.0.0 --mix-sources 5 --mix-every 0"
	"--mix-every 2.5|--mix-every: '2.5'|--mix-src 10.9.0.0 --mix-sources 5 --mix-every 2.5"
	"--mix-src not an address|--mix-src: '10.9.0'|--mix-src 10.9.0 --mix-sources 5 --mix-every 5"
	"IPv6 --mix-src without --ipv6|IPv6 needs --ipv6|--mix-src fd00::1 --mix-sources 5 --mix-every 5"
	"IPv4 --mix-src with --ipv6|an IPv6 address|--ipv6 --dst fd00::2 --mix-src 10.9.0.0 --mix-sources 5 --mix-every 5"
	"IPv4 set past 255.255.255.255|past the end of the address space|--mix-src 255.255.255.250 --mix-sources 7 --mix-every 5"
	"IPv6 set past its /64|past the end of its /64|--ipv6 --dst fd00::2 --mix-src fd00::ffff:ffff:ffff:fffa --mix-sources 7 --mix-every 5"
	"--count plus mixed frames past 2^64|2^64|--count 9223372036854775808 --mix-src 10.9.0.0 --mix-sources 5 --mix-every 2"
)

test_mix_refusals() {
	local c what words opts rc
	sink_start "$LAB_TMP/sink" || { check "bad mix options: the sink starts" false; return; }
	for c in "${MIX_REFUSALS[@]}"; do
		IFS='|' read -r what words opts <<<"$c"
		# shellcheck disable=SC2086 # opts is a list of words
		rc=$(flood_to_host --sources 10 --count 5 $opts)
		CHECK_DETAIL="exit $rc: $(cat "$LAB_TMP/gen.out" "$LAB_TMP/gen.err" | tr '\n' ';')"
		check "bad mix options, $what: exit 2, one line saying '$words', no output" \
			test "$rc" = 2 -a "$(wc -l <"$LAB_TMP/gen.err")" = 1 -a ! -s "$LAB_TMP/gen.out" \
			-a "$(grep -cF -- "$words" "$LAB_TMP/gen.err")" = 1
	done
	sleep 0.3
	sink_stop
	CHECK_DETAIL=$(grep '^total' "$LAB_TMP/sink")
	check "bad mix options: nothing reached the sink" \
		test "$(awk '/^total/ { print $2 }' "$LAB_TMP/sink")" = 0
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
	check "--sender bogus is bad input: exit 2, one line naming it" \
		test "$(exit_code "$FLOOD" "$LAB_HOST" --dst-mac $mac --dst 10.0.0.1 --sources 1 \
			--sender bogus)" = 2 -a "$(wc -l <"$LAB_TMP/gen.err")" = 1 \
		-a "$(grep -c -- "--sender: 'bogus'" "$LAB_TMP/gen.err")" = 1
}

# --sender live sends with live frames or not at all: where the kernel or
# the device refuses them, one line says which, exit 1, and nothing went out.
test_live_or_nothing() {
	local rc
	ip netns exec "$LAB_NS" nstat -n
	rc=$(exit_code gen --dst "$LAB_PEER_IP" --src "$LAB_SRC_BASE" --sender live)
	sleep 0.3
	ip netns exec "$LAB_NS" nstat >"$LAB_TMP/nstat"
	CHECK_DETAIL="exit $rc: $(tr '\n' ';' <"$LAB_TMP/gen.err"), IpInReceives $(counter IpInReceives)"
	if [ "$rc" = 0 ]; then
		check "--sender live: the kernel takes live frames, and all went out" \
			test "$(counter IpInReceives)" = "$FRAMES"
	else
		check "--sender live: refused in one line saying why, exit 1, nothing sent" \
			test "$rc" = 1 -a "$(wc -l <"$LAB_TMP/gen.err")" = 1 \
			-a "$(grep -cE 'refuses live XDP frames|cannot transmit XDP frames' \
				"$LAB_TMP/gen.err")" = 1 -a "$(counter IpInReceives)" = 0
	fi
}

lab_up && receiver_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
test_frames_accepted
test_mixed_accepted
test_mixed_into_sink
test_refusals
test_live_or_nothing
test_mix_refusals
lab_finish
