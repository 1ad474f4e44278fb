/*
 * Who reads the node's ROUTER: leader/follower, so that a worker waiting
 * for a reply reads it itself, one thread wake-up after it arrives.
 *
 * The ROUTER has at most one reader at a time, and n->lead says who:
 *   REAL_LEAD_PARKED    nobody. The last reader read it until it was empty
 *                       (EAGAIN), and its ZMQ_FD sits in n->epoll_fd, which
 *                       the receiver sleeps on: a ZMQ_FD turns readable when
 *                       the socket gets something new after a read found it
 *                       empty (zmq_getsockopt(3)), so a frame that comes
 *                       wakes the receiver, which takes the socket;
 *   REAL_LEAD_RECEIVER  the receiver thread reads it (and sleeps in
 *                       zmq_poll on the socket itself while it holds it);
 *   a worker's index    that worker, waiting for a ticket, reads it.
 * A worker that must wait takes a parked ROUTER at once (and takes its
 * ZMQ_FD out of the receiver's epoll set, so the receiver sleeps on), or
 * asks for it, and whoever holds it hands it over when done. The worker
 * then reads the socket itself, handling every frame (its own replies,
 * other workers' replies, requests from other nodes, control) as the
 * receiver does (real_drain_router), until its ticket is done or the node
 * failed; then it reads the socket until it is empty and parks it (its
 * ZMQ_FD back in the epoll set), or hands it to another worker that asked.
 * So a reply reaches a waiting worker in one thread wake-up (from libzmq's
 * I/O thread), as it reaches a bare ZeroMQ client, not in two (I/O thread to
 * receiver, receiver to worker), and the receiver sleeps through it.
 *
 * Every change of hands goes through lead_lock, a full barrier: ZeroMQ
 * sockets are not thread-safe but may move between threads that way. The
 * holder reads frames in order and handles each before it reads the next,
 * and the socket changes hands only between frames, so every frame is
 * handled once, in the order it came. The receiver keeps the rest: timers,
 * liveness (it reads `heard`, which whoever reads the ROUTER writes),
 * monitors and the stop.
 *
 * A leading worker sleeps in zmq_poll on the ROUTER and on lead_fd, which
 * is written when its ticket completes on another thread (env_wake), when
 * the node fails (wake_everyone) and when the receiver keeps a monitor
 * event until the ROUTER has been read (receiver.c). A node with a straggler (throttle.c)
 * keeps every read in the receiver: the throttle's sleeps emulate a slow
 * server thread, not a slow worker. Linux only (epoll, eventfd).
 */
#include "real/internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

_Thread_local bool real_leading;

static void poke(int fd) {
  uint64_t one = 1;
  while (write(fd, &one, sizeof one) < 0 && errno == EINTR) {
  }
  /* EAGAIN: the counter is full, so the reader is woken anyway. */
}

void real_fd_clear(int fd) {
  uint64_t v;
  while (read(fd, &v, sizeof v) < 0 && errno == EINTR) {
  }
}

int real_lead_init(real_node *n) {
  pthread_mutex_init(&n->lead_lock, NULL);
  atomic_init(&n->lead, REAL_LEAD_RECEIVER);
  n->nudge_fd = n->lead_fd = n->epoll_fd = n->router_fd = -1;
  n->heard = calloc(n->size, sizeof *n->heard);
  n->lead_wants = calloc(n->workers ? n->workers : 1, sizeof *n->lead_wants);
  n->lost_event = calloc(n->size, sizeof *n->lost_event);
  n->lost_seq = calloc(n->size, sizeof *n->lost_seq);
  atomic_init(&n->events_kept, 0);
  atomic_init(&n->events_pending, false);
  if (!n->heard || !n->lead_wants || !n->lost_event || !n->lost_seq) return -1;
  for (uint32_t p = 0; p < n->size; p++) atomic_init(&n->heard[p], 0.0);
  n->nudge_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  n->lead_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  n->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (n->nudge_fd < 0 || n->lead_fd < 0 || n->epoll_fd < 0) return -1;
  n->lead_on = n->workers > 0 && !n->slow;
  return 0;
}

void real_lead_free(real_node *n) {
  if (n->nudge_fd >= 0) close(n->nudge_fd);
  if (n->lead_fd >= 0) close(n->lead_fd);
  if (n->epoll_fd >= 0) close(n->epoll_fd);
  free(n->heard);
  free(n->lead_wants);
  free(n->lost_event);
  free(n->lost_seq);
  pthread_mutex_destroy(&n->lead_lock);
}

/* The ROUTER's ZMQ_FD into (op EPOLL_CTL_ADD) or out of (EPOLL_CTL_DEL)
 * the receiver's epoll set: 0, or the errno of the kernel's refusal. */
static int watch(real_node *n, int op) {
  struct epoll_event ev = {.events = EPOLLIN};
  return epoll_ctl(n->epoll_fd, op, n->router_fd, &ev) == 0 ? 0 : errno;
}

/* After lead_lock is released: a refused epoll_ctl (out of kernel memory)
 * fails the node rather than leave the ROUTER unwatched. */
static void check_watch(real_node *n, int err) {
  if (err)
    real_fail_and_tell(n, "node %u: cannot watch its socket: %s", n->rank, strerror(err));
}

/* lead_lock held, by the holder of a ROUTER out of the epoll set: it goes
 * to a worker that asked for it; false when none did. */
static bool pass_to_worker(real_node *n) {
  for (uint32_t j = 0; j < n->workers; j++) {
    if (!n->lead_wants[j]) continue;
    n->lead_wants[j] = false;
    n->lead_wanting--;
    atomic_store(&n->lead, (int32_t)j);
    real_waiter *wt = &n->waiters[j];
    pthread_mutex_lock(&wt->lock);
    pthread_cond_broadcast(&wt->cond);
    pthread_mutex_unlock(&wt->lock);
    return true;
  }
  return false;
}

/* lead_lock held, by the receiver holding the ROUTER: passes it to a worker
 * that asked for it; the errno of a refused epoll_ctl, or 0. */
static int receiver_pass(real_node *n) {
  if (n->lead_wanting == 0) return 0;
  int err = watch(n, EPOLL_CTL_DEL);
  if (!err) pass_to_worker(n);
  return err;
}

int real_lead_open(real_node *n) {
  size_t len = sizeof n->router_fd;
  if (zmq_getsockopt(n->router, ZMQ_FD, &n->router_fd, &len) != 0) return -1;
  return watch(n, EPOLL_CTL_ADD) ? -1 : 0; /* lead: the receiver */
}

bool real_lead_receiver_take(real_node *n) {
  pthread_mutex_lock(&n->lead_lock);
  if (atomic_load(&n->lead) == REAL_LEAD_PARKED) atomic_store(&n->lead, REAL_LEAD_RECEIVER);
  int err = atomic_load(&n->lead) == REAL_LEAD_RECEIVER ? receiver_pass(n) : 0;
  bool holds = atomic_load(&n->lead) == REAL_LEAD_RECEIVER;
  pthread_mutex_unlock(&n->lead_lock);
  check_watch(n, err);
  return holds;
}

void real_lead_receiver_done(real_node *n, bool empty) {
  pthread_mutex_lock(&n->lead_lock);
  int err = receiver_pass(n);
  if (empty && atomic_load(&n->lead) == REAL_LEAD_RECEIVER)
    atomic_store(&n->lead, REAL_LEAD_PARKED);
  pthread_mutex_unlock(&n->lead_lock);
  check_watch(n, err);
}

/* lead_lock held, by a worker done with the ROUTER: parks it when it was
 * read until empty, or gives it to the receiver, nudged, which reads on.
 * The errno of a refused epoll_ctl, or 0. */
static int give_back(real_node *n, bool empty) {
  int err = watch(n, EPOLL_CTL_ADD);
  atomic_store(&n->lead, empty && !err ? REAL_LEAD_PARKED : REAL_LEAD_RECEIVER);
  if (!empty || err) poke(n->nudge_fd);
  return err;
}

void real_lead_wake(real_node *n, uint32_t worker) {
  if (n->lead_on && !real_leading && atomic_load(&n->lead) == (int32_t)worker)
    poke(n->lead_fd);
}

void real_lead_wake_any(real_node *n) {
  if (n->lead_on) poke(n->lead_fd);
}

/* ------------------------------------------------------- the deadline */

/* A wait's deadline (real.h, real_node_wait): timeout_s after the node last
 * showed progress (n->progress moved: a data message handled, a ticket
 * completed), or after the wait began. */
typedef struct {
  uint64_t seen;      /* n->progress when last looked at */
  double quiet_since; /* real_clock() when it last moved, or the wait began */
  double waited_s;    /* when it gave up: how long the wait had lasted */
  double began;
} wait_clock;

static wait_clock wait_clock_start(real_node *n) {
  double now = real_clock();
  return (wait_clock){.seen = atomic_load(&n->progress), .quiet_since = now, .began = now};
}

/* The deadline now, in real_clock() time. */
static double wait_deadline(real_node *n, wait_clock *c) {
  uint64_t p = atomic_load(&n->progress);
  if (p != c->seen) {
    c->seen = p;
    c->quiet_since = real_clock();
  }
  return c->quiet_since + n->cluster.timeout_s;
}

/* Whether the wait's deadline has passed (it then keeps how long it lasted). */
static bool wait_expired(real_node *n, wait_clock *c) {
  double now = real_clock();
  if (now < wait_deadline(n, c)) return false;
  c->waited_s = now - c->began;
  return true;
}

/* Milliseconds until the deadline, for a poll (at least 1). */
static long wait_ms(real_node *n, wait_clock *c) {
  double ms = ceil((wait_deadline(n, c) - real_clock()) * 1000);
  return ms < 1 ? 1 : ms > 3600e3 ? 3600000L : (long)ms;
}

/* Fails the node for a wait that passed its deadline, naming the worker and
 * what it waited for. */
static void fail_wait(real_node *n, ps_worker *w, ps_ticket t, const wait_clock *c) {
  char what[192];
  run_describe_wait(w, t, what, sizeof what);
  real_fail_and_tell(n, "node %u: worker %u.%u waited %.3g s for %s and nothing moved on "
                     "node %u for timeout_s %g (no message handled, no operation "
                     "completed): its answer was lost or refused, or a step took longer "
                     "than timeout_s", n->rank, n->rank, ps_worker_index(w), c->waited_s,
                     what, n->rank, n->cluster.timeout_s);
}

/* --------------------------------------------------------- the waiting */

/* The calling worker leads: reads the ROUTER until ticket t is done, the
 * node failed or the wait's deadline passed (*expired); whether it is done.
 * *empty: the last read found the ROUTER empty. */
static bool lead_until(real_node *n, ps_worker *w, ps_ticket t, wait_clock *c,
                       bool *expired, bool *empty) {
  zmq_pollitem_t items[2] = {{.socket = n->router, .events = ZMQ_POLLIN},
                             {.socket = NULL, .fd = n->lead_fd, .events = ZMQ_POLLIN}};
  bool done;
  real_leading = true;
  *empty = false;
  while (!(done = ps_worker_done(w, t)) && !atomic_load(&n->failed) &&
         !(*expired = wait_expired(n, c))) {
    if (zmq_poll(items, 2, wait_ms(n, c)) < 0) {
      if (zmq_errno() == EINTR) continue;
      real_fail_and_tell(n, "node %u: a worker's polling failed: %s", n->rank,
                         zmq_strerror(zmq_errno()));
      break;
    }
    bool woken = items[1].revents & ZMQ_POLLIN;
    if (woken) real_fd_clear(n->lead_fd);
    /* Woken: also to read past a monitor event, and handle it (receiver.c). */
    if (woken || (items[0].revents & ZMQ_POLLIN)) *empty = real_read_router(n);
  }
  if (!*empty) *empty = real_read_router(n); /* to park it, it must be empty */
  real_leading = false;
  return done;
}

/* Sleeps on the worker's condition until t is done, the node failed, the
 * worker was given the ROUTER (lead == me) or the wait's deadline passed
 * (*expired). The condition uses CLOCK_MONOTONIC (node.c). */
static bool sleep_on(real_node *n, real_waiter *wt, ps_worker *w, ps_ticket t, int32_t me,
                     wait_clock *c, bool *expired) {
  pthread_mutex_lock(&wt->lock);
  bool done;
  while (!(done = ps_worker_done(w, t)) && !atomic_load(&n->failed) &&
         atomic_load(&n->lead) != me && !(*expired = wait_expired(n, c))) {
    struct timespec ts = real_abs_time(wait_deadline(n, c));
    pthread_cond_timedwait(&wt->cond, &wt->lock, &ts);
  }
  pthread_mutex_unlock(&wt->lock);
  return done;
}

/* Where the wait ends: PS_OK when t is done; otherwise PS_ERR_PEER, the
 * node failed first when the deadline passed. */
static int wait_result(real_node *n, ps_worker *w, ps_ticket t, bool done, bool expired,
                       const wait_clock *c) {
  if (done) return PS_OK;
  if (expired && !atomic_load(&n->failed)) fail_wait(n, w, t, c);
  return PS_ERR_PEER;
}

int real_node_wait(real_node *n, ps_worker *w, ps_ticket t) {
  uint32_t i = ps_worker_index(w);
  if (i >= n->workers) return PS_ERR_INVAL;
  real_waiter *wt = &n->waiters[i];
  wait_clock c = wait_clock_start(n);
  bool expired = false;
  if (!n->lead_on) {
    bool done = sleep_on(n, wt, w, t, REAL_LEAD_NONE, &c, &expired);
    return wait_result(n, w, t, done, expired, &c);
  }
  if (ps_worker_done(w, t)) return PS_OK;
  int32_t me = (int32_t)i;
  pthread_mutex_lock(&n->lead_lock);
  int err = 0;
  if (atomic_load(&n->lead) == REAL_LEAD_PARKED && !(err = watch(n, EPOLL_CTL_DEL))) {
    atomic_store(&n->lead, me);
  } else { /* its holder hands it over when done with it */
    n->lead_wants[i] = true;
    n->lead_wanting++;
  }
  pthread_mutex_unlock(&n->lead_lock);
  check_watch(n, err);
  bool done = false, empty = false, led = false;
  if (atomic_load(&n->lead) != me) done = sleep_on(n, wt, w, t, me, &c, &expired);
  if (atomic_load(&n->lead) == me) { /* taken, given, or given as t was done */
    led = true;
    done = lead_until(n, w, t, &c, &expired, &empty) || done;
  }
  real_lead_release(n, i, led, empty);
  return wait_result(n, w, t, done, expired, &c);
}

void real_lead_release(real_node *n, uint32_t worker, bool led, bool empty) {
  int err = 0;
  pthread_mutex_lock(&n->lead_lock);
  if (n->lead_wants[worker]) {
    n->lead_wants[worker] = false;
    n->lead_wanting--;
  }
  /* The ROUTER may also have come to this worker after it last looked:
   * its ticket was done by then, and the holder passed the socket on to it
   * because it still asked. Then it holds a socket it never read, and
   * nobody would read it until this worker waits again (never, after its
   * last wait): it goes on, not read until empty. */
  if (atomic_load(&n->lead) == (int32_t)worker && !pass_to_worker(n))
    err = give_back(n, led && empty);
  pthread_mutex_unlock(&n->lead_lock);
  check_watch(n, err);
}
