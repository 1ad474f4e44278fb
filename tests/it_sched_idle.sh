#!/usr/bin/env bash
# scripts/sched-idle.sh on a hand-made trace of two cores (the text `perf script` prints): the time
# each kind of thread ran on each core, each idle moment sorted by what the run's threads did then
# (woken onto it, runnable on the other core, running on the other core only), the wake-ups' delays
# by kind and how, by how long the core had idled, the woken threads that changed core, what the run
# did while the worker slept (only its sleep that ended in a wake-up counts), the idle time while
# a thread waited on the other core by who waited behind what, the I/O threads' turns
# and how far into them they woke another node's I/O thread and their reader; a thread of
# another process counted as not the run's; a trace without a worker refused. CTest sets
# PSLAB_SOURCE_DIR.
set -u
SRC=${PSLAB_SOURCE_DIR:?set PSLAB_SOURCE_DIR to the source tree}
S="$SRC/scripts/sched-idle.sh"
failures=0
fail() { echo "FAIL $1"; failures=$((failures + 1)); }
sw() { # CUR_COMM PID/TID CPU TIME PREV_COMM PREV_PID PREV_STATE NEXT_COMM NEXT_PID
  echo "$1 $2 [$3] $4: sched:sched_switch: prev_comm=$5 prev_pid=$6 prev_prio=120 prev_state=$7 ==> next_comm=$8 next_pid=$9 next_prio=120"
}
trace() {
  sw pslab 200/200 001 0.999000 pslab 200 S swapper/1 0 # a second node's process
  sw swapper 0/0 000 1.000000 swapper/0 0 R pslab-w0 101
  sw swapper 0/0 001 1.000000 swapper/1 0 R ZMQbg/IO/0 102
  sw pslab-w0 100/101 000 1.001000 pslab-w0 101 S swapper/0 0
  echo "ZMQbg/IO/0 100/102 [001] 1.001500: sched:sched_waking: comm=pslab-w0 pid=101 prio=120 target_cpu=000"
  echo "ZMQbg/IO/0 100/102 [001] 1.002000: sched:sched_waking: comm=ZMQbg/IO/0 pid=202 prio=120 target_cpu=001"
  sw swapper 0/0 000 1.002100 swapper/0 0 R pslab-w0 101
  sw ZMQbg/IO/0 100/102 001 1.003000 ZMQbg/IO/0 102 S ZMQbg/IO/0 202
  sw ZMQbg/IO/0 200/202 001 1.003500 ZMQbg/IO/0 202 S swapper/1 0
  echo "pslab-w0 100/101 [000] 1.004000: sched:sched_waking: comm=ZMQbg/IO/0 pid=102 prio=120 target_cpu=001"
  echo "pslab-w0 100/101 [000] 1.004000: sched:sched_migrate_task: comm=ZMQbg/IO/0 pid=102 prio=120 orig_cpu=1 dest_cpu=0"
  sw pslab-w0 100/101 000 1.005000 pslab-w0 101 R ZMQbg/IO/0 102
  sw ZMQbg/IO/0 100/102 000 1.006000 ZMQbg/IO/0 102 S pslab-w0 101
  sw swapper 0/0 001 1.006500 swapper/1 0 R kworker/1:0 50
  sw kworker/1:0 50/50 001 1.006800 kworker/1:0 50 I swapper/1 0
  sw pslab-w0 100/101 000 1.007000 pslab-w0 101 S swapper/0 0
}
out=$(trace | bash "$S" -) || fail "exit status $?"
want() { grep -qxF -- "$1" <<<"$out" || fail "missing line: $1"; }
want "window: the run's first to last worker turn, 7.0 ms"
want "   0 | 4.9 | 0.0 | 1.0 | 0.0 | 0.0 | 0.6 | 0.0 | 0.5 | 0.0"
want "   1 | 0.0 | 0.0 | 3.5 | 0.0 | 0.3 | 0.0 | 2.0 | 1.2 | 0.0"
want "  worker    onto an idle core       1    600.0    600.0      0.6"
want "  worker    preempted               1   1000.0   1000.0      1.0"
want "  zmq io    onto a busy core        2   1000.0   1000.0      2.0"
want "  idled 200 us to 1 ms        1    600.0    600.0"
want "  idled 1 ms or more          0      0.0      0.0"
want "woken threads that ran on another core than their last: 1 of 2"
want "an I/O thread's turn on a core: 3, median 1000.0 us"
want "  it wakes another node's I/O thread: 1 times, a median 2000.0 us into its turn, 1000.0 us before its end"
want "  it wakes its node's reader: 1 times, a median 1500.0 us into its turn, 1500.0 us before its end"
want "a core idle while the run's threads wait on another (ms), who waits behind what: worker behind zmq io 1.0, zmq io behind worker 1.0"
want "the workers' sleeps (1, 0.5 ms in all), what the run did meanwhile: a thread starting on an idle core 0.0, a thread waiting for a busy core 0.0, threads running, none waiting 0.5, nothing 0.0 (ms)"
err=$(trace | grep -v pslab-w0 | bash "$S" - 2>&1) && fail "a trace without a worker accepted"
grep -q "no thread named pslab-w" <<<"$err" || fail "no worker: message was: $err"
bash "$S" /nonexistent/s.data 2>/dev/null && fail "a missing trace accepted"
[ $failures -eq 0 ] && echo "it_sched_idle: all passed"
exit $((failures > 0))
