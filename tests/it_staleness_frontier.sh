#!/usr/bin/env bash
# scripts/staleness-frontier.sh on a hand-made runs.csv (CRLF line ends): per policy and sync
# interval, the largest lr stable with every smaller one, and the first diverged (an empty loss);
# a sweep point is stable only when every repeat is; failed runs (a quoted error with a comma)
# left out; a stable lr above a diverged one does not count; frontier.csv written, the plot
# drawn; a runs.csv without the swept columns, a missing directory and no argument refused.
# CTest sets PSLAB_SOURCE_DIR.
set -u
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
S="$SRC/scripts/staleness-frontier.sh"
TMP=$(mktemp -d /tmp/pslab-it-frontier.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
mkdir "$TMP/r"
cat >"$TMP/r/runs.csv" <<'CSV'
run,repeat,seed,policy.type,policy.syncs_per_step,workload.lr,time_s,loss,quality,error
1,0,1,replicate,1,0.01,0.1,0.5,0.9,
2,0,1,replicate,1,0.02,0.1,0.5,0.9,
3,0,1,replicate,1,0.04,0.1,,,
4,0,1,replicate,4,0.01,0.1,0.5,0.9,
5,0,1,replicate,4,0.02,0.1,,,
6,0,1,replicate,4,0.04,0.1,0.5,0.9,
7,0,1,nups,1,0.01,0.1,0.5,0.9,
8,0,1,nups,1,0.08,0.1,0.5,0.9,
9,0,1,nups,4,0.01,0.1,,,
10,0,1,nups,4,0.005,0.1,,,"failed: a, b"
11,1,7,replicate,1,0.02,0.1,,,
12,1,7,replicate,1,0.01,0.1,0.4,0.8,
CSV
sed -i 's/$/\r/' "$TMP/r/runs.csv" # CRLF line ends, as Python's csv module writes them
out=$(bash "$S" "$TMP/r") || fail "exit status $?"
echo "$out"
grep -qF "| replicate | 1 | 0.01 | 0.02 |" <<<"$out" || fail "a repeat that diverged"
grep -qF "| replicate | 4 | 0.01 | 0.02 |" <<<"$out" || fail "stable above a diverged lr"
grep -qF "| nups | 1 | 0.08 | - |" <<<"$out" || fail "nothing diverged"
grep -qF "| nups | 4 | - | 0.01 |" <<<"$out" || fail "a failed run counted"
grep -qxF "nups,4,,0.01" "$TMP/r/frontier.csv" || fail "frontier.csv"
[ -s "$TMP/r/frontier.gp" ] || fail "no frontier.gp"
if command -v gnuplot >/dev/null; then [ -s "$TMP/r/frontier.svg" ] || fail "no frontier.svg"; fi
mkdir "$TMP/bad"
printf 'run,repeat,seed,policy,loss,error\n1,0,1,x,0.5,\n' >"$TMP/bad/runs.csv"
bash "$S" "$TMP/bad" >/dev/null 2>"$TMP/err" && fail "a runs.csv without the sweep accepted"
grep -qF "runs.csv has no column" "$TMP/err" || fail "the missing column not named"
bash "$S" "$TMP/none" >/dev/null 2>"$TMP/err" && fail "a missing directory accepted"
grep -qF "none/runs.csv: cannot be read" "$TMP/err" || fail "a missing directory not named"
bash "$S" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no argument: not exit status 2"
[ "$failures" -eq 0 ] && echo "all passed" || { echo "$failures failure(s)"; exit 1; }
