#!/usr/bin/env bash
# Lost wake-ups in the simulator: tests/specs/wakeups.json (eight nodes of
# two workers on one calibrated 16-core machine under the run queue, AdaPM)
# is a run whose timing once had a notifier run while the actor it notified
# was giving its core up (a semaphore's release: a yield) and had not yet
# begun to wait. The notify was lost and the run never ended: every worker
# waited for a reply its node's server never read. It must end, every step
# done. Bounded by `timeout`; nothing sleeps.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
TMP=$(mktemp -d /tmp/pslab-it-wakeups.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
BOUND=$((120 * ${PSLAB_TEST_TIME_SCALE:-1})) # times the slow builds' scale (tests/CMakeLists.txt)

timeout "$BOUND" "$PSLAB" run "$SRC/tests/specs/wakeups.json" --out "$TMP/out" --quiet \
  >"$TMP/stdout" 2>"$TMP/stderr"
status=$?
if [ "$status" -ne 0 ]; then
  echo "FAIL the run did not end well (exit status $status; 124: it never ended)"
  sed 's/^/  err| /' "$TMP/stderr"
  exit 1
fi
if ! grep -qF '"steps":2400,' "$TMP/out/runs.jsonl"; then
  echo "FAIL the run did not do its 2400 steps"
  cat "$TMP/out/runs.jsonl"
  exit 1
fi
echo "ok   the run ends, every step done"
echo "all passed"
