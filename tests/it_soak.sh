#!/usr/bin/env bash
# The soak script (scripts/soak.sh) in small: a dozen runs on both backends
# pass every check; the same seed makes the same specs; a pslab that breaks
# conservation, drops a run's record or counts a duplicate (a wrapper in
# front of the real one) is reported as a violation with a spec that
# reproduces the run, and so is a run that never ends (the watchdog stops
# it); the exit status says so; bad usage exits 2.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
SOAK=$SRC/scripts/soak.sh
TMP=$(mktemp -d /tmp/pslab-it-soak.XXXXXX)
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
  if ! grep -qE -- "$3" "$TMP/$2"; then
    echo "FAIL $1: $2 lacks: $3"
    sed "s/^/  $2| /" "$TMP/$2"
    failures=$((failures + 1))
  fi
}

# ------------------------------------------------------------ a clean soak
run "a clean soak" 0 env PSLAB="$PSLAB" bash "$SOAK" --runs 12 --real-share 0.25 --seed 3 \
  --out "$TMP/clean"
has "a clean soak" out "^soak: 12 runs in [0-9]+ s, 1 batches at once, 0 violations"
has "a clean soak" out "^sim .* 9 +[0-9.]+ +[0-9.]+$"
has "a clean soak" out "^real .* 3 +[0-9.]+ +[0-9.]+$"
mkdir -p "$TMP/again"
awk -v seed=3 -v sim=9 -v real=3 -v dir="$TMP/again" -f "$SRC/scripts/soak-spec.awk" >/dev/null
if diff -r "$TMP/clean/specs" "$TMP/again" >/dev/null; then
  echo "ok   the same seed makes the same specs"
else
  echo "FAIL the same seed makes other specs"
  failures=$((failures + 1))
fi

# ---------------------------------------- a pslab that breaks what must hold
cat >"$TMP/fake-pslab" <<'EOF'
#!/usr/bin/env bash
# The real pslab, then its first record broken as $FAKE says; or a first
# run that never ends.
[ "$FAKE" = hang ] && exec sleep 600
"$REAL_PSLAB" "$@"
rc=$?
while [ $# -gt 0 ] && [ "$1" != --out ]; do shift; done
jsonl=$2/runs.jsonl
case $FAKE in
  value) sed -i '1s/"value_sum":/"value_sum":1/' "$jsonl" ;;
  drop) sed -i '1d' "$jsonl" ;;
  duplicate) sed -i '1s/"metrics":{/"metrics":{"duplicates":2,/' "$jsonl" ;;
esac
exit $rc
EOF
chmod +x "$TMP/fake-pslab"
soak_with() {
  env PSLAB="$TMP/fake-pslab" REAL_PSLAB="$PSLAB" FAKE=$1 bash "$SOAK" --runs 4 --real-share 0 \
    --seed 5 --out "$TMP/$1"
}
run "a lost push" 1 soak_with value
has "a lost push" out "^soak: 4 runs in .* 1 violations"
has "a lost push" out "^violation: b0001-sim run 1 \(seed [0-9]+, sim, static, [a-z]+\): value_sum 1[0-9]+ != pushed_floats [0-9]+ \(pushes lost or doubled\); reproduce: pslab run $TMP/value/repro/b0001-sim-run1.json \(or pslab run $TMP/value/specs/b0001-sim.json --shard 1/4\)"
run "the reproducing spec is a valid spec of one run" 0 "$PSLAB" check "$TMP/value/repro/b0001-sim-run1.json"
has "the reproducing spec is a valid spec of one run" out "valid, 1 run"

run "a run missing" 1 soak_with drop
has "a run missing" out "^violation: b0001-sim: 3 of its 4 runs recorded \(pslab exit status 0\); reproduce: pslab run $TMP/drop/specs/b0001-sim.json"

run "a duplicate counted" 1 soak_with duplicate
has "a duplicate counted" out "^violation: b0001-sim run 1 .*: duplicates 2;"

export SOAK_WATCHDOG_S=1
run "a run that never ends" 1 soak_with hang
unset SOAK_WATCHDOG_S
has "a run that never ends" out "^violation: b0001-sim: 0 of its 4 runs recorded \(killed after 1 s: run 1 never ended\); reproduce: pslab run $TMP/hang/specs/b0001-sim.json --shard 1/4"

# ------------------------------------------------------------- bad usage
run "runs not a number" 2 bash "$SOAK" --runs many
has "runs not a number" err "soak.sh: --runs: expected a whole number, found 'many'"
run "a share above 1" 2 bash "$SOAK" --real-share 1.5
has "a share above 1" err "soak.sh: --real-share: expected a share in \[0, 1\], found '1.5'"
run "no pslab" 2 env PSLAB="$TMP/none" bash "$SOAK" --runs 1
has "no pslab" err "soak.sh: no pslab at $TMP/none"
mkdir -p "$TMP/precious" && touch "$TMP/precious/file"
run "an --out that is not a soak's" 2 env PSLAB="$PSLAB" bash "$SOAK" --runs 1 --out "$TMP/precious"
has "an --out that is not a soak's" err "soak.sh: --out: $TMP/precious holds something other than a soak's results: not emptying it"
[ -f "$TMP/precious/file" ] || { echo "FAIL an --out that is not a soak's: emptied"; failures=$((failures + 1)); }
run "help" 0 bash "$SOAK" --help
has "help" out "^Usage: scripts/soak.sh"

if [ "$failures" -ne 0 ]; then
  echo "it_soak: $failures failure(s)"
  exit 1
fi
echo "it_soak: all passed"
