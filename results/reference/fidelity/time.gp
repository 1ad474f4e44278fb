# Plot "time" of experiment "fidelity", written by pslab from runs.jsonl.
# Redraw with `gnuplot time.gp` in this directory (it writes time.svg, then time.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of time_s over the runs at that point, in s
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (time (s)).
set encoding utf8
set terminal svg size 800,608 dynamic noenhanced font "sans,12" background rgb "white"
set output "time.svg"
set linetype 1 linecolor rgb "#0072B2" linewidth 2 pointsize 1.2
set linetype 2 linecolor rgb "#D55E00" linewidth 2 pointsize 1.2
set linetype 3 linecolor rgb "#009E73" linewidth 2 pointsize 1.2
set linetype 4 linecolor rgb "#CC79A7" linewidth 2 pointsize 1.2
set linetype 5 linecolor rgb "#E69F00" linewidth 2 pointsize 1.2
set linetype 6 linecolor rgb "#56B4E9" linewidth 2 pointsize 1.2
set linetype 7 linecolor rgb "#000000" linewidth 2 pointsize 1.2
set linetype 8 linecolor rgb "#F0E442" linewidth 2 pointsize 1.2
set linetype cycle 8
set title "Simulated run time on the calibrated 2-core machine"
set xlabel "cluster.nodes"
set ylabel "time (s)"
yscale = 1
xscale = 1
set grid
set key below horizontal Left reverse title "\ncluster.workers_per_node, policy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
2 0.1513320084167401 2.9033827423386637e-05 3
4 0.69144648886538218 0.001617079446631662 3
EOD
$s1 << EOD
2 0.12989197147511675 0.0027362098646826739 3
4 0.636597204901253 0.010469786726343374 3
EOD
$s2 << EOD
2 0.0892743623144948 0.0014468192421966659 3
4 0.35631584074692213 0.0064294076113170636 3
EOD
$s3 << EOD
2 0.23695722132954761 0.010719187332372856 3
4 0.94524125391329838 0.017982653626033358 3
EOD
$s4 << EOD
2 0.27967919743861686 0.00020775878948266053 3
4 1.3794431096608166 0.0038542313433045624 3
EOD
$s5 << EOD
2 0.26428638632089479 0.009134009691613338 3
4 1.333280820232867 0.030810131139323033 3
EOD
$s6 << EOD
2 0.18187306528844496 0.0015977845279127084 3
4 0.72804522466573274 0.010375131585753782 3
EOD
$s7 << EOD
2 0.47103463516895427 0.0033489939578519559 3
4 1.8706126427964334 0.030458683699637161 3
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "cluster.workers_per_node: 1; policy: static", \
     $s0 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 1 notitle, \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "cluster.workers_per_node: 1; policy: relocate lookahead=5", \
     $s1 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 2 notitle, \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "cluster.workers_per_node: 1; policy: nups hot_keys=200 lookahead=5", \
     $s2 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 3 notitle, \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "cluster.workers_per_node: 1; policy: adaptive lookahead=5", \
     $s3 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 4 notitle, \
     $s4 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 5 title "cluster.workers_per_node: 2; policy: static", \
     $s4 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 5 notitle, \
     $s5 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 6 title "cluster.workers_per_node: 2; policy: relocate lookahead=5", \
     $s5 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 6 notitle, \
     $s6 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 7 title "cluster.workers_per_node: 2; policy: nups hot_keys=200 lookahead=5", \
     $s6 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 7 notitle, \
     $s7 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 8 title "cluster.workers_per_node: 2; policy: adaptive lookahead=5", \
     $s7 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 8 notitle

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so time.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,608 noenhanced font "sans,12" background rgb "white"
set output "time.png"
replot
unset output
