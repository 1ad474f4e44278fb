#!/usr/bin/env bash
# `pslab validate` end to end on tests/specs/tiny_validate.json (2 nodes,
# two policies, 2 repeats): DIR/sim and DIR/real written as `pslab run`
# writes them, with the same seeds run by run; validate.jsonl and
# validate.csv with their documented fields (the telemetry compared, a
# largest gap per point); the table, the summary and the progress prefixes; the default repeats (at least 3) and --repeats 1 (n/a);
# --netns through a stand-in for scripts/netns-cluster.sh (the same
# interface, given by PSLAB_NETNS_SCRIPT, running `pslab node` per node
# without namespaces); --profile (skipped, saying so, while the spec format
# has no cluster.profile); and the errors: a missing spec, --netns with
# node counts that differ or without its script, a bad --repeats. Nothing
# asserts on how large an error is (real timings are noisy). Every command
# is bounded by `timeout`; nothing sleeps.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
SPEC="$SRC/tests/specs/tiny_validate.json"
TMP=$(mktemp -d /tmp/pslab-it-validate.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
BOUND=$((300 * ${PSLAB_TEST_TIME_SCALE:-1})) # seconds any one command may take

# Drawings need gnuplot: without it, a validation that ran every run ends 3.
if command -v gnuplot >/dev/null 2>&1; then DRAWN=0; else DRAWN=3; fi

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# run NAME WANT_STATUS CMD...: runs CMD (bounded), output in $TMP/out, $TMP/err.
run() {
  local name=$1 want=$2
  shift 2
  timeout "$BOUND" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit status $got, expected $want"
    sed 's/^/  out| /' "$TMP/out"
    sed 's/^/  err| /' "$TMP/err"
    return 1
  fi
  echo "ok   $name"
}

# has NAME FILE TEXT: FILE ($TMP/out, $TMP/err or a path) contains TEXT.
has() {
  local f=$2
  [ -e "$f" ] || f="$TMP/$2"
  if ! grep -qF -- "$3" "$f"; then
    fail "$1: $2 lacks: $3"
    sed "s/^/  | /" "$f"
  fi
}

# lines FILE: its number of lines (0 when missing).
lines() { if [ -e "$1" ]; then wc -l <"$1"; else echo 0; fi; }

# side NAME DIR BACKEND COUNT: DIR is a results directory of COUNT
# successful runs of BACKEND, as `pslab run` writes one.
side() {
  local name=$1 dir=$2 backend=$3 count=$4
  local f="$dir/runs.jsonl"
  [ "$(lines "$f")" -eq "$count" ] || fail "$name: $(lines "$f") records in $f, expected $count"
  [ "$(grep -c "\"backend\":\"$backend\"" "$f")" -eq "$count" ] ||
    fail "$name: not every record of $f is of the $backend backend"
  ! grep -q '"error"' "$f" || fail "$name: a run failed in $f"
  for file in spec.json runs.csv summary.csv; do
    [ -s "$dir/$file" ] || fail "$name: no $dir/$file"
  done
  [ "$DRAWN" -ne 0 ] || [ -s "$dir/time.svg" ] || fail "$name: the spec's plot is not in $dir"
}

# seeds FILE: "run repeat seed" of each record, in run order.
seeds() {
  grep -o '"run":[0-9]*,"repeat":[0-9]*,"seed":[0-9]*' "$1" | sort -t: -k2 -n
}

# same_seeds NAME DIR: run k has the same repeat and seed on both sides.
same_seeds() {
  seeds "$2/sim/runs.jsonl" >"$TMP/seeds.sim"
  seeds "$2/real/runs.jsonl" >"$TMP/seeds.real"
  if [ -s "$TMP/seeds.sim" ] && cmp -s "$TMP/seeds.sim" "$TMP/seeds.real"; then
    echo "ok   $1: the same seeds on both backends"
  else
    fail "$1: the seeds differ"
    diff "$TMP/seeds.sim" "$TMP/seeds.real"
  fi
}

# fields NAME FILE KIND KEY...: every record of KIND in FILE has every KEY.
fields() {
  local name=$1 f=$2 kind=$3
  shift 3
  local bad
  bad=$(awk -v kind="\"kind\":\"$kind\"" -v keys="$*" '
    index($0, kind) { n = split(keys, k, " ")
      for (i = 1; i <= n; i++) if (!index($0, "\"" k[i] "\":")) { print k[i]; exit } }' "$f")
  [ -z "$bad" ] || fail "$name: a $kind record of $f lacks \"$bad\""
}

# ---------------------------------------------------------- the whole run
V="$TMP/v"
# With the wait estimated first (CTest turns the estimate off elsewhere):
# both sides together, then each, the real one from its simulated twin.
PSLAB_ESTIMATE_S=0.5 run "validate" "$DRAWN" "$PSLAB" validate "$SPEC" --repeats 2 --out "$V"
has "validate: estimate" err "of wall time for both sides:"
has "validate: estimate" err "pslab validate: sim: estimate: "
has "validate: estimate" err "pslab validate: real: estimate: "
has "validate: estimate" err "the simulator's prediction of each run's time plus its setup"
side "validate: sim side" "$V/sim" sim 4
side "validate: real side" "$V/real" real 4
same_seeds "validate" "$V"
has "validate: spec as run" "$V/real/spec.json" '"repeats":	2'
has "validate: spec as run" "$V/real/spec.json" '"backend":	"real"'
has "validate: spec as run" "$V/sim/spec.json" '"backend":	"sim"'

# validate.jsonl: per run (4) and per sweep point (2), each of the five
# metrics both backends report (zipf has no real math: no quality, loss or
# time to quality to compare) and the telemetry both report (8 of its 10:
# messages_per_wakeup only where the simulator counts its server's
# wake-ups, messages_per_io_wakeup only where it has I/O actors); then a largest gap per point; then the ranking of the two
# policies.
J="$V/validate.jsonl"
M=$((5 + 8 + $(grep -c '"messages_per_wakeup"' "$V/sim/runs.jsonl" | awk '{print ($1 > 0)}') +
  $(grep -c '"messages_per_io_wakeup"' "$V/sim/runs.jsonl" | awk '{print ($1 > 0)}')))
[ "$(grep -c '"kind":"run"' "$J")" -eq $((4 * M)) ] || fail "validate: $(grep -c '"kind":"run"' "$J") run records, expected 4 runs x $M metrics"
[ "$(grep -c '"kind":"point"' "$J")" -eq $((2 * M)) ] || fail "validate: $(grep -c '"kind":"point"' "$J") point records, expected 2 points x $M metrics"
[ "$(grep -c '"kind":"gap"' "$J")" -eq 2 ] || fail "validate: $(grep -c '"kind":"gap"' "$J") gap records, expected 2 points"
[ "$(lines "$J")" -eq $((6 * M + 3)) ] || fail "validate: $(lines "$J") lines in validate.jsonl, expected $((6 * M + 3))"
tail -n 1 "$J" | grep -q '^{"kind":"ranking","experiment":"tiny_validate","metric":"time_s","pairs":1,' ||
  fail "validate: the last record of validate.jsonl is not the ranking of one pair"
fields "validate.jsonl" "$J" ranking kind experiment metric pairs counted agree disagree \
  within_spread not_judged disagreeing
fields "validate.jsonl" "$J" run kind experiment point run repeat seed label sweep metric \
  sim real error within
fields "validate.jsonl" "$J" point kind experiment point label sweep metric runs compared \
  sim real real_min real_max real_spread error within
fields "validate.jsonl" "$J" gap kind experiment point label sweep metric sim real error gap
for m in time_s steps_per_s messages bytes local_ratio rt_p50_s rt_p99_s utilization \
         queue_p50 queue_p99 cpu_s cpu_per_message_s; do
  has "validate.jsonl: $m" "$J" "\"metric\":\"$m\""
done
has "validate.jsonl: labels" "$J" '"label":"relocate lookahead=5"'
grep -qE '"metric":"(quality|loss|time_to_quality_s)"' "$J" &&
  fail "validate.jsonl: a training metric compared for runs without real math"

# validate.csv: the header, a row per run and point record. With 2
# repeats, within is yes or no, or n/a for a metric whose 2 real runs at the
# point agree exactly (real_spread 0, third field from the end).
C="$V/validate.csv"
[ "$(head -n 1 "$C")" = "kind,point,run,repeat,seed,policy,label,metric,runs,compared,sim,real,real_min,real_max,real_spread,error,within" ] ||
  fail "validate.csv: header is $(head -n 1 "$C")"
[ "$(lines "$C")" -eq $((6 * M + 1)) ] || fail "validate.csv: $(lines "$C") lines, expected $((6 * M + 1))"
bad=$(awk -F, 'NR > 1 && $1 == "point" && $(NF-2) == 0 { flat[$2 "," $(NF-9)] = 1 }
  NR > 1 { row[NR] = $0; key[NR] = $2 "," $(NF-9); w[NR] = $NF }
  END { for (i = 2; i <= NR; i++)
          if (w[i] != "yes" && w[i] != "no" && !(w[i] == "n/a" && key[i] in flat)) {
            print row[i]; exit } }' "$C")
[ -z "$bad" ] || fail "validate.csv: within is neither yes nor no with 2 repeats: $bad"

# The drawing, the table and its summary, the progress of both sides.
[ -s "$V/validate.gp" ] || fail "validate: no validate.gp"
has "validate.gp" "$V/validate.gp" "plot x with lines"
if [ "$DRAWN" -eq 0 ]; then
  [ -s "$V/validate.svg" ] && [ -s "$V/validate.png" ] || fail "validate: validate.svg or .png not drawn"
else
  has "validate: no gnuplot" err "gnuplot is not installed"
fi
for word in policy runs metric sim real error within "median |error|" "max |error|" \
            "within spread" "relocate lookahead=5" "2/2" "ranking: " "largest gap: " \
            "cpu_per_message_s"; do
  has "validate: the table" out "$word"
done
[ "$(grep -c '^static ' "$TMP/out")" -eq 1 ] || fail "validate: not one row for the static point"
has "validate: progress" err "sim: [run 1/4]"
has "validate: progress" err "real: [run 4/4]"
has "validate: the end" err "4 runs on each backend, 0 failed"
grep -qF "[run" "$TMP/out" && fail "validate: progress on stdout"

# ---------------------------------------------------------- --reuse-real
# Only the simulated side runs again; the real records are the earlier
# run's, byte for byte, taken even under other simulator costs (which the
# real backend does not read), and refused for another workload.
cp "$V/real/runs.jsonl" "$TMP/real-before.jsonl"
compared=$(grep -c '"kind":"run"' "$V/validate.jsonl")
run "validate --reuse-real" "$DRAWN" "$PSLAB" validate "$SPEC" --repeats 2 --out "$V" \
  --reuse-real --set cluster.cost.per_message_s=1e-3
cmp -s "$V/real/runs.jsonl" "$TMP/real-before.jsonl" || fail "validate --reuse-real: the real runs changed"
has "validate --reuse-real" err "the real runs already in $V/real/ (--reuse-real)"
has "validate --reuse-real" err "sim: [run 4/4]"
grep -qF "real: [run" "$TMP/err" && fail "validate --reuse-real: a real run was made"
has "validate --reuse-real" err "4 runs on each backend, 0 failed"
[ "$(grep -c '"kind":"run"' "$V/validate.jsonl")" -eq "$compared" ] ||
  fail "validate --reuse-real: not every run compared as before"
run "validate --reuse-real, another network model" "$DRAWN" "$PSLAB" validate "$SPEC" --repeats 2 \
  --out "$V" --reuse-real -q --set 'cluster.network.model="latency_bandwidth"'
grep -qF "failed on the real backend" "$TMP/err" &&
  fail "validate --reuse-real, another network model: real runs not taken"
run "validate --reuse-real, another workload" 1 "$PSLAB" validate "$SPEC" --repeats 2 \
  --out "$V" --reuse-real -q --set workload.steps_per_worker=7
has "validate --reuse-real, another workload" err "run 1 (policy={type=static}) failed on the real backend"
run "validate --reuse-real, no real runs" 1 "$PSLAB" validate "$SPEC" --repeats 2 \
  --out "$TMP/nothing" --reuse-real -q
has "validate --reuse-real, no real runs" err "$TMP/nothing/real/runs.jsonl: No such file"
run "validate --reuse-real --netns" 2 "$PSLAB" validate "$SPEC" --reuse-real --netns
has "validate --reuse-real --netns" err "--reuse-real runs no real side"

# ---------------------------------------------------------- repeats
run "validate, default repeats" "$DRAWN" "$PSLAB" validate "$SPEC" --out "$TMP/d" \
  --set 'sweep.policy=[{"type": "static"}]'
has "validate, default repeats" err "3 repeats of each sweep point (the spec has 2)"
side "validate, default repeats: sim" "$TMP/d/sim" sim 3
side "validate, default repeats: real" "$TMP/d/real" real 3

run "validate --repeats 1" "$DRAWN" "$PSLAB" validate "$SPEC" --repeats 1 --out "$TMP/one" -q \
  --set 'sweep.policy=[{"type": "static"}]'
side "validate --repeats 1" "$TMP/one/real" real 1
bad=$(awk -F, 'NR > 1 && $NF != "n/a" { print; exit }' "$TMP/one/validate.csv")
[ -z "$bad" ] || fail "validate --repeats 1: within is not n/a with one run: $bad"
has "validate --repeats 1: the table" out "n/a"
[ "$DRAWN" -ne 0 ] || [ ! -s "$TMP/err" ] || { fail "validate -q: printed on stderr"; cat "$TMP/err"; }

# ---------------------------------------------------------- --netns
# A stand-in for scripts/netns-cluster.sh with its interface: it records its
# arguments, then runs one `pslab node` per node on loopback, meeting
# through a coordinator file, and exits with rank 0's status. Like the
# script, it gives every node its address (--set cluster.bind), so rank 0's
# records are not quite the spec's runs.
STUB="$TMP/netns-stub.sh"
cat >"$STUB" <<'EOF'
#!/usr/bin/env bash
echo "$@" >"$STUB_ARGS"
nodes='' pslab=''
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes=$2; shift 2 ;;
    --rate|--delay) shift 2 ;;
    --pslab) pslab=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "stub: unknown option $1" >&2; exit 2 ;;
  esac
done
spec=$1
shift
coord="$STUB_ARGS.coord"
pids=()
for ((r = 1; r < nodes; r++)); do
  PSLAB_RANK=$r PSLAB_SIZE=$nodes "$pslab" node "$spec" --set 'cluster.bind="127.0.0.1"' "$@" \
    --coordinator-file "$coord" >/dev/null 2>&1 &
  pids+=($!)
done
PSLAB_RANK=0 PSLAB_SIZE=$nodes "$pslab" node "$spec" --set 'cluster.bind="127.0.0.1"' "$@" \
  --coordinator-file "$coord"
status=$?
for p in "${pids[@]}"; do wait "$p"; done
exit $status
EOF
chmod +x "$STUB"
N="$TMP/netns"
run "validate --netns (stand-in script)" "$DRAWN" env PSLAB_NETNS_SCRIPT="$STUB" \
  STUB_ARGS="$TMP/stub.args" "$PSLAB" validate "$SPEC" --netns --rate 10mbit --repeats 2 \
  --out "$N" --set workload.steps_per_worker=50
side "validate --netns: sim side" "$N/sim" sim 4
side "validate --netns: real side" "$N/real" real 4
same_seeds "validate --netns" "$N"
has "validate --netns: the script's arguments" "$TMP/stub.args" "--nodes 2 --rate 10mbit --pslab /"
has "validate --netns: the script's arguments" "$TMP/stub.args" \
  " -- $(realpath "$SPEC") --set workload.steps_per_worker=50 --set repeats=2 --out $(realpath "$N")/real"
has "validate --netns: rank 0's progress" err "real: [run 1/4]"
[ "$(grep -c '"kind":"point"' "$N/validate.jsonl")" -eq $((2 * M)) ] ||
  fail "validate --netns: not $((2 * M)) point records"

# A real side that fails: every run is named, the comparison is still
# written (empty), and the exit status is 1.
cat >"$TMP/failing.sh" <<'EOF'
#!/usr/bin/env bash
echo "stub: no namespaces here" >&2
exit 1
EOF
chmod +x "$TMP/failing.sh"
run "validate --netns, the real side fails" 1 env PSLAB_NETNS_SCRIPT="$TMP/failing.sh" \
  "$PSLAB" validate "$SPEC" --netns --repeats 2 --out "$TMP/f"
has "validate, the real side fails" err "real: stub: no namespaces here"
has "validate, the real side fails" err "exited with status 1"
for k in 1 2 3 4; do
  has "validate, the real side fails" err "run $k ("
done
has "validate, the real side fails" err "failed on the real backend: it has no record in runs.jsonl"
has "validate, the real side fails" err "4 runs on each backend, 4 failed"
has "validate, the real side fails" out "nothing to compare"
side "validate, the real side fails: sim side" "$TMP/f/sim" sim 4
[ -e "$TMP/f/validate.jsonl" ] && [ "$(lines "$TMP/f/validate.jsonl")" -eq 0 ] ||
  fail "validate, the real side fails: validate.jsonl is not there and empty"

# ---------------------------------------------------------- --profile
# --profile FILE is --set cluster.profile="<FILE made absolute>"; the spec
# format gets cluster.profile from `pslab calibrate`'s branch. Until then
# the parser refuses the key, and only the refusal is checked.
echo '{"host_speed": "1Gf"}' >"$TMP/profile.json"
if "$PSLAB" check "$SPEC" --set "cluster.profile=\"$TMP/profile.json\"" >/dev/null 2>"$TMP/check.err"; then
  run "validate --profile" "$DRAWN" bash -c "cd '$TMP' && '$PSLAB' validate '$SPEC' \
    --profile profile.json --repeats 1 --out '$TMP/prof' -q --set 'sweep.policy=[{\"type\": \"static\"}]'"
  has "validate --profile: made absolute" "$TMP/prof/sim/spec.json" "\"$TMP/profile.json\""
  has "validate --profile: made absolute" "$TMP/prof/real/spec.json" "\"$TMP/profile.json\""
else
  echo "SKIP validate --profile: the spec format has no cluster.profile yet ($(head -n 1 "$TMP/check.err")); this check runs once it has"
  run "validate --profile, refused by the spec" 1 "$PSLAB" validate "$SPEC" --profile "$TMP/profile.json"
  has "validate --profile, refused by the spec" err "cluster.profile"
  has "validate --profile, refused by the spec" err "nothing was run"
fi
run "validate --profile without FILE" 2 "$PSLAB" validate "$SPEC" --profile
has "validate --profile without FILE" err "missing value after --profile"

# ---------------------------------------------------------- errors
run "validate: missing spec" 1 "$PSLAB" validate "$TMP/nope.json" --out "$TMP/e1"
has "validate: missing spec" err "nope.json"
has "validate: missing spec" err "nothing was run"
[ ! -e "$TMP/e1" ] || fail "validate: missing spec: $TMP/e1 was made"
run "validate: no spec" 2 "$PSLAB" validate
has "validate: no spec" err "missing SPEC"

run "validate --netns, node counts differ" 1 env PSLAB_NETNS_SCRIPT="$STUB" "$PSLAB" validate \
  "$SPEC" --netns --set 'sweep.cluster.nodes=[2,3]' --out "$TMP/e2"
has "validate --netns, node counts differ" err "every run needs the same cluster.nodes"
has "validate --netns, node counts differ" err "nothing was run"
[ ! -e "$TMP/e2" ] || fail "validate --netns, node counts differ: something ran"
run "validate --netns, no script" 1 env PSLAB_NETNS_SCRIPT="$TMP/none.sh" "$PSLAB" validate \
  "$SPEC" --netns --out "$TMP/e3"
has "validate --netns, no script" err "$TMP/none.sh: no such file"
[ ! -e "$TMP/e3" ] || fail "validate --netns, no script: something ran"

for bad in 0 -1 abc 2x 1000001 ""; do
  run "validate --repeats '$bad'" 2 "$PSLAB" validate "$SPEC" --repeats "$bad"
  has "validate --repeats '$bad'" err "--repeats must be an integer from 1 to 1000000"
done
run "validate --repeats without N" 2 "$PSLAB" validate "$SPEC" --repeats
has "validate --repeats without N" err "missing value after --repeats"
run "validate --rate without --netns" 2 "$PSLAB" validate "$SPEC" --rate 1gbit
has "validate --rate without --netns" err "--rate shapes the links of --netns"
run "validate --shard (not its option)" 2 "$PSLAB" validate "$SPEC" --shard 1/2

# ---------------------------------------------------------- help
run "validate --help" 0 "$PSLAB" validate --help
for word in "usage: pslab validate SPEC" --profile --repeats --netns --rate --reuse-real "validate.jsonl" \
            "validate.csv" "validate.svg" "Exit status" "docs/fidelity.md"; do
  has "validate --help" out "$word"
done
run "--help lists validate" 0 "$PSLAB" --help
has "--help lists validate" out "validate SPEC"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all passed"
