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
2 0.15135809307835849 2.9021077970924583e-05 3
4 0.69154478149800891 0.0016173562461603837 3
EOD
$s1 << EOD
2 0.12990812888183176 0.00273692079906247 3
4 0.63763646366580051 0.017392227167364275 3
EOD
$s2 << EOD
2 0.089283951060231834 0.0014472604377708017 3
4 0.35647341474895256 0.0062678473401293969 3
EOD
$s3 << EOD
2 0.23675180109091803 0.010792822848490027 3
4 0.94422109350654038 0.017594298035735305 3
EOD
$s4 << EOD
2 0.2797139287012485 0.00020779865592245047 3
4 1.379640042564982 0.003768981369065201 3
EOD
$s5 << EOD
2 0.2656077347058407 0.007127216285626385 3
4 1.3392740712319207 0.024542483493369214 3
EOD
$s6 << EOD
2 0.18189293814889354 0.0015981667023046986 3
4 0.7289667294534703 0.0065276913128171294 3
EOD
$s7 << EOD
2 0.47022968233264056 0.0070105757980563517 3
4 1.8697703598411153 0.032418882510803153 3
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
