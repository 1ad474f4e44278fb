#!/usr/bin/env bash
# Lost wake-ups in the simulator: tests/specs/wakeups.json (eight nodes of
# two workers on one calibrated 16-core machine under the run queue, AdaPM)
# in two runs whose timing once had a notifier run while the actor it
# notified was giving its core up (a semaphore's release: a yield) and had
# not yet begun to wait: the notify was lost, and the run never ended (every
# worker waited for a reply its node's server never read). The first did so
# before I/O threads paid a wake-up per peer, the second after. Each must
# end, every step done. These runs only meet the race while the simulator's
# timing stays as it was; test_sim's run_queue_wait_after_a_yield drives it
# by hand. Bounded by `timeout`; nothing sleeps.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-wakeups.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
BOUND=$((120 * ${PSLAB_TEST_TIME_SCALE:-1})) # times the slow builds' scale (tests/CMakeLists.txt)
failures=0

# ends NAME STEPS [--set ...]: the spec's run, with these settings, ends
# with every one of its STEPS steps done.
ends() {
  local name=$1 steps=$2
  shift 2
  timeout "$BOUND" "$PSLAB" run "$SRC/tests/specs/wakeups.json" --out "$TMP/$name" --quiet "$@" \
    >"$TMP/stdout" 2>"$TMP/stderr"
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL $name: the run did not end well (exit status $status; 124: it never ended)"
    sed 's/^/  err| /' "$TMP/stderr"
    grep -o '"error":"[^"]*"' "$TMP/$name/runs.jsonl" 2>/dev/null | sed 's/^/  | /'
    failures=$((failures + 1))
  elif ! grep -qF "\"steps\":$steps," "$TMP/$name/runs.jsonl"; then
    echo "FAIL $name: the run did not do its $steps steps"
    sed 's/^/  | /' "$TMP/$name/runs.jsonl"
    failures=$((failures + 1))
  else
    echo "ok   $name: the run ends, every step done"
  fi
}

ends "seed 6, 150 steps" 2400
ends "seed 7, 600 steps" 9600 --set seed=7 --set workload.steps_per_worker=600

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all passed"
