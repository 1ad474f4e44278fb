#!/usr/bin/env bash
# step-cost.sh SPEC PROFILE [OUT]: measure cluster.cost.step_s, a worker's own work per step, for
# SPEC's workload on this machine: `pslab validate` of SPEC on one node of one worker (static, every
# key local, no message; the spec's sweep left out, so its base workload), 5 real runs; per run, the
# real CPU less the simulated CPU (PROFILE's figures, step_s 0), over the steps; prints the median
# and the range, and the --set that charges it. Results in OUT (default: a temporary directory).
set -euo pipefail
if [ $# -lt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -lt 2 ] && exit 2 || exit 0
fi
spec=$1 profile=$2
pslab=${PSLAB:-$(dirname "$0")/../build/pslab}
[ -x "$pslab" ] || { echo "step-cost: $pslab: not built (make, or set PSLAB)" >&2; exit 1; }
[ -r "$spec" ] || { echo "step-cost: $spec: cannot be read" >&2; exit 1; }
[ -r "$profile" ] || { echo "step-cost: $profile: cannot be read" >&2; exit 1; }
if [ $# -ge 3 ]; then out=$3; mkdir -p "$out"; else out=$(mktemp -d); trap 'rm -rf "$out"' EXIT; fi
"$pslab" validate "$spec" --profile "$profile" --out "$out" --force -q --repeats 5 \
  --set cluster.nodes=1 --set cluster.workers_per_node=1 --set 'sweep={}' \
  --set 'policy={"type":"static"}' --set cluster.cost.step_s=0 >"$out/validate.txt" 2>&1 ||
  { echo "step-cost: pslab validate failed (its output: $out/validate.txt)" >&2; cat "$out/validate.txt" >&2; exit 1; }
steps=$(grep -o '"steps":[0-9]*' "$out/sim/runs.jsonl" | head -1 | cut -d: -f2)
[ -n "$steps" ] && [ "$steps" -gt 0 ] || { echo "step-cost: no steps in $out/sim/runs.jsonl" >&2; exit 1; }
awk -v steps="$steps" '
function field(line, name) {
  if (!match(line, "\"" name "\":[^,}]*")) return ""
  return substr(line, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
}
/"kind":"run"/ && /"metric":"cpu_s"/ { n++; g[n] = (field($0, "real") - field($0, "sim")) / steps }
END {
  if (n == 0) { print "step-cost: no run compared CPU (cpu_s)" > "/dev/stderr"; exit 1 }
  for (i = 2; i <= n; i++) for (j = i; j > 1 && g[j - 1] > g[j]; j--) { t = g[j]; g[j] = g[j - 1]; g[j - 1] = t }
  m = n % 2 ? g[(n + 1) / 2] : (g[n / 2] + g[n / 2 + 1]) / 2
  printf "step_s: %.3g s a step (%d real runs of %d steps: %.3g to %.3g)\n", m, n, steps, g[1], g[n]
  if (m < 0) { print "the simulator charges more than the real runs spent: step_s stays 0"; m = 0 }
  printf "--set cluster.cost.step_s=%.3g\n", m
}' "$out/validate.jsonl"
