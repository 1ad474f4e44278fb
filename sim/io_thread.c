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
 * A batch also costs cost.io_wakeup_s for each peer whose connection it
 * serves (sends to or reads from, however many messages): what ZeroMQ's I/O
 * thread spends on one connection's event (the poll that returns it, the
 * read or write on its socket, the commands that pass the messages on), and
 * the thread's wake-up when it slept. `pslab calibrate` measures it with one
 * message at a time between two nodes, where every wake-up serves one
 * connection once; on a 16-core machine the real I/O threads' CPU per
 * wake-up grew with the peers they serve (12, 16 and 31 us at 1, 3 and 7
 * peers: docs/fidelity.md), which a cost per wake-up alone cannot follow.
 * Messages of one batch to and from one peer share its event. Which peers a
 * batch touched is kept as a stamp per peer (the batch's number).
 *
 * Where the read is on the message's path (cluster.machines.io_read
 * "on_path": sim_io_read), a message from another node reaches the server
 * only once the I/O actor has read it: a batch reads its messages one by
 * one in arrival order, each an execution of its own work and, with the
 * first of its peer's, that connection's event, and hands each on
 * (sim_inbox_deliver) as its read ends; then it works off the rest of what
 * it owes (its sends), as one execution. A busy I/O actor, or one waiting
 * for a core, so delays the messages it has to read, as ZeroMQ's I/O thread
 * delays the frames a ROUTER gets.
 *
 * Without placement each thread has a core of its own: the I/O thread's
 * work competes with nothing a node does, so it changes nothing simulated
 * and no actor is started (docs/fidelity.md says so).
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/cond.h>
#include <simgrid/mutex.h>

void sim_io_owe(sim_node *n, uint32_t peer) {
  sim_io *io = &n->io;
  if (!io->started) return;
  io->owed += n->run->cost.io_per_message_s;
  io->pending++;
  uint32_t *t = &io->touched[peer];
  if (*t != io->batch) {
    *t = io->batch;
    io->touches++;
  }
  if (io->waiting) {
    io->waiting = false;
    sg_cond_notify_one(io->cond);
  }
}

bool sim_io_read(sim_node *n, sim_envelope *e) {
  sim_io *io = &n->io;
  if (!io->started) return false;
  e->next_delivered = NULL;
  if (io->reads_tail) io->reads_tail->next_delivered = e;
  else io->reads = e;
  io->reads_tail = e;
  sim_io_owe(n, e->src);
  return true;
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
    double batch = io->owed + (double)io->touches * n->run->cost.io_wakeup_s;
    sim_envelope *read = io->reads; /* this batch reads them */
    io->reads = io->reads_tail = NULL;
    uint32_t b = io->batch;
    io->owed = 0;
    io->pending = 0;
    io->touches = 0;
    if (++io->batch == 0) { /* the stamps wrapped: forget them all */
      memset(io->touched, 0, (size_t)n->run->num_nodes * sizeof *io->touched);
      memset(io->read_at, 0, (size_t)n->run->num_nodes * sizeof *io->read_at);
      io->batch = 1;
      b = 0;
    }
    io->cpu_s += batch;
    /* Each message read, in arrival order, then handed on: its connection's
     * event with the first of its peer's, and its own work. */
    while (read) {
      sim_envelope *next = read->next_delivered;
      double s = n->run->cost.io_per_message_s;
      if (b && io->read_at[read->src] != b) {
        io->read_at[read->src] = b;
        s += n->run->cost.io_wakeup_s;
      }
      sim_spend(n->run, n, s);
      batch -= s;
      sim_inbox_deliver(n, read);
      read = next;
    }
    if (batch > 1e-15) sim_spend(n->run, n, batch); /* the sends' part */
  }
}

static void io_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  io_main(out->owner);
}

int sim_io_spawn(sim_node *n) {
  const sim_state *run = n->run;
  if (!run->shared_cores || !(run->cost.io_per_message_s > 0 || run->cost.io_wakeup_s > 0))
    return 0;
  sim_io *io = &n->io;
  io->touched = calloc(run->num_nodes, sizeof *io->touched);
  io->read_at = calloc(run->num_nodes, sizeof *io->read_at);
  if (!io->touched || !io->read_at) return -1;
  io->batch = 1;
  io->cond = sg_cond_init();
  io->mutex = sg_mutex_init();
  io->started = true;
  char name[32];
  snprintf(name, sizeof name, "io-%u", (unsigned)n->id);
  sim_actor_spawn(name, n->host, io_entry, &n->io_out);
  return 0;
}

void sim_io_free(sim_node *n) {
  sim_io *io = &n->io;
  if (io->cond) sg_cond_destroy(io->cond);
  if (io->mutex) sg_mutex_destroy(io->mutex);
  free(io->touched);
  free(io->read_at);
  *io = (sim_io){0};
}
