#!/usr/bin/env bash
# Stages through the `pslab` command: a two-stage spec on the real backend
# (its nodes forked on loopback) and on the simulator, every step of each
# stage run once with its workers and every push conserved; and a stage with
# "workers": "auto" on the real backend, resolved by the scheduler before
# the nodes start (the choice and its estimates in runs.jsonl). Every
# command is bounded by `timeout`; nothing sleeps.
# CTest sets PSLAB (the binary).
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
TMP=$(mktemp -d /tmp/pslab-it-stages.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
BOUND=$((120 * ${PSLAB_TEST_TIME_SCALE:-1})) # times the slow builds' scale (tests/CMakeLists.txt)

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

run() {
  local name=$1
  shift
  if ! timeout "$BOUND" "$@" >"$TMP/out" 2>"$TMP/err"; then
    fail "$name: exit status $?"
    sed 's/^/  out| /' "$TMP/out"
    sed 's/^/  err| /' "$TMP/err"
    return 1
  fi
  echo "ok   $name"
}

has() { # has NAME FILE TEXT
  if ! grep -qF -- "$3" "$2"; then
    fail "$1: $2 lacks: $3"
    sed "s/^/  | /" "$2"
  fi
}

# conserved NAME FILE: the one record's pushed floats are all in the values.
conserved() {
  local ok
  ok=$(awk '/"metrics":\{/ && !/"error"/ {
      p = $0; sub(/.*"pushed_floats":/, "", p); sub(/[,}].*/, "", p)
      v = $0; sub(/.*"value_sum":/, "", v); sub(/[,}].*/, "", v)
      if (index($0, "\"value_sum\":") && p == v && p > 0) n++ }
    END { print n + 0 }' "$2")
  [ "$ok" -eq 1 ] || { fail "$1: pushes not conserved"; cat "$2"; }
}

cat >"$TMP/two.json" <<'SPEC'
{"name": "two", "seed": 4,
 "cluster": {"nodes": 2, "workers_per_node": 2, "timeout_s": 60},
 "workload": {"type": "zipf", "keys": 2000, "value_length": 8, "reads_per_step": 5,
              "writes_per_step": 5, "steps_per_worker": 200},
 "policy": {"type": "relocate", "lookahead": 4},
 "stages": [{"workers": 4, "steps": 200}, {"workers": 1, "steps": 50,
             "consistency": {"model": "bsp"}}]}
SPEC

for backend in real sim; do
  if run "two stages on the $backend backend" "$PSLAB" run "$TMP/two.json" --backend "$backend" \
    --out "$TMP/$backend" --quiet; then
    f="$TMP/$backend/runs.jsonl"
    has "$backend stage 0" "$f" '{"stage":0,"workers":4,"steps":200,'
    has "$backend stage 1" "$f" '{"stage":1,"workers":1,"steps":50,'
    has "$backend steps" "$f" '"steps":250,'
    has "$backend backend" "$f" "\"backend\":\"$backend\""
    conserved "$backend" "$f"
  fi
done

# auto on the real backend: the simulator decides, the nodes run the count.
sed 's/"workers": 1, "steps": 50,/"workers": "auto", "steps": 50,/' "$TMP/two.json" >"$TMP/auto.json"
if run "auto on the real backend" "$PSLAB" run "$TMP/auto.json" --backend real \
  --out "$TMP/auto" --quiet; then
  f="$TMP/auto/runs.jsonl"
  has "auto record" "$f" '"auto":{"candidates":[1,2,4],"prefix_steps":['
  has "auto chosen" "$f" '"chosen":'
  has "auto config keeps auto" "$f" '"workers":"auto"'
  conserved "auto" "$f"
  chosen=$(grep -o '"chosen":[0-9]*' "$f" | head -1 | cut -d: -f2)
  has "auto ran the chosen count" "$f" "{\"stage\":1,\"workers\":$chosen,\"steps\":50,"
fi

# A backend is never handed "auto", and pslab check names a bad stage.
cat >"$TMP/bad.json" <<'SPEC'
{"name": "bad", "cluster": {"nodes": 2},
 "workload": {"type": "zipf", "keys": 100, "steps_per_worker": 10},
 "policy": {"type": "static"}, "stages": [{"workers": 3, "steps": 10}]}
SPEC
if timeout "$BOUND" "$PSLAB" check "$TMP/bad.json" >"$TMP/out" 2>"$TMP/err"; then
  fail "check accepted 3 workers on 2"
else
  has "check names the path" "$TMP/err" 'stages[0].workers: expected an integer from 1 to 2'
  echo "ok   check refuses a bad stage"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
