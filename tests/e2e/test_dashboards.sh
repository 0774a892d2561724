#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Grafana dashboard (contrib/grafana) and the Prometheus alert rules
# (contrib/prometheus) against the real thing: promtool checks the rules and
# runs their unit tests (every alert firing and not firing, each alert with
# both). Then a real exporter, a fleet agent on a real redis-server and a
# real Prometheus scraping them, on a veth lab under a flood: every sluice_
# name in the dashboard, the rules and their tests is one the exporter
# served, every series of the tests has a label set it served, every family
# it served is on a panel, every panel's query returns data from
# Prometheus, the rules evaluate without error, and new sources over the
# admission budget, fleet fallback, a deleted link, an interface detached
# and the exporter stopped make their alerts pending. The checker is shown
# to fail on a broken name, label, query or untested alert.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

DASHBOARD=contrib/grafana/sluice-dashboard.json
RULES=contrib/prometheus/sluice-alerts.yml
TESTS=tests/e2e/alerts_test.yml
CHECKER=tests/e2e/dashboard_check.py
RATE=100 # per source, per second
SOURCES=20
PPS=4000 # offered: 200 per source per second, over the limit

cleanup() {
	lab_down
	rm -f "/run/sluice/fleet/$LAB_HOST" "/run/sluice/fleet/$LAB_HOST.lock" "/run/sluice/fleet/$LAB_HOST.tmp"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for SECONDS COMMAND...: until COMMAND succeeds, for up to SECONDS.
wait_for() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.1
	done
}

test_promtool() {
	CHECK_DETAIL=$(promtool check rules "$RULES" 2>&1 | tail -n 2 | tr '\n' ' ')
	check "promtool check rules $RULES" promtool check rules "$RULES"
	CHECK_DETAIL=$(cd "$(dirname "$TESTS")" && promtool test rules "$(basename "$TESTS")" 2>&1 | head -n 20 | tr '\n' ' ')
	check "promtool test rules: every case of $TESTS" bash -c "cd '$(dirname "$TESTS")' && promtool test rules '$(basename "$TESTS")'"
	CHECK_DETAIL=$(python3 "$CHECKER" coverage "$RULES" "$TESTS" | tail -n +2 | tr '\n' ' ')
	check "every alert has a firing and a not-firing case" python3 "$CHECKER" coverage "$RULES" "$TESTS"
	# An alert added without tests must fail the check above.
	sed 's/^\(      - alert: SluiceTableFull\)$/      - alert: SluiceUntested\n        expr: vector(1)\n\1/' \
		"$RULES" >"$LAB_TMP/untested.yml"
	check "the coverage check fails on an alert without tests" \
		bash -c "grep -q SluiceUntested '$LAB_TMP/untested.yml' && ! python3 '$CHECKER' coverage '$LAB_TMP/untested.yml' '$TESTS'"
	CHECK_DETAIL=$(python3 "$CHECKER" dashboard "$DASHBOARD" | head -n 3 | tr '\n' ' ')
	check "dashboard: JSON, datasource \${DS_PROMETHEUS}, \$instance and \$interface, a query in every panel" \
		python3 "$CHECKER" dashboard "$DASHBOARD"
	jq '.panels[1].targets = []' "$DASHBOARD" >"$LAB_TMP/noquery.json"
	check "the dashboard check fails on a panel without a query" \
		bash -c "! python3 '$CHECKER' dashboard '$LAB_TMP/noquery.json'"
}

redis_start() {
	REDIS_PORT=$(free_port)
	redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$LAB_TMP" --logfile "$LAB_TMP/redis.log" >/dev/null 2>&1 &
	REDIS_PID=$!
	LAB_PIDS+=("$REDIS_PID")
	wait_for 5 bash -c "redis-cli -p $REDIS_PORT ping | grep -q PONG"
}

agent_start() {
	"$SLUICE" agent "$LAB_HOST" --redis "127.0.0.1:$REDIS_PORT" --period 100ms \
		2>"$LAB_TMP/agent.log" &
	LAB_PIDS+=($!)
	wait_for 10 grep -qx 'up 1' "/run/sluice/fleet/$LAB_HOST"
}

prometheus_start() {
	PROM_ADDR=127.0.0.1:$(free_port)
	cat >"$LAB_TMP/prometheus.yml" <<-CONF
		global:
		  scrape_interval: 2s
		  scrape_timeout: 2s
		  evaluation_interval: 1s
		rule_files:
		  - $PWD/$RULES
		scrape_configs:
		  - job_name: sluice
		    static_configs:
		      - targets: ['$EXPORTER_ADDR']
	CONF
	prometheus --config.file="$LAB_TMP/prometheus.yml" --storage.tsdb.path="$LAB_TMP/tsdb" \
		--web.listen-address="$PROM_ADDR" >"$LAB_TMP/prometheus.log" 2>&1 &
	LAB_PIDS+=($!)
	wait_for 20 prom_has "sluice_up{interface=\"$LAB_HOST\"} == 1"
}

# prom_query PROMQL: the API's answer.
prom_query() {
	curl -s -m 5 -G "http://$PROM_ADDR/api/v1/query" --data-urlencode "query=$1"
}

# prom_has PROMQL: the query succeeds with at least one series.
prom_has() {
	prom_query "$1" | jq -e '.status == "success" and (.data.result | length > 0)'
}

# alert_active NAME: the alert pending or firing for the lab's interface (or,
# for the exporter's, its instance).
alert_active() {
	curl -s -m 5 "http://$PROM_ADDR/api/v1/alerts" | jq -e --arg a "$1" --arg i "$LAB_HOST" \
		--arg e "$EXPORTER_ADDR" '[.data.alerts[] | select(.labels.alertname == $a and
			(.labels.interface == $i or (.labels.interface == null and .labels.instance == $e)))] | length > 0'
}

# The alerts pending or firing for the lab's interface or exporter, one a line
# (the exporter also serves other interfaces of the host: theirs are not ours).
lab_alerts() {
	curl -s -m 5 "http://$PROM_ADDR/api/v1/alerts" | jq -r --arg i "$LAB_HOST" --arg e "$EXPORTER_ADDR" \
		'.data.alerts[] | select(.labels.interface == $i or (.labels.interface == null and .labels.instance == $e))
			| "\(.labels.alertname) \(.state)"'
}

alert_quiet() {
	! alert_active "$1"
}

# The dashboard's queries with its variables set to the lab's exporter and interface.
dashboard_queries() {
	jq -r '.panels[].targets[]?.expr' "$DASHBOARD" |
		sed -e "s/\\\$instance/$EXPORTER_ADDR/g" -e "s/\\\$interface/$LAB_HOST/g" \
			-e 's/\$__rate_interval/10s/g'
}

queries_have_data() {
	local q bad=0
	CHECK_DETAIL=
	while IFS= read -r q; do
		prom_has "$q" && continue
		CHECK_DETAIL+="$q: $(prom_query "$q" | head -c 200); "
		bad=1
	done < <(dashboard_queries)
	[ "$bad" = 0 ] || CHECK_DETAIL="up $(prom_query up | jq -c '[.data.result[].value[1]]'), scrape took $(prom_query scrape_duration_seconds | jq -c '[.data.result[].value[1]]') s: $CHECK_DETAIL"
	return "$bad"
}

# rules_healthy: Prometheus has loaded every alert of $RULES, each evaluated without error.
rules_healthy() {
	local r n
	n=$(grep -c '^ *- alert: ' "$RULES")
	r=$(curl -s -m 5 "http://$PROM_ADDR/api/v1/rules")
	CHECK_DETAIL=$(jq -r '[.data.groups[].rules[] | select(.health != "ok") | "\(.name): \(.lastError)"] | join("; ")' <<<"$r")
	jq -e --argjson n "$n" '[.data.groups[].rules[]] | length == $n and all(.health == "ok")' <<<"$r"
}

test_live() {
	local fpid
	# A small table: the exporter walks it at each scrape, within Prometheus's 1 s.
	"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$RATE" --max-sources 4096 >/dev/null || {
		check "attach on the lab interface" false
		return
	}
	CHECK_DETAIL=$(cat "$LAB_TMP/exporter.out" 2>/dev/null)
	check "exporter starts" exporter_start --listen 127.0.0.1:0 || return
	CHECK_DETAIL=$(tail -n 3 "$LAB_TMP/redis.log" 2>/dev/null | tr '\n' ' ')
	check "redis-server starts" redis_start || return
	CHECK_DETAIL=$(tail -n 3 "$LAB_TMP/agent.log" 2>/dev/null | tr '\n' ' ')
	check "fleet agent starts and is up" agent_start || return
	flood "$SOURCES" 30 "$PPS" >/dev/null &
	fpid=$!
	LAB_PIDS+=("$fpid")
	sleep 2
	curl -s -m 5 "http://$EXPORTER_ADDR/metrics" >"$LAB_TMP/scrape"
	check "the scrape shows drops under the flood, and the agent's families" \
		grep -qE "^sluice_dropped_packets_total\{interface=\"$LAB_HOST\",rule=\"default\",reason=\"rate\"\} [1-9]" "$LAB_TMP/scrape"
	check "the scrape has every fleet family of an agent (fleet_families and the rest)" \
		bash -c "for f in sluice_fleet_up sluice_fleet_sync_lag_seconds sluice_fleet_sources sluice_fleet_hosts \
			sluice_fleet_calls_total sluice_fleet_would_refuse_total sluice_fleet_errors_total; do
			grep -q \"^\$f{interface=\\\"$LAB_HOST\\\"\" '$LAB_TMP/scrape' || exit 1; done"
	CHECK_DETAIL=$(python3 "$CHECKER" names "$LAB_TMP/scrape" "$DASHBOARD" "$RULES" "$TESTS" | head -n 5 | tr '\n' ' ')
	check "every sluice_ name in the dashboard, the rules and their tests is served; the tests' label sets too; every family served is on the dashboard" \
		python3 "$CHECKER" names "$LAB_TMP/scrape" "$DASHBOARD" "$RULES" "$TESTS"
	# The check must fail on one wrong name in each file, and on a wrong label.
	sed '0,/sluice_dropped_packets_total/s//sluice_droped_packets_total/' "$DASHBOARD" >"$LAB_TMP/d.json"
	sed '0,/sluice_max_sources/s//sluice_sources_max/' "$RULES" >"$LAB_TMP/r.yml"
	sed '0,/sluice_refused_total/s//sluice_refusals_total/' "$TESTS" >"$LAB_TMP/t.yml"
	sed '0,/reason="full"/s//reason="fill"/' "$TESTS" >"$LAB_TMP/l.yml"
	jq 'del(.panels[].targets[]? | select(.expr | contains("sluice_fleet_would_refuse_total")))' \
		"$DASHBOARD" >"$LAB_TMP/m.json"
	check "the name check fails on a family served but on no panel" \
		bash -c "! python3 '$CHECKER' names '$LAB_TMP/scrape' '$LAB_TMP/m.json' '$RULES' '$TESTS'"
	check "the name check fails on a wrong name in the dashboard" \
		bash -c "! python3 '$CHECKER' names '$LAB_TMP/scrape' '$LAB_TMP/d.json' '$RULES' '$TESTS'"
	check "the name check fails on a wrong name in the rules" \
		bash -c "! python3 '$CHECKER' names '$LAB_TMP/scrape' '$DASHBOARD' '$LAB_TMP/r.yml' '$TESTS'"
	check "the name check fails on a wrong name in the rules' tests" \
		bash -c "! python3 '$CHECKER' names '$LAB_TMP/scrape' '$DASHBOARD' '$RULES' '$LAB_TMP/t.yml'"
	check "the name check fails on a label value the exporter does not serve" \
		bash -c "! python3 '$CHECKER' names '$LAB_TMP/scrape' '$DASHBOARD' '$RULES' '$LAB_TMP/l.yml'"

	CHECK_DETAIL=$(tail -n 3 "$LAB_TMP/prometheus.log" 2>/dev/null | tr '\n' ' ')
	check "Prometheus scrapes the exporter with the rules loaded" prometheus_start || return
	# Rates need a few scrapes: polled, since a loaded host scrapes late.
	check "the drop rate Prometheus sees is over 1000/s under the flood" \
		wait_for 30 prom_has "sum(rate(sluice_dropped_packets_total{interface=\"$LAB_HOST\"}[10s])) > 1000"
	check "every panel's query returns data from Prometheus ($(dashboard_queries | wc -l) queries)" \
		wait_for 20 queries_have_data
	check "Prometheus evaluates all $(grep -c '^ *- alert: ' "$RULES") rules without error" wait_for 10 rules_healthy
	CHECK_DETAIL=$(lab_alerts)
	check "no alert pending or firing for the interface while all is well (under the flood)" \
		test -z "$CHECK_DETAIL"
	# A budget of one new source a second, and 200 new sources: most refused.
	"$SLUICE" set "$LAB_HOST" --new-sources 1/s >/dev/null
	flood 200 4 1000 "$LAB_NET.2.0" >/dev/null
	CHECK_DETAIL="refused $("$SLUICE" stats "$LAB_HOST" --json | jq .table.refused)"
	check "new sources over --new-sources: SluiceAdmissionBudgetSpent pending for the interface" \
		wait_for 20 alert_active SluiceAdmissionBudgetSpent
	# The agent learns Redis is gone from a sync call, which traffic makes:
	# a flood of its own, whatever is left of the first one.
	flood "$SOURCES" 15 "$PPS" >/dev/null &
	LAB_PIDS+=($!)
	kill "$REDIS_PID" 2>/dev/null
	CHECK_DETAIL=$(tail -n 2 "$LAB_TMP/agent.log" | tr '\n' ' ')
	check "Redis gone: SluiceFleetFallback pending for the interface" wait_for 20 alert_active SluiceFleetFallback
	# The link deleted under sluice: its pinned state is stale.
	ip link del "$LAB_HOST"
	check "link deleted: SluiceInterfaceStale pending for it" wait_for 20 alert_active SluiceInterfaceStale
	check "link deleted: SluiceInterfaceUnreadable quiet (the exporter still reads the state)" \
		alert_quiet SluiceInterfaceUnreadable
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "interface detached: SluiceInterfaceGone pending for it" wait_for 20 alert_active SluiceInterfaceGone
	kill "$EXPORTER_PID" 2>/dev/null
	check "exporter stopped: SluiceExporterDown pending for it" wait_for 20 alert_active SluiceExporterDown
}

lab_up || {
	echo "cannot build the veth lab"
	echo "0 passed, 1 failed"
	exit 1
}
trap cleanup EXIT
test_promtool
test_live
lab_finish
