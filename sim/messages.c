/*
 * How messages travel between simulated nodes.
 *
 * env.send wraps the core's encoded buffer in a pooled envelope (buffer,
 * length, sender) and puts it on its way to the destination node with the
 * buffer's exact length as the simulated size, asynchronously: the sender
 * never blocks. A message to the sender's own node takes the same path, over
 * its loopback. Under CM02 and LV08 it goes to the destination's mailbox for
 * the pair (inbox.c), whose receiver starts the transfer when it is sent and
 * hands it to the server when it arrives (arrival order, FIFO per pair).
 * Each message also owes cost.io_per_message_s of I/O thread work to the
 * sending node's machine (io_thread.c; the receiving end's is owed where it
 * arrives). With the send on the message's path (io_send "on_path"), a
 * message to another node is handed to its node's I/O actor instead, which
 * puts it on its way (sim_put) once it has done its part of the send.
 *
 * Why the sender keeps its sends instead of detaching them. A detached comm
 * in SimGrid 3.32 sits in one engine-wide std::list until its transfer ends,
 * and ending it runs list::remove over that whole list: with a few thousand
 * messages in flight (64 nodes pulling 100 keys each) that scan was two
 * thirds of the run time, and it grows with the square of the cluster. A
 * comm the sender keeps sits in the sender's own list instead, and leaves it
 * when the sender waits for it. So each actor has an outbox: the receiver
 * hands each envelope it took back to its sender's outbox ("delivered"); the
 * sender, at its next convenient point (sim_outbox_reap), waits for those
 * comms, which are over and return at once, and recycles the envelopes. An
 * actor about to exit first waits for all its sends (sim_outbox_drain), since
 * SimGrid cancels the unfinished comms of an actor that ends.
 *
 * Sending costs the sender's thread cost.send_per_message_s. env.send is
 * called from inside the core, where an actor must not yield (it would let
 * another actor into the core mid-call), so the cost is owed in the outbox
 * and paid at the actor's next reap: after the message left, which is how a
 * thread handing a message to ZeroMQ's I/O thread pays for it too.
 *
 * Under latency_bandwidth (latency_bandwidth.c) no comm carries the envelope: it
 * waits in its destination's arrivals until its computed arrival, and the
 * receiver recycles it at once (nothing for the sender to wait for).
 */
#include "sim/sim_internal.h"

#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>

enum {
  ENVELOPE_SENT = 1,  /* in flight, or received and not yet handed back */
  ENVELOPE_DELIVERED, /* on its outbox's delivered stack */
  ENVELOPE_ABANDONED, /* its sender waited and left: the receiver recycles it */
};

/* ----------------------------------------------------------------- pool */

#define ENVELOPES_PER_CHUNK 1024

struct sim_envelope_chunk {
  sim_envelope_chunk *next;
  sim_envelope envelopes[ENVELOPES_PER_CHUNK];
};

static sim_envelope *envelope_take(sim_state *run) {
  if (!run->free_envelopes) {
    sim_envelope_chunk *c = malloc(sizeof *c);
    if (!c) return NULL;
    c->next = run->chunks;
    run->chunks = c;
    for (size_t i = 0; i < ENVELOPES_PER_CHUNK; i++) {
      c->envelopes[i].next = run->free_envelopes;
      run->free_envelopes = &c->envelopes[i];
    }
  }
  sim_envelope *e = run->free_envelopes;
  run->free_envelopes = e->next;
  return e;
}

static void envelope_give(sim_state *run, sim_envelope *e) {
  e->next = run->free_envelopes;
  run->free_envelopes = e;
}

/* -------------------------------------------------------------- outboxes */

void sim_outbox_init(sim_outbox *out, sim_state *run, void *owner) {
  *out = (sim_outbox){.run = run, .owner = owner};
}

static void outstanding_link(sim_outbox *out, sim_envelope *e) {
  e->prev = NULL;
  e->next = out->outstanding;
  if (e->next) e->next->prev = e;
  out->outstanding = e;
}

static void outstanding_unlink(sim_outbox *out, sim_envelope *e) {
  if (e->prev) e->prev->next = e->next;
  else out->outstanding = e->next;
  if (e->next) e->next->prev = e->prev;
}

void sim_outbox_reap(sim_outbox *out) {
  if (out->send_debt > 0) {
    double debt = out->send_debt;
    out->send_debt = 0;
    sim_spend(out->run, out->node, debt);
  }
  sim_envelope *e;
  while ((e = out->delivered)) {
    out->delivered = e->next_delivered;
    outstanding_unlink(out, e);
    if (e->comm) sg_comm_wait(e->comm); /* over: returns at once */
    envelope_give(out->run, e);
  }
}

void sim_outbox_drain(sim_outbox *out) {
  for (;;) {
    sim_outbox_reap(out);
    sim_envelope *e = out->outstanding;
    if (!e) return;
    sg_comm_t comm = e->comm;
    e->comm = NULL;
    sim_cpu_block(out->run, &out->thread);
    sg_comm_wait(comm); /* until its transfer ends */
    if (e->state == ENVELOPE_SENT) {
      e->state = ENVELOPE_ABANDONED;
      outstanding_unlink(out, e);
    } /* else it was received meanwhile: the next reap recycles it */
  }
}

/* After the run. Normally only delivered sends of daemons remain; after a
 * deadlock, also sends nobody received, whose buffers are still ours. */
static void outbox_drop(sim_outbox *out) {
  for (sim_envelope *e = out->outstanding; e; e = e->next) {
    if (e->comm) sg_comm_unref(e->comm);
    if (e->state == ENVELOPE_SENT) sim_buf_release(e->buf, e->shared);
  }
  out->outstanding = out->delivered = NULL;
  if (out->thread.turn) sg_sem_destroy(out->thread.turn);
  out->thread.turn = NULL;
}

void sim_messages_free(sim_state *run) {
  for (uint32_t i = 0; run->nodes && i < run->num_nodes; i++) {
    outbox_drop(&run->nodes[i].server_out);
    outbox_drop(&run->nodes[i].timer_out);
    outbox_drop(&run->nodes[i].io_out);
    sim_arrivals_free(&run->nodes[i]);
    sim_inbox_free(&run->nodes[i]);
    sim_io_free(&run->nodes[i]);
  }
  for (uint32_t i = 0; run->workers && i < run->num_workers; i++)
    outbox_drop(&run->workers[i].out);
  sim_link_queues_free(run);
  while (run->chunks) {
    sim_envelope_chunk *c = run->chunks;
    run->chunks = c->next;
    free(c);
  }
  run->free_envelopes = NULL;
}

/* --------------------------------------------------- sending, receiving */

void sim_buf_release(uint8_t *buf, sim_shared_buf *shared) {
  if (!shared) {
    free(buf);
  } else if (--shared->refs == 0) {
    free(shared->buf);
    free(shared);
  }
}

/* Sends buf (shared, or its own: see sim_envelope) to dst; if it cannot,
 * releases buf and marks the run invalid. */
static void send_envelope(sim_node *n, uint32_t dst, uint8_t *buf, size_t len,
                          sim_shared_buf *shared, uint32_t seq) {
  sim_state *run = n->run;
  sim_envelope *e = dst < run->num_nodes ? envelope_take(run) : NULL;
  if (!e) {
    /* A message we cannot deliver makes the run invalid; sim_run reports it. */
    sim_buf_release(buf, shared);
    run->send_failed = true;
    return;
  }
  sim_outbox *out = sg_actor_self_get_data();
  *e = (sim_envelope){.outbox = out, .buf = buf, .len = len, .src = n->id,
                      .state = ENVELOPE_SENT, .shared = shared, .seq = seq};
  /* Counted in flight before anything that may yield (put_async is a
   * simcall): no actor may see the run quiet while this message leaves. */
  out->send_debt += run->cost.send_per_message_s; /* paid at the actor's next reap */
  run->in_flight++;
  /* With the send on the message's path, its node's I/O actor puts it on its
   * way once it has sent it (io_thread.c): the comm is then the I/O actor's,
   * and so is the envelope when it comes back. */
  if (run->io_send_on_path && dst != n->id && n->io.started) {
    e->dst = dst;
    e->outbox = &n->io_out;
    sim_io_send(n, e);
    return;
  }
  if (!run->direct) outstanding_link(out, e); /* before the put, which yields */
  int rc = run->direct ? sim_deliver_direct(run, n, dst, e) : sim_inbox_send(run, n->id, dst, e);
  if (rc != 0) { /* nothing was put: no comm */
    if (!run->direct) outstanding_unlink(out, e);
    out->send_debt -= run->cost.send_per_message_s;
    run->in_flight--;
    envelope_give(run, e);
    sim_buf_release(buf, shared);
    run->send_failed = true;
    return;
  }
  /* The sending end's I/O thread; a node's message to itself goes through
   * an inproc pipe in the real backend, which no I/O thread handles. */
  if (dst != n->id) sim_io_owe(n, dst);
}

void sim_put(sim_node *n, sim_envelope *e) {
  sim_state *run = n->run;
  outstanding_link(&n->io_out, e); /* before the put, which yields */
  if (sim_inbox_send(run, n->id, e->dst, e) == 0) return;
  outstanding_unlink(&n->io_out, e);
  run->in_flight--;
  sim_buf_release(e->buf, e->shared);
  envelope_give(run, e);
  run->send_failed = true;
}

static void env_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  send_envelope(ctx, dst, buf, len, NULL, 0);
}

/* One buffer for every destination, each envelope its own number: a
 * round of an all-reduce keeps one copy of each node's message in flight,
 * not one per destination. Each copy is still its own simulated message of
 * len bytes. */
static void env_send_shared(void *ctx, const uint32_t *dst, const uint32_t *seq, size_t count,
                            uint8_t *buf, size_t len) {
  sim_node *n = ctx;
  sim_shared_buf *shared = count ? malloc(sizeof *shared) : NULL;
  if (!shared) {
    free(buf);
    if (count) n->run->send_failed = true;
    return;
  }
  *shared = (sim_shared_buf){.buf = buf, .refs = (uint32_t)count};
  for (size_t i = 0; i < count; i++) send_envelope(n, dst[i], buf, len, shared, seq[i]);
}

sim_envelope *sim_receive(sim_node *n, bool *slept) {
  return n->run->direct ? sim_arrivals_next(n, slept) : sim_inbox_next(n, slept);
}

uint32_t sim_arrived_waiting(const sim_node *n) {
  return n->run->direct ? sim_arrivals_waiting(n) : n->inbox.arrived_count;
}

void sim_received(sim_envelope *e) {
  sim_outbox *out = e->outbox;
  if (out->run->direct || e->state == ENVELOPE_ABANDONED) {
    envelope_give(out->run, e);
    return;
  }
  e->state = ENVELOPE_DELIVERED;
  e->next_delivered = out->delivered;
  out->delivered = e;
}

/* -------------------------------------------------------------- waking */

static void env_wake(void *ctx, uint32_t worker, ps_ticket ticket) {
  (void)ticket; /* the worker re-checks ps_worker_done itself */
  sim_node *n = ctx;
  if (worker >= n->num_workers) return;
  sim_worker *w = &n->workers[worker];
  /* A worker reading the node's messages as it waits reads on until the
   * ticket it waits for is done, as real/leader.c's leading worker does: the
   * completion of another of its tickets does not end its reading. */
  if (w->waiting && sim_worker_reading(w) && !ps_worker_done(w->rw.handle, w->wait_ticket))
    return;
  if (w->waiting) {
    w->waiting = false; /* one notify is enough until it waits again */
    sg_cond_notify_one(w->done_cond);
  }
}

void sim_node_env(sim_node *n, ps_env *env) {
  env->ctx = n;
  env->send = env_send;
  env->send_shared = env_send_shared;
  env->wake = env_wake;
}
