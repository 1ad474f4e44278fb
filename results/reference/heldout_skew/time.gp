# Plot "time" of experiment "heldout_skew", written by pslab from runs.jsonl.
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
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out: Zipf 1.2, 50 floats, no compute"
set xlabel "cluster.nodes"
set ylabel "time (ms)"
yscale = 1000
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
2 0.049034047981307317 6.3741351595255756e-05 3
4 0.094415370489867145 0.00078514366162141963 3
EOD
$s1 << EOD
2 0.023631976651755409 0.0040888954659425158 3
4 0.085140425869988781 0.0040929992837099183 3
EOD
$s2 << EOD
2 0.0085570885971275462 0.00083399944461312549 3
4 0.020879255626731687 0.00090754198351491284 3
EOD
$s3 << EOD
2 0.0219611224123607 0.00069901539378452028 3
4 0.06024792879261593 0.0010009651709853942 3
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "static", \
     $s0 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 1 notitle, \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "relocate lookahead=5", \
     $s1 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 2 notitle, \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "nups hot_keys=200 lookahead=5", \
     $s2 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 3 notitle, \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "adaptive lookahead=5", \
     $s3 using ($1*xscale):($2*yscale):($3*yscale) with yerrorbars pointtype 7 linecolor 4 notitle

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so time.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "time.png"
replot
unset output
