# Plot "throughput" of experiment "scaling", written by pslab from runs.jsonl.
# Redraw with `gnuplot throughput.gp` in this directory (it writes throughput.svg, then throughput.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of steps_per_s over the runs at that point, in steps/s
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (throughput (thousand steps/s)).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "throughput.svg"
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
set title "Steps per second against nodes"
set xlabel "cluster.nodes"
set ylabel "throughput (thousand steps/s)"
yscale = 0.001
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy"
set logscale x
set logscale y
set xtics (1, 2, 4, 8)
set xrange [0.901:8.88]
$s0 << EOD
1 19271.373013078584 NaN 1
2 19620.447177873088 NaN 1
4 39033.366422290332 NaN 1
8 77090.1897117619 NaN 1
EOD
$s1 << EOD
1 19963.072308842769 NaN 1
2 19620.174455372315 NaN 1
4 39032.685928201812 NaN 1
8 77083.7188854181 NaN 1
EOD
$s2 << EOD
1 19963.072308842769 NaN 1
2 36008.5395259722 NaN 1
4 64508.043463166876 NaN 1
8 124835.47959453498 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "static fast_local_access=false", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "static", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "relocate lookahead=100"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so throughput.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "throughput.png"
replot
unset output
