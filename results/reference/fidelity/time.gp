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
set ylabel "time (ms)"
yscale = 1000
xscale = 1
set grid
set key below horizontal Left reverse title "\ncluster.workers_per_node, policy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
2 0.09129239953770385 0.00021609860410638771 3
4 0.17524764760109968 0.00044181163519023425 3
EOD
$s1 << EOD
2 0.0694470511539097 0.0024459572704929339 3
4 0.19212617781886432 0.0043017895538120191 3
EOD
$s2 << EOD
2 0.059587433670836049 0.000640657310689922 3
4 0.14983879385925375 0.0010362384398904206 3
EOD
$s3 << EOD
2 0.075015043685640811 0.0004298197393888002 3
4 0.18809126674213206 0.00089421627089438177 3
EOD
$s4 << EOD
2 0.12926795004183883 0.00031981479160941959 3
4 0.29643859873264111 0.0032680733385489235 3
EOD
$s5 << EOD
2 0.114078748327878 0.00076197902060107 3
4 0.29988729584677837 0.0049487857270116642 3
EOD
$s6 << EOD
2 0.098443750591468523 0.0017524917478088983 3
4 0.2405319229172386 0.00089656869872587592 3
EOD
$s7 << EOD
2 0.1204682438751771 0.00083592888292877837 3
4 0.28374998517522193 0.0003321640285325913 3
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
