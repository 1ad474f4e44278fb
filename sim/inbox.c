/*
 * A node's inbox under SimGrid's network models (CM02, LV08): messages are
 * handed to its server in the order they arrive, FIFO per sending node, as
 * a ZeroMQ ROUTER hands them (it keeps order per peer only).
 *
 * A SimGrid mailbox hands its messages to its receiver in the order they
 * were sent, whatever the order their transfers end in: one mailbox per node
 * made its server wait for a message still on the wire (a large one, or one
 * from a far node) while later ones (from its own workers over the loopback,
 * or smaller ones) had arrived. So each pair of nodes that talks gets a
 * mailbox of its own (FIFO per pair, which the core requires), and a
 * receiver actor per node, standing for the part of ZeroMQ's I/O thread that
 * reads the sockets, keeps a get posted on each of its open pairs' mailboxes
 * and waits for any of them (sg_comm_wait_any): each transfer starts when it
 * is sent (a posted get matches it at once), and the receiver sees each one
 * end at the simulated instant it ends. It queues the envelope on the node's
 * arrived queue (with the I/O read on the path, it hands it to the node's
 * I/O actor, which queues it once read: io_thread.c), posts the next get on
 * that mailbox, and wakes the server if it sleeps. The server takes the
 * queue's head (sim_inbox_next): arrival order, exactly; messages that end
 * at the same instant come in the order of their gets in the wait (the hello
 * mailbox, then pairs in the order they opened), which SimGrid's wait_any
 * guarantees, so a run repeats for a seed.
 *
 * Pairs are opened lazily, so a run of 1,024 nodes makes mailboxes only for
 * the pairs that talk, not a million. A receiver waiting on its gets cannot
 * be told about a pair it does not know (SimGrid's C API wakes an actor in
 * wait_any only when one of its comms ends), so a pair's first messages go
 * to the node's hello mailbox, whose permanent receiver is the receiver
 * (transfers start when sent; sg_mailbox_set_receiver must be called by the
 * receiver itself, so it cannot be done for a pair's mailbox made by a
 * sender). When the receiver takes a pair's last hello message it opens the
 * pair: makes its mailbox and posts a get on it; the pair's later sends go
 * there. A pair's hello messages were all sent before any of its own
 * mailbox's, so the pair stays FIFO. The one departure from arrival order:
 * hello messages come in send order among themselves, so a node's first
 * contacts with other nodes (one message each, or a few) may wait for an
 * earlier first contact still on the wire.
 *
 * Cost: a wait over the open pairs' gets per message (SimGrid walks them:
 * O(open pairs), as its max-min solver walks a link's flows per transfer),
 * and the receiver's switch per message: cheaper than one mailbox on 8
 * nodes, twice the wall time on 256 that all talk to each other
 * (docs/fidelity.md has the figures). What it keeps: a pair entry per
 * sending node once a node receives (sim_inpair), and per open pair a
 * mailbox and a posted get (run.c's memory estimate counts them).
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/cond.h>
#include <simgrid/mailbox.h>
#include <simgrid/mutex.h>

int sim_inbox_init(sim_node *n) {
  sim_inbox *in = &n->inbox;
  char name[32];
  snprintf(name, sizeof name, "hello-%u", (unsigned)n->id);
  in->hello = sg_mailbox_by_name(name);
  in->cap = 8;
  in->comms = malloc(in->cap * sizeof *in->comms);
  in->from = malloc(in->cap * sizeof *in->from);
  in->cond = sg_cond_init();
  in->mutex = sg_mutex_init();
  return in->comms && in->from && in->cond && in->mutex ? 0 : -1;
}

/* ------------------------------------------------------------- sending */

int sim_inbox_send(sim_state *run, uint32_t src, uint32_t dst, sim_envelope *e) {
  sim_inbox *in = &run->nodes[dst].inbox;
  if (!in->pairs && !(in->pairs = calloc(run->num_nodes, sizeof *in->pairs))) return -1;
  sim_inpair *p = &in->pairs[src];
  if (!p->open) p->hello++;
  e->comm = sg_mailbox_put_async(p->open ? p->mbox : in->hello, e, (long)e->len);
  return 0;
}

/* ------------------------------------------------------------ receiving */

/* Posts a get on src's open pair among the receiver's gets. */
static void pair_listen(sim_node *n, uint32_t src) {
  sim_inbox *in = &n->inbox;
  if (in->count == in->cap) {
    size_t cap = in->cap * 2;
    sg_comm_t *comms = realloc(in->comms, cap * sizeof *comms);
    if (comms) in->comms = comms;
    uint32_t *from = comms ? realloc(in->from, cap * sizeof *from) : NULL;
    if (!from) { /* its messages would never be taken: the run is invalid */
      n->run->send_failed = true;
      return;
    }
    in->from = from;
    in->cap = cap;
  }
  sim_inpair *p = &in->pairs[src];
  p->listening = true;
  in->from[in->count] = src;
  in->comms[in->count++] = sg_mailbox_get_async(p->mbox, &p->payload);
}

/* A hello message from src arrived: the pair opens (its later sends go to
 * its own mailbox, whose transfers start when sent), and once its hello
 * messages have all arrived the receiver listens on that mailbox. */
static void pair_hello(sim_node *n, uint32_t src) {
  sim_inpair *p = &n->inbox.pairs[src];
  p->hello--;
  if (!p->open) {
    char name[48];
    snprintf(name, sizeof name, "in-%u-%u", (unsigned)n->id, (unsigned)src);
    p->mbox = sg_mailbox_by_name(name);
    sg_mailbox_set_receiver(name); /* the receiver's own call: it opens pairs */
    p->open = true;
  }
  if (p->hello == 0 && !p->listening) pair_listen(n, src);
}

void sim_inbox_deliver(sim_node *n, sim_envelope *e) {
  sim_inbox *in = &n->inbox;
  e->next_delivered = NULL;
  if (in->arrived_tail) in->arrived_tail->next_delivered = e;
  else in->arrived = e;
  in->arrived_tail = e;
  in->arrived_count++;
  if (in->server_waiting) {
    in->server_waiting = false;
    sg_cond_notify_one(in->cond);
  }
}

/* e has arrived: the receiving end's I/O thread reads it first (not for
 * inproc: messages.c), then it is queued for the server. */
static void arrived(sim_node *n, sim_envelope *e) {
  if (n->run->io_read_on_path && e->src != n->id && sim_io_read(n, e)) return;
  if (e->src != n->id) sim_io_owe(n, e->src);
  sim_inbox_deliver(n, e);
}

/* The receiver: waits for any of its gets to end, queues what arrived,
 * posts the next get on the same mailbox. */
static void receiver_main(sim_node *n) {
  sim_inbox *in = &n->inbox;
  sg_mailbox_set_receiver(sg_mailbox_get_name(in->hello)); /* first: see run.c */
  sg_actor_daemonize(sg_actor_self());
  in->comms[0] = sg_mailbox_get_async(in->hello, &in->hello_payload);
  in->count = 1;
  for (;;) {
    ssize_t i = sg_comm_wait_any(in->comms, in->count);
    if (i < 0) continue;
    sim_envelope *e;
    if (i == 0) {
      e = in->hello_payload;
      in->comms[0] = sg_mailbox_get_async(in->hello, &in->hello_payload);
      pair_hello(n, e->src);
    } else {
      sim_inpair *p = &in->pairs[in->from[i]];
      e = p->payload;
      in->comms[i] = sg_mailbox_get_async(p->mbox, &p->payload);
    }
    arrived(n, e);
  }
}

static void receiver_entry(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_outbox *out = sg_actor_self_get_data();
  receiver_main(out->owner);
}

void sim_inbox_spawn(sim_node *n) {
  char name[32];
  snprintf(name, sizeof name, "receiver-%u", (unsigned)n->id);
  sim_actor_spawn(name, n->host, receiver_entry, &n->receiver_out);
}

sim_envelope *sim_inbox_next(sim_node *n, bool *slept) {
  sim_inbox *in = &n->inbox;
  *slept = false;
  while (!in->arrived) {
    *slept = true;
    in->server_waiting = true;
    sim_cpu_block_wait(n->run, sim_self_thread(), &in->server_waiting, in->cond, in->mutex,
                       INFINITY);
  }
  sim_envelope *e = in->arrived;
  in->arrived = e->next_delivered;
  if (!in->arrived) in->arrived_tail = NULL;
  in->arrived_count--;
  return e;
}

void sim_inbox_free(sim_node *n) {
  sim_inbox *in = &n->inbox;
  /* The gets still posted are not unref'd: the receiver was killed inside
   * sg_comm_wait_any, whose unwinding dropped the references it held. */
  free(in->pairs);
  free(in->comms);
  free(in->from);
  if (in->cond) sg_cond_destroy(in->cond);
  if (in->mutex) sg_mutex_destroy(in->mutex);
  *in = (sim_inbox){0};
}
