#!/usr/bin/env bash
# A soak of pslab: many seeded random tiny runs across every policy, every
# consistency model, stragglers, 2 to 6 nodes and both backends, each
# checked for what must always hold (scripts/soak-check.awk lists it: no push
# lost or doubled, no key left in transfer or owned twice, nothing refused or
# dropped, every step run, the staleness bound kept, replicas equal where
# runs.jsonl reports replica_max_diff; today it does not, so that check waits
# for the metric). Runs come in batches, one spec each (scripts/soak-spec.awk:
# every policy the batch's consistency model allows times a few clusters), so
# that one pslab invocation runs many runs. Bash and awk only; not run in CI.
#
# Usage: scripts/soak.sh [--runs N] [--real-share F] [--seed S] [--out DIR]
#                        [--jobs J]
#   --runs N        runs in all (default 300)
#   --real-share F  the share of them on the real backend, in [0, 1]
#                   (default 0.1)
#   --seed S        the seed of the whole soak: the same seed makes the same
#                   specs (default 1)
#   --out DIR       where the specs, results and violations go (default
#                   results/soak-S/; emptied first, when it is empty or a
#                   soak's)
#   --jobs J        batches run at once (default 1)
# The pslab binary is $PSLAB, else build/pslab; a batch that runs longer than
# $SOAK_WATCHDOG_S seconds (default 60 + 5 a run) is stopped and its first
# missing run reported as one that never ended. Prints a progress line every
# 5 s on stderr and a summary at the end: runs by backend and policy, time
# per run, and each violation with its seed and a spec that reproduces the
# run alone (DIR/repro/). Exit status: 0 when every check held, 1 on any
# violation, 2 on bad usage. Run it at low priority: nice -n 19 scripts/soak.sh
set -u
export LC_ALL=C # one decimal point for awk and EPOCHREALTIME

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=300 REAL_SHARE=0.1 SEED=1 OUT="" JOBS=1
usage() { awk 'NR == 1 { next } /^[^#]/ { exit } { sub(/^# ?/, ""); print }' "$0"; }
bad() { echo "soak.sh: $1" >&2; usage >&2; exit 2; }
whole() { case $2 in '' | *[!0-9]*) bad "$1: expected a whole number, found '$2'" ;; esac; }
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --runs | --real-share | --seed | --out | --jobs) [ $# -ge 2 ] || bad "$1: missing its value" ;;&
    --runs) whole "$1" "$2"; RUNS=$2; shift ;;
    --real-share) REAL_SHARE=$2; shift ;;
    --seed) whole "$1" "$2"; SEED=$2; shift ;;
    --out) OUT=$2; shift ;;
    --jobs) whole "$1" "$2"; JOBS=$2; shift ;;
    *) bad "unknown argument '$1'" ;;
  esac
  shift
done
awk -v f="$REAL_SHARE" 'BEGIN { exit !(f ~ /^[0-9.]+$/ && f + 0 <= 1) }' ||
  bad "--real-share: expected a share in [0, 1], found '$REAL_SHARE'"
[ "$JOBS" -ge 1 ] || bad "--jobs: expected at least 1"
PSLAB=${PSLAB:-$ROOT/build/pslab}
[ -x "$PSLAB" ] || bad "no pslab at $PSLAB: build it (make build) or set PSLAB"
OUT=${OUT:-$ROOT/results/soak-$SEED}
[ ! -e "$OUT" ] || [ -f "$OUT/batches" ] || [ -z "$(ls -A "$OUT")" ] ||
  bad "--out: $OUT holds something other than a soak's results: not emptying it"
[ "${BASH_VERSINFO[0]}${BASH_VERSINFO[1]}" -ge 43 ] || bad "needs bash 4.3 or later (wait -n)"
REAL=$(awk -v n="$RUNS" -v f="$REAL_SHARE" 'BEGIN { printf "%d", n * f + 0.5 }')
SIM=$((RUNS - REAL))

rm -rf "$OUT" && mkdir -p "$OUT/specs" "$OUT/runs" "$OUT/repro" || exit 2
awk -v seed="$SEED" -v sim="$SIM" -v real="$REAL" -v dir="$OUT/specs" \
  -f "$ROOT/scripts/soak-spec.awk" >"$OUT/batches" || exit 2

now() { echo "${EPOCHREALTIME:-$SECONDS}"; }

# One batch: pslab on its spec (under a watchdog where `timeout` exists, so a
# run that never ends is reported: 60 s + 5 s a run, where a run takes well
# under a second and a real one that fails is reported within its timeout_s
# of 10 s), then its checks into NAME.check (renamed into place last: its
# presence says the batch is done).
run_batch() {
  local name=$1 runs=$2 dir=$OUT/runs/$1 t0 rc limit=${SOAK_WATCHDOG_S:-$((60 + 5 * $2))} pid
  t0=$(now)
  trap 'kill -TERM $pid 2>/dev/null' TERM
  if command -v timeout >/dev/null; then
    timeout -k 10 $limit "$PSLAB" run "$OUT/specs/$name.json" --out "$dir" --quiet \
      >"$dir.out" 2>"$dir.err" &
  else
    "$PSLAB" run "$OUT/specs/$name.json" --out "$dir" --quiet >"$dir.out" 2>"$dir.err" &
  fi
  pid=$!
  wait $pid
  rc=$?
  mkdir -p "$dir" && touch "$dir/runs.jsonl"
  awk -v batch="$name" -v spec="$OUT/specs/$name.json" -v total="$runs" -v rc=$rc -v limit=$limit \
    -v err="$dir.err" -v repro="$OUT/repro" -f "$ROOT/scripts/soak-check.awk" \
    "$dir/runs.jsonl" >"$dir.checking" 2>"$dir.checkerr" ||
    printf 'V\t%s: the checks failed: %s\n' "$name" "$(head -c 300 "$dir.checkerr")" >>"$dir.checking"
  awk -v t0="$t0" -v t1="$(now)" -v b="${name##*-}" -v n="$runs" \
    'BEGIN { printf "T\t%s\t%.3f\t%d\n", b, t1 - t0, n }' >>"$dir.checking"
  mv "$dir.checking" "$dir.check"
}

# Runs recorded so far (a batch's name ends in its backend), violations found.
progress() {
  local sim real v
  sim=$(cat "$OUT"/runs/*-sim/runs.jsonl 2>/dev/null | wc -l)
  real=$(cat "$OUT"/runs/*-real/runs.jsonl 2>/dev/null | wc -l)
  v=$(cat "$OUT"/runs/*.check 2>/dev/null | grep -c '^V')
  echo "soak: $((sim + real))/$RUNS runs (sim $sim/$SIM, real $real/$REAL)," \
    "$v violations, $((SECONDS - START)) s" >&2
}

declare -a NAMES=() SIZES=()
while read -r name backend runs; do NAMES+=("$name"); SIZES+=("$runs"); done <"$OUT/batches"
declare -A PIDS=()
START=$SECONDS
trap 'for p in "${PIDS[@]}"; do kill -TERM $p 2>/dev/null; done; exit 130' INT TERM
next=0 tick=""
while :; do
  while [ ${#PIDS[@]} -lt $JOBS ] && [ $next -lt ${#NAMES[@]} ]; do
    run_batch "${NAMES[next]}" "${SIZES[next]}" &
    PIDS[${NAMES[next]}]=$!
    next=$((next + 1))
  done
  [ ${#PIDS[@]} -eq 0 ] && break
  [ -n "$tick" ] || { sleep 5 & tick=$!; }
  wait -n
  for name in "${!PIDS[@]}"; do
    [ -f "$OUT/runs/$name.check" ] && { wait "${PIDS[$name]}"; unset "PIDS[$name]"; }
  done
  kill -0 $tick 2>/dev/null || { wait $tick; tick=""; progress; }
done
[ -n "$tick" ] && kill $tick 2>/dev/null

# The summary: runs by backend and policy, time per run, the violations.
cat "$OUT"/runs/*.check >"$OUT/checks"
awk -F '\t' -v secs=$((SECONDS - START)) -v jobs="$JOBS" -v out="$OUT" '
  $1 == "R" { runs[$2]++; by[$2, $3]++; model[$4]++; strag += $5; curve += $6; wall[$2] += $7; all++ }
  $1 == "T" { batch_s[$2] += $3 }
  $1 == "V" { v[++nv] = $2 }
  END {
    printf "soak: %d runs in %d s, %d batches at once, %d violations (results in %s)\n",
           all, secs, jobs, nv, out
    printf "%-8s", "backend"; np = split("static relocate replicate nups adaptive psld", p, " ")
    for (i = 1; i <= np; i++) printf " %9s", p[i]
    printf " %9s %9s %9s\n", "all", "s/run", "wall_s"
    split("sim real", b, " ")
    for (j = 1; j <= 2; j++) {
      if (!runs[b[j]]) continue
      printf "%-8s", b[j]
      for (i = 1; i <= np; i++) printf " %9d", by[b[j], p[i]]
      printf " %9d %9.3f %9.3f\n", runs[b[j]], batch_s[b[j]] / runs[b[j]], wall[b[j]] / runs[b[j]]
    }
    printf "(s/run: each batch start to end, pslab and checks included, over its runs;" \
           " wall_s: the runs themselves, mean)\n"
    for (m in model) ms = ms sprintf(" %s %d,", m, model[m])
    printf "consistency:%s with stragglers %d, under CURVE %d\n", ms, strag, curve
    for (i = 1; i <= nv; i++) print "violation: " v[i]
  }' "$OUT/checks" | tee "$OUT/summary"
grep -q '^V' "$OUT/checks" && exit 1
exit 0
