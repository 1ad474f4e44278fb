# Plot "quality" of experiment "kge_wordnet", written by pslab from runs.jsonl.
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
set title "Filtered MRR against training time (4 nodes x 2 workers)"
set xlabel "training time (s)"
set ylabel "quality"
yscale = 1
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.48744750896130484 0.034436909854527527 NaN 1
0.97238861638620777 0.31794696824830915 NaN 1
EOD
$s1 << EOD
0.64833127091559 0.025751307904902643 NaN 1
1.2962973929010992 0.27496132370138 NaN 1
EOD
$s2 << EOD
0.49480820601158726 0.046859445961278889 NaN 1
0.991145149273025 0.28748363021734524 NaN 1
EOD
$s3 << EOD
0.19807304922941457 0.019614214818942911 NaN 1
0.39021773205627647 0.20298037231274252 NaN 1
EOD
$s4 << EOD
0.24679140934124777 0.10845410097211942 NaN 1
0.49852042733987073 0.12592895046359032 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "relocate lookahead=10", \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "replicate hot_keys=900 syncs_per_sec=2000", \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "nups hot_keys=900 lookahead=10 syncs_per_sec=2000 sampling.scheme=local", \
     $s4 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 5 title "nups hot_keys=900 lookahead=10 syncs_per_sec=2000 sampling.scheme=pool"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,554 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
