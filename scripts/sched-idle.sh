#!/usr/bin/env bash
# sched-idle.sh: where a real run's cores stand idle, from a `perf sched record` trace.
#
#   perf sched record -o s.data -- build/pslab run SPEC --backend real ...
#   scripts/sched-idle.sh s.data          # or: perf script -F ... | scripts/sched-idle.sh -
#
# Follows every thread of the run's processes (those with a thread named pslab*) through the
# scheduler's events (sched_switch, sched_waking / sched_wakeup(_new), sched_migrate_task): running
# on a core, runnable (woken or preempted, waiting for its core) or blocked. Over the window from the
# run's first to its last worker turn it prints, per core, the milliseconds each kind of thread ran
# (the workers pslab-w*, the receivers pslab-recv, ZeroMQ's I/O threads ZMQbg/IO*, the processes'
# other threads, threads not of the run), and sorts each moment the core idled by what the run's
# threads were doing then:
#   woken here   a thread of the run was woken onto this core and had not started yet
#   runnable     none was, but one waited runnable on another core (it did not move here)
#   other core   none waited: the run's work went on on another core only
#   all blocked  every thread of the run was blocked
# Then each wake-up's delay until the thread ran, by thread kind and by whether the core it was woken
# onto was idle or busy (or it was preempted), and the wake-ups onto an idle core by how long that
# core had idled; how often a woken thread ran on another core than its last one; the "runnable"
# idle time by who waited on the other core behind what ran there (shared among the waiters); and over the
# workers' sleeps (a worker blocked until it is woken), what the run's threads did meanwhile: a
# thread woken onto an idle core starting, one waiting runnable for a busy core, only running ones;
# and how far into its turn an I/O thread passes a message on (waking the other node's I/O thread, or
# its own node's reader), which tells the part of its work that lies on the message's way.
set -euo pipefail
usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }
[ $# -eq 1 ] || { usage >&2; exit 2; }
case $1 in -h | --help) usage; exit 0 ;; esac
tmp=$(mktemp /tmp/pslab-sched-idle.XXXXXX)
trap 'rm -f "$tmp"' EXIT
if [ "$1" = - ]; then
  cat >"$tmp"
else
  [ -r "$1" ] || { echo "sched-idle: cannot read $1" >&2; exit 2; }
  perf script -i "$1" -F comm,pid,tid,cpu,time,event,trace >"$tmp" 2>/dev/null ||
    { echo "sched-idle: perf script could not read $1" >&2; exit 2; }
fi

awk '
function field(s, key,    i, r) { # the value of "key=" in s, up to the next space
  i = index(s, key "=")
  while (i > 1 && substr(s, i - 1, 1) != " ") { # a key that ends another (pid in prev_pid)
    r = index(substr(s, i + 1), key "=")
    if (!r) return ""
    i += r
  }
  if (!i) return ""
  r = substr(s, i + length(key) + 1)
  sub(/ .*/, "", r)
  return r
}
function between(s, a, b,    i, j) { # the text between "a" and "b" in s (names with spaces)
  i = index(s, a)
  if (!i) return ""
  s = substr(s, i + length(a))
  j = index(s, b)
  return j ? substr(s, 1, j - 1) : s
}
function kind(tid,    c) {
  c = name[tid]
  if (c ~ /^pslab-w/) return "worker"
  if (c == "pslab-recv") return "receiver"
  if (c ~ /^ZMQbg\/IO/) return "zmq io"
  return "other"
}
function parse(    i) { # sets ok, tid, pid, cpu, t, ev, rest from the current line
  ok = 0
  for (i = 1; i <= NF - 3; i++) if ($i ~ /^-?[0-9]+\/-?[0-9]+$/) break
  if (i > NF - 3 || $(i + 1) !~ /^\[[0-9]+\]$/) return
  split($i, pt, "/"); pid = pt[1] + 0; tid = pt[2] + 0
  comm = $1; for (k = 2; k < i; k++) comm = comm " " $k
  cpu = substr($(i + 1), 2, length($(i + 1)) - 2) + 0
  t = $(i + 2); sub(/:$/, "", t); t += 0
  ev = $(i + 3); sub(/:$/, "", ev); sub(/^.*:/, "", ev)
  rest = $0; sub(/^.*sched:[a-z_]+:[ \t]*/, "", rest)
  ok = (ev == "sched_switch" || ev == "sched_waking" || ev == "sched_wakeup" ||
        ev == "sched_wakeup_new" || ev == "sched_migrate_task")
}
function in_run(x) { return (x in tgid) && (tgid[x] in run) }
function sortq(a, n,    i, j, v) { for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v } }
function q(a, n, p,    k) { if (!n) return 0; k = int(p * n) + 1; if (k > n) k = n; return a[k] }
function account(now,    lo, hi, dt, c, r, x, here, elsewhere, other, o, k, w) {
  lo = last > t0 ? last : t0; hi = now < t1 ? now : t1
  if (hi <= lo) return
  dt = hi - lo
  if (nasleep) { # what the rest of the run did while workers slept
    here = elsewhere = other = 0
    for (x in st) if (st[x] == "ready" && in_run(x)) { if ((at[x] in running) && running[at[x]] == 0) here = 1; else elsewhere = 1 }
    for (o in running) if (running[o] != 0 && in_run(running[o])) other = 1
    k = here ? "woken here" : elsewhere ? "runnable" : other ? "other core" : "all blocked"
    for (w in asleep) pend[w, k] += dt
  }
  for (c in cpus) {
    if (!(c in running)) continue
    r = running[c]
    if (r != 0) { busy[c, in_run(r) ? kind(r) : "not the run"] += dt; continue }
    here = elsewhere = other = 0
    for (x in st) if (st[x] == "ready" && in_run(x)) { if (at[x] == c) here = 1; else elsewhere++ }
    for (o in cpus) if (o != c && (o in running) && running[o] != 0 && in_run(running[o])) other = 1
    idle[c, here ? "woken here" : elsewhere ? "runnable" : other ? "other core" : "all blocked"] += dt
    if (!here && elsewhere) # who waits there, behind what: the idle time shared among them
      for (x in st) if (st[x] == "ready" && in_run(x)) behind[kind(x) " behind " ran_at(at[x])] += dt / elsewhere
  }
}
function ran_at(o,    r) {
  if (!(o in running) || running[o] == 0) return "an idle core"
  r = running[o]; return in_run(r) ? kind(r) : "not the run"
}
FNR == NR { # the first pass: the run processes, thread names, the window of the workers
  parse(); if (!ok) next
  if (tid > 0) { tgid[tid] = pid; name[tid] = comm; if (comm ~ /^pslab/) run[pid] = 1 }
  if (ev == "sched_switch") { nt = field(rest, "next_pid") + 0; if (!(nt in name)) name[nt] = between(rest, "next_comm=", " next_pid=") }
  if (ev == "sched_switch" && (between(rest, "prev_comm=", " prev_pid=") ~ /^pslab-w/ ||
                               between(rest, "next_comm=", " next_pid=") ~ /^pslab-w/)) {
    if (!seen || t < t0) t0 = t
    if (!seen || t > t1) t1 = t
    seen = 1
  }
  cpus[cpu] = 1
  next
}
FNR == 1 { split("woken here|runnable|other core|all blocked", I, "|") }
FNR == 1 { if (!seen) { print "sched-idle: no thread named pslab-w* (a worker) switched in the trace" > "/dev/stderr"; bad = 1; exit 2 }; last = t0 }
{
  parse(); if (!ok) next
  account(t); last = t
  if (ev == "sched_switch") {
    p = field(rest, "prev_pid") + 0; n = field(rest, "next_pid") + 0
    if ((p in turn_from) && kind(p) == "zmq io" && in_run(p) && t >= t0 && t <= t1) { # a turn of an I/O thread ends
      nturn++; pturn[nturn] = t - turn_from[p]
      for (j = 1; j <= npass[p]; j++) { k = pk[p, j]; pn[k]++; pb[k, pn[k]] = passed_at[p, j] - turn_from[p]; pa[k, pn[k]] = t - passed_at[p, j] }
    }
    delete turn_from[p]; npass[p] = 0
    if (n != 0) turn_from[n] = t
    if (p != 0) {
      if (field(rest, "prev_state") ~ /^R/) { st[p] = "ready"; at[p] = cpu; since[p] = t; how[p] = "preempted"; idled[p] = -1 }
      else {
        st[p] = "blocked"
        if (kind(p) == "worker" && in_run(p) && !(p in asleep)) { asleep[p] = 1; nasleep++; for (k = 1; k <= 4; k++) pend[p, I[k]] = 0 }
      }
    }
    if (n != 0) {
      if (st[n] == "ready" && t >= t0 && t <= t1 && in_run(n)) {
        key = kind(n) SUBSEP how[n]; cnt[key]++; d[key, cnt[key]] = t - since[n]; sum[key] += t - since[n]
        if (idled[n] >= 0) { b = idled[n] < 50e-6 ? 1 : idled[n] < 200e-6 ? 2 : idled[n] < 1e-3 ? 3 : 4; icnt[b]++; id[b, icnt[b]] = t - since[n] }
        if (how[n] != "preempted" && (n in lastcpu)) { wakes++; if (cpu != lastcpu[n]) moved++ }
      }
      st[n] = "run"; lastcpu[n] = cpu
    }
    running[cpu] = n
    if (n == 0) idle_since[cpu] = t; else delete idle_since[cpu]
  } else if (ev == "sched_migrate_task") {
    w = field(rest, "pid") + 0
    if (st[w] == "ready") {
      at[w] = field(rest, "dest_cpu") + 0
      if (how[w] != "preempted") { # placed on another core as it wakes: judged by that one
        if ((at[w] in running) && running[at[w]] == 0) { how[w] = "onto an idle core"; idled[w] = (at[w] in idle_since) ? t - idle_since[at[w]] : -1 }
        else { how[w] = "onto a busy core"; idled[w] = -1 }
      }
    }
  } else {
    w = field(rest, "pid") + 0; tc = field(rest, "target_cpu") + 0
    if (tid in turn_from && kind(tid) == "zmq io" && in_run(w) && in_run(tid)) { # what an I/O pass hands on, and when
      k = (kind(w) == "zmq io" && tgid[w] != tgid[tid]) ? 1 : (kind(w) == "worker" || kind(w) == "receiver") && tgid[w] == tgid[tid] ? 2 : 0
      if (k) { npass[tid]++; pk[tid, npass[tid]] = k; passed_at[tid, npass[tid]] = t }
    }
    if (w in asleep) { delete asleep[w]; nasleep--; sleeps++; for (k = 1; k <= 4; k++) slept[I[k]] += pend[w, I[k]] }
    if (st[w] != "run" && st[w] != "ready") {
      st[w] = "ready"; at[w] = tc; since[w] = t
      if ((tc in running) && running[tc] == 0) { how[w] = "onto an idle core"; idled[w] = (tc in idle_since) ? t - idle_since[tc] : -1 }
      else { how[w] = "onto a busy core"; idled[w] = -1 }
    }
  }
}
END {
  if (bad) exit 2
  account(t1)
  printf "window: the run'"'"'s first to last worker turn, %.1f ms\n", 1e3 * (t1 - t0)
  split("worker|receiver|zmq io|other|not the run", K, "|")
  split("woken here|runnable|other core|all blocked", I, "|")
  print "core | worker | receiver | zmq io | other | not the run | idle: woken here | runnable | other core | all blocked (ms)"
  for (c = 0; c < 1024; c++) {
    if (!(c in cpus)) continue
    line = sprintf("%4d", c)
    for (k = 1; k <= 5; k++) line = line sprintf(" | %.1f", 1e3 * busy[c, K[k]])
    line = line " |"
    for (k = 1; k <= 4; k++) line = line sprintf(" %s%.1f", k > 1 ? "| " : "", 1e3 * idle[c, I[k]])
    print line
  }
  print "wake-up to running: thread kind, how, count, median us, p90 us, sum ms"
  nkeys = 0; for (key in cnt) keys[++nkeys] = key
  sortq(keys, nkeys)
  for (j = 1; j <= nkeys; j++) {
    key = keys[j]; n = cnt[key]; delete a; for (i = 1; i <= n; i++) a[i] = d[key, i]; sortq(a, n)
    split(key, kh, SUBSEP)
    printf "  %-9s %-18s %6d %8.1f %8.1f %8.1f\n", kh[1], kh[2], n, 1e6 * q(a, n, 0.5), 1e6 * q(a, n, 0.9), 1e3 * sum[key]
  }
  print "a wake-up onto an idle core, by how long the core had idled: count, median us, p90 us"
  split("under 50 us|50 to 200 us|200 us to 1 ms|1 ms or more", B, "|")
  for (b = 1; b <= 4; b++) {
    n = icnt[b] + 0; delete a; for (i = 1; i <= n; i++) a[i] = id[b, i]; sortq(a, n)
    printf "  idled %-16s %6d %8.1f %8.1f\n", B[b], n, 1e6 * q(a, n, 0.5), 1e6 * q(a, n, 0.9)
  }
  printf "woken threads that ran on another core than their last: %d of %d\n", moved, wakes
  delete a; for (i = 1; i <= nturn; i++) a[i] = pturn[i]; sortq(a, nturn)
  printf "an I/O thread'"'"'s turn on a core: %d, median %.1f us\n", nturn, 1e6 * q(a, nturn, 0.5)
  split("wakes another node'"'"'s I/O thread|wakes its node'"'"'s reader", P, "|")
  for (k = 1; k <= 2; k++) {
    n = pn[k] + 0; delete a; delete c2
    for (i = 1; i <= n; i++) { a[i] = pb[k, i]; c2[i] = pa[k, i] }
    sortq(a, n); sortq(c2, n)
    printf "  it %s: %d times, a median %.1f us into its turn, %.1f us before its end\n", P[k], n, 1e6 * q(a, n, 0.5), 1e6 * q(c2, n, 0.5)
  }
  nb = 0; for (key in behind) bk[++nb] = key
  sortq(bk, nb)
  printf "a core idle while the run'"'"'s threads wait on another (ms), who waits behind what:"
  if (!nb) printf " none"
  for (j = 1; j <= nb; j++) printf " %s %.1f%s", bk[j], 1e3 * behind[bk[j]], j < nb ? "," : ""
  print ""
  tot = 0; for (k = 1; k <= 4; k++) tot += slept[I[k]]
  printf "the workers'"'"' sleeps (%d, %.1f ms in all), what the run did meanwhile:", sleeps, 1e3 * tot
  split("a thread starting on an idle core|a thread waiting for a busy core|threads running, none waiting|nothing", J, "|")
  for (k = 1; k <= 4; k++) printf " %s %.1f%s", J[k], 1e3 * slept[I[k]], k < 4 ? "," : ""
  print " (ms)"
}' "$tmp" "$tmp"
