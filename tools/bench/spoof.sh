#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The spoofed-flood benchmark at the issue's full scale: 10,000,000
# distinct forged sources, one packet each, into a 1,000,000-source table,
# alongside 10,000 steady legitimate sources, on the veth lab. It runs
# tests/e2e/test_spoof.sh (which CI runs at a tenth of this) and prints its
# figures and checks. About two minutes; run as root, machine otherwise idle.
#   make bench-spoof
set -u
cd "$(dirname "$0")/../.."
# At 100k frames a second the run takes 105 s, and 15k new sources a
# second admit 1.6M: more than the table's 1.25M ways, fewer than the 2M
# sources the sink counts. The veth ring of this 2-vCPU VM still drops a
# few frames before sluice sees them (0.2% here; 4% at 250k/s); the test
# reports them and then judges legitimate delivery by what reached sluice.
SPOOF_FORGED=10000000 SPOOF_TABLE=1000000 SPOOF_LEGIT=10000 SPOOF_NEW=15000 SPOOF_PPS=100000 \
	exec bash tests/e2e/test_spoof.sh
