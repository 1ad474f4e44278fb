# Plot "quality" of experiment "mf_zipf_adagrad", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of eval_quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
# $ends: a row per line: its last epoch's x and y, then where its runs ended: time_s
# (evaluation and the run's end included) and the final y, and the line type.
#   runs  how many runs gave a value
# The y axis shows y * yscale (RMSE (lower is better)).
set encoding utf8
set terminal svg size 870,660 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "AdaGrad: held-out RMSE against training time (8 nodes x 2 workers)"
set xlabel "training time (ms)"
set ylabel "RMSE (lower is better)"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\nworkload.lr, policy"
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.76209950796380066:1.0184654021685022]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.044261183308144741 1.0000358680738768 NaN 1
0.093575218610235822 0.99465191017712318 NaN 1
0.14040087331716922 0.984260961359757 NaN 1
0.1878124991337097 0.97121934076903049 NaN 1
0.23331795497504132 0.95804748171968335 NaN 1
0.27601714444499476 0.94688476669020549 NaN 1
0.31638192699440187 0.9373227248594056 NaN 1
0.35676874790598656 0.93021579764023765 NaN 1
EOD
$s1 << EOD
0.0503307475188044 0.99990100765012324 NaN 1
0.10138357645292997 0.99416015595346 NaN 1
0.152395892817404 0.983327915709579 NaN 1
0.20335835102022817 0.96981126599901446 NaN 1
0.253937679273839 0.95630384007510649 NaN 1
0.30032194502042842 0.94463820978682145 NaN 1
0.34112850695920377 0.93469145536539966 NaN 1
0.381944795384148 0.927257798139362 NaN 1
EOD
$s2 << EOD
0.097979947207339629 0.99993614391831376 NaN 1
0.19486720136768748 0.994616845764771 NaN 1
0.29153197838453088 0.984457580406411 NaN 1
0.38872097614268841 0.971828481480921 NaN 1
0.48023165735855861 0.959354137185649 NaN 1
0.52930716891186436 0.94837056389364272 NaN 1
0.53272039428775675 0.9390212436032076 NaN 1
0.53413811668775768 0.932109064014146 NaN 1
EOD
$s3 << EOD
0.0769256487397569 0.99975851528987081 NaN 1
0.13113448820093088 0.991557359327273 NaN 1
0.192216367102029 0.97976773003465534 NaN 1
0.2475315894822549 0.96884476904548733 NaN 1
0.29274001320903259 0.95877394483506 NaN 1
0.33541495939745752 0.95055458857515662 NaN 1
0.36173001059745757 0.94418846606352558 NaN 1
0.38898967484856489 0.938929107807236 NaN 1
EOD
$s4 << EOD
0.044261183308144741 0.99871667824818433 NaN 1
0.093575218610235822 0.939617179639632 NaN 1
0.14040087331716922 0.89387855692897145 NaN 1
0.1878124991337097 0.858682641035082 NaN 1
0.23331795497504132 0.83112262908377621 NaN 1
0.27601714444499476 0.80939735416234659 NaN 1
0.31638192699440187 0.793627402292979 NaN 1
0.35676874790598656 0.782174142423345 NaN 1
EOD
$s5 << EOD
0.0503307475188044 1.0065369744036707 NaN 1
0.10138357645292997 0.95596407701793673 NaN 1
0.152395892817404 0.913384577836608 NaN 1
0.20335835102022817 0.87872481208594 NaN 1
0.253937679273839 0.84953112584303525 NaN 1
0.30032194502042842 0.82663259135321454 NaN 1
0.34112850695920377 0.80878940635298635 NaN 1
0.381944795384148 0.79578491875596169 NaN 1
EOD
$s6 << EOD
0.097979947207339629 0.99972452401921941 NaN 1
0.19486720136768748 0.94564872753263629 NaN 1
0.29153197838453088 0.90160964392952958 NaN 1
0.38872097614268841 0.869279481632555 NaN 1
0.48023165735855861 0.84221340822602164 NaN 1
0.52930716891186436 0.82143735182719968 NaN 1
0.53272039428775675 0.8052921591647928 NaN 1
0.53413811668775768 0.79335187896968518 NaN 1
EOD
$s7 << EOD
0.0769256487397569 1.0068124069773794 NaN 1
0.13113448820093088 0.954652263992127 NaN 1
0.192216367102029 0.91422655399525643 NaN 1
0.2475315894822549 0.8825819910974283 NaN 1
0.29274001320903259 0.862599240455409 NaN 1
0.33541495939745752 0.844659464474579 NaN 1
0.36173001059745757 0.833510768103053 NaN 1
0.38898967484856489 0.823965996054212 NaN 1
EOD
$ends << EOD
0.35676874790598656 0.93021579764023765 0.36106656594017228 0.92339881427311954 1
0.381944795384148 0.927257798139362 0.38563790031319861 0.92059765529017323 2
0.53413811668775768 0.932109064014146 0.53877084982426982 0.92468148870813882 3
0.38898967484856489 0.938929107807236 0.39485563180749667 0.92371029658576331 4
0.35676874790598656 0.782174142423345 0.36106656594017228 0.7737525031549235 5
0.381944795384148 0.79578491875596169 0.38563790031319861 0.785537826255978 6
0.53413811668775768 0.79335187896968518 0.53877084982426982 0.78106158015579952 7
0.38898967484856489 0.823965996054212 0.39485563180749667 0.799524710695141 8
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "workload.lr: 0.04; policy: static", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "workload.lr: 0.04; policy: replicate hot_keys=500 syncs_per_sec=2000", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "workload.lr: 0.04; policy: nups hot_keys=500 lookahead=20 syncs_per_sec=2000", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "workload.lr: 0.04; policy: adaptive syncs_per_sec=2000", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "workload.lr: 0.3; policy: static", \
     $s5 using ($1*xscale):($2*yscale) with linespoints linetype 6 title "workload.lr: 0.3; policy: replicate hot_keys=500 syncs_per_sec=2000", \
     $s6 using ($1*xscale):($2*yscale) with linespoints linetype 7 title "workload.lr: 0.3; policy: nups hot_keys=500 lookahead=20 syncs_per_sec=2000", \
     $s7 using ($1*xscale):($2*yscale) with linespoints linetype 8 title "workload.lr: 0.3; policy: adaptive syncs_per_sec=2000", \
     $ends using ($1*xscale):($2*yscale):(($3-$1)*xscale):(($4-$2)*yscale):5 with vectors nohead dashtype 3 linecolor variable notitle, \
     $ends using ($3*xscale):($4*yscale):5 with points pointtype 6 linecolor variable title "the run's end (time_s, evaluation included)"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 870,660 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
