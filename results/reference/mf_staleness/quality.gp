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
0.013398416269828297 0.996855500696864 NaN 1
0.026739120515478033 0.99683264503323055 NaN 1
0.040068416570118955 0.996674668931944 NaN 1
0.053402107076161165 0.996529676993237 NaN 1
0.066733123341563477 0.9975218378182 NaN 1
EOD
$s1 << EOD
0.013398416269828297 0.996855500696864 NaN 1
0.026739120515478033 0.99683264503323055 NaN 1
0.040068416570118955 0.996674668931944 NaN 1
0.053402107076161165 0.996529676993237 NaN 1
0.066733123341563477 0.9975218378182 NaN 1
EOD
$s2 << EOD
0.013398416269828297 0.996855500696864 NaN 1
0.0271124620761432 0.99926715179806 NaN 1
0.040881753105965687 1.1939782506663956 NaN 1
0.054302378091512712 1.0012939415719508 NaN 1
EOD
$s3 << EOD
0.014741474068196472 1.0046348974672126 NaN 1
0.0300873213547582 1.1564910392653804 NaN 1
EOD
$s4 << EOD
0.01764940879708345 0.995846730812476 NaN 1
0.035107770833805778 0.99020427879266459 NaN 1
0.0526312195293939 0.97135626481104853 NaN 1
0.070156497100514331 0.93809457301287735 NaN 1
0.087286092581408639 0.90490741667100649 NaN 1
EOD
$s5 << EOD
0.018398814304047013 0.995833356468969 NaN 1
0.0367708172054984 0.990033589344678 NaN 1
0.055129844307744341 0.97001339222486 NaN 1
0.0733066951850322 0.93657247019556955 NaN 1
0.091632531789438379 0.90380507050665981 NaN 1
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
