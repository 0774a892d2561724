#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every BPF object must build from kernel and libbpf headers alone: a libc
# header under -target bpf selects glibc's 32-bit stubs, which only
# libc6-dev-i386 provides, so a machine without it cannot build sluice.
# Lists each object's dependencies (clang -M with the Makefile's BPF flags)
# and fails on anything under /usr/include outside linux/, asm*/ and bpf/.
set -u
cd "$(dirname "$0")/../.."

clang=$(make -s --no-print-directory print-CLANG)
read -r -a flags <<<"$(make -s --no-print-directory print-BPF_CFLAGS)"
passed=0
failed=0

# Prints the libc headers src pulls in; fails when clang cannot list them.
libc_headers() {
	local deps
	deps=$("$clang" "${flags[@]}" "$@" -M 2>&1) || {
		echo "clang -M failed: $(grep -m1 error <<<"$deps")"
		return 1
	}
	tr ' \\' '\n\n' <<<"$deps" | grep '^/usr/include/' |
		grep -vE '^/usr/include/([^/]+-linux-gnu[^/]*/)?(linux|asm[^/]*|bpf)/' | sort -u
}

check() {
	local name=$1 out
	shift
	out=$(libc_headers "$@")
	if [ $? -eq 0 ] && [ -z "$out" ]; then
		echo "ok   $name: kernel and libbpf headers only"
		passed=$((passed + 1))
	else
		echo "FAIL $name pulls in libc headers:"
		sed 's/^/       /' <<<"$out"
		failed=$((failed + 1))
	fi
}

check "bpf/sluice.bpf.c" bpf/sluice.bpf.c
check "bpf/sluice.bpf.c (test clock)" -DSLUICE_TEST_CLOCK bpf/sluice.bpf.c
for src in tools/*/*.bpf.c; do
	check "$src" "$src"
done

# The guard itself must catch what it guards against.
probe=$(mktemp --suffix=.c)
trap 'rm -f "$probe"' EXIT
printf '#include <errno.h>\n' >"$probe"
if [ -z "$(libc_headers "$probe" 2>/dev/null)" ]; then
	echo "FAIL the guard missed <errno.h> in a probe file"
	failed=$((failed + 1))
else
	echo "ok   the guard flags <errno.h> in a probe file"
	passed=$((passed + 1))
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
