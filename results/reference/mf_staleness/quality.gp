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
0.01340600917138038 0.99685626160434482 NaN 1
0.026740556411232942 0.99683295304699859 NaN 1
0.040066495961081722 0.99667638679418225 NaN 1
0.0533958956628845 0.996531033470703 NaN 1
0.0667147601468184 0.997525654183712 NaN 1
EOD
$s1 << EOD
0.01340600917138038 0.99685626160434482 NaN 1
0.026740556411232942 0.99683295304699859 NaN 1
0.040066495961081722 0.99667638679418225 NaN 1
0.0533958956628845 0.996531033470703 NaN 1
0.0667147601468184 0.997525654183712 NaN 1
EOD
$s2 << EOD
0.01340600917138038 0.99685626160434482 NaN 1
0.027111962239683863 0.999263535832976 NaN 1
0.040837822488021341 1.194361625521861 NaN 1
0.054183608755381869 1.0007555791723504 NaN 1
EOD
$s3 << EOD
0.014653375570808 1.0053631266714638 NaN 1
0.029807765279546247 1.2122204554459821 NaN 1
EOD
$s4 << EOD
0.018186592217635283 0.99583653528574656 NaN 1
0.0362237512953403 0.990199403854231 NaN 1
0.0543815133483172 0.97125059006744618 NaN 1
0.072524139501859763 0.93758092562317 NaN 1
0.090620676446358767 0.90446187274187961 NaN 1
EOD
$s5 << EOD
0.018405935730829236 0.99583530364380535 NaN 1
0.036829290412135937 0.9900025169428518 NaN 1
0.055203021168054547 0.97012717301121465 NaN 1
0.0736327413284146 0.93676126965495865 NaN 1
0.092108505380913835 0.90386872973377252 NaN 1
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
