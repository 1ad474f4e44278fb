/*
 * The node side of a simulated run: the server actor that feeds messages to
 * the core, the timer actor, and the check that ends the run.
 *
 * The server takes the messages that have arrived at its node in arrival
 * order, FIFO per sending node, as a real node's reader takes them from its
 * ZeroMQ ROUTER (sim_receive): under CM02 and LV08 from the queue its
 * node's receiver actor fills as transfers end (inbox.c: transfers start
 * when sent, as bytes reach a real node's socket buffer while its server is
 * busy), under latency_bandwidth from latency_bandwidth.c's arrivals. It
 * never waits for a message still on the wire while another has arrived.
 *
 * Cost model. A server that asked for the next message and found none
 * arrived sleeps; when one comes, under the shared scheduler with
 * placement and every core of its machine executing (sim_machine_busy:
 * workers computing, servers and I/O actors working), it first waits
 * cost.wakeup_wait_s for a core (a sleep: the threads running go on, as
 * the operating system lets them until it preempts one; under the run
 * queue it waits its turn in cores.c instead, and reads as the thread
 * choose_reader says); then it pays cost.wakeup_s (sim_spend) and tells the core
 * (ps_node_note_wakeup, also when wakeup_s is 0). Messages
 * already waiting when it finished the previous one pay no wake-up. Before
 * handling a message the server spends per_message_s + per_key_s x keys +
 * per_byte_s x bytes (sim_spend). Without placement a sleep, not an
 * execution on the host: the server thread has its own core, so handling
 * neither slows the workers' flops nor is slowed by them, and the figures
 * mean what they say. With placement (cluster.machines) the server is one
 * more thread on its machine: the same seconds are work on the machine's
 * cores, shared with every worker, server and I/O actor there. On a node
 * whose straggler has phases the sleep stretches through them (sim_spend),
 * as its host's executions do. After each message it reports the handling
 * time and the messages that had arrived meanwhile and wait behind it
 * (ps_node_note_handling), as the real backend reports the frames it read
 * behind one: not those still on the wire.
 *
 * Timers. The server never waits with a timeout: in SimGrid a receive that
 * times out while its message is being transferred fails that transfer, and
 * the message would be lost. Instead a timer actor per node (started when the
 * core first has a timer) waits on a condition until the core's next timer is
 * due; whoever calls into the core afterwards pokes it if the due time moved
 * earlier. Timers stop once every worker of the run is done (every node has
 * called ps_node_finish): the run then only drains what is in flight, and
 * ends when nothing is.
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>

/* Timers due within this much of now run now: absorbs the rounding of
 * now + (due - now) so a timer actor never spins toward its due time. */
#define SIM_TIMER_SLACK 1e-9

/* ----------------------------------------------------------- the server */

static void charge_handling(const sim_node *n, const uint8_t *buf, size_t len) {
  const sim_cost *c = &n->run->cost;
  double s = c->per_message_s + c->per_byte_s * (double)len;
  if (c->per_key_s > 0) {
    ps_msg m;
    if (ps_msg_decode(buf, len, &m) == PS_OK) s += c->per_key_s * m.key_count;
  }
  sim_spend(n->run, n, s);
}

/* Which thread reads for the core's count of shared accesses: the worker
 * the server works as, else (index num_workers) its own. */
static uint32_t reader_index(const sim_node *n) {
  for (uint32_t k = 0; k < n->num_workers; k++)
    if (n->server_out.as == &n->workers[k].out.thread) return k;
  return n->num_workers;
}

/* The keys the message just handled found last touched by another thread
 * of the node (cost.shared_*): on the handling thread, after the message,
 * since the core counts them as it handles it and its answers have left. */
static void charge_shared_handled(sim_node *n) {
  const sim_cost *c = &n->run->cost;
  if (!sim_counts_shared(c)) return;
  ps_shared_counts sh;
  ps_node_shared_counts(n->core, &sh);
  double s = sim_shared_cost(c, sh.handled - n->handled_charged,
                             sh.handled_floats - n->handled_floats_charged);
  n->handled_charged = sh.handled;
  n->handled_floats_charged = sh.handled_floats;
  if (s > 0) sim_spend(n->run, n, s);
}

/* The server slept (nothing had arrived) and woke for a message: with
 * every core of its machine busy, first the wait for one
 * (cost.wakeup_wait_s: the running threads go on meanwhile); then the
 * wake-up's cost, before handling it, and the core's count of wake-ups. */
static void charge_wakeup(sim_node *n) {
  double wait = n->run->cost.wakeup_wait_s;
  if (wait > 0 && !sim_run_queue(n->run) && sim_machine_busy(n->run, n))
    sg_actor_sleep_for(wait);
  sim_spend(n->run, n, n->run->cost.wakeup_s);
  ps_node_note_wakeup(n->core);
}

/* Run-queue model: who reads the message just taken. A worker that waits
 * for a reply reads the node's messages itself, as real/leader.c's leading
 * worker does: the one reading already, until the ticket it waits for is
 * done (env.wake), else the one that has waited longest; with none waiting, the
 * server's own thread. The server actor works as that thread (its outbox's
 * `as`), so the reading is on that thread's account and core. A thread that
 * holds no core when it must read slept: it wakes (*slept). The reader it
 * was before hands over and sleeps. */
static void choose_reader(sim_node *n, bool *slept) {
  sim_worker *lead = NULL;
  for (uint32_t k = 0; k < n->num_workers; k++) {
    sim_worker *w = &n->workers[k];
    if (!w->waiting) continue;
    if (n->server_out.as == &w->out.thread) { /* it reads on until its ticket is done */
      lead = w;
      break;
    }
    if (!lead || w->wait_since < lead->wait_since) lead = w;
  }
  sim_thread *reader = lead ? &lead->out.thread : &n->server_out.thread;
  sim_thread *was = sim_self_thread();
  if (was != reader) sim_cpu_block(n->run, was);
  n->server_out.as = lead ? reader : NULL;
  *slept = !reader->holding;
}

/* After a message: a reader whose ticket it completed goes on as a worker
 * (on the core the reading held), and workers that waited for the server
 * to finish reading as them go on. */
static void reader_done(sim_node *n) {
  for (uint32_t k = 0; k < n->num_workers; k++) {
    sim_worker *w = &n->workers[k];
    if (n->server_out.as == &w->out.thread && !w->waiting) {
      sim_outbox_reap(&n->server_out); /* its sends are on its account */
      n->server_out.as = NULL;
    }
    if (w->lead_wait && n->server_out.as != &w->out.thread) {
      w->lead_wait = false;
      sg_cond_notify_one(w->done_cond);
    }
  }
}

void sim_server_main(sim_node *n) {
  sim_state *run = n->run;
  sg_mutex_lock(run->direct ? n->arrivals.mutex : n->inbox.mutex); /* held for life */
  sg_actor_daemonize(sg_actor_self());
  for (;;) {
    bool slept;
    sim_envelope *e = sim_receive(n, &slept);
    uint8_t *buf = e->buf;
    size_t len = e->len;
    uint32_t src = e->src, seq = e->seq;
    sim_shared_buf *shared = e->shared;
    sim_received(e);
    n->server_busy = true;
    if (sim_run_queue(run)) choose_reader(n, &slept);
    if (slept) charge_wakeup(n);
    double start = simgrid_get_clock();
    charge_handling(n, buf, len);
    if (sim_counts_shared(&run->cost)) ps_node_set_reader(n->core, reader_index(n));
    if (shared) ps_node_recv_numbered(n->core, src, seq, buf, len, simgrid_get_clock());
    else ps_node_recv(n->core, src, buf, len, simgrid_get_clock());
    charge_shared_handled(n);
    if (sim_run_queue(run)) reader_done(n);
    /* Load: the simulated time handling took, and the messages that had
     * arrived meanwhile and wait behind it (as the real backend counts the
     * frames it read behind one). */
    ps_node_note_handling(n->core, simgrid_get_clock() - start, sim_arrived_waiting(n));
    sim_buf_release(buf, shared);
    run->in_flight--;
    sim_outbox_reap(&n->server_out);
    sim_node_poke_timer(n);
    sim_check_quiet(run);
    n->server_busy = false;
    if (sim_run_queue(run)) reader_done(n);
  }
}

/* ------------------------------------------------------------ the timer */

/* Timers run while some worker still works: once every node has called
 * ps_node_finish, the run only drains what is in flight (as real/ stops its
 * timers at the end). A replica sync round sends on every tick, so a run
 * whose sync round trip outlasts the sync period would never go quiet. */
static bool timers_over(const sim_state *run) {
  return run->stopping || run->workers_running == 0;
}

/* Runs the core's timer when due; returns whether it did. */
static bool timer_fire(sim_node *n, double due) {
  double now = simgrid_get_clock();
  if (due > now + SIM_TIMER_SLACK) return false;
  n->timer_busy = true;
  n->run->timers_busy++;
  ps_node_on_timer(n->core, fmax(now, due));
  n->timer_busy = false;
  n->run->timers_busy--;
  sim_check_quiet(n->run);
  return true;
}

static void timer_main(sim_node *n) {
  sg_actor_daemonize(sg_actor_self());
  sg_mutex_lock(n->timer_mutex); /* held for life; only waits release it */
  for (;;) {
    sim_outbox_reap(&n->timer_out);
    double due = timers_over(n->run) ? INFINITY : ps_node_next_timer(n->core);
    n->timer_armed = due;
    sim_cpu_block(n->run, &n->timer_out.thread);
    if (n->timer_armed < due) continue; /* poked while it gave its core up (a yield) */
    if (isinf(due))
      sg_cond_wait(n->timer_cond, n->timer_mutex);
    else if (!timer_fire(n, due))
      sg_cond_wait_for(n->timer_cond, n->timer_mutex, due - simgrid_get_clock());
  }
}

static void timer_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  timer_main(out->owner);
}

void sim_node_poke_timer(sim_node *n) {
  if (timers_over(n->run)) return;
  double due = ps_node_next_timer(n->core);
  if (!(due < n->timer_armed)) return;
  n->timer_armed = due;
  if (!n->timer_started) {
    char name[32];
    snprintf(name, sizeof name, "timer-%u", (unsigned)n->id);
    n->timer_cond = sg_cond_init();
    n->timer_mutex = sg_mutex_init();
    n->timer_started = true;
    sim_actor_spawn(name, n->host, timer_entry, &n->timer_out);
  } else if (!n->timer_busy) {
    sg_cond_notify_one(n->timer_cond);
  }
}

/* ---------------------------------------------------------- termination */

void sim_check_quiet(sim_state *run) {
  if (run->stopping || run->workers_running || run->in_flight || run->timers_busy) return;
  run->stopping = true;
  run->quiet_time = simgrid_get_clock();
  sg_cond_notify_all(run->quiet_cond);
}
