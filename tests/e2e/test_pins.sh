#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The pinned state's paths and states: names that are no interface's never
# become paths; a pin directory others can write to (or a symlink) is
# refused, on a private bpffs mounted 1777; attach and detach killed midway
# leave a state every command names alike; a deleted interface is said so.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

PIN_ROOT=/sys/fs/bpf/sluice
DECOY_IF=slx$$   # another tool's interface, its XDP program pinned under
DECOY_PEER=sly$$
DECOY=/sys/fs/bpf/sld$$ # another tool's pins, next to sluice's
SECOND_IF=slw$$ # a second interface, for the last detach (its peer in the lab)
SECOND_PEER=slv$$

pins_down() {
	rm -rf "$DECOY" 2>/dev/null
	ip link del "$DECOY_IF" 2>/dev/null
	ip link del "$SECOND_IF" 2>/dev/null
	"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
}

# try ARGS...: runs sluice; OUT is what it printed (errors go to stdout
# with --json), RC its status.
try() {
	OUT=$("$SLUICE" "$@" 2>&1)
	RC=$?
	LINES=$(printf '%s' "$OUT" | grep -c '')
}

xdp_prog() {
	ip -d link show "$1" 2>/dev/null | grep -o 'prog/xdp id [0-9]*'
}

# What a bad name must not change: every pin, sluice's and the decoy's, and
# the programs running.
world() {
	find "$DECOY" "$PIN_ROOT" -printf '%p %m %u\n' 2>&1 | sort
	echo "decoy: $(xdp_prog "$DECOY_IF") host: $(xdp_prog "$LAB_HOST")"
}

shown() {
	printf '%q' "$1" | cut -c1-24
}

# Another tool's state: a program of its own on an interface of its own,
# its link and maps pinned in a directory beside sluice's.
decoy_up() {
	ip link add "$DECOY_IF" type veth peer name "$DECOY_PEER" &&
		ip link set "$DECOY_IF" up &&
		"$SLUICE" attach "$DECOY_IF" --rate 5/s >/dev/null &&
		mv "$PIN_ROOT/$DECOY_IF" "$DECOY"
	[ -n "$(xdp_prog "$DECOY_IF")" ]
}

# Every command that takes an interface name; NAME stands for it.
NAME_CMDS=("attach|NAME|--rate|5/s" "detach|NAME" "set|NAME|--rate|5/s" "status|NAME"
	"status|NAME|--json" "stats|NAME" "stats|NAME|--json" "top|NAME"
	"rule|add|NAME|10.0.0.0/8|--rate|1/s" "rule|del|NAME|10.1.0.0/16" "rule|list|NAME"
	"allow|add|NAME|10.9.0.1" "allow|list|NAME" "deny|add|NAME|10.9.0.1" "deny|del|NAME|10.9.0.1"
	"deny|list|NAME" "apply|NAME|-f|GOOD" "show|NAME" "upgrade|NAME")

test_bad_names() {
	local name before cmd i long
	long=$(printf 'x%.0s' $(seq 300))
	local names=("" "." ".." "../sld$$" "../sld$$/link" "a/b" "/" "a:b" "$LAB_HOST:attaching"
		"a b" " $LAB_HOST" $'a\tb' $'a\nb' $'a\vb' $'a\xa0b' "abcdefghijklmnop" "$long")
	before=$(world)
	for name in "${names[@]}"; do
		for cmd in "${NAME_CMDS[@]}"; do
			local args=()
			IFS='|' read -r -a args <<<"${cmd//GOOD/$LAB_TMP/good.conf}"
			for i in "${!args[@]}"; do
				[ "${args[i]}" = NAME ] && args[i]=$name
			done
			try "${args[@]}"
			CHECK_DETAIL="exit $RC, $LINES lines: $OUT"
			check "sluice ${cmd//|/ } with NAME $(shown "$name"): exit 2, one line, nothing touched" \
				test "$RC" = 2 -a "$LINES" = 1 -a "$(world)" = "$before"
		done
	done
	CHECK_DETAIL=$(world)
	check "the decoy's program still runs and its pins are all there" \
		test -n "$(xdp_prog "$DECOY_IF")" -a -e "$DECOY/link" -a -e "$DECOY/buckets"
}

# The commands that act on an interface, read-only and changing.
ALL_IFACE_CMDS=("set|IF|--rate|7/s" "stats|IF" "top|IF" "rule|add|IF|10.77.0.0/16|--rate|1/s"
	"rule|list|IF" "allow|add|IF|10.9.0.1" "deny|add|IF|10.9.0.2" "deny|list|IF" "show|IF"
	"apply|IF|-f|GOOD" "upgrade|IF" "attach|IF|--rate|5/s")

# expect_all IFACE WORDS [attach]: every command on IFACE (attach too when
# asked) exits 1 with one line that says WORDS and points to 'sluice detach
# IFACE'; the pins stay as they were.
expect_all() {
	local ifname=$1 words=$2 cmd before
	before=$(find "$PIN_ROOT" -printf '%p\n' | sort)
	for cmd in "${ALL_IFACE_CMDS[@]}"; do
		[[ $cmd == attach* && ${3:-} != attach ]] && continue
		local args=()
		# IF first: the path put in for GOOD may hold "IF" (mktemp's suffix
		# once did, and became the interface's name).
		cmd=${cmd//IF/$ifname}
		IFS='|' read -r -a args <<<"${cmd//GOOD/$LAB_TMP/good.conf}"
		try "${args[@]}"
		CHECK_DETAIL="exit $RC: $OUT"
		check "$words: sluice ${args[0]} ${args[1]} says so, exit 1, nothing changed" \
			test "$RC" = 1 -a "$LINES" = 1 -a "$(find "$PIN_ROOT" -printf '%p\n' | sort)" = "$before" \
			-a -n "$(grep -F "$words" <<<"$OUT" | grep -F "sluice detach $ifname")"
	done
	CHECK_DETAIL=$("$SLUICE" status 2>&1)
	check "$words: status lists $ifname as stale: $words" \
		bash -c "'$SLUICE' status | grep '^$ifname ' | grep -qF 'stale: $words'"
	CHECK_DETAIL=$("$SLUICE" status "$ifname" --json 2>&1)
	check "$words: status --json says state \"stale: $words\"" \
		test "$("$SLUICE" status "$ifname" --json | jq -r '.[0].state')" = "stale: $words"
}

expect_detach_clears() {
	local words=$1
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT"
	check "$words: detach clears it" test "$RC" = 0 -a -z "$(ls -A "$PIN_ROOT" 2>/dev/null | grep "^$LAB_HOST")"
	check "$words: nothing runs on the interface after detach" test -z "$(xdp_prog "$LAB_HOST")"
}

attach_lab() {
	"$SLUICE" attach "$LAB_HOST" --rate 100/s >/dev/null &&
		"$SLUICE" rule add "$LAB_HOST" 10.1.0.0/16 --rate 5/s >/dev/null
}

# exported LINE: the exporter's exposition (one scrape) has LINE.
exported() {
	local addr pid i out=$LAB_TMP/exporter.out
	"$SLUICE" exporter --listen 127.0.0.1:0 >"$out" 2>&1 &
	pid=$!
	LAB_PIDS+=("$pid")
	for i in $(seq 50); do
		addr=$(sed -n 's|^sluice exporter: serving http://\(.*\)/metrics$|\1|p' "$out")
		[ -n "$addr" ] && break
		sleep 0.1
	done
	curl -s -m 10 "http://$addr/metrics" >"$LAB_TMP/scrape"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	grep -qxF "$1" "$LAB_TMP/scrape"
}

# The states a killed attach or detach leaves, made exactly: the pins as
# they stand when the process dies between two steps.
test_interrupted_states() {
	attach_lab
	mv "$PIN_ROOT/$LAB_HOST" "$PIN_ROOT/$LAB_HOST:attaching"
	check "attach killed before its rename: its program runs" test -n "$(xdp_prog "$LAB_HOST")"
	expect_all "$LAB_HOST" "attach interrupted"
	exported "sluice_attached{interface=\"$LAB_HOST\"} 0"
	local rc=$?
	CHECK_DETAIL=$(grep "^sluice_attached" "$LAB_TMP/scrape" 2>/dev/null | head -3)
	check "attach interrupted: the exporter shows the interface, not attached" test "$rc" = 0
	expect_detach_clears "attach interrupted"

	attach_lab
	mv "$PIN_ROOT/$LAB_HOST" "$PIN_ROOT/$LAB_HOST:attaching"
	try attach "$LAB_HOST" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT; $(ls -A "$PIN_ROOT")"
	check "attach interrupted: attach clears what it left and attaches whole" \
		test "$RC" = 0 -a "$(lab_state)" = ok -a ! -e "$PIN_ROOT/$LAB_HOST:attaching"
	"$SLUICE" detach "$LAB_HOST" >/dev/null

	attach_lab
	rm "$PIN_ROOT/$LAB_HOST/link" "$PIN_ROOT/$LAB_HOST/buckets"
	mv "$PIN_ROOT/$LAB_HOST" "$PIN_ROOT/$LAB_HOST:attaching"
	expect_all "$LAB_HOST" "attach interrupted"
	expect_detach_clears "attach interrupted before its link"

	attach_lab
	rm "$PIN_ROOT/$LAB_HOST/link"
	check "detach killed after unpinning the link: nothing filters" \
		test -z "$(xdp_prog "$LAB_HOST")"
	expect_all "$LAB_HOST" "detach interrupted" attach
	expect_detach_clears "detach interrupted"

	attach_lab
	rm "$PIN_ROOT/$LAB_HOST/link" "$PIN_ROOT/$LAB_HOST/buckets" "$PIN_ROOT/$LAB_HOST/config"
	expect_all "$LAB_HOST" "detach interrupted" attach
	expect_detach_clears "detach interrupted, maps half gone"
}

# What status says of the lab interface: ok, none, or stale: WHY.
lab_state() {
	local s
	s=$("$SLUICE" status "$LAB_HOST" --json 2>/dev/null | jq -r '.[0].state // empty' 2>/dev/null)
	echo "${s:-none}"
}

# One state, whatever command is asked: set agrees with status, and a
# stale state never filters unless an attach was cut short.
agree() {
	local state=$1 rc
	"$SLUICE" set "$LAB_HOST" --rate 100/s >/dev/null 2>"$LAB_TMP/set.err"
	rc=$?
	case $state in
	ok) [ "$rc" = 0 ] && [ -n "$(xdp_prog "$LAB_HOST")" ] ;;
	none) [ "$rc" = 2 ] && [ -z "$(xdp_prog "$LAB_HOST")" ] ;;
	"stale: attach interrupted")
		[ "$rc" = 1 ] && grep -qF "${state#stale: }" "$LAB_TMP/set.err" ;;
	stale:*)
		[ "$rc" = 1 ] && grep -qF "${state#stale: }" "$LAB_TMP/set.err" &&
			[ -z "$(xdp_prog "$LAB_HOST")" ] ;;
	*) false ;;
	esac
}

# kill -9 at random moments of attach and of detach.
test_kill_9() {
	local i pid state bad=0 seen="" ms
	for i in $(seq 30); do
		# Delays across each command's run (attach ~0.5 s, detach ~10 ms).
		if [ "$(lab_state)" = none ]; then
			"$SLUICE" attach "$LAB_HOST" --rate 10/s >/dev/null 2>&1 &
			ms=$((RANDOM % 700))
		else
			"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1 &
			ms=$((RANDOM % 15))
		fi
		pid=$!
		sleep "$(printf '0.%03d' "$ms")"
		kill -9 "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		state=$(lab_state)
		[[ " $seen " == *" ${state// /_} "* ]] || seen+=" ${state// /_}"
		if ! agree "$state"; then
			bad=$((bad + 1))
			echo "     disagreement after kill $i: status '$state', set: $(cat "$LAB_TMP/set.err")"
		fi
		# Now and then clear a stale state, so both commands get killed.
		[[ $state == stale:* ]] && ((RANDOM % 2)) && "$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
	done
	echo "     states seen:$seen"
	CHECK_DETAIL="$bad disagreements"
	check "30 x kill -9 in attach or detach: status and set agree, stale never filters" \
		test "$bad" = 0
	"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
	check "after the kills, detach leaves nothing" \
		test -z "$(ls -A "$PIN_ROOT" 2>/dev/null | grep "^$LAB_HOST")" -a -z "$(xdp_prog "$LAB_HOST")"
}

lab_recreate() {
	ip link add "$LAB_HOST" type veth peer name "$LAB_PEER" netns "$LAB_NS" &&
		ip link set "$LAB_HOST" up
}

test_deleted_interface() {
	attach_lab
	ip link del "$LAB_HOST"
	expect_all "$LAB_HOST" "interface is gone"
	lab_recreate
	expect_all "$LAB_HOST" "interface was deleted and created again" attach
	expect_detach_clears "deleted interface"
	try attach "$LAB_HOST" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT"
	check "after detach, attach to the new interface works" test "$RC" = 0
	"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
}

# The link follows the interface's index: renamed, it is still limited, and
# every command on the old name says where; detach under the old name stops it.
test_renamed_interface() {
	local renamed=slr${LAB_HOST#slh}
	attach_lab
	ip link set "$LAB_HOST" down && ip link set "$LAB_HOST" name "$renamed" &&
		ip link set "$renamed" up || check "rename $LAB_HOST" false
	expect_all "$LAB_HOST" "interface was renamed to $renamed, where it still runs"
	check "renamed: the program still runs on $renamed" test -n "$(xdp_prog "$renamed")"
	# The old name given to another interface: still the renamed one's state.
	ip link add "$LAB_HOST" type veth peer name "slq${LAB_HOST#slh}" || check "a new $LAB_HOST" false
	expect_all "$LAB_HOST" "interface was renamed to $renamed, where it still runs" attach
	expect_detach_clears "renamed interface"
	check "renamed: nothing runs on $renamed after detach" test -z "$(xdp_prog "$renamed")"
	ip link del "$LAB_HOST"
	ip link set "$renamed" down && ip link set "$renamed" name "$LAB_HOST" &&
		ip link set "$LAB_HOST" up ||
		check "rename back to $LAB_HOST" false
}

# --- On a private bpffs, mounted 1777 as the kernel does by default ---

as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
}

fresh_bpffs() {
	umount /sys/fs/bpf 2>/dev/null
	mount -t bpf -o mode=1777 bpf /sys/fs/bpf
}

# refused WHAT [DIR]: attach, detach, status and set refuse with one line
# naming DIR (the pin directory), exit 1, and nothing runs on the interface.
refused() {
	local what=$1 dir=${2:-/sys/fs/bpf/sluice} cmd
	for cmd in "attach|$LAB_HOST|--rate|5/s" "detach|$LAB_HOST" "status" "set|$LAB_HOST|--rate|5/s"; do
		local args=()
		IFS='|' read -r -a args <<<"$cmd"
		try "${args[@]}"
		CHECK_DETAIL="exit $RC: $OUT"
		check "$what: sluice ${args[0]} refuses it, exit 1" \
			test "$RC" = 1 -a "$LINES" = 1 -a -n "$(grep -F "refusing $dir:" <<<"$OUT")"
	done
	check "$what: nothing runs on the interface" test -z "$(xdp_prog "$LAB_HOST")"
}

private_bpffs() {
	local victim=$LAB_TMP/victim listing
	mkdir -p "$victim/$LAB_HOST" && touch "$victim/$LAB_HOST/link" "$victim/$LAB_HOST/buckets"
	chmod -R a+rX "$LAB_TMP"
	listing=$(find "$victim" | sort)

	fresh_bpffs
	as_nobody ln -s "$victim" /sys/fs/bpf/sluice
	refused "a symlink planted for the pin directory"
	check "the symlink's target is untouched" test "$(find "$victim" | sort)" = "$listing"

	fresh_bpffs
	as_nobody mkdir /sys/fs/bpf/sluice
	as_nobody mkdir "/sys/fs/bpf/sluice/$LAB_HOST"
	refused "a pin directory made by another user"

	fresh_bpffs
	mkdir -m 0777 /sys/fs/bpf/sluice
	refused "a pin directory writable by all"

	fresh_bpffs # its root is always sticky: make it not
	chmod 0777 /sys/fs/bpf
	refused "a bpffs writable by all and not sticky" /sys/fs/bpf

	fresh_bpffs
	try attach "$LAB_HOST" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT"
	check "on a fresh 1777 bpffs attach works" test "$RC" = 0
	check "it makes the pin directory root's, 0700" \
		test "$(command stat -c '%U %a' /sys/fs/bpf/sluice "/sys/fs/bpf/sluice/$LAB_HOST" | sort -u)" = "root 700"
	check "another user cannot plant anything in it" \
		bash -c "! setpriv --reuid=65534 --regid=65534 --clear-groups mkdir /sys/fs/bpf/sluice/x 2>/dev/null"

	# Inside the pin directory: a symlink, and a directory of another user.
	mkdir /sys/fs/bpf/victim
	bpftool map create /sys/fs/bpf/victim/buckets type array key 4 value 4 entries 1 name victim
	bpftool map create /sys/fs/bpf/victim/link type array key 4 value 4 entries 1 name victim
	ln -s /sys/fs/bpf/victim /sys/fs/bpf/sluice/slz0
	mkdir /sys/fs/bpf/sluice/slz1 && chown 65534 /sys/fs/bpf/sluice/slz1
	mkdir -m 0770 /sys/fs/bpf/sluice/slz2
	local name
	for name in slz0 slz1 slz2; do
		for cmd in detach status set; do
			if [ "$cmd" = set ]; then try set "$name" --rate 5/s; else try "$cmd" "$name"; fi
			CHECK_DETAIL="exit $RC: $OUT"
			check "sluice $cmd $name (an unsafe directory in sluice's) refuses, exit 1" \
				test "$RC" = 1 -a "$LINES" = 1 -a -n "$(grep -F 'refusing /sys/fs/bpf/sluice' <<<"$OUT")"
		done
	done
	check "nothing behind the symlink was removed" \
		test -e /sys/fs/bpf/victim/buckets -a -e /sys/fs/bpf/victim/link
	try status
	CHECK_DETAIL="exit $RC: $OUT"
	check "status still lists $LAB_HOST" bash -c "'$SLUICE' status 2>/dev/null | grep -q '^$LAB_HOST .* ok\$'"
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT"
	check "detach of the real interface works" test "$RC" = 0 -a -z "$(xdp_prog "$LAB_HOST")"
	umount /sys/fs/bpf
}

# An attach refused after it made the pin root (here: another program holds
# the interface) takes the root away again, and leaves the other's state.
refused_attach_leaves_no_root() {
	local pin=/sys/fs/bpf/sluice-test-foreign
	bpftool prog load build/flood.bpf.o "$pin" type xdp &&
		bpftool net attach xdpgeneric pinned "$pin" dev "$SECOND_IF" && rm "$pin" ||
		check "a foreign XDP program on $SECOND_IF" false
	try attach "$SECOND_IF" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT; in /sys/fs/bpf: $(ls -A /sys/fs/bpf | tr "\n" " ")"
	check "attach refused (another program): exit 2, and no /sys/fs/bpf/sluice left" \
		test "$RC" = 2 -a ! -e /sys/fs/bpf/sluice
	"$SLUICE" attach "$LAB_HOST" --rate 5/s >/dev/null
	try attach "$SECOND_IF" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT; $(ls -A /sys/fs/bpf/sluice 2>&1)"
	check "the same beside an attached interface: exit 2, its state stays" \
		test "$RC" = 2 -a "$(lab_state)" = ok
	bpftool net detach xdpgeneric dev "$SECOND_IF"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
}

# The pin root goes with the last interface's state, and attach makes it
# again; while another interface is attached it stays. On a private bpffs,
# so that no state of another run's is in it.
last_detach() {
	fresh_bpffs
	"$SLUICE" attach "$LAB_HOST" --rate 5/s >/dev/null
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT; in /sys/fs/bpf: $(ls -A /sys/fs/bpf | tr "\n" " ")"
	check "detach of the only interface: exit 0, and no /sys/fs/bpf/sluice left" \
		test "$RC" = 0 -a ! -e /sys/fs/bpf/sluice
	try status
	CHECK_DETAIL="exit $RC: $OUT"
	check "status with no pin root: exit 0" test "$RC" = 0
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT"
	check "detach again with no pin root: exit 0, nothing to detach" \
		test "$RC" = 0 -a -n "$(grep -F 'nothing to detach' <<<"$OUT")"
	refused_attach_leaves_no_root

	"$SLUICE" attach "$LAB_HOST" --rate 5/s >/dev/null
	try attach "$SECOND_IF" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach of a second interface" test "$RC" = 0
	try detach "$SECOND_IF"
	CHECK_DETAIL="exit $RC: $OUT; $(ls -A /sys/fs/bpf/sluice 2>&1)"
	check "of two, detach of one: the pin root and the other's state stay" \
		test "$RC" = 0 -a ! -e "/sys/fs/bpf/sluice/$SECOND_IF" -a "$(lab_state)" = ok
	try detach "$LAB_HOST"
	CHECK_DETAIL="exit $RC: $OUT; in /sys/fs/bpf: $(ls -A /sys/fs/bpf | tr "\n" " ")"
	check "detach of the other, the last: no /sys/fs/bpf/sluice left" \
		test "$RC" = 0 -a ! -e /sys/fs/bpf/sluice

	try attach "$LAB_HOST" --rate 5/s
	CHECK_DETAIL="exit $RC: $OUT"
	check "attach after that works, and its stats read" \
		test "$RC" = 0 -a -n "$("$SLUICE" stats "$LAB_HOST" --json | jq -e '.counters.passed')"
	"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
	umount /sys/fs/bpf
}

test_private_bpffs() {
	local out
	ip link add "$SECOND_IF" type veth peer name "$SECOND_PEER" netns "$LAB_NS" &&
		ip link set "$SECOND_IF" up || check "a second veth" false
	out=$(unshare -m --propagation private "$0" --private-bpffs "$LAB_HOST" "$LAB_TMP" "$SECOND_IF" 2>&1)
	echo "$out" | grep -v '^[0-9]* passed'
	checks_passed=$((checks_passed + $(grep -c '^ok ' <<<"$out")))
	checks_failed=$((checks_failed + $(grep -c '^FAIL ' <<<"$out")))
	CHECK_DETAIL=$(tail -n 1 <<<"$out")
	check "the private bpffs checks ran to the end" grep -qE '^[0-9]+ passed, [0-9]+ failed$' <<<"$out"
}

if [ "${1:-}" = --private-bpffs ]; then
	# A child of the suite: its own mount namespace, the suite's lab.
	rmdir "$LAB_TMP"
	LAB_HOST=$2
	LAB_TMP=$3
	SECOND_IF=$4
	private_bpffs
	last_detach
	echo "$checks_passed passed, $checks_failed failed"
	exit 0
fi

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
trap 'pins_down; lab_down' EXIT
printf 'default rate 5/s\n' >"$LAB_TMP/good.conf"
decoy_up || check "the decoy is set up" false
attach_lab
test_bad_names
"$SLUICE" detach "$LAB_HOST" >/dev/null
test_interrupted_states
test_kill_9
test_renamed_interface
test_deleted_interface
test_private_bpffs
lab_finish
