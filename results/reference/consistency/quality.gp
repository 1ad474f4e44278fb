# Plot "quality" of experiment "consistency", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a row per category: its label, then y, ci95, runs for each series.
#   y     the mean of quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (RMSE (lower is better)). The x axis shows the labels of `set xtics`, wrapped to fit.
set encoding utf8
set terminal svg size 800,786 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out RMSE after 4 epochs"
set xlabel "cluster.stragglers, consistency"
set ylabel "RMSE (lower is better)"
yscale = 1
set grid ytics
unset key
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.83519787071910945:0.86200746169947551]
$data << EOD
"cluster.stragglers: no straggler; consistency: model=async" 0.83861190948718045 NaN 1
"cluster.stragglers: no straggler; consistency: model=bsp" 0.8364164884909443 NaN 1
"cluster.stragglers: no straggler; consistency: model=ssp staleness=1" 0.83782024969886648 NaN 1
"cluster.stragglers: no straggler; consistency: model=ssp staleness=3" 0.839227016761765 NaN 1
"cluster.stragglers: no straggler; consistency: model=ssp staleness=10" 0.86078884392764066 NaN 1
"cluster.stragglers: no straggler; consistency: model=essp staleness=3" 0.84026538465409273 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=async" 0.839466658428927 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=bsp" 0.83641648875516073 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=ssp staleness=1" 0.837099291709023 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=ssp staleness=3" 0.83726338609731954 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=ssp staleness=10" 0.83872561909849319 NaN 1
"cluster.stragglers: [{node=3,speed_factor=0.25}]; consistency: model=essp staleness=3" 0.83732714038303968 NaN 1
EOD
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xtics nomirror rotate by 90 right ("cluster.stragglers: no\nstraggler; consistency:\nmodel=async" 0, \
  "cluster.stragglers: no\nstraggler; consistency:\nmodel=bsp" 1, \
  "cluster.stragglers: no\nstraggler; consistency:\nmodel=ssp staleness=1" 2, \
  "cluster.stragglers: no\nstraggler; consistency:\nmodel=ssp staleness=3" 3, \
  "cluster.stragglers: no\nstraggler; consistency:\nmodel=ssp staleness=10" 4, \
  "cluster.stragglers: no\nstraggler; consistency:\nmodel=essp staleness=3" 5, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=async" 6, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=bsp" 7, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=ssp\nstaleness=1" 8, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=ssp\nstaleness=3" 9, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=ssp\nstaleness=10" 10, \
  "cluster.stragglers:\n[{node=3,speed_factor=0.25}];\nconsistency: model=essp\nstaleness=3" 11)
set xrange [-0.5:11.5]
plot $data using ($2*yscale) linetype 1 title "quality"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,786 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
