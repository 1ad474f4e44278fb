#!/usr/bin/env bash
# Traces from the command line: `pslab run --record-trace` on the tiny
# simulated spec (one run: FILE; a sweep: one file per run), `pslab trace
# stats` (its figures, the SVG), the `trace` workload replaying the recording
# on another cluster size and recording again, `pslab trace merge`, and the
# usage errors and malformed files with their messages.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-trace.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL $name: exit status $got, expected $want"
    sed 's/^/  out| /' "$TMP/out"
    sed 's/^/  err| /' "$TMP/err"
    failures=$((failures + 1))
    return 1
  fi
  echo "ok   $name"
}

has() {
  if ! grep -qF -- "$3" "$TMP/$2"; then
    echo "FAIL $1: $2 lacks: $3"
    sed "s/^/  $2| /" "$TMP/$2"
    failures=$((failures + 1))
  fi
}

exists() {
  [ -s "$2" ] || { echo "FAIL $1: no $2"; failures=$((failures + 1)); }
}

absent() {
  [ ! -e "$2" ] || { echo "FAIL $1: $2 should not be there"; failures=$((failures + 1)); }
}

ONE='sweep.policy=[{"type":"static"}]'

# ------------------------------------------------------------------ help
run "trace --help" 0 "$PSLAB" trace --help
for word in "pslab trace stats FILE" "--svg OUT.svg" "--nodes N" "zipf exponent" \
            "reuse distance" "merge"; do
  has "trace --help" out "$word"
done
run "run --help" 0 "$PSLAB" run --help
has "run --help" out "--record-trace FILE"
has "run --help" out "t-run1.trace"
run "node --help" 0 "$PSLAB" node --help
has "node --help" out "--record-trace FILE"
run "help lists trace" 0 "$PSLAB" --help
has "help lists trace" out "trace        what a recorded access trace says"

# --------------------------------------------------------------- usage
run "trace, no subcommand" 2 "$PSLAB" trace
run "trace, unknown subcommand" 2 "$PSLAB" trace show x
has "trace, unknown subcommand" err "expected stats FILE or merge FILE"
run "trace stats --nodes 0" 2 "$PSLAB" trace stats x --nodes 0
has "trace stats --nodes 0" err "--nodes must be an integer from 1 to 4294967295, not 0"
run "trace merge --svg" 2 "$PSLAB" trace merge x --svg y.svg
run "record-trace without a value" 2 "$PSLAB" run "$SRC/tests/specs/tiny.json" --record-trace

# -------------------------------------------------------------- record
run "record one run" 0 "$PSLAB" run "$SRC/tests/specs/tiny.json" --set "$ONE" \
  --out "$TMP/res" --quiet --record-trace "$TMP/tiny.trace"
exists "record one run" "$TMP/tiny.trace"
absent "record one run" "$TMP/tiny.trace.part0"
absent "record one run" "$TMP/tiny.trace.tmp"
head -c 8 "$TMP/tiny.trace" | grep -q PSLTRACE || {
  echo "FAIL record one run: no magic"; failures=$((failures + 1)); }

run "stats" 0 "$PSLAB" trace stats "$TMP/tiny.trace" --svg "$TMP/rf.svg"
for word in "workers: 6 (recorded on 3 nodes)" "steps: 1200" "tables: 1 (500 keys)" \
            "keys: " "accesses: " "top keys: 0.1% of keys get" "zipf exponent: " \
            "locality: " "(3 nodes)" "reuse distance: p50 " "svg: $TMP/rf.svg"; do
  has "stats" out "$word"
done
exists "stats" "$TMP/rf.gp"
if command -v gnuplot >/dev/null 2>&1; then
  exists "stats" "$TMP/rf.svg"
  grep -q "<svg" "$TMP/rf.svg" || { echo "FAIL stats: rf.svg is no SVG"; failures=$((failures + 1)); }
fi
run "stats --nodes 1" 0 "$PSLAB" trace stats "$TMP/tiny.trace" --nodes 1
has "stats --nodes 1" out "locality: 100.0% of accesses"

# The real backend records the same accesses (the same seeds, one process per node).
run "record on the real backend" 0 "$PSLAB" run "$SRC/tests/specs/tiny.json" --set "$ONE" \
  --backend real --out "$TMP/resr" --quiet --record-trace "$TMP/real.trace"
sim_acc=$("$PSLAB" trace stats "$TMP/tiny.trace" | grep '^accesses:')
real_acc=$("$PSLAB" trace stats "$TMP/real.trace" | grep '^accesses:')
[ -n "$sim_acc" ] && [ "$sim_acc" = "$real_acc" ] || {
  echo "FAIL real backend: $real_acc, the simulator $sim_acc"; failures=$((failures + 1)); }

# A sweep of two runs: one file per run.
run "record a sweep" 0 "$PSLAB" run "$SRC/tests/specs/tiny.json" \
  --set 'sweep.policy=[{"type":"static"},{"type":"relocate","lookahead":5}]' \
  --out "$TMP/res2" --quiet --record-trace "$TMP/sweep.trace"
exists "record a sweep" "$TMP/sweep-run1.trace"
exists "record a sweep" "$TMP/sweep-run2.trace"
absent "record a sweep" "$TMP/sweep.trace"

# -------------------------------------------------------------- replay
cat >"$TMP/replay.json" <<'EOF'
{
  "name": "replay",
  "backend": "sim",
  "seed": 1,
  "cluster": {"nodes": 2, "workers_per_node": 1, "host_speed": "1Gf"},
  "workload": {"type": "trace", "file": "tiny.trace", "flops_per_step": 1000},
  "policy": {"type": "replicate", "hot_keys": 10, "syncs_per_sec": 100}
}
EOF
run "replay on 2 workers" 0 "$PSLAB" run "$TMP/replay.json" --out "$TMP/res3" --quiet \
  --record-trace "$TMP/again.trace"
run "stats of the replay" 0 "$PSLAB" trace stats "$TMP/again.trace"
has "stats of the replay" out "workers: 2 (recorded on 2 nodes)"
# Six recorded workers of 200 steps on two: 600 steps each, the same accesses.
has "stats of the replay" out "steps: 1200"
orig=$("$PSLAB" trace stats "$TMP/tiny.trace" | grep '^accesses:' | sed 's/ (.*//')
again=$(grep '^accesses:' "$TMP/out" | sed 's/ (.*//')
[ -n "$orig" ] && [ "$orig" = "$again" ] || {
  echo "FAIL replay: $orig in the recording, $again replayed"; failures=$((failures + 1)); }
run "replay, math real" 1 "$PSLAB" check "$TMP/replay.json" --set workload.math=real
has "replay, math real" err "workload.math: expected \"none\""

# ----------------------------------------------------------- malformed
printf 'PSLTRACX\001' >"$TMP/bad.trace"
run "stats, bad magic" 1 "$PSLAB" trace stats "$TMP/bad.trace"
has "stats, bad magic" err "$TMP/bad.trace: offset 0: not a pslab trace (bad magic"
head -c 40 "$TMP/tiny.trace" >"$TMP/cut.trace"
run "stats, truncated" 1 "$PSLAB" trace stats "$TMP/cut.trace"
has "stats, truncated" err "$TMP/cut.trace: offset "
printf 'pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read 12\n' >"$TMP/hand.txt"
run "stats, key out of the tables" 1 "$PSLAB" trace stats "$TMP/hand.txt"
has "stats, key out of the tables" err "$TMP/hand.txt:4: key 12 is in no table of the trace"
run "stats, missing file" 1 "$PSLAB" trace stats "$TMP/none.trace"
has "stats, missing file" err "none.trace: cannot read it"
mkfifo "$TMP/fifo.trace" # refused at once, not waited on (timeout: the bound)
run "stats, a FIFO" 1 timeout 20 "$PSLAB" trace stats "$TMP/fifo.trace"
has "stats, a FIFO" err "fifo.trace: not a regular file (a FIFO)"
printf 'pslab-trace 1\ntable 0 10 1\nworkers 1\n0 0 read 1 2\n0 1 read 1\n' >"$TMP/ok.txt"
run "stats of a text trace" 0 "$PSLAB" trace stats "$TMP/ok.txt"
has "stats of a text trace" out "reuse distance: p50 1, p90 1, p99 1 distinct keys (1 reuses"

# --------------------------------------------------------------- merge
run "merge, no parts" 1 "$PSLAB" trace merge "$TMP/nothing.trace"
has "merge, no parts" err "nothing.trace.part0: cannot read it"

if [ "$failures" -ne 0 ]; then
  echo "it_trace: $failures failure(s)"
  exit 1
fi
echo "it_trace: all passed"
