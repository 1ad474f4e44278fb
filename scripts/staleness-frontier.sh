#!/usr/bin/env bash
# staleness-frontier.sh DIR: the stability frontier of a sweep of workload.lr against the sync
# interval in worker steps, policy.syncs_per_step (experiments/specs/staleness_frontier.json), from
# DIR/runs.csv: per policy.type and interval k, the largest lr whose runs all trained without
# diverging, every smaller lr of the sweep too ("stable"), and the smallest lr at which some run
# diverged (its loss became NaN or infinite), the critical lr lying between the two. Prints them as
# a Markdown table, writes DIR/frontier.csv, and DIR/frontier.gp, which gnuplot runs to draw
# DIR/frontier.svg and DIR/frontier.png: lr against k, log-log, each run a dot (stable) or a
# cross (diverged), a line per policy through its largest stable lr. Failed runs are left out.
set -euo pipefail
if [ $# -ne 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 1 ] && exit 0 || exit 2
fi
DIR=$1
[ -r "$DIR/runs.csv" ] || { echo "staleness-frontier: $DIR/runs.csv: cannot be read" >&2; exit 1; }

# One line per run: type k lr stable(1/0); failed runs dropped. Fields may be quoted (RFC 4180).
runs=$(awk '
function split_csv(line, f,   n, i, c, q, cur) {
  n = 0; cur = ""; q = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (q) {
      if (c == "\"" && substr(line, i + 1, 1) == "\"") { cur = cur c; i++ }
      else if (c == "\"") q = 0
      else cur = cur c
    } else if (c == "\"") q = 1
    else if (c == ",") { f[++n] = cur; cur = "" }
    else cur = cur c
  }
  f[++n] = cur
  return n
}
{ sub(/\r$/, "") }
NR == 1 {
  n = split_csv($0, h)
  for (i = 1; i <= n; i++) col[h[i]] = i
  for (name in need) if (!(name in col)) {
    printf "staleness-frontier: runs.csv has no column %s (sweep policy.type, " \
           "policy.syncs_per_step and workload.lr)\n", name > "/dev/stderr"
    bad = 1; exit 1
  }
  next
}
{
  split_csv($0, f)
  if (f[col["error"]] != "") next
  printf "%s %s %s %d\n", f[col["policy.type"]], f[col["policy.syncs_per_step"]],
         f[col["workload.lr"]], f[col["loss"]] != ""
}
BEGIN { need["policy.type"]; need["policy.syncs_per_step"]; need["workload.lr"]; need["loss"]
        need["error"] }
END { if (bad) exit 1 }' "$DIR/runs.csv")
[ -n "$runs" ] || { echo "staleness-frontier: $DIR/runs.csv: no run ended" >&2; exit 1; }

# Per (type, k): the largest stable lr below the first diverged one, and that one. A sweep
# point is stable when every run of it is.
frontier=$(sort -k1,1 -k2,2n -k3,3g <<<"$runs" | awk '
{ id = $1 " " $2 " " $3; if (!(id in ok)) { ok[id] = 1; order[++n] = id }; if (!$4) ok[id] = 0 }
END { for (i = 1; i <= n; i++) print order[i], ok[order[i]] }' | awk '
function flush() {
  if (key == "") return
  printf "%s %s %s\n", key, stable == "" ? "-" : stable, diverged == "" ? "-" : diverged
}
$1 " " $2 != key { flush(); key = $1 " " $2; stable = ""; diverged = "" }
diverged == "" { if ($4) stable = $3; else diverged = $3 }
END { flush() }')

{
  echo "| policy | k (worker steps per sync) | largest stable lr | smallest diverged lr |"
  echo "|---|---|---|---|"
  awk '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' <<<"$frontier"
}
{
  echo "policy.type,syncs_per_step,largest_stable_lr,smallest_diverged_lr"
  awk '{ printf "%s,%s,%s,%s\n", $1, $2, $3 == "-" ? "" : $3, $4 == "-" ? "" : $4 }' <<<"$frontier"
} >"$DIR/frontier.csv"

# The plot: per policy a block of its runs and a block of its frontier; policies side by side
# around each k (x scaled by 0.92 and 1.08) so that their marks do not cover each other.
types=$(awk '{ print $1 }' <<<"$runs" | sort -u)
ntypes=$(wc -w <<<"$types")
colours=("#0072B2" "#D55E00" "#009E73" "#CC79A7" "#E69F00" "#56B4E9" "#000000" "#F0E442")
{
  echo "# drawn by scripts/staleness-frontier.sh from runs.csv"
  echo 'set encoding utf8'
  i=0
  for t in $types; do
    shift_x=$(awk -v i="$i" -v n="$ntypes" \
      'BEGIN { print (n > 1 ? 0.92 + 0.16 * i / (n - 1) : 1) }')
    echo "\$stable$i << EOD"
    awk -v t="$t" -v s="$shift_x" '$1 == t && $4 { print $2 * s, $3 }' <<<"$runs"
    echo "EOD"
    echo "\$diverged$i << EOD"
    awk -v t="$t" -v s="$shift_x" '$1 == t && !$4 { print $2 * s, $3 }' <<<"$runs"
    echo "EOD"
    echo "\$frontier$i << EOD"
    awk -v t="$t" '$1 == t && $3 != "-" { print $2, $3 }' <<<"$frontier"
    echo "EOD"
    i=$((i + 1))
  done
  cat <<'EOF'
set logscale xy
set xlabel "sync interval k (worker steps between sync rounds: policy.syncs_per_step)"
set ylabel "learning rate (workload.lr)"
set title "Stability frontier: the largest lr that does not diverge, by sync interval"
set key below
set grid
set offsets graph 0.05, graph 0.05, 0, 0
EOF
  echo "set xtics ($(awk '{ print $2 }' <<<"$runs" | sort -un | paste -sd, -))"
  echo "set ytics ($(awk '{ print $3 }' <<<"$runs" | sort -ug | paste -sd, -))"
  awk 'NR == 1 || $3 < lo { lo = $3 } NR == 1 || $3 > hi { hi = $3 }
       END { printf "set yrange [%g:%g]\n", lo / 1.25, hi * 1.25 }' <<<"$runs"
  plot="plot"
  i=0
  for t in $types; do
    c=${colours[$((i % 8))]}
    plot="$plot \$frontier$i with linespoints lw 2 pt 7 ps 1.2 lc rgb \"$c\""
    plot="$plot title \"$t: largest stable lr\","
    plot="$plot \$stable$i with points pt 6 ps 1 lc rgb \"$c\" title \"$t: stable run\","
    plot="$plot \$diverged$i with points pt 2 ps 1.2 lc rgb \"$c\" title \"$t: diverged run\","
    i=$((i + 1))
  done
  plot=${plot%,}
  echo 'set terminal svg size 800,560 dynamic noenhanced font "sans,12" background rgb "white"'
  echo 'set output "frontier.svg"'
  echo "$plot"
  echo 'if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {'
  echo '  set terminal pngcairo size 800,560 noenhanced font "sans,12" background rgb "white"'
  echo '  set output "frontier.png"'
  echo '  replot'
  echo '}'
} >"$DIR/frontier.gp"
if command -v gnuplot >/dev/null; then
  (cd "$DIR" && gnuplot frontier.gp) || { echo "staleness-frontier: gnuplot failed" >&2; exit 1; }
else
  echo "staleness-frontier: no gnuplot: $DIR/frontier.gp written, not drawn" >&2
fi
