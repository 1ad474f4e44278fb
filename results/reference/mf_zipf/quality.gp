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
0.04056838003407072 0.992890912708339 NaN 1
0.081860014185458546 0.93403447934939376 NaN 1
0.1225310374926383 0.867819099754258 NaN 1
0.16429203799793252 0.819113837840852 NaN 1
0.2046252607308395 0.78599805917183252 NaN 1
0.24463792268229842 0.7631354182204797 NaN 1
0.283774010114462 0.74715537482867433 NaN 1
0.322939899936198 0.735272042897425 NaN 1
EOD
$s1 << EOD
0.136885831061913 0.99291747350493931 NaN 1
0.27066944517832175 0.932710312660397 NaN 1
0.407526700062828 0.866869561421075 NaN 1
0.544696103089205 0.81843154495922332 NaN 1
0.67438021155209338 0.786071711143646 NaN 1
0.73247361367334651 0.76297514038477954 NaN 1
0.73474558407334656 0.74712671194174474 NaN 1
0.73592858647334536 0.734914515162261 NaN 1
EOD
$s2 << EOD
0.045977994681556444 0.99330507118112132 NaN 1
0.092964037361999624 0.93447213059207557 NaN 1
0.13944845893467647 0.885860895076245 NaN 1
EOD
$s3 << EOD
0.095701708972589672 0.99316688791659224 NaN 1
0.18968516108063221 0.93374397844419166 NaN 1
0.28417775750680985 0.868715695469732 NaN 1
0.37876025677745817 0.82258995642681865 NaN 1
EOD
$s4 << EOD
0.077260637138570523 0.9905028246837424 NaN 1
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
