#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What this machine's kernel and init cannot show: the systemd units under a
# real systemd as PID 1, and `attach --multiprog` beside xdp-filter on a
# kernel that takes BPF extension programs. Boots Debian 12's own kernel
# (linux-image-amd64) in qemu, under software emulation, on a
# mmdebstrap root made from this machine's apt configuration. This checkout's
# build is installed in it (make install) and copied to /root/sluice; at boot a
# unit runs the datapath suite, tests/e2e/test_units.sh,
# tests/e2e/test_multiprog.sh and test_prove_handshake.sh (--prove through 6.1's TCP)
# there, writes their output to the second serial
# port, and powers the guest off.
#
#   tools/vm-check.sh [DIR]     (default: a new directory under /var/tmp)
#
# Needs root, mmdebstrap, qemu-system-x86 and e2fsprogs; builds first
# (make all). Removes DIR unless KEEP_VM=1. Exit 0 when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "vm-check.sh needs root" >&2
	exit 1
fi
for tool in mmdebstrap qemu-system-x86_64 mkfs.ext4; do
	command -v "$tool" >/dev/null || {
		echo "vm-check.sh needs $tool: apt-get install mmdebstrap qemu-system-x86 e2fsprogs" >&2
		exit 1
	}
done
dir=${1:-$(mktemp -d /var/tmp/sluice-vm.XXXXXX)}
root=$dir/root
cleanup() {
	[ "${KEEP_VM:-0}" = 1 ] || rm -rf --one-file-system "$dir"
}
trap cleanup EXIT

# What the guest runs: init, the kernel, the tests' tools, sluice's libraries.
PACKAGES=systemd-sysv,udev,kmod,linux-image-amd64,iproute2,procps,util-linux,jq,curl,
PACKAGES+=bpftool,xdp-tools,libbpf1,libelf1,zlib1g,libxdp1,libmicrohttpd12,libhiredis0.14,ethtool,nftables,
PACKAGES+=python3

make -s all
if [ ! -x "$root/usr/bin/systemctl" ]; then
	mkdir -p "$root"
	mmdebstrap --variant=minbase --include="$PACKAGES" bookworm "$root"
fi
make -s install DESTDIR="$root" PREFIX=/usr SYSTEMDUNITDIR=/lib/systemd/system >/dev/null
rm -rf "$root/root/sluice"
mkdir -p "$root/root/sluice"
cp -a build tests include "$root/root/sluice/"

echo sluice-vm >"$root/etc/hostname"
# VM_SUITES: other scripts of the checkout to run instead (a debugging aid).
suites=${VM_SUITES:-build/test-datapath tests/e2e/test_units.sh tests/e2e/test_multiprog.sh tests/e2e/test_prove_handshake.sh}
nsuites=$(wc -w <<<"$suites")
cat >"$root/etc/systemd/system/sluice-vm-check.service" <<EOF
[Unit]
Description=sluice checks that need a real systemd and kernel
After=multi-user.target
[Service]
Type=oneshot
WorkingDirectory=/root/sluice
Environment="SUITES=$suites"
ExecStart=/bin/bash -c 'for t in \${SUITES}; do echo "== \$\$t"; case \$\$t in *.sh) bash \$\$t ;; *) \$\$t ;; esac; done >/dev/ttyS1 2>&1'
ExecStartPost=/bin/systemctl --no-block poweroff
[Install]
WantedBy=multi-user.target
EOF
ln -sf ../sluice-vm-check.service "$root/etc/systemd/system/multi-user.target.wants/"

kernel=$(ls "$root"/boot/vmlinuz-* | tail -n 1)
initrd=$(ls "$root"/boot/initrd.img-* | tail -n 1)
rm -f "$dir/disk.img"
mkfs.ext4 -q -L sluice-vm -d "$root" "$dir/disk.img" 4G

# Software emulation by default: nested KVM hangs in early boot on the
# development machines (VM_ACCEL=kvm to try it where it works).
accel=${VM_ACCEL:-tcg} cpu=max
[ "$accel" = kvm ] && cpu=host,arch-capabilities=off,pmu=off
: >"$dir/results.log"
# VM_TIMEOUT: seconds before the guest is stopped (emulation on a busy host is slow).
timeout "${VM_TIMEOUT:-1200}" qemu-system-x86_64 -machine q35,accel="$accel" -cpu "$cpu" -smp 2 -m 2048 \
	-display none -no-reboot \
	-kernel "$kernel" -initrd "$initrd" \
	-append "root=/dev/vda rw console=ttyS0 quiet" \
	-drive file="$dir/disk.img",format=raw,if=virtio \
	-serial file:"$dir/console.log" -serial file:"$dir/results.log" || true

echo "== guest kernel: $(basename "$kernel"), accel $accel"
tr -d '\r' <"$dir/results.log"
# Each suite ends with "N passed, N failed"; all of them must say 0 failed.
# (The serial line ends lines with CR LF.)
tr -d '\r' <"$dir/results.log" >"$dir/results.txt"
summaries=$(grep -cE '^[0-9]+ passed, [0-9]+ failed$' "$dir/results.txt" || true)
failed=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$dir/results.txt" | grep -vc ' 0 failed$' || true)
[ "$summaries" = "$nsuites" ] && [ "$failed" = 0 ] || {
	echo "vm-check: $summaries of $nsuites suites finished, $failed with failures (console: $dir/console.log)" >&2
	KEEP_VM=1
	exit 1
}
