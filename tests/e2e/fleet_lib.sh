# SPDX-License-Identifier: GPL-2.0
# What the fleet's e2e suites share (test_fleet.sh, test_hostile_redis.sh):
# checks and the closing count, the hosts (a veth pair fltvH with sluice on
# the root side, its generator in namespace fltgH), Redis's namespace fltr,
# redis-server there, the agents' reports and hints. Sourced; the caller
# sets SLUICE, FLOOD, NET, R, B, SRC, PASSWORD, TMP and the arrays PIDS and
# PIDS_KEEP, and removes what it made (names_down) however it ends.
passed=0
failed=0

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1${2:+: $2}"; failed=$((failed + 1)); }
# check NAME DETAIL COMMAND...
check() {
	local name=$1 detail=$2
	shift 2
	if "$@" >/dev/null 2>&1; then ok "$name"; else fail "$name" "$detail"; fi
}
# within A B PCT: |A - B| <= PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
# listening ADDR PORT: until something accepts there (a relay or a fake
# Redis just started), 5 s at most.
listening() {
	local i
	for i in $(seq 50); do
		timeout 1 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# Every fixed name this test makes: links, namespaces, pins, agent state.
names_down() {
	local h
	for h in 1 2 3; do
		[ -d "/sys/fs/bpf/sluice/fltv$h" ] && "$SLUICE" detach "fltv$h" >/dev/null 2>&1
		ip link del "fltv$h" 2>/dev/null
		ip netns del "fltg$h" 2>/dev/null
	done
	ip link del fltrv 2>/dev/null
	ip link del fltrw 2>/dev/null
	ip netns del fltr 2>/dev/null
	rm -f /run/sluice/fleet/fltv[123].lock /run/sluice/fleet/fltv[123]
}

# Host h: fltvh (root, 10.231.h.1) <-> fltph (in fltgh, 10.231.h.2).
host_up() {
	local h=$1
	ip netns add "fltg$h" &&
		ip link add "fltv$h" type veth peer name "fltp$h" netns "fltg$h" &&
		sysctl -qw "net.ipv6.conf.fltv$h.disable_ipv6=1" &&
		ip netns exec "fltg$h" sysctl -qw "net.ipv6.conf.fltp$h.disable_ipv6=1" &&
		ip addr add "$NET.$h.1/24" dev "fltv$h" && ip link set "fltv$h" up &&
		ip -n "fltg$h" addr add "$NET.$h.2/24" dev "fltp$h" &&
		ip -n "fltg$h" link set "fltp$h" up && ip -n "fltg$h" link set lo up &&
		"$SLUICE" attach "fltv$h" --rate "$R/s" --burst "$B" >/dev/null
}

# Redis's namespace: fltrv <-> fltrp (10.231.10.x) for hosts 2 and 3, and
# fltrw <-> fltrq (10.231.11.x) for host 1, so one host can be cut off alone.
redis_net_up() {
	ip netns add fltr &&
		ip link add fltrv type veth peer name fltrp netns fltr &&
		ip link add fltrw type veth peer name fltrq netns fltr &&
		ip addr add "$NET.10.1/24" dev fltrv && ip link set fltrv up &&
		ip addr add "$NET.11.1/24" dev fltrw && ip link set fltrw up &&
		ip -n fltr addr add "$NET.10.2/24" dev fltrp && ip -n fltr link set fltrp up &&
		ip -n fltr addr add "$NET.11.2/24" dev fltrq && ip -n fltr link set fltrq up &&
		ip -n fltr link set lo up
}

# redis_start NAME PORT [ARGS...]: a redis-server in fltr, on both addresses.
redis_start() {
	local name=$1 port=$2
	shift 2
	mkdir -p "$TMP/$name"
	ip netns exec fltr redis-server --port "$port" --bind "$NET.10.2 $NET.11.2" \
		--save '' --appendonly no --dir "$TMP/$name" --pidfile "$TMP/redis-$name.pid" \
		--daemonize yes --logfile "$TMP/$name/log" --protected-mode no \
		--user fleet on ">$PASSWORD" "~sluice*" "&*" "+@all" "$@" >/dev/null
	local i
	for i in $(seq 50); do
		ip netns exec fltr redis-cli -h "$NET.10.2" -p "$port" --user fleet --pass "$PASSWORD" \
			--no-auth-warning ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	return 1
}

redis_stop() {
	local pid
	pid=$(cat "$TMP/redis-$1.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
	rm -f "$TMP/redis-$1.pid"
}

# now: CLOCK_BOOTTIME in seconds, the sampler's clock (/proc/uptime reads it).
now() { cut -d' ' -f1 /proc/uptime; }

# flood H PPS SECONDS [SOURCES] [SRC] [OPTIONS...]: the generator of host H,
# in the background.
# The first flood of a batch sets the batch's start and end (FLOOD_T0,
# FLOOD_END), which rate_between's windows are taken from.
flood() {
	local h=$1
	if [ "${#PIDS[@]}" = 0 ]; then
		FLOOD_T0=$(now)
		FLOOD_END=$(awk -v a="$FLOOD_T0" -v d="$3" 'BEGIN { print a + d }')
	fi
	ip netns exec "fltg$h" "$FLOOD" "fltp$h" --dst-mac "$(cat "/sys/class/net/fltv$h/address")" \
		--dst "$NET.$h.1" --dport 9000 --src "${5:-$SRC}" --sources "${4:-1}" \
		--duration "$3" --rate "$2" "${@:6}" >/dev/null 2>>"$TMP/flood.err" &
	PIDS+=($!)
}

floods_wait() {
	local pid
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null; done
	PIDS=()
}

report_field() { awk -v k="$2" '$1 == k { print $2 }' "/run/sluice/fleet/fltv$1" 2>/dev/null; }

agents_stop() {
	local pid
	for pid in "${AGENTS[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	AGENTS=()
}

# worst_ns NAME: the largest of the three agents' reports, in ns as written.
worst_ns() {
	local h m=0 v
	for h in 1 2 3; do
		v=$(report_field "$h" "$1")
		[ -n "$v" ] && [ "$v" -gt "$m" ] && m=$v
	done
	echo "$m"
}

# worst_field NAME: the same in seconds, to the ns (a bound built on it
# must not lose what rounding to the ms would).
worst_field() { awk -v m="$(worst_ns "$1")" 'BEGIN { printf "%.9f", m / 1e9 }'; }

# worst_window FILE SECONDS [FROM TO]: the most passed in any window of
# that length (between the two times, when given), from a sampler's
# "TIME PASSED" lines.
worst_window() {
	awk -v w="$2" -v from="${3:-0}" -v to="${4:-1e18}" '$1 >= from && $1 <= to { n++; t[n] = $1; v[n] = $2 }
		END { best = 0; j = 1
			for (i = 1; i <= n; i++) {
				while (j < n && t[j + 1] - t[i] <= w) j++
				# scale a window a sample or so short of w up to w; a
				# shorter one (the last samples of a run) is no window of w:
				# scaled up, one burst would count ten times
				if (t[j] - t[i] >= w * 0.85) { x = (v[j] - v[i]) * w / (t[j] - t[i]); if (x > best) best = x }
			}
			printf "%d\n", best }' "$1"
}

# wait_up H SECONDS: until host H's agent says it is up again.
wait_up() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ "$(report_field "$1" up)" = 1 ] && return 0
		sleep 0.1
	done
	return 1
}

# same_tag ADDR: an address in 10.231.98.0/24 the agent puts in ADDR's hash
# tag (FNV-1a of the key without its rule, modulo 64, as agent.c names it).
same_tag() {
	python3 -c 'import sys
def tag(a):
    h = 2166136261
    for b in bytes([4, 32, 0, 0]) + bytes(int(x) for x in a.split(".")) + bytes(12):
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h % 64
t = tag(sys.argv[1])
print(next(f"10.231.98.{i}" for i in range(1, 255) if tag(f"10.231.98.{i}") == t))' "$1"
}

# hint_until H: host H's fleet hint's live_until (meter time; 0 once an
# agent stopped cleanly); hint_live H: 1 while it is ahead of the clock.
hint_until() {
	python3 -c 'import json, subprocess, sys
v = json.loads(subprocess.run(["bpftool", "-j", "map", "lookup", "pinned", sys.argv[1], "key", "0", "0", "0", "0"],
	capture_output=True, text=True, check=True).stdout)["value"]
print(int.from_bytes(bytes(int(b, 16) for b in v[:8]), "little"))' "/sys/fs/bpf/sluice/fltv$1/fleet"
}
hint_live() {
	python3 -c 'import sys, time; print(1 if time.monotonic_ns() << 4 < int(sys.argv[1]) else 0)' \
		"$(hint_until "$1")"
}

# exporter_start, then metrics: the exporter's page (its output in $TMP).
exporter_start() {
	"$SLUICE" exporter --listen 127.0.0.1:0 >"$TMP/exporter.out" 2>&1 &
	PIDS_KEEP+=($!)
}
metrics() {
	local addr i
	for i in $(seq 50); do
		addr=$(sed -n 's|^sluice exporter: serving http://\(.*\)/metrics$|\1|p' "$TMP/exporter.out")
		[ -n "$addr" ] && break
		sleep 0.1
	done
	curl -s "http://$addr/metrics"
}

# One run at a time: the names and addresses are fixed. A second run waits
# for the first (two suites on one machine, as a CI beside a developer's
# run), and what a killed run left is removed once the lock is ours (the
# caller's names_down). Exits, with its closing line, when none comes.
fleet_lock() {
	exec 9>/run/sluice-test-fleet.lock
	if ! flock -w 1200 9; then
		echo "FAIL another fleet test has held /run/sluice-test-fleet.lock for 20 minutes"
		echo "0 passed, 1 failed"
		exit 1
	fi
}
