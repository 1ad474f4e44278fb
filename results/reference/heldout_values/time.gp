# Plot "time" of experiment "heldout_values", written by pslab from runs.jsonl.
# Redraw with `gnuplot time.gp` in this directory (it writes time.svg, then time.png),
# or with `pslab plot DIR`.
#
# Data: a row per category: its label, then y, ci95, runs for each series.
#   y     the mean of time_s over the runs at that point, in s
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (time (ms)). The x axis shows the labels of `set xtics`, wrapped to fit.
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "time.svg"
set linetype 1 linecolor rgb "#0072B2" linewidth 2 pointsize 1.2
set linetype 2 linecolor rgb "#D55E00" linewidth 2 pointsize 1.2
set linetype 3 linecolor rgb "#009E73" linewidth 2 pointsize 1.2
set linetype 4 linecolor rgb "#CC79A7" linewidth 2 pointsize 1.2
set linetype 5 linecolor rgb "#E69F00" linewidth 2 pointsize 1.2
set linetype 6 linecolor rgb "#56B4E9" linewidth 2 pointsize 1.2
set linetype 7 linecolor rgb "#000000" linewidth 2 pointsize 1.2
set linetype 8 linecolor rgb "#F0E442" linewidth 2 pointsize 1.2
set linetype cycle 8
set title "Held-out: Zipf 0.9, 200 floats, write-heavy, compute"
set xlabel "policy.type"
set ylabel "time (ms)"
yscale = 1000
set grid ytics
unset key
set yrange [0:*]
$data << EOD
"static" 0.26330051370088425 0.00055281187648112992 3
"relocate" 0.26137399280656859 0.0011410058154766585 3
"nups" 0.254623853298499 0.00299093511466973 3
"adaptive" 0.29811486909681839 0.018124063414734781 3
EOD
set style data histogram
set style histogram errorbars linewidth 1 gap 1
set style fill solid 0.85 border -1
set xtics nomirror ("static" 0, \
  "relocate" 1, \
  "nups" 2, \
  "adaptive" 3)
set xrange [-0.5:3.5]
plot $data using ($2*yscale):($3*yscale) title "time_s"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so time.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "time.png"
replot
unset output
