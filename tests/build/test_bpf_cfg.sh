#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every BPF object must load on Linux 6.1 (Debian 12), whose verifier is
# stricter than later ones in two ways the compiler decides: it takes a
# loop's way back only through a jump, and it rounds each frame of a call
# chain up to 32 bytes against the 512-byte stack. bpf_linux61.py checks
# both. First it must find each in a sample written to have it, so the
# check itself can fail.
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
out=$(tests/build/bpf_linux61.py "$tmp/loop.o")
[ $? = 1 ] && grep -q "f: instruction 2 falls through into 3" <<<"$out"
result $? "the check finds a loop closed by falling through" "$out"

# 416 + 224 bytes: over 512 once frames are rounded up.
cat >"$tmp/stack.c" <<'C'
__attribute__((noinline)) int g(int x)
{
	volatile char b[200];

	b[x & 127] = 1;
	return b[5];
}

__attribute__((section("xdp"))) int f(int x)
{
	volatile char a[400];

	a[x & 255] = 2;
	return g(x) + a[3];
}
C
"$clang" -O2 -target bpf -mcpu=v3 -c "$tmp/stack.c" -o "$tmp/stack.o"
out=$(tests/build/bpf_linux61.py "$tmp/stack.o")
[ $? = 1 ] && grep -q "f -> g: 640 bytes of stack" <<<"$out"
result $? "the check finds a call chain over 512 bytes of stack" "$out"

for obj in build/*.bpf.o; do
	out=$(tests/build/bpf_linux61.py "$obj")
	result $? "$(basename "$obj"): every loop closes with a jump, every call chain fits the stack (Linux 6.1)" "$out"
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
