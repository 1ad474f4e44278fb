#!/usr/bin/env bash
# A campaign of the semantic fuzzer (tests/fuzz/fuzz_semantic.c) under
# libFuzzer: builds the target with clang into build-fuzz/ (ASan, UBSan and
# libFuzzer's coverage), runs it at nice 19 for SECONDS (default 3600) on the
# committed seed corpus tests/fuzz/corpus/semantic/, writing what it finds to
# a scratch directory (never into the source tree), and at the end merges the
# committed corpus and the new entries into a minimal corpus beside them
# (the fewest inputs that reach every edge either reached).
#
# Usage: scripts/fuzz.sh [--merge] [SECONDS] [-- LIBFUZZER_FLAG...]
#   --merge   replace tests/fuzz/corpus/semantic/ by the merged corpus (the
#             committed one and what this run added, minimised by coverage);
#             review it with git status before committing
# Environment: BUILD (default build-fuzz), SCRATCH (default
# $BUILD/fuzz-semantic: new/ holds what this run added, merged/ the merged
# corpus, crashes/ what broke), CC (default clang).
# Exit status: 0 when no input broke a check; 1 when one did (its file is in
# crashes/: build/tests/fuzz_semantic FILE replays it and aborts with the rule
# it broke; once fixed, copy it into tests/fuzz/corpus/semantic/, where the
# fuzz_semantic_corpus test replays it); 2 on bad usage or a failed build.
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-fuzz}
SCRATCH=${SCRATCH:-$BUILD/fuzz-semantic}
CORPUS=$ROOT/tests/fuzz/corpus/semantic
SECONDS_TO_RUN=3600
MERGE=0
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) awk 'NR == 1 { next } /^[^#]/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    --merge) MERGE=1 ;;
    --) shift; break ;;
    ''|*[!0-9]*) echo "fuzz.sh: expected SECONDS (a whole number), found '$1'" >&2; exit 2 ;;
    *) SECONDS_TO_RUN=$1 ;;
  esac
  shift
done

echo "fuzz.sh: building the libFuzzer target in $BUILD" >&2
CC=${CC:-clang} nice -n 19 cmake -S "$ROOT" -B "$BUILD" -DPSLAB_FUZZ=ON >/dev/null &&
  nice -n 19 cmake --build "$BUILD" -j2 --target fuzz_semantic_lf >/dev/null ||
  { echo "fuzz.sh: the build failed (it needs clang: CC=clang)" >&2; exit 2; }
FUZZER=$BUILD/tests/fuzz_semantic_lf

rm -rf "$SCRATCH/new" "$SCRATCH/merged"
mkdir -p "$SCRATCH/new" "$SCRATCH/merged" "$SCRATCH/crashes" || exit 2
LOG=$SCRATCH/fuzz.log
echo "fuzz.sh: fuzzing for $SECONDS_TO_RUN s (log: $LOG)" >&2
# The first directory gets the new entries; the committed corpus is read only.
nice -n 19 "$FUZZER" -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 \
  -artifact_prefix="$SCRATCH/crashes/" "$@" "$SCRATCH/new" "$CORPUS" >"$LOG" 2>&1
status=$?
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' "$LOG" >&2
if [ $status -ne 0 ]; then
  grep -E '^fuzz_semantic: |SUMMARY|Test unit written' "$LOG" >&2
  echo "fuzz.sh: an input broke a check (exit $status): see $LOG and $SCRATCH/crashes/;" \
    "replay it with build/tests/fuzz_semantic FILE" >&2
  exit 1
fi

# The fewest inputs that reach every edge reached (not every hit count): the
# committed corpus stays a few dozen files.
nice -n 19 "$FUZZER" -set_cover_merge=1 -use_counters=0 "$SCRATCH/merged" "$CORPUS" "$SCRATCH/new" \
  >>"$LOG" 2>&1 ||
  { echo "fuzz.sh: the merge failed: see $LOG" >&2; exit 2; }
echo "fuzz.sh: no input broke a check; $(ls "$SCRATCH/new" | wc -l) new entries," \
  "merged corpus of $(ls "$SCRATCH/merged" | wc -l) in $SCRATCH/merged" \
  "(committed: $(ls "$CORPUS" | wc -l))" >&2
if [ $MERGE = 1 ]; then
  rm -f "$CORPUS"/* && cp "$SCRATCH/merged"/* "$CORPUS"/ &&
    echo "fuzz.sh: $CORPUS replaced by the merged corpus" >&2
fi
exit 0
