# Plot "quality" of experiment "mf_zipf", written by pslab from runs.jsonl.
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
set terminal svg size 800,554 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out RMSE against training time (8 nodes x 2 workers)"
set xlabel "training time (ms)"
set ylabel "quality"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\npolicy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.0403375797294244 0.99281790587062224 NaN 1
0.081326782012186766 0.9336157307534334 NaN 1
0.122329352247276 0.86764042031950162 NaN 1
0.16351555947111279 0.81956617964022449 NaN 1
0.20439372569836828 0.785790117839265 NaN 1
0.24426251254429837 0.763216606560217 NaN 1
0.28340402884774862 0.74708311061095933 NaN 1
0.32252025743638357 0.73544589103913927 NaN 1
EOD
$s1 << EOD
0.13628256259324209 0.99285621615227848 NaN 1
0.2678016946580164 0.933448741132498 NaN 1
0.402939513784713 0.86712791834204039 NaN 1
0.53694380499426531 0.81986190062866149 NaN 1
0.666586617373392 0.785684357043912 NaN 1
0.726146672425768 0.762960044932392 NaN 1
0.72848481425005429 0.7473759546794666 NaN 1
0.7296678166500532 0.735932017735778 NaN 1
EOD
$s2 << EOD
0.045877005517193717 0.993578884822282 NaN 1
0.0932879356766875 0.93491800904533962 NaN 1
0.13918754735478819 1.1448840822902155 NaN 1
EOD
$s3 << EOD
0.0950666318462572 0.99291829320280567 NaN 1
0.19015282014855017 0.93392246381666533 NaN 1
0.28314106208870532 0.867893344165127 NaN 1
0.37726823648328289 0.822733222532687 NaN 1
0.46523898302722083 0.79436112492131439 NaN 1
0.51365709951699934 0.77129665259626479 NaN 1
0.51655772671535827 0.75670838674783 NaN 1
0.51774072911535718 0.76784365390678944 NaN 1
EOD
$s4 << EOD
0.087551934085808 0.989995307364219 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "relocate lookahead=20", \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "replicate hot_keys=500 syncs_per_sec=2000", \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "nups hot_keys=500 lookahead=20 syncs_per_sec=2000", \
     $s4 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 5 title "adaptive syncs_per_sec=2000"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,554 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
