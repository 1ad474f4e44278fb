#!/usr/bin/env bash
# The `pslab` command line: help texts, usage errors (exit 2), `check` on good
# and bad specs (exit 0 / 1, the messages), and `plot DIR` on a results
# directory written by hand. Runs no simulation: that is it_run's business.
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
for word in "--out DIR" "--set PATH=VALUE" "--backend" "--quiet" "runs.jsonl" \
            "summary.csv" "Exit status" "README.md"; do
  has "run --help" out "$word"
done
run "check -h" 0 "$PSLAB" check -h
has "check -h" out "valid, N runs"
run "plot --help" 0 "$PSLAB" plot --help
has "plot --help" out "usage: pslab plot DIR"

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

# -------------------------------------------------------------------- check
QS="$SRC/experiments/specs/quickstart.json"
run "check quickstart" 0 "$PSLAB" check "$QS"
has "check quickstart" out "quickstart.json: valid, 4 runs"
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

if [ "$failures" -ne 0 ]; then
  echo "it_cli: $failures failure(s)"
  exit 1
fi
echo "it_cli: all passed"
