#!/usr/bin/env bash
# The `pslab` command line: help texts, the bash completion script, usage
# errors (exit 2, --shard among them), `check` on good and bad specs (exit
# 0 / 1, the messages, the --set warning, --repeats), and `plot DIR` and
# `merge` on results directories written by hand; `keygen` and
# cluster.auth; the estimate `check` and `run` print. Runs no simulation
# but the estimate's short ones: that is it_run's business (one-node real
# runs check key files).
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-cli.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

# run NAME WANT_STATUS CMD...: runs CMD, keeps its output in $TMP/out, $TMP/err.
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

# has NAME STREAM TEXT: the last run's stdout (out) or stderr (err) contains TEXT.
has() {
  if ! grep -qF -- "$3" "$TMP/$2"; then
    echo "FAIL $1: $2 lacks: $3"
    sed "s/^/  $2| /" "$TMP/$2"
    failures=$((failures + 1))
  fi
}
lacks() {
  if grep -qF -- "$3" "$TMP/$2"; then
    echo "FAIL $1: $2 has: $3"
    sed "s/^/  $2| /" "$TMP/$2"
    failures=$((failures + 1))
  fi
}

empty() {
  if [ -s "$TMP/$2" ]; then
    echo "FAIL $1: $2 should be empty"
    sed "s/^/  $2| /" "$TMP/$2"
    failures=$((failures + 1))
  fi
}

# ------------------------------------------------------------------ help
run "--help" 0 "$PSLAB" --help
for word in "run SPEC" "check SPEC" "plot DIR" "README.md" "Spec reference"; do
  has "--help" out "$word"
done
run "help run" 0 "$PSLAB" help run
has "help run" out "usage: pslab run SPEC"
run "run --help" 0 "$PSLAB" run --help
for word in "--out DIR" "--set PATH=VALUE" "--backend" "--metrics A,B,..." "--quiet" \
            "--shard K/N" "runs.jsonl" "runs.csv" "summary.csv" "NAME_ci95" "Exit status" \
            "experiments/SPEC.md"; do
  has "run --help" out "$word"
done
run "check -h" 0 "$PSLAB" check -h
has "check -h" out "valid, N runs"
run "plot --help" 0 "$PSLAB" plot --help
has "plot --help" out "usage: pslab plot DIR"

# completion: a bash script made from the options table, that bash reads and
# that completes commands, options and fixed words.
run "completion bash" 0 "$PSLAB" completion bash
cp "$TMP/out" "$TMP/pslab.bash"
bash -n "$TMP/pslab.bash" || { echo "FAIL completion bash: not bash"; failures=$((failures + 1)); }
check_completion() { # check_completion EXPECTED WORD...: what completing the last WORD offers
  local want=$1 got
  shift
  got=$(bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pslab
                 echo "${COMPREPLY[*]}"' _ "$TMP/pslab.bash" "$@")
  if [ "$got" = "$want" ]; then
    echo "ok   completion of '$*'"
  else
    echo "FAIL completion of '$*': got '$got', expected '$want'"
    failures=$((failures + 1))
  fi
}
check_completion "check calibrate completion" pslab c
check_completion "--repeats --resume --record-trace" pslab run --re
check_completion "--set -s --backend --repeats --shard --force --help -h" pslab check x -
check_completion "sim real" pslab run x --backend ""
check_completion "stats" pslab trace s
check_completion "validate" pslab help va
run "completion of another shell" 2 "$PSLAB" completion tcsh
has "completion of another shell" err "no completion script for the shell tcsh"
run "--help lists completion" 0 "$PSLAB" --help
has "--help lists completion" out "completion bash"

# ------------------------------------------------------------ usage errors
run "no command" 2 "$PSLAB"
has "no command" err "missing command"
has "no command" err "usage: pslab <command>"
run "unknown command" 2 "$PSLAB" frobnicate
has "unknown command" err "unknown command frobnicate"
run "unknown option" 2 "$PSLAB" run --frob x.json
has "unknown option" err "pslab run: unknown option --frob"
has "unknown option" err "usage: pslab run SPEC"
run "option of another command" 2 "$PSLAB" check x.json --out dir
has "option of another command" err "unknown option --out"
run "missing spec" 2 "$PSLAB" run
has "missing spec" err "missing SPEC"
run "missing value" 2 "$PSLAB" run x.json --set
has "missing value" err "missing value after --set"
run "bad backend" 2 "$PSLAB" run x.json --backend gpu
has "bad backend" err "--backend must be sim or real, not gpu"
run "two specs" 2 "$PSLAB" check a.json b.json
has "two specs" err "unexpected argument b.json"
run "help of unknown" 2 "$PSLAB" help frob
for bad in 0/3 4/3 3/ /3 x/y 2 -1/3; do
  run "--shard $bad" 2 "$PSLAB" run x.json --shard "$bad"
  has "--shard $bad" err "pslab run: --shard: expected K/N"
  has "--shard $bad" err "found \"$bad\""
  has "--shard $bad" err "usage: pslab run SPEC"
done
run "--shard without value" 2 "$PSLAB" run x.json --shard
has "--shard without value" err "missing value after --shard"
run "node --shard" 2 "$PSLAB" node x.json --shard=5/4
has "node --shard" err "pslab node: --shard: expected K/N with 1 <= K <= N"
run "unknown metric" 2 "$PSLAB" run x.json --metrics time_s,colour
has "unknown metric" err "pslab run: --metrics: unknown metric \"colour\"; the metrics are: time_s,"
has "unknown metric" err "sample_tv_distance"
run "empty metric" 2 "$PSLAB" node x.json -m time_s,
has "empty metric" err "pslab node: --metrics: an empty metric name"
run "metrics not for check" 2 "$PSLAB" check x.json --metrics time_s
has "metrics not for check" err "unknown option --metrics"

# -------------------------------------------------------------------- check
# The estimate of the sweep's wall time (CTest turns it off elsewhere).
TINY="$SRC/tests/specs/tiny.json"
PSLAB_ESTIMATE_S=1 run "check estimates" 0 "$PSLAB" check "$TINY"
has "check estimates" out "tiny.json: valid, 7 runs"
has "check estimates" out "estimate: about "
has "check estimates" out "of wall time for 7 runs (from "
has "check estimates" out " simulating the first steps of "
PSLAB_ESTIMATE_S=1 run "run estimates" 0 "$PSLAB" run "$TINY" --set 'sweep.policy=[{"type":"static"}]' \
  --set sweep.cluster.nodes=[3] --out "$TMP/estimated"
has "run estimates" err "pslab: estimate: about "
has "run estimates" err "of wall time for 1 run (from "
# --timeout: the long run (10M steps a worker) is ended and recorded as failed,
# the runs on either side of it succeed.
# The short runs must end well within the limit: under a sanitizer (the
# PSLAB_TEST_TIME_SCALE tests/CMakeLists.txt sets) a run is several times
# slower, and beside another test a 200-step run outlasted 1.5 s under
# AddressSanitizer. The long run would take an hour.
LIMIT=1.5
[ "${PSLAB_TEST_TIME_SCALE:-1}" != 1 ] && LIMIT=20
run "timeout" 1 "$PSLAB" run "$TINY" --set 'sweep.policy=[{"type":"static"}]' \
  --set 'sweep.workload.steps_per_worker=[100,10000000,200]' --timeout "$LIMIT" --out "$TMP/timeout"
has "timeout" err "[run 2/3] policy={type=static}, workload.steps_per_worker=10000000: FAILED: timed out after $LIMIT s"
has "timeout" err "pslab: 1 of 3 runs failed"
if [ "$(grep -c '"metrics":{' "$TMP/timeout/runs.jsonl")" != 2 ] ||
   ! grep -q "\"error\":\"timed out after $LIMIT s\"" "$TMP/timeout/runs.jsonl"; then
  echo "FAIL timeout: runs.jsonl lacks two successful runs and the timed-out one"
  failures=$((failures + 1))
fi
PSLAB_ESTIMATE_S=0 run "no estimate" 0 "$PSLAB" check "$TINY"
empty "no estimate" err
if grep -q estimate "$TMP/out"; then echo "FAIL no estimate: out has one"; failures=$((failures + 1)); fi
QS="$SRC/experiments/specs/quickstart.json"
run "check quickstart" 0 "$PSLAB" check "$QS"
has "check quickstart" out "quickstart.json: valid, 4 runs"
run "check --shard" 0 "$PSLAB" check "$QS" --shard 2/3
has "check --shard" out "quickstart.json: valid, 4 runs (4 sweep points x 1 repeat); shard 2/3 holds 1 of them"
run "check --shard 1/3" 0 "$PSLAB" check "$QS" --shard=1/3
has "check --shard 1/3" out "shard 1/3 holds 2 of them"
run "check --repeats" 0 "$PSLAB" check "$QS" --repeats 3
has "check --repeats" out "valid, 12 runs (4 sweep points x 3 repeats)"
run "--repeats after --set repeats" 0 "$PSLAB" check "$QS" --repeats=2 --set repeats=5
has "--repeats after --set repeats" out "valid, 8 runs (4 sweep points x 2 repeats)"
run "check with --set" 0 "$PSLAB" check "$QS" --set 'sweep.cluster.nodes=[2,4]' -s repeats=2
has "check with --set" out "valid, 16 runs (8 sweep points x 2 repeats)"

cat >"$TMP/bad.json" <<'EOF'
{
  "name": "bad",
  "cluster": {"nodes": -3, "network": {"bandwidth": "10Gbs"}},
  "workload": {"type": "zipf", "keys": 1000, "steps_per_worker": 10},
  "policy": {"type": "static"},
  "sweep": {"cluster.nodes": []},
  "colour": "red"
}
EOF
run "check bad spec" 1 "$PSLAB" check "$TMP/bad.json"
empty "check bad spec" out
has "check bad spec" err "bad.json: cluster.nodes: expected an integer >= 1, found -3"
has "check bad spec" err "bad.json: cluster.network.bandwidth: expected a bandwidth"
has "check bad spec" err "bad.json: sweep[\"cluster.nodes\"]: expected a non-empty list of values, found an empty list"
has "check bad spec" err "bad.json: colour: expected one of the keys of the spec"
has "check bad spec" err "is not valid (4 problems); nothing was run"

run "--set fixes the rest" 1 "$PSLAB" check "$TMP/bad.json" --set cluster.nodes=2 \
  --set cluster.network.bandwidth=1Gbps --set 'sweep.cluster.nodes=[1,2]'
has "--set fixes the rest" err "colour: expected one of the keys"
has "--set fixes the rest" err "is not valid (1 problem)"

printf '{\n  "name": "x",\n  "cluster": {"nodes": 2,,}\n}\n' >"$TMP/syntax.json"
run "syntax error" 1 "$PSLAB" check "$TMP/syntax.json"
has "syntax error" err "syntax.json:3:"
has "syntax error" err "invalid JSON"

run "missing file" 1 "$PSLAB" check "$TMP/nope.json"
has "missing file" err "nope.json: cannot read: No such file or directory"

# Inputs that are not regular files are refused before they are opened for
# reading: a FIFO would block the reader for ever (timeout: the bound).
mkfifo "$TMP/fifo.json"
run "FIFO spec" 1 timeout 20 "$PSLAB" check "$TMP/fifo.json"
has "FIFO spec" err "fifo.json: not a regular file (a FIFO)"
mkdir "$TMP/profile-dir"
run "directory profile" 1 timeout 20 "$PSLAB" check "$QS" --set cluster.profile="$TMP/profile-dir"
has "directory profile" err "cluster.profile: $TMP/profile-dir: not a regular file (a directory)"
run "FIFO profile" 1 timeout 20 "$PSLAB" check "$QS" --set cluster.profile="$TMP/fifo.json"
has "FIFO profile" err "cluster.profile: $TMP/fifo.json: not a regular file (a FIFO)"

# The work a run asks for is bounded: over the limit, a spec is refused
# (the fields, the figure, the limit) unless --force; every shipped spec is
# well under it.
run "work over the limit" 1 "$PSLAB" check "$QS" --set workload.steps_per_worker=1e15
has "work over the limit" err "quickstart.json: run 1 asks for 6.4e+17 key accesses (workload.steps_per_worker 1e+15 x 20 keys a step (reads_per_step + writes_per_step + samples_per_step) x cluster.nodes 8 x cluster.workers_per_node 4), over the limit of 1e+09 a run"
has "work over the limit" err "--force runs it anyway"
run "run: work over the limit" 1 timeout 60 "$PSLAB" run "$QS" --set workload.steps_per_worker=1e15 \
    --out "$TMP/huge"
has "run: work over the limit" err "nothing was run"
[ -e "$TMP/huge" ] && { echo "FAIL run: work over the limit: $TMP/huge was made"; failures=$((failures + 1)); }
run "work over the limit, --force" 0 "$PSLAB" check "$QS" --set workload.steps_per_worker=1e15 --force
has "work over the limit, --force" out "valid, 4 runs"
for spec in "$SRC"/experiments/specs/*.json "$SRC"/tests/specs/*.json; do
  run "check $(basename "$spec")" 0 "$PSLAB" check "$spec"
done

# A --set the sweep replaces in every run: a warning, and the spec stays valid.
run "--set under a sweep key" 0 "$PSLAB" check "$QS" --set policy.lookahead=5
has "--set under a sweep key" err "pslab: warning: --set policy.lookahead=5 has no effect: sweep[\"policy\"] replaces policy in every run"
has "--set under a sweep key" out "valid, 4 runs"
run "--set beside the sweep" 0 "$PSLAB" check "$QS" --set cluster.nodes=2
empty "--set beside the sweep" err

run "real backend" 0 "$PSLAB" check "$QS" --backend real
has "real backend" out "valid, 4 runs"
run "real backend, bad bind" 1 "$PSLAB" check "$QS" --backend real --set cluster.bind=nowhere
has "real backend, bad bind" err "cluster.bind: expected an IPv4 address of this machine"

run "run refuses a bad spec" 1 "$PSLAB" run "$TMP/bad.json" --out "$TMP/never"
has "run refuses a bad spec" err "nothing was run"
if [ -e "$TMP/never" ]; then
  echo "FAIL run refuses a bad spec: it created $TMP/never"
  failures=$((failures + 1))
fi

# --------------------------------------------------------------------- plot
mkdir -p "$TMP/res"
cat >"$TMP/res/spec.json" <<'EOF'
{"name": "handmade", "plots": [{"name": "tput", "x": "cluster.nodes", "y": "steps_per_s",
                                "series": "policy.type"}]}
EOF
for n in 2 4 8; do
  for p in static relocate; do
    printf '{"experiment":"handmade","run":1,"repeat":0,"seed":1,"backend":"sim","sweep":{"cluster.nodes":%d,"policy.type":"%s"},"config":{"cluster":{"nodes":%d},"policy":{"type":"%s"}},"metrics":{"steps_per_s":%d}}\n' \
      "$n" "$p" "$n" "$p" "$((n * ${#p}))" >>"$TMP/res/runs.jsonl"
  done
done
if command -v gnuplot >/dev/null 2>&1; then
  run "plot DIR" 0 "$PSLAB" plot "$TMP/res"
  if ! grep -q "<svg" "$TMP/res/tput.svg" 2>/dev/null; then
    echo "FAIL plot DIR: no $TMP/res/tput.svg"
    failures=$((failures + 1))
  fi
  if ! head -c 4 "$TMP/res/tput.png" 2>/dev/null | grep -q PNG; then
    echo "FAIL plot DIR: no $TMP/res/tput.png"
    failures=$((failures + 1))
  fi
else
  run "plot DIR (no gnuplot)" 3 "$PSLAB" plot "$TMP/res"
  has "plot DIR (no gnuplot)" err "is not installed"
fi
grep -q 'title "relocate"' "$TMP/res/tput.gp" || { echo "FAIL plot DIR: script"; failures=$((failures + 1)); }
run "plot missing DIR" 1 "$PSLAB" plot "$TMP/nowhere"
has "plot missing DIR" err "spec.json: cannot read"

# -------------------------------------------------------------------- merge
run "merge --help" 0 "$PSLAB" merge --help
for word in "usage: pslab merge [--out DIR]" "SHARD_DIR..." "--shard \$SLURM_ARRAY_TASK_ID/8" \
            "pslab merge --out results/x results/x/shard-*" "Exit status"; do
  has "merge --help" out "$word"
done
run "--help lists merge" 0 "$PSLAB" --help
has "--help lists merge" out "merge DIR..."
run "merge nothing" 2 "$PSLAB" merge
has "merge nothing" err "pslab merge: missing SHARD_DIR"
run "merge --set" 2 "$PSLAB" merge --set x=1 a b
has "merge --set" err "pslab merge: unknown option --set"

# Shards written by hand: a sweep of x over 1, 2, 3 (runs 1-3, seed 1).
shard() { # shard DIR SWEEP RUN...
  local dir=$1 sweep=$2
  shift 2
  mkdir -p "$dir"
  printf '{"name": "hm", "sweep": {"x": %s}}\n' "$sweep" >"$dir/spec.json"
  : >"$dir/runs.jsonl"
  for r in "$@"; do
    printf '{"experiment":"hm","run":%d,"repeat":0,"seed":1,"backend":"sim","sweep":{"x":%d},"config":{"name":"hm","x":%d},"metrics":{"time_s":%d}}\n' \
      "$r" "$r" "$r" "$r" >>"$dir/runs.jsonl"
  done
}
shard "$TMP/m/s1" "[1,2,3]" 1 3
shard "$TMP/m/s2" "[1,2,3]" 2
shard "$TMP/m/s3" "[1,2]" 2
run "merge shards" 0 "$PSLAB" merge --out "$TMP/m" "$TMP/m/s2" "$TMP/m/s1"
has "merge shards" err "pslab merge: 3 of the experiment's 3 runs from 2 directories"
has "merge shards" out "time_s"
[ "$(grep -o '"run":[0-9]*' "$TMP/m/runs.jsonl" | tr '\n' ' ')" = '"run":1 "run":2 "run":3 ' ] ||
  { echo "FAIL merge shards: runs.jsonl not in run order"; cat "$TMP/m/runs.jsonl"; failures=$((failures + 1)); }
[ -s "$TMP/m/summary.csv" ] || { echo "FAIL merge shards: no summary.csv"; failures=$((failures + 1)); }
run "merge, runs missing" 1 "$PSLAB" merge --out "$TMP/m2" "$TMP/m/s2"
has "merge, runs missing" err "pslab merge: warning: runs 1, 3 of the experiment's 3 are in none of the directories"
run "merge, different specs" 1 "$PSLAB" merge --out "$TMP/m3" "$TMP/m/s1" "$TMP/m/s2" "$TMP/m/s3"
has "merge, different specs" err "$TMP/m/s3/spec.json is not the spec of $TMP/m/s1/spec.json"
[ ! -e "$TMP/m3" ] || { echo "FAIL merge, different specs: wrote $TMP/m3"; failures=$((failures + 1)); }
run "merge into a shard" 1 "$PSLAB" merge --out "$TMP/m/s1/" "$TMP/m/s1" "$TMP/m/s2"
has "merge into a shard" err "is one of the directories to merge ($TMP/m/s1)"

# calibrate: help, usage, a quick real calibration whose profile a spec includes.
run "calibrate --help" 0 "$PSLAB" calibrate --help
has "calibrate --help" out "cluster profile"
run "calibrate, bad option" 2 "$PSLAB" calibrate --slow
run "calibrate, unwritable" 1 "$PSLAB" calibrate --quick --out "$TMP/no/such/dir/c.json"
has "calibrate, unwritable" err "is not a writable directory"
run "calibrate --quick" 0 "$PSLAB" calibrate --quick --out "$TMP/cal.json"
has "calibrate --quick" out "round trip, 1 key of 1 float"
has "calibrate --quick" out "wrote $TMP/cal.json"
cat >"$TMP/with-profile.json" <<EOF
{"name": "p", "cluster": {"nodes": 2, "profile": "cal.json"},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 5}, "policy": {"type": "static"}}
EOF
run "check a spec with the profile" 0 "$PSLAB" check "$TMP/with-profile.json"
has "check a spec with the profile" out "valid, 1 run"
# A workload's step cost: its spec on one node of one worker, 5 runs a
# backend; the profile written with it, its record and its note; the runs kept.
run "calibrate --workload" 0 "$PSLAB" calibrate --workload "$TMP/with-profile.json" \
  --profile "$TMP/cal.json" --out "$TMP/wl.json"
has "calibrate --workload" out "5 real runs of 5 steps"
has "calibrate --workload" out "wrote $TMP/wl.json"
grep -q '"step_s":' "$TMP/wl.json" && grep -q '"per_step_s":' "$TMP/wl.json" &&
  grep -q 'cost.step_s belongs to the workload of' "$TMP/wl.json" &&
  [ -s "$TMP/wl.runs/validate.jsonl" ] || { echo "FAIL calibrate --workload: profile"; failures=$((failures + 1)); }
# Derived again from the same real runs under a changed model: the real
# records stay as they were, the change is recorded, and the figures move by
# exactly what the change takes off the simulated CPU (on one node every
# access is local: local_per_key_s x each run's accesses / steps; summed over
# the runs, as the record keeps their figures sorted).
cp "$TMP/wl.runs/real/runs.jsonl" "$TMP/wl-real-before.jsonl"
cp "$TMP/wl.json" "$TMP/wl-before.json"
run "calibrate --workload --reuse-real" 0 "$PSLAB" calibrate --workload "$TMP/with-profile.json" \
  --profile "$TMP/cal.json" --out "$TMP/wl.json" --reuse-real --set cluster.cost.local_per_key_s=0
has "calibrate --workload --reuse-real" out "simulated against the real runs already there"
cmp -s "$TMP/wl.runs/real/runs.jsonl" "$TMP/wl-real-before.jsonl" ||
  { echo "FAIL calibrate --workload --reuse-real: the real runs changed"; failures=$((failures + 1)); }
numbers() { tr -d ' \t\n' <"$1" | grep -o "\"$2\":[0-9][0-9.e-]*" | cut -d: -f2; }
per_step() { tr -d ' \t\n' <"$1" | grep -o '"per_step_s":\[[^]]*\]' | head -1 | sed 's/.*\[//; s/\]//' | tr , '\n'; }
{ numbers "$TMP/cal.json" local_per_key_s | head -1; numbers "$TMP/wl.json" steps | head -1
  numbers "$TMP/wl.runs/sim/runs.jsonl" accesses | paste -sd' '
  per_step "$TMP/wl-before.json" | paste -sd' '; per_step "$TMP/wl.json" | paste -sd' '; } | awk '
  NR == 1 { k = $1 } NR == 2 { steps = $1 } NR == 3 { for (i = 1; i <= NF; i++) acc += $i; runs = NF }
  NR == 4 { for (i = 1; i <= NF; i++) before += $i; nb = NF }
  NR == 5 { for (i = 1; i <= NF; i++) after += $i; na = NF }
  END { want = k * acc / steps
        exit !(runs == 5 && nb == 5 && na == 5 && want > 0 && (after - before - want) ^ 2 < (1e-6 * want) ^ 2) }' ||
  { echo "FAIL calibrate --workload --reuse-real: the figures did not move by local_per_key_s x accesses / steps"; failures=$((failures + 1)); }
tr -d ' \t\n' <"$TMP/wl.json" | grep -q '"sets":\["cluster.cost.local_per_key_s=0"\],"real_runs_reused":true' ||
  { echo "FAIL calibrate --workload --reuse-real: the change is not recorded"; failures=$((failures + 1)); }
# Real runs of another spec are refused, the profile left as it was.
cp "$TMP/wl.json" "$TMP/wl-kept.json"
cat >"$TMP/two-policies.json" <<EOF
{"name": "p", "cluster": {"nodes": 2, "profile": "cal.json"},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 5}, "policy": {"type": "static"},
 "sweep": {"policy": [{"type": "static"}, {"type": "relocate"}]}}
EOF
run "calibrate --workload --reuse-real, other runs" 1 "$PSLAB" calibrate --workload "$TMP/two-policies.json" \
  --profile "$TMP/cal.json" --out "$TMP/wl.json" --reuse-real -q
has "calibrate --workload --reuse-real, other runs" err "holds none of a policy's (named above) real runs to compare"
cmp -s "$TMP/wl.json" "$TMP/wl-kept.json" ||
  { echo "FAIL calibrate --workload --reuse-real, other runs: the profile changed"; failures=$((failures + 1)); }
# A spec that uses those figures without the change is warned; with it, not.
sed 's/"cal.json"/"wl.json"/' "$TMP/with-profile.json" >"$TMP/changed-wl.json"
run "step figures of a changed model" 0 "$PSLAB" check "$TMP/changed-wl.json"
has "step figures of a changed model" err "its step figures were measured with --set cluster.cost.local_per_key_s=0"
run "step figures of a changed model, the change made" 0 "$PSLAB" check "$TMP/changed-wl.json" \
  --set cluster.cost.local_per_key_s=0
lacks "step figures of a changed model, the change made" err "step figures were measured with"
run "calibrate --workload --set of the layout" 1 "$PSLAB" calibrate --workload "$TMP/with-profile.json" \
  --profile "$TMP/cal.json" --out "$TMP/wl3.json" --set cluster.nodes=2
has "calibrate --workload --set of the layout" err "--set cluster.nodes=2: --workload measures on one node"
[ -e "$TMP/wl3.json" ] && { echo "FAIL calibrate --workload --set of the layout: wrote a profile"; failures=$((failures + 1)); }
run "calibrate --set without --workload" 2 "$PSLAB" calibrate --quick --set cluster.nodes=2
has "calibrate --set without --workload" err "--set goes with --workload"
# Under each policy of the spec's sweep: static's figure is step_s, the
# others' step_s_by_policy, each with its runs' record.
cat >"$TMP/by-policy.json" <<EOF
{"name": "p", "cluster": {"nodes": 2, "profile": "cal.json"},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 5}, "policy": {"type": "static"},
 "sweep": {"policy": [{"type": "static"}, {"type": "relocate", "lookahead": 2}, {"type": "relocate"}]}}
EOF
run "calibrate --workload, policies" 0 "$PSLAB" calibrate --workload "$TMP/by-policy.json" \
  --profile "$TMP/cal.json" --out "$TMP/wlp.json"
has "calibrate --workload, policies" out "under 2 policies"
has "calibrate --workload, policies" out "step_s_by_policy relocate:"
tr -d ' \t\n' <"$TMP/wlp.json" | grep -q '"step_s_by_policy":{"relocate":[0-9.e-]*}' &&
  tr -d ' \t\n' <"$TMP/wlp.json" | grep -q '"by_policy":{"relocate":{"per_step_s":\[[^]]*\]' ||
  { echo "FAIL calibrate --workload, policies: profile"; failures=$((failures + 1)); }
# A run charges its policy type's step figure in place of step_s: relocate's
# 10 steps at 1 ms more CPU than static's.
cat >"$TMP/by-policy-sim.json" <<EOF
{"name": "bp", "cluster": {"nodes": 2, "cost": {"step_s_by_policy": {"relocate": "1ms"}}},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 5}, "policy": {"type": "static"},
 "sweep": {"policy": [{"type": "static"}, {"type": "relocate"}]}}
EOF
run "step_s_by_policy charged" 0 "$PSLAB" run "$TMP/by-policy-sim.json" --out "$TMP/bp" --quiet
grep -o '"cpu_s":[0-9.e-]*' "$TMP/bp/runs.jsonl" | cut -d: -f2 | paste -sd' ' |
  awk '{ d = $2 - $1; exit !(d > 0.0099 && d < 0.0101) }' ||
  { echo "FAIL step_s_by_policy charged: relocate's CPU is not static's plus 10 ms"; failures=$((failures + 1)); }
# A spec of another workload warned of that profile's step_s; the measured one not.
sed 's/"step_s":[^,}]*/"step_s": 1e-06/' "$TMP/wl.json" >"$TMP/wl1.json"
sed 's/"cal.json"/"wl1.json"/' "$TMP/with-profile.json" >"$TMP/same-wl.json"
sed 's/"cal.json"/"wl1.json"/; s/"keys": 100/"keys": 101/' "$TMP/with-profile.json" >"$TMP/other-wl.json"
run "a profile's step_s, the same workload" 0 "$PSLAB" check "$TMP/same-wl.json"
lacks "a profile's step_s, the same workload" err "measured for another workload"
run "a profile's step_s, another workload" 0 "$PSLAB" check "$TMP/other-wl.json"
has "a profile's step_s, another workload" err "cost.step_s (1e-06 s a step) was measured for another workload"
sed 's/"cal.json"/"wlp.json"/; s/"keys": 100/"keys": 101/' "$TMP/by-policy.json" >"$TMP/other-wlp.json"
run "a profile's step figures by policy, another workload" 0 "$PSLAB" check "$TMP/other-wlp.json"
has "a profile's step figures by policy, another workload" err "cost.step_s_by_policy was measured for another workload"
run "calibrate --workload without --profile" 2 "$PSLAB" calibrate --workload "$TMP/with-profile.json"
has "calibrate --workload without --profile" err "--workload and --profile go together"
run "calibrate --workload, a missing spec" 1 "$PSLAB" calibrate --workload "$TMP/none.json" \
  --profile "$TMP/cal.json" --out "$TMP/wl2.json" -q
has "calibrate --workload, a missing spec" err "none.json: cannot read"
[ -e "$TMP/wl2.json" ] && { echo "FAIL calibrate --workload, a missing spec: wrote a profile"; failures=$((failures + 1)); }

# keygen and authentication: a 0600 key file, never overwritten; the spec's
# cluster.auth checked against cluster.bind; a node refuses a key file others
# may read (it fails at its start, before any traffic).
run "keygen --help" 0 "$PSLAB" keygen --help
has "keygen --help" out "usage: pslab keygen --out FILE"
run "--help lists keygen" 0 "$PSLAB" --help
has "--help lists keygen" out "keygen"
run "keygen without --out" 2 "$PSLAB" keygen
run "keygen" 0 "$PSLAB" keygen --out "$TMP/cluster.key"
mode=$(stat -c %a "$TMP/cluster.key")
[ "$mode" = 600 ] || { echo "FAIL keygen: mode $mode, expected 600"; failures=$((failures + 1)); }
grep -q '^secret ' "$TMP/cluster.key" || { echo "FAIL keygen: no secret line"; failures=$((failures + 1)); }
cp -p "$TMP/cluster.key" "$TMP/before.key"
run "keygen over an existing file" 1 "$PSLAB" keygen --out "$TMP/cluster.key"
has "keygen over an existing file" err "never overwritten"
cmp -s "$TMP/cluster.key" "$TMP/before.key" || { echo "FAIL keygen: overwrote a key"; failures=$((failures + 1)); }
cat >"$TMP/auth.json" <<EOF
{"name": "auth", "backend": "real", "cluster": {"nodes": 1, "timeout_s": 5},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 5}, "policy": {"type": "static"}}
EOF
run "auth none beyond loopback" 1 "$PSLAB" check "$TMP/auth.json" --set 'cluster.bind="*"' \
    --set cluster.auth=none
has "auth none beyond loopback" err 'cluster.auth: expected "auto" or "curve" with cluster.bind "*"'
run "auth insecure beyond loopback" 0 "$PSLAB" check "$TMP/auth.json" --set 'cluster.bind="*"' \
    --set cluster.auth=insecure
has "auth insecure beyond loopback" err 'warning: cluster.auth is "insecure" with cluster.bind "*"'
run "auth none on loopback" 0 "$PSLAB" check "$TMP/auth.json" --set cluster.auth=none
run "auth bad value" 1 "$PSLAB" check "$TMP/auth.json" --set cluster.auth=yes
has "auth bad value" err "cluster.auth"
# A named key file that is not there is an error, on loopback too (where
# no key is needed); the message names it.
run "missing cluster.key_file" 1 "$PSLAB" check "$TMP/auth.json" \
    --set cluster.key_file="$TMP/no.key"
has "missing cluster.key_file" err "cluster.key_file: $TMP/no.key: cannot read: No such file or directory"
PSLAB_RANK=0 PSLAB_SIZE=1 run "node with a missing --key-file" 1 timeout 60 "$PSLAB" node \
    "$TMP/auth.json" --key-file "$TMP/no.key" --out "$TMP/no-key-out" -q
has "node with a missing --key-file" err "cluster.key_file: $TMP/no.key: cannot read: No such file or directory"
cp "$TMP/cluster.key" "$TMP/open.key"
chmod 644 "$TMP/open.key"
PSLAB_RANK=0 PSLAB_SIZE=1 run "node refuses a readable key file" 1 "$PSLAB" node "$TMP/auth.json" \
    --set cluster.auth=curve --key-file "$TMP/open.key" --out "$TMP/auth-out" -q
grep -q 'group or others may read or write it (mode 0644)' "$TMP/auth-out/runs.jsonl" ||
  { echo "FAIL node refuses a readable key file: no such error in runs.jsonl"; failures=$((failures + 1)); }
if (cd "$TMP" && PSLAB_RANK=0 PSLAB_SIZE=1 "$PSLAB" node auth.json --set cluster.auth=curve \
    --key-file cluster.key --out auth-ok -q) >"$TMP/out" 2>"$TMP/err"; then
  echo "ok   node with a 0600 key file given relative to the current directory"
else
  echo "FAIL node with a 0600 key file"
  sed 's/^/  err| /' "$TMP/err"
  failures=$((failures + 1))
fi

if [ "$failures" -ne 0 ]; then
  echo "it_cli: $failures failure(s)"
  exit 1
fi
echo "it_cli: all passed"
