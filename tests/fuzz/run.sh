#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The fuzz targets and the model test for SECONDS each (default 30; the
# reply target 10 unless SECONDS is given); one closing line.
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
# Forged RSTs against --prove's cookies (tests/datapath/test_prove.c).
out=$(build/test-datapath prove-fuzz "$seconds" 2>&1)
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

# The agent's reply parsing: 10 s in make test, SECONDS when given (make fuzz).
reply_seconds=${1:-${FUZZ_SECONDS:-10}}
replies=$(mktemp -d /tmp/sluice-fuzz-reply.XXXXXX)
trap 'rm -rf "$corpus" "$replies"' EXIT
n=0
for r in '+OK\r\n' ':42\r\n' '$3\r\nabc\r\n' '$-1\r\n' '*2\r\n:1\r\n$-1\r\n' '*-1\r\n' \
	'-MOVED 3999 127.0.0.1:6381\r\n' '-ASK 1 [::1]:7002\r\n' '-NOSCRIPT No matching script\r\n' \
	'*1\r\n*3\r\n:0\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:7001\r\n$2\r\nid\r\n*0\r\n' \
	'*2\r\n$11\r\nhost:eth0:1\r\n$5\r\nother\r\n' '*2000000000\r\n' '*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n'; do
	n=$((n + 1))
	printf -- "$r" >"$replies/seed$n"
done
log=$(cd "$replies" && "$OLDPWD/build/fuzz-reply" -max_total_time="$reply_seconds" -print_final_stats=1 \
	"$replies" 2>&1)
runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' <<<"$log" | awk '{ print $2 }')
if grep -q 'Done [0-9]* runs' <<<"$log" && ! grep -q 'ERROR\|^fuzz-reply: \|runtime error' <<<"$log"; then
	echo "ok   fuzz: the agent's reply parsing agrees with hiredis, within its caps, under ASan and UBSan (${runs:-?} inputs)"
	passed=$((passed + 1))
else
	echo "FAIL fuzz: the agent's reply parsing under libFuzzer:"
	grep -A20 'ERROR\|^fuzz-reply: \|runtime error' <<<"$log" | head -30
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
