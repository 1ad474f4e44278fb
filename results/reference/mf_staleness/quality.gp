# Plot "quality" of experiment "mf_staleness", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of eval_quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
# $diverged: a row per place where runs diverged (their loss or quality became
# NaN or infinite, so y has no value): x, a y at the top of the axis, a label.
# $ends: a row per line: its last epoch's x and y, then where its runs ended: time_s
# (evaluation and the run's end included) and the final y, and the line type.
#   runs  how many runs gave a value
# The y axis shows y * yscale (RMSE (lower is better)).
set encoding utf8
set terminal svg size 800,640 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out RMSE against training time, by replica syncs per second"
set xlabel "training time (ms)"
set ylabel "RMSE (lower is better)"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\npolicy.syncs_per_sec"
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.88923437941883521:1.231708444249427]
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
0.087286092470110377 0.90490741667100649 NaN 1
EOD
$s5 << EOD
0.018398814304047013 0.995833356468969 NaN 1
0.036765489067145732 0.99001823374841558 NaN 1
0.055100459692377937 0.96997377793533757 NaN 1
0.073350324360610925 0.936575671002749 NaN 1
0.091621544622531331 0.90374599233538566 NaN 1
EOD
$diverged << EOD
0.044791221092731932 1.2171968313328765 "epoch 3" 4
0.068694350650016542 1.2171968313328765 "epoch 5" 3
EOD
$ends << EOD
0.066733123341563477 0.9975218378182 0.0685477874213081 1.124020336964878 1
0.066733123341563477 0.9975218378182 0.0685477874213081 1.124020336964878 2
0.087286092470110377 0.90490741667100649 0.088919281208681 0.90474113023004232 5
0.091621544622531331 0.90374599233538566 0.09305417552421566 0.90380976910790467 6
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "0", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "10", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "50", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "250", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "1250", \
     $s5 using ($1*xscale):($2*yscale) with linespoints linetype 6 title "6250", \
     $ends using ($1*xscale):($2*yscale):(($3-$1)*xscale):(($4-$2)*yscale):5 with vectors nohead dashtype 3 linecolor variable notitle, \
     $ends using ($3*xscale):($4*yscale):5 with points pointtype 6 linecolor variable title "the run's end (time_s, evaluation included)", \
     $diverged using ($1*xscale):($2*yscale):4 with points pointtype 2 pointsize 2 linewidth 2 linecolor variable title "diverged (loss or quality became NaN or infinite)", \
     $diverged every 2::0 using ($1*xscale):($2*yscale):3:4 with labels offset 0,1 textcolor variable notitle, \
     $diverged every 2::1 using ($1*xscale):($2*yscale):3:4 with labels offset 0,-1 textcolor variable notitle

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,640 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
