# Plot "local_ratio" of experiment "skew", written by pslab from runs.jsonl.
# Redraw with `gnuplot local_ratio.gp` in this directory (it writes local_ratio.svg, then local_ratio.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of local_ratio over the runs at that point, a share from 0 to 1
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (local accesses (%)).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "local_ratio.svg"
set linetype 1 linecolor rgb "#0072B2" linewidth 2 pointsize 1.2
set linetype 2 linecolor rgb "#D55E00" linewidth 2 pointsize 1.2
set linetype 3 linecolor rgb "#009E73" linewidth 2 pointsize 1.2
set linetype 4 linecolor rgb "#CC79A7" linewidth 2 pointsize 1.2
set linetype 5 linecolor rgb "#E69F00" linewidth 2 pointsize 1.2
set linetype 6 linecolor rgb "#56B4E9" linewidth 2 pointsize 1.2
set linetype 7 linecolor rgb "#000000" linewidth 2 pointsize 1.2
set linetype 8 linecolor rgb "#F0E442" linewidth 2 pointsize 1.2
set linetype cycle 8
set title "Share of accesses served locally against skew"
set xlabel "workload.skew"
set ylabel "local accesses (%)"
yscale = 100
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy.type"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0 0.12392069575656023 NaN 1
0.5 0.12461678991954152 NaN 1
1 0.128131206780877 NaN 1
1.5 0.13296526575639936 NaN 1
EOD
$s1 << EOD
0 0.94086256807197655 NaN 1
0.5 0.94249033372123581 NaN 1
1 0.945048192851117 NaN 1
1.5 0.91673410019769119 NaN 1
EOD
$s2 << EOD
0 0.13284273575881106 NaN 1
0.5 0.17961760326338577 NaN 1
1 0.544735321274603 NaN 1
1.5 0.89456810103762274 NaN 1
EOD
$s3 << EOD
0 0.940778161947218 NaN 1
0.5 0.943291164583255 NaN 1
1 0.95489268704206831 NaN 1
1.5 0.97567783502514671 NaN 1
EOD
$s4 << EOD
0 0.98018644375113329 NaN 1
0.5 0.98179986736238845 NaN 1
1 0.984957586305392 NaN 1
1.5 0.98365206346604939 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 1 title "static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 2 title "relocate", \
     $s2 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 3 title "replicate", \
     $s3 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 4 title "nups", \
     $s4 using ($1*xscale):($2*yscale) with linespoints pointtype 7 linecolor 5 title "adaptive"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so local_ratio.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "local_ratio.png"
replot
unset output
