# SPDX-License-Identifier: GPL-2.0
# Sourced by the end-to-end tests: named checks, and a veth pair into a
# network namespace of the test's own that is torn down however the test
# ends (trap on EXIT, INT and TERM).

SLUICE=${SLUICE:-build/sluice}
FLOOD=${FLOOD:-build/sluice-flood}
SINK=${SINK:-build/sluice-sink}

LAB_NS=sluice-e2e-$$
LAB_HOST=slh$$ # the side sluice guards (host namespace)
LAB_PEER=sln$$ # the side the flood comes from (inside LAB_NS)
# A /16 of the run's own, so labs running side by side never hear each other.
LAB_NET=10.$((100 + $$ % 150))
LAB_HOST_IP=$LAB_NET.0.1
LAB_PEER_IP=$LAB_NET.0.2
LAB_SRC_BASE=$LAB_NET.1.0 # flood sources count up from here

# lab_src N: the address N past LAB_SRC_BASE, within its /16.
lab_src() {
	local a b c d x
	IFS=. read -r a b c d <<<"$LAB_SRC_BASE"
	x=$((c * 256 + d + $1))
	echo "$a.$b.$((x / 256)).$((x % 256))"
}
LAB_PORT=9000
LAB_TMP=$(mktemp -d /tmp/sluice-e2e.XXXXXX)
LAB_PIDS=()

checks_passed=0
checks_failed=0

# check NAME COMMAND... : runs COMMAND, records NAME as passed or failed.
check() {
	local name=$1
	shift
	if "$@" >/dev/null; then
		checks_passed=$((checks_passed + 1))
		echo "ok   $name"
	else
		checks_failed=$((checks_failed + 1))
		echo "FAIL $name${CHECK_DETAIL:+: $CHECK_DETAIL}"
	fi
	CHECK_DETAIL=
}

lab_finish() {
	echo "$checks_passed passed, $checks_failed failed"
	[ "$checks_failed" -eq 0 ]
}

lab_down() {
	local pid
	for pid in "${LAB_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	[ -d "/sys/fs/bpf/sluice/$LAB_HOST" ] && "$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
	ip netns del "$LAB_NS" 2>/dev/null
	ip link del "$LAB_HOST" 2>/dev/null
	rm -rf "$LAB_TMP"
}

lab_up() {
	trap 'lab_down' EXIT
	trap 'exit 130' INT TERM
	# No IPv6 on the lab link: router and neighbour chatter would be
	# extra sources and packets in counts the tests compare exactly.
	ip netns add "$LAB_NS" &&
		ip link add "$LAB_HOST" type veth peer name "$LAB_PEER" netns "$LAB_NS" &&
		sysctl -qw "net.ipv6.conf.$LAB_HOST.disable_ipv6=1" &&
		ip netns exec "$LAB_NS" sysctl -qw "net.ipv6.conf.$LAB_PEER.disable_ipv6=1" &&
		ip addr add "$LAB_HOST_IP/16" dev "$LAB_HOST" &&
		ip link set "$LAB_HOST" up &&
		ip -n "$LAB_NS" addr add "$LAB_PEER_IP/16" dev "$LAB_PEER" &&
		ip -n "$LAB_NS" link set "$LAB_PEER" up &&
		ip -n "$LAB_NS" link set lo up
}

# A counter of `sluice stats --json`: stat passed|dropped|would_drop ...
stat() {
	"$SLUICE" stats "$LAB_HOST" --json | jq -r ".counters.$1.packets"
}

# stat_at COUNTER: "SECONDS VALUE", timed at the middle of the read.
stat_at() {
	local t0 v t1
	t0=$(date +%s.%N)
	v=$(stat "$1")
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" -v v="$v" 'BEGIN { printf "%.6f %d\n", (a + b) / 2, v }'
}

# rate_over COUNTER SECONDS: packets per second of a counter over a window.
rate_over() {
	local t0 v0 t1 v1
	read -r t0 v0 < <(stat_at "$1")
	sleep "$2"
	read -r t1 v1 < <(stat_at "$1")
	awk -v a="$t0" -v b="$t1" -v x="$v0" -v y="$v1" 'BEGIN { printf "%d\n", (y - x) / (b - a) }'
}

# Frames the peer could not hand to the host side (its tx_dropped).
peer_tx_dropped() {
	ip netns exec "$LAB_NS" cat "/sys/class/net/$LAB_PEER/statistics/tx_dropped"
}

# sink_start FILE: counts per source on the host address until stopped.
sink_start() {
	: >"$1.err"
	"$SINK" --port "$LAB_PORT" --bind "$LAB_HOST_IP" >"$1" 2>"$1.err" &
	SINK_PID=$!
	LAB_PIDS+=("$SINK_PID")
	local i
	for i in $(seq 50); do
		grep -q ready "$1.err" && return 0
		sleep 0.1
	done
	return 1
}

sink_stop() {
	kill -INT "$SINK_PID" 2>/dev/null
	wait "$SINK_PID" 2>/dev/null
}

# flood_into_sink FILE SOURCES SECONDS PPS: a flood with the sink counting what
# crosses into FILE; prints "SENT SECONDS LOST", LOST being the frames the
# veth ring dropped before sluice saw them.
flood_into_sink() {
	local file=$1 tx0 sent secs
	shift
	sink_start "$file" || return 1
	tx0=$(peer_tx_dropped)
	read -r sent secs < <(flood "$@")
	sleep 0.5
	sink_stop
	echo "$sent $secs $(($(peer_tx_dropped) - tx0))"
}

# flood SOURCES SECONDS PPS [FIRST_SOURCE]: prints "PACKETS SECONDS" as the
# generator measured them. Sources count up from FIRST_SOURCE (LAB_SRC_BASE).
flood() {
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" --dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" \
		--dst "$LAB_HOST_IP" --dport "$LAB_PORT" --src "${4:-$LAB_SRC_BASE}" --sources "$1" \
		--duration "$2" --rate "$3" 2>"$LAB_TMP/flood.err" |
		awk '/^sent/ { print $2, $5 }'
}

# exporter_addr FILE [PID]: the address an exporter writing to FILE serves,
# once it says so (up to 5 s, or until PID exits); empty if it never does.
exporter_addr() {
	local i addr
	for i in $(seq 50); do
		addr=$(sed -n 's|^sluice exporter: serving http://\(.*\)/metrics$|\1|p' "$1")
		[ -n "$addr" ] && break
		[ -n "${2:-}" ] && ! kill -0 "$2" 2>/dev/null && break
		sleep 0.1
	done
	echo "$addr"
}

# A wrapper for the long-running commands, which are checked to stop on
# SIGHUP: its default action, whatever this shell inherited (a run under
# nohup ignores it, and an ignored signal stays ignored across exec). env
# execs the command, so $! is still its PID.
HUP_DEFAULT=(env --default-signal=HUP)

# exporter_start ARGS...: `sluice exporter ARGS` in the background, its output
# in $LAB_TMP/exporter.out; sets EXPORTER_PID and EXPORTER_ADDR, and fails
# when it never says where it serves.
exporter_start() {
	: >"$LAB_TMP/exporter.out"
	"${HUP_DEFAULT[@]}" "$SLUICE" exporter "$@" >"$LAB_TMP/exporter.out" 2>&1 &
	EXPORTER_PID=$!
	LAB_PIDS+=("$EXPORTER_PID")
	EXPORTER_ADDR=$(exporter_addr "$LAB_TMP/exporter.out" "$EXPORTER_PID")
	[ -n "$EXPORTER_ADDR" ]
}

# agent_gone PID: up to 3 s for the agent PID to end; AGENT_RC its exit status.
agent_gone() {
	for _ in $(seq 30); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill "$1" 2>/dev/null && CHECK_DETAIL="still running, stopped by the test"
	wait "$1"
	AGENT_RC=$?
	[ -z "${CHECK_DETAIL:-}" ]
}

# agent_started [WRAPPER...]: an agent on the lab interface (attached if it
# is not), run through WRAPPER (nohup, say) if given, else with SIGHUP's
# default action (HUP_DEFAULT), Redis at a port nobody
# listens on (it runs in fallback), once status shows it: AGENT_PID.
agent_started() {
	local run=("$@")
	[ ${#run[@]} -gt 0 ] || run=("${HUP_DEFAULT[@]}")
	"$SLUICE" status "$LAB_HOST" >/dev/null 2>&1 || "$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	"${run[@]}" "$SLUICE" agent "$LAB_HOST" --redis 127.0.0.1:1 2>"$LAB_TMP/agent.err" &
	AGENT_PID=$!
	for _ in $(seq 50); do
		[ "$("$SLUICE" status "$LAB_HOST" --json | jq -c '.[0].fleet.agent_pid')" = "$AGENT_PID" ] && break
		sleep 0.1
	done
}
