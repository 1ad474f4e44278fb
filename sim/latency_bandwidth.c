/*
 * The latency_bandwidth network model: messages that bypass SimGrid's
 * network, for scale studies.
 *
 * Under CM02 every message is a SimGrid flow, and every flow that starts or
 * ends makes SimGrid re-solve the max-min sharing of every flow it shares a
 * link with; with tens of thousands in flight (relocate with a long
 * look-ahead on 64 nodes and more) that solver is most of the run. This model
 * has no flows. A message of S bytes from node a to node b waits for the
 * messages handed earlier to the first link of its route (a's up link, or
 * the loopback of a's machine), is sent out at the route's bottleneck
 * bandwidth B, and arrives the route's latency L later; on a route of more
 * than one link, the last one (b's down link, of bandwidth Bd) delivers one
 * message after another, after the one handed to it before:
 *
 *   start  = max(now, when the first link has sent out what it was given)
 *   arrive = max(start + S / B + L, when the last link delivered the
 *                message before this one + S / Bd)
 *
 * as a NIC's transmit queue and a receiving link do. A lone message thus
 * takes L + S / B, as under CM02; a node's outgoing bytes never exceed its
 * up link's bandwidth, nor its incoming bytes its down link's: n equal
 * messages to one node at once deliver the last at L + n S / B, as CM02's
 * sharing does (tests/test_sim.c). What it leaves out: contention on links
 * between the first and the last (a backbone is never full); both queues
 * are first come first served, in the order messages are sent, where CM02
 * shares max-min fairly (the last of n equal messages arrives at the same
 * time, the first ones earlier); a bandwidth change (a straggler's phase)
 * applies to messages sent after it. A first link that shares nothing (a
 * FATPIPE: the loopback without placement) queues per pair instead, and a
 * route of one link (a loopback) has no second queue. Per pair, messages
 * arrive in send order, as the core requires.
 *
 * Delivery: each node has a heap of the messages on their way to it, by
 * arrival time and then send number (deterministic). The server takes the
 * first once it has arrived, or waits on its condition until then; a sender
 * whose message arrives before the server would wake notifies it. SimGrid
 * sees only sleeps and condition waits, which its solver does not share.
 */
#include "sim/sim_internal.h"

#include <math.h>
#include <stdlib.h>

#include <simgrid/cond.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mutex.h>
#include <xbt/dynar.h>

/* A message due within this much of now is taken now: absorbs the rounding
 * of now + (arrive - now), so a server never spins toward an arrival. */
#define SIM_ARRIVAL_SLACK 1e-9

/* ----------------------------------------------------------------- heap */

static bool before(const sim_arrival *a, const sim_arrival *b) {
  return a->arrive < b->arrive || (a->arrive == b->arrive && a->seq < b->seq);
}

static int heap_push(sim_arrivals *q, sim_arrival a) {
  if (q->count == q->cap) {
    size_t cap = q->cap ? q->cap * 2 : 64;
    sim_arrival *h = realloc(q->heap, cap * sizeof *h);
    if (!h) return -1;
    q->heap = h;
    q->cap = cap;
  }
  size_t i = q->count++;
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!before(&a, &q->heap[parent])) break;
    q->heap[i] = q->heap[parent];
    i = parent;
  }
  q->heap[i] = a;
  return 0;
}

static sim_envelope *heap_pop(sim_arrivals *q) {
  sim_envelope *top = q->heap[0].e;
  sim_arrival last = q->heap[--q->count];
  size_t i = 0;
  for (;;) {
    size_t child = 2 * i + 1;
    if (child >= q->count) break;
    if (child + 1 < q->count && before(&q->heap[child + 1], &q->heap[child])) child++;
    if (!before(&q->heap[child], &last)) break;
    q->heap[i] = q->heap[child];
    i = child;
  }
  if (q->count) q->heap[i] = last;
  return top;
}

/* ---------------------------------------------------------------- routes */

/* A shared link that a route starts on (a node's or machine's up link, a
 * machine's loopback): it sends out what it is given one message after
 * another. Hung on the link's SimGrid data, listed in the run for freeing. */
struct sim_link_queue {
  double sent_by;
  struct sim_link_queue *next;
};

static double *link_queue(sim_state *run, sg_link_t link) {
  struct sim_link_queue *q = sg_link_get_data(link);
  if (q) return &q->sent_by;
  if (!(q = calloc(1, sizeof *q))) return NULL;
  q->next = run->link_queues;
  run->link_queues = q;
  sg_link_set_data(link, q);
  return &q->sent_by;
}

/* The queues a message from src to dst waits in: its route's first link's
 * if that link is shared, else the pair's own (a FATPIPE shares nothing);
 * and, on a route of more than one link, its last link's if that one is
 * shared. 0, or -1 on no memory. */
static int route_queues(sim_state *run, sim_node *src, sim_node *dst, sim_pair *p) {
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(src->host, dst->host, links);
  unsigned long n = xbt_dynar_length(links);
  p->sent_by = &p->own_sent_by;
  p->recv_by = NULL;
  p->last = NULL;
  int rc = 0;
  if (n > 0) {
    sg_link_t first = xbt_dynar_get_as(links, 0, sg_link_t);
    if (sg_link_is_shared(first) && !(p->sent_by = link_queue(run, first))) rc = -1;
  }
  if (n > 1 && rc == 0) {
    sg_link_t last = xbt_dynar_get_as(links, n - 1, sg_link_t);
    if (sg_link_is_shared(last)) {
      p->last = last;
      if (!(p->recv_by = link_queue(run, last))) rc = -1;
    }
  }
  xbt_dynar_free(&links);
  if (rc != 0) p->sent_by = NULL;
  return rc;
}

static sim_pair *route_to(sim_state *run, sim_node *src, uint32_t dst) {
  sim_arrivals *q = &src->arrivals;
  if (!q->pairs && !(q->pairs = calloc(run->num_nodes, sizeof *q->pairs))) return NULL;
  sim_pair *p = &q->pairs[dst];
  if (!p->sent_by && route_queues(run, src, &run->nodes[dst], p) != 0) return NULL;
  if (p->epoch != run->route_epoch) {
    sg_host_t to = run->nodes[dst].host;
    p->latency = sg_host_get_route_latency(src->host, to);
    p->bandwidth = sg_host_get_route_bandwidth(src->host, to);
    p->last_bandwidth = p->last ? sg_link_get_bandwidth(p->last) : 0;
    p->epoch = run->route_epoch;
  }
  return p;
}

void sim_routes_changed(sim_state *run) { run->route_epoch++; }

void sim_link_queues_free(sim_state *run) {
  while (run->link_queues) {
    struct sim_link_queue *q = run->link_queues;
    run->link_queues = q->next;
    free(q);
  }
}

/* --------------------------------------------------------------- sending */

int sim_arrivals_init(sim_node *n) {
  sim_arrivals *q = &n->arrivals;
  q->wake_at = INFINITY;
  q->cond = sg_cond_init();
  q->mutex = sg_mutex_init();
  return q->cond && q->mutex ? 0 : -1;
}

int sim_deliver_direct(sim_state *run, sim_node *src, uint32_t dst, sim_envelope *e) {
  sim_pair *p = route_to(run, src, dst);
  if (!p) return -1;
  double now = simgrid_get_clock();
  double start = *p->sent_by > now ? *p->sent_by : now;
  double sent = start + (double)e->len / p->bandwidth;
  double arrive = sent + p->latency;
  if (p->recv_by) { /* the receiver's link delivers one message after another */
    double delivered = *p->recv_by + (double)e->len / p->last_bandwidth;
    if (delivered > arrive) arrive = delivered;
  }
  sim_arrival a = {.arrive = arrive, .seq = run->sends++, .e = e};
  sim_arrivals *q = &run->nodes[dst].arrivals;
  if (heap_push(q, a) != 0) return -1;
  *p->sent_by = sent;
  if (p->recv_by) *p->recv_by = arrive;
  if (q->waiting && a.arrive < q->wake_at) {
    q->waiting = false; /* one notify is enough: the server looks again */
    q->wake_at = a.arrive;
    sg_cond_notify_one(q->cond);
  }
  return 0;
}

/* ------------------------------------------------------------- receiving */

sim_envelope *sim_arrivals_next(sim_node *n, bool *slept) {
  sim_arrivals *q = &n->arrivals;
  *slept = false;
  for (;;) {
    double now = simgrid_get_clock();
    const sim_arrival *first = q->count ? &q->heap[0] : NULL;
    if (first && first->arrive <= now + SIM_ARRIVAL_SLACK) {
      /* The receiving end's I/O thread, charged when the server sees the
       * message (its arrival, if the server was waiting for it). */
      if (first->e->src != n->id) /* not for inproc (messages.c) */
        sim_io_owe(n, first->e->src);
      return heap_pop(q);
    }
    *slept = true;
    q->waiting = true;
    q->wake_at = first ? first->arrive : INFINITY;
    sim_cpu_block_wait(n->run, sim_self_thread(), &q->waiting, q->cond, q->mutex,
                       q->wake_at - now);
    q->waiting = false;
  }
}

/* Entries of the subtree at i that have arrived by `by`: a parent arrives
 * no later than its children, so the walk stops at the first that has not. */
static uint32_t arrived_under(const sim_arrivals *q, size_t i, double by) {
  if (i >= q->count || q->heap[i].arrive > by) return 0;
  return 1 + arrived_under(q, 2 * i + 1, by) + arrived_under(q, 2 * i + 2, by);
}

uint32_t sim_arrivals_waiting(const sim_node *n) {
  return arrived_under(&n->arrivals, 0, simgrid_get_clock() + SIM_ARRIVAL_SLACK);
}

void sim_arrivals_free(sim_node *n) {
  sim_arrivals *q = &n->arrivals;
  for (size_t i = 0; i < q->count; i++) sim_buf_release(q->heap[i].e->buf, q->heap[i].e->shared);
  free(q->heap);
  free(q->pairs);
  if (q->cond) sg_cond_destroy(q->cond);
  if (q->mutex) sg_mutex_destroy(q->mutex);
  *q = (sim_arrivals){0};
}
