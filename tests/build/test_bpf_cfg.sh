#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every BPF object must load on Linux 6.1 (Debian 12), whose verifier takes
# a loop's way back only through a jump: bpf_back_edges.py walks each
# function as its check_cfg() does. First it must find such a loop in a
# sample written to have one, so the check itself can fail.
set -u
cd "$(dirname "$0")/../.."

clang=$(make -s --no-print-directory print-CLANG)
passed=0
failed=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

result() {
	if [ "$1" = 0 ]; then
		echo "ok   $2"
		passed=$((passed + 1))
	else
		echo "FAIL $2"
		[ -n "${3:-}" ] && sed 's/^/       /' <<<"$3"
		failed=$((failed + 1))
	fi
}

# The latch falls through into the loop's first instruction: 6.1 refuses it.
cat >"$tmp/loop.c" <<'C'
int f(int *p)
{
	int i = 0;

	asm volatile("goto +1\n%[i] += 1\nif %[i] < 8 goto -2\n" : [i] "+r"(i));
	return i + *p;
}
C
"$clang" -O2 -target bpf -mcpu=v3 -c "$tmp/loop.c" -o "$tmp/loop.o"
out=$(tests/build/bpf_back_edges.py "$tmp/loop.o")
[ $? = 1 ] && grep -q "f: instruction 2 falls through into 3" <<<"$out"
result $? "the check finds a loop closed by falling through" "$out"

for obj in build/*.bpf.o; do
	out=$(tests/build/bpf_back_edges.py "$obj")
	result $? "$(basename "$obj"): every loop closes with a jump (Linux 6.1)" "$out"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
