/*
 * A node's I/O thread: the CPU that ZeroMQ's I/O thread spends at each end
 * of every message (cost.io_per_message_s, once at the sender's node when
 * it sends, once at the receiver's node when it arrives), as work on the
 * node's machine's cores, beside its workers and its server, but on no
 * sending or handling actor's own time and not delaying the message.
 *
 * With placement (cluster.machines) each node with that cost has an I/O
 * actor on its machine's host. Messages add their seconds to what the node
 * owes (sim_io_owe, which may be called from inside the core: it only
 * notifies, as env.wake does);
 * the actor, woken when it sleeps, works off everything owed so far as one
 * execution (sim_spend) and then whatever came meanwhile. One execution per
 * batch, not one per message: a busy node's many messages cost SimGrid a few
 * executions, and a 1,024-node run a daemon per node that sleeps on a
 * condition while idle. The work done is exactly what is owed (every second
 * is executed once, at one core's speed, as the one thread it stands for);
 * only its timing is batched: a message's I/O work may start after the
 * batch before it ends. Deterministic, as every actor of the run.
 *
 * An I/O thread that had nothing to do sleeps; the work of the message
 * that wakes it starts with cost.io_wakeup_s (its wake-up), once for the
 * batch it then finds, as a server pays wakeup_s (server.c).
 *
 * Without placement each thread has a core of its own: the I/O thread's
 * work competes with nothing a node does, so it changes nothing simulated
 * and no actor is started (docs/fidelity.md says so).
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/mutex.h>

void sim_io_owe(sim_node *n, double seconds) {
  sim_io *io = &n->io;
  if (!io->started) return;
  io->owed += seconds;
  io->pending++;
  if (io->waiting) {
    io->waiting = false;
    sg_cond_notify_one(io->cond);
  }
}

static void io_main(sim_node *n) {
  sim_io *io = &n->io;
  sg_actor_daemonize(sg_actor_self());
  sg_mutex_lock(io->mutex); /* held for life; only waits release it */
  for (;;) {
    bool slept = false;
    while (!io->pending) {
      io->waiting = slept = true;
      sim_cpu_block_wait(n->run, sim_self_thread(), &io->waiting, io->cond, io->mutex, INFINITY);
    }
    io->waiting = false;
    if (slept) io->wakeups++;
    double batch = io->owed + (slept ? n->run->cost.io_wakeup_s : 0);
    io->owed = 0;
    io->pending = 0;
    io->cpu_s += batch;
    sim_spend(n->run, n, batch);
  }
}

static void io_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  io_main(out->owner);
}

void sim_io_spawn(sim_node *n) {
  const sim_state *run = n->run;
  if (!run->shared_cores || !(run->cost.io_per_message_s > 0 || run->cost.io_wakeup_s > 0))
    return;
  sim_io *io = &n->io;
  io->cond = sg_cond_init();
  io->mutex = sg_mutex_init();
  io->started = true;
  char name[32];
  snprintf(name, sizeof name, "io-%u", (unsigned)n->id);
  sim_actor_spawn(name, n->host, io_entry, &n->io_out);
}

void sim_io_free(sim_node *n) {
  sim_io *io = &n->io;
  if (io->cond) sg_cond_destroy(io->cond);
  if (io->mutex) sg_mutex_destroy(io->mutex);
  *io = (sim_io){0};
}
