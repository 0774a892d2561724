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
	systemctl stop "$UNIT" sluice-exporter.service >/dev/null 2>&1
	rm -rf "$DROPIN" "$CONF_DIR/$LAB_HOST.conf"
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

# The interface's generation, 0 when it is not attached.
generation() {
	"$SLUICE" status "$LAB_HOST" --json 2>/dev/null |
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

# The exporter as its own user, no capability, through attach --group.
test_exporter_user() {
	groupadd --system "$EXPORTER_GROUP" &&
		useradd --system --no-create-home -g "$EXPORTER_GROUP" "$EXPORTER_USER" || {
		check "a throwaway user and group for the exporter" false
		return
	}
	printf 'attach group %s\ndefault rate 40/s burst 20\ndeny 198.51.100.0/24\n' "$EXPORTER_GROUP" \
		>"$CONF_DIR/$LAB_HOST.conf"
	CHECK_DETAIL=$(systemctl restart "$UNIT" 2>&1; journalctl -q -u "$UNIT" -o cat | grep -v '^sluice@' | tail -n 3 | tr '\n' ' ')
	check "systemctl restart $UNIT with attach group $EXPORTER_GROUP" test "$(unit_state "$UNIT")" = active
	mkdir -p "$DROPIN"
	printf '[Service]\nUser=%s\nGroup=%s\nRuntimeDirectoryMode=0711\nBindReadOnlyPaths=/sys/fs/bpf/sluice:/run/sluice/pins\n' \
		"$EXPORTER_USER" "$EXPORTER_GROUP" >"$DROPIN/user.conf"
	# Before Linux 6.5 bpf() refuses a process without CAP_BPF outright
	# where kernel.unprivileged_bpf_disabled is set (Debian 12: 2).
	if [ "$(sysctl -n kernel.unprivileged_bpf_disabled)" != 0 ] && ! kernel_at_least 6 5; then
		printf 'CapabilityBoundingSet=CAP_BPF\nAmbientCapabilities=CAP_BPF\n' >>"$DROPIN/user.conf"
	fi
	systemctl daemon-reload
	check "sluice-exporter starts with the drop-in (User=$EXPORTER_USER)" \
		systemctl start sluice-exporter.service
	CHECK_DETAIL="$(systemctl show -P MainPID sluice-exporter.service) $(journalctl -q -u sluice-exporter.service -n 3 -o cat | tr '\n' ' ')"
	check "... it runs as $EXPORTER_USER" test "$(ps -o user= -p "$(systemctl show -P MainPID sluice-exporter.service)")" = "$EXPORTER_USER"
	check "... and serves sluice_up 1 for the interface" wait_for exporter_up
	systemctl stop sluice-exporter.service
	rm -rf "$DROPIN"
	systemctl daemon-reload
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
