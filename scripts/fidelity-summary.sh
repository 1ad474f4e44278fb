#!/usr/bin/env bash
# fidelity-summary.sh VALIDATE.JSONL...: the simulator's errors against the real backend, per file
# (one `pslab validate` each) and pooled over all of them, as a Markdown table: for time_s and
# messages, over the sweep points, the median and largest |error|, how many points are within 10%
# and 25%, and within the real runs' spread; then the ranking (pairs the real runs tell apart, and
# of them those the simulator orders the same). Then, pooled, each telemetry metric's median factor
# simulated / real over the points (both above 0) and the points within a factor of 1.25 either
# way: where the two backends part; and the cores the nodes kept busy, cpu_s / time_s, at the
# points that have both (median, simulated and real). The figures docs/fidelity.md quotes come
# from it.
set -euo pipefail
if [ $# -eq 0 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -eq 0 ] && exit 2 || exit 0
fi
for f in "$@"; do
  [ -r "$f" ] || { echo "fidelity-summary: $f: cannot be read" >&2; exit 1; }
done
awk '
function field(line, name,   m) {
  if (match(line, "\"" name "\":(\"[^\"]*\"|[^,}]*)")) {
    m = substr(line, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
    gsub(/"/, "", m); return m
  }
  return ""
}
function abs(x) { return x < 0 ? -x : x }
function median(arr, n,   i, j, t) {
  for (i = 2; i <= n; i++) for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) {
    t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
  if (n == 0) return 0
  return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
function row(name, k,   n, i, a, mx, in10, in25, w, m, b) {
  n = cnt[k]; mx = 0; in10 = 0; in25 = 0
  for (i = 1; i <= n; i++) { a[i] = err[k, i]; if (a[i] > mx) mx = a[i]
    if (a[i] <= 0.10) in10++; if (a[i] <= 0.25) in25++ }
  m = median(a, n)
  nm = mcnt[k]; b = 0
  for (i = 1; i <= nm; i++) if (merr[k, i] > b) b = merr[k, i]
  printf "| %s | %d | %.1f%% | %.1f%% | %d | %d | %d | %.1f%% | %d of %d |\n", name, n, 100 * m,
    100 * mx, in10, in25, within[k] + 0, 100 * b, agree[k] + 0, counted[k] + 0
}
FNR == 1 { files[++nf] = FILENAME; name[nf] = FILENAME }
/"kind":"point"/ {
  metric = field($0, "metric")
  if (metric == "time_s" || metric == "cpu_s") { # the cores kept busy, below
    key = FILENAME SUBSEP field($0, "point")
    if (!(key in seen)) { seen[key] = 1; keys[++nk] = key }
    psim[key, metric] = field($0, "sim") + 0; preal[key, metric] = field($0, "real") + 0
  }
}
/"kind":"point"/ {
  metric = field($0, "metric"); e = field($0, "error")
  if (e == "" || e == "null") next
  if (metric == "time_s") {
    for (k = nf; k >= 0; k -= nf) { cnt[k]++; err[k, cnt[k]] = abs(e + 0)
      if (field($0, "within") == "true") within[k]++; if (nf == 0) break }
  } else if (metric == "messages") {
    for (k = nf; k >= 0; k -= nf) { mcnt[k]++; merr[k, mcnt[k]] = abs(e + 0); if (nf == 0) break }
  }
}
/"kind":"point"/ {
  metric = field($0, "metric")
  if (metric ~ /^(time_s|steps_per_s|messages|bytes|local_ratio|quality|loss|time_to_quality_s)$/) next
  s = field($0, "sim") + 0; r = field($0, "real") + 0
  if (!(s > 0 && r > 0)) next
  if (!(metric in tcnt)) torder[++nt] = metric
  tcnt[metric]++; tf[metric, tcnt[metric]] = s / r
}
/"kind":"ranking"/ {
  for (k = nf; k >= 0; k -= nf) { counted[k] += field($0, "counted"); agree[k] += field($0, "agree")
    if (nf == 0) break }
}
END {
  print "| validation | points | median \\|time error\\| | worst | within 10% | within 25% | within real spread | worst \\|messages error\\| | ranking: pairs agreeing |"
  print "|---|---|---|---|---|---|---|---|---|"
  for (i = 1; i <= nf; i++) row(name[i], i)
  if (nf > 1) row("all", 0)
  if (nt == 0) exit
  print ""
  print "| telemetry, pooled | points | median simulated / real | within a factor 1.25 |"
  print "|---|---|---|---|"
  for (i = 1; i <= nt; i++) {
    m = torder[i]; n = tcnt[m]; w = 0
    for (j = 1; j <= n; j++) { f[j] = tf[m, j]; if (f[j] <= 1.25 && f[j] >= 0.8) w++ }
    printf "| %s | %d | %.2f | %d |\n", m, n, median(f, n), w
  }
  nb = 0
  for (i = 1; i <= nk; i++) {
    key = keys[i]
    if (!(psim[key, "time_s"] > 0 && preal[key, "time_s"] > 0 && psim[key, "cpu_s"] > 0 &&
          preal[key, "cpu_s"] > 0)) continue
    nb++; bs[nb] = psim[key, "cpu_s"] / psim[key, "time_s"]
    br[nb] = preal[key, "cpu_s"] / preal[key, "time_s"]
  }
  if (nb) printf "\ncores kept busy (cpu_s / time_s), median over %d point%s: simulated %.2f, real %.2f\n",
    nb, nb == 1 ? "" : "s", median(bs, nb), median(br, nb)
}' "$@"
