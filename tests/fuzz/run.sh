#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fuzz targets and the model test for SECONDS each (default 30); one closing line.
set -u
cd "$(dirname "$0")/../.."
seconds=${1:-${FUZZ_SECONDS:-30}}
corpus=$(mktemp -d /tmp/sluice-fuzz.XXXXXX)
trap 'rm -rf "$corpus"' EXIT

passed=0
failed=0
add_counts() {
	if [[ $(tail -n 1 <<<"$1") =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		passed=$((passed + BASH_REMATCH[1]))
		failed=$((failed + BASH_REMATCH[2]))
	else
		failed=$((failed + 1))
	fi
}
out=$(build/fuzz-datapath "$seconds" 2>&1)
echo "$out"
add_counts "$out"
# The datapath against the reference model, on as many sequences of a new seed as fit
# (build/test-model alone runs the same seeded sequences every time).
out=$(build/test-model --seed random --seconds "$seconds" 2>&1)
echo "$out"
add_counts "$out"

build/fuzz-datapath --seeds "$corpus" >/dev/null
log=$(cd "$corpus" && "$OLDPWD/build/fuzz-parse" -max_total_time="$seconds" -print_final_stats=1 \
	"$corpus" 2>&1)
runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' <<<"$log" | awk '{ print $2 }')
if grep -q 'Done [0-9]* runs' <<<"$log" && ! grep -q 'ERROR\|disagree\|runtime error' <<<"$log"; then
	echo "ok   fuzz: parse.h agrees with the reference under ASan and UBSan (${runs:-?} inputs)"
	passed=$((passed + 1))
else
	echo "FAIL fuzz: parse.h under libFuzzer:"
	grep -A20 'ERROR\|disagree\|runtime error' <<<"$log" | head -30
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
