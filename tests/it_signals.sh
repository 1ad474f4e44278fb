#!/usr/bin/env bash
# SIGTERM and SIGINT to `pslab run`: on the simulator and on the real
# backend (which forks node processes), a signal while a long run is under
# way ends every process pslab started within 2 s (none left, not even a
# zombie), the runs finished before it stay in runs.jsonl, whole, the
# interrupted one is not recorded, and the exit status is 128 + the signal.
# pslab runs in a session of its own (setsid), so "every process it
# started" is every process of that session. The script waits on progress
# (runs.jsonl's lines, the processes of the run), never on a fixed sleep;
# every wait is bounded.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR}
TMP=$(mktemp -d /tmp/pslab-it-signals.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup EXIT
failures=0
BOUND_S=120  # for progress to show
GONE_S=2     # the goal: every process gone within this

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

now_ms() { date +%s%3N; }

# session_count SID: processes of the session (zombies included).
session_count() { ps -o pid= -s "$1" 2>/dev/null | wc -l; }

# wait_until SECONDS CMD...: polls CMD until it succeeds; 1 when time ran out.
wait_until() {
  local end=$(($(now_ms) + $1 * 1000))
  shift
  until "$@"; do
    [ "$(now_ms)" -lt "$end" ] || return 1
    sleep 0.02
  done
}

lines_at_least() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
procs_at_least() { [ "$(session_count "$1")" -ge "$2" ]; }
session_empty() { [ "$(session_count "$1")" -eq 0 ]; }
own_session() { [ "$(ps -o sid= -p "$1" | tr -d ' ')" = "$1" ]; }

# check NAME SIGNAL BACKEND DONE PROCS: runs a sweep whose last run is endless;
# once DONE runs are in runs.jsonl and the session holds PROCS processes,
# sends SIGNAL and checks what is left.
check() {
  local name=$1 sig=$2 backend=$3 done=$4 procs=$5 out="$TMP/$1"
  local sweep='sweep={"workload.steps_per_worker": [40, 50, 100000000]}'
  # --force: the endless run asks for more work than a spec may without it.
  setsid "$PSLAB" run "$SRC/tests/specs/tiny.json" --backend "$backend" --out "$out" \
    --set "$sweep" --set cluster.timeout_s=5 --force >"$TMP/$name.out" 2>"$TMP/$name.err" &
  local pid=$!
  PIDS+=("$pid")
  # setsid(1) calls setsid(2) after the fork: ps may see the child first.
  local sid
  if ! wait_until "$BOUND_S" own_session "$pid"; then
    sid=$(ps -o sid= -p "$pid" | tr -d ' ')
    fail "$name: pslab is not in a session of its own (sid $sid, pid $pid)"
    return
  fi
  sid=$pid
  if ! wait_until "$BOUND_S" lines_at_least "$out/runs.jsonl" "$done" ||
     ! wait_until "$BOUND_S" procs_at_least "$sid" "$procs"; then
    fail "$name: no progress within $BOUND_S s"
    sed 's/^/  err| /' "$TMP/$name.err"
    return
  fi
  local start
  start=$(now_ms)
  kill "-$sig" "$pid"
  if ! wait_until "$GONE_S" session_empty "$sid"; then
    fail "$name: processes left $GONE_S s after SIG$sig:"
    ps -o pid,ppid,stat,args -s "$sid" | sed 's/^/  ps| /'
    return
  fi
  local took=$(($(now_ms) - start))
  wait "$pid"
  local status=$? want
  want=$((128 + $(kill -l "$sig")))
  [ "$status" -eq "$want" ] || fail "$name: exit status $status, expected $want"
  grep -q "interrupted by" "$TMP/$name.err" || fail "$name: stderr does not say interrupted"
  local f="$out/runs.jsonl" lines
  lines=$(wc -l <"$f")
  [ "$lines" -eq "$done" ] || fail "$name: $lines records in runs.jsonl, expected $done"
  [ -z "$(tail -c 1 "$f")" ] || fail "$name: runs.jsonl ends with a partial line"
  ! grep -q '"run":3' "$f" || fail "$name: the interrupted run was recorded"
  echo "ok   $name (every process gone $took ms after SIG$sig)"
}

check sim-term TERM sim 2 2
check sim-int INT sim 2 2
check real-term TERM real 2 4

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all signal checks passed"
