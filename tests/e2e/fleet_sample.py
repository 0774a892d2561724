#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
# The fleet test's sampler: every 100 ms for SECONDS, the passed packets of
# each interface summed, as "SECONDS_BOOTTIME TOTAL" lines. Reads only the
# per-CPU stats map (through bpftool), which is cheap: a `sluice stats`
# also walks the source table, and three of them every 100 ms starved the
# agents on a 2-CPU machine.
# Usage: fleet_sample.py SECONDS OUT IFACE...
import json
import subprocess
import sys
import time

SECONDS = float(sys.argv[1])
OUT = sys.argv[2]
IFACES = sys.argv[3:]


def passed(iface):
    out = subprocess.run(["bpftool", "-j", "map", "lookup", "pinned",
                          f"/sys/fs/bpf/sluice/{iface}/stats", "key", "0", "0", "0", "0"],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    for cpu in json.loads(out)["values"]:
        total += int.from_bytes(bytes(int(b, 16) for b in cpu["value"][:8]), "little")
    return total


def clock():
    # CLOCK_BOOTTIME: what /proc/uptime reads, so the test's windows share it
    return time.clock_gettime(time.CLOCK_BOOTTIME)


end = clock() + SECONDS
with open(OUT, "w") as f:
    while True:
        t0 = clock()
        v = sum(passed(i) for i in IFACES)
        t1 = clock()
        f.write("%.3f %d\n" % ((t0 + t1) / 2, v))
        f.flush()
        if t1 >= end:
            break
        time.sleep(max(0.0, 0.1 - (clock() - t0)))
