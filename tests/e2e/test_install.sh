#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make install and make uninstall into a DESTDIR, for the default PREFIX and
# PREFIX=/usr: exactly the expected files with their modes, the installed
# command, man pages, completion, units, fail2ban action, Grafana dashboard and
# Prometheus alert rules working from there, an edited
# config kept, and nothing of sluice left after uninstall. Then the installed
# binary attaches to a lab veth with build/ hidden, as the BPF program is
# built into it, and applies the installed example config.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

DESTS=()
cleanup() {
	rm -rf "${DESTS[@]}"
	lab_down
}

# What install puts under DESTDIR for a PREFIX, one "MODE PATH" a line.
expected_tree() {
	local p=${1#/}
	printf '%s\n' "644 etc/sluice/example.conf" \
		"644 $p/lib/systemd/system/sluice-agent@.service" \
		"644 $p/lib/systemd/system/sluice-exporter.service" \
		"644 $p/lib/systemd/system/sluice@.service" \
		"755 $p/sbin/sluice" \
		"644 $p/share/bash-completion/completions/sluice" \
		"644 $p/share/fish/vendor_completions.d/sluice.fish" \
		"644 $p/share/zsh/$([ "$1" = /usr ] && echo vendor-completions || echo site-functions)/_sluice" \
		"644 $p/share/man/man5/sluice.conf.5" \
		"644 $p/share/man/man8/sluice.8" \
		"644 $p/share/sluice/fail2ban/sluice.conf" \
		"644 $p/share/sluice/grafana/sluice-dashboard.json" \
		"644 $p/share/sluice/prometheus/sluice-alerts.yml" | sort -k2
}

# Every file and link under a tree, as expected_tree prints them.
tree_of() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%m %P\n' | sort -k2)
}

same_tree() {
	local got
	got=$(tree_of "$1")
	[ "$got" = "$2" ] && return 0
	CHECK_DETAIL=$(diff <(echo "$2") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')
	return 1
}

# The units, with their command pointed at the DESTDIR copy, must verify.
units_verify() {
	local dest=$1 prefix=$2 dir u
	dir=$(mktemp -d /tmp/sluice-units.XXXXXX)
	DESTS+=("$dir")
	for u in sluice@.service sluice-exporter.service sluice-agent@.service; do
		sed "s|$prefix/sbin/sluice|$dest$prefix/sbin/sluice|g" \
			"$dest$prefix/lib/systemd/system/$u" >"$dir/${u/@./@eth0.}"
	done
	CHECK_DETAIL=$(MANPATH=$dest$prefix/share/man systemd-analyze verify \
		"$dir/sluice@eth0.service" "$dir/sluice-exporter.service" \
		"$dir/sluice-agent@eth0.service" 2>&1 | head -3 | tr '\n' ' ')
	[ -z "$CHECK_DETAIL" ] || return 1
	UNITS_DIR=$dir
}

units_use() {
	grep -qx "ExecStart=$2/sbin/sluice attach %I -f /etc/sluice/%I.conf --replace" \
		"$1$2/lib/systemd/system/sluice@.service" &&
		grep -qx "ExecStart=$2/sbin/sluice exporter \$SLUICE_EXPORTER_ARGS" \
			"$1$2/lib/systemd/system/sluice-exporter.service"
}

# man -l FILE renders, with NAME and TEXT in it and nothing on stderr.
man_renders() {
	local out err
	err=$(mktemp /tmp/sluice-man.XXXXXX)
	out=$(MANWIDTH=80 man -l "$1" 2>"$err")
	CHECK_DETAIL=$(head -c 200 "$err")
	rm -f "$err"
	[ -z "$CHECK_DETAIL" ] && grep -q "^NAME" <<<"$out" && grep -q "$2" <<<"$out"
}

completes() {
	bash -c '. /usr/share/bash-completion/bash_completion && . "$0" &&
		complete -p sluice' "$1" | grep -q sluice
}

# operations.md's exposure scores: each unit it scores, as installed,
# gets that score from systemd-analyze security --offline.
scores_documented() {
	local dir=$1 unit want got n=0
	while read -r unit want; do
		got=$(cd "$dir" && systemd-analyze security --offline=yes "$unit" 2>&1 |
			sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p')
		CHECK_DETAIL="$CHECK_DETAIL$unit: documented $want, measured ${got:-nothing}; "
		[ "$got" = "$want" ] || return 1
		n=$((n + 1))
	done < <(sed -n 's/^→ Overall exposure level for \([^:]*\): \([0-9.]*\) OK$/\1 \2/p' docs/operations.md)
	CHECK_DETAIL=
	[ "$n" = 3 ]
}

# The run-time libraries operations.md names: the package of every
# library the installed binary links (but libc's).
libraries_documented() {
	local bin=$1 said lib pkg
	said=$(tr '\n' ' ' <docs/operations.md | grep -oP 'It needs .*? at run time')
	for lib in $(objdump -p "$bin" | awk '$1 == "NEEDED" { print $2 }'); do
		pkg=$(dpkg -S "*/$lib" 2>/dev/null | head -1 | cut -d: -f1)
		[ "$pkg" = libc6 ] && continue
		CHECK_DETAIL="$lib (${pkg:-no package}) not in: $said"
		grep -qw -- "\`$pkg\`" <<<"$said" || return 1
	done
	CHECK_DETAIL=
}

# operations.md's install table names, in each directory's row, every file
# installed there (as a path under it: man8/sluice.8).
table_documented() {
	local dest=$1 prefix=$2 var dir row f
	for var in SBINDIR MANDIR BASHCOMPDIR ZSHCOMPDIR FISHCOMPDIR SYSTEMDUNITDIR \
		FAIL2BANDIR GRAFANADIR PROMETHEUSDIR; do
		dir=$(make -s print-$var PREFIX="$prefix")
		row=$(grep "^| \`$var\` |" docs/operations.md | cut -d'|' -f4)
		for f in $(find "$dest$dir" -type f -printf '%P\n'); do
			CHECK_DETAIL="$var: $f not in '$row'"
			grep -qF -- "\`$f\`" <<<"$row" || return 1
		done
	done
	CHECK_DETAIL=
}

# in_fpath DIR: zsh, started as a user's shell is (no rc file of theirs),
# looks for completion functions in DIR.
in_fpath() {
	CHECK_DETAIL="$1 not in zsh's fpath: $(zsh -fc 'print -r -- $fpath' | cut -c1-120)..."
	zsh -fc 'print -rl -- $fpath' | grep -qxF -- "$1"
}

# install_checks LABEL [PREFIX]
install_checks() {
	local label=$1 prefix=${2:-} dest p
	dest=$(mktemp -d /tmp/sluice-dest.XXXXXX)
	DESTS+=("$dest")
	p=${prefix:-/usr/local}
	check "$label: make install exits 0" \
		make --no-print-directory install DESTDIR="$dest" ${prefix:+PREFIX=$prefix}
	check "$label: exactly the expected files and modes" same_tree "$dest" "$(expected_tree "$p")"
	check "$label: units run $p/sbin/sluice" units_use "$dest" "$p"
	check "$label: the fail2ban action runs $p/sbin/sluice" grep -qx "sluice = $p/sbin/sluice" \
		"$dest$p/share/sluice/fail2ban/sluice.conf"
	check "$label: the Grafana dashboard installed as in contrib/" cmp -s \
		contrib/grafana/sluice-dashboard.json "$dest$p/share/sluice/grafana/sluice-dashboard.json"
	check "$label: the installed alert rules pass promtool check rules" \
		promtool check rules "$dest$p/share/sluice/prometheus/sluice-alerts.yml"
	check "$label: systemd-analyze verify passes for both units" units_verify "$dest" "$p"
	check "$label: the units score what operations.md says" scores_documented "$UNITS_DIR"
	check "$label: operations.md's table names every installed file" table_documented "$dest" "$p"
	check "$label: operations.md names the library of every NEEDED entry" \
		libraries_documented "$dest$p/sbin/sluice"
	check "$label: installed sluice --version" \
		bash -c 'cd / && "$0" --version | grep -qE "^sluice [0-9]+\.[0-9]+\.[0-9]+ "' "$dest$p/sbin/sluice"
	check "$label: installed sluice --help" bash -c 'cd / && "$0" --help | grep -q attach' \
		"$dest$p/sbin/sluice"
	check "$label: man -l renders sluice(8)" man_renders "$dest$p/share/man/man8/sluice.8" "sluice attach"
	check "$label: man -l renders sluice.conf(5)" man_renders \
		"$dest$p/share/man/man5/sluice.conf.5" "default"
	check "$label: the completion sources in bash" completes \
		"$dest$p/share/bash-completion/completions/sluice"
	check "$label: _sluice is where zsh looks for it" \
		in_fpath "$(dirname "$(cd "$dest" && find . -name _sluice -printf '/%P')")"

	echo "# edited" >>"$dest/etc/sluice/example.conf"
	make --no-print-directory install DESTDIR="$dest" ${prefix:+PREFIX=$prefix} >/dev/null
	check "$label: install again keeps an edited config" grep -qx "# edited" "$dest/etc/sluice/example.conf"
	make --no-print-directory uninstall DESTDIR="$dest" ${prefix:+PREFIX=$prefix} >/dev/null
	check "$label: uninstall keeps an edited config, removes all else" same_tree "$dest" \
		"644 etc/sluice/example.conf"
	rm "$dest/etc/sluice/example.conf"
	make --no-print-directory install DESTDIR="$dest" ${prefix:+PREFIX=$prefix} >/dev/null
	check "$label: make uninstall exits 0" \
		make --no-print-directory uninstall DESTDIR="$dest" ${prefix:+PREFIX=$prefix}
	check "$label: nothing of sluice left" same_tree "$dest" ""
	check "$label: /etc/sluice removed once empty" test ! -e "$dest/etc/sluice"
	check "$label: $p/share/sluice removed once empty" test ! -e "$dest$p/share/sluice"
}

# The installed binary in a mount namespace where build/ is an empty tmpfs.
without_build() {
	unshare -m sh -c 'mount -t tmpfs none build && cd / && exec "$@"' sh "$@"
}

embedded_checks() {
	local dest=${DESTS[0]} bin
	make --no-print-directory install DESTDIR="$dest" >/dev/null
	bin=$dest/usr/local/sbin/sluice
	check "build/ hidden: it is empty" without_build test ! -e build/sluice
	check "build/ hidden: the installed sluice attaches" \
		without_build "$bin" attach "$LAB_HOST" --rate 100/s --max-sources 1000
	check "build/ hidden: status shows it attached" \
		bash -c '"$0" status "$1" --json | jq -e ".[0].state == \"ok\""' "$bin" "$LAB_HOST"
	check "the installed example.conf applies" \
		without_build "$bin" apply "$LAB_HOST" -f "$dest/etc/sluice/example.conf"
	check "show gives back the example's rules and lists" bash -c '"$0" show "$1" |
		grep -c -e "^default rate 500/s burst 1k$" -e "^rule .*dport 22" -e "^allow 192.0.2.0/24" \
			-e "^deny 198.51.100.0/24" | grep -qx 5' "$bin" "$LAB_HOST"
	check "build/ hidden: the installed sluice detaches" without_build "$bin" detach "$LAB_HOST"
	make --no-print-directory uninstall DESTDIR="$dest" >/dev/null
}

lab_up || {
	echo "FAIL cannot create the veth pair and namespace"
	lab_finish
	exit 1
}
trap cleanup EXIT

install_checks "PREFIX default"
install_checks "PREFIX=/usr" /usr
embedded_checks

lab_finish
