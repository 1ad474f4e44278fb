# Plot "quality" of experiment "mf_zipf", written by pslab from runs.jsonl.
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
set terminal svg size 800,620 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out RMSE against training time (8 nodes x 2 workers)"
set xlabel "training time (ms)"
set ylabel "RMSE (lower is better)"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\npolicy"
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.715922716456525:1.0279304740181263]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.041660263560089374 0.99278025024301342 NaN 1
0.0840674530047254 0.93340556053061075 NaN 1
0.12625307759016544 0.867282273760438 NaN 1
0.16716104784735658 0.819840241725222 NaN 1
0.20851550549450271 0.78609789169476241 NaN 1
0.248489453947115 0.763054799007646 NaN 1
0.28754936048044488 0.74804617763775882 NaN 1
0.32661792836044 0.73622140266998926 NaN 1
EOD
$s1 << EOD
0.13459797982894869 0.99241595593982224 NaN 1
0.26653914128941569 0.932658072290509 NaN 1
0.40026259639438722 0.86618820508031 NaN 1
0.53424381583853831 0.820496750035628 NaN 1
0.66306423929217928 0.7866534581714254 NaN 1
0.72286873870809742 0.76343569109620224 NaN 1
0.72525497077925571 0.74806477964237783 NaN 1
0.72643797317925474 0.736946078466559 NaN 1
EOD
$s2 << EOD
0.045260727308227063 0.993556738015577 NaN 1
0.09017468673881 0.93557090489259054 NaN 1
EOD
$s3 << EOD
0.091943098408462334 0.99302075226032782 NaN 1
0.18425008324464431 0.93469657616758028 NaN 1
0.27468155036919012 0.86854007712629155 NaN 1
0.36626952782447847 0.82521616826326527 NaN 1
EOD
$s4 << EOD
0.076101366938105444 0.991108907190995 NaN 1
EOD
$diverged << EOD
0.13503704760545948 1.0147098063248381 "epoch 3" 3
0.15618165931272757 1.0147098063248381 "epoch 2" 5
0.4499760586976877 1.0147098063248381 "epoch 5" 4
EOD
$ends << EOD
0.32661792836044 0.73622140266998926 0.33019779463643345 0.72914338414981328 1
0.72643797317925474 0.736946078466559 0.73189744169796622 0.729645268017567 2
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "relocate lookahead=20", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "replicate hot_keys=500 syncs_per_sec=2000", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "nups hot_keys=500 lookahead=20 syncs_per_sec=2000", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "adaptive syncs_per_sec=2000", \
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
set terminal pngcairo size 800,620 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
