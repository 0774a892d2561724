#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The installed systemd units under a real systemd (PID 1): sluice@IFACE
# attaches from /etc/sluice/IFACE.conf and limits traffic on the veth lab,
# reload applies the edited file and keeps the buckets, every change reaches
# the journal, stop detaches, deleting the interface stops the unit and
# leaves no pin; sluice-exporter serves the interface, also as a user of
# its own through the drop-in docs/operations.md gives for attach --group.
# Needs an installed sluice (make install) and systemd as PID 1: run it
# through tools/vm-check.sh, whose guest has both.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

INSTALLED=/usr/sbin/sluice
CONF_DIR=/etc/sluice
EXPORTER_USER=sluice-vmx
EXPORTER_GROUP=sluice-vmr
SECOND=${LAB_HOST}b # a second interface the exporter must serve
DROPIN=/run/systemd/system/sluice-exporter.service.d
SOURCES=10
PPS=2000 # 200 a second per source for 2 s

if [ "$(ps -o comm= -p 1)" != systemd ] || [ ! -x "$INSTALLED" ]; then
	echo "FAIL needs systemd as PID 1 and an installed $INSTALLED (run tools/vm-check.sh)"
	echo "0 passed, 1 failed"
	exit 1
fi
SLUICE=$INSTALLED
UNIT=sluice@$LAB_HOST.service

units_down() {
	systemctl stop "$UNIT" "sluice@$SECOND.service" sluice-exporter.service >/dev/null 2>&1
	rm -rf "$DROPIN" "$CONF_DIR/$LAB_HOST.conf" "$CONF_DIR/$SECOND.conf"
	ip link del "$SECOND" 2>/dev/null
	systemctl daemon-reload
	userdel "$EXPORTER_USER" 2>/dev/null
	groupdel "$EXPORTER_GROUP" 2>/dev/null
	lab_down
}

unit_state() {
	systemctl show -P ActiveState "$1"
}

shown_default() {
	"$SLUICE" show "$LAB_HOST" | awk '$1 == "default"'
}

# generation [IFACE]: the interface's generation (the lab's by default), 0 when it is not attached.
generation() {
	"$SLUICE" status "${1:-$LAB_HOST}" --json 2>/dev/null |
		jq -r 'if type == "array" then .[0].generation else 0 end' 2>/dev/null || echo 0
}

# journal_has TEXT: a line of sluice's in the journal since the test began holds TEXT.
journal_has() {
	journalctl -q --since "@$T0" -t sluice -o cat | grep -qF -- "$1"
}

# scrape_up: the value of sluice_up for the lab's interface, from the default address.
scrape_up() {
	curl -s -m 5 http://127.0.0.1:9723/metrics |
		awk -v s="sluice_up{interface=\"$LAB_HOST\"}" '$1 == s { print $2 }'
}

# The exporter answers, with sluice_up 1 for the lab's interface.
exporter_up() {
	test "$(scrape_up)" = 1
}

# ... and for the second interface too.
exporter_up_both() {
	exporter_up && curl -s -m 5 http://127.0.0.1:9723/metrics | grep -qx "sluice_up{interface=\"$SECOND\"} 1"
}

# kernel_at_least MAJOR MINOR
kernel_at_least() {
	local major minor
	IFS=. read -r major minor _ <<<"$(uname -r)"
	[ "$major" -gt "$1" ] || { [ "$major" = "$1" ] && [ "${minor%%[^0-9]*}" -ge "$2" ]; }
}

# wait_for COMMAND...: up to 5 s (WAIT_TENTHS tenths) for COMMAND to succeed.
wait_for() {
	local i
	for i in $(seq "${WAIT_TENTHS:-50}"); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

test_start() {
	printf 'default rate 20/s burst 20\ndeny 198.51.100.0/24\n' >"$CONF_DIR/$LAB_HOST.conf"
	CHECK_DETAIL=$(systemctl start "$UNIT" 2>&1; journalctl -q -u "$UNIT" -o cat | grep -v '^sluice@' | tail -n 5 | tr '\n' ' ')
	check "systemctl start $UNIT" test "$(unit_state "$UNIT")" = active
	check "... the unit is active" test "$(unit_state "$UNIT")" = active
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST" --json)
	check "... sluice status: attached, ok" jq -e '.[0].state == "ok"' <<<"$CHECK_DETAIL"
	CHECK_DETAIL=$(shown_default)
	check "... the running policy is the file's" test "$CHECK_DETAIL" = "default rate 20/s burst 20"
	check "... the journal has attach's audit line" journal_has "$LAB_HOST: attach by uid 0"
	test "$(unit_state "$UNIT")" = active
}

test_traffic() {
	local sent secs lost passed dropped
	read -r sent secs lost < <(flood_into_sink "$LAB_TMP/sink" "$SOURCES" 2 "$PPS")
	passed=$(stat passed)
	dropped=$(stat dropped)
	CHECK_DETAIL="sent $sent, lost $lost, passed $passed, dropped $dropped"
	check "a flood through the unit's limiter: passed and dropped, passed + dropped = what arrived" \
		test "$passed" -gt 0 -a "$dropped" -gt 0 -a "$((passed + dropped))" = "$((sent - lost))"
	check "... no more than burst + rate x 3 s a source" \
		test "$passed" -le "$((SOURCES * (20 + 20 * 3)))"
}

test_reload() {
	local gen
	gen=$(generation)
	sed -i 's|^default rate 20/s burst 20$|default rate 40/s burst 20|' "$CONF_DIR/$LAB_HOST.conf"
	check "systemctl reload $UNIT" systemctl reload "$UNIT"
	CHECK_DETAIL=$(shown_default)
	check "... applies the edited file" test "$CHECK_DETAIL" = "default rate 40/s burst 20"
	CHECK_DETAIL="generation $gen -> $(generation)"
	check "... one new generation" test "$(generation)" = "$((gen + 1))"
	check "... the journal has apply's line: rate 20/s -> 40/s" journal_has "rate 20/s -> 40/s"
	gen=$(generation)
	check "reload again, the file unchanged" systemctl reload "$UNIT"
	check "... changes nothing (same generation)" test "$(generation)" = "$gen"
}

test_exporter() {
	check "systemctl start sluice-exporter" systemctl start sluice-exporter.service
	CHECK_DETAIL=$(curl -s -m 5 http://127.0.0.1:9723/metrics | grep -m3 sluice_up)
	check "... serves sluice_up 1 for the interface on 127.0.0.1:9723" wait_for exporter_up
	systemctl stop sluice-exporter.service
}

# The drop-in the exporter's unit gives in its comment for a user of its
# own, with that user and group; without the CAP_BPF lines where the kernel
# lets bpf() open a pin without it (from 6.5, or with unprivileged BPF).
exporter_dropin() {
	sed -n 's/^#   //p' /lib/systemd/system/sluice-exporter.service | sed -n '/^\[Service\]$/,$p' |
		sed -e "s/^User=.*/User=$EXPORTER_USER/" -e "s/^Group=GROUP$/Group=$EXPORTER_GROUP/" |
		if [ "$(sysctl -n kernel.unprivileged_bpf_disabled)" = 0 ] || kernel_at_least 6 5; then
			grep -v 'CAP_BPF$'
		else
			cat
		fi
}

# as_exporter COMMAND...: COMMAND in the exporter's mount namespace with its
# user, group and capabilities (CAP_BPF where the drop-in gives it).
as_exporter() {
	local pid caps=-all
	pid=$(systemctl show -P MainPID sluice-exporter.service)
	grep -q '^AmbientCapabilities=CAP_BPF$' "$DROPIN/user.conf" && caps=-all,+bpf
	nsenter -t "$pid" -m setpriv --reuid="$EXPORTER_USER" --regid="$EXPORTER_GROUP" --init-groups \
		--bounding-set="$caps" --inh-caps="$caps" --ambient-caps="$caps" --no-new-privs "$@"
}

# refused NAME COMMAND...: COMMAND, run as the exporter, fails saying permission is missing.
refused() {
	local name=$1 rc
	shift
	CHECK_DETAIL=$(as_exporter "$@" 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $(tr '\n' ' ' <<<"$CHECK_DETAIL")"
	check "$name" bash -c "[ $rc != 0 ] && grep -qiE 'permission|not permitted|capabilit' <<<\"\$1\"" _ "$CHECK_DETAIL"
}

# cap_mask NAME...: the /proc/PID/status mask holding exactly these capabilities.
cap_mask() {
	local bits=0 c
	for c in "$@"; do
		case $c in
		CAP_BPF) bits=$((bits | 1 << 39)) ;;
		esac
	done
	printf '%016x' "$bits"
}

# The exporter as its own user through attach --group and the unit's drop-in:
# it serves every interface, holds no capability beyond the drop-in's, cannot
# change anything, and leaves /run/sluice and the command lock root's.
test_exporter_user() {
	local pid want gen2 caps
	groupadd --system "$EXPORTER_GROUP" &&
		useradd --system --no-create-home -g "$EXPORTER_GROUP" "$EXPORTER_USER" || {
		check "a throwaway user and group for the exporter" false
		return
	}
	ip link add "$SECOND" type veth peer name "${SECOND}p" && ip link set "$SECOND" up &&
		ip link set "${SECOND}p" up && udevadm settle
	for i in "$LAB_HOST" "$SECOND"; do
		printf 'attach group %s\ndefault rate 40/s burst 20\n' "$EXPORTER_GROUP" >"$CONF_DIR/$i.conf"
		CHECK_DETAIL=$(systemctl restart "sluice@$i.service" 2>&1; journalctl -q -u "sluice@$i.service" -o cat | grep -v '^sluice@' | tail -n 3 | tr '\n' ' ')
		check "systemctl restart sluice@$i with attach group $EXPORTER_GROUP" test "$(unit_state "sluice@$i.service")" = active
	done
	mkdir -p "$DROPIN"
	exporter_dropin >"$DROPIN/user.conf"
	systemctl daemon-reload
	CHECK_DETAIL=$(tr '\n' ' ' <"$DROPIN/user.conf")
	check "sluice-exporter starts with the unit's drop-in (User=$EXPORTER_USER)" \
		systemctl start sluice-exporter.service
	pid=$(systemctl show -P MainPID sluice-exporter.service)
	CHECK_DETAIL="$pid $(journalctl -q -u sluice-exporter.service -n 3 -o cat | tr '\n' ' ')"
	check "... it runs as $EXPORTER_USER" test "$(ps -o user= -p "$pid")" = "$EXPORTER_USER"
	want=$(cap_mask $(sed -n 's/^AmbientCapabilities=//p' "$DROPIN/user.conf"))
	caps=$(awk '/^Cap(Eff|Prm|Bnd|Amb):/ { print $2 }' "/proc/$pid/status" | sort -u | tr '\n' ' ')
	CHECK_DETAIL="want $want, has $caps"
	check "... with no capability beyond the drop-in's (effective, permitted, bounding, ambient)" \
		test "$caps" = "$want "
	wait_for exporter_up_both
	CHECK_DETAIL="$(curl -s -m 5 http://127.0.0.1:9723/metrics | grep '^sluice_up' | tr '\n' ' '); $(journalctl -q -u sluice-exporter.service -n 30 -o cat | tr '\n' ' ')"
	check "... and serves sluice_up 1 for each interface" exporter_up_both
	CHECK_DETAIL=$(command stat -c '%U:%G %a %n' /run/sluice /run/sluice/lock | tr '\n' ' ')
	check "... /run/sluice and its command lock stay root's" \
		test "$(command stat -c '%U:%G' /run/sluice /run/sluice/lock | sort -u)" = root:root
	check "... the command lock stays root's 0600" test "$(command stat -c %a /run/sluice/lock)" = 600
	CHECK_DETAIL=$(as_exporter "$SLUICE" stats "$SECOND" 2>&1 | head -n 3 | tr '\n' ' ')
	check "... its user, group and capabilities read the counters in its namespace" \
		as_exporter "$SLUICE" stats "$SECOND"
	gen2=$(generation "$SECOND")
	refused "... but cannot set a rate" "$SLUICE" set "$SECOND" --rate 1/s
	refused "... nor deny an address" "$SLUICE" deny add "$SECOND" 192.0.2.1
	refused "... nor open a pinned map for writing (bpftool)" \
		bpftool map update pinned "/run/sluice/pins/$SECOND/policies" key hex 00 00 00 00 value hex 00
	CHECK_DETAIL="generation $gen2 -> $(generation "$SECOND")"
	check "... and the interface's state is unchanged" test "$(generation "$SECOND")" = "$gen2"
	systemctl stop sluice-exporter.service
	rm -rf "$DROPIN"
	systemctl daemon-reload
	# Units that run as root start beside the group's readers.
	systemctl start sluice-exporter.service
	systemctl restart "sluice@$LAB_HOST.service"
	CHECK_DETAIL=$(command stat -c '%U:%G %a %n' /run/sluice | tr '\n' ' ')
	check "a root exporter and a restarted unit leave /run/sluice passable by the group (0711)" \
		test "$(command stat -c %a /run/sluice)" = 711
	systemctl stop sluice-exporter.service
	systemctl stop "sluice@$SECOND.service"
	rm -f "$CONF_DIR/$SECOND.conf"
	ip link del "$SECOND" 2>/dev/null
}

test_stop() {
	check "systemctl stop $UNIT" systemctl stop "$UNIT"
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST" 2>&1)
	check "... detaches: nothing pinned" test ! -e "/sys/fs/bpf/sluice/$LAB_HOST"
	check "... the journal has detach's line" journal_has "$LAB_HOST: detach by uid 0"
}

test_link_gone() {
	check "start again" systemctl start "$UNIT"
	ip link del "$LAB_HOST"
	CHECK_DETAIL="ActiveState $(unit_state "$UNIT")"
	# The stop runs sluice detach: slow under emulation.
	WAIT_TENTHS=300 wait_for bash -c "[ \"\$(systemctl show -P ActiveState '$UNIT')\" = inactive ]"
	CHECK_DETAIL="ActiveState $(unit_state "$UNIT")"
	check "deleting the interface stops the unit (BindsTo)" test "$(unit_state "$UNIT")" = inactive
	CHECK_DETAIL=$(ls /sys/fs/bpf/sluice 2>&1)
	check "... and its stop leaves no pin" test ! -e "/sys/fs/bpf/sluice/$LAB_HOST"
}

T0=$(date +%s)
lab_up || {
	echo "FAIL lab setup"
	echo "0 passed, 1 failed"
	exit 1
}
trap 'units_down' EXIT
mkdir -p "$CONF_DIR"
# udev announces the veth to systemd; the unit binds to its device.
udevadm settle
# Nothing else can be checked of a unit that did not start.
test_start || {
	lab_finish
	exit 1
}
test_traffic
test_reload
test_exporter
test_exporter_user
test_stop
test_link_gone
CHECK_DETAIL=$(systemd-analyze security "$UNIT" 2>&1 | tail -n 1)
echo "     $CHECK_DETAIL"
check "systemd-analyze security (online): the template's exposure is OK or better" \
	grep -qE 'Overall exposure level for .*: [0-9.]+ (OK|SAFE)' <<<"$CHECK_DETAIL"
lab_finish
