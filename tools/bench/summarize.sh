#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# summarize.sh CSV OUTDIR: medians (with min-max) of every scenario and
# contender of a tools/bench/run.sh results file, the ratios the targets are
# about (each taken within one run, then the median over the runs), into
# OUTDIR/results.md, and the chart OUTDIR/pps.png. Rates are given twice:
# per wall-clock second, and per CPU-second the flood actually got.
set -eu
CSV=$1
OUT=$2
HERE=$(cd "$(dirname "$0")" && pwd)

# The awk program prints the markdown, and writes the chart's data to datafile.
summarize() {
	awk -F, -v datafile="$OUT/pps.dat" '
	function sort(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
	}
	# Median, min and max of the space-separated numbers in s.
	function stats(s,    a, n) {
		n = split(s, a, " ")
		if (!n) { MED = MIN = MAX = ""; return 0 }
		sort(a, n)
		MED = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		MIN = a[1]; MAX = a[n]
		return n
	}
	function fmt(scale, prec) {
		return sprintf("%." prec "f (%." prec "f–%." prec "f)", MED / scale, MIN / scale, MAX / scale)
	}
	# What a token bucket of BURST and RATE lets through when each of KEYS
	# keys sends an equal share of HANDLED packets, evenly spaced over
	# ELAPSED: burst plus rate times the span between its first and last.
	function expected(keys, rate, burst, unit, l3, handled, elapsed,    n, span, allow) {
		n = handled / keys
		if (n <= 1) return handled # a key sent at most once: all of it passes
		span = (n - 1) * elapsed / n
		allow = burst + rate * span
		if (unit == "bytes") allow /= l3
		return keys * (allow < n ? allow : n)
	}
	function add(arr, key, v) { arr[key] = arr[key] (arr[key] == "" ? "" : " ") v }
	BEGIN {
		# The chart has the first NCHART; the floors only in the tables.
		split("none hashlimit nft xdp_drop sluice floor_parse floor_clock floor_table floor_meter floor_filter floor_jiffies floor_pass floor_moments", C, " ")
		NC = 13; NCHART = 5
		name["none"] = "stack, raw DROP only"; name["hashlimit"] = "iptables hashlimit"
		name["nft"] = "nftables set + limit"; name["xdp_drop"] = "bare XDP_DROP"
		name["sluice"] = "sluice"
		name["floor_parse"] = "floor: parse"; name["floor_clock"] = "floor: parse + clock"
		name["floor_table"] = "floor: parse + hash + one table line"
		name["floor_meter"] = "floor: the same + clock"
		name["floor_filter"] = "floor: parse, hash, filter word, early clock"
		name["floor_jiffies"] = "floor: the line, the clock near each moment of 10/s"
		name["floor_pass"] = "floor: line + clock, passed"
		name["floor_moments"] = "floor: a moment per source, the clock near each of 10/s"
		label["a"] = "a: 1 source"; label["f"] = "f: 1 source, 1000/s"
		label["n"] = "n: 1 source banned"; label["b"] = "b: 10k sources"
		label["c"] = "c: 1M sources, 1/s"; label["d"] = "d: IPv6, 1M in 1k /64s"
		label["e"] = "e: byte rate (sluice skipped)"
		label["s"] = "s: 10M spoofed, defaults"
		# The targets, by scenario: those of issue 12 against the other limiters,
		# those of issue 35 against the floor of the work of each path.
		vs_hashlimit["a"] = vs_nft["a"] = 3; vs_hashlimit["b"] = vs_nft["b"] = 3
		vs_hashlimit["c"] = 5; vs_nft["c"] = 2.5
		floor_of["a"] = "floor_table"; vs_floor["a"] = 0.90
		floor_of["f"] = "floor_clock"; vs_floor["f"] = 0.95
		floor_of["b"] = "floor_filter"; vs_floor["b"] = 0.90
		floor_of["c"] = "floor_meter"; vs_floor["c"] = 0.80
		# c passes every packet (each on time): the floor that passes them too
		pass_floor_of["c"] = "floor_pass"
		floor_of["s"] = "floor_filter"; vs_floor["s"] = 0.85
		# A banned source: the work of a (its state in one line), no target.
		floor_of["n"] = "floor_table"
	}
	NR == 1 { next }
	{
		rep = $1; s = $2; c = $3; st = $4
		if (!(s in seen)) { seen[s] = 1; order[++NS] = s }
		ran[s, c] = 1
		reps[rep] = 1
		if (st != "ok") { status[s, c] = st; next }
		handled = $11; elapsed = $12; passed = $13
		pps = handled / elapsed
		add(P, s SUBSEP c, pps)
		pps_run[rep, s, c] = pps
		add(PC, s SUBSEP c, handled / $15)
		pcpu_run[rep, s, c] = handled / $15
		add(SOFT, s SUBSEP c, $14 / handled)
		if ($16 != "") add(XNS, s SUBSEP c, $16)
		add(PASS, s SUBSEP c, passed)
		# XDP_DROP and the floors pass nothing (floor_pass: every packet).
		if (c == "xdp_drop" || (c ~ /^floor_/ && c != "floor_pass")) next
		want = c == "none" || c == "floor_pass" ? handled : expected($5, $6, $7, $8, $9, handled, elapsed)
		if (s == "n" && c != "none") want = 0 # banned: nothing is to pass
		if (want > 0) add(PE, s SUBSEP c, passed / want)
	}
	# The ratio a/b of one rate, run by run: "median (min–max), verdict",
	# without a verdict when there is no target.
	function ratio1(run, s, a, b, target,    r, v, ok) {
		v = ""
		for (r in reps)
			if ((r, s, a) in run && (r, s, b) in run && run[r, s, b] > 0)
				v = v " " run[r, s, a] / run[r, s, b]
		if (!stats(v)) return "—"
		if (target == "") return fmt(1, 2)
		ok = MED >= target ? "met" : sprintf("missed by %.0f%%", (1 - MED / target) * 100)
		return fmt(1, 2) ", " ok
	}
	function ratio(s, a, b, target) {
		printf "| %s | %s ÷ %s | %s | %s | %s |\n", label[s], name[a], name[b], \
			target == "" ? "—" : "≥ " target, \
			ratio1(pps_run, s, a, b, target), ratio1(pcpu_run, s, a, b, target)
	}
	END {
		print "| scenario | contender | Mpps handled, median (min–max) | Mpps per CPU-second | packets passed; ÷ expected | softirq ns/packet | XDP program ns/packet |"
		print "|---|---|---|---|---|---|---|"
		for (i = 1; i <= NS; i++) {
			s = order[i]
			line = "\"" label[s] "\""; cline = ""
			for (j = 1; j <= NC; j++) {
				c = C[j]
				if (j > NCHART && !((s, c) in ran)) continue
				if (stats(P[s, c])) {
					mpps = fmt(1e6, 2); bars = " " MED / 1e6 " " MIN / 1e6 " " MAX / 1e6
					stats(PC[s, c])
					mpcpu = fmt(1e6, 2); cbars = " " MED / 1e6 " " MIN / 1e6 " " MAX / 1e6
				} else {
					mpps = status[s, c]; mpcpu = "—"
					bars = cbars = " NaN NaN NaN"
				}
				if (j <= NCHART) { line = line bars; cline = cline cbars }
				stats(PASS[s, c]); p = MED
				pe = "—"
				if (stats(PE[s, c]))
					pe = sprintf("%d; %s", p, fmt(1, 2))
				soft = stats(SOFT[s, c]) ? fmt(1, 0) : "—"
				xns = stats(XNS[s, c]) ? fmt(1, 1) : "—"
				printf "| %s | %s | %s | %s | %s | %s | %s |\n", label[s], name[c], mpps, \
					mpcpu, pe, soft, xns
			}
			print line cline > datafile
		}
		print ""
		print "| scenario | ratio, taken within each run | target | of Mpps handled: median (min–max) | of Mpps per CPU-second |"
		print "|---|---|---|---|---|"
		for (i = 1; i <= NS; i++) {
			s = order[i]
			# against the other limiters, with the targets of issue 12 where it set some
			ratio(s, "sluice", "hashlimit", vs_hashlimit[s])
			ratio(s, "sluice", "nft", vs_nft[s])
			ratio(s, "sluice", "xdp_drop", "")
			# issue 35: sluice against the floor of the work its path must do
			if (s in floor_of)
				ratio(s, "sluice", floor_of[s], vs_floor[s])
			if ((s in pass_floor_of) && (s, pass_floor_of[s]) in ran)
				ratio(s, "sluice", pass_floor_of[s], vs_floor[s])
			# what refusing exactly with the jiffies leaves of that floor
			if (s == "a" && (s, "floor_jiffies") in ran)
				ratio(s, "floor_jiffies", "floor_table", "")
			# what refusing many sources exactly leaves of the filter floor
			if (s == "b" && (s, "floor_moments") in ran)
				ratio(s, "floor_moments", "floor_filter", "")
			# The floors: what the machine allows, and sluice against it.
			for (j = NCHART + 1; j <= NC; j++) {
				if (!((s, C[j]) in ran)) continue
				ratio(s, C[j], "xdp_drop", "")
				# against the targets of the other limiters, where they ran
				if ((s, "hashlimit") in ran) ratio(s, C[j], "hashlimit", "")
				if ((s, "nft") in ran) ratio(s, C[j], "nft", "")
			}
			for (j = NCHART + 1; j <= NC; j++)
				if ((s, C[j]) in ran && (s, "sluice") in ran && C[j] != floor_of[s] && C[j] != pass_floor_of[s])
					ratio(s, "sluice", C[j], "")
		}
	}' "$CSV"
}

summarize >"$OUT/results.md"
# A run of only some contenders leaves whole columns empty, which gnuplot
# refuses to plot: the chart is for full runs.
gnuplot -e "datafile='$OUT/pps.dat'; outfile='$OUT/pps.png'" "$HERE/chart.gp" 2>"$OUT/pps.err" ||
	echo "summarize: no chart: $(grep . "$OUT/pps.err" | tail -n 1)" >&2
rm -f "$OUT/pps.dat" "$OUT/pps.err"
cat "$OUT/results.md"
