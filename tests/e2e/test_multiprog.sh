#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Sharing the interface: sluice beside xdp-filter, both through libxdp's
# dispatcher, on the veth lab. Without --multiprog, attach over xdp-filter is
# refused naming its program; with it, both act on the same traffic
# (xdp-filter drops a port before sluice sees it, sluice limits the rest),
# xdp-loader shows sluice, upgrade says why not, and detach leaves
# xdp-filter working. xdp-filter leaving or coming back keeps sluice.
# libxdp's dispatcher needs extension programs (freplace); on a kernel that
# refuses them (these test machines' do) --multiprog must say so and change
# nothing, and the checks of a shared dispatcher are reported as skipped.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

PIN_ROOT=/sys/fs/bpf/sluice
DECOY_PIN=/sys/fs/bpf/sld$$ # a program of another tool's, briefly pinned
DROP_PORT=9999 # what xdp-filter drops
RATE=50        # per source per second, burst as much
SOURCES=10
SECONDS_=2
PPS=2000 # 100 a second per source: twice the rate

for tool in xdp-filter xdp-loader; do
	if ! command -v "$tool" >/dev/null; then
		echo "FAIL $tool is missing (make deps installs xdp-tools)"
		echo "0 passed, 1 failed"
		exit 1
	fi
done

RENAMED=slr${LAB_HOST#slh} # what step 7 renames the host side to, and back
# libxdp's directory in bpffs, which its first load makes: removed at the
# end (when empty) unless it was there before.
LIBXDP_DIR=/sys/fs/bpf/xdp
[ -e "$LIBXDP_DIR" ] && LIBXDP_DIR_WAS=1 || LIBXDP_DIR_WAS=

# Everything this test loads, whatever happened: sluice, xdp-filter, the lab.
mp_down() {
	"$SLUICE" detach "$LAB_HOST" >/dev/null 2>&1
	bpftool net detach xdpgeneric dev "$LAB_HOST" 2>/dev/null
	rm -f "$DECOY_PIN"
	xdp-filter unload "$LAB_HOST" >/dev/null 2>&1
	xdp-loader unload "$LAB_HOST" --all >/dev/null 2>&1
	ip link del "$RENAMED" 2>/dev/null
	[ -n "$LIBXDP_DIR_WAS" ] || rmdir "$LIBXDP_DIR" 2>/dev/null
	lab_down
}

# The host side's XDP programs as xdp-loader shows them: "main NAME" for
# the dispatcher, then "NAME PRIO" per program in it, in the order they run.
dispatcher() {
	xdp-loader status "$LAB_HOST" 2>/dev/null |
		awk -v i="$LAB_HOST" '$1 == "=>" { print $3, $2 } $1 == i { print "main", $2 }'
}

# Id of the XDP program the host side runs (the dispatcher), "" when none.
xdp_id() {
	ip -j -d link show "$LAB_HOST" | jq -r '.[0].xdp.prog.id // .[0].xdp.attached[0].prog.id // empty'
}

# How many packets xdp-filter dropped for DROP_PORT (its status table).
filter_hits() {
	xdp-filter status 2>/dev/null |
		awk -v p="$DROP_PORT" '$1 == p { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }'
}

# sluice's passed + dropped: every packet that reached it.
seen() {
	"$SLUICE" stats "$LAB_HOST" --json | jq '.counters.passed.packets + .counters.dropped.packets'
}

# port_flood PORT FILE: SOURCES sources at PPS for SECONDS_ to PORT, a sink on
# PORT counting what crosses into FILE; prints "SENT LOST RECEIVED".
port_flood() {
	local sent secs lost
	read -r sent secs lost < <(LAB_PORT=$1 flood_into_sink "$2" "$SOURCES" "$SECONDS_" "$PPS")
	echo "$sent $lost $(awk '/^total/ { print $2 }' "$2")"
}

# A kernel without extension programs: --multiprog says so in one line and
# changes nothing; xdp-filter keeps working. The checks of a shared
# dispatcher cannot run: said, and not counted as passed.
unshared() {
	local before out rc sent lost got
	before="$(xdp_id)"
	out=$("$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --multiprog 2>&1 >/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "attach --multiprog, kernel without extension programs: exit 1, one line saying so" \
		test "$rc" = 1 -a "$(printf '%s' "$out" | grep -c '')" = 1 \
		-a -n "$(grep -F 'refuses BPF extension programs' <<<"$out")"
	check "... nothing changed" test "$(xdp_id)" = "$before" -a ! -e "$PIN_ROOT/$LAB_HOST"
	read -r sent lost got < <(port_flood "$DROP_PORT" "$LAB_TMP/drop")
	CHECK_DETAIL="sent $sent, received $got"
	check "... xdp-filter still drops port $DROP_PORT" test "$sent" -gt 0 -a "$got" = 0
	echo "skip sluice beside xdp-filter in one dispatcher: this kernel refuses extension programs (freplace)"
}

shared_checks() {
	local before out rc status sent lost got hits0 seen0 passed0 dropped0 passed dropped most
	# 2. With it: both in the dispatcher, sluice after xdp-filter.
	out=$("$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --burst "$RATE" --multiprog 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "attach --multiprog beside xdp-filter: exit 0, says it went through the dispatcher" \
		test "$rc" = 0 -a -n "$(grep "^sluice: attached to .* through libxdp's dispatcher" <<<"$out")"
	CHECK_DETAIL="$(dispatcher | tr '\n' ';')"
	check "xdp-loader status shows sluice_xdp at priority 20, after $filter_prog" \
		test "$(dispatcher | awk '$1 != "main" { printf "%s ", $1 }')" = "$filter_prog sluice_xdp " \
		-a "$(dispatcher | awk '$1 == "sluice_xdp" { print $2 }')" = 20
	check "... with its chain call on XDP_PASS only" \
		bash -c "xdp-loader status '$LAB_HOST' | grep -E '=> +20 +sluice_xdp .* XDP_PASS *\$'"
	status=$("$SLUICE" status "$LAB_HOST" --json)
	CHECK_DETAIL="$status"
	check "status says multiprog, ok, and lists xdp-filter's program" \
		jq -e --arg f "$filter_prog" '.[0].mode == "multiprog" and .[0].state == "ok" and
			([.[0].dispatcher[].name] == [$f, "sluice_xdp"])' <<<"$status"
	check "status (text) names the dispatcher's programs" \
		bash -c "'$SLUICE' status | grep -q '$LAB_HOST: libxdp dispatcher.*$filter_prog.*sluice_xdp (id'"
	
	# 3. Both act. Port 9000: sluice limits. Port DROP_PORT: xdp-filter drops, sluice never sees it.
	hits0=$(filter_hits)
	seen0=$(seen)
	read -r sent lost got < <(port_flood "$DROP_PORT" "$LAB_TMP/drop")
	CHECK_DETAIL="sent $sent, lost $lost, received $got"
	check "port $DROP_PORT: nothing crosses (xdp-filter drops it)" test "$sent" -gt 0 -a "$got" = 0
	CHECK_DETAIL="xdp-filter hits $hits0 -> $(filter_hits), sent $sent, lost $lost"
	check "... xdp-filter counted every frame" test "$(($(filter_hits) - ${hits0:-0}))" = "$((sent - lost))"
	CHECK_DETAIL="sluice saw $seen0 -> $(seen)"
	check "... and sluice never saw them (it runs after xdp-filter)" test "$(seen)" = "$seen0"
	
	passed0=$(stat passed)
	dropped0=$(stat dropped)
	read -r sent lost got < <(port_flood "$LAB_PORT" "$LAB_TMP/limit")
	passed=$(($(stat passed) - passed0))
	dropped=$(($(stat dropped) - dropped0))
	# At most burst + rate x time per source; the flood sends twice the rate.
	most=$((SOURCES * (RATE + RATE * (SECONDS_ + 1))))
	CHECK_DETAIL="sent $sent, lost $lost, passed $passed, dropped $dropped, received $got"
	check "port $LAB_PORT: sluice's counters move, passed + dropped = what arrived" \
		test "$passed" -gt 0 -a "$dropped" -gt 0 -a "$((passed + dropped))" = "$((sent - lost))"
	check "... sluice limits: passed <= sources x (burst + rate x time)" test "$passed" -le "$most"
	check "... what crossed is what sluice passed" test "$got" = "$passed"
	
	# 4. upgrade says why not; nothing changes.
	before="$(dispatcher) $(xdp_id)"
	out=$("$SLUICE" upgrade "$LAB_HOST" 2>&1 >/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "upgrade in multiprog mode: exit 2, one line saying why" \
		test "$rc" = 2 -a "$(printf '%s' "$out" | grep -c '')" = 1 -a -n "$(grep -F -- '--multiprog' <<<"$out")"
	check "... nothing changed" test "$before" = "$(dispatcher) $(xdp_id)"
	
	# 5. xdp-filter leaves and comes back: libxdp rebuilds the dispatcher around sluice.
	check "xdp-filter unloads while sluice stays" xdp-filter unload "$LAB_HOST"
	status=$("$SLUICE" status "$LAB_HOST" --json)
	CHECK_DETAIL="$status"
	check "... sluice alone in the dispatcher, still ok" \
		jq -e '.[0].state == "ok" and ([.[0].dispatcher[].name] == ["sluice_xdp"])' <<<"$status"
	seen0=$(seen)
	read -r sent lost got < <(port_flood "$DROP_PORT" "$LAB_TMP/undrop")
	CHECK_DETAIL="sent $sent, lost $lost, sluice saw $seen0 -> $(seen)"
	check "... and still limits: it now sees port $DROP_PORT" test "$(($(seen) - seen0))" = "$((sent - lost))"
	check "xdp-filter loads again beside sluice" xdp-filter load "$LAB_HOST" -f udp,ipv4
	xdp-filter port "$DROP_PORT" >/dev/null 2>&1
	check "... sluice still ok" test "$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].state')" = ok
	
	# 6. detach takes out sluice alone; xdp-filter keeps working.
	out=$("$SLUICE" detach "$LAB_HOST" 2>&1)
	CHECK_DETAIL="$out"
	check "detach" test "$out" = "sluice: detached from $LAB_HOST"
	CHECK_DETAIL="$(dispatcher | tr '\n' ';')"
	check "... the dispatcher keeps xdp-filter only" \
		test "$(dispatcher | awk '$1 != "main" { printf "%s ", $1 }')" = "$filter_prog "
	check "... no pins left under $PIN_ROOT" test ! -e "$PIN_ROOT/$LAB_HOST"
	read -r sent lost got < <(port_flood "$DROP_PORT" "$LAB_TMP/drop2")
	CHECK_DETAIL="sent $sent, received $got"
	check "... xdp-filter still drops port $DROP_PORT" test "$sent" -gt 0 -a "$got" = 0
	read -r sent lost got < <(port_flood "$LAB_PORT" "$LAB_TMP/free")
	CHECK_DETAIL="sent $sent, lost $lost, received $got"
	check "... and port $LAB_PORT is no longer limited" test "$got" = "$((sent - lost))"

	# 7. Renamed, the dispatcher (and sluice in it) stays with the interface:
	# status under the old name says where; detach there takes sluice out.
	"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" --multiprog >/dev/null
	ip link set "$LAB_HOST" down && ip link set "$LAB_HOST" name "$RENAMED" &&
		ip link set "$RENAMED" up || check "rename $LAB_HOST" false
	status=$("$SLUICE" status "$LAB_HOST" --json | jq -r '.[0].state')
	CHECK_DETAIL="$status"
	check "renamed: status says sluice still runs on $RENAMED" \
		test "$status" = "stale: interface was renamed to $RENAMED, where it still runs"
	out=$("$SLUICE" detach "$LAB_HOST" 2>&1)
	CHECK_DETAIL="$out"
	check "... detach under the old name" test "$out" = "sluice: detached from $LAB_HOST"
	CHECK_DETAIL=$(xdp-loader status "$RENAMED" 2>&1 | tr '\n' ';')
	check "... takes sluice out of $RENAMED's dispatcher, xdp-filter stays" \
		test -z "$(grep sluice_xdp <<<"$CHECK_DETAIL")" -a -n "$(grep -F "$filter_prog" <<<"$CHECK_DETAIL")"
	ip link set "$RENAMED" down && ip link set "$RENAMED" name "$LAB_HOST" &&
		ip link set "$LAB_HOST" up || check "rename back to $LAB_HOST" false
}

lab_up || {
	echo "FAIL lab setup"
	echo "0 passed, 1 failed"
	exit 1
}
trap 'mp_down' EXIT

check "xdp-filter loads on $LAB_HOST" xdp-filter load "$LAB_HOST" -f udp,ipv4
check "xdp-filter drops UDP port $DROP_PORT" xdp-filter port "$DROP_PORT"
filter_id=$(xdp_id)
filter_name=$(bpftool prog show id "${filter_id:-0}" --json 2>/dev/null | jq -r .name)
filter_prog=$(dispatcher | awk '$1 != "main" { print $1; exit }')
# libxdp loads xdp-filter into its dispatcher where the kernel takes
# extension programs (freplace), and alone otherwise.
shared=0
[ "$filter_name" = xdp_dispatcher ] && shared=1

# 1. Without the flag: refused, one line naming the program and the flag.
before="$(dispatcher) $(xdp_id)"
out=$("$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" 2>&1 >/dev/null)
rc=$?
CHECK_DETAIL="exit $rc: $out"
check "attach over xdp-filter without --multiprog: exit 2, one line" \
	test "$rc" = 2 -a "$(printf '%s' "$out" | grep -c '')" = 1
CHECK_DETAIL="$out"
check "... it names $filter_name, its id and --multiprog" \
	grep -q "$filter_name (id $filter_id).*--multiprog" <<<"$out"
CHECK_DETAIL="before: $before, after: $(dispatcher) $(xdp_id)"
check "... and changes nothing" \
	test "$before" = "$(dispatcher) $(xdp_id)" -a ! -e "$PIN_ROOT/$LAB_HOST"

if [ "$shared" = 0 ]; then
	unshared
else
	shared_checks
fi

# 8. A program not loaded through libxdp (here the generator's, by bpftool):
# refused without the flag, and with it, each time naming it.
check "xdp-filter unloads" xdp-filter unload "$LAB_HOST"
# bpftool, not ip link: iproute2 would leave its directories in bpffs.
check "bpftool loads a plain XDP program" \
	bash -c "bpftool prog load build/flood.bpf.o '$DECOY_PIN' type xdp &&
		bpftool net attach xdpgeneric pinned '$DECOY_PIN' dev '$LAB_HOST' && rm '$DECOY_PIN'"
id=$(xdp_id)
name=$(bpftool prog show id "${id:-0}" --json 2>/dev/null | jq -r .name)
out=$("$SLUICE" attach "$LAB_HOST" --rate 1/s 2>&1 >/dev/null)
rc=$?
CHECK_DETAIL="exit $rc: $out"
check "attach over it: exit 2, naming $name (id $id) and --multiprog" \
	test "$rc" = 2 -a -n "$(grep -F "$name (id $id)" <<<"$out" | grep -F -- --multiprog)"
if [ "$shared" = 1 ]; then # else --multiprog stops at the kernel (checked above)
	out=$("$SLUICE" attach "$LAB_HOST" --rate 1/s --multiprog 2>&1 >/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "attach --multiprog over it: exit 2, it was not loaded through libxdp" \
		test "$rc" = 2 -a -n "$(grep -F "$name (id $id), not loaded through libxdp" <<<"$out")"
fi
check "... nothing changed" test "$(xdp_id)" = "$id" -a ! -e "$PIN_ROOT/$LAB_HOST"
bpftool net detach xdpgeneric dev "$LAB_HOST"

lab_finish
