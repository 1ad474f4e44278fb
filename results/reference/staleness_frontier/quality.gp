# Plot "quality" of experiment "staleness_frontier", written by pslab from runs.jsonl.
# Redraw with `gnuplot quality.gp` in this directory (it writes quality.svg, then quality.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of quality over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
# $diverged: a row per place where runs diverged (their loss or quality became
# NaN or infinite, so y has no value): x, a y at the top of the axis, a label.
#   runs  how many runs gave a value
# The y axis shows y * yscale (RMSE (lower is better)).
set encoding utf8
set terminal svg size 800,740 dynamic noenhanced font "sans,12" background rgb "white"
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
set title "Held-out RMSE after 4 epochs by learning rate, one line per sync interval k (replicate and nups)"
set xlabel "workload.lr"
set ylabel "RMSE (lower is better)"
yscale = 1
xscale = 1
set grid
set key below horizontal Left reverse title "\npolicy.type, policy.syncs_per_step"
# y from the data with a margin, not from 0: a quality or a loss
set yrange [0.7242060250218747:0.95646799601978894]
set logscale x
set xtics (0.016, 0.02, 0.025, 0.032, 0.04, 0.05)
set xrange [0.0151:0.0529]
$s0 << EOD
0.016 0.91661963966006865 NaN 1
0.02 0.874610409614458 NaN 1
0.025 0.83008329073504872 NaN 1
0.032 0.77933958375057177 NaN 1
0.04 0.73404763396246431 NaN 1
EOD
$s1 << EOD
0.016 0.91715086699674819 NaN 1
0.02 0.87540136773250921 NaN 1
0.025 0.8310641556731877 NaN 1
0.032 0.77974813224523631 NaN 1
0.04 0.8100667084640002 NaN 1
EOD
$s2 << EOD
0.016 0.91807948495115443 NaN 1
0.02 0.87688323158190751 NaN 1
0.025 0.834685450046883 NaN 1
EOD
$s3 << EOD
0.016 0.91991758848854621 NaN 1
0.02 0.87901991800727963 NaN 1
0.025 0.84057391860256736 NaN 1
EOD
$s4 << EOD
0.016 0.93060553632027532 NaN 1
0.02 0.898697749501846 NaN 1
0.025 0.878204353910614 NaN 1
0.032 0.82717611380288425 NaN 1
EOD
$s5 << EOD
0.016 0.92977607068807644 NaN 1
0.02 0.89371244735387256 NaN 1
0.025 0.854849668842277 NaN 1
0.032 0.81101592756822227 NaN 1
0.04 0.77844554366509455 NaN 1
0.05 0.77922860584733522 NaN 1
EOD
$s6 << EOD
0.016 0.91649341971345755 NaN 1
0.02 0.87479761693850033 NaN 1
0.025 0.83132907797225475 NaN 1
0.032 0.782872308358258 NaN 1
0.04 0.740853520801219 NaN 1
EOD
$s7 << EOD
0.016 0.917515155723779 NaN 1
0.02 0.87605471906686461 NaN 1
0.025 0.832460427595722 NaN 1
0.032 0.78301384057877677 NaN 1
0.04 0.748501626201809 NaN 1
EOD
$s8 << EOD
0.016 0.91815452423969557 NaN 1
0.02 0.87715737523367443 NaN 1
0.025 0.83553861163606769 NaN 1
EOD
$s9 << EOD
0.016 0.919742935392071 NaN 1
0.02 0.879115658407622 NaN 1
0.025 0.8399109420044033 NaN 1
EOD
$s10 << EOD
0.016 0.929926713735195 NaN 1
0.02 0.89876225562801626 NaN 1
0.025 0.88148118736223879 NaN 1
0.032 0.84069833322244769 NaN 1
EOD
$s11 << EOD
0.016 0.930879812774256 NaN 1
0.02 0.896476552326119 NaN 1
0.025 0.85908681013692922 NaN 1
0.032 0.8174815841636468 NaN 1
0.04 0.78955045984762839 NaN 1
0.05 0.80829841728106822 NaN 1
EOD
$diverged << EOD
0.032 0.94662638707919933 "epoch 2" 3
0.032 0.94662638707919933 "epoch 2" 4
0.032 0.94662638707919933 "epoch 2" 9
0.032 0.94662638707919933 "epoch 2" 10
0.04 0.94662638707919933 "epoch 1" 3
0.04 0.94662638707919933 "epoch 2" 4
0.04 0.94662638707919933 "epoch 4" 5
0.04 0.94662638707919933 "epoch 1" 9
0.04 0.94662638707919933 "epoch 2" 10
0.04 0.94662638707919933 "epoch 4" 11
0.05 0.94662638707919933 "epoch 3" 1
0.05 0.94662638707919933 "epoch 2" 2
0.05 0.94662638707919933 "epoch 1" 3
0.05 0.94662638707919933 "epoch 1" 4
0.05 0.94662638707919933 "epoch 3" 5
0.05 0.94662638707919933 "epoch 3" 7
0.05 0.94662638707919933 "epoch 3" 8
0.05 0.94662638707919933 "epoch 1" 9
0.05 0.94662638707919933 "epoch 1" 10
0.05 0.94662638707919933 "epoch 4" 11
EOD
plot $s0 using ($1*xscale):($2*yscale) with linespoints linetype 1 title "policy.type: replicate; policy.syncs_per_step: 1", \
     $s1 using ($1*xscale):($2*yscale) with linespoints linetype 2 title "policy.type: replicate; policy.syncs_per_step: 4", \
     $s2 using ($1*xscale):($2*yscale) with linespoints linetype 3 title "policy.type: replicate; policy.syncs_per_step: 8", \
     $s3 using ($1*xscale):($2*yscale) with linespoints linetype 4 title "policy.type: replicate; policy.syncs_per_step: 16", \
     $s4 using ($1*xscale):($2*yscale) with linespoints linetype 5 title "policy.type: replicate; policy.syncs_per_step: 32", \
     $s5 using ($1*xscale):($2*yscale) with linespoints linetype 6 title "policy.type: replicate; policy.syncs_per_step: 64", \
     $s6 using ($1*xscale):($2*yscale) with linespoints linetype 7 title "policy.type: nups; policy.syncs_per_step: 1", \
     $s7 using ($1*xscale):($2*yscale) with linespoints linetype 8 title "policy.type: nups; policy.syncs_per_step: 4", \
     $s8 using ($1*xscale):($2*yscale) with linespoints linetype 9 title "policy.type: nups; policy.syncs_per_step: 8", \
     $s9 using ($1*xscale):($2*yscale) with linespoints linetype 10 title "policy.type: nups; policy.syncs_per_step: 16", \
     $s10 using ($1*xscale):($2*yscale) with linespoints linetype 11 title "policy.type: nups; policy.syncs_per_step: 32", \
     $s11 using ($1*xscale):($2*yscale) with linespoints linetype 12 title "policy.type: nups; policy.syncs_per_step: 64", \
     $diverged using ($1*xscale):($2*yscale):4 with points pointtype 2 pointsize 2 linewidth 2 linecolor variable title "diverged (loss or quality became NaN or infinite)", \
     $diverged every 2::0 using ($1*xscale):($2*yscale):3:4 with labels offset 0,1 textcolor variable notitle, \
     $diverged every 2::1 using ($1*xscale):($2*yscale):3:4 with labels offset 0,-1 textcolor variable notitle

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so quality.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,740 noenhanced font "sans,12" background rgb "white"
set output "quality.png"
replot
unset output
