# Plot "servers_psld" of experiment "stragglers", written by pslab from runs.jsonl.
# Redraw with `gnuplot servers_psld.gp` in this directory (it writes servers_psld.svg, then servers_psld.png),
# or with `pslab plot DIR`.
#
# Data: a block per line ($s0, $s1, ...), a row per point: x, y, ci95, runs.
#   y     the mean of servers over the runs at that point
#   ci95  half-width of the 95% confidence interval of that mean (Student's t);
#         NaN with fewer than 2 runs
#   runs  how many runs gave a value
# The y axis shows y * yscale (keys served per second).
set encoding utf8
set terminal svg size 800,500 dynamic noenhanced font "sans,12" background rgb "white"
set output "servers_psld.svg"
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
set title "Keys served per second by each server, psld, server 3 at 1/8 in [0.2 s, 0.5 s)"
set xlabel "time (ms)"
set ylabel "keys served per second"
yscale = 1
xscale = 1000
set grid
set key below horizontal Left reverse title "\n"
set yrange [0:*]
set autoscale xfix
set offsets graph 0.04, graph 0.04, 0, 0
$s0 << EOD
0.008 70000 NaN 1
0.024 59000 NaN 1
0.04 90000 NaN 1
0.056 60000 NaN 1
0.072000000000000008 75000 NaN 1
0.088 79000 NaN 1
0.10400000000000001 65000 NaN 1
0.12 95000 NaN 1
0.136 64000 NaN 1
0.152 96000 NaN 1
0.168 64000 NaN 1
0.184 73000 NaN 1
0.2 71000 NaN 1
0.216 32000 NaN 1
0.232 32000 NaN 1
0.248 48000 NaN 1
0.264 32000 NaN 1
0.28 52812.5 NaN 1
0.296 96187.5 NaN 1
0.312 76000 NaN 1
0.328 83125 NaN 1
0.34400000000000003 106875 NaN 1
0.36 76000 NaN 1
0.376 76000 NaN 1
0.392 114000 NaN 1
0.40800000000000003 76000 NaN 1
0.424 76000 NaN 1
0.44 86687.5 NaN 1
0.456 103312.5 NaN 1
0.47200000000000003 76000 NaN 1
0.488 76000 NaN 1
0.504 96187.5 NaN 1
0.52 91812.5 NaN 1
0.536 72000 NaN 1
0.552 88875 NaN 1
0.56800000000000006 91125 NaN 1
0.584 69000 NaN 1
0.6 102000 NaN 1
0.616 68000 NaN 1
0.632 78625 NaN 1
0.648 86375 NaN 1
0.664 64000 NaN 1
0.68 96000 NaN 1
0.69600000000000006 64000 NaN 1
0.712 96000 NaN 1
0.728 64000 NaN 1
0.744 72000 NaN 1
0.76 88000 NaN 1
0.776 64000 NaN 1
0.792 96000 NaN 1
0.808 64000 NaN 1
0.82400000000000007 80000 NaN 1
0.84 80000 NaN 1
0.856 64000 NaN 1
0.872 96000 NaN 1
0.888 64000 NaN 1
0.904 48000 NaN 1
EOD
$s1 << EOD
0.008 90000 NaN 1
0.024 69000 NaN 1
0.04 102000 NaN 1
0.056 68000 NaN 1
0.072000000000000008 85000 NaN 1
0.088 85000 NaN 1
0.10400000000000001 68000 NaN 1
0.12 102000 NaN 1
0.136 68000 NaN 1
0.152 102000 NaN 1
0.168 68000 NaN 1
0.184 75437.5 NaN 1
0.2 77562.5 NaN 1
0.216 34000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 53000 NaN 1
0.296 90000 NaN 1
0.312 72000 NaN 1
0.328 79875 NaN 1
0.34400000000000003 104125 NaN 1
0.36 76000 NaN 1
0.376 76000 NaN 1
0.392 114000 NaN 1
0.40800000000000003 76000 NaN 1
0.424 76000 NaN 1
0.44 86687.5 NaN 1
0.456 103312.5 NaN 1
0.47200000000000003 76000 NaN 1
0.488 76000 NaN 1
0.504 96187.5 NaN 1
0.52 91812.5 NaN 1
0.536 72000 NaN 1
0.552 88875 NaN 1
0.56800000000000006 91125 NaN 1
0.584 69000 NaN 1
0.6 102000 NaN 1
0.616 68000 NaN 1
0.632 78625 NaN 1
0.648 91375 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 96000 NaN 1
0.728 64000 NaN 1
0.744 72000 NaN 1
0.76 88000 NaN 1
0.776 64000 NaN 1
0.792 96000 NaN 1
0.808 64000 NaN 1
0.82400000000000007 80000 NaN 1
0.84 80000 NaN 1
0.856 64000 NaN 1
0.872 96000 NaN 1
0.888 64000 NaN 1
0.904 48000 NaN 1
EOD
$s2 << EOD
0.008 80000 NaN 1
0.024 64000 NaN 1
0.04 96000 NaN 1
0.056 64000 NaN 1
0.072000000000000008 80000 NaN 1
0.088 80000 NaN 1
0.10400000000000001 65000 NaN 1
0.12 95000 NaN 1
0.136 64000 NaN 1
0.152 96000 NaN 1
0.168 64000 NaN 1
0.184 73000 NaN 1
0.2 71000 NaN 1
0.216 32000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 53000 NaN 1
0.296 90000 NaN 1
0.312 72000 NaN 1
0.328 79875 NaN 1
0.34400000000000003 100125 NaN 1
0.36 72000 NaN 1
0.376 72000 NaN 1
0.392 108000 NaN 1
0.40800000000000003 72000 NaN 1
0.424 72000 NaN 1
0.44 83250 NaN 1
0.456 96750 NaN 1
0.47200000000000003 72000 NaN 1
0.488 72000 NaN 1
0.504 91125 NaN 1
0.52 88875 NaN 1
0.536 72000 NaN 1
0.552 88875 NaN 1
0.56800000000000006 91125 NaN 1
0.584 69000 NaN 1
0.6 102000 NaN 1
0.616 68000 NaN 1
0.632 78625 NaN 1
0.648 91375 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 102000 NaN 1
0.728 68000 NaN 1
0.744 75437.5 NaN 1
0.76 94562.5 NaN 1
0.776 68000 NaN 1
0.792 102000 NaN 1
0.808 68000 NaN 1
0.82400000000000007 82875 NaN 1
0.84 87125 NaN 1
0.856 68000 NaN 1
0.872 102000 NaN 1
0.888 68000 NaN 1
0.904 51000 NaN 1
EOD
$s3 << EOD
0.008 65000 NaN 1
0.024 61000 NaN 1
0.04 96000 NaN 1
0.056 64000 NaN 1
0.072000000000000008 80000 NaN 1
0.088 80000 NaN 1
0.10400000000000001 65000 NaN 1
0.12 95000 NaN 1
0.136 64000 NaN 1
0.152 96000 NaN 1
0.168 64000 NaN 1
0.184 73000 NaN 1
0.2 61000 NaN 1
0.216 35000 NaN 1
0.232 35125 NaN 1
0.248 46875 NaN 1
0.264 30000 NaN 1
0.28 21000 NaN 1
0.296 15000 NaN 1
0.312 12000 NaN 1
0.328 14250 NaN 1
0.34400000000000003 11750 NaN 1
0.36 8000 NaN 1
0.376 9125 NaN 1
0.392 10875 NaN 1
0.40800000000000003 4000 NaN 1
0.424 4000 NaN 1
0.44 5000 NaN 1
0.456 5000 NaN 1
0.47200000000000003 4000 NaN 1
0.488 4812.5 NaN 1
0.504 4250 NaN 1
0.52 12937.5 NaN 1
0.536 20000 NaN 1
0.552 25000 NaN 1
0.56800000000000006 25000 NaN 1
0.584 40937.5 NaN 1
0.6 72000 NaN 1
0.616 48000 NaN 1
0.632 60000 NaN 1
0.648 75000 NaN 1
0.664 60000 NaN 1
0.68 90000 NaN 1
0.69600000000000006 60000 NaN 1
0.712 96000 NaN 1
0.728 64000 NaN 1
0.744 72000 NaN 1
0.76 88000 NaN 1
0.776 64000 NaN 1
0.792 96000 NaN 1
0.808 64000 NaN 1
0.82400000000000007 80000 NaN 1
0.84 80000 NaN 1
0.856 64000 NaN 1
0.872 96000 NaN 1
0.888 64000 NaN 1
0.904 48000 NaN 1
EOD
$s4 << EOD
0.008 90000 NaN 1
0.024 69000 NaN 1
0.04 102000 NaN 1
0.056 68000 NaN 1
0.072000000000000008 85000 NaN 1
0.088 85000 NaN 1
0.10400000000000001 68000 NaN 1
0.12 102000 NaN 1
0.136 68000 NaN 1
0.152 102000 NaN 1
0.168 68000 NaN 1
0.184 75437.5 NaN 1
0.2 77562.5 NaN 1
0.216 34000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 53000 NaN 1
0.296 90000 NaN 1
0.312 72000 NaN 1
0.328 79875 NaN 1
0.34400000000000003 100125 NaN 1
0.36 72000 NaN 1
0.376 72000 NaN 1
0.392 108000 NaN 1
0.40800000000000003 72000 NaN 1
0.424 72000 NaN 1
0.44 83250 NaN 1
0.456 96750 NaN 1
0.47200000000000003 72000 NaN 1
0.488 72000 NaN 1
0.504 91125 NaN 1
0.52 88875 NaN 1
0.536 72000 NaN 1
0.552 88875 NaN 1
0.56800000000000006 91125 NaN 1
0.584 69000 NaN 1
0.6 102000 NaN 1
0.616 68000 NaN 1
0.632 78625 NaN 1
0.648 91375 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 102000 NaN 1
0.728 68000 NaN 1
0.744 75437.5 NaN 1
0.76 94562.5 NaN 1
0.776 68000 NaN 1
0.792 102000 NaN 1
0.808 68000 NaN 1
0.82400000000000007 82875 NaN 1
0.84 87125 NaN 1
0.856 68000 NaN 1
0.872 102000 NaN 1
0.888 68000 NaN 1
0.904 51000 NaN 1
EOD
$s5 << EOD
0.008 100000 NaN 1
0.024 74000 NaN 1
0.04 108000 NaN 1
0.056 72000 NaN 1
0.072000000000000008 90000 NaN 1
0.088 86000 NaN 1
0.10400000000000001 69062.5 NaN 1
0.12 100937.5 NaN 1
0.136 68000 NaN 1
0.152 102000 NaN 1
0.168 68000 NaN 1
0.184 76500 NaN 1
0.2 76500 NaN 1
0.216 34000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 55000 NaN 1
0.296 95000 NaN 1
0.312 76000 NaN 1
0.328 84312.5 NaN 1
0.34400000000000003 105687.5 NaN 1
0.36 76000 NaN 1
0.376 76000 NaN 1
0.392 114000 NaN 1
0.40800000000000003 76000 NaN 1
0.424 76000 NaN 1
0.44 87875 NaN 1
0.456 102125 NaN 1
0.47200000000000003 76000 NaN 1
0.488 76000 NaN 1
0.504 96187.5 NaN 1
0.52 93812.5 NaN 1
0.536 76000 NaN 1
0.552 93812.5 NaN 1
0.56800000000000006 96187.5 NaN 1
0.584 73000 NaN 1
0.6 108000 NaN 1
0.616 72000 NaN 1
0.632 82125 NaN 1
0.648 92875 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 102000 NaN 1
0.728 68000 NaN 1
0.744 76500 NaN 1
0.76 93500 NaN 1
0.776 68000 NaN 1
0.792 102000 NaN 1
0.808 68000 NaN 1
0.82400000000000007 83937.5 NaN 1
0.84 86062.5 NaN 1
0.856 68000 NaN 1
0.872 102000 NaN 1
0.888 68000 NaN 1
0.904 51000 NaN 1
EOD
$s6 << EOD
0.008 70000 NaN 1
0.024 62000 NaN 1
0.04 96000 NaN 1
0.056 64000 NaN 1
0.072000000000000008 80000 NaN 1
0.088 84000 NaN 1
0.10400000000000001 69062.5 NaN 1
0.12 100937.5 NaN 1
0.136 68000 NaN 1
0.152 102000 NaN 1
0.168 68000 NaN 1
0.184 76500 NaN 1
0.2 76500 NaN 1
0.216 34000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 55000 NaN 1
0.296 95000 NaN 1
0.312 76000 NaN 1
0.328 84312.5 NaN 1
0.34400000000000003 105687.5 NaN 1
0.36 76000 NaN 1
0.376 76000 NaN 1
0.392 114000 NaN 1
0.40800000000000003 76000 NaN 1
0.424 76000 NaN 1
0.44 87875 NaN 1
0.456 102125 NaN 1
0.47200000000000003 76000 NaN 1
0.488 76000 NaN 1
0.504 96187.5 NaN 1
0.52 93812.5 NaN 1
0.536 76000 NaN 1
0.552 93812.5 NaN 1
0.56800000000000006 96187.5 NaN 1
0.584 73062.5 NaN 1
0.6 108000 NaN 1
0.616 72000 NaN 1
0.632 82125 NaN 1
0.648 92875 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 102000 NaN 1
0.728 68000 NaN 1
0.744 76500 NaN 1
0.76 93500 NaN 1
0.776 68000 NaN 1
0.792 102000 NaN 1
0.808 68000 NaN 1
0.82400000000000007 83937.5 NaN 1
0.84 86062.5 NaN 1
0.856 68000 NaN 1
0.872 102000 NaN 1
0.888 68000 NaN 1
0.904 51000 NaN 1
EOD
$s7 << EOD
0.008 100000 NaN 1
0.024 74000 NaN 1
0.04 108000 NaN 1
0.056 72000 NaN 1
0.072000000000000008 90000 NaN 1
0.088 86000 NaN 1
0.10400000000000001 68000 NaN 1
0.12 102000 NaN 1
0.136 68000 NaN 1
0.152 102000 NaN 1
0.168 68000 NaN 1
0.184 76500 NaN 1
0.2 76500 NaN 1
0.216 34000 NaN 1
0.232 34000 NaN 1
0.248 51000 NaN 1
0.264 34000 NaN 1
0.28 53812.5 NaN 1
0.296 96187.5 NaN 1
0.312 76000 NaN 1
0.328 84312.5 NaN 1
0.34400000000000003 105687.5 NaN 1
0.36 76000 NaN 1
0.376 76000 NaN 1
0.392 114000 NaN 1
0.40800000000000003 80000 NaN 1
0.424 80000 NaN 1
0.44 91250 NaN 1
0.456 108750 NaN 1
0.47200000000000003 80000 NaN 1
0.488 80000 NaN 1
0.504 101250 NaN 1
0.52 94750 NaN 1
0.536 72000 NaN 1
0.552 90000 NaN 1
0.56800000000000006 90000 NaN 1
0.584 69000 NaN 1
0.6 102000 NaN 1
0.616 68000 NaN 1
0.632 78625 NaN 1
0.648 91375 NaN 1
0.664 68000 NaN 1
0.68 102000 NaN 1
0.69600000000000006 68000 NaN 1
0.712 102000 NaN 1
0.728 68000 NaN 1
0.744 75437.5 NaN 1
0.76 94562.5 NaN 1
0.776 68000 NaN 1
0.792 102000 NaN 1
0.808 68000 NaN 1
0.82400000000000007 83937.5 NaN 1
0.84 86062.5 NaN 1
0.856 68000 NaN 1
0.872 102000 NaN 1
0.888 68000 NaN 1
0.904 51000 NaN 1
EOD
plot $s0 using ($1*xscale):($2*yscale) with lines linetype 1 linewidth 1.5 title "server 0", \
     $s1 using ($1*xscale):($2*yscale) with lines linetype 2 linewidth 1.5 title "server 1", \
     $s2 using ($1*xscale):($2*yscale) with lines linetype 3 linewidth 1.5 title "server 2", \
     $s3 using ($1*xscale):($2*yscale) with lines linetype 4 linewidth 1.5 title "server 3", \
     $s4 using ($1*xscale):($2*yscale) with lines linetype 5 linewidth 1.5 title "server 4", \
     $s5 using ($1*xscale):($2*yscale) with lines linetype 6 linewidth 1.5 title "server 5", \
     $s6 using ($1*xscale):($2*yscale) with lines linetype 7 linewidth 1.5 title "server 6", \
     $s7 using ($1*xscale):($2*yscale) with lines linetype 8 linewidth 1.5 title "server 7"

# The same plot as a PNG, for documents and READMEs.
if (strstrt(GPVAL_TERMINALS, "pngcairo") == 0) {
  print "pslab: this gnuplot has no pngcairo terminal, so servers_psld.png is not drawn (Debian's gnuplot-nox has it)"
  exit status 4
}
set terminal pngcairo size 800,500 noenhanced font "sans,12" background rgb "white"
set output "servers_psld.png"
replot
unset output
