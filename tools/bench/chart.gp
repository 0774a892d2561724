# SPDX-License-Identifier: GPL-2.0
# The side-by-side chart: per scenario and contender, median bars with
# min-max whiskers, of packets/s handled (top) and packets per CPU-second
# the flood got (bottom). Called by summarize.sh with datafile and outfile
# set; each data row is a scenario label, then median, min and max per
# contender for the first panel, then the same for the second.
set terminal pngcairo size 1100,900 font "sans,10"
set output outfile
set style data histogram
set style histogram errorbars gap 1.5 lw 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set yrange [0:*]
set key top left
set xtics nomirror
set multiplot layout 2,1 title "sluice side by side: one-core flood over veth (median and min–max of the runs)"

set title "packets/s handled by the receiver"
set ylabel "Mpps"
plot datafile using 2:3:4:xtic(1) title "stack, raw DROP only" lc rgb "#9e9e9e", \
     '' using 5:6:7 title "iptables hashlimit" lc rgb "#e69f00", \
     '' using 8:9:10 title "nftables set + limit" lc rgb "#56b4e9", \
     '' using 11:12:13 title "bare XDP\\_DROP" lc rgb "#444444", \
     '' using 14:15:16 title "sluice" lc rgb "#009e73"

set title "packets per CPU-second the flood got (generator and receiver share one core)"
set ylabel "M packets per CPU-second"
unset key
plot datafile using 17:18:19:xtic(1) lc rgb "#9e9e9e", \
     '' using 20:21:22 lc rgb "#e69f00", \
     '' using 23:24:25 lc rgb "#56b4e9", \
     '' using 26:27:28 lc rgb "#444444", \
     '' using 29:30:31 lc rgb "#009e73"
unset multiplot
