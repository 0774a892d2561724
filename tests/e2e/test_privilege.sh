#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Least privilege. attach --group lets a throwaway group read the pins: as a
# member with no capability (setpriv), stats, stats --json, status, top and
# the exporter show the counters of real traffic and the fleet agent's
# report, and set and deny add are refused with nothing changed; someone
# outside the group can do neither, nor read the report;
# root without CAP_BPF is refused naming it; a non-root user given exactly
# the measured capabilities (ambient) changes a rate. All of it in a mount
# namespace of the test's own with its own bpffs, mounted 0700 as systemd
# does, so the members reach the pins through /run/sluice/pins, and the
# host's /sys/fs/bpf and /run/sluice are never touched.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

# The outer run (host mount namespace) makes and removes the lab, the user
# and the groups; the inner one (a private mount namespace) runs the checks,
# with the lab of the outer run.
OUTER=${2:-$$}
if [ "${1:-}" = --inner ]; then
	rm -rf "$LAB_TMP"
	LAB_TMP=$3
	LAB_NS=sluice-e2e-$OUTER LAB_HOST=slh$OUTER LAB_PEER=sln$OUTER
	LAB_NET=10.$((100 + OUTER % 150))
	LAB_HOST_IP=$LAB_NET.0.1 LAB_PEER_IP=$LAB_NET.0.2 LAB_SRC_BASE=$LAB_NET.1.0
fi
GROUP=slpg$OUTER
MEMBER=slpm$OUTER
OUTSIDER=slpo$OUTER

if [ "${1:-}" != --inner ]; then
	cleanup() {
		local pid
		# Whatever the inner run left running as the member (by pid: ours alone),
		# and its fleet agent, root's, should the inner run have died unawares.
		for pid in $(ps -u "$MEMBER" -o pid= 2>/dev/null); do kill "$pid"; done
		pid=$(cat "$LAB_TMP/agent.pid" 2>/dev/null)
		[ -n "$pid" ] && [ "$(ps -o comm= -p "$pid")" = sluice ] && kill "$pid"
		userdel "$MEMBER" 2>/dev/null
		userdel "$OUTSIDER" 2>/dev/null
		groupdel "$OUTSIDER" 2>/dev/null
		groupdel "$GROUP" 2>/dev/null
		lab_down
	}
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	lab_up || { echo "FAIL lab setup"; echo "0 passed, 1 failed"; exit 1; }
	trap cleanup EXIT # lab_up set its own
	groupadd --system "$GROUP" &&
		useradd --system -M -s /usr/sbin/nologin -g "$GROUP" "$MEMBER" &&
		useradd --system -M -s /usr/sbin/nologin -U "$OUTSIDER" ||
		{ echo "FAIL users"; echo "0 passed, 1 failed"; exit 1; }
	unshare -m --propagation private bash "$0" --inner "$$" "$LAB_TMP"
	exit $?
fi

trap - EXIT
mount -t bpf -o mode=0700 bpf /sys/fs/bpf || { echo "FAIL bpffs"; echo "0 passed, 1 failed"; exit 1; }
mkdir -p /run/sluice && mount -t tmpfs -o mode=0700 tmpfs /run/sluice
# Everything sluice pinned goes with this namespace; detach first all the same.
EXPORTER_PID= AGENT_PID=
trap 'for p in $AGENT_PID $EXPORTER_PID; do kill "$p" 2>/dev/null; done; "$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1' EXIT

# Without capabilities, no inheritable, bounding or ambient ones to regain.
as_member() { setpriv --reuid="$MEMBER" --regid="$GROUP" --init-groups --inh-caps=-all --bounding-set=-all "$@"; }
as_outsider() { setpriv --reuid="$OUTSIDER" --regid="$OUTSIDER" --init-groups --inh-caps=-all --bounding-set=-all "$@"; }
state() { "$SLUICE" show "$LAB_HOST"; "$SLUICE" status "$LAB_HOST" --json | jq -c '.[0].generation'; }
D=/sys/fs/bpf/sluice/$LAB_HOST

test_bad_groups() {
	local out rc
	out=$("$SLUICE" attach "$LAB_HOST" --rate 100/s --group nosuch$$ 2>&1)
	rc=$?
	check "an unknown group: exit 2, one line, nothing attached" \
		test "$rc" = 2 -a "$(wc -l <<<"$out")" = 1 -a ! -e "$D"
	out=$("$SLUICE" attach "$LAB_HOST" --rate 100/s --group root 2>&1)
	check "root's group is refused, exit 2" test $? = 2 -a ! -e "$D"
	out=$("$SLUICE" attach "$LAB_HOST" --rate 100/s --group 'a:b' 2>&1)
	check "a bad group name is refused, exit 2" test $? = 2 -a ! -e "$D"
}

test_attach() {
	check "attach --group" "$SLUICE" attach "$LAB_HOST" --rate 10/s --group "$GROUP"
	check "its directory is 0750 root:GROUP" test "$(command stat -c '%U:%G %a' "$D")" = "root:$GROUP 750"
	check "its maps are 0640 root:GROUP" test "$(command stat -c '%U:%G %a' "$D/stats" "$D/config_live" "$D/buckets" | sort -u)" = "root:$GROUP 640"
	check "the link stays 0600 root's" test "$(command stat -c '%U:%G %a' "$D/link")" = "root:root 600"
	check "/sys/fs/bpf stays 0700 (bpffs adds the sticky bit)" test "$(command stat -c '%a' /sys/fs/bpf)" = 1700
	check "the pin root is mirrored read-only at /run/sluice/pins" \
		bash -c "findmnt -n -o OPTIONS /run/sluice/pins | grep -q '^ro'"
	check "status and show say the group" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -qx 'attach mode native max-sources 1000000 group $GROUP' &&
			 '$SLUICE' status '$LAB_HOST' --json | jq -e '.[0].group == \"$GROUP\"'"
}

test_member_reads() {
	local root_json member_json
	flood 50 1 2000 >/dev/null
	sleep 0.3
	check "the member cannot pass /sys/fs/bpf" bash -c "! as_member ls /sys/fs/bpf 2>/dev/null"
	root_json=$("$SLUICE" stats "$LAB_HOST" --json | jq -c .counters)
	member_json=$(as_member "$SLUICE" stats "$LAB_HOST" --json | jq -c .counters)
	CHECK_DETAIL="root $root_json, member $member_json"
	check "as a member, stats --json gives root's counters of the flood" \
		test -n "$member_json" -a "$member_json" = "$root_json" -a "$(jq .passed.packets <<<"$member_json")" -gt 0 -a \
		"$(jq .dropped.packets <<<"$member_json")" -gt 0
	check "as a member, stats" bash -c "as_member '$SLUICE' stats '$LAB_HOST' | grep -q '^passed'"
	check "as a member, status: ok" bash -c "as_member '$SLUICE' status '$LAB_HOST' --json | jq -e '.[0].state == \"ok\" and .[0].prog_id > 0'"
	check "as a member, status lists the interface" bash -c "as_member '$SLUICE' status | grep -q '^$LAB_HOST '"
	check "as a member, top shows the flood's 50 sources" \
		bash -c "as_member '$SLUICE' top '$LAB_HOST' -n 100 --json | jq -e '.sources | length == 50'"
	"$SLUICE" deny add "$LAB_HOST" 198.51.100.9 --timeout 1h >/dev/null
	CHECK_DETAIL=$(as_member "$SLUICE" deny list "$LAB_HOST" --json 2>&1)
	check "as a member, deny list --json reads a timed entry's time left" \
		jq -e '.[0].cidr == "198.51.100.9/32" and .[0].expires_in_s > 3590' <<<"$CHECK_DETAIL"
	"$SLUICE" deny del "$LAB_HOST" 198.51.100.9 >/dev/null
}

test_member_refused() {
	local before out rc
	before=$(state)
	out=$(as_member "$SLUICE" set "$LAB_HOST" --rate 5/s 2>&1)
	rc=$?
	CHECK_DETAIL=$out
	check "as a member, set is refused naming CAP_BPF, exit 1, nothing changed" \
		test "$rc" = 1 -a "$(state)" = "$before" -a -n "$(grep -o 'missing CAP_BPF' <<<"$out")"
	out=$(as_member "$SLUICE" deny add "$LAB_HOST" 192.0.2.0/24 2>&1)
	check "as a member, deny add is refused, exit 1, nothing changed" test $? = 1 -a "$(state)" = "$before"
}

test_outsider() {
	local before out rc
	before=$(state)
	out=$(as_outsider "$SLUICE" stats "$LAB_HOST" 2>&1)
	rc=$?
	CHECK_DETAIL=$out
	check "outside the group, stats is refused in one line, exit 1" \
		test "$rc" = 1 -a "$(wc -l <<<"$out")" = 1 -a -n "$(grep -o 'permission denied' <<<"$out")"
	out=$(as_outsider "$SLUICE" set "$LAB_HOST" --rate 5/s 2>&1)
	check "outside the group, set is refused, exit 1, nothing changed" test $? = 1 -a "$(state)" = "$before"
}

test_root_without_caps() {
	local before out rc
	before=$(state)
	# CAP_SYS_ADMIN stands in for CAP_BPF in the kernel, so it goes too.
	out=$(setpriv --inh-caps=-all --bounding-set=-bpf,-net_admin,-sys_admin "$SLUICE" set "$LAB_HOST" --rate 5/s 2>&1)
	rc=$?
	CHECK_DETAIL=$out
	check "root without CAP_BPF: set refused naming it, exit 1, nothing changed" \
		test "$rc" = 1 -a "$(state)" = "$before" -a -n "$(grep -o 'missing CAP_BPF' <<<"$out")"
	out=$(setpriv --inh-caps=-all --bounding-set=-bpf,-net_admin,-sys_admin "$SLUICE" upgrade "$LAB_HOST" 2>&1)
	rc=$?
	CHECK_DETAIL=$out
	check "root without CAP_BPF and CAP_NET_ADMIN: upgrade refused naming both" \
		test "$rc" = 1 -a "$(state)" = "$before" -a -n "$(grep -o 'missing CAP_BPF and CAP_NET_ADMIN' <<<"$out")"
	out=$(setpriv --inh-caps=-all --bounding-set=-bpf,-perfmon "$SLUICE" upgrade "$LAB_HOST" 2>&1)
	rc=$?
	CHECK_DETAIL=$out
	check "root with CAP_SYS_ADMIN but not CAP_BPF or CAP_PERFMON upgrades (as the kernel allows)" \
		test "$rc" = 0
	check "root without any capability still reads" \
		setpriv --inh-caps=-all --bounding-set=-all "$SLUICE" stats "$LAB_HOST"
}

# The measured minimum for set, run by another uid than root: CAP_BPF,
# CAP_DAC_OVERRIDE for root's pins and lock, and CAP_CHOWN to give the
# configuration it pins to root; raised as ambient capabilities.
test_ambient_caps() {
	local out
	out=$(setpriv --reuid="$OUTSIDER" --regid="$OUTSIDER" --clear-groups --inh-caps=-all,+bpf,+dac_override,+chown --ambient-caps=+bpf,+dac_override,+chown \
		--bounding-set=-all,+bpf,+dac_override,+chown "$SLUICE" set "$LAB_HOST" --rate 42/s 2>&1)
	CHECK_DETAIL=$out
	check "a non-root user with ambient CAP_BPF, CAP_DAC_OVERRIDE and CAP_CHOWN changes the rate" \
		bash -c "'$SLUICE' show '$LAB_HOST' | grep -qx 'default rate 42/s'"
	out=$(setpriv --reuid="$OUTSIDER" --regid="$OUTSIDER" --clear-groups --inh-caps=-all,+bpf --ambient-caps=+bpf --bounding-set=-all,+bpf \
		"$SLUICE" set "$LAB_HOST" --rate 43/s 2>&1)
	CHECK_DETAIL=$out
	check "with CAP_BPF alone, a non-root user is refused naming CAP_DAC_OVERRIDE and CAP_CHOWN" \
		test -n "$(grep -o 'missing CAP_DAC_OVERRIDE and CAP_CHOWN' <<<"$out")" -a "$("$SLUICE" show "$LAB_HOST" | grep -c 'rate 43/s')" = 0
}

# report_is OWNER MODE: the lab interface's fleet report is OWNER (user:group)
# with MODE, within 2 s (the agent rewrites it every quarter second).
report_is() {
	local r=/run/sluice/fleet/$LAB_HOST
	for _ in $(seq 20); do
		[ "$(command stat -c '%U:%G %a' "$r" 2>/dev/null)" = "$1 $2" ] && return
		sleep 0.1
	done
	CHECK_DETAIL=$(command stat -c '%U:%G %a %n' "$r" 2>&1; tail -n 2 "$LAB_TMP/agent.err")
	return 1
}

# A fleet agent for the shared interface (Redis at a port nobody listens on:
# it runs in fallback and reports so): its report is the group's to read,
# 0640 root:GROUP, /run/sluice/fleet passable (0711), so that a member's
# status shows the agent (and the exporter, test_exporter); someone outside
# the group cannot read it, and the locks stay root's alone.
test_fleet_report() {
	local r=/run/sluice/fleet/$LAB_HOST out
	agent_started
	echo "$AGENT_PID" >"$LAB_TMP/agent.pid"
	check "an agent for the shared interface: its report 0640 root:GROUP" report_is "root:$GROUP" 640
	CHECK_DETAIL=$(command stat -c '%U:%G %a %n' /run/sluice /run/sluice/fleet | tr '\n' ' ')
	check "... /run/sluice and /run/sluice/fleet root's, passable (0711)" \
		test "$(command stat -c '%U:%G %a' /run/sluice /run/sluice/fleet | sort -u)" = "root:root 711"
	CHECK_DETAIL=$(command stat -c '%U:%G %a %n' "$r.lock" /run/sluice/lock | tr '\n' ' ')
	check "... its lock and the command lock stay 0600 root's" \
		test "$(command stat -c '%U:%G %a' "$r.lock" /run/sluice/lock | sort -u)" = "root:root 600"
	out=$(as_member "$SLUICE" status "$LAB_HOST" --json 2>&1)
	CHECK_DETAIL=$out
	check "... as a member, status --json shows the agent (fleet: fallback-local, its pid)" \
		jq -e --argjson pid "$AGENT_PID" '.[0].fleet.agent_pid == $pid and .[0].fleet.mode == "fallback-local"' <<<"$out"
	CHECK_DETAIL=$(as_outsider cat "$r" 2>&1)
	check "... outside the group, the report cannot be read" bash -c "! as_outsider cat '$r' >/dev/null 2>&1"
}

# The report follows the interface's sharing while the agent runs: regrouped
# in place (attach --replace --group), then shared with no group, then with
# the member's again; the agent goes on. Its stop removes the report.
test_fleet_regroup() {
	"$SLUICE" attach "$LAB_HOST" --rate 10/s --group "$OUTSIDER" --replace >/dev/null 2>&1
	check "agent, its interface regrouped under it: the report becomes root:OTHER's" report_is "root:$OUTSIDER" 640
	check "... the member no longer reads it" bash -c "! as_member cat /run/sluice/fleet/$LAB_HOST >/dev/null 2>&1"
	"$SLUICE" attach "$LAB_HOST" --rate 10/s --replace >/dev/null 2>&1
	check "... shared with no group: the report root's alone (0600)" report_is root:root 600
	"$SLUICE" attach "$LAB_HOST" --rate 10/s --group "$GROUP" --replace >/dev/null 2>&1
	check "... the member's group again: root:GROUP 0640" report_is "root:$GROUP" 640
	check "... and the agent runs on" kill -0 "$AGENT_PID"
	kill "$AGENT_PID"
	check "... SIGTERM stops it" agent_gone "$AGENT_PID"
	AGENT_PID=
	check "... its report gone" test ! -e "/run/sluice/fleet/$LAB_HOST"
}

# An agent that may not give its report to the group (no CAP_CHOWN, as in a
# unit whose bounding set lacks it) writes it root's alone, says so once,
# and root's status still shows it.
test_fleet_no_chown() {
	agent_started setpriv --inh-caps=-all --bounding-set=-chown
	check "agent without CAP_CHOWN: its report root's alone (0600)" report_is root:root 600
	CHECK_DETAIL=$(cat "$LAB_TMP/agent.err")
	check "... one line saying so, naming CAP_CHOWN" test "$(grep -c "report stays root's, not group $GROUP's to read: .*CAP_CHOWN" "$LAB_TMP/agent.err")" = 1
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST" --json | jq -c '.[0].fleet')
	check "... root's status shows the agent" jq -e --argjson pid "$AGENT_PID" '.agent_pid == $pid' <<<"$CHECK_DETAIL"
	kill "$AGENT_PID"
	check "... SIGTERM stops it" agent_gone "$AGENT_PID"
	AGENT_PID=
}

test_exporter() {
	local addr
	# Not through the function: $! must be the exporter itself, for kill.
	setpriv --reuid="$MEMBER" --regid="$GROUP" --init-groups --inh-caps=-all --bounding-set=-all \
		"$SLUICE" exporter --listen 127.0.0.1:0 >"$LAB_TMP/exporter.out" 2>&1 &
	EXPORTER_PID=$!
	addr=$(exporter_addr "$LAB_TMP/exporter.out")
	curl -s -m 10 -o "$LAB_TMP/metrics" "http://$addr/metrics"
	CHECK_DETAIL=$(grep "interface=\"$LAB_HOST\"" "$LAB_TMP/metrics" | head -3)
	check "the exporter as a member serves the interface's counters" \
		grep -qE "^sluice_passed_packets_total\{interface=\"$LAB_HOST\"[^}]*\} [1-9]" "$LAB_TMP/metrics"
	check "and says it is attached" grep -q "^sluice_attached{interface=\"$LAB_HOST\"} 1" "$LAB_TMP/metrics"
	CHECK_DETAIL=$(grep "^sluice_fleet_[a-z_]*{interface=\"$LAB_HOST\"" "$LAB_TMP/metrics" | tr '\n' ' ')
	# sluice_fleet_up is 0 with no agent too: the sources series comes of its report alone.
	check "and reads the fleet agent's report: sluice_fleet_up 0 (Redis unreachable), sluice_fleet_sources" \
		bash -c "grep -qx 'sluice_fleet_up{interface=\"$LAB_HOST\"} 0' '$LAB_TMP/metrics' &&
			 grep -q '^sluice_fleet_sources{interface=\"$LAB_HOST\"} ' '$LAB_TMP/metrics'"
	kill -TERM "$EXPORTER_PID"
	wait "$EXPORTER_PID" 2>/dev/null
	EXPORTER_PID=
}

test_dir_checks() {
	chmod g+w "$D"
	check "a group-writable directory is refused, for root" bash -c "! '$SLUICE' stats '$LAB_HOST' >/dev/null 2>&1"
	check "and for the member" bash -c "as_member '$SLUICE' stats '$LAB_HOST' 2>&1 | grep -q 'writable by others'"
	chmod g-w "$D"
	check "0750 again: readable" bash -c "as_member '$SLUICE' stats '$LAB_HOST' >/dev/null"
}

test_round_trip() {
	local out
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/shown.conf"
	check "apply of what show printed, group included: nothing changes" \
		bash -c "'$SLUICE' apply '$LAB_HOST' -f '$LAB_TMP/shown.conf' | grep -q 'nothing changed'"
	sed "s/ group $GROUP//" "$LAB_TMP/shown.conf" >"$LAB_TMP/nogroup.conf"
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/nogroup.conf" >/dev/null 2>&1
	check "apply of a file stating no group keeps the group" test "$(command stat -c '%G' "$D")" = "$GROUP"
	sed "s/ group $GROUP/ group $OUTSIDER/" "$LAB_TMP/shown.conf" >"$LAB_TMP/other.conf"
	"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/other.conf" >/dev/null 2>&1
	check "apply of another group: exit 2, points to --replace" test $? = 2 -a "$(command stat -c '%G' "$D")" = "$GROUP"
	out=$("$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/other.conf" --replace -j 2>&1)
	CHECK_DETAIL=$out
	check "attach -f --replace of another group regroups in place: changed, and says so" \
		jq -e --arg g "group $OUTSIDER (running $GROUP)" \
		'.changed == true and (.messages | any(contains($g))) and (.messages | any(contains("kept its program")))' <<<"$out"
	check "... never that nothing changed" bash -c "! grep -q 'nothing changed' <<<\"\$0\"" "$out"
	check "the state is then the other group's" test "$(command stat -c '%G' "$D" "$D/stats" "$D/config_live" | sort -u)" = "$OUTSIDER"
	out=$("$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/other.conf" --replace -j 2>&1)
	CHECK_DETAIL=$out
	check "the same attach --replace again: nothing changed, and says so" \
		jq -e '.changed == false and (.messages | any(contains("nothing changed")))' <<<"$out"
	printf 'attach group %s\ndefault rate 10/s\n' "$OUTSIDER" >"$LAB_TMP/known.conf"
	"$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/known.conf" --replace >/dev/null 2>&1
	out=$("$SLUICE" attach "$LAB_HOST" --rate 10/s --group "$GROUP" --replace 2>&1)
	CHECK_DETAIL="$out; $("$SLUICE" show "$LAB_HOST" | tr '\n' '|')"
	check "attach IFACE --group G --replace, only the group differing: regrouped, not 'nothing changed'" \
		test "$(command stat -c '%G' "$D")" = "$GROUP" -a -n "$(grep -F "group $GROUP (running $OUTSIDER)" <<<"$out")" -a \
		-z "$(grep -F 'nothing changed' <<<"$out")"
	"$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/other.conf" --replace >/dev/null 2>&1
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "attach -f of what show printed" "$SLUICE" attach "$LAB_HOST" -f "$LAB_TMP/shown.conf"
	check "show then prints the same" bash -c "'$SLUICE' show '$LAB_HOST' | diff - '$LAB_TMP/shown.conf'"
	check "and the member reads it" as_member "$SLUICE" stats "$LAB_HOST"
}

# Where /run/sluice/pins is mounted in this namespace.
mirror_mounts() { awk '$5 == "/run/sluice/pins"' /proc/self/mountinfo; }

# Detaching the last interface keeps a pin root shared with a group, and its
# mirror: a reader's bind mount of the root (the mirror, or the exporter's
# own) would go on showing a removed directory, and miss the next attach's.
test_last_detach() {
	local out rc
	out=$("$SLUICE" detach "$LAB_HOST" 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "detach of the last interface: exit 0, one line (no warning)" \
		test "$rc" = 0 -a "$(wc -l <<<"$out")" = 1
	CHECK_DETAIL="$(ls -A /sys/fs/bpf | tr '\n' ' '); mounts: $(mirror_mounts)"
	check "... the root shared with the group stays, and its mirror" \
		test -d /sys/fs/bpf/sluice -a "$(mirror_mounts | wc -l)" = 1
	check "attach --group again" "$SLUICE" attach "$LAB_HOST" --rate 10/s --group "$GROUP"
	CHECK_DETAIL="mirror $(command stat -c '%d:%i' /run/sluice/pins), root $(command stat -c '%d:%i' /sys/fs/bpf/sluice)"
	check "... the mirror shows the pin root, once" \
		test "$(command stat -c '%d:%i' /run/sluice/pins)" = "$(command stat -c '%d:%i' /sys/fs/bpf/sluice)" -a \
		"$(mirror_mounts | wc -l)" = 1
	CHECK_DETAIL=$(as_member "$SLUICE" stats "$LAB_HOST" --json 2>&1)
	check "... and the member reads stats through it" \
		jq -e '.counters.passed.packets >= 0' <<<"$CHECK_DETAIL"
	check "detach" "$SLUICE" detach "$LAB_HOST"
}

export -f as_member as_outsider
export SLUICE LAB_HOST MEMBER GROUP OUTSIDER
test_bad_groups
test_attach
test_member_reads
test_fleet_report
test_exporter
test_fleet_regroup
test_fleet_no_chown
test_member_refused
test_outsider
test_root_without_caps
test_ambient_caps
test_dir_checks
test_round_trip
test_last_detach
lab_finish
