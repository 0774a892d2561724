#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Side-by-side benchmark (make bench-compare): the same flood, on the same
# veth path, against each contender in turn; every packet a contender
# passes is then dropped in raw PREROUTING, so all of them end the same way.
#
#   generator (netns GEN, pinned to one CPU) --veth--> receiver (netns RX)
#     RX: contender, then iptables -t raw PREROUTING -j DROP (counted)
#
# XDP_TX frames from BPF_PROG_TEST_RUN are received by the veth's NAPI on
# the generator's CPU, in softirq: that CPU's softirq time in /proc/stat is
# the receiver's CPU time. For XDP contenders a second, short flood with
# kernel.bpf_stats_enabled=1 gives the program's own ns/packet (kept apart
# because the accounting itself costs a few tens of ns per packet).
#
# The machine is shared, so the CPU time the flood actually got is also
# recorded: the generator's own (which includes the NAPI work run on its
# time) plus that CPU's ksoftirqd. Packets per CPU-second is then what
# one whole core would handle, whoever else ran on it meanwhile.
#
# Writes results.csv (every run), results.md (medians) and pps.png into
# the output directory (default: this script's directory).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tools/bench
SLUICE=$ROOT/build/sluice
FLOOD=$ROOT/build/sluice-flood
DROP_OBJ=$ROOT/build/bench.bpf.o # its bare_drop program is the XDP_DROP contender
FLOOR_OBJ=$ROOT/build/floor.bpf.o # the floor contenders' programs
JIT_LINES=$ROOT/build/sluice-jit-lines

RUNS=3
SECONDS_PER_RUN=5
STATS_SECONDS=2
SCENARIOS="a f n b c d e s"
CONTENDERS="none hashlimit nft xdp_drop sluice"
OUT=$HERE
PERF= # --perf: a cpu-clock profile of each measured flood

NS_GEN=sluice-bench-gen-$$
NS_RX=sluice-bench-rx-$$
GEN_IF=sbg$$
RX_IF=sbr$$
RX_IP4=10.0.0.1
RX_IP6=fd00:252::1
SRC4=10.128.0.0 # 1,000,000 sources reach 10.143.66.63
# 10,000,000 sources need more than 10/8 has left: 11.0.0.0 to 11.152.150.127.
# They never leave the lab's veth pair, and nothing routes them: every
# packet a contender passes is dropped in raw PREROUTING, before routing.
SRC4_SPOOF=11.0.0.0
SRC6=fd00:77::1
TABLE=1048576 # entries in every contender's table
CPU= # default: the least busy CPU when the benchmark starts
TICK_NS=$((1000000000 / $(getconf CLK_TCK)))
TMP=$(mktemp -d /tmp/sluice-bench.XXXXXX)
STATS_WAS=$(cat /proc/sys/kernel/bpf_stats_enabled)
FLOOD_PID=

usage() {
	cat <<EOF
Usage: tools/bench/run.sh [--runs N] [--seconds S] [--scenarios "a b ..."]
                          [--contenders "none hashlimit ..."] [--cpu N] [--out DIR]
                          [--perf]

Runs every scenario against every contender N times (default $RUNS) for S
seconds each (default $SECONDS_PER_RUN; scenario s sends each of its sources
once instead), with the generator pinned to CPU N (default: the one least
busy over a second's sample), and writes results.csv,
results.md and pps.png into DIR (default tools/bench). With --perf, also a
cpu-clock profile of the generator's CPU during each measured flood, its
busiest functions in DIR/profile.txt and the XDP program's busiest source
lines in DIR/profile-lines.txt (perf from linux-perf; sampling costs a
little, so keep it out of runs whose figures you publish). Needs root, a built tree
('make'), and iptables, nftables, ethtool, gnuplot-nox, bpftool, jq.

Scenarios: a 1 source far over its limit (10/s); f the same at 1000/s,
whose wait is under a tick, so sluice reads the precise clock for every
packet (issue 35's a′); n the source of a, banned by sluice's penalty box
(--ban-after 100/10s, earned before the warm-up; hashlimit and nft have no
penalty box and skip it); b 10,000 sources over their limits; c 1,000,000 sources at 1/s each; d IPv6, 1,000,000 addresses in
1,000 /64s, limited per /64; e byte rate, 1,000 sources; s 10,000,000
spoofed sources, one packet each, into each contender's default table
(sluice: only --rate).
Contenders: none (stack, raw DROP only), hashlimit, nft, xdp_drop, sluice;
and, only when named, the floors: XDP programs that do only the work any
exact per-source limiter must do, then drop (one passes): floor_parse (the headers
read), floor_clock (and the precise clock), floor_table (and the source's
key placed as the datapath places it, one line of an array the default
source table's size), floor_meter (that line and the precise clock),
floor_filter (the key placed, one word of a filter of tracked sources the
size of the default table's, and the early clock: refusing a forged source
past a new-source budget, for s), floor_jiffies (that line, and the
precise clock only in the ticks before each moment of a source at 10/s
that the jiffies cannot rule out: refusing a source far over 10/s exactly,
for a), floor_moments (the same for many sources, each one's moment in 16
bytes of an array with a slot per IPv4 way of sluice's over-limit cache:
for b), floor_pass (floor_meter's work, then the packet passed, as a packet
on time must be: for c, where every packet is).
EOF
}

# ---- scenarios --------------------------------------------------------------

# Sets the scenario's flood and limit: KEYS limited entities, RATE/BURST in
# packets (or bytes with UNIT=bytes), L3 bytes per packet. SPOOFED: every
# source is new to the contender (no warm-up pass) and sends one packet, and
# sluice keeps its default table and new-source budget.
scenario() {
	FAMILY=4 UNIT=packets SIZE=64 RATE=10 BURST=10 SRC=$SRC4 SPOOFED= BAN=
	case $1 in
	a) SOURCES=1 KEYS=1 DESC="1 source far over its limit" ;;
	f) SOURCES=1 KEYS=1 RATE=1000 DESC="1 source far over 1000/s (a′: its moment within a tick)" ;;
	n) SOURCES=1 KEYS=1 BAN=1 DESC="1 source banned (--ban-after), far over its limit" ;;
	b) SOURCES=10000 KEYS=10000 DESC="10,000 sources over their limits" ;;
	c) SOURCES=1000000 KEYS=1000000 RATE=1 BURST=1 DESC="1,000,000 sources at 1/s each" ;;
	d) FAMILY=6 SIZE=70 SOURCES=1000000 KEYS=1000 DESC="IPv6: 1,000,000 addresses in 1,000 /64s" ;;
	e) SOURCES=1000 KEYS=1000 SIZE=512 UNIT=bytes RATE=10240 BURST=10240
	   DESC="byte rate: 1,000 sources, 10 KiB/s each" ;;
	s) SOURCES=10000000 KEYS=10000000 SRC=$SRC4_SPOOF SPOOFED=1
	   DESC="10,000,000 spoofed sources, one packet each, default tables" ;;
	*) return 1 ;;
	esac
	L3=$((SIZE - 14))
	# Live frames only: a packet socket would time the generator, not the contender.
	FLOOD_ARGS=(--sources "$SOURCES" --size "$SIZE" --sender live)
	if [ "$FAMILY" = 6 ]; then
		FLOOD_ARGS+=(--ipv6 --dst "$RX_IP6" --src "$SRC6" --v6-prefixes "$KEYS")
	else
		FLOOD_ARGS+=(--dst "$RX_IP4" --src "$SRC")
	fi
	MEASURED=(--duration "$SECONDS_PER_RUN")
	[ -n "$SPOOFED" ] && MEASURED=(--count "$SOURCES")
	return 0
}

# ---- the lab ------------------------------------------------------------------

rx() { ip netns exec "$NS_RX" "$@"; }
# sluice pins under /sys/fs/bpf: enter only the network namespace.
rx_net() { nsenter --net="/run/netns/$NS_RX" "$@"; }
gen() { ip netns exec "$NS_GEN" "$@"; }

lab_down() {
	[ -n "$FLOOD_PID" ] && kill "$FLOOD_PID" 2>/dev/null
	[ -n "${PERF_PID:-}" ] && kill -INT "$PERF_PID" 2>/dev/null
	[ -d "/sys/fs/bpf/sluice/$RX_IF" ] && rx_net "$SLUICE" detach "$RX_IF" >/dev/null 2>&1
	[ -d "/sys/fs/bpf/sluice/$RX_IF" ] && "$SLUICE" detach "$RX_IF" >/dev/null 2>&1
	# The namespaces take the veth pair, XDP programs, rules and sets with them.
	ip netns del "$NS_GEN" 2>/dev/null
	ip netns del "$NS_RX" 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	rm -rf "$TMP"
}

# The final raw DROP, for both families: what it counts is what was passed.
raw_drop() {
	local ipt
	for ipt in iptables ip6tables; do
		rx "$ipt" -t raw -A PREROUTING -i "$RX_IF" -m comment --comment sluice-bench-passed \
			-j DROP || return 1
	done
}

lab_up() {
	trap lab_down EXIT
	trap 'exit 130' INT TERM
	ip netns add "$NS_GEN" && ip netns add "$NS_RX" &&
		ip link add "$GEN_IF" netns "$NS_GEN" type veth peer name "$RX_IF" netns "$NS_RX" &&
		gen sysctl -qw "net.ipv6.conf.$GEN_IF.disable_ipv6=1" &&
		ip -n "$NS_GEN" addr add 10.0.0.2/8 dev "$GEN_IF" &&
		ip -n "$NS_RX" addr add "$RX_IP4/8" dev "$RX_IF" &&
		ip -n "$NS_RX" addr add "$RX_IP6/64" dev "$RX_IF" nodad &&
		ip -n "$NS_GEN" link set "$GEN_IF" up && ip -n "$NS_RX" link set "$RX_IF" up &&
		rx ethtool -K "$RX_IF" gro on >/dev/null &&
		raw_drop || return 1
	RX_MAC=$(rx cat "/sys/class/net/$RX_IF/address")
}

# ---- contenders ---------------------------------------------------------------
# setup_X prints nothing and fails with SKIP set when X cannot express the
# scenario. Every contender gets TABLE entries, RATE and BURST.

setup_none() { :; }
teardown_none() { :; }

ipt_for_family() { [ "$FAMILY" = 6 ] && echo ip6tables || echo iptables; }

# A penalty box is sluice's alone: the others would only run scenario a again.
no_ban() {
	[ -z "$BAN" ] && return 0
	SKIP="no penalty box"
	return 1
}

setup_hashlimit() {
	local rate="$RATE/sec" burst=$BURST mask=()
	no_ban || return 1
	if [ "$UNIT" = bytes ]; then
		rate="$((RATE / 1024))kb/s" burst="$((BURST / 1024))kb"
	fi
	[ "$FAMILY" = 6 ] && mask=(--hashlimit-srcmask 64)
	rx "$(ipt_for_family)" -t raw -I PREROUTING 1 -i "$RX_IF" -m hashlimit \
		--hashlimit-mode srcip "${mask[@]}" --hashlimit-above "$rate" \
		--hashlimit-burst "$burst" --hashlimit-name "sb$RUN_ID" \
		--hashlimit-htable-size "$TABLE" --hashlimit-htable-max "$TABLE" \
		--hashlimit-htable-expire 10000 --hashlimit-htable-gcinterval 1000 -j DROP
}

teardown_hashlimit() { rx "$(ipt_for_family)" -t raw -D PREROUTING 1; }

nft_family() { [ "$FAMILY" = 6 ] && echo ip6 || echo ip; }

# A dynamic set with a limit per element, in a chain ahead of raw (-300).
setup_nft() {
	local key="ip saddr" type=ipv4_addr limit="$RATE/second burst $BURST packets"
	no_ban || return 1
	if [ "$FAMILY" = 6 ]; then
		key="ip6 saddr & ffff:ffff:ffff:ffff::" type=ipv6_addr
	fi
	[ "$UNIT" = bytes ] &&
		limit="$((RATE / 1024)) kbytes/second burst $((BURST / 1024)) kbytes"
	rx nft -f - <<-EOF
		table $(nft_family) sluice_bench {
			set sources {
				type $type; size $TABLE; flags dynamic,timeout; timeout 10s;
			}
			chain prerouting {
				type filter hook prerouting priority -350; policy accept;
				iifname "$RX_IF" update @sources { $key limit rate over $limit } drop
			}
		}
	EOF
}

teardown_nft() { rx nft delete table "$(nft_family)" sluice_bench; }

setup_xdp_drop() {
	ip -n "$NS_RX" link set dev "$RX_IF" xdpdrv obj "$DROP_OBJ" sec xdp program bare_drop
}

teardown_xdp_drop() { ip -n "$NS_RX" link set dev "$RX_IF" xdpdrv off; }

# The floors (tools/bench/floor.bpf.c): what any exact per-source limiter must do.
setup_floor() {
	ip -n "$NS_RX" link set dev "$RX_IF" xdpdrv obj "$FLOOR_OBJ" sec xdp.frags program "floor_$1"
}
teardown_floor() { teardown_xdp_drop; }
setup_floor_parse() { setup_floor parse; }
setup_floor_clock() { setup_floor clock; }
setup_floor_table() { setup_floor table; }
setup_floor_meter() { setup_floor meter; }
setup_floor_filter() { setup_floor filter; }
setup_floor_jiffies() { setup_floor jiffies; }
setup_floor_pass() { setup_floor pass; }
setup_floor_moments() { setup_floor moments; }
teardown_floor_parse() { teardown_floor; }
teardown_floor_clock() { teardown_floor; }
teardown_floor_table() { teardown_floor; }
teardown_floor_meter() { teardown_floor; }
teardown_floor_filter() { teardown_floor; }
teardown_floor_jiffies() { teardown_floor; }
teardown_floor_pass() { teardown_floor; }
teardown_floor_moments() { teardown_floor; }

# The other scenarios admit every new source at once, into a table the size
# of the others'; a spoofed flood meets the defaults (1,000,000 sources,
# 10k/s new ones, the rest metered by the overflow bucket), whose burst is
# one second of rate: BURST here.
setup_sluice() {
	local rate="$RATE/s" burst="$BURST"
	if [ -n "$SPOOFED" ]; then
		rx_net "$SLUICE" attach "$RX_IF" --rate "$rate" --mode native >/dev/null
		return
	fi
	if [ "$UNIT" = bytes ]; then
		rate="${RATE}B/s"
		burst="${BURST}B"
	fi
	rx_net "$SLUICE" attach "$RX_IF" --rate "$rate" --burst "$burst" \
		--max-sources "$TABLE" --new-sources 16M/s --mode native >/dev/null || return 1
	[ -n "$BAN" ] && sluice_ban
	return 0
}

# Scenario n: a second of the flood earns the source its ban, for an hour;
# the setup fails unless deny list shows it.
sluice_ban() {
	rx_net "$SLUICE" set "$RX_IF" --ban-after 100/10s --ban-for 1h >/dev/null &&
		flood --duration 1 >/dev/null &&
		[ "$(rx_net "$SLUICE" deny list "$RX_IF" --json | jq '[.[] | objects | select(.ban)] | length')" -ge 1 ] ||
		{ echo "the source was not banned" >&2; return 1; }
}

teardown_sluice() { rx_net "$SLUICE" detach "$RX_IF" >/dev/null; }

# ---- one run ------------------------------------------------------------------

softirq_ticks() { awk -v c="cpu$CPU" '$1 == c { print $8 }' /proc/stat; }
# User plus system ticks of the generator CPU's ksoftirqd.
ksoftirqd_ticks() { awk '{ print $14 + $15 }' "/proc/$KSOFTIRQD/stat"; }
tx_dropped() { gen cat "/sys/class/net/$GEN_IF/statistics/tx_dropped"; }

# flood --duration S | --count N: prints "SENT ELAPSED CPU" as the generator
# measured them.
flood() {
	gen taskset -c "$CPU" "$FLOOD" "$GEN_IF" --dst-mac "$RX_MAC" "${FLOOD_ARGS[@]}" \
		"$@" 2>"$TMP/flood.err" >"$TMP/flood.out" &
	FLOOD_PID=$!
	wait "$FLOOD_PID"
	FLOOD_PID=
	awk '/^sent/ { print $2, $5, $10 }' "$TMP/flood.out"
}

passed_count() {
	{ rx iptables-save -c -t raw; rx ip6tables-save -c -t raw; } |
		awk '/sluice-bench-passed/ { sub(/^\[/, ""); sub(/:.*/, ""); n += $0 } END { print n + 0 }'
}

reset_counters() { rx iptables -t raw -Z PREROUTING && rx ip6tables -t raw -Z PREROUTING; }

prog_stats() {
	bpftool prog show id "$1" --json | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'
}

# The id of the XDP program attached at the receiving end; empty when none is.
xdp_prog_id() {
	ip -j -n "$NS_RX" link show dev "$RX_IF" | jq -r '.[0].xdp.prog.id // empty'
}

# The attached XDP program's own ns/packet over a short flood with
# bpf_stats on; empty when no XDP program is attached.
xdp_ns() {
	local id t0 c0 t1 c1
	id=$(xdp_prog_id)
	[ -n "$id" ] || return 0
	sysctl -qw kernel.bpf_stats_enabled=1
	read -r t0 c0 < <(prog_stats "$id")
	flood --duration "$STATS_SECONDS" >/dev/null
	read -r t1 c1 < <(prog_stats "$id")
	sysctl -qw kernel.bpf_stats_enabled="$STATS_WAS"
	awk -v t=$((t1 - t0)) -v c=$((c1 - c0)) 'BEGIN { if (c > 0) printf "%.1f", t / c }'
}

perf_start() {
	perf record -q -e cpu-clock -C "$CPU" -o "$TMP/perf.data" 2>/dev/null &
	PERF_PID=$!
	sleep 0.2
}

# The profile's busiest functions, as shares of the CPU's busy time.
perf_stop() {
	kill -INT "$PERF_PID" 2>/dev/null
	wait "$PERF_PID"
	PERF_PID=
	echo "== scenario $SCN ($DESC), $1, run $REP" >>"$OUT/profile.txt"
	perf report -i "$TMP/perf.data" --no-children --sort sym --stdio 2>/dev/null |
		awk '/^ *[0-9.]+%/ { sub(/%/, "", $1); if ($0 ~ /safe_halt|default_idle|cpu_idle/) idle += $1
			else { n++; pct[n] = $1; $1 = ""; $2 = ""; sym[n] = $0 } }
		     END { for (i = 1; i <= n && i <= 15; i++)
			printf "%6.1f%%  %s\n", pct[i] * 100 / (100 - idle), sym[i] }' >>"$OUT/profile.txt"
	perf_lines "$1"
}

# The attached XDP program's busiest source lines (sluice-jit-lines), as
# shares of every sample, idle included, into DIR/profile-lines.txt; then
# each of its functions with 50 samples or more (the main one and the
# global functions it calls) on its own, as shares of that function's
# samples, so a line inlined in several is told apart by its caller.
perf_lines() {
	local id fn lines
	id=$(xdp_prog_id)
	[ -n "$id" ] || return 0
	echo "== scenario $SCN ($DESC), $1, run $REP" >>"$OUT/profile-lines.txt"
	perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null >"$TMP/samples.txt"
	awk '{ print $1 }' "$TMP/samples.txt" | "$JIT_LINES" "$id" 30 >>"$OUT/profile-lines.txt" 2>&1
	for fn in $(awk '$2 ~ /^bpf_prog_/ { n[$2]++ } END { for (f in n) if (n[f] >= 50) print n[f], f }' \
		"$TMP/samples.txt" | sort -rn | awk '{ print $2 }'); do
		# The generator's program and other programs' functions place nothing.
		lines=$(awk -v f="$fn" '$2 == f { print $1 }' "$TMP/samples.txt" | "$JIT_LINES" "$id" 15 2>&1)
		case $lines in *"  0.0% of "*) continue ;; esac
		printf -- '-- %s alone\n%s\n' "$fn" "$lines" >>"$OUT/profile-lines.txt"
	done
}

csv_row() {
	echo "$REP,$SCN,$1,$2,$KEYS,$RATE,$BURST,$UNIT,$L3,${3:-},${4:-},${5:-},${6:-},${7:-},${8:-},${9:-}" >>"$CSV"
}

# One pass over every source, unmeasured, so that each contender's table
# holds all of them; then a pause of one burst's worth of time, which fills
# every bucket again, so that what each key may pass is exactly
# burst + rate x time.
warm_up() {
	flood --count "$SOURCES" >/dev/null
	sleep "$(awk -v b="$BURST" -v r="$RATE" 'BEGIN { print b / r + 0.5 }')"
}

# measure CONTENDER: one flood, with counters read around it. After a warm
# up the figures are the steady state of a sustained flood (what a new
# source costs is in the microbenchmark); a spoofed flood has none, since
# what it measures is every source being new.
measure() {
	local tx0 cpu0 ksi0 sent elapsed gen_cpu handled softirq ksi passed xns cpu
	[ -n "$SPOOFED" ] || warm_up
	reset_counters || return 1
	tx0=$(tx_dropped)
	cpu0=$(softirq_ticks)
	ksi0=$(ksoftirqd_ticks)
	[ -n "$PERF" ] && perf_start
	read -r sent elapsed gen_cpu < <(flood "${MEASURED[@]}")
	[ -n "$PERF" ] && perf_stop "$1"
	softirq=$(($(softirq_ticks) - cpu0))
	ksi=$(($(ksoftirqd_ticks) - ksi0))
	handled=$((${sent:-0} - ($(tx_dropped) - tx0)))
	passed=$(passed_count)
	if [ -z "$sent" ] || [ "$sent" = 0 ]; then
		csv_row "$1" "failed: $(head -c 200 "$TMP/flood.err" | tr ',\n' '; ')"
		return 0
	fi
	xns=$(xdp_ns)
	cpu=$(awk -v g="$gen_cpu" -v k=$((ksi * TICK_NS)) 'BEGIN { printf "%.3f", g + k / 1e9 }')
	csv_row "$1" ok "$sent" "$handled" "$elapsed" "$passed" "$((softirq * TICK_NS))" "$cpu" "$xns"
	awk -v c="$1" -v h="$handled" -v e="$elapsed" -v p="$passed" -v cpu="$cpu" \
		-v s=$((softirq * TICK_NS)) -v x="$xns" 'BEGIN {
		printf "  %-11s %9.0f pps handled (%9.0f per CPU-second), %9d passed, " \
		       "softirq %4.0f ns/packet%s\n", c, h / e, h / cpu, p, s / h,
		       x == "" ? "" : ", XDP program " x " ns/packet" }'
}

run_one() {
	local c=$1
	SKIP=
	RUN_ID=$((RUN_ID + 1))
	if ! "setup_$c" 2>"$TMP/setup.err"; then
		if [ -n "$SKIP" ]; then
			csv_row "$c" "skipped: $SKIP"
			echo "  $c: skipped ($SKIP)"
		else
			csv_row "$c" "failed: $(head -c 200 "$TMP/setup.err" | tr ',\n' '; ')"
			echo "  $c: setup failed: $(cat "$TMP/setup.err")"
		fi
		return
	fi
	measure "$c"
	"teardown_$c" || echo "  $c: teardown failed" >&2
}

# The contenders in a different order each repetition, so drift spreads out.
rotated() {
	local -a list
	read -r -a list <<<"$CONTENDERS"
	local i n=${#list[@]}
	for ((i = 0; i < n; i++)); do
		echo "${list[$(((i + REP - 1) % n))]}"
	done
}

# ---- checks and main ------------------------------------------------------------

# The CPU with the most idle time over one second: others share this machine.
least_busy_cpu() {
	local before
	before=$(grep '^cpu[0-9]' /proc/stat)
	sleep 1
	paste <(echo "$before") <(grep '^cpu[0-9]' /proc/stat) |
		awk '{ idle = $16 - $5; if (best == "" || idle > most) { most = idle; best = $1 } }
		     END { sub(/^cpu/, "", best); print best }'
}

# Says which Debian package provides each missing command.
check_tools() {
	local missing="" pair
	for pair in ip:iproute2 iptables:iptables ip6tables:iptables iptables-save:iptables \
		nft:nftables ethtool:ethtool gnuplot:gnuplot-nox bpftool:bpftool jq:jq \
		taskset:util-linux nsenter:util-linux; do
		command -v "${pair%%:*}" >/dev/null || missing+=" ${pair%%:*} (package ${pair#*:})"
	done
	[ -n "$PERF" ] && ! command -v perf >/dev/null && missing+=" perf (package linux-perf)"
	if [ -n "$missing" ]; then
		echo "bench: missing:$missing" >&2
		echo "bench: 'make bench-deps' installs them (BENCH_PACKAGES in the Makefile)" >&2
		return 1
	fi
	for f in "$SLUICE" "$FLOOD" "$DROP_OBJ" "$FLOOR_OBJ"; do
		[ -e "$f" ] || { echo "bench: $f is missing: run 'make' first" >&2; return 1; }
	done
}

parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--runs) RUNS=$2 ;;
		--seconds) SECONDS_PER_RUN=$2 ;;
		--scenarios) SCENARIOS=$2 ;;
		--contenders) CONTENDERS=$2 ;;
		--cpu) CPU=$2 ;;
		--perf) PERF=1; shift; continue ;;
		--out) OUT=$2 ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
		esac
		shift 2 || { usage >&2; exit 2; }
	done
}

main() {
	parse_args "$@"
	[ "$(id -u)" = 0 ] || { echo "bench: needs root" >&2; exit 1; }
	check_tools || exit 1
	mkdir -p "$OUT"
	CSV=$OUT/results.csv
	[ -n "$PERF" ] && : >"$OUT/profile.txt" && : >"$OUT/profile-lines.txt"
	CPU=${CPU:-$(least_busy_cpu)}
	KSOFTIRQD=$(pgrep -x "ksoftirqd/$CPU")
	lab_up || { echo "bench: cannot build the veth lab" >&2; exit 1; }
	echo "rep,scenario,contender,status,keys,rate,burst,unit,l3_bytes,sent,handled,elapsed_s,passed,softirq_ns,cpu_s,xdp_ns_per_packet" >"$CSV"
	echo "# generator and receiver softirq on CPU $CPU; $RUNS runs x $SECONDS_PER_RUN s" \
		"(scenario s: each source once)"
	RUN_ID=0
	for ((REP = 1; REP <= RUNS; REP++)); do
		for SCN in $SCENARIOS; do
			scenario "$SCN" || { echo "bench: no scenario '$SCN'" >&2; exit 2; }
			echo "run $REP/$RUNS, scenario $SCN: $DESC"
			for c in $(rotated); do
				run_one "$c"
			done
		done
	done
	"$HERE/summarize.sh" "$CSV" "$OUT"
}

main "$@"
