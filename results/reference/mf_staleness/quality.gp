# Plot "quality" of experiment "mf_staleness", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of epoch_quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (quality).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "quality.svg"
set linetype 1 linecolor rgb "#0072B2" linewidth 2 pointsize 1.2
set linetype 2 linecolor rgb "#D55E00" linewidth 2 pointsize 1.2
set linetype 3 linecolor rgb "#009E73" linewidth 2 pointsize 1.2
set linetype 4 linecolor rgb "#CC79A7" linewidth 2 pointsize 1.2
set linetype 5 linecolor rgb "#E69F00" linewidth 2 pointsize 1.2
set linetype 6 linecolor rgb "#56B4E9" linewidth 2 pointsize 1.2
set linetype 7 linecolor rgb "#000000" linewidth 2 pointsize 1.2
set linetype 8 linecolor rgb "#F0E442" linewidth 2 pointsize 1.2
set linetype cycle 8
set title "Held-out RMSE against training time, by replica syncs per second"
set xlabel "training time (ms)"
set ylabel "quality"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\npolicy.syncs_per_sec"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.013402561648974133 0.99685626160434482 NaN 1
0.026733431795849052 0.99683237283379877 NaN 1
0.0400585176605694 0.99667583848748531 NaN 1
0.053383422784050644 0.99653244532962548 NaN 1
0.066696117463671545 0.99752590914562467 NaN 1
EOD
$s1 << EOD
0.013402561648974133 0.99685626160434482 NaN 1
0.026733431795849052 0.99683237283379877 NaN 1
0.0400585176605694 0.99667583848748531 NaN 1
0.053383422784050644 0.99653244532962548 NaN 1
0.066696117463671545 0.99752590914562467 NaN 1
EOD
$s2 << EOD
0.013402561648974133 0.99685626160434482 NaN 1
0.027110374383416312 0.999262421378147 NaN 1
0.040833948252433611 1.1950675973611433 NaN 1
0.054186098617024121 1.0009704460910362 NaN 1
EOD
$s3 << EOD
0.014666663965082 1.0054731629512847 NaN 1
0.0296791452037579 1.2297712130378786 NaN 1
EOD
$s4 << EOD
0.018283790048336048 0.99586751593150835 NaN 1
0.036399622013154415 0.99020227841139175 NaN 1
0.054533461789700227 0.97082424651051524 NaN 1
0.072623758341364752 0.93772384444267831 NaN 1
0.0907354300691502 0.904357383602786 NaN 1
EOD
$s5 << EOD
0.0184051243264126 0.995834685003605 NaN 1
0.036829357986047639 0.98999953861432022 NaN 1
0.055259200710115239 0.970207154037254 NaN 1
0.073680913269474152 0.93676719948490261 NaN 1
0.092076382839758358 0.90387417214072818 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "0", \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "10", \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "50", \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "250", \
     $s4 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 5 title "1250", \
     $s5 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 6 title "6250"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
