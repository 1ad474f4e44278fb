/*
 * Stragglers on the real backend: an emulation of a slow node, not a slow
 * machine. The simulator slows a straggler's host and link (sim/); here
 * every node runs at the speed of the machine it is on, so a straggler's
 * node slows itself down by sleeping, during its phases (run/run.h), as
 * much as the slowed host or link would have added:
 *
 *   its server    after handling a message in h seconds (the core's call,
 *                 without this file's own sleeps), sleeps
 *                 run_phase_stretch(t0, h) - h: h x (1/f - 1) inside one
 *                 phase of speed_factor f, as the simulator stretches its
 *                 server's handling costs;
 *   its link      each data message to or from another node of len bytes
 *                 costs len x (1/(B f) - 1/B) at bandwidth_factor f, B the
 *                 simulated link's bandwidth (real_cluster.bandwidth): what
 *                 the slowed link adds to that message. Received messages
 *                 are delayed by the receiver thread before the next is
 *                 read (the down link), sent ones by the thread that sends
 *                 them before they leave (the up link), so later messages
 *                 queue behind them as on a slow link;
 *   its workers   compute of s seconds (flops / host_speed) starting at t
 *                 takes run_phase_stretch(t, s) instead.
 *
 * Messages a node sends itself take no link, as in the simulator. A factor
 * above 1 cannot be emulated (nothing is made faster): it adds nothing. A
 * step whose real math ran (wl_math) is not stretched: its time is the
 * math's own. Sleeps are absolute deadlines on the monotonic clock, with
 * the sleeping thread's timer slack at its minimum (Linux), so they end
 * within a few microseconds of when they should; their real length is
 * what throttle_s counts.
 */
#include "real/internal.h"

#include <errno.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

/* Seconds this thread has slept here: a handling's own time leaves them out. */
static _Thread_local double thread_slept;
static _Thread_local bool thread_slack_set;

void real_throttle_init(real_node *n) {
  n->slow = NULL;
  for (size_t i = 0; i < n->cluster.n_stragglers; i++)
    if (n->cluster.stragglers[i].node == n->rank && n->cluster.stragglers[i].n_phases)
      n->slow = &n->cluster.stragglers[i];
  atomic_init(&n->throttled, 0);
  atomic_init(&n->throttle_ns, 0);
}

static void add_time(real_node *n, double s) {
  if (s > 0) atomic_fetch_add(&n->throttle_ns, (uint64_t)(s * 1e9));
}

static void sleep_for(real_node *n, double s) {
  if (!(s > 0)) return;
#if defined(__linux__)
  if (!thread_slack_set) { /* 1 ns instead of 50 us: sleeps of tens of us */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    thread_slack_set = true;
  }
#endif
  double start = real_clock(), end = start + s;
  struct timespec ts = {.tv_sec = (time_t)end};
  ts.tv_nsec = (long)((end - (double)ts.tv_sec) * 1e9);
  if (ts.tv_nsec > 999999999L) ts.tv_nsec = 999999999L;
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) continue;
  double slept = real_clock() - start;
  thread_slept += slept;
  add_time(n, slept);
}

/* What the link adds to len bytes at node time t. */
static double link_delay(const real_node *n, double t, size_t len) {
  const real_straggler *s = n->slow;
  double f = run_phase_factor(s->phases, s->n_phases, t, true);
  double b = n->cluster.bandwidth;
  if (!(f < 1) || !(b > 0)) return 0;
  return (double)len * (1.0 / (b * f) - 1.0 / b);
}

void real_throttle_handled(real_node *n, uint32_t src, double t0, double handling_s,
                           size_t len) {
  const real_straggler *s = n->slow;
  if (!s) return;
  double extra = 0;
  extra += run_phase_stretch(s->phases, s->n_phases, t0, handling_s) - handling_s;
  if (src != n->rank) extra += link_delay(n, t0, len);
  if (!(extra > 0)) return;
  atomic_fetch_add(&n->throttled, 1);
  sleep_for(n, extra);
}

void real_throttle_send(real_node *n, uint32_t dst, size_t len) {
  if (!n->slow || dst == n->rank) return;
  double extra = link_delay(n, real_node_now(n), len);
  if (!(extra > 0)) return;
  atomic_fetch_add(&n->throttled, 1);
  sleep_for(n, extra);
}

double real_throttle_compute(real_node *n, double seconds) {
  const real_straggler *s = n->slow;
  if (!s || !(seconds > 0)) return seconds;
  double d = run_phase_stretch(s->phases, s->n_phases, real_node_now(n), seconds);
  add_time(n, d - seconds);
  return d;
}

double real_throttle_thread_slept(void) { return thread_slept; }
