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
 * batch touched is kept as a stamp per peer (the batch's number). With both
 * passes on the path (below) a batch found awake pays no event: there the
 * batches are the real thread's turns (their messages per wake-up come
 * within a few percent of the real ones, docs/fidelity.md), and the
 * calibration's io_wakeup_s is what a turn begun with a wake-up costs over
 * its messages, io_per_message_s holding what a turn found awake costs.
 *
 * Where the read is on the message's path (cluster.machines.io_read
 * "on_path": sim_io_read), a message from another node reaches the server
 * only once the I/O actor has read it; where the send is too (io_send
 * "on_path": sim_io_send), a message to another node leaves only once the
 * I/O actor has sent it. A batch takes those messages one by one in the
 * order they came, and for each does the part of its work after which the
 * real I/O thread passes it on (run->io_handoff of its own work and, with
 * the first message of its peer, of that connection's event), then hands it
 * on: to the server (sim_inbox_deliver) or on its way (sim_put). The rest of
 * each message's work, and the work owed beside the path, follow as one
 * execution. A busy I/O actor, or one waiting for a core, so delays the
 * messages it has to pass on, as ZeroMQ's I/O thread delays the frames a
 * ROUTER gets and the ones a DEALER sends. With the read alone on the path
 * the whole read comes first (io_handoff 1); with both, each hands on after
 * the fraction that makes a lone message take the calibrated loopback
 * latency (sim.h, io_send_on_path), as a scheduler trace shows the real
 * I/O thread passing a message on part-way through its turn
 * (docs/fidelity.md).
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

/* e is queued for the batch gathering, its work owed. */
static void queue(sim_node *n, sim_envelope *e, uint32_t peer) {
  sim_io *io = &n->io;
  e->next_delivered = NULL;
  if (io->queue_tail) io->queue_tail->next_delivered = e;
  else io->queue = e;
  io->queue_tail = e;
  sim_io_owe(n, peer);
}

bool sim_io_read(sim_node *n, sim_envelope *e) {
  if (!n->io.started) return false;
  queue(n, e, e->src);
  return true;
}

void sim_io_send(sim_node *n, sim_envelope *e) { queue(n, e, e->dst); }

static void io_main(sim_node *n) {
  sim_io *io = &n->io;
  const sim_state *run = n->run;
  sg_actor_daemonize(sg_actor_self());
  sg_mutex_lock(io->mutex); /* held for life; only waits release it */
  for (;;) {
    bool slept = false;
    while (!io->pending) {
      io->waiting = slept = true;
      sim_cpu_block_wait(run, sim_self_thread(), &io->waiting, io->cond, io->mutex, INFINITY);
    }
    io->waiting = false;
    if (slept) io->wakeups++;
    sim_outbox_reap(&n->io_out); /* the sends it put that have arrived */
    /* Its connections' events: with both passes on the path, only after a
     * sleep (below); otherwise in every batch. */
    bool events = slept || !run->io_send_on_path;
    double batch = io->owed + (events ? (double)io->touches * run->cost.io_wakeup_s : 0);
    sim_envelope *e = io->queue; /* this batch passes them on */
    io->queue = io->queue_tail = NULL;
    uint32_t b = io->batch;
    io->owed = 0;
    io->pending = 0;
    io->touches = 0;
    if (++io->batch == 0) { /* the stamps wrapped: forget them all */
      memset(io->touched, 0, (size_t)run->num_nodes * sizeof *io->touched);
      memset(io->event_at, 0, (size_t)run->num_nodes * sizeof *io->event_at);
      io->batch = 1;
      b = 0;
    }
    io->cpu_s += batch;
    /* Each message on the path in the order it came: its connection's event
     * with the first of its peer's, and its own work, up to the handoff;
     * then it is passed on. */
    double h = run->io_handoff, rest = 0;
    while (e) {
      sim_envelope *next = e->next_delivered;
      bool sent = e->src == n->id;
      uint32_t peer = sent ? e->dst : e->src;
      double s = run->cost.io_per_message_s;
      if (events && b && io->event_at[peer] != b) {
        io->event_at[peer] = b;
        s += run->cost.io_wakeup_s;
      }
      if (h * s > 0) sim_spend(run, n, h * s);
      batch -= s;
      rest += (1 - h) * s;
      if (sent) sim_put(n, e);
      else sim_inbox_deliver(n, e);
      e = next;
    }
    batch += rest; /* what follows the handoffs, and the work beside the path */
    if (batch > 1e-15) sim_spend(run, n, batch);
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
  io->event_at = calloc(run->num_nodes, sizeof *io->event_at);
  if (!io->touched || !io->event_at) return -1;
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
  /* A run that ended with sends still queued here (stuck, or failed): they
   * were never put, so no outbox holds them and their buffers are still
   * ours. Queued reads belong to their senders' outboxes. */
  for (sim_envelope *e = io->queue; e; e = e->next_delivered)
    if (e->src == n->id) sim_buf_release(e->buf, e->shared);
  if (io->cond) sg_cond_destroy(io->cond);
  if (io->mutex) sg_mutex_destroy(io->mutex);
  free(io->touched);
  free(io->event_at);
  *io = (sim_io){0};
}
