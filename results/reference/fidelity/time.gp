# Plot "time" of experiment "fidelity", written by pslab from runs.jsonl.
# Redraw with `gnuplot time.gp` in this directory (it writes time.svg, then time.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of time_s over the runs at that point, in s
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (time (ms)).
set encoding utf8
set terminal svg size 800,640 dynamic noenhanced font "sans,12" background rgb "white"
set output "time.svg"
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
set title "Simulated run time on the calibrated 2-core machine"
set xlabel "cluster.nodes"
set ylabel "time (ms)"
yscale = 1000
xscale = 1
set grid
set key below horizontal Left reverse title "\ncluster.workers_per_node, policy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
2 0.11976866951833053 0.0025127863997254653 3
4 0.30871725783831172 0.0021896612871697822 3
EOD
$s1 << EOD
2 0.0834869139589861 0.004527602108093139 3
4 0.28731886179242377 0.0063572508692957526 3
EOD
$s2 << EOD
2 0.070244092197116109 0.0035534262106568077 3
4 0.19700686108347562 0.0011507856965151534 3
EOD
$s3 << EOD
2 0.092910046888078551 0.0033268806203653085 3
4 0.28778385005844104 0.002662017063410941 3
EOD
$s4 << EOD
2 0.18533418798246895 0.00056623355591209823 3
4 0.50469420709628443 0.0065858488380003957 3
EOD
$s5 << EOD
2 0.15756622227057074 0.0022573316136835779 3
4 0.4468039906313247 0.0097091304436182167 3
EOD
$s6 << EOD
2 0.12989104815097596 0.0017114896289646259 3
4 0.34010286614226404 0.0024263673013238088 3
EOD
$s7 << EOD
2 0.17557862297237914 0.01154451433686224 3
4 0.44347548373698464 0.011409019286223815 3
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "cluster.workers_per_node: 1; policy: static", \
     $s0 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 1 dashtype 1 notitle, \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "cluster.workers_per_node: 1; policy: relocate lookahead=5", \
     $s1 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 2 dashtype 1 notitle, \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "cluster.workers_per_node: 1; policy: nups hot_keys=200 lookahead=5", \
     $s2 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 3 dashtype 1 notitle, \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "cluster.workers_per_node: 1; policy: adaptive lookahead=5", \
     $s3 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 4 dashtype 1 notitle, \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "cluster.workers_per_node: 2; policy: static", \
     $s4 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 5 dashtype 1 notitle, \
     $s5 using ($1*xscale):($2*yscale) with linespoints linetype 6 title "cluster.workers_per_node: 2; policy: relocate lookahead=5", \
     $s5 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 6 dashtype 1 notitle, \
     $s6 using ($1*xscale):($2*yscale) with linespoints linetype 7 title "cluster.workers_per_node: 2; policy: nups hot_keys=200 lookahead=5", \
     $s6 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 7 dashtype 1 notitle, \
     $s7 using ($1*xscale):($2*yscale) with linespoints linetype 8 title "cluster.workers_per_node: 2; policy: adaptive lookahead=5", \
     $s7 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars linetype 8 dashtype 1 notitle

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so time.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,640 noenhanced font "sans,12" background rgb "white"
set output "time.png"
replot
unset output
