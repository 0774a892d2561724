#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Makefile as a packager uses it: quiet unless V=1, the caller's
# CPPFLAGS and LDFLAGS on every compile and link, a plain build that needs
# no libFuzzer (libclang-rt), and man pages and completion in `make all`.
# Dry runs (make -n) into an empty build directory: nothing is built.
set -u
cd "$(dirname "$0")/../.."

passed=0
failed=0
out=$(mktemp -d /tmp/sluice-make.XXXXXX)
trap 'rm -rf "$out"' EXIT

ok() { echo "ok   $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
expect() { if "${@:2}" >/dev/null 2>&1; then ok "$1"; else fail "$1"; fi; }

dry() { make -n --no-print-directory OUTPUT="$out" "$@" 2>&1; }

plain=$(dry all)
# `make` alone, as the README says, builds what `make all` does.
expect "make with no target builds sluice" grep -q -- "-o $out/sluice\$" <<<"$(dry)"
expect "make all builds sluice" grep -q -- "-o $out/sluice\$" <<<"$plain"
expect "make all builds the man pages" grep -q "scdoc < $out/sluice.8.scd > $out/sluice.8" <<<"$plain"
expect "make all builds sluice.conf(5)" grep -q "$out/sluice.conf.5" <<<"$plain"
expect "make all builds the completion" grep -q "completion > $out/sluice.bash" <<<"$plain"
expect "make all builds the zsh completion" grep -q "completion zsh > $out/_sluice" <<<"$plain"
expect "make all builds the fish completion" grep -q "completion fish > $out/sluice.fish" <<<"$plain"
expect "make all builds no libFuzzer target" bash -c "! grep -q -- '-fsanitize=fuzzer' <<<\"\$0\"" "$plain"
expect "make fuzzers builds the libFuzzer target" grep -q -- '-fsanitize=fuzzer' <<<"$(dry fuzzers)"
# One real object, to see what a build prints.
quiet=$(make --no-print-directory OUTPUT="$out" "$out/user/values/number.o" 2>&1)
expect "quiet by default: one short line per step" grep -qE "^  CC +$out/user/values/number.o\$" <<<"$quiet"
expect "quiet by default: no compiler command lines" bash -c "! grep -qE '^(cc|gcc|clang) ' <<<\"\$0\"" "$quiet"
rm -f "$out/user/values/number.o"
loud=$(make --no-print-directory OUTPUT="$out" V=1 "$out/user/values/number.o" 2>&1)
expect "V=1: the full compiler command" grep -qE "^(cc|gcc) .*-c user/values/number.c" <<<"$loud"

flags=$(dry V=1 all CPPFLAGS=-DSLUICE_CPPFLAGS_SEEN LDFLAGS=-Wl,-zsluice-ldflags-seen)
compiles=$(grep -E '^(cc|gcc) .* -c ' <<<"$flags")
links=$(grep -E '^(cc|gcc) .* -o '"$out"'/(sluice|sluice-docgen|test-unit)$' <<<"$flags")
expect "V=1 shows full commands" test -n "$compiles"
expect "CPPFLAGS reach every compile" bash -c "! grep -v -- -DSLUICE_CPPFLAGS_SEEN <<<\"\$0\" | grep -q ." "$compiles"
expect "LDFLAGS reach the links" bash -c "test \$(grep -c -- -Wl,-zsluice-ldflags-seen <<<\"\$0\") = 3" "$links"
expect "make deps lists scdoc and bash-completion" bash -c 'make -s print-DEB_PACKAGES | grep -qw scdoc && make -s print-DEB_PACKAGES | grep -qw bash-completion'
expect "make deps lists zsh and fish" bash -c 'make -s print-DEB_PACKAGES | grep -qw zsh && make -s print-DEB_PACKAGES | grep -qw fish'
expect "make deps lists fail2ban (test_fail2ban.sh)" bash -c 'make -s print-DEB_PACKAGES | grep -qw fail2ban'
expect "make deps lists chromium (test_page.sh)" bash -c 'make -s print-DEB_PACKAGES | grep -qw chromium'
expect "make bench-deps lists the side-by-side benchmark's tools" bash -c 'for p in iptables nftables ethtool gnuplot-nox bpftool jq; do make -s print-BENCH_PACKAGES | grep -qw "$p" || exit 1; done'
# README's Requirements name every package make deps installs, and
# operations.md every build dependency of debian/control, word for word.
named_in() { # named_in FILE FIRST-LINE LAST-LINE: the words in `...` between them
	sed -n "/$2/,/$3/p" "$1" | tr '\n' ' ' | grep -o '`[^`]*`' | tr -d '`' | tr ' ' '\n'
}
missing_from() { # missing_from WORDS PACKAGES...: those not among WORDS
	local p
	for p in "${@:2}"; do grep -qxF -- "$p" <<<"$1" || echo "$p"; done
}
readme_missing=$(missing_from "$(named_in README.md '^## Requirements' '^## Using')" \
	$(make -s print-DEB_PACKAGES))
expect "README's Requirements name every package of make deps${readme_missing:+ (not: ${readme_missing//$'\n'/ })}" \
	test -z "$readme_missing"
debian_missing=$(missing_from "$(named_in docs/operations.md '^`debian\/` uses' 'zlib1g-dev`)')" \
	$(awk '/^[A-Za-z-]+:/ { on = $1 == "Build-Depends:" } on' debian/control |
		sed 's/^Build-Depends://; s/([^)]*)//g' | tr ', ' '\n\n' | grep -v -e '^$' -e '^debhelper-compat$'))
expect "operations.md names every Build-Depends of debian/control${debian_missing:+ (not: ${debian_missing//$'\n'/ })}" \
	test -z "$debian_missing"
# The package's description names every unit and completion it ships.
description=$(sed -n '/^Description:/,$p' debian/control | tr '\n' ' ' | tr -s ' ')
undescribed=$(for u in tools/systemd/*.service; do
	u=$(basename "$u" .service)
	grep -qF -- "${u/@/@IFACE}" <<<"$description" || echo "$u"
done; for sh in bash zsh fish; do grep -qw "$sh" <<<"$description" || echo "$sh completion"; done)
expect "debian/control describes every unit and completion${undescribed:+ (not: ${undescribed//$'\n'/, })}" \
	test -z "$undescribed"
# The benchmarks install their packages one apt-get at a time, then build, then run.
for target in bench-compare bench-spoof; do
	steps=$(dry "$target" | sed -nE 's/^make.* (deps|bench-deps|all)$/\1/p; s|.*tools/bench/(run\|spoof)\.sh.*|bench|p' | tr '\n' ' ')
	expect "make $target: deps, bench-deps, the build, then the benchmark" \
		test "$steps" = "deps bench-deps all bench "
done

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
