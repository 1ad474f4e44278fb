#!/usr/bin/env bash
# shellcheck disable=SC2317 # cleanup and what it calls run from traps
# A cluster of network namespaces on this machine: one `pslab node` per
# namespace, each behind its own veth link to a bridge, the links optionally
# shaped with tc (tbf for --rate, netem for --delay), so the real backend runs
# over a real (if virtual) network rather than loopback. Everything it makes
# -- namespaces, bridge, veths, qdiscs, node processes -- is removed when it
# ends, whether the run succeeded, a node failed or the script was
# interrupted, unless --keep is given. Needs root (CAP_NET_ADMIN) and iproute2.
#
# Layout (PID is this script's process id, so invocations never collide):
#   pslab<PID>-br        a namespace holding the bridge br0 and the bridge
#                        ends veth0 .. veth<N-1>; no address, nothing routed
#   pslab<PID>-<i>       node i: lo and eth0 (198.18.7.<i+1>/24), the other
#                        end of veth<i>; runs `pslab node` with PSLAB_RANK=i
# The root namespace is not touched: no interface, address or route is added
# there, so the subnet cannot clash with this machine's own networks.
set -euo pipefail

PROG=netns-cluster
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUBNET=198.18.7  # RFC 2544 benchmarking range, /24; node i is .<i+1>
COORD_PORT=7000  # rank 0 listens here, inside its own namespace
MAX_NODES=250
GRACE_S=5        # after a node fails, how long the others may take to notice
STOP_S=3         # after SIGTERM, how long a node may take to exit before SIGKILL

usage() {
  cat <<EOF
usage: scripts/netns-cluster.sh --nodes N [--rate RATE] [--delay DELAY] [--pslab BIN]
                                [--keep] [--help] -- SPEC [pslab node options...]

Runs SPEC on the real backend as N processes (\`pslab node SPEC\`), each in its
own network namespace on this machine, joined by veth links to one bridge,
so that nodes talk over TCP across (optionally shaped) links, not loopback.
Needs root and iproute2 (ip; tc for --rate and --delay).

  --nodes N      number of namespaces and nodes (1..$MAX_NODES); every run's
                 cluster.nodes must equal N
  --rate RATE    cap every link at RATE in each direction, with tbf on both
                 ends of each veth (a node sends at most RATE and receives at
                 most RATE): tc's units, e.g. 1gbit, 100mbit, 500kbit, 10mbps
  --delay DELAY  add DELAY (e.g. 1ms, 200us) with netem to every packet a node
                 sends: one way DELAY between two nodes, round trip 2*DELAY.
                 Fails when this kernel has no netem (it is never ignored)
  --pslab BIN    the pslab binary (default: build/pslab of this repository)
  --keep         leave the namespaces, bridge, links and qdiscs in place after
                 the run, for inspection (the node processes are still
                 stopped); the commands that remove them are printed
  -h, --help     this help

After \`--\`: SPEC and the options for every \`pslab node\` (see \`pslab node
--help\`), the same for every rank; pass --out DIR for rank 0's results. The
script adds, per node i: PSLAB_RANK=i PSLAB_SIZE=N in its environment,
--set cluster.bind="$SUBNET.<i+1>" and --coordinator $SUBNET.1:$COORD_PORT,
so do not give --coordinator, --coordinator-file or a cluster.bind of your own.
The nodes bind beyond loopback, so they authenticate each other with CURVE:
unless the options give --key-file, cluster.key_file or cluster.auth, the
script makes a fresh key (\`pslab keygen\`) in a private temporary directory,
passes it as --key-file and removes it at the end.

Node i lives in namespace pslab<PID>-<i> with address $SUBNET.<i+1>/24 on
eth0; the bridge lives in pslab<PID>-br. Nothing is added to this machine's
own namespace. What was set up, and each node's traffic at the end, are
printed on stderr. Rank 0's output is the script's; the output of the other
ranks goes to stderr, each line prefixed with [node <i>].

When a node fails, the others get $GRACE_S s to notice it and exit, then are
stopped. On exit, Ctrl-C or SIGTERM every node process is stopped and every
namespace (with its links and qdiscs) removed.

Exit status: rank 0's when it failed by itself; otherwise 1 when any node
failed or the cluster could not be set up (not root, no ip, no netem for
--delay, ...); 2 bad command line; 130/143 interrupted by SIGINT/SIGTERM;
0 when every node succeeded.

Example (as root):
  scripts/netns-cluster.sh --nodes 3 --rate 100mbit -- \\
      tests/specs/tiny.json --out /tmp/netns
EOF
}

say() { echo "$PROG: $*" >&2; }
die() { say "$*"; exit 1; }
die_usage() { say "$*"; say "see scripts/netns-cluster.sh --help"; exit 2; }

# ------------------------------------------------------------- arguments

NODES=""
RATE=""
DELAY=""
PSLAB_BIN="$REPO/build/pslab"
KEEP=0
SAW_DASHES=0

need_value() { [ "$2" -ge 2 ] || die_usage "$1 needs a value"; }

while [ $# -gt 0 ]; do
  case $1 in
    --nodes) need_value "$1" $#; NODES=$2; shift 2 ;;
    --nodes=*) NODES=${1#*=}; shift ;;
    --rate) need_value "$1" $#; RATE=$2; shift 2 ;;
    --rate=*) RATE=${1#*=}; shift ;;
    --delay) need_value "$1" $#; DELAY=$2; shift 2 ;;
    --delay=*) DELAY=${1#*=}; shift ;;
    --pslab) need_value "$1" $#; PSLAB_BIN=$2; shift 2 ;;
    --pslab=*) PSLAB_BIN=${1#*=}; shift ;;
    --keep) KEEP=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) SAW_DASHES=1; shift; break ;;
    -*) die_usage "unknown option '$1' (the pslab node options go after -- SPEC)" ;;
    *) die_usage "missing -- before SPEC '$1' (SPEC and the pslab node options go after --)" ;;
  esac
done

[ "$SAW_DASHES" -eq 1 ] || die_usage "missing -- before SPEC"
[ $# -ge 1 ] || die_usage "missing SPEC after --"
SPEC=$1
shift
[ -n "$NODES" ] || die_usage "missing --nodes N"
[[ $NODES =~ ^[0-9]+$ ]] || die_usage "--nodes: expected a number of nodes, got '$NODES'"
NODES=$((10#$NODES))
if [ "$NODES" -lt 1 ] || [ "$NODES" -gt "$MAX_NODES" ]; then
  die_usage "--nodes: expected 1 to $MAX_NODES nodes, got $NODES"
fi
if [ -n "$RATE" ] && ! [[ $RATE =~ ^[0-9]+(\.[0-9]+)?([KkMmGgTt]i?)?([Bb]ps|[Bb]it)$ ]]; then
  die_usage "--rate: expected a rate such as 1gbit, 100mbit or 10mbps, got '$RATE'"
fi
if [ -n "$DELAY" ] && ! [[ $DELAY =~ ^[0-9]+(\.[0-9]+)?(s|sec|ms|msec|us|usec)$ ]]; then
  die_usage "--delay: expected a time such as 1ms or 200us, got '$DELAY'"
fi
for arg in "$@"; do
  case $arg in
    --coordinator | --coordinator=* | -c | --coordinator-file | --coordinator-file=*)
      die_usage "$arg: the script gives every node its coordinator ($SUBNET.1:$COORD_PORT)" ;;
    cluster.bind=* | --set=cluster.bind=*)
      die_usage "$arg: the script sets cluster.bind to each node's own address" ;;
  esac
done

# ----------------------------------------------------------- environment

[ "$(id -u)" -eq 0 ] ||
  die "must run as root: network namespaces and links need CAP_NET_ADMIN (try sudo)"
command -v ip >/dev/null 2>&1 || die "ip (iproute2) is missing: apt-get install iproute2"
if [ -n "$RATE$DELAY" ]; then
  command -v tc >/dev/null 2>&1 || die "tc (iproute2) is missing, needed by --rate/--delay"
fi
if [ ! -f "$PSLAB_BIN" ] || [ ! -x "$PSLAB_BIN" ]; then
  die "no pslab binary at $PSLAB_BIN (build it, or give --pslab BIN)"
fi
[ -r "$SPEC" ] || die "cannot read SPEC $SPEC"

# ------------------------------------------------------- state, cleanup

PREFIX="pslab$$"
BRNS="$PREFIX-br"
CREATED=()       # namespaces made so far, bridge's first
NODE_PIDS=()     # node i's process (the pslab node, once ip netns exec has run)
SED_PIDS=()      # the processes prefixing the output of ranks > 0
SETUP_DONE=0
CLEANING=0
KEY_DIR=""       # the fresh cluster key's private directory, removed at the end

STATUS=()        # node i's exit status, once it has exited

# The nodes started and not yet known to have exited, by pid.
running_pids() {
  local i
  for ((i = 0; i < ${#NODE_PIDS[@]}; i++)); do
    [ -n "${STATUS[i]:-}" ] || echo "${NODE_PIDS[i]}"
  done
}

# ... of which the ones that still exist.
alive_pids() {
  local p
  for p in $(running_pids); do ! kill -0 "$p" 2>/dev/null || echo "$p"; done
}

node_ns() { echo "$PREFIX-$1"; }
node_addr() { echo "$SUBNET.$(($1 + 1))"; }

# Pids of every process inside the namespaces this invocation made.
ns_pids() {
  local ns
  for ns in "${CREATED[@]}"; do ip netns pids "$ns" 2>/dev/null || true; done
}

# Sends SIG to every process in our namespaces, then polls until none is left
# or WITHIN seconds have passed. 0 when none is left.
signal_and_wait() {
  local sig=$1 within=$2 pids tries
  # (a node not yet inside its namespace is only known by its pid)
  pids="$(ns_pids) $(running_pids)"
  [ -n "${pids// /}" ] || return 0
  # shellcheck disable=SC2086 # one pid per word
  kill "-$sig" $pids 2>/dev/null || true
  for ((tries = within * 10; tries > 0; tries--)); do
    [ -n "$(ns_pids)$(alive_pids)" ] || return 0
    sleep 0.1
  done
  [ -z "$(ns_pids)$(alive_pids)" ]
}

stop_nodes() {
  signal_and_wait TERM "$STOP_S" || signal_and_wait KILL 2 ||
    say "warning: processes still in the namespaces after SIGKILL: $(ns_pids | tr '\n' ' ')"
}

# Each node's bytes through its link, read before the namespaces go.
report_traffic() {
  local i tx rx
  for ((i = 0; i < NODES; i++)); do
    read -r -d '' tx rx < <(ip netns exec "$(node_ns "$i")" \
      cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/rx_bytes \
      2>/dev/null)
    say "node $i ($(node_addr "$i")): sent ${tx:-?} bytes, received ${rx:-?} bytes on eth0"
  done
}

cleanup() {
  local rc=$?
  [ "$CLEANING" -eq 0 ] || return 0
  CLEANING=1
  trap '' INT TERM HUP # a second Ctrl-C must not cut the cleanup short
  set +e
  [ "${#CREATED[@]}" -eq 0 ] || stop_nodes
  local p
  for p in "${SED_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  [ -z "$KEY_DIR" ] || rm -rf "$KEY_DIR"
  [ "$SETUP_DONE" -eq 0 ] || report_traffic
  if [ "${#CREATED[@]}" -gt 0 ] && [ "$KEEP" -eq 1 ]; then
    say "--keep: left in place namespaces ${CREATED[*]} (bridge, links and qdiscs in them);"
    say "remove them with: for ns in ${CREATED[*]}; do ip netns del \$ns; done"
  elif [ "${#CREATED[@]}" -gt 0 ]; then
    local ns left=()
    # Node namespaces first: each takes its veth pair (and their qdiscs) with it.
    for ((p = ${#CREATED[@]} - 1; p >= 0; p--)); do
      ip netns del "${CREATED[p]}" 2>/dev/null
    done
    for ns in "${CREATED[@]}"; do
      ! ip netns list | awk '{ print $1 }' | grep -qxF -- "$ns" || left+=("$ns")
    done
    if [ "${#left[@]}" -gt 0 ]; then
      say "error: could not remove namespaces ${left[*]}"
      [ "$rc" -ne 0 ] || rc=1
    else
      say "removed namespaces $PREFIX-* (bridge, links, qdiscs)"
    fi
  fi
  exit "$rc"
}

trap cleanup EXIT
trap 'say "interrupted (SIGINT): stopping"; exit 130' INT
trap 'say "terminated (SIGTERM): stopping"; exit 143' TERM
trap 'say "hung up (SIGHUP): stopping"; exit 129' HUP

# ---------------------------------------------------------------- setup

add_ns() {
  ip netns add "$1" || die "cannot create network namespace $1"
  CREATED+=("$1")
  ip -n "$1" link set lo up
}

# tbf's burst: 1 ms at RATE, at least 16 KiB (a few full-size packets).
tbf_burst() {
  local rate=$1 num unit scale
  num=$(echo "$rate" | sed -E 's/^([0-9.]+).*/\1/')
  unit=$(echo "$rate" | sed -E 's/^[0-9.]+//' | tr '[:upper:]' '[:lower:]')
  case $unit in
    bit) scale=0.125 ;; kbit) scale=125 ;; mbit) scale=125000 ;;
    gbit) scale=125000000 ;; tbit) scale=125000000000 ;;
    kibit) scale=128 ;; mibit) scale=131072 ;; gibit) scale=134217728 ;;
    tibit) scale=137438953472 ;;
    bps) scale=1 ;; kbps) scale=1000 ;; mbps) scale=1000000 ;;
    gbps) scale=1000000000 ;; tbps) scale=1000000000000 ;;
    kibps) scale=1024 ;; mibps) scale=1048576 ;; gibps) scale=1073741824 ;;
    tibps) scale=1099511627776 ;;
    *) die_usage "--rate: unknown unit in '$rate'" ;;
  esac
  awk -v n="$num" -v s="$scale" 'BEGIN { b = n * s / 1000; if (b < 16384) b = 16384;
    printf "%d\n", b }'
}

# netem must be there before --delay is promised: try it on the bridge
# namespace's loopback, where it touches nothing.
check_netem() {
  if ! tc -n "$BRNS" qdisc add dev lo root netem delay "$DELAY" 2>/dev/null; then
    die "netem is not available in this kernel: --delay cannot be applied" \
      "(tc qdisc add ... netem failed; the sch_netem module is missing)"
  fi
  tc -n "$BRNS" qdisc del dev lo root
}

# Shapes the egress of one end of a link: NS, DEV, and whether it gets the
# delay (the node's end does, so one way between two nodes is one DELAY).
shape() {
  local ns=$1 dev=$2 delay=$3
  if [ -n "$delay" ] && [ -n "$RATE" ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "$DELAY" limit 100000
    tc -n "$ns" qdisc add dev "$dev" parent 1:1 handle 10: tbf rate "$RATE" \
      burst "$BURST" latency 50ms
  elif [ -n "$delay" ]; then
    tc -n "$ns" qdisc add dev "$dev" root netem delay "$DELAY" limit 100000
  elif [ -n "$RATE" ]; then
    tc -n "$ns" qdisc add dev "$dev" root tbf rate "$RATE" burst "$BURST" latency 50ms
  fi
}

BURST=""
[ -z "$RATE" ] || BURST=$(tbf_burst "$RATE")

add_ns "$BRNS"
[ -z "$DELAY" ] || check_netem
ip -n "$BRNS" link add br0 type bridge forward_delay 0 stp_state 0
ip -n "$BRNS" link set br0 up
for ((i = 0; i < NODES; i++)); do
  ns=$(node_ns "$i")
  add_ns "$ns"
  ip -n "$BRNS" link add "veth$i" type veth peer name eth0 netns "$ns"
  ip -n "$BRNS" link set "veth$i" master br0 up
  ip -n "$ns" addr add "$(node_addr "$i")/24" dev eth0
  ip -n "$ns" link set eth0 up
  shape "$ns" eth0 "$DELAY"
  shape "$BRNS" "veth$i" ""
done
SETUP_DONE=1

say "$NODES nodes in namespaces $PREFIX-0 .. $PREFIX-$((NODES - 1)), bridge br0 in $BRNS"
say "addresses $SUBNET.1 .. $(node_addr $((NODES - 1))) (/24, eth0 of each node);" \
  "coordinator $SUBNET.1:$COORD_PORT"
if [ -n "$RATE" ]; then
  say "rate: tbf rate $RATE burst ${BURST}b latency 50ms on both ends of every link" \
    "(each node sends at most $RATE and receives at most $RATE)"
else
  say "rate: unshaped"
fi
if [ -n "$DELAY" ]; then
  say "delay: netem delay $DELAY on each node's eth0 (one way $DELAY, round trip 2x)"
else
  say "delay: none"
fi
[ "$KEEP" -eq 0 ] || say "--keep: the namespaces will be left in place after the run"

# ------------------------------------------------------------------ run

# The nodes bind beyond loopback, so they authenticate with CURVE: unless the
# options name a key or an auth mode, a fresh key for this cluster, in a
# private directory removed at the end.
KEY_OPT=()
own_key=0
for arg in "$@"; do
  case $arg in --key-file | --key-file=* | -K | *cluster.key_file=* | *cluster.auth=*) own_key=1 ;; esac
done
if [ "$own_key" -eq 0 ]; then
  KEY_DIR=$(mktemp -d /tmp/pslab-netns-key.XXXXXX) || die "cannot make a directory for the key"
  "$PSLAB_BIN" keygen --out "$KEY_DIR/cluster.key" 2>/dev/null ||
    die "cannot make the cluster's key ($PSLAB_BIN keygen)"
  KEY_OPT=(--key-file "$KEY_DIR/cluster.key")
  say "auth: CURVE with a fresh cluster key ($KEY_DIR/cluster.key, removed at the end)"
fi

for ((i = 0; i < NODES; i++)); do
  cmd=(ip netns exec "$(node_ns "$i")" env PSLAB_RANK="$i" PSLAB_SIZE="$NODES"
    "$PSLAB_BIN" node "$SPEC" --set "cluster.bind=\"$(node_addr "$i")\""
    --coordinator "$SUBNET.1:$COORD_PORT" "${KEY_OPT[@]}" "$@")
  if [ "$i" -eq 0 ]; then
    "${cmd[@]}" &
  else
    exec {out}> >(exec sed -u "s/^/[node $i] /" >&2)
    SED_PIDS+=($!)
    "${cmd[@]}" >&"$out" 2>&1 &
    exec {out}>&-
  fi
  NODE_PIDS+=($!)
done

running=$NODES
failed=""
grace_until=0

# Records that node I exited with status ST. Whatever it leaves in its
# namespace goes too: `pslab node` runs each run in a child process, which
# would go on (holding the node's connections open, so that its peers do
# not notice) if only the parent was killed.
node_done() {
  STATUS[$1]=$2
  running=$((running - 1))
  local left
  left=$(ip netns pids "$(node_ns "$1")" 2>/dev/null) || true
  # shellcheck disable=SC2086 # one pid per word
  [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
  if [ "$2" -ne 0 ] && [ -z "$failed" ]; then
    failed=$1
    say "node $1 exited with status $2"
    grace_until=$((SECONDS + GRACE_S))
  fi
}

# Waits for the nodes, polling (bash's `wait -n` can miss a job that ended
# while another was being reaped); after the first failure the others get
# GRACE_S seconds to fail or finish by themselves (rank 0 then names the
# failed peer), then they are stopped.
while [ "$running" -gt 0 ]; do
  alive=0
  for ((i = 0; i < NODES; i++)); do
    [ -z "${STATUS[i]:-}" ] || continue
    if kill -0 "${NODE_PIDS[i]}" 2>/dev/null; then
      alive=1
    else
      st=0
      wait "${NODE_PIDS[i]}" || st=$?
      node_done "$i" "$st"
    fi
  done
  if [ "$alive" -eq 1 ] && [ -n "$failed" ] && [ "$SECONDS" -ge "$grace_until" ]; then
    say "stopping the nodes still running $GRACE_S s after node $failed failed"
    stop_nodes
  elif [ "$alive" -eq 1 ]; then
    sleep 0.1
  fi
done

rank0=${STATUS[0]}
for ((i = 1; i < NODES; i++)); do
  [ "${STATUS[i]}" -eq 0 ] || say "node $i failed (status ${STATUS[i]})"
done
if [ -n "$failed" ] && [ "$failed" -ne 0 ] && [ "$rank0" -ne 0 ]; then
  # rank 0 may have been stopped by the script, not failed by itself
  exit 1
elif [ "$rank0" -ne 0 ]; then
  exit "$rank0"
elif [ -n "$failed" ]; then
  exit 1
fi
exit 0
