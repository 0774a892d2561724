#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The audit trail, read back from syslog: each command that changes an
# interface writes one line (who, the command, old -> new, the generation),
# a failed or idle one none; the generation and last change in status and
# the exporter; status warning about state of an older layout.
#
# syslog(3) writes to /dev/log. This machine may have no syslog daemon, and
# the host's must not be disturbed, so the test runs a listener of its own
# (python3, one datagram per line, every byte outside printable ASCII and
# every backslash escaped, so what the binary sent is seen exactly) in a
# mount namespace of its own, whose /dev is a tmpfs holding that socket.
# The commands whose lines are read run in that namespace (nsenter).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

LOG=$LAB_TMP/syslog
PRI_AUTHPRIV_NOTICE=85 # LOG_AUTHPRIV (10 << 3) | LOG_NOTICE (5)

LISTENER='
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
out = open(sys.argv[2], "a", buffering=1)
open(sys.argv[2] + ".ready", "w").close()
while True:
    d = s.recv(1 << 20)
    out.write("".join("\\\\" if b == 92 else chr(b) if 32 <= b < 127 else "\\x%02x" % b
                      for b in d) + "\n")
'

# A tmpfs over /dev with the few devices a command needs, and the listener
# on /dev/log; the namespace ends with the listener (in LAB_PIDS).
log_up() {
	mkdir -p "$LAB_TMP/olddev"
	unshare -m --propagation private bash -c '
		mount --bind /dev "$1/olddev" && mount -t tmpfs -o mode=0755 sluice-audit /dev &&
		for d in null zero full random urandom tty; do
			touch "/dev/$d" && mount --bind "$1/olddev/$d" "/dev/$d" || exit 1
		done &&
		exec python3 -c "$2" /dev/log "$3"' _ "$LAB_TMP" "$LISTENER" "$LOG" \
		2>"$LAB_TMP/listener.err" &
	LOG_PID=$!
	LAB_PIDS+=("$LOG_PID")
	local i
	for i in $(seq 50); do
		[ -e "$LOG.ready" ] && return 0
		kill -0 "$LOG_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# logged ARGS...: sluice ARGS with syslog going to the listener.
logged() {
	# Entering a mount namespace moves to its /: keep the listener's root
	# (a chroot, such as tools/clean-root.sh's) and stay where the test is.
	nsenter -t "$LOG_PID" -m --root --wd="$PWD" "$SLUICE" "$@"
}

# The audit lines so far, as the listener wrote them.
audit_lines() {
	grep -E "^<[0-9]+>.* sluice\[[0-9]+\]: " "$LOG" 2>/dev/null
}

audit_count() {
	audit_lines | wc -l
}

# The bytes the listener had to escape (\xNN), which the binary sent raw;
# the binary's own escapes come out with their backslash doubled (\\xNN).
raw_bytes() {
	sed -E 's/\\\\//g' | grep -oE '\\x[0-9a-f]{2}'
}

# last_line: the newest audit line, waiting briefly for the datagram to land.
last_line() {
	sleep 0.2
	audit_lines | tail -n 1
}

# run_logged N ARGS...: runs sluice ARGS; OUT, RC and NEW (the lines it added, N expected).
run_logged() {
	local before
	before=$(audit_count)
	OUT=$(logged "${@:2}" 2>&1)
	RC=$?
	sleep 0.2
	NEW=$(($(audit_count) - before))
	CHECK_DETAIL="exit $RC, $NEW new lines: $OUT | $(audit_lines | tail -n 1)"
}

generation() {
	"$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].generation'
}

test_attach() {
	local line gen
	run_logged 1 attach "$LAB_HOST" --rate 100/s
	check "attach: exit 0 and one line" test "$RC" = 0 -a "$NEW" = 1
	line=$(last_line)
	gen=$(generation)
	CHECK_DETAIL=$line
	check "attach: the line is authpriv.notice from sluice[pid], says uid 0, attached, its settings, generation none -> $gen" \
		grep -qE "^<$PRI_AUTHPRIV_NOTICE>.* sluice\[[0-9]+\]: $LAB_HOST: attach by uid 0: attached, program [1-9][0-9]*, rate 100/s, rules 0, allow 0 entries, deny 0 entries; generation none -> $gen; command: sluice attach $LAB_HOST --rate 100/s$" <<<"$line"
}

test_status_generation() {
	local json gen at unix now
	json=$("$SLUICE" status "$LAB_HOST" --json)
	gen=$(jq -r '.[0].generation' <<<"$json")
	at=$(jq -r '.[0].changed_at' <<<"$json")
	unix=$(jq -r '.[0].changed_at_unix' <<<"$json")
	now=$(date +%s)
	CHECK_DETAIL=$json
	check "status --json: generation, changed_at (RFC 3339, UTC) and changed_at_unix, within 60 s of now" \
		test "$gen" -ge 1 -a "$(date -u -d "@$unix" +%Y-%m-%dT%H:%M:%SZ)" = "$at" \
		-a "$unix" -le "$now" -a "$unix" -ge $((now - 60))
	check "status --json: layout_version is this sluice's, no layout_warning" \
		test "$(jq -r '.[0].layout_version' <<<"$json")" = "$LAYOUT" \
		-a "$(jq -r '.[0].layout_warning' <<<"$json")" = null
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST")
	check "status: the GEN and CHANGED columns" \
		bash -c "'$SLUICE' status '$LAB_HOST' | awk 'NR == 1 && /GEN +CHANGED/ { h = 1 }
			NR == 2 && \$(NF - 2) == $gen && \$(NF - 1) == \"$at\" { r = 1 } END { exit !(h && r) }'"
}

test_set() {
	local gen0 at0 line json
	gen0=$(generation)
	at0=$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].changed_at_unix')
	sleep 1.1 # changed_at counts seconds: let it move
	run_logged 1 set "$LAB_HOST" --rate 200/s
	check "set: exit 0 and exactly one line" test "$RC" = 0 -a "$NEW" = 1
	line=$(last_line)
	CHECK_DETAIL=$line
	check "set: rate 100/s -> 200/s, generation $gen0 -> $((gen0 + 1)), uid 0" \
		grep -qE "sluice\[[0-9]+\]: $LAB_HOST: set by uid 0: rate 100/s -> 200/s; generation $gen0 -> $((gen0 + 1)); command: sluice set $LAB_HOST --rate 200/s$" <<<"$line"
	json=$("$SLUICE" status "$LAB_HOST" --json)
	CHECK_DETAIL=$json
	check "status --json: generation and changed_at moved with the change" \
		test "$(jq -r '.[0].generation' <<<"$json")" = $((gen0 + 1)) \
		-a "$(jq -r '.[0].changed_at_unix' <<<"$json")" -gt "$at0"

	SUDO_USER=alice run_logged 1 set "$LAB_HOST" --burst 50
	line=$(last_line)
	CHECK_DETAIL=$line
	check "set under sudo: SUDO_USER named, burst default -> 50" \
		grep -qE ": $LAB_HOST: set by uid 0, SUDO_USER alice: burst default -> 50; generation $((gen0 + 1)) -> $((gen0 + 2)); " <<<"$line"

	run_logged 0 set "$LAB_HOST" --rate 200/s --burst 50
	CHECK_DETAIL="$CHECK_DETAIL, generation $(generation)"
	check "set to the values it has: exit 0, no line, no new generation" \
		test "$RC" = 0 -a "$NEW" = 0 -a "$(generation)" = $((gen0 + 2))
	run_logged 0 set "$LAB_HOST" --rate fast
	check "set with a bad rate: exit 2, no line" test "$RC" = 2 -a "$NEW" = 0
	run_logged 0 set slx$$ --rate 5/s
	check "set on an interface not attached: exit 2, no line" test "$RC" = 2 -a "$NEW" = 0
}

test_login_uid() {
	local before line
	before=$(audit_count)
	# pam_loginuid's job, done by hand: the shell sets its own login uid, then becomes sluice.
	SUDO_USER=bob sh -c 'echo 4242 >/proc/self/loginuid && exec nsenter -t "$1" -m --wd="$PWD" "$2" set "$3" --rate 300/s' \
		_ "$LOG_PID" "$SLUICE" "$LAB_HOST" >/dev/null 2>&1
	line=$(last_line)
	CHECK_DETAIL=$line
	check "the login uid is named too (from /proc/self/loginuid)" \
		test "$(audit_count)" = $((before + 1)) -a \
		-n "$(grep -E ": set by uid 0, SUDO_USER bob, login uid 4242: rate 200/s -> 300/s; " <<<"$line")"
}

test_lists() {
	local gen line i
	# 20000 /24s: 10.0.0.0/24 to 10.78.31.0/24
	for i in $(seq 0 19999); do
		echo "10.$((i / 256)).$((i % 256)).0/24"
	done >"$LAB_TMP/deny.txt"
	gen=$(generation)
	run_logged 1 deny add "$LAB_HOST" -f "$LAB_TMP/deny.txt"
	line=$(last_line)
	check "deny add -f (20000 entries): exit 0, one line" test "$RC" = 0 -a "$NEW" = 1
	CHECK_DETAIL=$line
	check "deny add -f: counts, not entries: deny 0 -> 20000 entries (+20000)" \
		grep -qE ": $LAB_HOST: deny add by uid 0: deny 0 -> 20000 entries \(\+20000\); generation $gen -> $((gen + 1)); command: sluice deny add $LAB_HOST -f $LAB_TMP/deny.txt$" <<<"$line"

	run_logged 1 deny add "$LAB_HOST" $(seq -f '192.168.%g.0/24' 0 199)
	line=$(last_line)
	CHECK_DETAIL="${#line} bytes: $line"
	check "deny add of 200 CIDRs as arguments: one short line, the arguments summarised" \
		test "$RC" = 0 -a "$NEW" = 1 -a "${#line}" -lt 1200 -a \
		-n "$(grep -E ": deny 20000 -> 20200 entries \(\+200\); .* \.\.\. \([0-9]+ more arguments\)$" <<<"$line")"

	run_logged 0 deny add "$LAB_HOST" 192.168.7.0/24
	check "deny add of an entry listed already: exit 0, no line" test "$RC" = 0 -a "$NEW" = 0
	run_logged 0 deny del "$LAB_HOST" 203.0.113.0/24
	check "deny del of an entry not listed: exit 2, no line" test "$RC" = 2 -a "$NEW" = 0
	run_logged 1 deny flush "$LAB_HOST"
	line=$(last_line)
	CHECK_DETAIL=$line
	check "deny flush: deny 20200 -> 0 entries (-20200)" \
		grep -qE ": deny flush by uid 0: deny 20200 -> 0 entries \(-20200\); " <<<"$line"
	run_logged 0 allow flush "$LAB_HOST"
	check "allow flush of an empty list: no line" test "$RC" = 0 -a "$NEW" = 0

	run_logged 1 deny add "$LAB_HOST" 198.51.100.7 --timeout 10m
	line=$(last_line)
	CHECK_DETAIL=$line
	check "deny add --timeout: one line with the count and the timeout" \
		grep -qE ": deny add by uid 0: deny 0 -> 1 entries \(\+1\), timeout 10m; generation [0-9]+ -> [0-9]+; command: sluice deny add $LAB_HOST 198.51.100.7 --timeout 10m$" <<<"$line"
	run_logged 1 deny add "$LAB_HOST" 198.51.100.7 --timeout 1h
	line=$(last_line)
	CHECK_DETAIL=$line
	check "deny add --timeout extending an entry: the timeout, no count change" \
		grep -qE ": deny add by uid 0: timeout 1h; generation " <<<"$line"
	run_logged 0 deny add "$LAB_HOST" 198.51.100.7 --timeout 90s
	check "deny add --timeout shorter than the entry has left: exit 0, no line" \
		test "$RC" = 0 -a "$NEW" = 0
	run_logged 1 deny flush "$LAB_HOST"
}

test_control_chars() {
	local file line raw
	file=$LAB_TMP/$'we\nird\tname\033[31m'
	echo 198.51.100.0/24 >"$file"
	SUDO_USER=$'mal\nlory\033' run_logged 1 allow add "$LAB_HOST" -f "$file"
	line=$(last_line)
	CHECK_DETAIL=$line
	check "control characters: one datagram, one line" test "$RC" = 0 -a "$NEW" = 1
	raw=$(raw_bytes <<<"$line" | tr '\n' ' ')
	check "control characters: none reaches the log raw (escaped by sluice: \\x0a, \\x09, \\x1b)" \
		test -z "$raw" -a -n "$(grep -F "SUDO_USER 'mal\\\\x0alory\\\\x1b'" <<<"$line")" \
		-a -n "$(grep -F "'$LAB_TMP/we\\\\x0aird\\\\x09name\\\\x1b[31m'" <<<"$line")"
}

test_rules_upgrade() {
	local gen line
	gen=$(generation)
	run_logged 1 rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proto tcp
	line=$(last_line)
	CHECK_DETAIL=$line
	check "rule add: rules 0 -> 1 (+1)" \
		grep -qE ": rule add by uid 0: rules 0 -> 1 \(\+1\); generation $gen -> $((gen + 1)); command: sluice rule add $LAB_HOST 10.0.0.0/8 --rate 5/s --proto tcp$" <<<"$line"
	run_logged 0 rule add "$LAB_HOST" 10.0.0.0/8 --rate 5/s --proto tcp
	check "rule add of a rule that exists: exit 2, no line" test "$RC" = 2 -a "$NEW" = 0
	run_logged 1 upgrade "$LAB_HOST"
	line=$(last_line)
	CHECK_DETAIL=$line
	check "upgrade: program A -> B, and a new generation" \
		grep -qE ": upgrade by uid 0: program ([0-9]+) -> ([0-9]+); generation $((gen + 1)) -> $((gen + 2)); " <<<"$line"
	printf 'default rate 100/s\nrule 10.0.0.0/8 rate 6/s proto tcp\nallow 198.51.100.0/24\n' >"$LAB_TMP/a.conf"
	run_logged 1 apply "$LAB_HOST" -f "$LAB_TMP/a.conf"
	line=$(last_line)
	CHECK_DETAIL=$line
	check "apply: every value that changed, the rule replaced" \
		grep -qE ": apply by uid 0: rate 300/s -> 100/s, burst 50 -> default, rules 1 -> 1 \(\+1 -1\); generation $((gen + 2)) -> $((gen + 3)); " <<<"$line"
	run_logged 0 apply "$LAB_HOST" -f "$LAB_TMP/nonexistent.conf"
	check "apply of a missing file: exit 2, no line" test "$RC" = 2 -a "$NEW" = 0
}

scrape_value() {
	awk -v s="$1{interface=\"$LAB_HOST\"}" '$1 == s { print $2 }' "$2"
}

test_exporter() {
	local addr gen unix
	exporter_start --listen 127.0.0.1:0
	addr=$EXPORTER_ADDR
	curl -s -m 10 -o "$LAB_TMP/m1" "http://$addr/metrics"
	gen=$(generation)
	unix=$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].changed_at_unix')
	CHECK_DETAIL=$(grep sluice_config "$LAB_TMP/m1")
	check "exporter: sluice_config_generation and _last_change_timestamp_seconds as status says" \
		test "$(scrape_value sluice_config_generation "$LAB_TMP/m1")" = "$gen" -a \
		"$(scrape_value sluice_config_last_change_timestamp_seconds "$LAB_TMP/m1")" = "$unix"
	check "exporter: HELP and TYPE gauge for both families, promtool clean" \
		bash -c "grep -qx '# TYPE sluice_config_generation gauge' '$LAB_TMP/m1' &&
			grep -qx '# TYPE sluice_config_last_change_timestamp_seconds gauge' '$LAB_TMP/m1' &&
			grep -q '^# HELP sluice_config_generation ' '$LAB_TMP/m1' &&
			promtool check metrics <'$LAB_TMP/m1'"
	sleep 1.1
	logged set "$LAB_HOST" --rate 400/s >/dev/null
	curl -s -m 10 -o "$LAB_TMP/m2" "http://$addr/metrics"
	CHECK_DETAIL=$(grep sluice_config "$LAB_TMP/m2")
	check "exporter: after a change both moved" \
		test "$(scrape_value sluice_config_generation "$LAB_TMP/m2")" = $((gen + 1)) -a \
		"$(scrape_value sluice_config_last_change_timestamp_seconds "$LAB_TMP/m2")" -gt "$unix"
	kill -TERM "$EXPORTER_PID" 2>/dev/null
	wait "$EXPORTER_PID" 2>/dev/null
}

# The penalty box (issue 36.3): the datapath bans without a word; the first
# reader that notices writes the ban's one line, whichever reader it is.
test_ban_audit() {
	local rule=$LAB_NET.0.0/16 off=$LAB_NET.2.1 before n line
	logged rule add "$LAB_HOST" "$rule" --rate 50/s --burst 50 --ban-after 100/10s \
		--ban-for 1m >/dev/null
	flood 1 1 2000 "$off" >/dev/null
	before=$(audit_count)
	logged deny list "$LAB_HOST" >/dev/null
	logged stats "$LAB_HOST" >/dev/null
	logged deny list "$LAB_HOST" --json >/dev/null
	sleep 0.2
	n=$(($(audit_count) - before))
	line=$(last_line)
	CHECK_DETAIL="$n new lines: $line"
	check "a ban: one audit line from the reader that noticed it, none from the readers after" \
		test "$n" = 1
	check "the ban's line: the key, its rule, why, until when, and who noticed" \
		grep -qE "sluice\[[0-9]+\]: $LAB_HOST: ban by the datapath: $off/32, rule $rule: [0-9]+ refused in 10s, level 1, for 1m, until [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z; noticed by deny list\$" <<<"$line"
	run_logged 1 deny del "$LAB_HOST" "$off"
	check "deny del of a ban: exit 0 and one line" test "$RC" = 0 -a "$NEW" = 1
	logged rule del "$LAB_HOST" "$rule" >/dev/null
}

# Rewrites the live configuration's layout version, as an older sluice would have left it.
set_layout_version() {
	local version=$1 dir=/sys/fs/bpf/sluice/$LAB_HOST id bytes
	set -- $(bpftool -j map lookup pinned "$dir/config" key 0 0 0 0 | jq -r '.value[]')
	id=$(($4 << 24 | $3 << 16 | $2 << 8 | $1))
	bytes=$(bpftool -j map lookup id "$id" key 0 0 0 0 | jq -r '.value[4:][]' | tr '\n' ' ')
	bpftool map update id "$id" key 0 0 0 0 value "$version" 0 0 0 $bytes
}

test_layout_warning() {
	local older=$((LAYOUT - 1)) out err rc json
	set_layout_version "$older"
	out=$("$SLUICE" status 2>"$LAB_TMP/status.err")
	rc=$?
	err=$(grep -F "$LAB_HOST" "$LAB_TMP/status.err")
	CHECK_DETAIL="exit $rc: $out | $(cat "$LAB_TMP/status.err")"
	check "older layout: status exits 0 and still lists the interface, with its layout" \
		test "$rc" = 0 -a -n "$(grep -E "^$LAB_HOST .* ok \(layout $older\)$" <<<"$out")"
	check "older layout: one warning line on stderr, naming both layouts and what to do" \
		test "$(wc -l <<<"$err")" = 1 -a -n "$(grep -F "sluice status: warning: the pinned state of $LAB_HOST has another layout version ($older) than this sluice's ($LAYOUT), from an older sluice: run 'sluice detach $LAB_HOST', then attach and apply again" <<<"$err")"
	json=$("$SLUICE" status "$LAB_HOST" --json 2>/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $json"
	check "older layout: status --json has layout_version $older and layout_warning" \
		test "$rc" = 0 -a "$(jq -r '.[0].layout_version' <<<"$json")" = "$older" -a \
		"$(jq -r '.[0].state' <<<"$json")" = ok -a \
		-n "$(jq -r '.[0].layout_warning' <<<"$json" | grep -F "another layout version ($older)")"
	run_logged 0 set "$LAB_HOST" --rate 1/s
	check "older layout: set refuses it (exit 1) and logs nothing" test "$RC" = 1 -a "$NEW" = 0
	set_layout_version "$LAYOUT"
	check "layout restored: status has no warning" \
		test -z "$("$SLUICE" status 2>&1 >/dev/null | grep -F "$LAB_HOST")"
}

test_detach() {
	local gen line
	gen=$(generation)
	run_logged 1 detach "$LAB_HOST"
	line=$(last_line)
	CHECK_DETAIL=$line
	check "detach: one line, detached, generation $gen -> none" \
		grep -qE ": $LAB_HOST: detach by uid 0: detached \(was program [1-9][0-9]*\); generation $gen -> none; command: sluice detach $LAB_HOST$" <<<"$line"
	run_logged 0 detach "$LAB_HOST"
	check "detach of what is not attached: exit 0 (nothing to detach), no line" test "$RC" = 0 -a "$NEW" = 0
}

LAYOUT=$(awk '/define SLUICE_LAYOUT_VERSION/ { print $3 }' include/sluice.h)
lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
log_up || {
	echo "FAIL the syslog listener starts: $(cat "$LAB_TMP/listener.err")"
	echo "0 passed, 1 failed"
	exit 1
}
test_attach
test_status_generation
test_set
test_login_uid
test_lists
test_control_chars
test_rules_upgrade
test_exporter
test_ban_audit
test_layout_warning
test_detach
CHECK_DETAIL=$(audit_lines | raw_bytes | head -3)
check "all $(audit_count) lines: authpriv.notice, no raw byte outside printable ASCII, under 2112 bytes" \
	test -z "$(audit_lines | grep -vE "^<$PRI_AUTHPRIV_NOTICE>" | head -1)" -a \
	-z "$(audit_lines | raw_bytes | head -1)" -a \
	-z "$(audit_lines | awk 'length($0) > 2112' | head -1)"
audit_lines | sed 's/^/     /' | cut -c1-400
lab_finish
