# Plot "quality" of experiment "kge_wordnet", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of eval_quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
# $ends: a row per line: its last epoch's x and y, then where its runs ended: time_s
# (evaluation and the run's end included) and the final y, and the line type.
#   runs  how many runs gave a value
# The y axis shows y * yscale (filtered MRR (higher is better)).
set encoding utf8
set terminal svg size 810,600 dynamic noenhanced font "sans,12" background rgb "white"
set output "quality.svg"
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
set title "Filtered MRR against training time (4 nodes x 2 workers)"
set xlabel "training time (s)"
set ylabel "filtered MRR (higher is better)"
yscale = 1
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy"
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.0027756659376890489:0.043500391872441709]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.48744750896130484 0.0067941627690473825 NaN 1
0.99300962042118246 0.041649267966316565 NaN 1
EOD
$s1 << EOD
0.65292785694534 0.0061661945019130769 NaN 1
1.4704040456934686 0.0368885814797268 NaN 1
EOD
$s2 << EOD
0.4980585570655281 0.0074633702085775168 NaN 1
1.0111647580384964 0.041181831963771343 NaN 1
EOD
$s3 << EOD
0.28851894819803559 0.00462678984381417 NaN 1
0.5870380223485322 0.036596332200827912 NaN 1
EOD
$s4 << EOD
0.35244698196719865 0.016846416924974288 NaN 1
0.71114332863107066 0.020860156751004069 NaN 1
EOD
$ends << EOD
0.99300962042118246 0.041649267966316565 1.0930300519282465 0.041649267966316586 1
1.4704040456934686 0.0368885814797268 1.629635077272795 0.036888621894948861 2
1.0111647580384964 0.041181831963771343 1.1020126417279312 0.041132767189849942 3
0.5870380223485322 0.036596332200827912 0.658172787496521 0.037003615010112879 4
0.71114332863107066 0.020860156751004069 0.766257096635669 0.020849820287197625 5
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "relocate lookahead=10", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "replicate hot_keys=900 syncs_per_sec=2000", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "nups hot_keys=900 lookahead=10 syncs_per_sec=2000 sampling.scheme=local", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "nups hot_keys=900 lookahead=10 syncs_per_sec=2000 sampling.scheme=pool", \
     $ends using ($1*xscale):($2*yscale):(($3-$1)*xscale):(($4-$2)*yscale):5 with vectors nohead dashtype 3 linecolor variable notitle, \
     $ends using ($3*xscale):($4*yscale):5 with points pointtype 6 linecolor variable title "the run's end (time_s, evaluation included)"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 810,600 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
