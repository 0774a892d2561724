#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fleet agent against a broken or malicious Redis (docs/fleet.md, "When
# Redis is unreachable, slow or wrong"): a fake Redis (fake_redis.py) in
# namespace fltr answers each way an attacker might, and the real agent on
# host 1 (test_fleet.sh's fltv1, its helpers in fleet_lib.sh) must fall back
# in bounded time, count the right error kind, stay within a memory and CPU
# bound and end within 2 s of SIGTERM with its hint cleared. Then a real
# redis-server's SCRIPT FLUSH under pipelined calls, and a password file
# that is a FIFO. Shares test_fleet.sh's names, so it takes its lock.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/fleet_lib.sh
SLUICE=${SLUICE:-build/sluice}
FLOOD=${FLOOD:-build/sluice-flood}

R=1000
B=100
NET=10.231
SRC=$NET.99.7
PASSWORD=hostile-$$-$RANDOM
TMP=$(mktemp -d /tmp/sluice-hostile.XXXXXX)
PIDS=()
PIDS_KEEP=()
AGENT=
FAKE=
LAST_JSON=null
LAST_METRICS=
FPORT=7100

# The bounds each behaviour is held to (measured figures in docs/fleet.md).
FALLBACK_S=3  # from the agent's start to status saying fallback, the kind counted
RSS_MAX_KB=32768  # the agent's largest resident set while it runs
CPU_MAX_PCT=10    # the agent's CPU over WATCH_S, in % of a core
STOP_MAX_MS=2000  # from SIGTERM to its exit
THREADS_MAX=17    # its own and one for each lookup given up on (16 at most)
WATCH_S=3

agent_stop() {
	[ -n "$AGENT" ] || return 0
	kill "$AGENT" 2>/dev/null
	wait "$AGENT" 2>/dev/null
	AGENT=
}

fake_stop() {
	[ -n "$FAKE" ] || return 0
	kill "$FAKE" 2>/dev/null
	wait "$FAKE" 2>/dev/null
	FAKE=
}

down() {
	local pid
	agent_stop
	fake_stop
	for pid in "${PIDS[@]}" "${PIDS_KEEP[@]}"; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	for pid in $(cat "$TMP"/redis-*.pid 2>/dev/null); do
		kill "$pid" 2>/dev/null
	done
	names_down
	mkdir -p /tmp/sluice-hostile-last && cp "$TMP"/*.log /tmp/sluice-hostile-last/ 2>/dev/null
	rm -rf "$TMP"
}
fleet_lock
names_down
trap down EXIT
trap 'exit 130' INT TERM

# fake_start MODE: the fake Redis in fltr on a port of its own, its
# commands logged to $TMP/fake-MODE.log.
fake_start() {
	FPORT=$((FPORT + 1))
	: >"$TMP/fake-$1.log"
	ip netns exec fltr python3 tests/e2e/fake_redis.py "$1" "$NET.10.2" "$FPORT" \
		"$TMP/fake-$1.log" 2>>"$TMP/fake.err" &
	FAKE=$!
	listening "$NET.10.2" "$FPORT"
}

# agent_start ADDR [OPTIONS...]: the agent of host 1, in the background,
# under AGENT_WRAP (a command that execs its arguments, keeping the pid).
AGENT_WRAP=()
agent_start() {
	local addr=$1
	shift
	"${AGENT_WRAP[@]}" "$SLUICE" agent fltv1 --redis "$addr" "$@" 2>>"$TMP/agent.log" &
	AGENT=$!
}

ms_now() { echo $(($(date +%s%N) / 1000000)); }
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null; }
fleet_json() { "$SLUICE" status fltv1 --json 2>/dev/null | jq -c '.[0].fleet'; }
seen() { "$SLUICE" stats fltv1 --json | jq '.counters.passed.packets + .counters.dropped.packets'; }

# steady ARGS...: flood ARGS, and wait until it sends at least 800 pps (on
# a loaded machine a generator takes a while to start), for 5 s at most.
steady() {
	local i a b
	flood "$@"
	for i in $(seq 20); do
		a=$(seen)
		sleep 0.25
		b=$(seen)
		[ $((b - a)) -ge 200 ] && return 0
	done
	fail "the generator sends ($*)"
	return 1
}

# fell_back KIND SECONDS: until status --json says the fleet is down, in
# fallback, with KIND counted.
fell_back() {
	local i
	for i in $(seq $(($2 * 10))); do
		fleet_json | jq -e --arg k "$1" \
			'.up == false and (.mode | startswith("fallback")) and .errors[$k] > 0' \
			>/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# watch SECONDS: the agent's largest RSS (kB), its CPU (% of a core), how
# often status showed no fleet and its most threads (glibc's lookups run in
# threads of their own), over that long: "RSS CPU NULLS THREADS".
watch() {
	local t0 c0 c1 rss th max=0 nulls=0 threads=0 i
	t0=$(ms_now)
	c0=$(cpu_ticks "$AGENT")
	for i in $(seq $(($1 * 5))); do
		rss=$(rss_kb "$AGENT")
		[ -n "$rss" ] && [ "$rss" -gt "$max" ] && max=$rss
		th=$(ls "/proc/$AGENT/task" 2>/dev/null | wc -l)
		[ "$th" -gt "$threads" ] && threads=$th
		[ $((i % 5)) = 0 ] && [ "$(fleet_json)" = null ] && nulls=$((nulls + 1))
		sleep 0.2
	done
	c1=$(cpu_ticks "$AGENT")
	echo "$max $(awk -v a="${c0:-0}" -v b="${c1:-0}" -v hz="$(getconf CLK_TCK)" \
		-v ms=$(($(ms_now) - t0)) 'BEGIN { printf "%.1f", (b - a) / hz / (ms / 1000) * 100 }') $nulls $threads"
}

# stop_agent: SIGTERM, then STOP_MS until it exited (killed after 5 s:
# 9999) and its exit status STOP_ST.
stop_agent() {
	local t0 i
	t0=$(ms_now)
	kill -TERM "$AGENT"
	for i in $(seq 100); do
		kill -0 "$AGENT" 2>/dev/null || break
		sleep 0.05
	done
	STOP_MS=$(($(ms_now) - t0))
	if kill -0 "$AGENT" 2>/dev/null; then
		kill -9 "$AGENT"
		STOP_MS=9999
	fi
	wait "$AGENT" 2>/dev/null
	STOP_ST=$?
	AGENT=
}

# stopped_clean MS STATUS: within STOP_MAX_MS, exit 0, the hint cleared and
# the report gone, as a clean stop leaves them.
stopped_clean() {
	[ "$1" -le "$STOP_MAX_MS" ] && [ "$2" = 0 ] && [ "$(hint_until 1)" = 0 ] &&
		[ ! -e /run/sluice/fleet/fltv1 ]
}

# hostile MODE KIND [AGENT OPTIONS...]: the agent against the fake in MODE
# (reached at REDIS_HOST), with a source over its share on host 1, falls
# back counting KIND, within the bounds, and stops on SIGTERM.
REDIS_HOST=$NET.10.2
hostile() {
	local mode=$1 kind=$2 t0 took rss cpu nulls threads
	shift 2
	fake_start "$mode" || { fail "$mode: the fake Redis starts"; return; }
	[ "$REDIS_HOST" = "$NET.10.2" ] || mode="$mode, --redis $REDIS_HOST"
	steady 1 3000 15 1 "$SRC"
	t0=$(ms_now)
	agent_start "$REDIS_HOST:$FPORT" --period 100ms "$@"
	if fell_back "$kind" "$FALLBACK_S"; then took=$(($(ms_now) - t0)); else took=; fi
	read -r rss cpu nulls threads <<<"$(watch "$WATCH_S")"
	LAST_JSON=$(fleet_json)
	[ -s "$TMP/exporter.out" ] && LAST_METRICS=$(metrics)
	stop_agent
	kill "${PIDS[@]}" 2>/dev/null
	floods_wait
	fake_stop
	check "$mode: falls back within ${FALLBACK_S} s counting $kind (${took:-no} ms; $(jq -c '.errors' <<<"$LAST_JSON"))" \
		"" test -n "$took"
	check "$mode: RSS ${rss} kB <= $RSS_MAX_KB kB, CPU ${cpu}% <= ${CPU_MAX_PCT}% of a core, $threads <= $THREADS_MAX threads, status showed the fleet throughout ($nulls nulls)" \
		"" eval "[ $rss -le $RSS_MAX_KB ] && le $cpu $CPU_MAX_PCT && [ $threads -le $THREADS_MAX ] && [ $nulls = 0 ]"
	check "$mode: SIGTERM ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" stopped_clean "$STOP_MS" "$STOP_ST"
	echo "     figures: $mode: fell back in ${took:-?} ms, RSS ${rss} kB, CPU ${cpu}%, $threads threads at most, stopped in ${STOP_MS} ms"
}

for step in "host_up 1" redis_net_up; do
	$step || { fail "set up: $step"; echo "$passed passed, $failed failed"; exit 1; }
done
echo "$PASSWORD" >"$TMP/secret" && chmod 0600 "$TMP/secret"

# 4. The password file: a FIFO (no writer) or a first line past 255 bytes
# is bad input, one line and exit 2, at once.
bad_password() {
	local out code t0
	t0=$(ms_now)
	out=$(timeout 5 "$SLUICE" agent fltv1 --redis "$NET.10.2:6379" --redis-password-file "$1" 2>&1)
	code=$?
	[ "$code" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "$2" <<<"$out" &&
		[ $(($(ms_now) - t0)) -lt 2000 ]
}
mkfifo -m 0600 "$TMP/fifo"
check "password file: a FIFO is exit 2, one line, at once" "" bad_password "$TMP/fifo" "not a regular file"
head -c 1048576 /dev/zero | tr '\0' x >"$TMP/long" && chmod 0600 "$TMP/long"
check "password file: a first line of 1 MB is exit 2, one line" "" bad_password "$TMP/long" "longer than 255 bytes"

# The fake answering well: the agent is up through it (a control: the
# behaviours below fail for what they do, not for the fake).
fake_start well
steady 1 3000 6 1 "$SRC"
agent_start "$NET.10.2:$FPORT" --period 100ms
check "well: through the fake answering as Redis would, the agent is up" "" wait_up 1 3
read -r rss_well cpu_well _ <<<"$(watch 2)"
stop_agent
kill "${PIDS[@]}" 2>/dev/null
floods_wait
fake_stop
check "well: SIGTERM ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" stopped_clean "$STOP_MS" "$STOP_ST"
echo "     figures: well: RSS ${rss_well} kB, CPU ${cpu_well}%"

# 1-3 and what already held: each bad reply is a fallback, counted.
hostile errors auth --redis-user fleet --redis-password-file "$TMP/secret"
hostile wrongtype reply
hostile moved moved
hostile noscript noscript
evals=$(grep -cE '^EVAL(SHA)?$' "$TMP/fake-noscript.log")
per_s=$((evals / (FALLBACK_S + WATCH_S + 1)))
check "noscript: EVAL answered NOSCRIPT too: the agent gives up (reply counted: $(jq -r '.errors.reply' <<<"$LAST_JSON")), $evals EVAL/EVALSHA in all, ${per_s}/s <= 100/s" "" \
	eval "[ $(jq -r '.errors.reply' <<<"$LAST_JSON") -gt 0 ] && [ $per_s -le 100 ]"
exporter_start
hostile huge protocol
check "huge: the exporter counts it: sluice_fleet_errors_total{kind=\"protocol\"} > 0" "" \
	grep -qE '^sluice_fleet_errors_total\{interface="fltv1",kind="protocol"\} [1-9]' <<<"$LAST_METRICS"
hostile bulk protocol
hostile deep protocol
hostile slots protocol
hostile drip timeout
# A refused count outside 0..the usage pushed (here -1, which a counter
# of its own would wrap to 2^64 - 1) is a reply error, never counted.
hostile refused reply --shadow
check "refused: would_refuse stays 0 ($(jq -r .would_refuse <<<"$LAST_JSON"))" "" \
	test "$(jq -r .would_refuse <<<"$LAST_JSON")" = 0

# Host names: a name Redis gives (MOVED, CLUSTER SLOTS) or the operator
# gives (--redis) is looked up within the call's timeout, and a stop does
# not wait for it. The agent runs under a resolv.conf of its own (a mount
# namespace) naming a server on loopback that reads queries and never
# answers, each lookup held there for minutes (timeout:30 attempts:5).
DNS_AT=127.53.0.153
python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 53))
while True:
    s.recv(4096)' "$DNS_AT" 2>>"$TMP/fake.err" &
PIDS_KEEP+=($!)
printf 'nameserver %s\noptions timeout:30 attempts:5\n' "$DNS_AT" >"$TMP/resolv.conf"
AGENT_WRAP=(unshare -m sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$TMP/resolv.conf")
for i in $(seq 50); do
	ss -Hlun "src $DNS_AT" | grep -q . && break
	sleep 0.1
done
check "host names: the resolver that never answers listens on $DNS_AT:53" "" eval 'ss -Hlun "src $DNS_AT" | grep -q .'
hostile moved-name timeout
hostile slots-name timeout
# The seed's name, watched long enough for a lookup given up on every
# 0.75 s (a call's 250 ms, then 0.5 s before the next) to reach the cap.
REDIS_HOST=redis.unanswered.test WATCH_S=13
hostile well timeout
REDIS_HOST=$NET.10.2 WATCH_S=3
AGENT_WRAP=()

# 5. The heartbeat: N is what the agent counts of the names Redis lists,
# itself among them, at most 1000; never a number Redis claims. A reply
# otherwise is a reply error, and N stays (--hosts 3 here).
hosts_case() {
	local mode=$1 want=$2 errs=$3 j
	fake_start "$mode" || { fail "$mode: the fake Redis starts"; return; }
	steady 1 3000 8 1 "$SRC"
	agent_start "$NET.10.2:$FPORT" --period 100ms --hosts 3 --fallback split
	wait_up 1 3
	sleep 2.5 # two heartbeats at least
	j=$(fleet_json)
	stop_agent
	kill "${PIDS[@]}" 2>/dev/null
	floods_wait
	fake_stop
	check "$mode: up, $(jq -r .hosts <<<"$j") hosts (want $want), reply errors $(jq -r .errors.reply <<<"$j") ($errs)" "" \
		eval "jq -e '.up and .hosts == $want and (.errors.reply $errs)' <<<'$j'"
	check "$mode: SIGTERM ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" \
		stopped_clean "$STOP_MS" "$STOP_ST"
}
hosts_case hosts-int 3 "> 0"
check "hosts-int: 4294967297 is never taken, nor logged as agents" "" eval '! grep -q "4294967297 agents\|: 1 agents\? in" "$TMP/agent.log"'
hosts_case hosts-many 3 "> 0"
hosts_case hosts-other 3 "> 0"
hosts_case hosts-cap 1000 "== 0"
hosts_case hosts-two 2 "== 0"

# 1. A real Redis's SCRIPT FLUSH while the calls of several hash tags are
# pipelined to it: each call answered NOSCRIPT goes again whole (EVAL) on
# the pipeline, and every reply is its own call's. Three sources in two
# tags, calls of two keys and one (a tag is the address's low 6 bits, so
# A2 + 1 is in another): a reply taken for another call's has the wrong
# shape (a reply error), and the fleet would fall back.
redis_start single 6379 || fail "redis-server starts"
A2=$(same_tag "$SRC") # and A2 + 1, in a tag of its own (see same_tag)
steady 1 8000 14 1 "$SRC" --mix-src "$A2" --mix-sources 2 --mix-every 2
agent_start "$NET.10.2:6379" --redis-user fleet --redis-password-file "$TMP/secret"
wait_up 1 3
sleep 1
rf() { ip netns exec fltr redis-cli -h "$NET.10.2" -p 6379 --user fleet --pass "$PASSWORD" --no-auth-warning "$@"; }
j0=$(fleet_json)
log0=$(wc -l <"$TMP/agent.log")
for i in $(seq 10); do
	rf script flush >/dev/null
	sleep 0.4
done
sleep 0.5
j1=$(fleet_json)
keys=$(rf --scan --pattern 'sluice:{s:*' | wc -l)
stop_agent
kill "${PIDS[@]}" 2>/dev/null
floods_wait
d() { echo $(($(jq -r ".errors.$1" <<<"$j1") - $(jq -r ".errors.$1" <<<"$j0"))); }
check "SCRIPT FLUSH x10, 3 sources in 2 tags ($(jq -r .sources <<<"$j0") synced, $keys keys): NOSCRIPT $(d noscript) times, reply errors $(d reply), protocol $(d protocol)" "" \
	eval "[ $(jq -r .sources <<<"$j0") -ge 3 ] && [ $(d noscript) -ge 10 ] && [ $(d reply) = 0 ] && [ $(d protocol) = 0 ]"
check "SCRIPT FLUSH: the agent stayed up (synced now, no fallback logged)" "" \
	eval "jq -e .up <<<'$j1' && ! tail -n +$((log0 + 1)) '$TMP/agent.log' | grep -q unreachable"
check "SCRIPT FLUSH: SIGTERM ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" \
	stopped_clean "$STOP_MS" "$STOP_ST"

# 7. A period past the hosts' window (3 s): the agent still beats once a
# second, between its rounds, so the other agents count it throughout: at
# each sample its beat in Redis is less than 3 s old.
hb_age_ms() {
	rf eval "local t = redis.call('TIME')
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then return -1 end
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(s)" \
		1 'sluice:{hb}:agents' "$(hostname | cut -c1-63):fltv1:$1"
}
agent_start "$NET.10.2:6379" --period 5s --redis-user fleet --redis-password-file "$TMP/secret"
wait_up 1 3
ages=
for i in $(seq 30); do
	ages+=" $(hb_age_ms "$AGENT")"
	sleep 0.2
done
stop_agent
old=$(tr ' ' '\n' <<<"$ages" | awk 'NF && ($1 < 0 || $1 >= 3000)' | wc -l)
check "--period 5s: its beat under 3 s old at each of 30 samples 0.2 s apart (ms:$ages)" "" \
	test "$old" = 0
check "--period 5s: SIGTERM ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" \
	stopped_clean "$STOP_MS" "$STOP_ST"

# 6. A stop mid-round is a clean stop: with replies 20 ms late (test_fleet's
# relay) and T = 20 ms the agent is mostly waiting on Redis when SIGTERM
# comes, and it must still leave the heartbeat's count at once, its hint
# cleared, without calling Redis unreachable. Three times.
ip netns exec fltr python3 tests/e2e/fleet_delay.py 20 6380 6379 "$NET.10.2" &
PIDS_KEEP+=($!)
listening "$NET.10.2" 6380 || fail "the 20 ms relay listens"
steady 1 8000 20 1 "$SRC" --mix-src "$A2" --mix-sources 2 --mix-every 2
# cut_once: one agent up for a second, then SIGTERM. CUT_WHY empty, or
# what the stop left that a clean stop does not; CUT_VOID set when the
# agent had lost Redis before the stop (a call 250 ms late on a stalled
# host), so that the stop was not one mid-round from up.
cut_once() {
	local log0 log1 n said
	CUT_WHY= CUT_VOID=
	log0=$(wc -l <"$TMP/agent.log")
	agent_start "$NET.10.2:6380" --period 20ms --redis-user fleet --redis-password-file "$TMP/secret"
	wait_up 1 3 || { stop_agent; CUT_WHY="not up within 3 s"; return; }
	sleep 1
	log1=$(wc -l <"$TMP/agent.log")
	CUT_VOID=$(sed -n "$((log0 + 1)),${log1}p" "$TMP/agent.log" | grep unreachable | head -1)
	stop_agent
	n=$(rf zcard 'sluice:{hb}:agents')
	said=$(tail -n +$((log1 + 1)) "$TMP/agent.log" | grep -E 'unreachable|fallback-|not left' | head -1)
	stopped_clean "$STOP_MS" "$STOP_ST" && [ "$n" = 0 ] && [ -z "$said" ] && return
	CUT_WHY="${STOP_MS} ms, exit $STOP_ST, hint $(hint_until 1), $n agents counted${said:+, said: $said}"
	if [ "$n" != 0 ]; then # it ages out: the next stop starts from none
		sleep 3.5
	fi
}
# clean_cut: three stops from up, clean; a void one is tried again, at most
# three times in all.
clean_cut() {
	local stops=0 void=0
	CUT_SAID=
	while [ $stops -lt 3 ]; do
		cut_once
		if [ -n "$CUT_VOID" ] && [ $void -lt 3 ]; then
			void=$((void + 1))
			echo "     void stop (not counted): before it, $CUT_VOID"
			continue
		fi
		[ -z "$CUT_WHY" ] || { CUT_SAID="stop $((stops + 1)): $CUT_WHY"; return 1; }
		stops=$((stops + 1))
	done
}
clean_cut
check "SIGTERM mid-round (T 20 ms, replies 20 ms late) x3: the count left at once, the hint cleared, no fallback said" "$CUT_SAID" \
	test -z "$CUT_SAID"
kill "${PIDS[@]}" 2>/dev/null
floods_wait
redis_stop single

# 6. A stop while a reply drips, with a period whose call timeout is 10 s:
# SIGTERM still ends the agent within 2 s, as a clean stop.
fake_start drip
agent_start "$NET.10.2:$FPORT" --period 5s
sleep 1.5
stop_agent
fake_stop
check "drip, --period 5s (10 s call timeout): SIGTERM mid-reply ends it in ${STOP_MS} ms (exit $STOP_ST), the hint cleared" "" \
	stopped_clean "$STOP_MS" "$STOP_ST"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
