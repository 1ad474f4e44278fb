# Plot "local_ratio" of experiment "skew", written by pslab from runs.jsonl.
# Redraw with `gnuplot local_ratio.gp` in this directory (it writes local_ratio.svg, then local_ratio.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of local_ratio over the runs at that point, a share from 0 to 1
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (local accesses (%)).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "local_ratio.svg"
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
set title "Share of accesses served locally against skew"
set xlabel "workload.skew"
set ylabel "local accesses (%)"
yscale = 100
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy.type"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0 0.12392069575656023 NaN 1
0.5 0.12461678991954152 NaN 1
1 0.128131206780877 NaN 1
1.5 0.13296526575639936 NaN 1
EOD
$s1 << EOD
0 0.94062498046154519 NaN 1
0.5 0.94155811654591637 NaN 1
1 0.945383649636976 NaN 1
1.5 0.91615024532147871 NaN 1
EOD
$s2 << EOD
0 0.13284273575881106 NaN 1
0.5 0.17961760326338577 NaN 1
1 0.544735321274603 NaN 1
1.5 0.89456810103762274 NaN 1
EOD
$s3 << EOD
0 0.9420223707492138 NaN 1
0.5 0.94401378930640545 NaN 1
1 0.9551019323639407 NaN 1
1.5 0.97554467514109822 NaN 1
EOD
$s4 << EOD
0 0.98036776061172559 NaN 1
0.5 0.9812993480736264 NaN 1
1 0.98481144671551268 NaN 1
1.5 0.98372376494207547 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "relocate", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "replicate", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "nups", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "adaptive"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so local_ratio.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "local_ratio.png"
replot
unset output
