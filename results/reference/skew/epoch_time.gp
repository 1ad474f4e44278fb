# Plot "epoch_time" of experiment "skew", written by pslab from runs.jsonl.
# Redraw with `gnuplot epoch_time.gp` in this directory (it writes epoch_time.svg, then epoch_time.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of time_s over the runs at that point, in s
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (time (ms)).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "epoch_time.svg"
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
set title "Time per epoch against skew (8 nodes x 4 workers)"
set xlabel "workload.skew"
set ylabel "time (ms)"
yscale = 1000
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy.type"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0 0.1085281210180485 NaN 1
0.5 0.10836928139589004 NaN 1
1 0.10826556876575923 NaN 1
1.5 0.10659409348528096 NaN 1
EOD
$s1 << EOD
0 0.0265683856700274 NaN 1
0.5 0.027897214803603493 NaN 1
1 0.04635088302143487 NaN 1
1.5 0.054854970110123157 NaN 1
EOD
$s2 << EOD
0 0.10957881772311004 NaN 1
0.5 0.10940672357986764 NaN 1
1 0.10739730351596623 NaN 1
1.5 0.0830136109333336 NaN 1
EOD
$s3 << EOD
0 0.0286812534349761 NaN 1
0.5 0.026130891283186426 NaN 1
1 0.021413948890859777 NaN 1
1.5 0.011236302305185179 NaN 1
EOD
$s4 << EOD
0 0.049201562390504244 NaN 1
0.5 0.04646580316031413 NaN 1
1 0.037404954194351116 NaN 1
1.5 0.02309823518086054 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "relocate", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "replicate", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "nups", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "adaptive"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so epoch_time.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "epoch_time.png"
replot
unset output
