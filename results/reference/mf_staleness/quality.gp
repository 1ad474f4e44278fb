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
0.013419318420685554 0.99685586467031773 NaN 1
0.02677117255408621 0.996831268183729 NaN 1
0.040118975430807544 0.99667328762871343 NaN 1
0.0534623404993117 0.99652594734742062 NaN 1
0.066801575484689069 0.99751521711928326 NaN 1
EOD
$s1 << EOD
0.013419318420685554 0.99685586467031773 NaN 1
0.02677117255408621 0.996831268183729 NaN 1
0.040118975430807544 0.99667328762871343 NaN 1
0.0534623404993117 0.99652594734742062 NaN 1
0.066801575484689069 0.99751521711928326 NaN 1
EOD
$s2 << EOD
0.013419318420685554 0.99685586467031773 NaN 1
0.027284849835224164 0.99924093414373261 NaN 1
0.041295296725462671 1.188517376663 NaN 1
0.0548108253929983 0.99780813481596842 NaN 1
EOD
$s3 << EOD
0.014672876764911883 1.0051775798669238 NaN 1
0.02968370619272534 1.208804775517083 NaN 1
EOD
$s4 << EOD
0.018180077252319318 0.99562506325718958 NaN 1
0.036478920016042748 0.99004395594920036 NaN 1
0.054670135356537516 0.97092857845378977 NaN 1
0.072666764586825042 0.937958565841731 NaN 1
0.0908133489947841 0.90479369135639243 NaN 1
EOD
$s5 << EOD
0.01840627538999301 0.99583711671096431 NaN 1
0.036828388463049783 0.990004206888861 NaN 1
0.0552789014293681 0.97020774492044148 NaN 1
0.07372099511085016 0.9367731572533744 NaN 1
0.092055675326182931 0.90402577128574035 NaN 1
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
