#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bad input: each invocation must print one clear line, exit 2, and leave
# the running limiter's state exactly as it was.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

# Placeholders: HOST is the attached lab interface.
BAD_INVOCATIONS=(
	""
	"frobnicate"
	"attach"
	"attach lo"
	"attach lo --rate"
	"attach lo --rate 0/s"
	"attach lo --rate -5/s"
	"attach lo --rate 99999999999999999999/s"
	"attach lo --rate 2000M/s"
	"attach lo --rate 5/x"
	"attach lo --rate 5"
	"attach lo --rate abc"
	"attach lo --rate 5/s --burst 0"
	"attach lo --rate 5/s --burst lots"
	"attach lo --rate 5/s --action reject"
	"attach lo --rate 5/s --mode offload"
	"attach lo --rate 5/s --ipv4-prefix 33"
	"attach lo --rate 5/s --ipv6-prefix 129"
	"attach lo --rate 5/s --max-sources 0"
	"attach lo --rate 5/s --bogus"
	"attach lo extra --rate 5/s"
	"attach nosuchif0 --rate 5/s"
	"attach HOST --rate 5/s"
	"set HOST"
	"set HOST --rate 0/s"
	"set HOST --burst 0"
	"set HOST --action nope"
	"set HOST --rate 1/h --burst 1000000000"
	"set nosuchif0 --rate 5/s"
	"detach"
	"detach nosuchif0"
	"detach HOST extra"
	"stats"
	"stats nosuchif0"
	"stats HOST --bogus"
	"status nosuchif0"
	"status --bogus"
	"set HOST --action mark"
	"set HOST --on-full maybe"
	"set HOST --new-sources 10mbit/s"
	"set HOST --initial-burst 500"
	"set HOST --initial-burst 5kB"
	"set HOST --overflow-rate 1mbit/s"
	"set HOST --rate 10mbit/s --burst 5"
	"set HOST --aggregate 24=5/s"
	"set HOST --aggregate /32=5/s"
	"set HOST --aggregate /24=5/s --aggregate /24=6/s"
	"set HOST --aggregate /24=5/s,burst=1kB"
	"set HOST --aggregate ipv4/40=5/s"
	"set HOST --aggregate /8=1/s --aggregate /12=1/s --aggregate /16=1/s --aggregate /20=1/s --aggregate /24=1/s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --aggregate ipv6/48=5/s"
	"attach lo --rate 5/s --aggregate /24"
	"rule"
	"rule add"
	"rule frob HOST"
	"rule add HOST"
	"rule add HOST 10.0.0.0/8"
	"rule add HOST 10.0.0.0/33 --rate 1/s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --syn"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto sctp"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --dport 0"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto udp --sport 200-100"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto udp --sport 0"
	"rule add HOST 10.0.0.0/8 --rate 1/s --sport 123"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto icmp --sport 123"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --tcp-flags SYN/SYN,ACK"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --tcp-flags NONE/NONE"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --tcp-flags SYN,BOGUS/SYN"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --tcp-flags SYN"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto udp --tcp-flags SYN/SYN"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto tcp --icmp-type 8"
	"rule add HOST 10.0.0.0/8 --rate 1/s --icmp-type 8"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto icmp --icmp-type 256"
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto icmp --icmp-type 3/"
	"rule add HOST 10.0.0.0/8 --rate 1/s --length 0"
	"rule add HOST 10.0.0.0/8 --rate 1/s --length 1500-200"
	"rule add HOST 10.0.0.0/8 --rate 1/s --length 65536"
	"rule add HOST 10.0.0.0/8 --rate 1/s --dst 10.0.0.0/33"
	"rule add HOST 10.0.0.0/8 --rate 1/s --dst 300.1.1.1"
	"rule add HOST 10.0.0.0/8 --rate 1/s --dst 2001:db8::/32"
	"rule add HOST 10.0.0.0/8 --rate 1/s --dst"
	"set HOST --sport 123"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 0"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10/0s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10/0"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10/s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10/2d"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-escalate 0.5"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-escalate 101"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-escalate 1.2345"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-for 1h --ban-max 1m"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-for 2d"
	"rule add HOST 10.0.0.0/8 --rate 1/s --key dst --ban-after 10"
	"rule add HOST 10.0.0.0/8 --rate 1/s --key pair --ban-after 10"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-for 0s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-for 1m"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ban-after 10 --aggregate /24=5/s"
	"set HOST --ban-max 1m"
	"rule add HOST 10.0.0.0/8 --rate 1/s --action mark --dscp 64"
	"rule add HOST 10.1.0.0/16 --rate 1/s"
	"rule del HOST 10.9.9.0/24"
	"rule list HOST --rate 1/s"
	"allow"
	"allow add HOST"
	"allow add HOST 300.0.0.0/8"
	"allow add HOST -f /nonexistent/list"
	"allow add HOST -f BADLIST"
	"deny del HOST 10.0.0.0/8"
	"deny list HOST 10.0.0.0/8"
	"apply HOST"
	"apply HOST -f BADCONF"
	"apply HOST -f /nonexistent/policy"
	"show"
	"show nosuchif0"
	"stats HOST --watch 0"
	"stats HOST --watch 0.01"
	"stats HOST --watch=abc"
	"stats HOST --watch 1 extra"
	"stats HOST --count 3"
	"stats HOST --watch --count 0"
	"stats HOST --prometheus --watch"
	"top"
	"top nosuchif0"
	"top HOST -n 0"
	"top HOST -n lots"
	"top HOST -n"
	"top HOST --sort size"
	"top HOST extra"
	"exporter extra"
	"exporter --listen"
	"exporter --listen 127.0.0.1"
	"exporter --listen 127.0.0.1:65536"
	"exporter --listen localhost:9723"
	"exporter --listen ::1:9723"
	# Options before the command: an unknown one is named.
	"--frob status"
	# Input that cannot be read, on every path into the config parsers.
	"apply HOST -f TMPDIR"
	"apply HOST -f /proc/self/mem"
	"deny add HOST -f TMPDIR"
	"allow del HOST -f /proc/self/mem"
	"apply HOST -f NULCONF"
	"deny add HOST -f NULLIST"
	"apply HOST -f LONGCONF"
	# Options that contradict the rule's address family, and /0 aggregates.
	"rule add HOST 10.0.0.0/8 --rate 1/s --proto icmpv6"
	"rule add HOST 2001:db8::/32 --rate 1/s --proto icmp"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ipv6-prefix 56"
	"rule add HOST 10.0.0.0/8 --rate 1/s --ipv6-prefix 64"
	"rule add HOST 2001:db8::/32 --rate 1/s --ipv4-prefix 24"
	"rule add HOST 2001:db8::/32 --rate 1/s --aggregate ipv4/24=5/s"
	"rule add HOST 10.0.0.0/8 --rate 1/s --aggregate /0=5/s"
	"set HOST --aggregate /0=5/s"
	"set HOST --aggregate ipv6/0=5/s"
	"attach nosuchif0 --rate 5/s --aggregate /0=5/s"
	"apply HOST -f FAMCONF"
	# Timed bans: bad durations, --timeout where it does not go, bad 'until' in files.
	"deny add HOST 10.9.0.0/16 --timeout"
	"deny add HOST 10.9.0.0/16 --timeout 0"
	"deny add HOST 10.9.0.0/16 --timeout 0s"
	"deny add HOST 10.9.0.0/16 --timeout 0.5s"
	"deny add HOST 10.9.0.0/16 --timeout -5m"
	"deny add HOST 10.9.0.0/16 --timeout 10"
	"deny add HOST 10.9.0.0/16 --timeout 10x"
	"deny add HOST 10.9.0.0/16 --timeout 3651d"
	"deny add HOST 10.9.0.0/16 --timeout 99999999999999999999s"
	"deny add HOST 10.9.0.0/16 --timeout=1h --timeout abc"
	"deny add HOST -f BADLIST --timeout 1h"
	"deny del HOST 10.2.0.0/16 --timeout 1h"
	"deny list HOST --timeout 1h"
	"deny flush HOST --timeout 1h"
	"allow add HOST 10.9.0.0/16 --timeout 1h"
	"rule add HOST 10.9.0.0/16 --rate 1/s --timeout 1h"
	"attach lo --rate 5/d"
	"apply HOST -f UNTILCONF"
	"apply HOST -f ALLOWUNTILCONF"
	"apply HOST -f BADDATECONF"
	"apply HOST -f FARCONF"
	"apply HOST -f LATECONF"
	# Algorithms: what each takes, and the window counter's packed maximum.
	"set HOST --algorithm token-bucket"
	"set HOST --algorithm fixed-window --window 0"
	"set HOST --algorithm fixed-window --window 10"
	"set HOST --algorithm fixed-window --window 1500us"
	"set HOST --rate 0/s --algorithm fixed-window"
	"set HOST --window 10s"
	"set HOST --algorithm gcra --window 10s"
	"set HOST --algorithm fixed-window --burst 10"
	"set HOST --algorithm sliding-window --warmup 10s"
	"set HOST --rate 100/m --algorithm fixed-window --window 1s"
	"set HOST --rate 1tbit/s --algorithm fixed-window --window 1ms"
	"set HOST --rate 1M/s --algorithm sliding-window"
	"set HOST --rate 100/s --warmup 10s --burst 5"
	"set HOST --rate 10mbit/s --warmup 10s"
	"set HOST --rate 100k/s --warmup 10s"
	"rule add HOST 10.0.0.0/8 --rate 10/s --algorithm fixed-window --burst 5"
	"attach nosuchif0 --rate 5/s --algorithm sliding-window --warmup 1s"
	# A warning (host bits set) before the error: still the error's line alone.
	"deny add HOST 10.1.2.3/8 300.1.1.1"
	"deny add HOST -f WARNLIST"
	"rule add HOST 10.0.0.0/8 --rate 1/s --dst 10.251.0.1/24 --proto sctp"
	"apply HOST -f WARNCONF"
)

# The pinned state byte for byte (every map but the live counters and
# caches), plus what status and show make of it.
snapshot() {
	local dir=/sys/fs/bpf/sluice/$LAB_HOST map
	for map in config policies rules_v4 rules_v6 allow_v4 allow_v6 deny_v4 deny_v6 generation; do
		bpftool map dump pinned "$dir/$map"
	done
	# The live configuration is the inner map the config slot holds (id, LE).
	set -- $(bpftool map lookup pinned "$dir/config" key 0 0 0 0 | sed 's/.*value: //')
	bpftool map dump id $((0x$4$3$2$1))
	ls -l --time-style=+ "$dir"
	"$SLUICE" status "$LAB_HOST" --json
	"$SLUICE" show "$LAB_HOST"
}

test_bad_invocations() {
	local before after inv args out rc lines
	before=$(snapshot)
	for inv in "${BAD_INVOCATIONS[@]}"; do
		inv=${inv//BADCONF/$LAB_TMP/bad.conf}
		inv=${inv//BADLIST/$LAB_TMP/bad.list}
		inv=${inv//TMPDIR/$LAB_TMP}
		inv=${inv//NULCONF/$LAB_TMP/nul.conf}
		inv=${inv//NULLIST/$LAB_TMP/nul.list}
		inv=${inv//LONGCONF/$LAB_TMP/long.conf}
		inv=${inv//FAMCONF/$LAB_TMP/family.conf}
		inv=${inv//ALLOWUNTILCONF/$LAB_TMP/allow-until.conf}
		inv=${inv//UNTILCONF/$LAB_TMP/until.conf}
		inv=${inv//BADDATECONF/$LAB_TMP/bad-date.conf}
		inv=${inv//FARCONF/$LAB_TMP/far.conf}
		inv=${inv//LATECONF/$LAB_TMP/late.conf}
		inv=${inv//WARNLIST/$LAB_TMP/warn.list}
		inv=${inv//WARNCONF/$LAB_TMP/warn.conf}
		read -r -a args <<<"${inv//HOST/$LAB_HOST}"
		out=$("$SLUICE" "${args[@]}" 2>&1 >/dev/null)
		rc=$?
		lines=$(printf '%s' "$out" | grep -c '')
		after=$(snapshot)
		CHECK_DETAIL="exit $rc, $lines lines: $out"
		check "sluice $inv: exit 2, one line, state unchanged" \
			test "$rc" = 2 -a "$lines" = 1 -a "$after" = "$before"
	done
}

# What the one line says, for messages that used to be empty or wrong.
warns() { # warns LINE INVOCATION...: exit 0, and stderr is LINE alone
	local line=$1 out rc
	shift
	out=$("$@" 2>&1 >/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	[ "$rc" = 0 ] && [ "$out" = "$line" ]
}

says() { # says WHAT INVOCATION...: exit 2, one line, containing WHAT
	local what=$1 out rc
	shift
	if [ "${SAYS_STDIN:-}" = closed ]; then
		out=$("$@" 2>&1 >/dev/null <&-)
	else
		out=$("$@" 2>&1 >/dev/null)
	fi
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	[ "$rc" = 2 ] && [ "$(printf '%s' "$out" | grep -c '')" = 1 ] && grep -qF -- "$what" <<<"$out"
}

test_messages() {
	local before out flags
	before=$(snapshot)
	# --json before the command: the error is JSON on stdout, naming the command word.
	out=$("$SLUICE" --json frob 2>&1)
	CHECK_DETAIL="exit $?: $out"
	check "--json frob names frob, in JSON" \
		test "$(jq -r .error <<<"$out" 2>/dev/null)" = "unknown command 'frob' (see 'sluice --help')"
	check "--json status works as status --json" \
		test "$("$SLUICE" --json status "$LAB_HOST" | jq -r '.[0].interface')" = "$LAB_HOST"
	# Global flags clustered before the command, as after it (-jp).
	check "-jp status works as status -jp" \
		test "$("$SLUICE" -jp status "$LAB_HOST" 2>&1)" = "$("$SLUICE" status -jp "$LAB_HOST")"
	# -h among them too: what -j -h does (the usage, exit 0).
	for flags in -jh -hj; do
		out=$("$SLUICE" "$flags" status 2>&1)
		CHECK_DETAIL="exit $?: $out"
		check "$flags status works as -j -h status" \
			test "$CHECK_DETAIL" = "exit 0: $("$SLUICE" -j -h status 2>&1)"
	done
	# An interface name is quoted as every input is: what shows nothing is escaped.
	check "a newline in an interface name is shown as \\x0a" \
		says "bad interface name 'a\\x0ab': no interface name has whitespace" \
		"$SLUICE" attach $'a\nb' --rate 5/s
	check "a no-break space in an interface name is shown as \\u00a0" \
		says "bad interface name 'eth\\u00a00': no interface name has whitespace" \
		"$SLUICE" status $'eth\u00a00'
	check "a long name in UTF-8 is cut between characters, not shown as ?" \
		says "bad interface name '$(printf 'é%.0s' $(seq 11))...': longer than 15 bytes" \
		"$SLUICE" detach "$(printf 'é%.0s' $(seq 18))"
	check "apply -f DIR says it cannot read a directory" \
		says "$LAB_TMP: cannot read: Is a directory" "$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP"
	check "apply -f /proc/self/mem says why" \
		says "/proc/self/mem: cannot read: Input/output error" \
		"$SLUICE" apply "$LAB_HOST" -f /proc/self/mem
	# Closed in the command alone: the capture's own pipe must not become its stdin.
	SAYS_STDIN=closed check "apply -f - from a closed stdin says why" \
		says "standard input: cannot read: Bad file descriptor" \
		"$SLUICE" apply "$LAB_HOST" -f -
	SAYS_STDIN=closed check "deny add -f - from a closed stdin says why" \
		says "standard input: cannot read: Bad file descriptor" \
		"$SLUICE" deny add "$LAB_HOST" -f -
	check "a ban period of 0 is refused" \
		says "bad value '10/0s' for --ban-after: must be at least 1ms" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --ban-after 10/0s
	check "--ban-escalate under 1 is refused" \
		says "bad value '0.5' for --ban-escalate: must be between 1 and 100" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-escalate 0.5
	check "--ban-max under --ban-for is refused" says "--ban-max must be at least --ban-for" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --ban-after 10 --ban-for 1h \
		--ban-max 1m
	check "--ban-after with --aggregate is refused" \
		says "--ban-after does not combine with --aggregate" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --ban-after 10 --aggregate /24=5/s
	check "a NUL byte is named at its line and column" \
		says "nul.conf:2:25: a NUL byte" "$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/nul.conf"
	check "a line of 4096 characters is too long at column 4096" \
		says "long.conf:1:4096: line longer than 4095 characters" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/long.conf"
	check "an IPv4 rule with --proto icmpv6 is refused" \
		says "--proto icmpv6 never matches an IPv4 rule, 10.0.0.0/8 (use --proto icmp)" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --proto icmpv6
	check "an inverted --sport is refused" says "bad value '200-100' for --sport: ports are 1-65535, low to high" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --proto udp --sport 200-100
	check "--tcp-flags with a flag outside the mask is refused" says "a flag outside the mask" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --proto tcp --tcp-flags SYN/SYN,ACK
	check "--icmp-type with --proto tcp is refused" \
		says "--icmp-type 8 needs --proto icmp or icmpv6, not --proto tcp" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --proto tcp --icmp-type 8
	check "--length 0 is refused" says "bad value '0' for --length: frame lengths are 1-65535 bytes" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --length 0
	check "a bad --dst is refused" says "bad value '10.0.0.0/33' for --dst" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --dst 10.0.0.0/33
	check "--dst of the other family is refused" \
		says "--dst 2001:db8::/32 is not of the family of the rule's 10.0.0.0/8" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --dst 2001:db8::/32
	check "a /0 aggregate is refused" says "--aggregate /0=5/s: the prefix length must be at least 1" \
		"$SLUICE" set "$LAB_HOST" --aggregate /0=5/s
	# Options are checked before the interface: no attach can slip through.
	check "attach refuses a /0 aggregate" says "at least 1" \
		"$SLUICE" attach nosuchif0 --rate 5/s --aggregate /0=5/s
	check "--timeout 0s says the least" says "bad value '0s' for --timeout: must be at least 1s" \
		"$SLUICE" deny add "$LAB_HOST" 10.9.0.0/16 --timeout 0s
	check "--timeout without a unit names the units" says "expected a duration with its unit" \
		"$SLUICE" deny add "$LAB_HOST" 10.9.0.0/16 --timeout 10
	check "--timeout past ten years says the most" says "a deny entry lasts at most 3650d" \
		"$SLUICE" deny add "$LAB_HOST" 10.9.0.0/16 --timeout 3651d
	check "until past ten years from now says the same most, at its column" \
		says "late.conf:2:24: bad time '$LATE': a deny entry lasts at most 3650d from now" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/late.conf"
	check "until at the end of 64-bit time says the same, not a wrapped ban" \
		says "far.conf:2:24: bad time '2554-07-21T23:34:33Z': a deny entry lasts at most 3650d from now" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/far.conf"
	check "deny del --timeout says it goes with add" says "--timeout goes with add" \
		"$SLUICE" deny del "$LAB_HOST" 10.2.0.0/16 --timeout 1h
	check "allow add --timeout says allow does not take it" \
		says "--timeout is not an option of allow" \
		"$SLUICE" allow add "$LAB_HOST" 10.9.0.0/16 --timeout 1h
	check "a bad until in a file names FILE:LINE:COL" \
		says "until.conf:2:24: bad time 'tomorrow': expected a UTC time" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/until.conf"
	check "until on an allow entry is refused at its column" \
		says "allow-until.conf:2:19: allow entries never expire" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/allow-until.conf"
	check "a day that does not exist is a bad time" says "bad-date.conf:2:24: bad time '2030-02-31T00:00:00Z'" \
		"$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/bad-date.conf"
	check "a window limit above the packed counter's maximum says what the maximum is" \
		says "--rate 1M/s makes 1000000 packets per 1s window, more than --algorithm sliding-window counts (at most 65535 for that window)" \
		"$SLUICE" attach nosuchif0 --rate 1M/s --algorithm sliding-window
	check "--burst with a window algorithm is refused" \
		says "--burst does not apply to --algorithm fixed-window" \
		"$SLUICE" set "$LAB_HOST" --algorithm fixed-window --burst 10
	check "--window with gcra is refused" \
		says "--window 10s needs a window algorithm" "$SLUICE" set "$LAB_HOST" --window 10s
	CHECK_DETAIL="state changed"
	check "none of these changed the state" test "$(snapshot)" = "$before"
	# The longest line is accepted: the running policy again, its first line padded.
	"$SLUICE" show "$LAB_HOST" >"$LAB_TMP/same.conf"
	awk 'NR == 1 { printf "%-4095s\n", $0; next } { print }' "$LAB_TMP/same.conf" >"$LAB_TMP/max.conf"
	CHECK_DETAIL="$(head -c 4097 "$LAB_TMP/max.conf" | wc -c) bytes in line 1: $("$SLUICE" apply "$LAB_HOST" -f "$LAB_TMP/max.conf" 2>&1)"
	check "a line of exactly 4095 characters is applied" \
		test "$(head -1 "$LAB_TMP/max.conf" | tr -d '\n' | wc -c)" = 4095 -a \
		"$("$SLUICE" show "$LAB_HOST")" = "$(cat "$LAB_TMP/same.conf")"
}

# What --max-sources was given is what status, stats and the exporter show;
# sources never read more than the table holds.
test_max_sources() {
	local n st js
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	for n in 1 10000 12345 100000; do
		"$SLUICE" attach "$LAB_HOST" --rate 100/s --max-sources "$n" >/dev/null
		st=$("$SLUICE" status "$LAB_HOST" --json | jq '.[0].max_sources')
		js=$("$SLUICE" stats "$LAB_HOST" --json | jq -c '.table')
		CHECK_DETAIL="status $st, stats $js"
		check "--max-sources $n: status and stats say $n" \
			test "$st" = "$n" -a "$(jq '.max_sources' <<<"$js")" = "$n"
		CHECK_DETAIL=$("$SLUICE" stats "$LAB_HOST" --prometheus | grep '^sluice_max_sources')
		check "--max-sources $n: Prometheus says $n" \
			grep -q "^sluice_max_sources{interface=\"$LAB_HOST\"} $n\$" <<<"$CHECK_DETAIL"
		[ "$n" = 1 ] && flood 40 1 400 >/dev/null
		js=$("$SLUICE" stats "$LAB_HOST" --json | jq -c '.table')
		CHECK_DETAIL="$js; $("$SLUICE" stats "$LAB_HOST" | grep '^sources')"
		check "--max-sources $n: sources at most the capacity, in JSON and the table" \
			test "$(jq '.sources <= .capacity and .capacity >= .max_sources' <<<"$js")" = true -a \
			-n "$("$SLUICE" stats "$LAB_HOST" | awk '/^sources/ && $2 <= $4')"
		"$SLUICE" detach "$LAB_HOST" >/dev/null
	done
}

# A value sluice changes (host bits) is used with one warning line, which
# names the command, or the file's line and column.
test_host_bits_warnings() {
	check "--dst with host bits: one warning naming the command, and its network used" \
		warns "sluice rule: warning: --dst '10.251.0.1/24' has host bits set; using 10.251.0.0/24" \
		"$SLUICE" rule add "$LAB_HOST" 10.0.0.0/8 --rate 1/s --dst 10.251.0.1/24 --proto udp
	"$SLUICE" rule del "$LAB_HOST" 10.0.0.0/8 --dst 10.251.0.0/24 --proto udp >/dev/null 2>&1
	printf 'default rate 10/s\nrule 10.0.0.0/8 rate 1/s dst 10.251.0.1/24\n' >"$LAB_TMP/dst.conf"
	check "dst with host bits in a file: one warning naming the file's line and column" \
		warns "$LAB_TMP/dst.conf:2:30: warning: dst '10.251.0.1/24' has host bits set; using 10.251.0.0/24" \
		"$SLUICE" apply --check -f "$LAB_TMP/dst.conf"
	printf 'default rate 10/s\nrule 10.0.0.1/8 rate 1/s\n' >"$LAB_TMP/src.conf"
	check "a rule's CIDR with host bits in a file: the network used is named, as on the command line" \
		warns "$LAB_TMP/src.conf:2:6: warning: '10.0.0.1/8' has host bits set; using 10.0.0.0/8" \
		"$SLUICE" apply --check -f "$LAB_TMP/src.conf"
}

# An interface whose driver has no native XDP: one line that names the
# way that works, exit 1 (the machine's, not the input's), nothing left.
test_native_unsupported() {
	local out rc
	out=$("$SLUICE" attach lo --rate 10/s --mode native 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "native mode on lo: exit 1, one line naming --mode generic, no state" \
		test "$rc" = 1 -a "$(printf '%s' "$out" | grep -c '')" = 1 -a \
		-n "$(grep -F 'in native mode, which its driver lacks (--mode generic' <<<"$out")" -a \
		! -e /sys/fs/bpf/sluice/lo
}

test_not_root() {
	local before out rc
	before=$(snapshot)
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$SLUICE" set "$LAB_HOST" --rate 5/s 2>&1)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "non-root set is refused and says root is needed" \
		test "$rc" = 1 -a "$(snapshot)" = "$before" -a -n "$(grep -o 'root' <<<"$out")"
}

test_help() {
	check "sluice --help exits 0" "$SLUICE" --help
	check "sluice --version exits 0" "$SLUICE" --version
	local layout commit
	layout=$(awk '/define SLUICE_LAYOUT_VERSION/ { print $3 }' include/sluice.h)
	commit=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)
	CHECK_DETAIL=$("$SLUICE" --version)
	check "sluice --version names the commit and the layout" \
		grep -q "commit $commit, layout $layout," <<<"$("$SLUICE" --version)"
	local cmd
	for cmd in attach set detach status stats rule allow deny apply show upgrade top exporter; do
		check "sluice $cmd --help exits 0 and shows usage" \
			bash -c "'$SLUICE' $cmd --help | grep -q '^Usage: sluice $cmd'"
	done
	# Every option a command's help lists is in its synopsis in sluice(8), but
	# for the limiter options (_LIMITER-OPTION_) and those of every command.
	local common opt form found synopsis
	common=$( (help_options set; printf '%s\n' --ipv4-prefix --ipv6-prefix --key '-j|--json' \
		'-p|--pretty' --wait '-h|--help') | sort -u)
	for cmd in attach set detach status stats rule allow deny apply show upgrade top exporter agent; do
		synopsis=$(awk -v c="$cmd" '$0 ~ "^\\*sluice " c "[* ]" { p = 1 } p && /^$/ { p = 0 } p' \
			docs/sluice.8.scd.in)
		for opt in $(help_options "$cmd"); do
			grep -qx -- "$opt" <<<"$common" && continue
			found=
			for form in ${opt//|/ }; do
				grep -qE -- "[* ]$form[* ]" <<<"$synopsis" && found=1
			done
			CHECK_DETAIL=$synopsis
			check "sluice(8)'s synopsis of $cmd names $opt, as its --help does" test -n "$found"
		done
	done
}

# help_options CMD: the options CMD --help lists, one a line, "-f|--file" for both forms.
help_options() {
	"$SLUICE" "$1" --help | sed -n '/^Options:/,$p' | grep -oE '^  (-[a-z], )?--[a-z0-9-]+' |
		sed 's/^  //; s/, /|/'
}

# jsonly CMD...: runs sluice -j CMD; its stdout must be exactly one JSON
# document (one line) and its exit 0; the document goes to $DOC.
jsonly() {
	local err
	DOC=$("$SLUICE" -j "$@" 2>"$LAB_TMP/json.err")
	RC=$?
	err=$(cat "$LAB_TMP/json.err")
	CHECK_DETAIL="exit $RC: stdout $DOC; stderr $err"
	[ "$RC" = 0 ] && [ "$(printf '%s\n' "$DOC" | grep -c '')" = 1 ] && jq -e . <<<"$DOC" >/dev/null
}

# -j anywhere on the line, for every command: what a change did is one
# document (changed, the interface's status entry, the lines it would have
# printed), never a line of text on stdout; an error is one JSON line.
test_json_everywhere() {
	local inv before out
	printf 'default rate 7/s\nrule 10.4.0.0/16 rate 3/s\n' >"$LAB_TMP/j.conf"
	for inv in "set HOST --rate 9/s" "rule add HOST 10.5.0.0/16 --rate 2/s" \
		"rule del HOST 10.5.0.0/16" "allow add HOST 10.6.0.0/16" "allow del HOST 10.6.0.0/16" \
		"deny add HOST 10.7.0.0/16 --timeout 1h" "deny del HOST 10.7.0.0/16" \
		"apply HOST -f JCONF" "upgrade HOST"; do
		read -r -a args <<<"$(sed "s|HOST|$LAB_HOST|; s|JCONF|$LAB_TMP/j.conf|" <<<"$inv")"
		check "sluice -j $inv: one document, exit 0" jsonly "${args[@]}"
		check "... it names ${args[0]} and the interface, changed, with its status" \
			jq -e --arg c "${args[0]}" --arg i "$LAB_HOST" \
			'.command == $c and .interface == $i and .changed == true and .status.interface == $i and .status.state == "ok"' <<<"$DOC"
	done
	check "sluice -j apply, the same file again: changed false, and the line it would print" \
		jsonly apply "$LAB_HOST" -f "$LAB_TMP/j.conf"
	check "... in messages" jq -e '.changed == false and (.messages[0] | test("nothing changed"))' <<<"$DOC"
	check "the generation in a change's status is the one status reads" \
		test "$(jq .status.generation <<<"$DOC")" = "$("$SLUICE" status "$LAB_HOST" -j | jq '.[0].generation')"
	check "sluice -j attach --replace, the same file: one document" \
		jsonly attach "$LAB_HOST" -f "$LAB_TMP/j.conf" --replace
	check "... unchanged, program and buckets kept" \
		jq -e '.changed == false and .status.state == "ok" and (.messages | any(test("kept its program")))' <<<"$DOC"
	check "sluice show -j: the policy file as a string" jsonly show "$LAB_HOST"
	check "... the same text as show" test "$(jq -r .policy <<<"$DOC")" = "$("$SLUICE" show "$LAB_HOST")"
	check "sluice apply -f FILE --check -j: one document" jsonly apply -f "$LAB_TMP/j.conf" --check
	check "... with the rules counted" jq -e '.ok == true and .rules == 1' <<<"$DOC"
	before=$(snapshot)
	DOC=$("$SLUICE" set "$LAB_HOST" --rate 0/s -j 2>/dev/null)
	RC=$?
	CHECK_DETAIL="exit $RC: $DOC"
	check "sluice set --rate 0/s -j: exit 2, one JSON error, nothing changed" \
		test "$RC" = 2 -a "$(jq -r .command <<<"$DOC")" = set -a "$(snapshot)" = "$before"
	# -p spreads an error over lines as it does every document (sluice(8)),
	# also one found while the line is parsed, before the command runs.
	for inv in "set HOST --rate 0/s -p" "-p set HOST --bogus" "-p frob" "--pretty"; do
		read -r -a args <<<"${inv//HOST/$LAB_HOST}"
		DOC=$("$SLUICE" "${args[@]}" 2>/dev/null)
		RC=$?
		CHECK_DETAIL="exit $RC: $DOC"
		check "sluice $inv: exit 2, the JSON error indented" \
			test "$RC" = 2 -a "$(jq -r .error <<<"$DOC" 2>/dev/null | grep -c '')" = 1 -a \
			"$DOC" = "$(jq . <<<"$DOC" 2>/dev/null)"
	done
	check "sluice -j detach: one document, status null" jsonly detach "$LAB_HOST"
	check "... changed, and the line it would print" \
		jq -e '.changed == true and .status == null and (.messages[0] | test("detached from"))' <<<"$DOC"
	check "sluice -j detach again: changed false" jsonly detach "$LAB_HOST"
	check "... nothing to detach" jq -e '.changed == false and (.messages[0] | test("nothing to detach"))' <<<"$DOC"
	# The line README and sluice(8) show for their first attach, word for word.
	out=$("$SLUICE" attach "$LAB_HOST" --rate 500/s --burst 1000 2>&1)
	CHECK_DETAIL="README: $(grep -m1 '^sluice: attached to eth1' README.md); sluice: $out"
	check "attach --rate 500/s --burst 1000 says what README shows" \
		grep -qxF -- "${out//$LAB_HOST/eth1}" README.md
	CHECK_DETAIL="sluice: $out"
	check "... and what sluice(8)'s first example shows" bash -c \
		'grep -A1 "^sluice: attached to eth1" docs/sluice.8.scd.in | tr "\n" " " |
			grep -qF -- "$0 "' "${out//$LAB_HOST/eth1}"
	"$SLUICE" detach "$LAB_HOST" >/dev/null
	check "sluice -p attach: one document, indented" \
		bash -c "'$SLUICE' -p attach '$LAB_HOST' --rate 100/s | jq -e '.status.rate == \"100/s\"' && \
			'$SLUICE' status '$LAB_HOST' | grep -q '^$LAB_HOST '"
	check "stats --watch -1 is a bad value, not an unknown option" \
		says "bad value '-1' for --watch: must not be negative" "$SLUICE" stats "$LAB_HOST" --watch -1
	check "a short option of another command names it" \
		says "-n (--limit) is not an option of set" "$SLUICE" set "$LAB_HOST" -n 5
}

# set --algorithm clears what does not apply to the new algorithm (issue 32).
test_set_switches_algorithm() {
	local dflt
	"$SLUICE" set "$LAB_HOST" --rate 100/s --burst 1000 --initial-burst 50 >/dev/null
	check "set --algorithm sliding-window after --burst 1000: accepted" \
		"$SLUICE" set "$LAB_HOST" --algorithm sliding-window --rate 100/s
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... the burst and the initial burst are gone" \
		test "$dflt" = "default rate 100/s algorithm sliding-window"
	check "set --algorithm gcra --warmup 2s from a window: accepted" \
		"$SLUICE" set "$LAB_HOST" --algorithm gcra --warmup 2s
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... the window is gone, the warm-up set" test "$dflt" = "default rate 100/s warmup 2s"
	check "set --burst with a warm-up is still refused" not_ok \
		"$SLUICE" set "$LAB_HOST" --burst 10
	check "set --algorithm gcra --rate 100/s --burst 20: the warm-up is gone" \
		"$SLUICE" set "$LAB_HOST" --algorithm gcra --rate 100/s --burst 20
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... back as it was" test "$dflt" = "default rate 100/s burst 20"
}

# set --rate of the other kind derives the burst again, bytes or packets.
test_set_switches_unit() {
	local dflt
	"$SLUICE" set "$LAB_HOST" --rate 10mbit/s --burst 64kB >/dev/null
	CHECK_DETAIL=$("$SLUICE" set "$LAB_HOST" --rate 100/s 2>&1)
	check "set --rate 100/s after --burst 64kB: accepted" test $? = 0
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... the burst in bytes is gone" test "$dflt" = "default rate 100/s"
	check "set --rate 100/s --burst 64kB is still refused" not_ok \
		"$SLUICE" set "$LAB_HOST" --rate 100/s --burst 64kB
	# The initial burst and the overflow rate in bytes go back to their defaults too.
	"$SLUICE" set "$LAB_HOST" --rate 10mbit/s --burst 64kB --initial-burst 32kB \
		--overflow-rate 1mbit/s >/dev/null
	CHECK_DETAIL=$("$SLUICE" set "$LAB_HOST" --rate 100/s 2>&1)
	check "set --rate 100/s after --initial-burst 32kB --overflow-rate 1mbit/s: accepted" \
		test $? = 0
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... both are gone" test "$dflt" = "default rate 100/s"
	# Typed in the new rate's unit, they stay.
	"$SLUICE" set "$LAB_HOST" --rate 100/s --burst 50 --initial-burst 20 \
		--overflow-rate 30/s >/dev/null
	"$SLUICE" set "$LAB_HOST" --rate 200/s >/dev/null
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "set --rate 200/s keeps a burst, initial burst and overflow rate in packets" \
		test "$dflt" = "default rate 200/s burst 50 overflow-rate 30/s initial-burst 20"
	# Through bytes and back: the default as the other tests expect it.
	"$SLUICE" set "$LAB_HOST" --rate 10mbit/s >/dev/null
	"$SLUICE" set "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	dflt=$("$SLUICE" show "$LAB_HOST" | grep '^default ')
	CHECK_DETAIL=$dflt
	check "... and through bytes and back, only what the last set gave" \
		test "$dflt" = "default rate 100/s burst 20"
}

# A rule the agent cannot sync is named as rule list names it (its CIDR),
# not by a slot number nothing shows ("rule 1", "the default 0").
test_agent_unsyncable() {
	"$SLUICE" status "$LAB_HOST" >/dev/null 2>&1 || "$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	"$SLUICE" rule add "$LAB_HOST" 10.5.0.0/16 --rate 10/s --algorithm sliding-window >/dev/null
	check "agent, a rule under a window algorithm: exit 2, one line naming it by its CIDR" \
		says "sluice agent: $LAB_HOST: rule 10.5.0.0/16 uses a window algorithm; the agent syncs" \
		"$SLUICE" agent "$LAB_HOST" --redis 127.0.0.1:1
	"$SLUICE" rule del "$LAB_HOST" 10.5.0.0/16 >/dev/null
	"$SLUICE" set "$LAB_HOST" --algorithm fixed-window >/dev/null
	check "agent, the default under a window algorithm: exit 2, one line naming 'the default'" \
		says "sluice agent: $LAB_HOST: the default uses a window algorithm; the agent syncs" \
		"$SLUICE" agent "$LAB_HOST" --redis 127.0.0.1:1
	"$SLUICE" set "$LAB_HOST" --algorithm gcra --burst 20 >/dev/null
}

# A --redis host name that does not resolve is not bad input (DNS may come
# back): the agent runs in fallback, and says why, not "No route to host".
test_agent_unresolvable() {
	local pid
	"$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	"$SLUICE" agent "$LAB_HOST" --redis nosuchhost.invalid:6379 2>"$LAB_TMP/agent.err" &
	pid=$!
	for _ in $(seq 50); do
		grep -q 'Redis unreachable' "$LAB_TMP/agent.err" && break
		sleep 0.1
	done
	kill "$pid"
	wait "$pid"
	CHECK_DETAIL=$(grep 'Redis unreachable' "$LAB_TMP/agent.err")
	check "agent, --redis naming a host that does not resolve: says so" \
		grep -qF "Redis unreachable (nosuchhost.invalid:6379: connect: the host name does not resolve): fallback-local" \
		"$LAB_TMP/agent.err"
}

# agent_ended WHY HOW LINE: agent_started's agent ends after WHY, exit 1
# with LINE last on stderr, its report gone.
agent_ended() {
	check "agent, $1: the agent ends" agent_gone "$AGENT_PID"
	CHECK_DETAIL="exit $AGENT_RC: $(tail -n 2 "$LAB_TMP/agent.err" | tr '\n' ' ')"
	AGENT_LINE=$3 # the eval runs in check's frame, where $3 is not ours
	check "... exit 1, $2" eval '[ "$AGENT_RC" = 1 ] && [ "$(tail -n 1 "$LAB_TMP/agent.err")" = "$AGENT_LINE" ]'
	check "... its report gone" test ! -e "/run/sluice/fleet/$LAB_HOST"
	check "... its lock gone" test ! -e "/run/sluice/fleet/$LAB_HOST.lock"
}

# An agent whose interface is attached anew (new maps) or detached stops
# within a second or so, exit 1, saying why, its report gone: it would go on
# syncing maps no datapath reads, status showing the fleet up on the new
# attachment. Redis at a port nobody listens on: the agent runs in fallback.
test_agent_detached() {
	local how
	for how in "attach --replace afresh" detach; do
		agent_started
		if [ "$how" = detach ]; then
			"$SLUICE" detach "$LAB_HOST" >/dev/null
		else
			"$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 --max-sources 4096 --replace >/dev/null 2>&1
		fi
		agent_ended "its interface's $how" "saying so on one line" \
			"sluice agent: $LAB_HOST: detached, or attached anew: the agent stops"
	done
}

# A rule changed under a running agent to one it cannot sync: the agent
# stops (exit 1, one line naming the rule) rather than sync the others
# while each host passes that rule's whole limit, status saying synced.
test_agent_rule_changed() {
	agent_started
	"$SLUICE" set "$LAB_HOST" --algorithm fixed-window >/dev/null
	agent_ended "the default changed to a window algorithm under it" "naming the rule on one line" \
		"sluice agent: $LAB_HOST: the default uses a window algorithm; the agent syncs packet rates under gcra only, so it stops"
	"$SLUICE" set "$LAB_HOST" --algorithm gcra --burst 20 >/dev/null
}

# SIGHUP (a terminal closed, systemctl kill -s HUP) is a clean stop, as
# SIGTERM is: exit 0, the report gone, rather than a death that leaves the
# report and the hint saying an agent runs. One started under nohup goes on
# ignoring it, as nohup asks.
test_agent_hangup() {
	agent_started
	kill -HUP "$AGENT_PID"
	check "agent, SIGHUP: the agent ends" agent_gone "$AGENT_PID"
	CHECK_DETAIL="exit $AGENT_RC: $(tail -n 2 "$LAB_TMP/agent.err" | tr '\n' ' ')"
	check "... exit 0, a clean stop" test "$AGENT_RC" = 0
	check "... its report gone" test ! -e "/run/sluice/fleet/$LAB_HOST"
	check "... its lock gone" test ! -e "/run/sluice/fleet/$LAB_HOST.lock"
	agent_started nohup
	kill -HUP "$AGENT_PID"
	sleep 0.5
	check "agent under nohup, SIGHUP: it goes on" kill -0 "$AGENT_PID"
	kill "$AGENT_PID"
	check "... and SIGTERM ends it" agent_gone "$AGENT_PID"
}

# One agent per interface: a second is refused while the first runs, and
# the first removes its lock as it ends, nothing left in /run/sluice/fleet.
test_agent_lock() {
	local out rc
	agent_started
	out=$("$SLUICE" agent "$LAB_HOST" --redis 127.0.0.1:1 2>&1 >/dev/null)
	rc=$?
	CHECK_DETAIL="exit $rc: $out"
	check "agent, a second for the same interface: exit 1, one line saying another runs" \
		test "$rc" = 1 -a "$out" = "sluice agent: $LAB_HOST: another agent runs for it"
	kill "$AGENT_PID"
	check "... the first ends at SIGTERM" agent_gone "$AGENT_PID"
	check "... its lock gone" test ! -e "/run/sluice/fleet/$LAB_HOST.lock"
	agent_started
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST" --json | jq -c '.[0].fleet')
	check "... and another runs then, status showing it" \
		jq -e --argjson pid "$AGENT_PID" '.agent_pid == $pid' <<<"$CHECK_DETAIL"
	kill "$AGENT_PID"
	agent_gone "$AGENT_PID"
}

# agent_private_run ERRFILE BODY: in a mount namespace of its own with a
# tmpfs on /run (so the host's, other tests' included, stay as they are),
# the agent of LAB_HOST started (its stderr to ERRFILE) and its first
# report awaited, then BODY run there, printing what it prints, then the
# agent stopped.
agent_private_run() {
	"$SLUICE" status "$LAB_HOST" >/dev/null 2>&1 || "$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	unshare -m --propagation private bash -c '
		mount -t tmpfs -o mode=0755 tmpfs /run || exit 1
		"$0" agent "$1" --redis 127.0.0.1:1 2>"$2" &
		for _ in $(seq 50); do
			[ -e "/run/sluice/fleet/$1" ] && break
			sleep 0.1
		done
		eval "$3"
		kill $! && wait $!' "$SLUICE" "$LAB_HOST" "$1" "$2"
}

# The agent makes /run/sluice and /run/sluice/fleet 0700 when missing, as
# sluice(8) says.
test_agent_run_dir() {
	local modes
	modes=$(agent_private_run /dev/null 'stat -c "%a %n" /run/sluice /run/sluice/fleet | tr "\n" " "')
	CHECK_DETAIL=$modes
	check "agent, no /run/sluice: it makes /run/sluice and /run/sluice/fleet 0700" \
		test "$modes" = "700 /run/sluice 700 /run/sluice/fleet "
}

# A report the agent cannot write (its directory made writable by all, so
# refused as unsafe) is said once on stderr, and once more when it is
# written again.
test_agent_unwritten() {
	local said err=$LAB_TMP/unwritten.err
	agent_private_run "$err" 'chmod 0777 /run/sluice/fleet; sleep 1; chmod 0700 /run/sluice/fleet; sleep 1'
	said="$(grep -c "report cannot be written to /run/sluice/fleet: .*show no agent until it can$" "$err") $(grep -c "its report written again$" "$err")"
	CHECK_DETAIL="$said: $(grep -v 'syncing through\|unreachable\|in fallback' "$err")"
	check "agent: a report it cannot write is said once, and once when written again" \
		test "$said" = "1 1"
}

# status words a fleet of one host in the singular (the report written as
# the agent writes it, for a process of ours).
test_fleet_one_host() {
	local f=/run/sluice/fleet/$LAB_HOST
	"$SLUICE" status "$LAB_HOST" >/dev/null 2>&1 || "$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
	mkdir -p /run/sluice/fleet
	printf 'pid %d\nup 1\nmode synced\nperiod_ns 100000000\nhosts 1\ncandidates 0\nlag_ns 0\nunpushed 0\nwritten_ns %s\n' \
		$$ "$(date +%s%N)" >"$f.tmp"
	mv "$f.tmp" "$f"
	CHECK_DETAIL=$("$SLUICE" status "$LAB_HOST" | grep 'fleet:')
	check "status: a fleet of one host says '1 host'" grep -q ', 1 host, ' <<<"$CHECK_DETAIL"
	rm -f "$f"
}

not_ok() { ! "$@" 2>/dev/null; }

lab_up || { echo "cannot build the veth lab"; echo "0 passed, 1 failed"; exit 1; }
"$SLUICE" attach "$LAB_HOST" --rate 100/s --burst 20 >/dev/null
"$SLUICE" rule add "$LAB_HOST" 10.1.0.0/16 --rate 5/s >/dev/null
printf 'default rate 5/s\nrule 10.0.0.0/8 rate 1/s proto tcp dport 22 syn\nallow 10.0.0.0/40\n' >"$LAB_TMP/bad.conf"
printf '10.0.0.0/8\n# fine so far\n10.0.0.0/8/8\n' >"$LAB_TMP/bad.list"
printf 'default rate 5/s\nrule 10.0.0.0/8 rate 1/s\0\n' >"$LAB_TMP/nul.conf"
printf '10.0.0.0/8\n10.\0\n' >"$LAB_TMP/nul.list"
printf '10.1.2.3/8\nbogus\n' >"$LAB_TMP/warn.list"
printf 'default rate 5/s\nrule 10.1.2.3/8 rate 5/s\nrule 10.0.0.0/8 rate 6/s\n' >"$LAB_TMP/warn.conf"
awk 'BEGIN { printf "%-4096s\n", "default rate 5/s" }' >"$LAB_TMP/long.conf"
printf 'default rate 5/s\nrule 10.0.0.0/8 rate 1/s proto icmpv6\n' >"$LAB_TMP/family.conf"
printf 'default rate 5/s\ndeny 10.9.0.0/16 until tomorrow\n' >"$LAB_TMP/until.conf"
printf 'default rate 5/s\nallow 10.9.0.0/16 until 2030-01-01T00:00:00Z\n' >"$LAB_TMP/allow-until.conf"
printf 'default rate 5/s\ndeny 10.9.0.0/16 until 2030-02-31T00:00:00Z\n' >"$LAB_TMP/bad-date.conf"
printf 'default rate 5/s\ndeny 10.9.0.0/16 until 2554-07-21T23:34:33Z\n' >"$LAB_TMP/far.conf"
LATE=$(date -u -d "@$(($(date +%s) + 3650 * 86400 + 3600))" +%Y-%m-%dT%H:%M:%SZ)
printf 'default rate 5/s\ndeny 10.9.0.0/16 until %s\n' "$LATE" >"$LAB_TMP/late.conf"
# A timed and a permanent deny entry, so every refusal above leaves both as they were.
"$SLUICE" deny add "$LAB_HOST" 10.2.0.0/16 --timeout 1d >/dev/null
"$SLUICE" deny add "$LAB_HOST" 10.3.0.0/16 >/dev/null
test_set_switches_algorithm
test_set_switches_unit
test_bad_invocations
test_messages
test_host_bits_warnings
test_native_unsupported
test_not_root
test_help
test_json_everywhere
test_max_sources
test_agent_unsyncable
test_agent_unresolvable
test_agent_detached
test_agent_rule_changed
test_agent_hangup
test_agent_lock
test_agent_run_dir
test_agent_unwritten
test_fleet_one_host
lab_finish
