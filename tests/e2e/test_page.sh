#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The exporter's live page (issue 38) in a real headless Chromium, driven
# over the DevTools protocol (tests/e2e/cdp.py), against an interface of the
# veth lab under a flood: the charts draw, the numbers on the page are those
# of `stats --json` within one refresh, the top source shown is the
# flooder, a screenshot is not blank; the interface detached mid-way, the
# page says so and keeps polling, and shows it again once attached anew.
# Then its paths and methods as the exporter's other paths, and the
# exporter's memory and CPU under 100 clients polling once a second.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

CHROMIUM=${CHROMIUM:-chromium}
CDP="python3 tests/e2e/cdp.py"
RATE=10 # per source, per second
BURST=10
SOURCES=20
SOURCES_PPS=1000 # 50 per source per second, five times the rate
HEAVY=$LAB_NET.9.9
HEAVY_PPS=3000
FLOOD_SECS=600 # longer than the test: stopped at its end
CLIENTS=100
POLL_SECS=${POLL_SECS:-30}

# The flood's and Chromium's processes: Chromium's in a process group of their own.
page_down() {
	[ -n "${CHROME_PID:-}" ] && kill -TERM -- "-$CHROME_PID" 2>/dev/null
	[ -n "${CHROME_PID:-}" ] && wait "$CHROME_PID" 2>/dev/null
	CHROME_PID=
	[ -n "${FLEET_FILE:-}" ] && rm -f "$FLEET_FILE" "$FLEET_FILE.tmp"
	# The directories, only those this test made, and only when left empty.
	[ -n "${FLEET_MADE:-}" ] && rmdir $FLEET_MADE 2>/dev/null
	lab_down
}

# flood_bg SOURCES PPS FIRST: a flood in the background until the test ends.
flood_bg() {
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" --dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" \
		--dst "$LAB_HOST_IP" --dport "$LAB_PORT" --src "$3" --sources "$1" \
		--duration "$FLOOD_SECS" --rate "$2" >/dev/null 2>>"$LAB_TMP/flood.err" &
	LAB_PIDS+=($!)
}

# chrome_start URL: a headless Chromium on URL; sets CHROME_PORT, its DevTools port.
chrome_start() {
	local i
	setsid "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
		--no-first-run --no-default-browser-check --disable-extensions \
		--user-data-dir="$LAB_TMP/chrome" --window-size=1280,1600 \
		--remote-debugging-address=127.0.0.1 --remote-debugging-port=0 "$1" \
		>"$LAB_TMP/chrome.out" 2>&1 &
	CHROME_PID=$!
	for i in $(seq 100); do
		CHROME_PORT=$(sed -n 's|^DevTools listening on ws://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$LAB_TMP/chrome.out")
		[ -n "$CHROME_PORT" ] && return 0
		sleep 0.1
	done
	return 1
}

# js EXPRESSION: its value in the page, as JSON.
js() {
	$CDP "$CHROME_PORT" eval "$1" 2>>"$LAB_TMP/cdp.err"
}

# wait_js EXPRESSION SECONDS: until the expression is true in the page.
wait_js() {
	local i
	for i in $(seq $(($2 * 5))); do
		[ "$(js "$1")" = true ] && return 0
		sleep 0.2
	done
	return 1
}

# The page's figure of a counter: packets in the outcomes table.
page_counter() {
	js "+document.querySelector('#outcomes tr[data-counter=$1] td.packets').dataset.value"
}

stats_counter() {
	"$SLUICE" stats "$LAB_HOST" --json | jq -r ".counters.$1.packets"
}

REFRESHES="+(document.body.dataset.refreshes || 0)"

# json_log FILE SECONDS COMMAND...: COMMAND's JSON documents, one a line,
# as often as it runs, for SECONDS. FILE.ns gets its longest run in ns: a
# document's time_ns is taken after its counters are read, and on a loaded
# host the process can be put aside between the two for up to that long
# (the exporter's reads, the same code, alike).
json_log() {
	local f=$1 end=$((SECONDS + $2)) a b m=0
	shift 2
	while [ "$SECONDS" -lt "$end" ]; do
		a=${EPOCHREALTIME/./}
		"$@"
		b=${EPOCHREALTIME/./}
		[ $((b - a)) -gt "$m" ] && m=$((b - a))
	done >"$f"
	echo $((m * 1000)) >"$f.ns"
}

# json_log_start FILE: once the log has a document, the time_ns of its first.
json_log_start() {
	local i
	for i in $(seq 50); do
		[ -s "$1" ] && break
		sleep 0.1
	done
	head -1 "$1" | jq -r '.time_ns // 0'
}

# rate_bracket SERIES END_NS INTERVAL_S MARGIN_NS: "least..most" per second
# that a counter can have grown over [END - INTERVAL, END], both ends read
# up to MARGIN before their time, from the samples of SERIES ("time_ns
# value" lines, read as late) certainly before or after each end; nothing
# when the samples do not cover both ends.
rate_bracket() {
	awk -v e="$2" -v i="$3" -v m="$4" '
	{ t[NR] = $1; d[NR] = $2 }
	END {
		s = e - i * 1e9
		for (k = 1; k <= NR; k++) {
			if (t[k] < s - m) sb = d[k]
			if (t[k] > s + m && sa == "") sa = d[k]
			if (t[k] < e - m) eb = d[k]
			if (t[k] > e + m && ea == "") ea = d[k]
		}
		if (i > 0 && sb != "" && sa != "" && eb != "" && ea != "")
			printf "%.1f..%.1f\n", (eb - sa) / i, (ea - sb) / i
	}' "$1"
}

# rate_within BRACKET RATE: RATE lies in it (to the 0.1 rates are printed with).
rate_within() {
	[ -n "$1" ] && awk -v b="$1" -v v="$2" 'BEGIN { split(b, r, /\.\./); exit !(v >= r[1] - 0.1 && v <= r[2] + 0.1) }'
}

# flooder_first: the flooder heads the page's busiest sources, at the
# highest rate shown, against its limit.
flooder_first() {
	[ "$(js "(() => { const r = [...document.querySelectorAll('#top tbody tr')];
		const pps = r.map(x => +x.querySelector('td.pps').dataset.value);
		return r[0].dataset.prefix === '$HEAVY/32' && pps.every(v => v <= pps[0]) &&
			/\/$BURST gcra/.test(r[0].querySelector('td.level').textContent); })()")" = true ]
}

test_live() {
	local url a b p c shot colours r0 r1 top t0 t1 ival log range
	url="http://$EXPORTER_ADDR/if/$LAB_HOST"
	chrome_start "$url" || {
		CHECK_DETAIL=$(tail -3 "$LAB_TMP/chrome.out" | tr '\n' ' ')
		check "chromium starts headless with a DevTools port" false
		return
	}
	check "chromium starts headless with a DevTools port" test -n "$CHROME_PORT"
	check "page: polls /api/stats and shows the interface attached" \
		wait_js "document.body.dataset.state === 'ok' && $REFRESHES >= 2" 20
	check "page: both charts draw the dropped and passed series over several points" \
		wait_js "['chart-pps', 'chart-bps'].every(id => { const s = document.getElementById(id);
			return +s.dataset.points >= 4 &&
				s.querySelector('polyline[data-outcome=dropped]') &&
				s.querySelector('polyline[data-outcome=passed]'); })" 20
	CHECK_DETAIL=$(js "document.getElementById('chart-pps').querySelector('polyline[data-outcome=dropped]').getAttribute('points').split(' ').length")
	check "page: the dropped series has a point per refresh" test "${CHECK_DETAIL:-0}" -ge 4

	# Within one refresh: stats read before the page's last two refreshes
	# (the document is shared for up to a second, the page polls every
	# second) is at most what the page shows, and stats read after, at least.
	for c in dropped passed; do
		a=$(stats_counter "$c")
		r0=$(js "$REFRESHES")
		wait_js "$REFRESHES >= $((r0 + 2))" 10
		p=$(page_counter "$c")
		b=$(stats_counter "$c")
		CHECK_DETAIL="stats before $a, page $p, stats after $b"
		check "page: $c packets lie between stats --json read a refresh before and after" \
			test "$a" -gt 0 -a "$a" -le "${p:-0}" -a "${p:-0}" -le "$b"
	done
	# The rate the page draws is the exporter's over the interval its
	# document names (time_ns, interval_s: the same monotonic clock as
	# stats'). Stats --json sampled all along brackets the counter at each
	# end of that interval, so the rate lies between the least and the most
	# the samples allow, however the generator wavers.
	log=$LAB_TMP/stats.json
	json_log "$log" 9 "$SLUICE" stats "$LAB_HOST" --json &
	LAB_PIDS+=($!)
	t0=$(json_log_start "$log")
	wait_js "document.body.dataset.timeNs - document.body.dataset.intervalS * 1e9 > $t0 + 1e9" 5
	read -r p t1 ival < <(js "[+document.querySelector('#outcomes tr[data-counter=dropped] td.pps').dataset.value,
		document.body.dataset.timeNs, document.body.dataset.intervalS].join(' ')" | tr -d '"')
	wait "${LAB_PIDS[-1]}"
	jq -r '"\(.time_ns) \(.counters.dropped.packets)"' "$log" >"$log.dropped"
	range=$(rate_bracket "$log.dropped" "${t1:-0}" "${ival:-0}" "$(cat "$log.ns")")
	CHECK_DETAIL="page $p dropped/s over ${ival}s to $t1 ns; stats allow ${range:-nothing} dropped/s"
	check "page: the dropped rate drawn is the one stats counts over the document's interval" \
		rate_within "$range" "${p:-0}"
	a=$("$SLUICE" stats "$LAB_HOST" --json | jq -r '.table.sources')
	CHECK_DETAIL="stats $a, page $(js "document.querySelector('#table tr[data-key=sources] td:last-child').dataset.value")"
	check "page: table fill shows the sources stats counts" \
		test "$(js "document.querySelector('#table tr[data-key=sources] td:last-child').dataset.value")" = "\"$a\""
	check "page: the rule's counters are shown" \
		test "$(js "document.querySelectorAll('#rules tr[data-rule=default]').length")" = 1

	# Within a few refreshes: on a loaded host a generator can stall for
	# long enough that its bucket refills between two of them.
	CHECK_DETAIL="top row at first: $(js "document.querySelector('#top tbody tr').textContent")"
	check "page: the top source shown is the flooder, limited now" \
		wait_js "(() => { const r = document.querySelector('#top tbody tr');
			return !!r && r.dataset.prefix === '$HEAVY/32' &&
				r.querySelector('td.limited').textContent === 'yes'; })()" 5
	# The flooder's rate on the page, which the page takes between two top
	# documents (its cell names their times), against top --json sampled
	# all along, as the dropped rate above.
	log=$LAB_TMP/top.json
	json_log "$log" 9 "$SLUICE" top "$LAB_HOST" --json -n 5 &
	LAB_PIDS+=($!)
	t0=$(json_log_start "$log")
	top="document.querySelector('#top tbody tr td.pps')"
	wait_js "$top.dataset.fromNs > $t0 + 1e9" 5
	read -r p t1 ival < <(js "[+$top.dataset.value, $top.dataset.toNs,
		($top.dataset.toNs - $top.dataset.fromNs) / 1e9].join(' ')" | tr -d '"')
	wait "${LAB_PIDS[-1]}"
	jq -r --arg p "$HEAVY/32" '"\(.time_ns) \(.sources[] | select(.prefix == $p) | .passed + .dropped)"' \
		"$log" >"$log.heavy"
	range=$(rate_bracket "$log.heavy" "${t1:-0}" "${ival:-0}" "$(cat "$log.ns")")
	CHECK_DETAIL="page $p pps over ${ival}s to $t1 ns; top allows ${range:-nothing} pps; top row: $(js "document.querySelector('#top tbody tr').textContent")"
	check "page: the flooder's rate is the one top counts over the same interval, the highest shown, against its limit" \
		eval 'rate_within "$range" "${p:-0}" && flooder_first'

	CHECK_DETAIL=$(js "performance.getEntriesByType('resource').map(e => e.name).filter(n =>
		!n.startsWith('http://$EXPORTER_ADDR/')).join(' ')")
	check "page: fetched nothing from outside the exporter (Chromium's resource timing)" \
		test "$CHECK_DETAIL" = '""'

	shot="$LAB_TMP/page.png"
	$CDP "$CHROME_PORT" shot "$shot" 2>>"$LAB_TMP/cdp.err"
	colours=$($CDP "$CHROME_PORT" colours "$shot" 2>>"$LAB_TMP/cdp.err")
	CHECK_DETAIL="$(stat -c %s "$shot" 2>/dev/null) bytes, ${colours:-no} colours"
	check "page: the screenshot is a PNG with the charts' colours, not blank" \
		test "${colours:-0}" -ge 16
	[ -n "${PAGE_SHOT:-}" ] && cp "$shot" "$PAGE_SHOT"

	# Detached mid-way, the flood still on.
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "page: says the interface is detached" \
		wait_js "document.body.dataset.state === 'gone' &&
			/not attached/.test(document.getElementById('state').textContent)" 10
	r0=$(js "$REFRESHES")
	sleep 3
	r1=$(js "$REFRESHES")
	CHECK_DETAIL="refreshes $r0 then $r1 three seconds later"
	check "page: keeps polling while it is detached" test "$r1" -ge $((r0 + 2))
	"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST" >/dev/null
	check "page: shows it again, and its drops, once attached anew" \
		wait_js "document.body.dataset.state === 'ok' &&
			+document.querySelector('#outcomes tr[data-counter=dropped] td.packets').dataset.value > 0" 10
}

# The fleet agent's state as the page shows it, from the report an agent
# writes for status and the exporter (/run/sluice/fleet/IFACE): written here
# as the agent writes it, for a process of ours, an agent fallen back to its
# local limit. The agent itself, against Redis, is test_fleet.sh's.
test_fleet_state() {
	FLEET_FILE=/run/sluice/fleet/$LAB_HOST
	[ -d /run/sluice/fleet ] || FLEET_MADE=/run/sluice/fleet
	[ -d /run/sluice ] || FLEET_MADE="$FLEET_MADE /run/sluice"
	mkdir -p /run/sluice/fleet
	printf 'pid %d\nup 0\nmode fallback-local\nperiod_ns 100000000\nhosts 3\ncandidates 7\nlag_ns 2500000000\nunpushed 42\nwritten_ns %s\n' \
		$$ "$(date +%s%N)" >"$FLEET_FILE.tmp"
	mv "$FLEET_FILE.tmp" "$FLEET_FILE"
	CHECK_DETAIL=$(js "document.getElementById('fleet').textContent")
	check "page: shows the fleet agent's state, fallen back" \
		wait_js "/^DOWN, mode fallback-local, 3 hosts, 7 sources synced, lag 2500 ms, 42 packets unpushed/.test(
			document.getElementById('fleet').textContent)" 4
	rm -f "$FLEET_FILE"
	check "page: says no agent runs once its report is gone" \
		wait_js "/no agent runs/.test(document.getElementById('fleet').textContent)" 5
}

# target_codes PORT: "CODE TARGET" for the page's paths, sent raw; the
# interface's name written IF.
target_codes() {
	python3 tests/e2e/raw_status.py "$1" <<EOF | sed "s|^\([0-9]*\) /if/$LAB_HOST$|\1 /if/IF|"
/
/?x=1
/api/stats
/%61pi/stats
/api/stats?iface=x
/if/$LAB_HOST
/if/%6c%6f
/if/none
/if/
/if
/if/a%2fb
/if/a/b
/if/0123456789abcdef
/if/..
/if/a%20b
/api/stats/
/api
//
/index.html
/%00
/api/stats%00
/if/lo%00
/if/lo\x00x
/if/l%0ao
/\x1b
EOF
}

test_paths() {
	local port want codes i pids
	port=${EXPORTER_ADDR##*:}
	codes=$(target_codes "$port")
	want="200 /|200 /?x=1|200 /api/stats|200 /%61pi/stats|200 /api/stats?iface=x|200 /if/IF|\
200 /if/%6c%6f|200 /if/none|404 /if/|404 /if|404 /if/a%2fb|404 /if/a/b|404 /if/0123456789abcdef|\
404 /if/..|404 /if/a%20b|404 /api/stats/|404 /api|404 //|404 /index.html|\
400 /%00|400 /api/stats%00|400 /if/lo%00|400 /if/lo\\x00x|400 /if/l%0ao|400 /\\x1b"
	CHECK_DETAIL=$(diff <(tr '|' '\n' <<<"$want") <(echo "$codes") | tr '\n' ' ')
	check "exporter: the page's paths decoded and checked as /metrics is; others 404, control bytes 400" \
		test "$(tr '\n' '|' <<<"$codes")" = "$want|"
	CHECK_DETAIL=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://$EXPORTER_ADDR/api/stats")
	check "exporter: POST /api/stats gets 405 (read-only)" test "$CHECK_DETAIL" = 405
	CHECK_DETAIL=$(curl -s -o /dev/null -w '%{content_type}' "http://$EXPORTER_ADDR/api/stats")
	check "exporter: /api/stats is JSON" test "$CHECK_DETAIL" = application/json
	# Shared: 10 clients at once within a second get one or two documents, not 10.
	pids=()
	for i in $(seq 10); do
		curl -s -m 10 "http://$EXPORTER_ADDR/api/stats" | jq -r .time_ns >"$LAB_TMP/api.time.$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	CHECK_DETAIL="$(sort -u "$LAB_TMP"/api.time.* | wc -l) documents"
	check "exporter: /api/stats is built once a second and shared by the clients of that second" \
		test "$(sort -u "$LAB_TMP"/api.time.* | wc -l)" -le 2
	curl -s "http://$EXPORTER_ADDR/" >"$LAB_TMP/page.html"
	check "exporter: the page is the file in the tree, byte for byte" \
		cmp -s "$LAB_TMP/page.html" user/commands/page.html
	check "exporter: the page links nothing (no src=, href to a file, @import, url())" \
		bash -c "! grep -Eq 'src=|<link|@import|url\\(' '$LAB_TMP/page.html'"
	curl -s "http://$EXPORTER_ADDR/api/stats" >"$LAB_TMP/api.json"
	"$SLUICE" stats "$LAB_HOST" --json >"$LAB_TMP/stats.json"
	"$SLUICE" top "$LAB_HOST" --json -n 10 >"$LAB_TMP/top.json"
	check "exporter: /api/stats holds stats --json's and top --json's objects, key for key" \
		test "$(jq -c --arg i "$LAB_HOST" '.stats[] | select(.interface == $i) | [paths | map(tostring) | join(".")] | sort' "$LAB_TMP/api.json" |
			sed 's/"counters\.[a-z_]*\.\(pps\|bps\)",//g')" = \
		"$(jq -c '[paths | map(tostring) | join(".")] | sort' "$LAB_TMP/stats.json" | sed 's/"counters\.[a-z_]*\.\(pps\|bps\)",//g')" -a \
		"$(jq -c --arg i "$LAB_HOST" '.top[] | select(.interface == $i) | [paths | map(tostring) | join(".")] | sort' "$LAB_TMP/api.json")" = \
		"$(jq -c '[paths | map(tostring) | join(".")] | sort' "$LAB_TMP/top.json")"
}

# proc_cpu PID: user + system clock ticks of the process.
proc_cpu() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# 100 pages' worth of polling: each client GETs /api/stats once a second.
test_hundred_pages() {
	local rss0 rss1 hwm cpu0 cpu1 tck t0 t1 ok total
	rss0=$(awk '/^VmRSS/ { print $2 }' "/proc/$EXPORTER_PID/status")
	cpu0=$(proc_cpu "$EXPORTER_PID")
	t0=$(date +%s.%N)
	python3 - "$EXPORTER_ADDR" "$CLIENTS" "$POLL_SECS" >"$LAB_TMP/poll.out" <<'PY'
import sys, threading, time, urllib.request
addr, clients, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ok = [0] * clients
sent = [0] * clients
def poll(i):
    end = time.monotonic() + secs
    nxt = time.monotonic() + i / clients # spread over the first second
    while nxt < end:
        time.sleep(max(0, nxt - time.monotonic()))
        sent[i] += 1
        try:
            with urllib.request.urlopen(f"http://{addr}/api/stats", timeout=5) as r:
                if r.status == 200 and r.read().startswith(b"{"):
                    ok[i] += 1
        except OSError:
            pass
        nxt += 1
ts = [threading.Thread(target=poll, args=(i,)) for i in range(clients)]
for t in ts: t.start()
for t in ts: t.join()
print(sum(ok), sum(sent))
PY
	t1=$(date +%s.%N)
	cpu1=$(proc_cpu "$EXPORTER_PID")
	rss1=$(awk '/^VmRSS/ { print $2 }' "/proc/$EXPORTER_PID/status")
	hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$EXPORTER_PID/status")
	tck=$(getconf CLK_TCK)
	read -r ok total <"$LAB_TMP/poll.out"
	echo "     $CLIENTS clients polling once a second for $POLL_SECS s: $ok of $total requests answered;" \
		"exporter RSS $rss0 kB before, $rss1 kB after (peak $hwm kB);" \
		"CPU $(awk -v c=$((cpu1 - cpu0)) -v t="$tck" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f%% of one core", 100 * c / t / (b - a) }')"
	CHECK_DETAIL="$ok of $total"
	check "exporter: $CLIENTS clients polling once a second are all answered" \
		test "${ok:-0}" -ge $((CLIENTS * (POLL_SECS - 1))) -a "${ok:-0}" = "${total:-x}"
	CHECK_DETAIL="RSS $rss0 kB then $rss1 kB"
	check "exporter: memory stays bounded under them (RSS grows by less than 16 MB)" \
		test "$((rss1 - rss0))" -lt 16384
	CHECK_DETAIL="$((cpu1 - cpu0)) ticks of $tck/s over $POLL_SECS s"
	check "exporter: CPU under them stays below half a core" \
		test $((2 * (cpu1 - cpu0))) -lt $((tck * POLL_SECS))
}

command -v "$CHROMIUM" >/dev/null || {
	echo "FAIL $CHROMIUM is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
}
lab_up || {
	echo "cannot build the veth lab"
	echo "0 passed, 1 failed"
	exit 1
}
trap 'page_down' EXIT
"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$BURST" >/dev/null
flood_bg 1 "$HEAVY_PPS" "$HEAVY"
flood_bg "$SOURCES" "$SOURCES_PPS" "$LAB_SRC_BASE"
exporter_start --listen 127.0.0.1:0 || {
	CHECK_DETAIL=$(cat "$LAB_TMP/exporter.out")
	check "exporter starts" false
	lab_finish
	exit
}
test_live
test_fleet_state
test_paths
test_hundred_pages
check "exporter: still running after all of that" kill -0 "$EXPORTER_PID"
lab_finish
