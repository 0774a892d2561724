#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The README flow on a clean Debian 12: builds a minimal root with mmdebstrap
# from this machine's apt configuration (minbase plus make, git and
# ca-certificates: what a new user needs to clone), clones this checkout's
# HEAD into it, and runs `make demo` and `make test` there as root, under
# this kernel. What an earlier session installed by hand on this machine is
# not there, so a missing package shows up as a failed build or test.
#
#   tools/clean-root.sh [ROOT]      (default: a new directory under /var/tmp)
#
# Needs root and Debian's mmdebstrap. Removes the root unless KEEP_ROOT=1.
# CLEAN_ROOT_RUN: other commands to run in the clone instead (a quicker
# check of new packages, such as "make deps all && bash tests/e2e/test_x.sh").
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "clean-root.sh needs root" >&2
	exit 1
fi
command -v mmdebstrap >/dev/null || {
	echo "clean-root.sh needs mmdebstrap: apt-get install mmdebstrap" >&2
	exit 1
}
root=${1:-$(mktemp -d /var/tmp/sluice-clean.XXXXXX)}
src=$(pwd)

cleanup() {
	[ "${KEEP_ROOT:-0}" = 1 ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT

if [ ! -x "$root/usr/bin/make" ]; then
	rmdir "$root" 2>/dev/null || true
	mmdebstrap --variant=minbase --include=make,git,ca-certificates bookworm "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
rm -rf "$root/root/sluice"
git clone -q "$src" "$root/root/sluice"

# A private mount namespace: proc, sys, bpffs and dev for the root only.
unshare -m --propagation private bash -euo pipefail -c '
	root=$1
	# A mount point of its own, so ip netns can make / a slave in the chroot.
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount -t bpf bpf "$root/sys/fs/bpf"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/run"
	chroot "$root" /bin/bash -euo pipefail -c "cd /root/sluice && $2"
' clean-root "$root" "${CLEAN_ROOT_RUN:-echo == make demo && make demo && echo == make test && make test}"
