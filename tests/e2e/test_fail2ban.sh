#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fail2ban action (contrib/fail2ban/sluice.conf) with a real
# fail2ban-server of the test's own: its own config dir, socket, pidfile and
# in-memory database, so the system's fail2ban (if any) is not touched. Jails
# whose filter reads logs the test writes ban the lab peer after 3 failures
# through sluice's deny list (with the jail's bantime as its timeout); its
# frames are then denied on the veth pair and no longer reach a socket;
# unbanip lifts the ban, and so does the bantime's end; an unban of an entry
# sluice no longer holds is no error, any other failure is; an IPv6 source is
# banned as /128; bantime = -1 bans with no timeout; a ban outlives a killed
# fail2ban only until its bantime; and a jail on an interface sluice is not
# attached to fails to start, saying so.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

V6_SRC=2001:db8:36::7
NOT_ATTACHED=slz$$ # a name no interface has
# The short bantime: long enough for the checks made while it lasts on a
# loaded host, short enough to wait for its end.
SHORT=6

# f2b ARGS...: fail2ban-client of the server started last.
f2b() {
	fail2ban-client -s "$F2B_SOCK" "$@"
}

# jail NAME BANTIME INTERFACE: a jail on its own log, NAME.log, 3 failures in 60s.
jail() {
	cat <<EOF

[$1]
enabled = true
filter = sluice-test
logpath = $LAB_TMP/$1.log
backend = polling
maxretry = 3
findtime = 60
bantime = $2
action = sluice[interface=$3, sluice=$PWD/$SLUICE]
EOF
	: >"$LAB_TMP/$1.log"
}

# f2b_config "NAME BANTIME INTERFACE"...: F2B_DIR with the action, the filter and those jails.
f2b_config() {
	local j name bantime iface
	mkdir -p "$F2B_DIR/filter.d" "$F2B_DIR/action.d" &&
		cp contrib/fail2ban/sluice.conf "$F2B_DIR/action.d/sluice.conf" &&
		printf '[Definition]\nfailregex = ^auth failure from <HOST>$\ndatepattern = {NONE}\n' \
			>"$F2B_DIR/filter.d/sluice-test.conf" &&
		printf '[Definition]\nloglevel = INFO\nlogtarget = %s\nsocket = %s\npidfile = %s\ndbfile = :memory:\n' \
			"$F2B_LOG" "$F2B_SOCK" "$F2B_DIR.pid" >"$F2B_DIR/fail2ban.conf" &&
		{
			printf '[DEFAULT]\nignoreself = false\nignoreip =\n'
			for j in "$@"; do
				read -r name bantime iface <<<"$j"
				jail "$name" "$bantime" "$iface"
			done
		} >"$F2B_DIR/jail.conf"
}

# f2b_start NAME "JAIL BANTIME INTERFACE"...: a server of its own, with its own
# config dir, socket, pidfile and log under LAB_TMP, in the foreground of a
# background job that lab_down stops; up once it answers for the first jail.
f2b_start() {
	local first=${2%% *}
	F2B_DIR=$LAB_TMP/$1
	F2B_SOCK=$LAB_TMP/$1.sock
	F2B_LOG=$LAB_TMP/$1.log
	shift
	f2b_config "$@" || return 1
	fail2ban-server -f -x -c "$F2B_DIR" -s "$F2B_SOCK" -p "$F2B_DIR.pid" \
		--logtarget "$F2B_LOG" >"$F2B_DIR.out" 2>&1 &
	F2B_PID=$!
	LAB_PIDS+=("$F2B_PID")
	for _ in $(seq 100); do
		f2b status "$first" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	CHECK_DETAIL=$(tail -n 3 "$F2B_DIR.out" "$F2B_LOG" 2>/dev/null | tr '\n' ' ')
	return 1
}

# fail LOG ADDR: three failures of ADDR, as the jail's filter reads them.
fail() {
	printf 'auth failure from %s\n' "$2" "$2" "$2" >>"$LAB_TMP/$1.log"
}

# deny_left CIDR: expires_in_s of CIDR on the deny list ("null": permanent, "": absent).
deny_left() {
	"$SLUICE" deny list "$LAB_HOST" --json | jq -r --arg c "$1" '.[] | select(.cidr == $c) | .expires_in_s'
}

# wait_deny CIDR yes|no: up to 30 s for CIDR to be on the deny list, or off
# it: fail2ban polls its logs each second, and deny add and del wait for
# sluice's command lock, which any sluice command on the host may hold.
wait_deny() {
	for _ in $(seq 300); do
		if [ -n "$(deny_left "$1")" ]; then
			[ "$2" = yes ] && return 0
		else
			[ "$2" = no ] && return 0
		fi
		sleep 0.1
	done
	CHECK_DETAIL="deny list: $("$SLUICE" deny list "$LAB_HOST" | tr '\n' ' ')"
	CHECK_DETAIL+="; fail2ban's log ends: $(tail -n 4 "$F2B_LOG" | tr '\n' ' ')"
	return 1
}

# banned JAIL ADDR: fail2ban-client status JAIL lists ADDR as banned.
banned() {
	f2b status "$1" | grep 'Banned IP list:' | grep -qw -- "$2"
}

# send SRC N [--ipv6]: N UDP frames from SRC to the host side, 1000 a second.
send() {
	local dst=$LAB_HOST_IP family=()
	[ "${3:-}" = --ipv6 ] && dst=2001:db8:36::1 family=(--ipv6)
	ip netns exec "$LAB_NS" "$FLOOD" "$LAB_PEER" --dst-mac "$(cat "/sys/class/net/$LAB_HOST/address")" \
		--dst "$dst" --dport "$LAB_PORT" --src "$1" --sources 1 --count "$2" --rate 1000 \
		"${family[@]}" >/dev/null 2>"$LAB_TMP/flood.err"
}

# counted SRC N [--ipv6]: "PASSED DENIED", as sluice counted N frames from SRC.
counted() {
	local p0 d0
	p0=$(stat passed)
	d0=$(stat denied)
	send "$@"
	echo "$(($(stat passed) - p0)) $(($(stat denied) - d0))"
}

# arrived N: of N frames from the peer's address, how many a socket on the host got.
arrived() {
	sink_start "$LAB_TMP/sink" || return 1
	send "$LAB_PEER_IP" "$1"
	sleep 0.3
	sink_stop
	awk -v s="$LAB_PEER_IP" '$1 == s { n = $2 } END { print n + 0 }' "$LAB_TMP/sink"
}

# check_counted LABEL "PASSED DENIED" SOURCE N [--ipv6]: what sluice counted of N frames.
check_counted() {
	local label=$1 want=$2 counts
	shift 2
	counts=$(counted "$@")
	CHECK_DETAIL="passed, denied: $counts"
	check "$label" test "$counts" = "$want"
}

# check_arrived LABEL WANT: how many of 20 frames from the peer a socket on the host got.
check_arrived() {
	local n
	n=$(arrived 20)
	CHECK_DETAIL="$n arrived"
	check "$1" test "$n" = "$2"
}

not() {
	! "$@"
}

# log_mark: the lines in the server's log so far.
log_mark() {
	wc -l <"$F2B_LOG"
}

# errors_since MARK: the server's ERROR lines after MARK lines of its log.
errors_since() {
	tail -n "+$(($1 + 1))" "$F2B_LOG" | grep -E 'ERROR|CRITICAL'
}

# log_has MARK REGEX: up to 30 s for a line of the server's log after MARK to match.
log_has() {
	for _ in $(seq 300); do
		tail -n "+$(($1 + 1))" "$F2B_LOG" | grep -qE "$2" && return 0
		sleep 0.1
	done
	return 1
}

# No error from the server since MARK; CHECK_DETAIL shows the first ones.
no_errors_since() {
	CHECK_DETAIL=$(errors_since "$1" | head -3 | tr '\n' ' ')
	[ -z "$CHECK_DETAIL" ]
}

test_ban_and_unbanip() {
	local n mark
	mark=$(log_mark)
	check_counted "before the failures: 20 of 20 frames from the peer pass" "20 0" "$LAB_PEER_IP" 20
	check_arrived "before the failures: 20 of 20 reach a socket on the host" 20
	fail auth "$LAB_PEER_IP"
	check "3 failures in the log: fail2ban bans the peer in sluice" wait_deny "$LAB_PEER_IP/32" yes
	n=$(deny_left "$LAB_PEER_IP/32")
	CHECK_DETAIL="expires_in_s $n"
	check "deny list: the ban has the jail's bantime (1h) as its timeout" \
		test "${n:-0}" != null -a "${n:-0}" -gt 3500 -a "${n:-0}" -le 3600
	check "fail2ban-client status auth lists the peer" banned auth "$LAB_PEER_IP"
	check_counted "while banned: 20 of 20 frames from the peer denied" "0 20" "$LAB_PEER_IP" 20
	check_arrived "while banned: none reaches the socket" 0
	f2b set auth unbanip "$LAB_PEER_IP" >/dev/null
	check "unbanip: off the deny list" wait_deny "$LAB_PEER_IP/32" no
	check "unbanip: fail2ban no longer lists it" not banned auth "$LAB_PEER_IP"
	check_counted "after unbanip: 20 of 20 frames pass again" "20 0" "$LAB_PEER_IP" 20
	check_arrived "after unbanip: 20 of 20 reach the socket again" 20
	check "ban and unbanip: no error from fail2ban" no_errors_since "$mark"
}

test_expiry() {
	local mark
	mark=$(log_mark)
	fail short "$LAB_PEER_IP"
	check "bantime $SHORT: banned" wait_deny "$LAB_PEER_IP/32" yes
	CHECK_DETAIL="expires_in_s $(deny_left "$LAB_PEER_IP/32")"
	check "bantime $SHORT: the deny entry times out within ${SHORT}s" \
		test "$(deny_left "$LAB_PEER_IP/32")" -le "$SHORT"
	check "bantime $SHORT: frames denied" test "$(counted "$LAB_PEER_IP" 10)" = "0 10"
	sleep "$SHORT.5"
	check "after the bantime: off the deny list" wait_deny "$LAB_PEER_IP/32" no
	for _ in $(seq 50); do
		banned short "$LAB_PEER_IP" || break
		sleep 0.1
	done
	check "after the bantime: fail2ban unbanned it" not banned short "$LAB_PEER_IP"
	check_counted "after the bantime: 20 of 20 frames pass" "20 0" "$LAB_PEER_IP" 20
	check "ban and unban at the bantime's end: no error from fail2ban" no_errors_since "$mark"
}

# gone_then_unbanip LABEL [HOLD]: an entry gone from sluice (expired there,
# or deleted by hand) before fail2ban unbans it: deny del says it is not on
# the list, and that is no error. With HOLD, another command holds sluice's
# lock meanwhile (as flock would), so deny del first says it waits for it.
gone_then_unbanip() {
	local mark holder
	mark=$(log_mark)
	fail auth "$LAB_PEER_IP"
	check "$1: banned" wait_deny "$LAB_PEER_IP/32" yes
	"$SLUICE" deny del "$LAB_HOST" "$LAB_PEER_IP" >/dev/null
	if [ -n "${2:-}" ]; then
		flock -o /run/sluice/lock sleep 1 &
		holder=$!
		LAB_PIDS+=("$holder")
		sleep 0.2
	fi
	f2b set auth unbanip "$LAB_PEER_IP" >/dev/null
	check "$1: unbanip of an entry sluice no longer holds: fail2ban unbans it (its log says so)" \
		log_has "$mark" "\[auth\] Unban $LAB_PEER_IP\$"
	[ -n "${2:-}" ] && wait "$holder"
	sleep 0.5 # the action runs after that line; an error would follow it
	check "$1: ... no longer lists it" not banned auth "$LAB_PEER_IP"
	check "$1: ... and reports no error" no_errors_since "$mark"
}

test_ipv6() {
	local mark
	mark=$(log_mark)
	fail auth "$V6_SRC"
	check "IPv6: 3 failures ban the address as /128" wait_deny "$V6_SRC/128" yes
	check "IPv6: fail2ban-client status lists it" banned auth "$V6_SRC"
	check_counted "IPv6: 20 of 20 frames from it denied" "0 20" "$V6_SRC" 20 --ipv6
	f2b set auth unbanip "$V6_SRC" >/dev/null
	check "IPv6: unbanip lifts it" wait_deny "$V6_SRC/128" no
	check_counted "IPv6: then 20 of 20 pass" "20 0" "$V6_SRC" 20 --ipv6
	check "IPv6: no error from fail2ban" no_errors_since "$mark"
}

# bantime = -1 bans for good: no timeout in sluice. Then an unban that fails
# for another reason than "not on the list" (sluice detached) is reported.
test_permanent_and_failure() {
	local mark
	mark=$(log_mark)
	fail forever "$LAB_PEER_IP"
	check "bantime -1: banned" wait_deny "$LAB_PEER_IP/32" yes
	CHECK_DETAIL="expires_in_s $(deny_left "$LAB_PEER_IP/32")"
	check "bantime -1: the deny entry never expires" test "$(deny_left "$LAB_PEER_IP/32")" = null
	check "bantime -1: no error from fail2ban" no_errors_since "$mark"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	mark=$(log_mark)
	f2b set forever unbanip "$LAB_PEER_IP" >/dev/null
	log_has "$mark" "ERROR +Failed to execute unban jail 'forever' action 'sluice'"
	CHECK_DETAIL=$(tail -n 3 "$F2B_LOG" | tr '\n' ' ')
	check "an unban that fails otherwise (sluice detached) is reported" \
		grep -q "Failed to execute unban jail 'forever' action 'sluice'" <(errors_since "$mark")
	"$SLUICE" attach "$LAB_HOST" --rate 10k/s --burst 10k >/dev/null
}

# fail2ban killed while a ban is on: sluice still ends it at its bantime.
test_killed() {
	fail short "$LAB_PEER_IP"
	check "bantime $SHORT again: banned" wait_deny "$LAB_PEER_IP/32" yes
	kill -KILL "$F2B_PID"
	wait "$F2B_PID" 2>/dev/null
	check "fail2ban killed: the ban stays in sluice" test "$(counted "$LAB_PEER_IP" 10)" = "0 10"
	sleep "$SHORT.5"
	CHECK_DETAIL="deny list: $("$SLUICE" deny list "$LAB_HOST" | tr '\n' ' ')"
	check "... until its bantime ends there" test -z "$(deny_left "$LAB_PEER_IP/32")"
	check_counted "... then 20 of 20 frames pass" "20 0" "$LAB_PEER_IP" 20
}

# A jail on an interface sluice is not attached to, and one naming no
# interface, on a server of their own.
test_not_attached() {
	check "a second private fail2ban-server starts" \
		f2b_start elsewhere "elsewhere 1h $NOT_ATTACHED" "nowhere 1h" || return
	log_has 0 "Failed to start jail 'nowhere'"
	CHECK_DETAIL=$(errors_since 0 | head -3 | tr '\n' ' ')
	check "a jail on an interface sluice is not attached to: actionstart fails" \
		grep -q "Failed to start jail 'elsewhere' action 'sluice'" "$F2B_LOG"
	check "... saying so" grep -q "sluice is not attached to $NOT_ATTACHED" "$F2B_LOG"
	check "a jail naming no interface: actionstart fails" \
		grep -q "Failed to start jail 'nowhere' action 'sluice'" "$F2B_LOG"
	check "... saying how to name it" grep -qF "no interface: action = sluice[interface=eth0]" "$F2B_LOG"
}

if ! command -v fail2ban-server >/dev/null; then
	echo "FAIL fail2ban is not installed (make deps)"
	echo "0 passed, 1 failed"
	exit 1
fi
lab_up || {
	echo "FAIL cannot create the veth pair and namespace"
	lab_finish
	exit 1
}
"$SLUICE" attach "$LAB_HOST" --rate 10k/s --burst 10k >/dev/null
check "a private fail2ban-server starts" \
	f2b_start main "auth 1h $LAB_HOST" "short $SHORT $LAB_HOST" "forever -1 $LAB_HOST" || {
	lab_finish
	exit 1
}
check "its jails start with no error" no_errors_since 0
test_ban_and_unbanip
test_expiry
gone_then_unbanip "gone"
gone_then_unbanip "gone, sluice's lock held" hold
test_ipv6
test_permanent_and_failure
test_killed
test_not_attached
lab_finish
