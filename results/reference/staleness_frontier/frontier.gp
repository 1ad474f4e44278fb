# drawn by scripts/staleness-frontier.sh from runs.csv
set encoding utf8
$stable0 << EOD
0.92 0.016
0.92 0.02
0.92 0.025
0.92 0.032
0.92 0.04
3.68 0.016
3.68 0.02
3.68 0.025
3.68 0.032
3.68 0.04
7.36 0.016
7.36 0.02
7.36 0.025
14.72 0.016
14.72 0.02
14.72 0.025
29.44 0.016
29.44 0.02
29.44 0.025
29.44 0.032
58.88 0.016
58.88 0.02
58.88 0.025
58.88 0.032
58.88 0.04
58.88 0.05
EOD
$diverged0 << EOD
0.92 0.05
3.68 0.05
7.36 0.032
7.36 0.04
7.36 0.05
14.72 0.032
14.72 0.04
14.72 0.05
29.44 0.04
29.44 0.05
EOD
$frontier0 << EOD
1 0.04
4 0.04
8 0.025
16 0.025
32 0.032
64 0.05
EOD
$stable1 << EOD
1.08 0.016
1.08 0.02
1.08 0.025
1.08 0.032
1.08 0.04
4.32 0.016
4.32 0.02
4.32 0.025
4.32 0.032
4.32 0.04
8.64 0.016
8.64 0.02
8.64 0.025
17.28 0.016
17.28 0.02
17.28 0.025
34.56 0.016
34.56 0.02
34.56 0.025
34.56 0.032
69.12 0.016
69.12 0.02
69.12 0.025
69.12 0.032
69.12 0.04
69.12 0.05
EOD
$diverged1 << EOD
1.08 0.05
4.32 0.05
8.64 0.032
8.64 0.04
8.64 0.05
17.28 0.032
17.28 0.04
17.28 0.05
34.56 0.04
34.56 0.05
EOD
$frontier1 << EOD
1 0.04
4 0.04
8 0.025
16 0.025
32 0.032
64 0.05
EOD
set logscale xy
set xlabel "sync interval k (worker steps between sync rounds: policy.syncs_per_step)"
set ylabel "learning rate (workload.lr)"
set title "Stability frontier: the largest lr that does not diverge, by sync interval"
set key below
set grid
set offsets graph 0.05, graph 0.05, 0, 0
set xtics (1,4,8,16,32,64)
set ytics (0.016,0.02,0.025,0.032,0.04,0.05)
set yrange [0.0128:0.0625]
set terminal svg size 800,560 dynamic noenhanced font "sans,12" background rgb "white"
set output "frontier.svg"
plot $frontier0 with linespoints lw 2 pt 7 ps 1.2 lc rgb "#0072B2" title "nups: largest stable lr", $stable0 with points pt 6 ps 1 lc rgb "#0072B2" title "nups: stable run", $diverged0 with points pt 2 ps 1.2 lc rgb "#0072B2" title "nups: diverged run", $frontier1 with linespoints lw 2 pt 7 ps 1.2 lc rgb "#D55E00" title "replicate: largest stable lr", $stable1 with points pt 6 ps 1 lc rgb "#D55E00" title "replicate: stable run", $diverged1 with points pt 2 ps 1.2 lc rgb "#D55E00" title "replicate: diverged run"
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
  set terminal pngcairo size 800,560 noenhanced font "sans,12" background rgb "white"
  set output "frontier.png"
  replot
}
