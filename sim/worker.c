/*
 * The worker side of a simulated run: one actor per worker runs the shared
 * worker loop (wl_drive, in workloads/) with a driver env backed by SimGrid.
 *
 *   wait     blocks on the worker's SimGrid condition until ps_worker_done;
 *            the node's env.wake (called by whichever actor completes the
 *            ticket inside the core) notifies it. The worker holds its mutex
 *            for life, so a wait is one simcall. Giving its core up before
 *            the wait may yield (cores.c): a wake-up that comes meanwhile
 *            clears `waiting`, and then it does not wait (sim_cpu_block_wait).
 *            Under the run-queue model (cores.c) a waiting worker gives its
 *            core up; the node's server may read messages as its thread
 *            meanwhile, as a real waiting worker reads the ROUTER itself
 *            (server.c). One whose reply it read so goes on on the core it
 *            read it on; one woken by another thread pays a wake-up
 *            (cost.wakeup_s) on a core it waits for, also when another of
 *            its tickets completed and it waits again (env.wake wakes a
 *            real waiter for each); one that reads reads on instead.
 *   compute  sg_actor_execute(flops) on the node's host (one core each);
 *            flops / host_speed count as the node's CPU (sim_note_cpu).
 *   initial  real math's initial values (cost.initial_per_float_s per float
 *            the step gave one): executed on the host as the flops are.
 *   now      the simulated clock.
 *
 * Local accesses (keys a worker reads or writes in its node's memory, counted
 * by the core per node) cost cost.local_per_key_s each (sim_spend: a sleep,
 * or work on the machine's cores with placement). The driver does not
 * say which worker made them, so at each wait and compute the worker charges,
 * as a sleep, the node's local accesses not yet charged to anyone: exact with
 * one worker per node; with several, a worker may pay for a neighbour's keys
 * issued while it yielded, which moves cost between workers of a node, not in
 * total. Those that found their key last touched by another thread of the
 * node (the core counts them: ps_node_count_shared) cost cost.shared_* more,
 * charged the same way. Each step the driver completes costs cost.step_s,
 * the worker's own work per step (its workload's), charged the same way
 * when the worker's clock is seen to advance.
 */
#include "sim/sim_internal.h"

#include <math.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/mutex.h>

/* (The last report, 1.0, comes when the run goes quiet: wait_quiet.) */
static void report_progress(sim_state *run) {
  if (!run->progress || run->steps_done < run->next_report) return;
  uint64_t total = run->steps_total;
  if (run->steps_done >= total) return;
  run->progress(run->progress_ctx, simgrid_get_clock(), (double)run->steps_done / (double)total);
  uint64_t slice = run->steps_done * SIM_PROGRESS_STEPS / total + 1;
  run->next_report = (slice * total + SIM_PROGRESS_STEPS - 1) / SIM_PROGRESS_STEPS;
}

/* Steps count as done when the driver advances the worker's clock; each
 * costs the worker cost.step_s, its own work beyond what is charged else. */
static void count_steps(sim_worker *w) {
  sim_state *run = w->node->run;
  int64_t clock = (int64_t)run_worker_progress(run->setup, &w->rw);
  if (clock <= w->clock_seen) return;
  uint64_t steps = (uint64_t)(clock - w->clock_seen);
  run->steps_done += steps;
  run->progress_at = simgrid_get_clock();
  w->clock_seen = clock;
  report_progress(run);
  sim_spend(run, w->node, run->cost.step_s * (double)steps);
}

static void charge_local(sim_worker *w) {
  sim_node *n = w->node;
  const sim_cost *c = &n->run->cost;
  if (c->local_per_key_s <= 0 && !sim_counts_shared(c)) return;
  ps_node_stats st;
  ps_node_get_stats(n->core, &st);
  uint64_t fresh = st.local_accesses - n->local_charged;
  n->local_charged = st.local_accesses;
  double s = c->local_per_key_s * (double)fresh +
             sim_shared_cost(c, st.shared_accesses - n->shared_charged,
                             st.shared_floats - n->shared_floats_charged);
  n->shared_charged = st.shared_accesses;
  n->shared_floats_charged = st.shared_floats;
  if (s > 0) sim_spend(n->run, n, s);
}

/* What every callback does first: pay for local accesses, count steps, and
 * let the node's timer know if the worker's operations set an earlier one. */
static void worker_settle(sim_worker *w) {
  sim_outbox_reap(&w->out);
  charge_local(w);
  count_steps(w);
  sim_node_poke_timer(w->node);
}

/* ----------------------------------------------------------- driver env */

/* Whether the node's server is handling a message as w's thread. */
bool sim_worker_reading(const sim_worker *w) {
  return w->node->server_busy && w->node->server_out.as == &w->out.thread;
}

/* Run-queue model: w was woken from a wait, for its ticket or for another
 * of its tickets that completed (env.wake names a ticket, and a real
 * waiter is woken for each one, looks, and waits again if its own is not
 * done: real/transport.c). Either way its thread runs again before it
 * looks: on the core it read a reply on, or after a wake-up. */
static void woken(sim_worker *w) {
  const sim_state *run = w->node->run;
  if (!sim_run_queue(run)) return;
  while (sim_worker_reading(w)) { /* done by another actor while it reads as w */
    w->lead_wait = true;
    sg_cond_wait(w->done_cond, w->mutex);
  }
  if (w->out.thread.holding) return; /* it read its reply itself: it goes on */
  sim_spend(run, w->node, run->cost.wakeup_s);
}

static int drv_wait(void *ctx, ps_worker *handle, ps_ticket t) {
  sim_worker *w = ctx;
  sim_state *run = w->node->run;
  worker_settle(w);
  bool waited = false;
  while (!ps_worker_done(handle, t)) {
    if (run->stuck[0]) { /* the watchdog gave up: the run fails */
      w->waiting = false;
      return PS_ERR_PEER;
    }
    if (!waited) w->wait_since = simgrid_get_clock();
    waited = true;
    w->waiting = true;
    w->wait_ticket = t;
    sim_thread *gives_up = sim_worker_reading(w) ? NULL : &w->out.thread;
    sim_cpu_block_wait(run, gives_up, &w->waiting, w->done_cond, w->mutex, INFINITY);
    w->waiting = false;
    woken(w);
  }
  w->waiting = false;
  return PS_OK;
}

static void drv_compute(void *ctx, double flops, bool math_done) {
  (void)math_done; /* simulated time: the step's flops are charged all the same */
  sim_worker *w = ctx;
  worker_settle(w);
  if (!(flops > 0)) return;
  sim_note_cpu(w->node->run, w->node, flops / w->node->run->core_speed);
  sim_execute(w->node->run, w->node, flops);
}

/* Real math's initial values: work of the worker's core, as its flops. */
static void drv_initial(void *ctx, uint64_t floats) {
  sim_worker *w = ctx;
  const sim_state *run = w->node->run;
  double s = run->cost.initial_per_float_s * (double)floats;
  if (!(s > 0)) return;
  sim_note_cpu(run, w->node, s);
  sim_execute(run, w->node, s * run->core_speed);
}

static double drv_now(void *ctx) {
  (void)ctx;
  return simgrid_get_clock();
}

/* ------------------------------------------------------------- watchdog */

/* The deadline of the workers' waits: once no step was done anywhere for
 * timeout_s of simulated time while a worker waits, the run stops (its
 * timers too) and fails, saying what the first waiting worker waits for;
 * every waiting worker is woken to give up. A daemon that only sleeps: it
 * ends with the workers, so a run's end never waits for it. A timed wait in
 * each worker would not do: SimGrid keeps a notified wait's timeout, and the
 * run's clock would run on to it. */
static void stuck_now(sim_state *run) {
  for (uint32_t i = 0; i < run->num_workers; i++) {
    sim_worker *w = &run->workers[i];
    if (!w->waiting) continue;
    if (!run->stuck[0]) {
      char what[192];
      run_describe_wait(w->rw.handle, w->wait_ticket, what, sizeof what);
      snprintf(run->stuck, sizeof run->stuck,
               "simulation stuck: no step done for timeout_s %g (simulated) since %g s; worker "
               "%u.%u waits for %s: its answer was lost, or a step takes longer than "
               "timeout_s", run->timeout_s, run->progress_at, (unsigned)w->node->id,
               (unsigned)w->rw.index, what);
    }
    w->waiting = false;
    sg_cond_notify_one(w->done_cond);
  }
}

static void watchdog_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_state *run = sg_actor_self_get_data();
  sg_actor_daemonize(sg_actor_self());
  for (;;) {
    double left = run->progress_at + run->timeout_s - simgrid_get_clock();
    if (left > 0) {
      sg_actor_sleep_for(left);
      continue;
    }
    bool waiting = false;
    for (uint32_t i = 0; i < run->num_workers && !waiting; i++) waiting = run->workers[i].waiting;
    if (!waiting) { /* steps take long, nobody waits: look again later */
      sg_actor_sleep_for(run->timeout_s);
      continue;
    }
    stuck_now(run);
    run->stopping = true;
    return;
  }
}

void sim_watchdog_spawn(sim_state *run, sg_host_t host) {
  sg_actor_t a = sg_actor_init("watchdog", host);
  sg_actor_set_data(a, run);
  sg_actor_start(a, watchdog_main, 0, NULL);
}

/* ---------------------------------------------------------------- actor */

/* The last worker keeps the simulation alive until nothing is in flight. */
static void wait_quiet(sim_state *run) {
  sim_check_quiet(run);
  sim_cpu_block_self(run);
  sg_mutex_lock(run->quiet_mutex);
  while (!run->stopping) sg_cond_wait(run->quiet_cond, run->quiet_mutex);
  sg_mutex_unlock(run->quiet_mutex);
  if (run->progress) run->progress(run->progress_ctx, run->quiet_time, 1.0);
}

void sim_worker_main(sim_worker *w) {
  sim_state *run = w->node->run;
  wl_driver_env env = {.ctx = w, .wait = drv_wait, .compute = drv_compute,
                       .initial = drv_initial, .now = drv_now};
  sg_mutex_lock(w->mutex);
  double from = simgrid_get_clock();
  run_worker_drive(&w->rw, run->setup, env);
  /* what of its steps' time it neither ran nor waited for a core (the run
   * queue counts those from its start): its sleeps */
  sim_thread *t = &w->out.thread;
  t->blocked_s = fmax(0, simgrid_get_clock() - from - t->ran_s - t->wait_s);
  worker_settle(w);
  if (--w->node->workers_running == 0) ps_node_finish(w->node->core, simgrid_get_clock());
  sim_outbox_drain(&w->out);
  sim_cpu_block(run, &w->out.thread);
  sg_mutex_unlock(w->mutex);
  w->finished = true;
  if (--run->workers_running == 0) wait_quiet(run);
}
