/*
 * The ZeroMQ transport of a node: one ROUTER that receives from everyone,
 * one DEALER per peer that sends to it, and the env the core sends through.
 *
 * Why DEALERs under a mutex, not a queue to one sending thread: the core
 * calls env.send from whichever thread is inside it, and a message must
 * leave in the order the calls happened. A mutex per peer keeps that order
 * (the order threads took it) and costs one uncontended lock per message; a
 * hop through an inproc queue and another thread would add a thread switch
 * to every message's latency. ZeroMQ sockets may move between threads with a
 * full memory barrier, which the mutex gives.
 *
 * Sockets never block a sender: high-water marks are off (a blocked sender
 * on each side of a full pair of queues would deadlock two receivers), so
 * memory bounds the backlog, and the workload bounds memory (a worker keeps
 * at most one pull and one push outstanding). A node's messages to itself go
 * through an inproc DEALER to its own ROUTER: same path, same order, no TCP.
 *
 * Each DEALER to another node has a monitor (an inproc PAIR the receiver
 * thread reads): a completed handshake marks the link up, a disconnect or a
 * failed handshake fails the node, naming the peer. ZMTP heartbeats (every
 * second or so, timeout_s without an answer) turn a peer that stopped
 * answering without closing its connection into a disconnect.
 *
 * With CURVE on (auth.c), the ROUTER is a CURVE server and every DEALER to
 * another node a client of the cluster's key; the inproc DEALER to itself
 * has no handshake to secure.
 */
#include "real/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#define MONITORED_EVENTS                                                          \
  (ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |                       \
   ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |   \
   ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

static int zfail(char *err, size_t errlen, const char *what) {
  snprintf(err, errlen, "%s: %s", what, zmq_strerror(zmq_errno()));
  return -1;
}

static void set_int(void *sock, int opt, int v) { zmq_setsockopt(sock, opt, &v, sizeof v); }

/* ------------------------------------------------------------- opening */

static int bind_router(real_node *n, uint32_t port, char *err, size_t errlen) {
  char ep[REAL_ENDPOINT_MAX], last[REAL_ENDPOINT_MAX];
  const char *host = real_bind_is_wildcard(n->cluster.bind) ? "*" : n->cluster.bind;
  if (port) snprintf(ep, sizeof ep, "tcp://%s:%u", host, port);
  else snprintf(ep, sizeof ep, "tcp://%s:*", host);
  if (zmq_bind(n->router, ep) != 0) {
    snprintf(err, errlen, "node %u cannot listen on %s: %s", n->rank, ep,
             zmq_strerror(zmq_errno()));
    return -1;
  }
  size_t len = sizeof last;
  if (zmq_getsockopt(n->router, ZMQ_LAST_ENDPOINT, last, &len) != 0)
    return zfail(err, errlen, "reading the bound endpoint");
  const char *colon = strrchr(last, ':');
  snprintf(n->endpoint, sizeof n->endpoint, "tcp://%s:%s", n->host, colon ? colon + 1 : "0");
  if (zmq_bind(n->router, "inproc://pslab-self") != 0)
    return zfail(err, errlen, "binding the node's own inproc endpoint");
  return 0;
}

int real_transport_open(real_node *n, uint32_t port, char *err, size_t errlen) {
  n->zctx = zmq_ctx_new();
  if (!n->zctx) return zfail(err, errlen, "creating a ZeroMQ context");
  n->router = zmq_socket(n->zctx, ZMQ_ROUTER);
  n->ctl_recv = zmq_socket(n->zctx, ZMQ_PAIR);
  n->ctl_send = zmq_socket(n->zctx, ZMQ_PAIR);
  if (!n->router || !n->ctl_recv || !n->ctl_send)
    return zfail(err, errlen, "creating sockets");
  set_int(n->router, ZMQ_RCVHWM, 0);
  set_int(n->router, ZMQ_LINGER, 0);
  set_int(n->ctl_recv, ZMQ_LINGER, 0);
  set_int(n->ctl_send, ZMQ_LINGER, 0);
  if (zmq_bind(n->ctl_recv, "inproc://pslab-control") != 0 ||
      zmq_connect(n->ctl_send, "inproc://pslab-control") != 0)
    return zfail(err, errlen, "connecting the control pair");
  if (real_auth_open(n, err, errlen) != 0) return -1;
  return bind_router(n, port, err, errlen);
}

/* ---------------------------------------------------------- connecting */

static void dealer_options(real_node *n, void *s) {
  uint8_t id[REAL_ID_LEN];
  real_id_encode(n->rank, n->run, id);
  zmq_setsockopt(s, ZMQ_ROUTING_ID, id, sizeof id);
  set_int(s, ZMQ_SNDHWM, 0);
  set_int(s, ZMQ_LINGER, 0);
  double t = n->cluster.timeout_s;
  int timeout_ms = t * 1000 > 3600e3 ? 3600000 : (int)ceil(t * 1000);
  int ivl_ms = timeout_ms / 4 < 100 ? 100 : timeout_ms / 4 > 1000 ? 1000 : timeout_ms / 4;
  set_int(s, ZMQ_HEARTBEAT_IVL, ivl_ms);
  set_int(s, ZMQ_HEARTBEAT_TIMEOUT, timeout_ms);
  set_int(s, ZMQ_HEARTBEAT_TTL, timeout_ms);
  set_int(s, ZMQ_RECONNECT_IVL, 100);
  set_int(s, ZMQ_RECONNECT_IVL_MAX, 1000);
}

static int add_monitor(real_node *n, uint32_t p, char *err, size_t errlen) {
  char ep[64];
  snprintf(ep, sizeof ep, "inproc://pslab-monitor-%u", p);
  real_peer *peer = &n->peers[p];
  if (zmq_socket_monitor(peer->sock, ep, MONITORED_EVENTS) != 0)
    return zfail(err, errlen, "monitoring a connection");
  peer->monitor = zmq_socket(n->zctx, ZMQ_PAIR);
  if (!peer->monitor) return zfail(err, errlen, "creating a socket");
  set_int(peer->monitor, ZMQ_LINGER, 0);
  if (zmq_connect(peer->monitor, ep) != 0)
    return zfail(err, errlen, "reading a connection's events");
  return 0;
}

int real_transport_connect(real_node *n, uint32_t p, const char *endpoint, char *err,
                           size_t errlen) {
  real_peer *peer = &n->peers[p];
  snprintf(peer->endpoint, sizeof peer->endpoint, "%s", p == n->rank ? n->endpoint : endpoint);
  peer->sock = zmq_socket(n->zctx, ZMQ_DEALER);
  if (!peer->sock) return zfail(err, errlen, "creating a socket");
  dealer_options(n, peer->sock);
  if (p != n->rank) real_auth_client(n, peer->sock); /* inproc has no handshake */
  if (p != n->rank && add_monitor(n, p, err, errlen) != 0) return -1;
  const char *to = p == n->rank ? "inproc://pslab-self" : endpoint;
  if (zmq_connect(peer->sock, to) != 0) {
    snprintf(err, errlen, "node %u cannot connect to node %u at %s: %s", n->rank, p,
             endpoint, zmq_strerror(zmq_errno()));
    return -1;
  }
  return 0;
}

/* ------------------------------------------------------------- sending */

static void free_buffer(void *data, void *hint) {
  (void)hint;
  free(data);
}

void real_transport_send(real_node *n, uint32_t p, uint8_t *buf, size_t len, bool force) {
  if (p >= n->size || !n->peers[p].sock || (!force && atomic_load(&n->failed))) {
    free(buf);
    return;
  }
  zmq_msg_t msg;
  if (zmq_msg_init_data(&msg, buf, len, free_buffer, NULL) != 0) {
    free(buf);
    return;
  }
  real_peer *peer = &n->peers[p];
  pthread_mutex_lock(&peer->lock);
  int rc = zmq_msg_send(&msg, peer->sock, 0);
  pthread_mutex_unlock(&peer->lock);
  if (rc < 0) zmq_msg_close(&msg); /* frees buf */
}

void real_send_ctl(real_node *n, uint32_t p, uint8_t type, uint32_t seq,
                   const void *payload, size_t len, bool force) {
  real_ctl m = {.type = type, .rank = n->rank, .run = n->run, .seq = seq, .size = n->size,
                .payload = payload, .payload_len = (uint32_t)len};
  size_t out_len;
  uint8_t *buf = len <= REAL_CTL_MAX_PAYLOAD ? real_ctl_encode(&m, &out_len) : NULL;
  if (!buf) {
    real_fail(n, "node %u: cannot encode a control message (%zu bytes)", n->rank, len);
    return;
  }
  real_transport_send(n, p, buf, out_len, force);
}

void real_node_send(real_node *n, uint32_t dst, uint8_t *buf, size_t len) {
  if (dst < n->size) atomic_fetch_add(&n->sent, 1);
  real_transport_send(n, dst, buf, len, false);
}

/* ------------------------------------------------------------ the env */

static void env_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  real_node_send(ctx, dst, buf, len);
}

static void env_wake(void *ctx, uint32_t worker, ps_ticket ticket) {
  (void)ticket; /* the waiter checks ps_worker_done itself */
  real_node *n = ctx;
  atomic_fetch_add(&n->progress, 1);
  if (worker >= n->workers) return;
  real_waiter *w = &n->waiters[worker];
  pthread_mutex_lock(&w->lock);
  pthread_cond_broadcast(&w->cond);
  pthread_mutex_unlock(&w->lock);
  real_lead_wake(n, worker); /* it may be reading the ROUTER (leader.c) */
}

void real_node_env(real_node *n, ps_env *env) {
  env->ctx = n;
  env->send = env_send;
  env->wake = env_wake;
}

/* ------------------------------------------------------------- events */

int real_monitor_event(void *monitor) {
  zmq_msg_t first, second;
  zmq_msg_init(&first);
  if (zmq_msg_recv(&first, monitor, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&first);
    return -1;
  }
  int event = -1;
  if (zmq_msg_size(&first) >= 6) {
    const uint8_t *d = zmq_msg_data(&first);
    event = d[0] | d[1] << 8;
  }
  bool more = zmq_msg_more(&first);
  zmq_msg_close(&first);
  while (more) { /* the endpoint frame */
    zmq_msg_init(&second);
    if (zmq_msg_recv(&second, monitor, 0) < 0) break;
    more = zmq_msg_more(&second);
    zmq_msg_close(&second);
  }
  return event;
}

/* ------------------------------------------------------------- closing */

void real_transport_close(real_node *n, int linger_ms) {
  for (uint32_t p = 0; n->peers && p < n->size; p++) {
    real_peer *peer = &n->peers[p];
    if (peer->sock && peer->monitor) zmq_socket_monitor(peer->sock, NULL, 0);
    if (peer->monitor) zmq_close(peer->monitor);
    if (peer->sock) {
      set_int(peer->sock, ZMQ_LINGER, linger_ms);
      zmq_close(peer->sock);
    }
    peer->sock = peer->monitor = NULL;
  }
  if (n->router) zmq_close(n->router);
  if (n->ctl_send) zmq_close(n->ctl_send);
  if (n->ctl_recv) zmq_close(n->ctl_recv);
  n->router = n->ctl_send = n->ctl_recv = NULL;
  if (n->zctx) real_auth_close(n);
  if (n->zctx) zmq_ctx_term(n->zctx);
  n->zctx = NULL;
}

/* ----------------------------------------------------------- receiving */

/* Reads and drops the rest of a multi-part message. */
static void drop_rest(void *sock, zmq_msg_t *msg) {
  while (zmq_msg_more(msg)) {
    zmq_msg_close(msg);
    zmq_msg_init(msg);
    if (zmq_msg_recv(msg, sock, 0) < 0) break;
  }
  zmq_msg_close(msg);
}

int real_router_recv(real_node *n, zmq_msg_t *body, uint32_t *src) {
  for (;;) {
    zmq_msg_t id;
    zmq_msg_init(&id);
    if (zmq_msg_recv(&id, n->router, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&id);
      return 0;
    }
    uint32_t rank = UINT32_MAX, run = 0;
    bool known = real_id_decode(zmq_msg_data(&id), zmq_msg_size(&id), &rank, &run) &&
                 rank < n->size && run == n->run;
    bool more = zmq_msg_more(&id);
    zmq_msg_close(&id);
    if (!more) continue; /* an empty message: nothing to drop */
    zmq_msg_init(body);
    if (zmq_msg_recv(body, n->router, 0) < 0) {
      zmq_msg_close(body);
      return 0;
    }
    if (known && !zmq_msg_more(body)) {
      *src = rank;
      return 1;
    }
    size_t len = zmq_msg_size(body);
    drop_rest(n->router, body);
    atomic_fetch_add(&n->stray, 1);
    if (known)
      real_log_bad(n, "node %u: dropped a multi-part message from node %u", n->rank, rank);
    else
      real_log_bad(n, "node %u: dropped a %zu-byte message from a sender that is not a "
                   "node of this run", n->rank, len);
  }
}
