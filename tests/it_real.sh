#!/usr/bin/env bash
# The real backend through the `pslab` command, on loopback: `pslab run
# --backend real` forks the nodes and writes runs.jsonl and the CSV files as the
# simulator does; `pslab node` as separate processes (PSLAB_RANK/PSLAB_SIZE,
# a coordinator file, with --resume and --shard) and under `mpirun
# --oversubscribe -np 3`; usage and start-up errors. Every command is
# bounded by `timeout`; nothing sleeps.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
TMP=$(mktemp -d /tmp/pslab-it-real.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
BOUND=$((120 * ${PSLAB_TEST_TIME_SCALE:-1})) # seconds any one command may take

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

has() {
  if ! grep -qF -- "$3" "$TMP/$2"; then
    fail "$1: $2 lacks: $3"
    sed "s/^/  $2| /" "$TMP/$2"
  fi
}

# valid_runs NAME DIR COUNT: DIR/runs.jsonl holds COUNT records of the real
# backend, each with metrics in which every pushed float is in some value.
valid_runs() {
  local name=$1 dir=$2 count=$3 f="$2/runs.jsonl"
  if [ ! -s "$f" ]; then
    fail "$name: no $f"
    return
  fi
  local lines good
  lines=$(wc -l <"$f")
  good=$(awk '/"backend":"real"/ && /"metrics":\{/ && !/"error"/ {
      p = $0; sub(/.*"pushed_floats":/, "", p); sub(/[,}].*/, "", p)
      v = $0; sub(/.*"value_sum":/, "", v); sub(/[,}].*/, "", v)
      if (index($0, "\"value_sum\":") && p == v && p > 0) n++ }
    END { print n + 0 }' "$f")
  [ "$lines" -eq "$count" ] || fail "$name: $lines records in runs.jsonl, expected $count"
  [ "$good" -eq "$count" ] || { fail "$name: $good of $count records conserve pushes"; cat "$f"; }
  [ -s "$dir/summary.csv" ] || fail "$name: no summary.csv"
  [ "$(wc -l <"$dir/runs.csv")" -eq $((count + 1)) ] || fail "$name: runs.csv lacks a row per run"
  grep -q '"time_s":' "$f" || fail "$name: no time_s"
  echo "ok   $name: $count valid records"
}

cat >"$TMP/small.json" <<'EOF'
{
  "name": "real_small",
  "backend": "real",
  "seed": 3,
  "cluster": {"nodes": 3, "workers_per_node": 2, "timeout_s": 10},
  "workload": {"type": "zipf", "keys": 200, "value_length": 4, "reads_per_step": 4,
               "writes_per_step": 3, "steps_per_worker": 100, "epochs": 2,
               "locality": 0.7},
  "policy": {"type": "static"},
  "sweep": {"policy": [{"type": "static", "fast_local_access": false},
                       {"type": "relocate", "lookahead": 4}]}
}
EOF

# ------------------------------------------------------- pslab run --backend real
run "run --backend real" 0 "$PSLAB" run "$TMP/small.json" --out "$TMP/run" -q
valid_runs "run --backend real" "$TMP/run" 2
run "run --set backend=real, sim spec" 0 "$PSLAB" run "$TMP/small.json" --out "$TMP/run2" \
  --backend real --set cluster.nodes=2 --set sweep.policy='[{"type":"static"}]' -q
valid_runs "run --set backend=real, sim spec" "$TMP/run2" 1

# ----------------------------------------------- pslab node, processes by hand
# Two nodes started apart, meeting through a coordinator file.
node_pair() {
  local dir=$1 coord=$2
  shift 2
  PSLAB_RANK=1 PSLAB_SIZE=2 timeout "$BOUND" "$PSLAB" node "$TMP/small.json" \
    --coordinator-file "$coord" --set cluster.nodes=2 "$@" >"$TMP/node1.out" 2>"$TMP/node1.err" &
  local pid=$!
  PSLAB_RANK=0 PSLAB_SIZE=2 timeout "$BOUND" "$PSLAB" node "$TMP/small.json" \
    --coordinator-file "$coord" --set cluster.nodes=2 --out "$dir" -q "$@" \
    >"$TMP/out" 2>"$TMP/err"
  rank0=$?
  wait "$pid"
  rank1=$?
}
node_pair "$TMP/pair" "$TMP/coord"
if [ "$rank0" -eq 0 ] && [ "$rank1" -eq 0 ]; then
  echo "ok   pslab node, 2 processes"
  valid_runs "pslab node, 2 processes" "$TMP/pair" 2
  [ ! -e "$TMP/coord" ] || fail "pslab node: rank 0 left its coordinator file"
  [ ! -s "$TMP/node1.out" ] || fail "pslab node: rank 1 printed results"
else
  fail "pslab node, 2 processes: exit statuses $rank0 and $rank1"
  cat "$TMP/err" "$TMP/node1.err"
fi

# --resume and --shard under pslab node: every rank is given them (and the
# same --out), each rank reads which runs to skip, rank 0 alone writes.
first=$(head -n 1 "$TMP/pair/runs.jsonl")
echo "$first" >"$TMP/pair/runs.jsonl"
node_pair "$TMP/pair" "$TMP/coord2" --out "$TMP/pair" --resume
if [ "$rank0" -eq 0 ] && [ "$rank1" -eq 0 ]; then
  echo "ok   pslab node --resume"
  valid_runs "pslab node --resume" "$TMP/pair" 2
  [ "$(head -n 1 "$TMP/pair/runs.jsonl")" = "$first" ] || fail "pslab node --resume: run 1 was redone"
else
  fail "pslab node --resume: exit statuses $rank0 and $rank1"
  cat "$TMP/err" "$TMP/node1.err"
fi
node_pair "$TMP/shard" "$TMP/coord3" --shard 2/2
if [ "$rank0" -eq 0 ] && [ "$rank1" -eq 0 ]; then
  valid_runs "pslab node --shard 2/2" "$TMP/shard" 1
  grep -q '"run":2,' "$TMP/shard/runs.jsonl" || fail "pslab node --shard 2/2: not run 2"
else
  fail "pslab node --shard: exit statuses $rank0 and $rank1"
  cat "$TMP/err" "$TMP/node1.err"
fi

run "node without a rank" 2 env -u PSLAB_RANK -u PSLAB_SIZE -u OMPI_COMM_WORLD_RANK \
  -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE -u SLURM_PROCID -u SLURM_NTASKS \
  "$PSLAB" node "$TMP/small.json"
has "node without a rank" err "no rank: set PSLAB_RANK and PSLAB_SIZE"
run "node, size mismatch" 1 env PSLAB_RANK=0 PSLAB_SIZE=2 "$PSLAB" node "$TMP/small.json" \
  --out "$TMP/never"
has "node, size mismatch" err "cluster.nodes is 3 but 2 processes were started"
run "node 1 never arrives" 1 env PSLAB_RANK=0 PSLAB_SIZE=2 "$PSLAB" node "$TMP/small.json" \
  --set cluster.nodes=2 --set cluster.timeout_s=1 --coordinator-file "$TMP/coord2" \
  --out "$TMP/alone"
has "node 1 never arrives" err "node 1 of 2 never arrived within 1 s"
run "node 0 never answers" 1 env PSLAB_RANK=1 PSLAB_SIZE=2 "$PSLAB" node "$TMP/small.json" \
  --set cluster.nodes=2 --set cluster.timeout_s=1 --coordinator 127.0.0.1:9
has "node 0 never answers" err "no answer from node 0 at 127.0.0.1:9 within 1 s"
run "node --help" 0 "$PSLAB" node --help
has "node --help" out "mpirun -np 8 --hostfile H pslab node SPEC"

# ------------------------------------------------------------------- mpirun
if command -v mpirun >/dev/null 2>&1; then
  as_root=()
  [ "$(id -u)" -eq 0 ] && as_root=(--allow-run-as-root)
  run "mpirun -np 3" 0 mpirun "${as_root[@]}" --oversubscribe -np 3 \
    "$PSLAB" node "$TMP/small.json" --coordinator-file "$TMP/mpi.addr" --out "$TMP/mpi" -q
  valid_runs "mpirun -np 3" "$TMP/mpi" 2
else
  echo "skip mpirun -np 3: no mpirun (scripts/install-deps.sh installs openmpi-bin)"
fi

if [ "$failures" -gt 0 ]; then
  echo "it_real: $failures failures"
  exit 1
fi
echo "it_real: all passed"
