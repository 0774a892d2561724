#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Observability end to end on the veth lab: the counters and the per-source
# counts of `top` against what a flood sent, to the packet; `top` ranking a
# flooding source first; rates from `stats --watch` as a table and as JSON;
# the documented JSON schemas, errors included; the Prometheus exposition
# checked by promtool; and the exporter scraped over loopback during a
# flood, with bad requests, idle connections and 50 concurrent scrapes; and
# hostile clients: half-open connections from the scrapers' own address,
# control characters in paths.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SOURCES=200
RATE=10	# per source, per second
BURST=10
PPS=20000 # offered: 100 per source per second, ten times the rate
HEAVY=$LAB_NET.9.9
HEAVY_PPS=3000
INTERVAL_NS=$((1000000000 / RATE))

# near EXPECTED GOT PERCENT: |GOT - EXPECTED| <= PERCENT% of EXPECTED.
near() {
	awk -v e="$1" -v g="$2" -v p="$3" 'BEGIN {
		d = g - e; if (d < 0) d = -d
		exit !(d <= e * p / 100) }'
}

# jqcheck FILE FILTER [ARGS...]: the filter holds on the JSON in FILE.
jqcheck() {
	local file=$1
	shift
	jq -e "$@" <"$file" >/dev/null 2>&1
}

top_json() {
	"$SLUICE" top "$LAB_HOST" "$@" --json
}

# Sum over every source of passed + dropped, from `top`.
top_sum() {
	top_json -n 1000000 | jq '[.sources[] | .passed + .dropped] | add // 0'
}

test_counts() {
	local sent secs txdrop passed dropped received
	read -r sent secs txdrop < <(flood_into_sink "$LAB_TMP/sink" "$SOURCES" 3 "$PPS")
	[ -n "$sent" ] || {
		check "sink starts" false
		return
	}
	passed=$(stat passed)
	dropped=$(stat dropped)
	received=$(awk '/^total/ { print $2 }' "$LAB_TMP/sink")
	echo "     flood: $sent sent in $secs s, $txdrop lost in the veth ring, $passed passed, $dropped dropped, $received received"

	CHECK_DETAIL="passed $passed, received $received"
	check "stats: passed equals packets received, to the packet" test "$passed" = "$received"
	CHECK_DETAIL="passed + dropped $((passed + dropped)), sent $sent - ring drops $txdrop"
	check "stats: passed + dropped equals packets that reached sluice, to the packet" \
		test $((passed + dropped)) = $((sent - txdrop))

	top_json -n 1000000 >"$LAB_TMP/top.json"
	check "top lists every source once" \
		jqcheck "$LAB_TMP/top.json" --argjson n "$SOURCES" \
		'(.sources | length) == $n and .sources_tracked == $n and ([.sources[].prefix] | unique | length) == $n'
	jq -r '.sources[] | "\(.prefix | rtrimstr("/32")) \(.passed)"' "$LAB_TMP/top.json" | sort >"$LAB_TMP/top.passed"
	grep -E '^[0-9]+\.' "$LAB_TMP/sink" | sort >"$LAB_TMP/sink.passed"
	CHECK_DETAIL=$(diff "$LAB_TMP/top.passed" "$LAB_TMP/sink.passed" | head -3 | tr '\n' ' ')
	check "top: each source's passed equals what the sink got from it, to the packet" \
		cmp -s "$LAB_TMP/top.passed" "$LAB_TMP/sink.passed"
	CHECK_DETAIL="sum over sources $(top_sum), counters $((passed + dropped))"
	check "top: passed + dropped summed over sources equals the counters, to the packet" \
		test "$(top_sum)" = $((passed + dropped))
	"$SLUICE" stats "$LAB_HOST" --json >"$LAB_TMP/stats.json"
	check "stats: the default rule carries every metered packet" \
		jqcheck "$LAB_TMP/stats.json" '(.rules | length) == 1 and .rules[0].rule == "default"
			and .rules[0].counters.passed == .counters.passed and .rules[0].counters.dropped == .counters.dropped'
	check "stats: table health shows the sources tracked and no failed insert" \
		jqcheck "$LAB_TMP/stats.json" --argjson n "$SOURCES" \
		'.table.sources == $n and .table.new_sources == $n and .table.insert_failed == 0 and .table.max_sources == 1000000 and .table.capacity == 1162800'
}

# Frames of `stats --watch` as a table: "PASSED_PPS DROPPED_PPS PASSED_BPS" each.
watch_table_rates() {
	awk '$1 == "passed" { pp = $4; pb = $5 } $1 == "dropped" { dp = $4 } /^TABLE/ { print pp, dp, pb }' "$1"
}

# Every frame: passed near the limit, passed + dropped near what was offered,
# bits/s exactly 8 x bytes per packet x packets/s.
rates_sane() {
	local file=$1 offered=$2 size=$3 n=0 pp dp pb
	while read -r pp dp pb; do
		n=$((n + 1))
		near $((SOURCES * RATE)) "$pp" 10 || return 1
		near "$offered" "$(awk -v a="$pp" -v b="$dp" 'BEGIN { print a + b }')" 15 || return 1
		near "$(awk -v p="$pp" -v s="$size" 'BEGIN { print p * s * 8 }')" "$pb" 1 || return 1
	done <"$file"
	test "$n" = 3
}

test_watch() {
	local fpid w1 w2 rc1 rc2 sent secs offered size
	flood "$SOURCES" 5 "$PPS" >"$LAB_TMP/watch.flood" &
	fpid=$!
	LAB_PIDS+=("$fpid")
	sleep 1
	"$SLUICE" stats "$LAB_HOST" --watch 1 --count 3 >"$LAB_TMP/watch.txt" 2>&1 &
	w1=$!
	"$SLUICE" stats "$LAB_HOST" --json --watch --count 3 >"$LAB_TMP/watch.json" 2>&1 &
	w2=$!
	LAB_PIDS+=("$w1" "$w2")
	wait "$w1"
	rc1=$?
	wait "$w2"
	rc2=$?
	wait "$fpid"
	read -r sent secs <"$LAB_TMP/watch.flood"
	offered=$(awk -v n="$sent" -v s="$secs" 'BEGIN { printf "%d", n / s }')
	size=$(stat passed | awk -v b="$("$SLUICE" stats "$LAB_HOST" --json | jq .counters.passed.bytes)" '{ print b / $1 }')

	watch_table_rates "$LAB_TMP/watch.txt" >"$LAB_TMP/watch.rates"
	CHECK_DETAIL="exit $rc1; offered $offered pps, want passed $((SOURCES * RATE)) pps; frames (passed pps, dropped pps, passed bits/s): $(tr '\n' ';' <"$LAB_TMP/watch.rates")"
	check "stats --watch 1: three frames with sane pps and bits/s" \
		test "$rc1" = 0 -a "$(grep -c '^sluice on' "$LAB_TMP/watch.txt")" = 3
	check "stats --watch 1: passed pps = sources x rate (10%), total = offered (15%), bits/s = 8 x bytes x pps" \
		rates_sane "$LAB_TMP/watch.rates" "$offered" "$size"

	jq -r '[.counters.passed.pps, .counters.dropped.pps, .counters.passed.bps] | @tsv' \
		"$LAB_TMP/watch.json" >"$LAB_TMP/watch.json.rates" 2>/dev/null
	CHECK_DETAIL="exit $rc2; intervals $(jq -s -c '[.[].interval_s]' "$LAB_TMP/watch.json" 2>/dev/null)"
	# A late read (a busy host) is followed by an early one: reads keep to
	# a fixed schedule.
	check "stats --watch --json: one JSON document per interval, about 1 s apart" \
		test "$rc2" = 0 -a "$(jq -s 'length' "$LAB_TMP/watch.json")" = 3 -a \
		"$(jq -s '[.[] | .interval_s > 0.7 and .interval_s < 1.5] | all' "$LAB_TMP/watch.json")" = true
	CHECK_DETAIL="frames: $(tr '\n' ';' <"$LAB_TMP/watch.json.rates")"
	check "stats --watch --json: sane rates" rates_sane "$LAB_TMP/watch.json.rates" "$offered" "$size"
	CHECK_DETAIL=$(jq -c '.table' "$LAB_TMP/watch.json" | head -1)
	check "stats --watch --json: no new sources per second once all are known" \
		test "$(jq -s '[.[] | .table.new_sources_per_s == 0 and .table.insert_failed_per_s == 0] | all' "$LAB_TMP/watch.json")" = true
}

# hangup_rc PID: SIGHUP to PID, then up to 5 s for it to end; its exit
# status in HANGUP_RC and CHECK_DETAIL, or HANGUP_RC "running" when the
# test had to stop it.
hangup_rc() {
	kill -HUP "$1"
	timeout 5 tail --pid="$1" -f /dev/null
	if kill "$1" 2>/dev/null; then
		wait "$1"
		HANGUP_RC=running
		CHECK_DETAIL="still running 5 s after SIGHUP, stopped by the test"
		return
	fi
	wait "$1"
	HANGUP_RC=$?
	CHECK_DETAIL="exit $HANGUP_RC"
}

# A closed terminal (SIGHUP) ends --watch as Ctrl-C does: exit 0.
test_watch_hangup() {
	local w
	"${HUP_DEFAULT[@]}" "$SLUICE" stats "$LAB_HOST" --watch 0.2 >"$LAB_TMP/watch.hup" 2>&1 &
	w=$!
	LAB_PIDS+=("$w")
	sleep 0.5
	hangup_rc "$w"
	check "stats --watch, SIGHUP: exit 0, as Ctrl-C" test "$HANGUP_RC" = 0
}

test_watch_tty() {
	local out
	out=$(script -qec "$SLUICE stats $LAB_HOST --watch 0.2 --count 2" /dev/null | od -An -c | tr -d ' \n')
	CHECK_DETAIL="escape sequences: $(grep -o '033\[H033\[2J' <<<"$out" | wc -l)"
	check "stats --watch on a terminal redraws in place" \
		test "$(grep -o '033\[H033\[2J' <<<"$out" | wc -l)" = 2
}

test_top_ranking() {
	local fpid sent secs before_tx txdrop i p=$HEAVY/32
	before_tx=$(peer_tx_dropped)
	flood 1 3 "$HEAVY_PPS" "$HEAVY" >"$LAB_TMP/heavy.flood" &
	fpid=$!
	LAB_PIDS+=("$fpid")
	sleep 1
	top_json -n 5 --sort rate >"$LAB_TMP/rate.json"
	for i in 1 2 3 4 5 6; do
		top_json -n 3 >"$LAB_TMP/drops.$i.json"
		sleep 0.05
	done
	"$SLUICE" top "$LAB_HOST" -n 3 >"$LAB_TMP/drops.txt"
	wait "$fpid"
	read -r sent secs <"$LAB_TMP/heavy.flood"
	txdrop=$(($(peer_tx_dropped) - before_tx))

	CHECK_DETAIL=$(jq -c '.sources[0]' "$LAB_TMP/rate.json")
	check "top --sort rate: the flooding source first, at its offered rate (15%)" \
		near "$HEAVY_PPS" "$(jq '.sources[0].pps' "$LAB_TMP/rate.json")" 15
	check "top --sort rate: ranked by a measured one-second window" \
		jqcheck "$LAB_TMP/rate.json" --arg p "$p" \
		'.sources[0].prefix == $p and .sort == "rate" and .interval_s > 0.9 and ([.sources[1:][].pps == 0] | all)'
	CHECK_DETAIL=$(jq -c '.sources[0] | [.prefix, .limited, .next_pass_ns]' "$LAB_TMP"/drops.?.json | tr '\n' ' ')
	check "top: the flooding source ranks first by drops in every reading" \
		test "$(jq -s --arg p "$p" '[.[].sources[0].prefix == $p] | all' "$LAB_TMP"/drops.?.json)" = true
	# Limited between passes; free for the moment before its next packet
	# once due, so only most readings need to find it limited.
	CHECK_DETAIL=$(jq -c '.sources[0] | [.prefix, .limited, .next_pass_ns, .passed, .dropped]' "$LAB_TMP"/drops.?.json | tr '\n' ' ')
	check "top: it is limited now, its next pass within one interval (at least 3 of 6 readings)" \
		test "$(jq -s --argjson t "$INTERVAL_NS" '[.[].sources[0] | select(.limited)
			| select(.next_pass_ns > 0 and .next_pass_ns <= $t)] | length >= 3' "$LAB_TMP"/drops.?.json)" = true
	check "top: limited and next pass agree in every reading" \
		test "$(jq -s '[.[].sources[0] | .limited == (.next_pass_ns > 0)] | all' "$LAB_TMP"/drops.?.json)" = true
	CHECK_DETAIL=$(sed -n 3p "$LAB_TMP/drops.txt")
	check "top (table): the flooding source on the first row" \
		bash -c "sed -n 3p '$LAB_TMP/drops.txt' | grep -qE '^$p +default +[0-9]+ +[0-9]+ +- +bucket [0-9]+/[0-9]+ +(yes +[0-9.]+ (us|ms|s)|no +-) +-\$'"
	sleep 0.5 # longer than one interval: the source may pass again
	top_json -n 1 >"$LAB_TMP/after.json"
	CHECK_DETAIL="$(jq -c '.sources[0]' "$LAB_TMP/after.json"), sent $sent in $secs s, $txdrop lost in the ring"
	check "top: after the flood it is no longer limited; passed = burst + rate x time, dropped = the rest" \
		jqcheck "$LAB_TMP/after.json" --arg p "$p" --argjson arrived $((sent - txdrop)) \
		--argjson want "$(awk -v b="$BURST" -v r="$RATE" -v s="$secs" 'BEGIN { printf "%d", b + r * s }')" \
		'.sources[0] | .prefix == $p and (.limited | not) and .next_pass_ns == 0
			and (.passed - $want | if . < 0 then -. else . end) <= 2 and .passed + .dropped == $arrived'
	CHECK_DETAIL="sum over sources $(top_sum), counters $(($(stat passed) + $(stat dropped)))"
	check "top: per-source sums still equal the counters (cached refusals included)" \
		test "$(top_sum)" = $(($(stat passed) + $(stat dropped)))
}

test_prometheus() {
	local passed
	"$SLUICE" stats "$LAB_HOST" --prometheus >"$LAB_TMP/metrics.txt"
	passed=$(stat passed)
	CHECK_DETAIL=$(promtool check metrics <"$LAB_TMP/metrics.txt" 2>&1 | head -3)
	check "stats --prometheus passes promtool check metrics" \
		bash -c "promtool check metrics <'$LAB_TMP/metrics.txt'"
	check "stats --prometheus: passed per rule equals the counter" \
		grep -qx "sluice_passed_packets_total{interface=\"$LAB_HOST\",rule=\"default\"} $passed" "$LAB_TMP/metrics.txt"
	check "stats --prometheus: drops labelled by interface, rule and reason" \
		grep -qE "^sluice_dropped_packets_total\{interface=\"$LAB_HOST\",rule=\"default\",reason=\"rate\"\} [1-9][0-9]*$" "$LAB_TMP/metrics.txt"
	check "stats --prometheus: HELP and TYPE for every family" \
		test "$(grep -c '^# HELP' "$LAB_TMP/metrics.txt")" = "$(grep -c '^# TYPE' "$LAB_TMP/metrics.txt")" -a \
		"$(grep -c '^# TYPE .* counter$' "$LAB_TMP/metrics.txt")" = "$(grep '^# TYPE' "$LAB_TMP/metrics.txt" | grep -c '_total counter$')"
}

exporter_stop() {
	kill -TERM "$EXPORTER_PID" 2>/dev/null
	wait "$EXPORTER_PID"
}

scrape() {
	curl -s -m 10 -o "$1" -w '%{http_code}\n' "http://$EXPORTER_ADDR${2:-/metrics}"
}

# dropped counter of the lab interface in a scraped exposition
scraped_dropped() {
	awk -v s="sluice_dropped_packets_total{interface=\"$LAB_HOST\",rule=\"default\",reason=\"rate\"}" '$1 == s { print $2 }' "$1"
}

# raw_request TEXT: the status line the exporter answers TEXT with.
raw_request() {
	local fd line
	exec {fd}<>"/dev/tcp/${EXPORTER_ADDR%:*}/${EXPORTER_ADDR##*:}" || return 1
	# A server that answers before reading all of a long request and then
	# closes makes the rest of the write fail (EPIPE, or a reset): its reply
	# is still in the receive queue, so read it anyway.
	(trap '' PIPE; printf '%b' "$1" >&"$fd") 2>/dev/null
	read -r -t 5 line <&"$fd"
	exec {fd}>&-
	printf '%s\n' "${line%$'\r'}"
}

concurrent_scrapes() {
	local i codes pids=()
	for i in $(seq 50); do
		scrape "$LAB_TMP/scrape.$i" >"$LAB_TMP/code.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	codes=$(cat "$LAB_TMP"/code.* | sort | uniq -c | tr -s ' ')
	CHECK_DETAIL="status codes: $codes"
	test "$codes" = " 50 200" || return 1
	for i in $(seq 50); do
		grep -q "^sluice_passed_packets_total{interface=\"$LAB_HOST\",rule=\"default\"} " "$LAB_TMP/scrape.$i" || return 1
	done
}

test_exporter() {
	local fpid d0 d1 fds=() fd i req
	exporter_start --listen 127.0.0.1:0 || {
		CHECK_DETAIL=$(cat "$LAB_TMP/exporter.out")
		check "exporter starts on 127.0.0.1 with a free port" false
		return
	}
	check "exporter starts on 127.0.0.1 with a free port" grep -qE '^127\.0\.0\.1:[1-9][0-9]*$' <<<"$EXPORTER_ADDR"
	flood "$SOURCES" 5 "$PPS" >/dev/null &
	fpid=$!
	LAB_PIDS+=("$fpid")
	sleep 1
	local a0 a1 b0 b1
	a0=$(stat dropped)
	CHECK_DETAIL="status $(scrape "$LAB_TMP/scrape.a")"
	a1=$(stat dropped)
	check "exporter: GET /metrics during a flood answers 200" test -s "$LAB_TMP/scrape.a"
	sleep 1
	b0=$(stat dropped)
	scrape "$LAB_TMP/scrape.b" >/dev/null
	b1=$(stat dropped)
	CHECK_DETAIL=$(promtool check metrics <"$LAB_TMP/scrape.a" 2>&1 | head -3)
	check "exporter: the scrape passes promtool check metrics" bash -c "promtool check metrics <'$LAB_TMP/scrape.a'"
	d0=$(scraped_dropped "$LAB_TMP/scrape.a")
	d1=$(scraped_dropped "$LAB_TMP/scrape.b")
	# What the generator offers depends on the host's load; what sluice
	# counted does not: each scrape must lie between stats reads around it.
	CHECK_DETAIL="stats $a0 <= scrape $d0 <= stats $a1, then stats $b0 <= scrape $d1 <= stats $b1"
	check "exporter: each scrape during the flood shows the drop counter as stats reads it around the scrape" \
		test "$a0" -le "$d0" -a "$d0" -le "$a1" -a "$b0" -le "$d1" -a "$d1" -le "$b1" -a "$d1" -gt "$d0"
	CHECK_DETAIL=$(curl -s -m 5 -o /dev/null -w '%{content_type}' "http://$EXPORTER_ADDR/metrics")
	check "exporter: content type is the text exposition format 0.0.4" \
		test "$CHECK_DETAIL" = "text/plain; version=0.0.4; charset=utf-8"

	CHECK_DETAIL="status $(scrape /dev/null /nope)"
	check "exporter: a wrong path gets 404" test "$(scrape /dev/null /nope)" = 404
	CHECK_DETAIL=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST --data x "http://$EXPORTER_ADDR/metrics")
	check "exporter: POST gets 405" test "$CHECK_DETAIL" = 405
	CHECK_DETAIL=$(raw_request 'GET /metrics\r\n\r\n')
	check "exporter: a request line without a version gets 400" grep -q '^HTTP/1\.[01] 400' <<<"$CHECK_DETAIL"
	# An error reply may be lost to the reset of a connection closed with
	# unread input: closing without a word is an acceptable answer here.
	for req in 'GARBAGE\r\n\r\n' '\x01\x02\xff\xfe\r\n\r\n' '\r\n\r\n\r\n' \
		'GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n'; do
		CHECK_DETAIL=$(raw_request "$req")
		check "exporter: garbage '$req' gets an error or a closed connection, never data" \
			grep -qE '^(HTTP/1\.[01] [45][0-9][0-9] .*)?$' <<<"$CHECK_DETAIL"
	done
	# The reply to an oversized header can also be lost to that reset (seen
	# under load): a few tries, every answer an error or nothing, one a 4xx.
	local big replies="" try
	big="GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: $(head -c 100000 /dev/zero | tr '\0' a)\r\n\r\n"
	for try in 1 2 3; do
		replies+="$(raw_request "$big")"$'\n'
		grep -qE '^HTTP/1\.[01] 4[0-9][0-9]' <<<"$replies" && break
	done
	CHECK_DETAIL=$replies
	check "exporter: a 100 kB header is refused with a 4xx" grep -qE '^HTTP/1\.[01] 4[0-9][0-9]' <<<"$replies"
	check "exporter: a 100 kB header never gets data" bash -c "! grep -qE '^HTTP/1\.[01] [123]' <<<\"\$0\"" "$replies"
	for i in $(seq 20); do
		exec {fd}<>"/dev/tcp/${EXPORTER_ADDR%:*}/${EXPORTER_ADDR##*:}" && fds+=("$fd")
	done
	CHECK_DETAIL="${#fds[@]} idle connections open"
	check "exporter: still serves with 20 idle connections open" test "$(scrape /dev/null)" = 200
	for fd in "${fds[@]}"; do
		exec {fd}>&-
	done
	check "exporter: 50 concurrent scrapes during the flood all get complete metrics" concurrent_scrapes
	wait "$fpid"
	check "exporter: still running after all of that" kill -0 "$EXPORTER_PID"
	exporter_stop
	CHECK_DETAIL="exit $?"
	check "exporter: SIGTERM stops it cleanly and frees the port" \
		test "$CHECK_DETAIL" = "exit 0" -a "$(scrape /dev/null)" = 000
}

test_exporter_default() {
	local out rc
	if ss -Hltn 'sport = :9723' | grep -q .; then
		# Someone else holds the port: the exporter must say so and exit 1.
		out=$(timeout 5 "$SLUICE" exporter 2>&1)
		rc=$?
		CHECK_DETAIL="exit $rc: $out"
		check "exporter: default port busy: one clear line, exit 1" \
			test "$rc" = 1 -a -n "$(grep '127.0.0.1:9723' <<<"$out")"
		return
	fi
	exporter_start || {
		check "exporter: starts with the default address" false
		return
	}
	CHECK_DETAIL="$EXPORTER_ADDR; $(ss -Hltn 'sport = :9723' | awk '{ print $4 }')"
	check "exporter: binds to 127.0.0.1:9723 by default, loopback only" \
		test "$EXPORTER_ADDR" = 127.0.0.1:9723 -a "$(ss -Hltn 'sport = :9723' | awk '{ print $4 }')" = 127.0.0.1:9723
	exporter_stop
}

# Seconds (fractional) a connection that sends one header line a second stays
# open: the request deadline must close it however it trickles. "never" past 15 s.
trickle_lifetime() { # trickle_lifetime HOST PORT
	(
		trap '' PIPE
		local fd i line rc t0
		{ exec {fd}<>"/dev/tcp/$1/$2"; } 2>/dev/null || exit 1
		t0=$(date +%s.%N)
		printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' >&"$fd"
		for i in $(seq 15); do
			printf 'X-Trickle: %d\r\n' "$i" >&"$fd" 2>/dev/null || break
			read -r -t 1 -u "$fd" line
			rc=$?
			[ "$rc" -gt 128 ] || break # data or end of file, not a timeout
		done
		if [ "$i" = 15 ]; then
			echo never
		else
			awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f\n", b - a }'
		fi
	)
}

# slow_loris N HOST PORT: from the lab's namespace, N connections that each
# send a request line, then one header line every 3 s, never the end; a
# connection the server closed is opened again.
slow_loris() {
	ip netns exec "$LAB_NS" bash -c '
		trap "" PIPE
		host=$2 port=$3 fds=()
		connect() {
			local fd
			{ exec {fd}<>"/dev/tcp/$host/$port"; } 2>/dev/null || return
			printf "GET /metrics HTTP/1.1\r\nHost: x\r\n" >&"$fd" 2>/dev/null
			fds[$1]=$fd
		}
		for i in $(seq "$1"); do
			connect "$i"
		done
		while sleep 3; do
			for i in "${!fds[@]}"; do
				printf "X-Slow: 1\r\n" >&"${fds[$i]}" 2>/dev/null && continue
				old=${fds[$i]}
				exec {old}>&-
				connect "$i"
			done
		done' slow_loris "$@" &
	SLOW_PID=$!
	LAB_PIDS+=("$SLOW_PID")
}

# scrape_loop SECONDS URL OUT: one scrape after another; "CODE TIME" lines in OUT.
scrape_loop() {
	local end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ]; do
		curl -s -m 5 -o /dev/null -w '%{http_code} %{time_total}\n' "$2" >>"$3"
	done
}

# The lab interface's table walks, as the exporter counts them.
table_walks() {
	curl -s -m 5 "$1" | awk -v s="sluice_exporter_table_walks_total{interface=\"$LAB_HOST\"}" '$1 == s { print $2 }'
}

# A listener on [::] serves both families.
test_exporter_dual_stack() {
	local port
	exporter_start --listen '[::]:0' || {
		check "exporter: starts on [::] with a free port" false
		return
	}
	port=${EXPORTER_ADDR##*:}
	CHECK_DETAIL="$EXPORTER_ADDR"
	check "exporter: [::] serves IPv4 (127.0.0.1)" \
		test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/metrics")" = 200
	check "exporter: [::] serves IPv6 (::1)" \
		test "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://[::1]:$port/metrics")" = 200
	exporter_stop
}

# SIGHUP (a terminal closed, systemctl kill -s HUP) is a clean stop, as
# SIGTERM is; one started under nohup goes on ignoring it, as nohup asks.
test_exporter_hangup() {
	exporter_start --listen 127.0.0.1:0 || {
		check "exporter: starts for the SIGHUP check" false
		return
	}
	hangup_rc "$EXPORTER_PID"
	check "exporter, SIGHUP: exit 0, a clean stop, the port freed" \
		test "$HANGUP_RC" = 0 -a "$(scrape /dev/null)" = 000
	: >"$LAB_TMP/exporter.out"
	nohup "$SLUICE" exporter --listen 127.0.0.1:0 >"$LAB_TMP/exporter.out" 2>&1 &
	EXPORTER_PID=$!
	LAB_PIDS+=("$EXPORTER_PID")
	EXPORTER_ADDR=$(exporter_addr "$LAB_TMP/exporter.out" "$EXPORTER_PID")
	kill -HUP "$EXPORTER_PID"
	sleep 0.5
	CHECK_DETAIL="$EXPORTER_ADDR"
	check "exporter under nohup, SIGHUP: it goes on serving" \
		test -n "$EXPORTER_ADDR" -a "$(scrape /dev/null)" = 200
	exporter_stop
	CHECK_DETAIL="exit $?"
	check "... and SIGTERM ends it cleanly" test "$CHECK_DETAIL" = "exit 0"
}

# Slow clients cannot starve scrapes, and concurrent scrapes share one walk.
test_exporter_slow() {
	local port url life w0 w1 n i pids=() t0 t1 worst
	exporter_start --listen 0.0.0.0:0 || {
		check "exporter: starts on 0.0.0.0 with a free port" false
		return
	}
	port=${EXPORTER_ADDR##*:}
	url="http://127.0.0.1:$port/metrics"

	life=$(trickle_lifetime 127.0.0.1 "$port")
	CHECK_DETAIL="closed after $life s"
	check "exporter: a request trickled a line a second is cut off at its 2 s deadline" \
		awk -v t="$life" 'BEGIN { exit !(t != "never" && t >= 1.5 && t <= 3.5) }'

	# The slow clients' packets must not meet the limiter on the lab link.
	"$SLUICE" allow add "$LAB_HOST" "$LAB_PEER_IP" >/dev/null
	slow_loris 300 "$LAB_HOST_IP" "$port"
	sleep 2
	: >"$LAB_TMP/slow.codes"
	scrape_loop 12 "$url" "$LAB_TMP/slow.codes"
	kill "$SLOW_PID" 2>/dev/null
	wait "$SLOW_PID" 2>/dev/null
	"$SLUICE" allow del "$LAB_HOST" "$LAB_PEER_IP" >/dev/null
	worst=$(awk '{ if ($2 > w) w = $2 } END { print w + 0 }' "$LAB_TMP/slow.codes")
	CHECK_DETAIL="$(sort "$LAB_TMP/slow.codes" | cut -d' ' -f1 | uniq -c | tr -s ' '); slowest $worst s"
	check "exporter: with 300 slow connections open, every scrape succeeds within 2 s" \
		awk -v w="$worst" '{ n++; bad += $1 != 200 } END { exit !(n >= 10 && !bad && w < 2) }' "$LAB_TMP/slow.codes"

	# Eight scrape loops at once: the table is walked about once a second.
	w0=$(table_walks "$url")
	: >"$LAB_TMP/walk.codes"
	t0=$(date +%s.%N)
	for i in $(seq 8); do
		scrape_loop 4 "$url" "$LAB_TMP/walk.codes" &
		pids+=($!)
	done
	wait "${pids[@]}"
	t1=$(date +%s.%N)
	w1=$(table_walks "$url")
	n=$(grep -c '^200 ' "$LAB_TMP/walk.codes")
	CHECK_DETAIL="$n scrapes in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s walked the table $((w1 - w0)) times"
	check "exporter: 8 scrape loops walk the table at most once a second" \
		awk -v n="$n" -v w="$((w1 - w0))" -v a="$t0" -v b="$t1" \
		'BEGIN { exit !(w >= 1 && w <= b - a + 2 && n >= 4 * w) }'
	exporter_stop
}

# hold_half_open HOST PORT N READY: N connections that each send part of a
# request and never the rest, one opened again as soon as the server closes
# it; READY appears once all N were tried. Sets HOLD_PID.
hold_half_open() {
	python3 - "$@" <<'PY' &
import select, socket, sys, time
host, port, n, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def half_open():
    try:
        s = socket.create_connection((host, port), timeout=1)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        return s
    except OSError:
        return None

socks = [half_open() for _ in range(n)]
open(ready, "w").close()
while True:
    live = [s for s in socks if s]
    readable = select.select(live, [], [], 0.05)[0] if live else []
    for i, s in enumerate(socks):
        if s and s not in readable:
            continue
        try:
            closed = s is None or not s.recv(4096)
        except OSError:
            closed = True
        if closed:
            if s:
                s.close()
            socks[i] = half_open()
    if not live:
        time.sleep(0.05)
PY
	HOLD_PID=$!
	LAB_PIDS+=("$HOLD_PID")
}

# target_codes PORT: "CODE TARGET" for each request target, sent raw to 127.0.0.1.
target_codes() {
	python3 tests/e2e/raw_status.py "$1" <<'EOF'
/metrics
/metrics?
/metrics?x=1
/%6detrics
/metrics%00
/metrics%00x
/metrics%0a
/metrics%0d%0a
/metrics%7f
/metrics%09
/metrics%1b
/metrics?x=%00
/metrics%
/metrics%0
/metrics%zz
/metrics\x00
/metrics\x00x
/metrics\x01
/metrics\x7f
/metrics\x1b[2J
/metrics?x\x00
/metr\x00ics
/metrics/
//metrics
/metrics%2f
/metrics%20
/metricsx
EOF
}

# Hostile clients on loopback: a stalled client cannot lock out the others
# from the same address, and a path is decoded and checked before it is served.
test_exporter_hostile() {
	local port url i out worst codes want
	exporter_start --listen 127.0.0.1:0 || {
		check "exporter: starts on 127.0.0.1 with a free port" false
		return
	}
	port=${EXPORTER_ADDR##*:}
	url="http://127.0.0.1:$port/metrics"
	codes=$(target_codes "$port")
	want="200 /metrics|200 /metrics?|200 /metrics?x=1|200 /%6detrics|400 /metrics%00|400 /metrics%00x|\
400 /metrics%0a|400 /metrics%0d%0a|400 /metrics%7f|400 /metrics%09|400 /metrics%1b|400 /metrics?x=%00|\
400 /metrics%|400 /metrics%0|400 /metrics%zz|400 /metrics\\x00|400 /metrics\\x00x|400 /metrics\\x01|\
400 /metrics\\x7f|400 /metrics\\x1b[2J|400 /metrics?x\\x00|400 /metr\\x00ics|404 /metrics/|404 //metrics|\
404 /metrics%2f|404 /metrics%20|404 /metricsx"
	CHECK_DETAIL=$(diff <(tr '|' '\n' <<<"$want") <(echo "$codes") | tr '\n' ' ')
	check "exporter: control characters in a path, raw or %-escaped, get 400; only /metrics is served" \
		test "$(tr '\n' '|' <<<"$codes")" = "$want|"

	# 200 half-open connections from 127.0.0.1, the exporter's own address,
	# three times its per-client limit, each replaced as soon as it is closed.
	hold_half_open 127.0.0.1 "$port" 200 "$LAB_TMP/held"
	for i in $(seq 100); do
		[ -e "$LAB_TMP/held" ] && break
		sleep 0.1
	done
	sleep 0.5
	: >"$LAB_TMP/held.codes"
	for i in $(seq 10); do
		curl -s -m 1 -o /dev/null -w '%{http_code} %{time_total}\n' "$url" >>"$LAB_TMP/held.codes"
		sleep 0.2
	done
	kill "$HOLD_PID" 2>/dev/null
	wait "$HOLD_PID" 2>/dev/null
	worst=$(awk '{ if ($2 > w) w = $2 } END { print w + 0 }' "$LAB_TMP/held.codes")
	CHECK_DETAIL="$(cut -d' ' -f1 "$LAB_TMP/held.codes" | sort | uniq -c | tr -s ' '); slowest $worst s"
	check "exporter: with 200 half-open connections from 127.0.0.1, 10 of 10 scrapes from there succeed, each within 1 s" \
		awk '{ n++; bad += $1 != 200 } END { exit !(n == 10 && !bad) }' "$LAB_TMP/held.codes"
	check "exporter: still running after them" kill -0 "$EXPORTER_PID"
	exporter_stop
}

test_dry_run() {
	local before
	"$SLUICE" set "$LAB_HOST" --action dry-run >/dev/null
	before=$(stat would_drop)
	flood "$SOURCES" 2 "$PPS" >/dev/null
	CHECK_DETAIL="would_drop grew by $(($(stat would_drop) - before))"
	check "dry run: over-limit packets count as would_drop" test "$(stat would_drop)" -gt "$before"
	CHECK_DETAIL="sum over sources $(top_sum), passed + dropped + would_drop $(($(stat passed) + $(stat dropped) + $(stat would_drop)))"
	check "dry run: top's per-source counts still add up to the counters" \
		test "$(top_sum)" = $(($(stat passed) + $(stat dropped) + $(stat would_drop)))
	"$SLUICE" set "$LAB_HOST" --action drop >/dev/null
}

# The schemas the README documents: exact key sets and types.
STATUS_SCHEMA='length == 1 and (.[0] | (keys == ["action","algorithm","burst","changed_at","changed_at_unix","fleet","generation","group","interface","ipv4_prefix","ipv6_prefix","key","layout_version","layout_warning","max_sources","mode","options","prog_id","rate","rate_amount","rate_period_ns","rate_unit","rules","state","warmup_ns","window_ns","xdp_mode"])
	and (.fleet == null)
	and ([.interface, .state, .mode, .xdp_mode, .rate, .rate_unit, .action, .options, .changed_at, .algorithm] | map(type == "string") | all)
	and (.key == "src" or .key == "dst" or .key == "pair")
	and ([.prog_id, .rate_amount, .rate_period_ns, .burst, .ipv4_prefix, .ipv6_prefix, .rules, .max_sources, .generation, .changed_at_unix, .layout_version, .window_ns, .warmup_ns] | map(type == "number") | all)
	and .layout_warning == null and .group == null)'
PAIR_SCHEMA='def pair(rated): keys == ["bps","bytes","packets","pps"] and (.packets | type == "number") and (.bytes | type == "number")
	and (if rated then (.pps | type == "number") and (.bps | type == "number") else .pps == null and .bps == null end);'
STATS_SCHEMA="$PAIR_SCHEMA"'
	def body(rated): keys == ["counters","interface","interval_s","rules","table","time_ns"]
	and (.interface | type == "string") and (.time_ns | type == "number")
	and (if rated then (.interval_s | type == "number") else .interval_s == null end)
	and (["passed","dropped","would_drop","marked","allowed","denied","non_ip","malformed","new_sources","insert_failed"] - (.counters | keys) == [])
	and ([.counters[] | pair(rated)] | all)
	and ([.rules[] | (keys == ["counters","rule"]) and (.rule | type == "string") and ([.counters[] | pair(rated)] | all)
		and (["passed","dropped","would_drop","marked"] - (.counters | keys) == [])] | all)
	and (.table | (["capacity","insert_failed","insert_failed_per_s","max_sources","new_sources","new_sources_per_s","sources"] - keys == [])
		and ([.sources, .capacity, .new_sources, .insert_failed] | map(type == "number") | all)
		and (if rated then (.new_sources_per_s | type == "number") else .new_sources_per_s == null end));'
TOP_SCHEMA='keys == ["interface","interval_s","sort","sources","sources_tracked","time_ns"]
	and (.sources | length > 0)
	and ([.sources[] | keys == ["algorithm","bucket","destination","dropped","family","key","limit","limited","next_pass_ns","passed","pps","prefix","proven","rule","source","warmup_stored","window_count"]
		and (.algorithm | type == "string") and (.limit | type == "number")
		and ([.bucket, .window_count, .warmup_stored] | map(select(. != null)) | length == 1)
		and (.prefix | test("^[0-9a-f.:]+/[0-9]+$")) and (.family == "ipv4" or .family == "ipv6")
		and (.rule | type == "string") and (.passed | type == "number") and (.dropped | type == "number")
		and (.limited | type == "boolean") and (.next_pass_ns | type == "number")
		and (.proven | type == "boolean")
		and (.key == "src" or .key == "dst" or .key == "pair")
		and ([.source, .destination] | map(select(. != null) | test("^[0-9a-f.:]+/[0-9]+$")) | length >= 1)
		and (.pps == null or (.pps | type == "number"))] | all)'

test_json_schemas() {
	"$SLUICE" status "$LAB_HOST" --json >"$LAB_TMP/s.json"
	check "status --json parses and matches the documented schema" jqcheck "$LAB_TMP/s.json" "$STATUS_SCHEMA"
	"$SLUICE" stats "$LAB_HOST" --json >"$LAB_TMP/s.json"
	check "stats --json parses and matches the documented schema (rates null)" \
		jqcheck "$LAB_TMP/s.json" "$STATS_SCHEMA body(false)"
	check "stats --watch --json matches the documented schema (rates set)" \
		bash -c "jq -e -s '$STATS_SCHEMA [.[] | body(true)] | all' '$LAB_TMP/watch.json' >/dev/null"
	top_json -n 3 >"$LAB_TMP/s.json"
	check "top --json parses and matches the documented schema" jqcheck "$LAB_TMP/s.json" "$TOP_SCHEMA and .interval_s == null"
	check "top --sort rate --json matches the documented schema" jqcheck "$LAB_TMP/rate.json" "$TOP_SCHEMA"
}

JSON_ERRORS=(
	"stats nosuchif0 --json"
	"top nosuchif0 --json"
	"status nosuchif0 --json"
	"stats HOST --json --bogus"
	"stats HOST --json --prometheus"
	"top HOST --json --sort size"
	"top HOST --json -n 0"
	"--json frobnicate"
)

test_json_errors() {
	local inv args out err rc
	for inv in "${JSON_ERRORS[@]}"; do
		read -r -a args <<<"${inv//HOST/$LAB_HOST}"
		out=$("$SLUICE" "${args[@]}" 2>"$LAB_TMP/err")
		rc=$?
		err=$(cat "$LAB_TMP/err")
		CHECK_DETAIL="exit $rc, stdout '$out', stderr '$err'"
		check "sluice $inv: exit 2, one JSON error on stdout, nothing on stderr" \
			test "$rc" = 2 -a -z "$err" -a "$(printf '%s\n' "$out" | grep -c '')" = 1 -a \
			"$(jq -c '(keys - ["command"]) == ["error"] and (.error | type == "string") and (.error | length > 0)' <<<"$out" 2>/dev/null)" = true
	done
}

lab_up || {
	echo "cannot build the veth lab"
	echo "0 passed, 1 failed"
	exit 1
}
"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST" >/dev/null
test_counts
test_watch
test_watch_hangup
test_watch_tty
test_top_ranking
test_prometheus
test_exporter
test_exporter_default
test_dry_run
test_json_schemas
test_json_errors
test_exporter_dual_stack
test_exporter_hangup
test_exporter_slow
test_exporter_hostile
lab_finish
