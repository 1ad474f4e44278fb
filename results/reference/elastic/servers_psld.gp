# Plot "servers_psld" of experiment "elastic", written by pslab from runs.jsonl.
# Redraw with `gnuplot servers_psld.gp` in this directory (it writes servers_psld.svg, then servers_psld.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of servers over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (keys served per second).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "servers_psld.svg"
set linetype 1 linecolor rgb "#0072B2" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 2 linecolor rgb "#D55E00" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 3 linecolor rgb "#009E73" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 4 linecolor rgb "#CC79A7" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 5 linecolor rgb "#E69F00" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 6 linecolor rgb "#56B4E9" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 7 linecolor rgb "#000000" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 8 linecolor rgb "#F0E442" linewidth 2 dashtype 1 pointtype 7 pointsize 1.2
set linetype 9 linecolor rgb "#0072B2" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 10 linecolor rgb "#D55E00" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 11 linecolor rgb "#009E73" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 12 linecolor rgb "#CC79A7" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 13 linecolor rgb "#E69F00" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 14 linecolor rgb "#56B4E9" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 15 linecolor rgb "#000000" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 16 linecolor rgb "#F0E442" linewidth 2 dashtype 2 pointtype 5 pointsize 1.2
set linetype 17 linecolor rgb "#0072B2" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 18 linecolor rgb "#D55E00" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 19 linecolor rgb "#009E73" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 20 linecolor rgb "#CC79A7" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 21 linecolor rgb "#E69F00" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 22 linecolor rgb "#56B4E9" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 23 linecolor rgb "#000000" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 24 linecolor rgb "#F0E442" linewidth 2 dashtype 4 pointtype 9 pointsize 1.2
set linetype 25 linecolor rgb "#0072B2" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 26 linecolor rgb "#D55E00" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 27 linecolor rgb "#009E73" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 28 linecolor rgb "#CC79A7" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 29 linecolor rgb "#E69F00" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 30 linecolor rgb "#56B4E9" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 31 linecolor rgb "#000000" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype 32 linecolor rgb "#F0E442" linewidth 2 dashtype 5 pointtype 13 pointsize 1.2
set linetype cycle 32
set title "Keys served per second by each server, psld; 8 servers serve in [0.3 s, 0.7 s)"
set xlabel "time (s)"
set ylabel "keys served per second"
yscale = 1
xscale = 1
set grid
set key below horizontal Left reverse title "\n"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.016 112000 NaN 1
0.048 96000 NaN 1
0.08 128000 NaN 1
0.112 96000 NaN 1
0.14400000000000002 108000 NaN 1
0.176 116000 NaN 1
0.20800000000000002 96000 NaN 1
0.24 128000 NaN 1
0.272 96000 NaN 1
0.304 88000 NaN 1
0.336 80000 NaN 1
0.368 80000 NaN 1
0.4 80000 NaN 1
0.432 80000 NaN 1
0.464 70000 NaN 1
0.496 74000 NaN 1
0.528 80000 NaN 1
0.56 80000 NaN 1
0.592 80000 NaN 1
0.624 80000 NaN 1
0.656 69000 NaN 1
0.68800000000000006 75000 NaN 1
0.72 112000 NaN 1
0.752 112000 NaN 1
0.784 101000 NaN 1
0.81600000000000006 123000 NaN 1
0.848 96000 NaN 1
0.88 128000 NaN 1
0.912 96000 NaN 1
0.94400000000000006 104000 NaN 1
0.976 120000 NaN 1
1.008 96000 NaN 1
1.04 48000 NaN 1
EOD
$s1 << EOD
0.016 129000 NaN 1
0.048 102000 NaN 1
0.08 136000 NaN 1
0.112 102000 NaN 1
0.14400000000000002 113687.5 NaN 1
0.176 124312.5 NaN 1
0.20800000000000002 102000 NaN 1
0.24 136000 NaN 1
0.272 102000 NaN 1
0.304 93500 NaN 1
0.336 85000 NaN 1
0.368 85000 NaN 1
0.4 85000 NaN 1
0.432 85000 NaN 1
0.464 74375 NaN 1
0.496 78625 NaN 1
0.528 85000 NaN 1
0.56 85000 NaN 1
0.592 85000 NaN 1
0.624 85000 NaN 1
0.656 73312.5 NaN 1
0.68800000000000006 79687.5 NaN 1
0.72 127000 NaN 1
0.752 119000 NaN 1
0.784 106250 NaN 1
0.81600000000000006 131750 NaN 1
0.848 102000 NaN 1
0.88 136000 NaN 1
0.912 102000 NaN 1
0.94400000000000006 110500 NaN 1
0.976 127500 NaN 1
1.008 102000 NaN 1
1.04 51000 NaN 1
EOD
$s2 << EOD
0.016 109000 NaN 1
0.048 102000 NaN 1
0.08 136000 NaN 1
0.112 102000 NaN 1
0.14400000000000002 113687.5 NaN 1
0.176 124312.5 NaN 1
0.20800000000000002 102000 NaN 1
0.24 136000 NaN 1
0.272 102000 NaN 1
0.304 96000 NaN 1
0.336 90000 NaN 1
0.368 86500 NaN 1
0.4 85000 NaN 1
0.432 85000 NaN 1
0.464 74375 NaN 1
0.496 78625 NaN 1
0.528 85000 NaN 1
0.56 85000 NaN 1
0.592 85000 NaN 1
0.624 85000 NaN 1
0.656 73312.5 NaN 1
0.68800000000000006 79687.5 NaN 1
0.72 111000 NaN 1
0.752 119000 NaN 1
0.784 106250 NaN 1
0.81600000000000006 131750 NaN 1
0.848 102000 NaN 1
0.88 136000 NaN 1
0.912 102000 NaN 1
0.94400000000000006 110500 NaN 1
0.976 127500 NaN 1
1.008 102000 NaN 1
1.04 51000 NaN 1
EOD
$s3 << EOD
0.016 115500 NaN 1
0.048 99000 NaN 1
0.08 132000 NaN 1
0.112 99000 NaN 1
0.14400000000000002 111375 NaN 1
0.176 119625 NaN 1
0.20800000000000002 99000 NaN 1
0.24 132000 NaN 1
0.272 99000 NaN 1
0.304 92000 NaN 1
0.336 85000 NaN 1
0.368 85000 NaN 1
0.4 85000 NaN 1
0.432 85000 NaN 1
0.464 73312.5 NaN 1
0.496 79687.5 NaN 1
0.528 85000 NaN 1
0.56 85000 NaN 1
0.592 85000 NaN 1
0.624 85000 NaN 1
0.656 72781.25 NaN 1
0.68800000000000006 80218.75 NaN 1
0.72 115500 NaN 1
0.752 115500 NaN 1
0.784 103125 NaN 1
0.81600000000000006 127875 NaN 1
0.848 99000 NaN 1
0.88 132000 NaN 1
0.912 99000 NaN 1
0.94400000000000006 107250 NaN 1
0.976 123750 NaN 1
1.008 99000 NaN 1
1.04 49500 NaN 1
EOD
$s4 << EOD
0.016 0 NaN 1
0.048 0 NaN 1
0.08 0 NaN 1
0.112 0 NaN 1
0.14400000000000002 0 NaN 1
0.176 0 NaN 1
0.20800000000000002 0 NaN 1
0.24 0 NaN 1
0.272 0 NaN 1
0.304 40000 NaN 1
0.336 80000 NaN 1
0.368 83500 NaN 1
0.4 85000 NaN 1
0.432 85000 NaN 1
0.464 73312.5 NaN 1
0.496 79687.5 NaN 1
0.528 85000 NaN 1
0.56 85000 NaN 1
0.592 85000 NaN 1
0.624 85000 NaN 1
0.656 72781.25 NaN 1
0.68800000000000006 80218.75 NaN 1
EOD
$s5 << EOD
0.016 0 NaN 1
0.048 0 NaN 1
0.08 0 NaN 1
0.112 0 NaN 1
0.14400000000000002 0 NaN 1
0.176 0 NaN 1
0.20800000000000002 0 NaN 1
0.24 0 NaN 1
0.272 0 NaN 1
0.304 40000 NaN 1
0.336 80000 NaN 1
0.368 80000 NaN 1
0.4 80000 NaN 1
0.432 80000 NaN 1
0.464 70000 NaN 1
0.496 74000 NaN 1
0.528 80000 NaN 1
0.56 80000 NaN 1
0.592 80000 NaN 1
0.624 80000 NaN 1
0.656 69000 NaN 1
0.68800000000000006 75000 NaN 1
EOD
$s6 << EOD
0.016 0 NaN 1
0.048 0 NaN 1
0.08 0 NaN 1
0.112 0 NaN 1
0.14400000000000002 0 NaN 1
0.176 0 NaN 1
0.20800000000000002 0 NaN 1
0.24 0 NaN 1
0.272 0 NaN 1
0.304 40000 NaN 1
0.336 80000 NaN 1
0.368 80000 NaN 1
0.4 80000 NaN 1
0.432 80000 NaN 1
0.464 70000 NaN 1
0.496 74000 NaN 1
0.528 80000 NaN 1
0.56 80000 NaN 1
0.592 80000 NaN 1
0.624 80000 NaN 1
0.656 69000 NaN 1
0.68800000000000006 75000 NaN 1
EOD
$s7 << EOD
0.016 0 NaN 1
0.048 0 NaN 1
0.08 0 NaN 1
0.112 0 NaN 1
0.14400000000000002 0 NaN 1
0.176 0 NaN 1
0.20800000000000002 0 NaN 1
0.24 0 NaN 1
0.272 0 NaN 1
0.304 42500 NaN 1
0.336 85000 NaN 1
0.368 85000 NaN 1
0.4 85000 NaN 1
0.432 85000 NaN 1
0.464 73843.75 NaN 1
0.496 79156.25 NaN 1
0.528 85000 NaN 1
0.56 85000 NaN 1
0.592 85000 NaN 1
0.624 85000 NaN 1
0.656 72781.25 NaN 1
0.68800000000000006 80218.75 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with lines linetype 1 linewidth 1.5 title "server 0", \
     $s1 using ($1*xscale):($2*yscale) with lines linetype 2 linewidth 1.5 title "server 1", \
     $s2 using ($1*xscale):($2*yscale) with lines linetype 3 linewidth 1.5 title "server 2", \
     $s3 using ($1*xscale):($2*yscale) with lines linetype 4 linewidth 1.5 title "server 3", \
     $s4 using ($1*xscale):($2*yscale) with lines linetype 5 linewidth 1.5 title "server 4", \
     $s5 using ($1*xscale):($2*yscale) with lines linetype 6 linewidth 1.5 title "server 5", \
     $s6 using ($1*xscale):($2*yscale) with lines linetype 7 linewidth 1.5 title "server 6", \
     $s7 using ($1*xscale):($2*yscale) with lines linetype 8 linewidth 1.5 title "server 7"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so servers_psld.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "servers_psld.png"
replot
unset output
