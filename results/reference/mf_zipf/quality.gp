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
0.040378969818879687 0.99286103336706566 NaN 1
0.081365162850026262 0.93369743118345561 NaN 1
0.12220346400766405 0.86694485081115336 NaN 1
0.16320713381052421 0.819251883646235 NaN 1
0.20398989018004568 0.7854825563810105 NaN 1
0.243821766061393 0.76321746884569241 NaN 1
0.28297567011621161 0.74738142682420228 NaN 1
0.322103951085402 0.7360163797627568 NaN 1
EOD
$s1 << EOD
0.13674272633253817 0.99273477256356657 NaN 1
0.26947773297608191 0.9332493971441107 NaN 1
0.40450529886741754 0.86790603233154739 NaN 1
0.541739962115923 0.819310894212232 NaN 1
0.672345354558581 0.78671229384536923 NaN 1
0.73190443944965144 0.762815975535189 NaN 1
0.734167914649648 0.74711560099732 NaN 1
0.73534968424964675 0.73548028610545724 NaN 1
EOD
$s2 << EOD
0.04610480167428592 0.993274819623766 NaN 1
0.0922113156183828 0.935558833408408 NaN 1
0.13865828827660748 1.0060798095945234 NaN 1
EOD
$s3 << EOD
0.0939204016734991 0.99299414085251281 NaN 1
0.18733185489535889 0.93376272364383983 NaN 1
0.2806847363822908 0.86860079011708524 NaN 1
0.37657024352930091 0.82386587781236076 NaN 1
0.46417577287163519 0.793780750152902 NaN 1
0.51303562567163374 0.771308971394496 NaN 1
0.51593864401264 0.756006153012594 NaN 1
0.517121646412639 0.742672746637108 NaN 1
EOD
$s4 << EOD
0.074067084788956947 0.992734234719307 NaN 1
0.14566963759350188 0.93853636162468057 NaN 1
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
