#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: a throwaway namespace and veth pair, sluice on the host side, a
# flood from 500 sources, the counters, and each source held to its rate.
# SLUICE=/usr/sbin/sluice tools/demo.sh runs it with an installed sluice
# (tests/e2e/test_deb.sh does); the flood and sink tools come from build/.
set -u
cd "$(dirname "$0")/.."
. tests/e2e/lab.sh

SOURCES=500
RATE=20
SECONDS_=5

if [ "$(id -u)" != 0 ]; then
	echo "make demo needs root: sudo make demo" >&2
	exit 1
fi
lab_up || { echo "demo: cannot create the veth pair and namespace" >&2; exit 1; }

echo "## A veth pair: $LAB_HOST (host, guarded by sluice) <-> $LAB_PEER (in namespace $LAB_NS)"
echo "\$ sluice attach $LAB_HOST --rate $RATE/s"
"$SLUICE" attach "$LAB_HOST" --rate "$RATE/s" || exit 1
echo
echo "## Flooding from $SOURCES sources, 200 packets/s each, for $SECONDS_ s"
sink_start "$LAB_TMP/sink" || { echo "demo: sink did not start" >&2; exit 1; }
read -r sent secs < <(flood "$SOURCES" "$SECONDS_" $((SOURCES * 200)))
sleep 0.5
sink_stop
echo "sent $sent packets in $secs s"
echo
echo "\$ sluice stats $LAB_HOST"
"$SLUICE" stats "$LAB_HOST"
echo
echo "## What crossed, per source (allowed: burst $RATE + $RATE/s x $secs s)"
awk -v b="$RATE" -v r="$RATE" -v s="$secs" '
	/^[0-9]+\./ { n++; sum += $2; if (!min || $2 < min) min = $2; if ($2 > max) max = $2 }
	END { printf "%d sources: min %d, max %d, mean %.1f packets each; allowed at most %d\n",
		     n, min, max, sum / n, b + int(r * s) }' "$LAB_TMP/sink"
echo
echo "\$ sluice detach $LAB_HOST"
"$SLUICE" detach "$LAB_HOST"
