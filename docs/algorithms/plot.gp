# SPDX-License-Identifier: GPL-2.0
# docs/algorithms.png, from sluice-replay --plot (make algorithms-plot):
# top, packets admitted per 5 ms around a window edge (idle, then 20 times
# the limit from 0.1 s before the edge to 0.1 s after); bottom, a warm-up's
# gaps between admitted packets from cold against Guava's curve.
set terminal pngcairo size 1000,800 font "sans,10"
set output outfile
set multiplot layout 2,1 title "sluice algorithms at 100/s (replayed through the datapath under the test clock)"
set grid
set key top right
set key autotitle columnheader
set title "burst across a window edge at t = 11 s: admitted per 5 ms"
set xlabel "time (s)"
set ylabel "packets"
set yrange [0:*]
plot datadir."/edge.dat" using 1:2 with steps lw 2 title columnheader(2), \
     "" using 1:3 with steps lw 2 title columnheader(3), \
     "" using 1:4 with steps lw 2 title columnheader(4), \
     "" using 1:5 with steps lw 2 title columnheader(5)
set title "gcra --warmup 5s from cold under a flood: gap before each admitted packet"
set xlabel "admitted packet"
set ylabel "gap (ms)"
set yrange [0:35]
plot datadir."/warmup.dat" using 1:2 with points pt 7 ps 0.4 title "datapath", \
     "" using 1:3 with lines lw 2 title "Guava SmoothWarmingUp (cold factor 3)"
unset multiplot
