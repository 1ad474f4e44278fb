/*
 * The receiver thread of a node: the reader of its ROUTER while no worker
 * waiting for a ticket reads it (leader.c hands the socket to such a worker
 * and back; the receiver then polls everything but the ROUTER), the only
 * reader of the monitors of its DEALERs, and the one thread that runs the
 * core's timers, the liveness pings and checks, and that obeys the stop.
 *
 * Frames are handled the same way by whoever reads the ROUTER
 * (real_drain_router, below). Each frame is told apart by its first bytes:
 * control messages (collective contributions and answers, aborts) are
 * handled here; everything else goes to ps_node_recv, which decodes, checks and handles it, or rejects it (the
 * frame is then counted as dropped and logged, and the node goes on); on a
 * straggler, the throttle then sleeps what its phase adds (throttle.c). The
 * core is called inside the node's core lock, and not at all once the node
 * has failed (see internal.h).
 *
 * Monitor events: a handshake marks a link up (the start barrier waits for
 * all); a disconnect or a failed handshake fails the node, naming the peer,
 * unless the node is closing, when peers leaving is expected, but only after
 * the ROUTER has been read past it (real_keep_event, below).
 *
 * Liveness: a peer that stops answering but keeps its connections open (a
 * stopped or hung process) closes nothing, and ZeroMQ's heartbeats (set by
 * the transport to timeout_s) notice it only after a heartbeat interval
 * plus their timeout, beyond timeout_s. So each receiver also sends every
 * peer a PING every PING_FRACTION of timeout_s (at most 1 s apart) and
 * counts any frame from a peer as a sign of life; from the start release
 * until the node is closing, a peer silent for SILENCE_FRACTION of
 * timeout_s fails the node, naming it. A report thus comes within
 * (SILENCE_FRACTION + PING_FRACTION) * timeout_s of the peer's last word,
 * inside timeout_s as the spec reference promises; and a live peer, whose
 * pings come about every tenth of that, is not mistaken for a silent one
 * unless it misses seven in a row.
 *
 * The thread stops when the main thread writes to the control pair.
 */
#include "real/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames handled per poll before looking at the monitors again. */
#define RECV_BATCH 256
/* Liveness (see above), as fractions of timeout_s. */
#define PING_FRACTION 0.1
#define PING_MAX_S 1.0
#define SILENCE_FRACTION 0.75

/* ------------------------------------------------------------- frames */

static void handle_data(real_node *n, uint32_t src, const uint8_t *buf, size_t len) {
  real_core_enter(n);
  bool fed = !atomic_load(&n->failed);
  double t0 = real_node_now(n), start = real_clock(), slept = real_throttle_thread_slept();
  int rc = fed ? ps_node_recv(n->core, src, buf, len, t0) : PS_OK;
  double took = real_clock() - start - (real_throttle_thread_slept() - slept);
  real_core_leave(n);
  if (fed) real_throttle_handled(n, src, t0, took, len); /* a straggler's server */
  /* A forgery (refused for its seal) came on a peer's connection but no
   * node sent it: counted as received, it would keep quiescence's sent and
   * received counts from ever balancing (collective.c). */
  if (rc != PS_ERR_SEAL) atomic_fetch_add(&n->received, 1);
  if (rc == PS_OK) atomic_fetch_add(&n->progress, 1);
  if (rc == PS_OK) return;
  atomic_fetch_add(&n->dropped, 1);
  real_log_bad(n, "node %u: dropped a %zu-byte message from node %u: %s", n->rank, len, src,
               ps_strerror(rc));
}

/* Returns whether it was a data message (for the core). */
static bool handle_frame(real_node *n, uint32_t src, const uint8_t *buf, size_t len) {
  if (!real_ctl_is_control(buf, len)) {
    handle_data(n, src, buf, len);
    return true;
  }
  real_ctl m;
  int rc = real_ctl_decode(buf, len, &m);
  if (rc == PS_OK && (m.rank != src || m.run != n->run || m.size != n->size))
    rc = PS_ERR_PEER;
  if (rc == PS_OK) {
    real_handle_control(n, src, &m);
    return false;
  }
  /* Not a control message after all: counted as received, as the data
   * message its sender counted as sent. */
  atomic_fetch_add(&n->received, 1);
  atomic_fetch_add(&n->dropped, 1);
  real_log_bad(n, "node %u: dropped a %zu-byte control message from node %u: %s", n->rank,
               len, src, ps_strerror(rc));
  return false;
}

/* n->heard[src]: when a frame from src last came (real_clock). Each data
 * message's handling time goes to the core's load figures, with the data
 * messages read after it in the same pass as those waiting behind it: the
 * ones the receiver can tell were there (ZeroMQ does not show its queue).
 * A pass that finds a data message after a pass that found the ROUTER empty
 * (whose reader then slept in zmq_poll: the receiver's or a leading
 * worker's) is a wake-up; frames that are not data (pings, control) wake
 * the reader too but are not messages of the core, and do not count. */
bool real_drain_router(real_node *n) {
  zmq_msg_t body;
  uint32_t src;
  double busy[RECV_BATCH];
  int data = 0, i;
  for (i = 0; i < RECV_BATCH && real_router_recv(n, &body, &src) == 1; i++) {
    REAL_TSAN_ACQUIRE(zmq_msg_data(&body)); /* a message to itself: see internal.h */
    double t0 = real_clock();
    atomic_store_explicit(&n->heard[src], t0, memory_order_relaxed);
    if (handle_frame(n, src, zmq_msg_data(&body), zmq_msg_size(&body)))
      busy[data++] = real_clock() - t0;
    zmq_msg_close(&body);
  }
  bool empty = i < RECV_BATCH;
  if (data && atomic_exchange_explicit(&n->router_idle, empty, memory_order_relaxed))
    ps_node_note_wakeup(n->core);
  else if (empty)
    atomic_store_explicit(&n->router_idle, true, memory_order_relaxed);
  for (int k = 0; k < data; k++) ps_node_note_handling(n->core, busy[k], (uint32_t)(data - 1 - k));
  return empty;
}

/* -------------------------------------------------------------- control */

static void store_gather(real_node *n, uint32_t src, const real_ctl *m) {
  void *copy = malloc(m->payload_len ? m->payload_len : 1);
  pthread_mutex_lock(&n->lock);
  bool ok = copy && m->seq == n->coll_seq + 1 && !n->gather_has[src];
  if (ok) {
    if (m->payload_len) memcpy(copy, m->payload, m->payload_len);
    n->gather_in[src] = copy;
    n->gather_len[src] = m->payload_len;
    n->gather_has[src] = true;
    n->gather_count++;
    pthread_cond_broadcast(&n->cond);
  }
  uint32_t expected = n->coll_seq + 1;
  pthread_mutex_unlock(&n->lock);
  if (ok) return;
  free(copy);
  real_fail_and_tell(n, "node %u sent contribution %u to a collective, node 0 expected %u "
                     "(once)", src, m->seq, expected);
}

static void store_release(real_node *n, const real_ctl *m) {
  void *copy = malloc(m->payload_len ? m->payload_len : 1);
  pthread_mutex_lock(&n->lock);
  bool ok = copy && m->seq == n->coll_seq + 1 && !n->released;
  if (ok) {
    if (m->payload_len) memcpy(copy, m->payload, m->payload_len);
    free(n->release);
    n->release = copy;
    n->release_len = m->payload_len;
    n->released = true;
    pthread_cond_broadcast(&n->cond);
  }
  uint32_t expected = n->coll_seq + 1;
  pthread_mutex_unlock(&n->lock);
  if (ok) return;
  free(copy);
  real_fail_and_tell(n, "node 0 answered collective %u, node %u expected %u", m->seq, n->rank,
                     expected);
}

void real_handle_control(real_node *n, uint32_t src, const real_ctl *m) {
  switch (m->type) {
  case REAL_CTL_GATHER:
    if (n->rank == 0) store_gather(n, src, m);
    else real_log_bad(n, "node %u: dropped a contribution from node %u", n->rank, src);
    break;
  case REAL_CTL_RELEASE:
    if (src == 0 && n->rank != 0) store_release(n, m);
    else real_log_bad(n, "node %u: dropped an answer from node %u", n->rank, src);
    break;
  case REAL_CTL_ABORT: {
    char text[REAL_ERROR_MAX];
    snprintf(text, sizeof text, "%.*s", (int)m->payload_len, (const char *)m->payload);
    real_abort_received(n, src, m->seq < n->size ? m->seq : src, text);
    break;
  }
  case REAL_CTL_PING:
    break; /* its arrival was the point (real_drain_router noted it) */
  default:
    break; /* a repeated HELLO or BOOK: start-up is over */
  }
}

/* --------------------------------------------------------------- events */

static void handle_event(real_node *n, uint32_t p, int event) {
  real_peer *peer = &n->peers[p];
  if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
    pthread_mutex_lock(&n->lock);
    if (!peer->up) {
      peer->up = true;
      n->links_up++;
      pthread_cond_broadcast(&n->cond);
    }
    pthread_mutex_unlock(&n->lock);
    return;
  }
  pthread_mutex_lock(&n->lock);
  bool closing = n->closing;
  pthread_mutex_unlock(&n->lock);
  if (closing || atomic_load(&n->failed)) return;
  if (event == ZMQ_EVENT_DISCONNECTED)
    real_fail_and_tell(n, "lost node %u at %s: it exited, crashed or stopped answering "
                       "(seen by node %u)", p, peer->endpoint, n->rank);
  else
    real_fail_and_tell(n, "node %u at %s failed the connection handshake: it died during "
                       "it, or it is not a pslab node of this run%s", p, peer->endpoint,
                       n->secure ? " with the same cluster key" : "");
}

/* A disconnect or a failed handshake fails the node, but only once the
 * ROUTER has been read past it: a peer that saw another fail sends rank 0
 * an ABORT naming it and exits (rank 0 sends it on to the others before it
 * exits), and a node must report the first failure (the ABORT), not the
 * exit it caused. A peer's frames come before its disconnect, so a read
 * that began after the event was kept and read the ROUTER until empty has
 * handled them: only then is the event handled. Whoever reads the ROUTER
 * next (the receiver, or a worker that leads, whom the receiver wakes)
 * does it after its read; an event kept while a read was under way waits
 * for the next. Events are numbered as they are kept (events_kept), and a
 * read notes the number before it begins (real_events_mark). */
void real_keep_event(real_node *n, uint32_t p, int event) {
  pthread_mutex_lock(&n->lead_lock);
  n->lost_event[p] = event;
  n->lost_seq[p] = atomic_fetch_add(&n->events_kept, 1) + 1;
  atomic_store(&n->events_pending, true);
  pthread_mutex_unlock(&n->lead_lock);
}

uint64_t real_events_mark(real_node *n) { return atomic_load(&n->events_kept); }

void real_handle_kept_events(real_node *n, uint64_t mark) {
  if (!atomic_exchange(&n->events_pending, false)) return;
  bool left = false; /* kept after mark: for the next read */
  for (uint32_t p = 0; p < n->size; p++) {
    pthread_mutex_lock(&n->lead_lock);
    int event = n->lost_event[p];
    if (event && n->lost_seq[p] > mark) {
      left = true;
      event = 0;
    } else {
      n->lost_event[p] = 0;
    }
    pthread_mutex_unlock(&n->lead_lock);
    if (event) handle_event(n, p, event);
  }
  if (left) atomic_store(&n->events_pending, true); /* one kept meanwhile set it too */
}

bool real_read_router(real_node *n) {
  uint64_t mark = real_events_mark(n);
  bool empty = real_drain_router(n);
  if (empty) real_handle_kept_events(n, mark);
  return empty;
}

/* ---------------------------------------------------------------- timers */

/* Runs the core's timers when due; returns the poll timeout in ms. */
static long run_timers(real_node *n) {
  if (!atomic_load(&n->timers_on)) return 100; /* they may be switched on */
  double due = ps_node_next_timer(n->core);
  if (isinf(due)) return 1000; /* a policy may arm one later: look again */
  double now = real_node_now(n);
  if (due <= now) {
    real_core_enter(n);
    if (!atomic_load(&n->failed)) ps_node_on_timer(n->core, now);
    real_core_leave(n);
    due = ps_node_next_timer(n->core);
    if (isinf(due)) return 1000;
  }
  double ms = ceil((due - real_node_now(n)) * 1000);
  return ms < 0 ? 0 : ms > 1000 ? 1000 : (long)ms;
}

/* ------------------------------------------------------------- liveness */

typedef struct {
  _Atomic double *heard; /* n->heard: by rank, when a frame from it last came */
  double every_s;    /* between two rounds of pings */
  double silence_s;  /* a peer silent this long is gone */
  double next_ping;  /* real_clock() of the next round */
  bool watching;     /* from the start release on */
} liveness;

static int liveness_make(real_node *n, liveness *l) {
  double t = n->cluster.timeout_s;
  *l = (liveness){.heard = n->heard,
                  .every_s = fmin(PING_FRACTION * t, PING_MAX_S),
                  .silence_s = SILENCE_FRACTION * t};
  return 0;
}

/* Pings every peer when due, and fails the node on a peer silent too long.
 * Returns the ms until it wants to run again. */
static long liveness_check(real_node *n, liveness *l) {
  double now = real_clock();
  if (now >= l->next_ping) {
    for (uint32_t p = 0; p < n->size; p++)
      if (p != n->rank) real_send_ctl(n, p, REAL_CTL_PING, 0, NULL, 0, false);
    l->next_ping = now + l->every_s;
  }
  pthread_mutex_lock(&n->lock);
  bool closing = n->closing;
  pthread_mutex_unlock(&n->lock);
  bool watch = atomic_load(&n->started) && !closing && !atomic_load(&n->failed);
  if (watch && !l->watching) /* the clock starts now for everyone */
    for (uint32_t p = 0; p < n->size; p++) atomic_store(&l->heard[p], now);
  l->watching = watch;
  for (uint32_t p = 0; watch && p < n->size; p++) {
    double last = atomic_load(&l->heard[p]);
    if (p == n->rank || now - last <= l->silence_s) continue;
    real_fail_and_tell(n, "lost node %u at %s: it stopped answering (nothing from it for "
                       "%.3g s; timeout_s %g) (seen by node %u)", p, n->peers[p].endpoint,
                       now - last, n->cluster.timeout_s, n->rank);
    break;
  }
  double ms = ceil((l->next_ping - real_clock()) * 1000);
  return ms < 0 ? 0 : (long)ms;
}

/* --------------------------------------------------------------- thread */

/* The receiver's poll set: the control pair, the nudge and the epoll set
 * that holds the ROUTER's ZMQ_FD while it is parked (leader.c), then a
 * monitor per peer. */
typedef struct {
  zmq_pollitem_t *items;
  uint32_t *peer_of; /* items[FIRST_MONITOR + i] monitors peer_of[i] */
  int count;
} poll_set;

#define FIRST_MONITOR 3

static int poll_set_make(real_node *n, poll_set *ps) {
  ps->items = calloc(n->size + FIRST_MONITOR, sizeof *ps->items);
  ps->peer_of = calloc(n->size, sizeof *ps->peer_of);
  if (!ps->items || !ps->peer_of) return -1;
  ps->items[0] = (zmq_pollitem_t){.socket = n->ctl_recv, .events = ZMQ_POLLIN};
  ps->items[1] = (zmq_pollitem_t){.socket = NULL, .fd = n->nudge_fd, .events = ZMQ_POLLIN};
  ps->items[2] = (zmq_pollitem_t){.socket = NULL, .fd = n->epoll_fd, .events = ZMQ_POLLIN};
  ps->count = FIRST_MONITOR;
  for (uint32_t p = 0; p < n->size; p++) {
    if (!n->peers[p].monitor) continue;
    ps->peer_of[ps->count - FIRST_MONITOR] = p;
    ps->items[ps->count++] = (zmq_pollitem_t){.socket = n->peers[p].monitor,
                                              .events = ZMQ_POLLIN};
  }
  return 0;
}

/* Reads the ROUTER if the receiver holds it or it is parked, and parks it
 * again once it is empty (or hands it to a worker that asked); whether the
 * receiver must read on (it stopped at a batch's end). */
static bool read_router(real_node *n) {
  if (!real_lead_receiver_take(n)) return false;
  bool empty = real_read_router(n);
  real_lead_receiver_done(n, empty);
  return !empty;
}

static void *receiver_main(void *arg) {
  real_node *n = arg;
  poll_set ps = {0};
  liveness live = {0};
  if (poll_set_make(n, &ps) != 0 || liveness_make(n, &live) != 0) {
    real_fail_and_tell(n, "node %u: out of memory in the receiver", n->rank);
    free(ps.items);
    free(ps.peer_of);
    return NULL;
  }
  bool more = read_router(n); /* it holds the ROUTER as it starts */
  bool recheck = false;       /* monitor events wait for a worker's read */
  for (;;) {
    long timeout = run_timers(n);
    long until_ping = liveness_check(n, &live);
    if (until_ping < timeout) timeout = until_ping;
    if (more) timeout = 0;
    if (recheck && timeout > 1) timeout = 1;
    if (zmq_poll(ps.items, ps.count, timeout) < 0) {
      if (zmq_errno() == EINTR) continue;
      real_fail_and_tell(n, "node %u: polling failed: %s", n->rank, zmq_strerror(zmq_errno()));
      break;
    }
    if (ps.items[0].revents & ZMQ_POLLIN) break; /* stop */
    bool nudged = ps.items[1].revents & ZMQ_POLLIN;
    if (nudged) real_fd_clear(n->nudge_fd);
    bool kept = false;
    for (int i = FIRST_MONITOR; i < ps.count; i++) {
      if (!(ps.items[i].revents & ZMQ_POLLIN)) continue;
      int ev;
      while ((ev = real_monitor_event(ps.items[i].socket)) >= 0) {
        uint32_t p = ps.peer_of[i - FIRST_MONITOR];
        if (ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
          handle_event(n, p, ev);
        } else {
          real_keep_event(n, p, ev);
          kept = true;
        }
      }
    }
    /* A parked ROUTER has nothing new unless its ZMQ_FD fired. */
    if (more || nudged || kept || atomic_load(&n->events_pending) ||
        (ps.items[2].revents & ZMQ_POLLIN))
      more = read_router(n);
    /* A worker reads the ROUTER: it handles the kept events after its next
     * read, which this wakes it for; look again soon in case it just gave
     * the ROUTER back. */
    recheck = atomic_load(&n->events_pending);
    if (recheck) real_lead_wake_any(n);
  }
  free(ps.items);
  free(ps.peer_of);
  return NULL;
}

int real_receiver_start(real_node *n) {
  if (real_lead_open(n) != 0) return -1;
  if (pthread_create(&n->receiver, NULL, receiver_main, n) != 0) return -1;
  real_name_thread(n->receiver, "pslab-recv");
  n->receiver_running = true;
  return 0;
}

void real_receiver_stop(real_node *n) {
  zmq_send(n->ctl_send, "stop", 4, 0);
  pthread_join(n->receiver, NULL);
  n->receiver_running = false;
}
