#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian package, as an operator meets it: dpkg-buildpackage -us -uc -b
# in a clone of this tree (with its uncommitted changes), lintian without
# errors, the tree left as git had it, `apt-get install ./sluice_*.deb`, the
# installed sluice and the demo run with it, its fail2ban action naming
# /usr/sbin/sluice, its Grafana dashboard and alert rules (promtool), a
# reinstall that upgrades an attached interface in place (postinst), and a
# purge that detaches it and leaves nothing behind. Refuses to run when a
# sluice package is installed.
set -u
cd "$(dirname "$0")/../.."
. tests/e2e/lab.sh

SRC=$PWD
export DEBIAN_FRONTEND=noninteractive
WORK=$(mktemp -d /tmp/sluice-deb.XXXXXX)
INSTALLED=0

cleanup() {
	[ "$INSTALLED" = 1 ] && apt-get purge -y -q sluice >/dev/null 2>&1
	rm -rf "$WORK"
	lab_down
}

# The tree as it is now: committed history, then the working files on top.
# Outside a git checkout, a copy without build/, made a repository of its own.
clone_tree() {
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git clone -q --shared "$SRC" "$WORK/sluice" &&
			(git ls-files -co --exclude-standard -z | tar --null -T - -c) |
			tar -x -C "$WORK/sluice"
	else
		mkdir "$WORK/sluice" && tar -c --exclude=./build . | tar -x -C "$WORK/sluice" &&
			git -C "$WORK/sluice" init -q && git -C "$WORK/sluice" add -A &&
			git -C "$WORK/sluice" -c user.name=test -c user.email=test@localhost \
				commit -qm "the tree under test"
	fi
}

build_deb() {
	(cd "$WORK/sluice" && dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1
	CHECK_DETAIL=$(tail -n 3 "$WORK/build.log" | tr '\n' ' ')
	ls "$WORK"/sluice_*_*.deb
}

# git status of the clone; with --ignored, what .gitignore hides too.
status_of_clone() {
	git -C "$WORK/sluice" status --porcelain "$@"
}

no_lintian_errors() {
	lintian "$WORK"/sluice_*.changes >"$WORK/lintian.log" 2>&1
	CHECK_DETAIL=$(grep '^E:' "$WORK/lintian.log" | head -3 | tr '\n' ' ')
	! grep -q '^E:' "$WORK/lintian.log"
}

package_has() {
	local f
	for f in /usr/sbin/sluice /usr/share/man/man8/sluice.8.gz /usr/share/man/man5/sluice.conf.5.gz \
		/usr/share/bash-completion/completions/sluice /usr/share/zsh/vendor-completions/_sluice \
		/usr/share/fish/vendor_completions.d/sluice.fish /lib/systemd/system/sluice@.service \
		/lib/systemd/system/sluice-exporter.service /lib/systemd/system/sluice-agent@.service \
		/etc/sluice/example.conf /usr/share/sluice/fail2ban/sluice.conf \
		/usr/share/sluice/grafana/sluice-dashboard.json /usr/share/sluice/prometheus/sluice-alerts.yml; do
		dpkg -S "$f" >/dev/null 2>&1 || { CHECK_DETAIL="$f not in the package"; return 1; }
	done
}

# The demo's closing figures: every source got something, none more than allowed.
demo_holds() {
	SLUICE=/usr/sbin/sluice tools/demo.sh >"$WORK/demo.log" 2>&1 || return 1
	CHECK_DETAIL=$(tail -n 6 "$WORK/demo.log" | tr '\n' ' ')
	awk '/^500 sources: min/ { gsub(",", ""); found = 1; ok = $4 > 0 && $6 <= $NF }
	     END { exit !(found && ok) }' "$WORK/demo.log"
}

prog_id() {
	/usr/sbin/sluice status "$LAB_HOST" --json | jq -r '.[0].prog_id'
}

if dpkg-query -W -f='${Status}' sluice 2>/dev/null | grep -q 'ok installed'; then
	echo "FAIL a sluice package is installed already: not touching it"
	lab_finish
	exit 1
fi
lab_up || {
	echo "FAIL cannot create the veth pair and namespace"
	lab_finish
	exit 1
}
trap cleanup EXIT

check "the tree clones" clone_tree
before=$(status_of_clone --ignored)
check "dpkg-buildpackage -us -uc -b builds sluice_*.deb" build_deb
check "the build leaves git status as it was" test "$(status_of_clone)" = "$(grep -v '^!!' <<<"$before")"
check "lintian: no errors" no_lintian_errors
grep -E '^[WE]:' "$WORK/lintian.log" | sed 's/^/     lintian /'
(cd "$WORK/sluice" && debian/rules clean) >/dev/null 2>&1
check "debian/rules clean removes all the build made" test "$(status_of_clone --ignored)" = "$before"

deb=$(ls "$WORK"/sluice_*_*.deb | grep -v dbgsym | head -n 1)
INSTALLED=1
check "apt-get install ./sluice_*.deb" bash -c 'cd "$0" && apt-get install -y -q "./${1##*/}" 2>&1' \
	"$WORK" "$deb"
check "the package holds the command, man pages, completion, units, example, fail2ban action, dashboard, alert rules" package_has
check "the package's alert rules pass promtool check rules" \
	promtool check rules /usr/share/sluice/prometheus/sluice-alerts.yml
check "the package's Grafana dashboard is the one in contrib/" \
	cmp -s contrib/grafana/sluice-dashboard.json /usr/share/sluice/grafana/sluice-dashboard.json
check "the package's fail2ban action runs /usr/sbin/sluice" \
	grep -qx "sluice = /usr/sbin/sluice" /usr/share/sluice/fail2ban/sluice.conf
check "sluice --version from the package" bash -c 'sluice --version | grep -q "^sluice 0.1.0 "'
check "man sluice finds the installed page" man -w sluice
check "the demo runs with the installed sluice, each source held to its rate" demo_holds

/usr/sbin/sluice attach "$LAB_HOST" --rate 100/s --max-sources 1000 >/dev/null
old=$(prog_id)
check "a reinstall upgrades the attached interface in place" bash -c \
	'apt-get install -y -q --reinstall "$0" 2>&1 | grep -q "upgraded $1: program $2 replaced"' \
	"$deb" "$LAB_HOST" "$old"
check "the interface runs a new program after the reinstall" test "$(prog_id)" != "$old"

check "apt-get purge sluice" bash -c 'apt-get purge -y -q sluice 2>&1' 
INSTALLED=0
check "purge detached the interface" test ! -e "/sys/fs/bpf/sluice/$LAB_HOST"
check "no sluice package left" bash -c '! dpkg-query -W -f="\${Status}" sluice 2>/dev/null | grep -q installed'
check "no sluice files left" bash -c '! ls /usr/sbin/sluice /lib/systemd/system/sluice@.service \
	/lib/systemd/system/sluice-exporter.service /etc/sluice /usr/share/man/man8/sluice.8.gz \
	/usr/share/sluice 2>/dev/null'

lab_finish
