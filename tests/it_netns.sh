#!/usr/bin/env bash
# scripts/netns-cluster.sh: three `pslab node`s in three network namespaces
# over shaped veth links. A run succeeds and its messages cross the links;
# --delay works or is refused naming netem; --keep leaves the shaped links
# in place; a node that fails (a bad --set, a node killed mid-run) and a
# SIGTERM to the script give a non-zero status. After every case no
# namespace, link or pslab process of that invocation is left. Traffic
# stays inside the namespaces the script makes. Skips (exit 0, "SKIP: ...")
# where namespaces cannot be made (not root, no ip, no permission).
# Every command is bounded; waiting is a bounded poll.
# CTest sets PSLAB (the binary) and PSLAB_SOURCE_DIR.
set -u

PSLAB=${PSLAB:?set PSLAB to the pslab binary}
SRC=${PSLAB_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
CLUSTER="$SRC/scripts/netns-cluster.sh"
BOUND=$((60 * ${PSLAB_TEST_TIME_SCALE:-1})) # seconds any one command may take

skip() {
  echo "SKIP: $*"
  exit 0
}
[ "$(id -u)" -eq 0 ] || skip "not root: network namespaces need CAP_NET_ADMIN"
command -v ip >/dev/null 2>&1 || skip "no ip command (iproute2)"
command -v tc >/dev/null 2>&1 || skip "no tc command (iproute2)"
PROBE="pslabit$$"
if ! why=$(ip netns add "$PROBE" 2>&1); then
  skip "cannot create a network namespace: $why"
fi
netem=0
tc -n "$PROBE" qdisc add dev lo root netem delay 1ms 2>/dev/null && netem=1
ip netns del "$PROBE"

TMP=$(mktemp -d /tmp/pslab-it-netns.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
  echo "FAIL $1"
  failures=$((failures + 1))
}

show() { sed "s/^/  $2| /" "$TMP/$1"; }

has() {
  grep -qF -- "$3" "$TMP/$2" || { fail "$1: $2 lacks: $3"; show "$2" "$2"; }
}

# The namespace prefix (pslab<PID>) of the last invocation, from its stderr.
prefix_of_last() {
  grep -o 'namespaces pslab[0-9][0-9]*-' "$TMP/err" | head -n 1 | sed 's/namespaces //; s/-$//'
}

# nothing_left NAME PREFIX: no namespace, link or process of that invocation.
nothing_left() {
  local name=$1 prefix=$2
  if [ -z "$prefix" ]; then
    fail "$name: the script did not say which namespaces it made"
    return
  fi
  if ip netns list | grep -q "^$prefix-"; then
    fail "$name: namespaces left: $(ip netns list | grep "^$prefix-" | tr '\n' ' ')"
  fi
  # The links live in the namespaces; none may have leaked into this one.
  if ip -o link show | grep -q -e "$prefix" -e "198\.18\.7\."; then
    fail "$name: links left: $(ip -o link show | grep -e "$prefix" -e "198\.18\.7\.")"
  fi
  if ip -o -4 addr show | grep -q "198\.18\.7\."; then
    fail "$name: an address of the cluster's subnet is in this namespace"
  fi
  # Every pslab node of this test has a spec under $TMP on its command line.
  if pgrep -f "$TMP/" >/dev/null; then
    fail "$name: processes left: $(pgrep -af "$TMP/")"
  fi
  echo "ok   $name: nothing left behind ($prefix-*)"
}

# cluster NAME WANT_STATUS ARGS...: runs the script (bounded), output in
# $TMP/out and $TMP/err, then checks that it left nothing behind.
cluster() {
  local name=$1 want=$2
  shift 2
  timeout "$BOUND" "$CLUSTER" --pslab "$PSLAB" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit status $got, expected $want"
    show out out
    show err err
  else
    echo "ok   $name: exit status $got"
  fi
  nothing_left "$name" "$(prefix_of_last)"
}

# ok_runs NAME DIR COUNT: DIR/runs.jsonl holds COUNT successful records of
# the real backend, each with messages and bytes sent.
ok_runs() {
  local name=$1 f="$2/runs.jsonl" count=$3 good
  if [ ! -s "$f" ]; then
    fail "$name: no $f"
    return
  fi
  good=$(awk '/"backend":"real"/ && /"metrics":\{/ && !/"error"/ {
      m = $0; sub(/.*"messages":/, "", m); sub(/[,}].*/, "", m)
      b = $0; sub(/.*"bytes":/, "", b); sub(/[,}].*/, "", b)
      if (m > 0 && b > 0) n++ }
    END { print n + 0 }' "$f")
  if [ "$(wc -l <"$f")" -ne "$count" ] || [ "$good" -ne "$count" ]; then
    fail "$name: $good of $(wc -l <"$f") records successful with messages, expected $count"
    cat "$f"
  else
    echo "ok   $name: $count successful runs with messages"
  fi
}

# over_links NAME: every node's link carried traffic (the script's report).
over_links() {
  local i bytes
  for i in 0 1 2; do
    bytes=$(sed -n "s/^netns-cluster: node $i (198\.18\.7\.$((i + 1))): sent \([0-9]*\) bytes.*/\1/p" \
      "$TMP/err")
    if [ -z "$bytes" ] || [ "$bytes" -lt 10000 ]; then
      fail "$1: node $i sent '${bytes}' bytes over its link"
      show err err
      return
    fi
  done
  echo "ok   $1: every node's link carried its messages"
}

# A small spec of the real backend: three nodes, two runs (rank 0 rebinds
# its port between them), every key access through a message or a move.
cat >"$TMP/small.json" <<'EOF'
{
  "name": "netns_small",
  "backend": "real",
  "seed": 5,
  "cluster": {"nodes": 3, "workers_per_node": 2, "timeout_s": 10},
  "workload": {"type": "zipf", "keys": 300, "value_length": 16, "reads_per_step": 6,
               "writes_per_step": 4, "steps_per_worker": 150, "epochs": 1,
               "locality": 0.5},
  "policy": {"type": "static"},
  "sweep": {"policy": [{"type": "static", "fast_local_access": false},
                       {"type": "relocate", "lookahead": 4}]}
}
EOF
# ... and one run that goes on until stopped. Its timeout_s is well inside
# the script's 5 s of grace: a node killed while the run is still starting
# (its run dies with it) is reported by the others before they are stopped.
cat >"$TMP/endless.json" <<'EOF'
{
  "name": "netns_endless",
  "backend": "real",
  "seed": 5,
  "cluster": {"nodes": 3, "workers_per_node": 1, "timeout_s": 2},
  "workload": {"type": "zipf", "keys": 300, "value_length": 16, "reads_per_step": 6,
               "writes_per_step": 4, "steps_per_worker": 100000000, "locality": 0.5},
  "policy": {"type": "static", "fast_local_access": false}
}
EOF

# ------------------------------------------------------------ a good run
cluster "3 nodes, --rate 100mbit" 0 --nodes 3 --rate 100mbit -- "$TMP/small.json" \
  --out "$TMP/good" -q
ok_runs "3 nodes, --rate 100mbit" "$TMP/good" 2
over_links "3 nodes, --rate 100mbit"
has "3 nodes, --rate 100mbit" err "tbf rate 100mbit"
# Beyond loopback the nodes authenticate: the script made a key, and removed it.
has "3 nodes, --rate 100mbit" err "auth: CURVE with a fresh cluster key"
key=$(grep -o '/tmp/pslab-netns-key[^ ]*/cluster.key' "$TMP/err" | head -n 1)
if [ -z "$key" ] || [ -e "$key" ]; then
  fail "3 nodes, --rate 100mbit: the cluster key (${key:-none named}) is not removed"
else
  echo "ok   3 nodes, --rate 100mbit: CURVE with a fresh key, removed at the end"
fi

# ------------------------------------------------------------------ delay
if [ "$netem" -eq 1 ]; then
  cluster "--delay 1ms" 0 --nodes 3 --delay 1ms -- "$TMP/small.json" --out "$TMP/delay" -q
  ok_runs "--delay 1ms" "$TMP/delay" 2
  has "--delay 1ms" err "netem delay 1ms"
else
  timeout "$BOUND" "$CLUSTER" --pslab "$PSLAB" --nodes 3 --delay 1ms -- "$TMP/small.json" \
    --out "$TMP/delay" >"$TMP/out" 2>"$TMP/err"
  got=$?
  [ "$got" -ne 0 ] || fail "--delay 1ms without netem: exit status 0"
  has "--delay 1ms without netem" err "netem is not available in this kernel: --delay cannot be applied"
  [ ! -e "$TMP/delay/runs.jsonl" ] || fail "--delay 1ms without netem: nodes ran"
  echo "ok   --delay 1ms without netem: refused (status $got)"
  nothing_left "--delay 1ms without netem" "$(prefix_of_last)"
fi

# ------------------------------------------------------------------ --keep
# A failing spec with --keep: the links and their qdiscs stay for
# inspection, then the printed commands remove them.
cluster_keep() {
  timeout "$BOUND" "$CLUSTER" --pslab "$PSLAB" --keep --nodes 3 --rate 100mbit -- \
    "$TMP/small.json" --set cluster.workers_per_node=0 --out "$TMP/keep" \
    >"$TMP/out" 2>"$TMP/err"
}
cluster_keep
got=$?
prefix=$(prefix_of_last)
[ "$got" -ne 0 ] || fail "--keep, bad spec: exit status 0"
has "--keep" err "--keep: left in place namespaces"
if [ -n "$prefix" ] && ip netns list | grep -q "^$prefix-1"; then
  tc -n "$prefix-1" qdisc show dev eth0 | grep -q "tbf .*rate 100Mbit" ||
    fail "--keep: no tbf on node 1's eth0: $(tc -n "$prefix-1" qdisc show dev eth0)"
  tc -n "$prefix-br" qdisc show dev veth1 | grep -q "tbf .*rate 100Mbit" ||
    fail "--keep: no tbf on the bridge's end veth1: $(tc -n "$prefix-br" qdisc show dev veth1)"
  ip -n "$prefix-1" -4 addr show dev eth0 | grep -q "inet 198\.18\.7\.2/24" ||
    fail "--keep: node 1 lacks 198.18.7.2/24"
  ip -n "$prefix-br" link show veth1 | grep -q "master br0" ||
    fail "--keep: veth1 is not on the bridge"
  echo "ok   --keep: namespaces, addresses, bridge and tbf on both ends were left"
  for ns in $(ip netns list | grep -o "^$prefix-[a-z0-9]*"); do ip netns del "$ns"; done
  nothing_left "--keep, then removed by hand" "$prefix"
else
  fail "--keep: namespaces of '$prefix' gone"
  show err err
fi

# ---------------------------------------------------------- failing nodes
cluster "a bad --set: every node exits" 1 --nodes 3 --rate 100mbit -- "$TMP/small.json" \
  --set cluster.workers_per_node=0 --out "$TMP/bad"
has "a bad --set" err "workers_per_node"

# background_until_running SPEC OUT: starts the script in the background on
# SPEC and polls until node 2 runs a run (its `pslab node` has forked the
# run's process); sets pid and prefix, or fails.
background_until_running() {
  # --force: the endless run asks for more work than a spec may without it.
  "$CLUSTER" --pslab "$PSLAB" --nodes 3 --rate 100mbit -- "$1" --out "$2" -q --force \
    >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  prefix="pslab$pid"
  local tries
  for ((tries = 0; tries < 200; tries++)); do
    [ "$(ip netns pids "$prefix-2" 2>/dev/null | wc -l)" -ge 2 ] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  fail "$1: node 2 never started a run"
  show err err
  return 1
}

# wait_bounded NAME: waits (polling, BOUND seconds at most) for the script;
# sets got to its exit status.
wait_bounded() {
  local tries
  for ((tries = 0; tries < BOUND * 20; tries++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "$1: the script still runs after $BOUND s"
    kill -TERM "$pid"
  fi
  wait "$pid"
  got=$?
}

# A node killed mid-run: the script's own process for node 2 (its run goes
# on in a child unless the script stops it too).
if background_until_running "$TMP/endless.json" "$TMP/killed"; then
  kill -KILL "$(ip netns pids "$prefix-2" | head -n 1)"
  wait_bounded "node 2 killed"
  if [ "$got" -ne 0 ]; then echo "ok   node 2 killed: exit status $got"; else
    fail "node 2 killed: exit status 0"; fi
  # node 2's run dies with its parent (PR_SET_PDEATHSIG), so the others may
  # fail and exit before the script notices node 2: which node's exit it
  # reports first is a race; its closing list names node 2 either way
  has "node 2 killed" err "node 2 failed (status 137)"
  # node 1 reports the run failed, on stderr under its prefix; which node
  # saw node 2 go first (node 1 itself, or node 0 telling it) is a race
  has "node 2 killed" err "[node 1] pslab node 1: run 1 failed: "
  # and names node 2: lost mid-run, or (killed while the run was starting:
  # its run dies with it) never arrived, cannot be reached, or died in the
  # middle of its CURVE handshake
  if ! grep -qE -- "\[node 1\] pslab node 1: run 1 failed: .*(lost node 2 at tcp://198\.18\.7\.3:|node 2 of 3 never arrived|cannot reach node 2 at tcp://198\.18\.7\.3:|node 2 at tcp://198\.18\.7\.3:[0-9]+ failed the connection handshake)" "$TMP/err"; then
    fail "node 2 killed: node 1's failure does not name node 2 lost or missing"
    show err err
  fi
  nothing_left "node 2 killed" "$prefix"
fi

# SIGTERM to the script mid-run.
if background_until_running "$TMP/endless.json" "$TMP/term"; then
  kill -TERM "$pid"
  wait_bounded "SIGTERM"
  if [ "$got" -eq 143 ]; then echo "ok   SIGTERM: exit status 143"; else
    fail "SIGTERM: exit status $got, expected 143"; show err err; fi
  nothing_left "SIGTERM" "$prefix"
fi

# ---------------------------------------------------------- command line
usage_case() {
  local name=$1 want=$2 text=$3
  shift 3
  timeout "$BOUND" "$@" >"$TMP/out" 2>"$TMP/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$name: exit status $got, expected $want"
    show err err
    return
  fi
  grep -qF -- "$text" "$TMP/err" || { fail "$name: err lacks: $text"; show err err; return; }
  echo "ok   $name"
}
usage_case "missing --" 2 "missing -- before SPEC" "$CLUSTER" --nodes 3 "$TMP/small.json"
usage_case "--nodes 0" 2 "expected 1 to 250 nodes" "$CLUSTER" --nodes 0 -- "$TMP/small.json"
usage_case "no --nodes" 2 "missing --nodes N" "$CLUSTER" -- "$TMP/small.json"
usage_case "bad --rate" 2 "--rate: expected a rate" "$CLUSTER" --nodes 3 --rate fast -- \
  "$TMP/small.json"
usage_case "bad --delay" 2 "--delay: expected a time" "$CLUSTER" --nodes 3 --delay soon -- \
  "$TMP/small.json"
usage_case "--coordinator after --" 2 "gives every node its coordinator" "$CLUSTER" --nodes 3 \
  -- "$TMP/small.json" --coordinator 10.0.0.1:5
usage_case "no pslab" 1 "no pslab binary at $TMP/nothing" "$CLUSTER" --nodes 3 \
  --pslab "$TMP/nothing" -- "$TMP/small.json"
# No ip on the PATH: only what the script needs before it looks for it.
mkdir -p "$TMP/bin"
for tool in dirname id; do ln -s "$(command -v "$tool")" "$TMP/bin/$tool"; done
usage_case "no ip" 1 "ip (iproute2) is missing" env PATH="$TMP/bin" "$BASH" "$CLUSTER" \
  --nodes 3 -- "$TMP/small.json"
if command -v setpriv >/dev/null 2>&1; then
  usage_case "not root" 1 "must run as root" setpriv --reuid=65534 --regid=65534 \
    --clear-groups "$CLUSTER" --nodes 3 -- "$TMP/small.json"
fi
timeout "$BOUND" "$CLUSTER" --help >"$TMP/out" 2>"$TMP/err" ||
  fail "--help: exit status $?"
grep -qF -- "--nodes N [--rate RATE] [--delay DELAY] [--pslab BIN]" "$TMP/out" ||
  fail "--help: no usage line"

if [ "$failures" -gt 0 ]; then
  echo "it_netns: $failures failures"
  exit 1
fi
echo "it_netns: all passed"
