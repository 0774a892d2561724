#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test suite (as root) and ends with one line: N passed, N failed.
set -u
cd "$(dirname "$0")/.."

SUITES=(
	tests/build/test_bpf_headers.sh
	tests/build/test_bpf_cfg.sh
	tests/build/test_layers.sh
	tests/build/test_makefile.sh
	tests/build/test_completion_shells.sh
	build/test-unit
	build/test-conf
	build/test-datapath
	build/test-model
	tests/e2e/test_cli.sh
	tests/e2e/test_flood.sh
	tests/e2e/test_policy.sh
	tests/e2e/test_match.sh
	tests/e2e/test_penalty.sh
	tests/e2e/test_keys.sh
	tests/e2e/test_resilience.sh
	tests/e2e/test_pins.sh
	tests/e2e/test_privilege.sh
	tests/e2e/test_spoof.sh
	tests/e2e/test_prove_handshake.sh
	tests/e2e/test_prove.sh
	tests/fuzz/run.sh
	tests/e2e/test_observability.sh
	tests/e2e/test_page.sh
	tests/e2e/test_generator.sh
	tests/e2e/test_jit_lines.sh
	tests/e2e/test_control.sh
	tests/e2e/test_vocabulary.sh
	tests/e2e/test_multiprog.sh
	tests/e2e/test_install.sh
	tests/e2e/test_deb.sh
	tests/e2e/test_changes.sh
	tests/e2e/test_config.sh
	tests/e2e/test_audit.sh
	tests/e2e/test_bans.sh
	tests/e2e/test_lists.sh
	tests/e2e/test_fail2ban.sh
	tests/e2e/test_fleet.sh
	tests/e2e/test_fleet_failover.sh
	tests/e2e/test_hostile_redis.sh
	tests/e2e/test_dashboards.sh
)

total_passed=0
total_failed=0

add_counts() {
	local line=$1
	if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		total_passed=$((total_passed + BASH_REMATCH[1]))
		total_failed=$((total_failed + BASH_REMATCH[2]))
	else
		# A suite that died before its closing line counts as one failure.
		total_failed=$((total_failed + 1))
	fi
}

# libxdp's dispatcher pins (/sys/fs/bpf/xdp/dispatch-IFINDEX-PROGID) of the
# tests' interfaces: by then deleted (no such ifindex), or still there (sl*).
xdp_dispatcher_leaks() {
	local d ifindex name
	for d in /sys/fs/bpf/xdp/dispatch-*; do
		[ -e "$d" ] || continue
		ifindex=${d#/sys/fs/bpf/xdp/dispatch-}
		ifindex=${ifindex%%-*}
		name=$(ip -o link show 2>/dev/null | awk -F': ' -v i="$ifindex" '$1 == i { sub(/@.*/, "", $2); print $2 }')
		if [ -z "$name" ] || [[ $name =~ ^sl[hnxy][0-9]+$ ]]; then
			echo -n "$d "
		fi
	done
}

# What the tests make and name: namespaces, links, programs, pins, one a line.
sluice_leftovers() {
	ip netns list | grep -oE '^(sluice-e2e-[0-9]+|flt[gr][0-9]*)\b' # flt*: test_fleet's
	ip -o link show | grep -oE '\bsl[hnwxy][0-9]+\b'
	ip -o link show | grep -oE '\bflt(v[0-9]|r[vw])\b'
	ls -A /sys/fs/bpf/sluice 2>/dev/null | grep -E '^sl[hnwxz][0-9]+(:attaching)?$'
	ls -A /sys/fs/bpf 2>/dev/null | grep -E '^sld[0-9]+$' # test_pins' decoys
	xdp_dispatcher_leaks | tr ' ' '\n' | grep .
	# libxdp's directory, left empty by a test that made it
	if [ -d /sys/fs/bpf/xdp ] && [ -z "$(ls -A /sys/fs/bpf/xdp)" ]; then
		echo /sys/fs/bpf/xdp
	fi
}

# Nothing a test made may outlive it. What was there before this run (a run
# killed with SIGKILL cannot clean up) is named but is not this run's leak.
leak_check() {
	local leaks earlier
	leaks=$(comm -13 <(sort -u <<<"$leftovers_before") <(sluice_leftovers | sort -u) | tr '\n' ' ')
	earlier=$(comm -12 <(sort -u <<<"$leftovers_before") <(sluice_leftovers | sort -u) | tr '\n' ' ')
	[ -n "$earlier" ] && echo "note: left by an earlier run, not this one's: $earlier"
	if [ -z "$leaks" ]; then
		echo "ok   no namespace, link or pin left behind"
		echo "1 passed, 0 failed"
	else
		echo "FAIL left behind: $leaks"
		echo "0 passed, 1 failed"
	fi
}

if [ "$(id -u)" != 0 ]; then
	echo "tests need root (BPF_PROG_TEST_RUN, XDP, network namespaces)"
	echo "0 passed, 1 failed"
	exit 1
fi

leftovers_before=$(sluice_leftovers)
[ -n "$leftovers_before" ] && echo "note: left by an earlier run before this one: $(tr '\n' ' ' <<<"$leftovers_before")"
for suite in "${SUITES[@]}" leak_check; do
	echo "== $suite"
	if [ "$suite" = leak_check ]; then
		out=$(leak_check)
	else
		out=$("$suite" 2>&1)
	fi
	echo "$out"
	add_counts "$(tail -n 1 <<<"$out")"
done

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
