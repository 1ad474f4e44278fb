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
0.090174686738803134 0.93557088315919679 NaN 1
EOD
$s3 << EOD
0.092396523400825964 0.992733801856895 NaN 1
0.18466778971303013 0.934113017327673 NaN 1
0.278658320612197 0.868290772952624 NaN 1
0.37119747409449089 0.83501336293773454 NaN 1
EOD
$s4 << EOD
0.076101366938105444 0.991108907190995 NaN 1
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
