#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# sluice-jit-lines, the profiler's source-line map (tools/bench/run.sh
# --perf): addresses in the attached datapath's JIT code are counted
# against the source lines that own them, addresses elsewhere only in the
# total, and bad arguments get one line and exit 2 (1 for a program that
# cannot be read).
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

JIT_LINES=${JIT_LINES:-build/sluice-jit-lines}

# The kernel address of a loaded program's main function, from its kallsyms
# name. Programs of the same code share it (sluice on another interface, say):
# then the one the tool places in program $1, a single address at a time.
prog_address() {
	local tag a
	tag=$(bpftool prog show id "$1" --json | jq -r .tag)
	for a in $(awk -v s="bpf_prog_${tag}_sluice_xdp" '$3 == s { print $1 }' /proc/kallsyms); do
		if [ "$(echo "$a" | "$JIT_LINES" "$1" 1 | head -1)" = "100.0% of 1 samples in the program" ]; then
			echo "$a"
			return
		fi
	done
}

out=$("$JIT_LINES" 2>&1)
rc=$?
CHECK_DETAIL="exit $rc: $out"
check "no arguments: exit 2, one usage line" test "$rc" = 2 -a "$(wc -l <<<"$out")" = 1

for args in "abc" "1 many" "1 5 extra"; do
	out=$("$JIT_LINES" $args </dev/null 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "arguments '$args': exit 2, one line" test "$rc" = 2 -a "$(wc -l <<<"$out")" = 1
done

out=$("$JIT_LINES" 4294967295 </dev/null 2>&1)
rc=$?
CHECK_DETAIL="exit $rc: $out"
check "a program id that is not loaded: exit 1, one line naming it" \
	test "$rc" = 1 -a "$(wc -l <<<"$out")" = 1 -a -n "$(grep -F 4294967295 <<<"$out")"

lab_up || { echo "FAIL lab setup"; echo "0 passed, 1 failed"; exit 1; }
"$SLUICE" attach "$LAB_HOST" --rate 10/s >/dev/null
id=$(ip -j link show dev "$LAB_HOST" | jq -r '.[0].xdp.prog.id // empty')
start=$(prog_address "${id:-0}")
CHECK_DETAIL="id '$id', address '$start'"
check "sluice attached, its program's address in kallsyms" test -n "$id" -a -n "$start"

# Its first instruction twice, one a little further in, and one outside any program.
printf '%s\n%s\n%x\nffffffff00000000\n' "$start" "$start" $((0x$start + 16)) >"$LAB_TMP/ips"
out=$("$JIT_LINES" "$id" 5 <"$LAB_TMP/ips" 2>&1)
rc=$?
CHECK_DETAIL="exit $rc: $out"
check "exit 0; 3 of the 4 addresses are in the program" \
	test "$rc" = 0 -a "$(head -1 <<<"$out")" = " 75.0% of 4 samples in the program"
check "the busiest line is the entry point's, in sluice.bpf.c, with 2 of 4 or more" \
	awk 'NR == 2 { ok = $2 ~ /^sluice\.bpf\.c:[0-9]+$/ && $0 ~ /sluice_xdp/ && $1 + 0 >= 50 }
	     END { exit !ok }' <<<"$out"
check "the shares of the lines add up to the program's" \
	awk 'NR > 1 { s += $1 } END { exit !(s > 74.9 && s < 75.1) }' <<<"$out"

lab_finish
