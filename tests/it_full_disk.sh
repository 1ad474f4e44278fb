#!/usr/bin/env bash
# A results directory on a full disk: `pslab run` into a small tmpfs, too
# small for the experiment's records. The record the disk refuses stops the
# experiment: no run starts after it, the exit status is 1, the last line
# says it stopped, why, and how many runs runs.jsonl holds; runs.jsonl holds
# whole lines only, and runs.csv and summary.csv, where they are, are what
# runs.jsonl gives (`pslab merge` of the directory makes them again
# elsewhere: they must be the same). Needs root to mount the tmpfs; skipped
# (exit 0, with a message) where that cannot be done.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-full-disk.XXXXXX)
DISK=$TMP/disk
mkdir -p "$DISK"
cleanup() {
  mountpoint -q "$DISK" && umount "$DISK"
  rm -rf "$TMP"
}
trap cleanup EXIT
failures=0

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

# 32 KiB: eight pages, one the spec's; a record takes about 2.4 KiB, so
# runs.jsonl is refused some ten records in (fewer while runs.csv and
# summary.csv take pages of their own), well before the 24th.
if ! mount -t tmpfs -o size=32k tmpfs "$DISK" 2>"$TMP/mount.err"; then
  echo "skipped: cannot mount a tmpfs at $DISK ($(cat "$TMP/mount.err")); needs root"
  exit 0
fi

RUNS=24
DIR=$DISK/out
"$PSLAB" run "$SRC/tests/specs/tiny.json" --set 'sweep.policy=[{"type":"static"}]' \
  --set 'plots=[]' --set workload.steps_per_worker=20 --repeats $RUNS --out "$DIR" \
  >"$TMP/out" 2>"$TMP/err"
status=$?
recorded=$(grep -c '' "$DIR/runs.jsonl")
started=$(grep -c ': started$' "$TMP/err")
last=$(tail -n 1 "$TMP/err")

[ "$status" -eq 1 ] || fail "exit status $status, expected 1"
[ "$recorded" -ge 1 ] && [ "$recorded" -lt $RUNS ] ||
  fail "runs.jsonl holds $recorded records: the disk should refuse one between the first and the last"
want="pslab: stopped: a record could not be written to $DIR/runs.jsonl (No space left on device); $recorded run"
case "$last" in
  "$want"*) ;;
  *) fail "last line: $last; expected it to start: $want" ;;
esac
# The runs recorded and the one refused: none after it.
[ "$started" -eq $((recorded + 1)) ] ||
  fail "$started runs started, expected $((recorded + 1)): none after the refused record"
grep -q "pslab: run $((recorded + 1)): cannot write its record to $DIR/runs.jsonl" "$TMP/err" ||
  fail "the refused record is not named"
# Whole lines only, each the record of the run of its line number.
n=0
while IFS= read -r line; do
  n=$((n + 1))
  case "$line" in
    '{"experiment":"tiny","run":'$n',"repeat":'*'}') ;;
    *) fail "runs.jsonl line $n is not run $n's whole record" ;;
  esac
done <"$DIR/runs.jsonl"

# runs.csv and summary.csv: absent, or made from runs.jsonl: a row per
# record, of the same runs; the one sweep point's count of runs.
for f in runs.csv summary.csv; do
  [ -e "$DIR/$f" ] && continue
  grep -q "$DIR/$f: cannot write: .*; removed it rather than leave it stale against runs.jsonl" \
    "$TMP/err" || fail "$f is missing and no line says why"
done
if [ -e "$DIR/runs.csv" ]; then
  csv_runs=$(tail -n +2 "$DIR/runs.csv" | cut -d, -f1 | tr '\n' ' ')
  [ "$csv_runs" = "$(seq -s ' ' 1 "$recorded") " ] ||
    fail "runs.csv holds runs $csv_runs, runs.jsonl runs 1 to $recorded"
fi
if [ -e "$DIR/summary.csv" ]; then
  csv_count=$(sed -n 2p "$DIR/summary.csv" | sed 's/^"[^"]*\("[^"]*\)*",//' | cut -d, -f1)
  [ "$csv_count" = "$recorded" ] ||
    fail "summary.csv counts $csv_count runs, runs.jsonl holds $recorded"
fi
if [ "$failures" -eq 0 ]; then
  echo "ok   full disk: exit $status, $recorded of $RUNS runs recorded, $started started"
else
  sed 's/^/  err| /' "$TMP/err"
fi
exit $((failures > 0))
