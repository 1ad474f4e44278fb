/*
 * Rendezvous: how the nodes of a run find each other, through rank 0.
 *
 * Rank 0 binds a known address (the coordinator's; or any port, which it
 * then tells a launcher or writes to a coordinator file). Every other node
 * binds its own ROUTER, connects a DEALER to rank 0 and says HELLO with its
 * endpoint. When all have arrived, rank 0 connects to each and sends the
 * address book (the run's secret, which seals the core's messages, the
 * seal's algorithm, and every endpoint, by rank); each node then connects
 * to every other. Each HELLO says whether its node offers GMAC seals (its
 * CPU makes them, and its PSLAB_SEAL does not say "siphash"); rank 0
 * chooses GMAC only if all do, as nodes may run on different CPUs
 * (run_seal_choose: rank 0's PSLAB_SEAL may force either, and a forced
 * GMAC that a node does not offer fails the start-up, naming it). This runs on the main thread before the receiver starts, so the
 * ROUTER has one reader. Everything waits with a deadline (timeout_s): a
 * node that never arrives is named by rank, and rank 0 tells the nodes that
 * did arrive why the run cannot start.
 *
 * A node waits timeout_s for rank 0 to answer; once connected to it, it
 * waits for as long as rank 0 may wait for the others (plus a margin for
 * the answer to travel), so that a node missing elsewhere is reported by
 * rank 0, which knows which one, rather than as silence from rank 0.
 *
 * A node says HELLO again every quarter second until it has the book: a
 * HELLO that reached a rank 0 of the previous run on the same port (still
 * closing) is lost with that socket, and the next one reaches the new one.
 * Rank 0 ignores repeats.
 *
 * A frame that is no start-up message (it does not decode, or claims
 * another rank than the connection it came on) is dropped and logged,
 * naming its sender, its address, its size, its first bytes and why it was
 * refused: a stray or forged frame does not end the start-up. Should the
 * start-up then fail for want of a node, its error names the last such
 * frame, so the reason is in the one line the user reads.
 */
#include "real/internal.h"

#include <math.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELLO_EVERY_S 0.25
#define ANSWER_MARGIN_S 1.0
#define BAD_SHOWN_BYTES 24 /* of a refused frame, in its description */
#define BAD_MAX 320

/* Frames refused during start-up: how many, and the last one described. */
typedef struct {
  uint64_t count;
  char last[BAD_MAX];
} bad_frames;

/* Describes a refused frame: "node S (address) sent N bytes "..." (why)";
 * its first bytes are shown printable, others as \xNN. */
static void describe_bad(zmq_msg_t *body, uint32_t src, const char *why, char *out,
                         size_t n) {
  const uint8_t *b = zmq_msg_data(body);
  size_t len = zmq_msg_size(body), used = 0;
  char shown[BAD_SHOWN_BYTES * 4 + 4];
  for (size_t i = 0; i < len && i < BAD_SHOWN_BYTES; i++)
    used += (size_t)snprintf(shown + used, sizeof shown - used,
                             b[i] >= 0x20 && b[i] < 0x7f && b[i] != '"' && b[i] != '\\'
                                 ? "%c" : "\\x%02x", b[i]);
  if (len > BAD_SHOWN_BYTES) snprintf(shown + used, sizeof shown - used, "...");
  const char *addr = zmq_msg_gets(body, "Peer-Address");
  snprintf(out, n, "node %u (from %s) sent %zu byte%s \"%s\" (%s)", src,
           addr ? addr : "an unknown address", len, len == 1 ? "" : "s", shown, why);
}

/* Logs a refused frame and keeps its description. */
static void refuse(real_node *n, bad_frames *bad, zmq_msg_t *body, uint32_t src,
                   const char *why) {
  describe_bad(body, src, why, bad->last, sizeof bad->last);
  bad->count++;
  real_log_bad(n, "node %u: dropped a bad message during start-up: %s", n->rank, bad->last);
}

/* "; N bad message(s) dropped during start-up, the last: ..." or "". */
static void bad_suffix(const bad_frames *bad, char *out, size_t n) {
  *out = '\0';
  if (bad->count)
    snprintf(out, n, "; %llu bad message%s dropped during start-up, the last: %s",
             (unsigned long long)bad->count, bad->count == 1 ? "" : "s", bad->last);
}

/* Polls the ROUTER (and up to one monitor) for at most `wait_s`. */
static void poll_for(real_node *n, void *monitor, double wait_s) {
  zmq_pollitem_t items[2] = {{.socket = n->router, .events = ZMQ_POLLIN},
                             {.socket = monitor, .events = ZMQ_POLLIN}};
  long ms = wait_s <= 0 ? 0 : (long)ceil(wait_s * 1000);
  zmq_poll(items, monitor ? 2 : 1, ms);
}

static void host_port_of(const char *endpoint, char *out, size_t n) {
  const char *p = strncmp(endpoint, "tcp://", 6) == 0 ? endpoint + 6 : endpoint;
  snprintf(out, n, "%s", p);
}

/* ---------------------------------------------------------------- rank 0 */

typedef struct {
  char **endpoints; /* by rank; [0] is rank 0's */
  uint32_t arrived;
  bool all_gmac; /* every node arrived so far makes GMAC seals */
  bad_frames bad;
} book;

/* Takes one HELLO; -1 with err set when the run cannot go on. */
static int take_hello(real_node *n, uint32_t src, const real_ctl *m, book *b, char *err,
                      size_t errlen) {
  if (m->type == REAL_CTL_ABORT) {
    snprintf(err, errlen, "node %u: %.*s", m->seq, (int)m->payload_len,
             (const char *)m->payload);
    return -1;
  }
  if (m->type != REAL_CTL_HELLO || b->endpoints[src] || src == 0) return 0;
  if (m->size != n->size) {
    snprintf(err, errlen, "node %u was started for a cluster of %u nodes, node 0 for %u "
             "(do all nodes run the same spec?)", src, m->size, n->size);
    return -1;
  }
  if (m->payload_len < 7 || m->payload_len >= REAL_ENDPOINT_MAX ||
      memcmp(m->payload, "tcp://", 6) != 0) {
    real_log_bad(n, "node 0: node %u sent a HELLO without a tcp:// endpoint", src);
    return 0;
  }
  b->endpoints[src] = strndup((const char *)m->payload, m->payload_len);
  if (!b->endpoints[src]) {
    snprintf(err, errlen, "node 0: out of memory");
    return -1;
  }
  b->arrived++;
  if (!(m->seq & REAL_HELLO_GMAC)) b->all_gmac = false;
  return 0;
}

/* Reads every waiting frame into the book. */
static int read_hellos(real_node *n, book *b, char *err, size_t errlen) {
  zmq_msg_t body;
  uint32_t src;
  while (real_router_recv(n, &body, &src) == 1) {
    real_ctl m;
    int rc = real_ctl_decode(zmq_msg_data(&body), zmq_msg_size(&body), &m);
    if (rc == PS_OK && m.rank == src) {
      rc = take_hello(n, src, &m, b, err, errlen);
    } else {
      char why[96];
      if (rc == PS_OK) snprintf(why, sizeof why, "it claims to come from node %u", m.rank);
      else snprintf(why, sizeof why, "not a start-up message: %s", ps_strerror(rc));
      refuse(n, &b->bad, &body, src, why);
      rc = 0;
    }
    zmq_msg_close(&body);
    if (rc != 0) return -1;
  }
  return 0;
}

/* The ranks that never arrived, as "1, 3", in out. */
static void missing_ranks(const book *b, uint32_t size, char *out, size_t n) {
  size_t used = 0;
  uint32_t listed = 0;
  out[0] = '\0';
  for (uint32_t r = 1; r < size && used < n; r++) {
    if (b->endpoints[r]) continue;
    if (listed == 8) {
      snprintf(out + used, n - used, ", ...");
      break;
    }
    int w = snprintf(out + used, n - used, "%s%u", listed ? ", " : "", r);
    used += w > 0 ? (size_t)w : 0;
    listed++;
  }
}

/* Connects to the nodes that did arrive and tells them why there is no run. */
static void abort_arrived(real_node *n, book *b, const char *why) {
  char ignored[REAL_ERROR_MAX];
  for (uint32_t p = 1; p < n->size; p++)
    if (b->endpoints[p] &&
        real_transport_connect(n, p, b->endpoints[p], ignored, sizeof ignored) == 0)
      real_send_ctl(n, p, REAL_CTL_ABORT, 0, why, strlen(why), true);
  n->peers_made = true;
  n->abort_told = true;
}

/* The book: the run's secret, then every endpoint; the run's seal as its
 * number. It travels over CURVE
 * when the cluster authenticates (docs/real-clusters.md); on a plain link,
 * as everything else does. */
static int send_book(real_node *n, book *b, char *err, size_t errlen) {
  size_t len = PS_SECRET_LEN;
  for (uint32_t p = 0; p < n->size; p++) len += strlen(b->endpoints[p]) + 1;
  char *payload = malloc(len), *at = payload + PS_SECRET_LEN;
  if (!payload) {
    snprintf(err, errlen, "node 0: out of memory");
    return -1;
  }
  memcpy(payload, n->secret, PS_SECRET_LEN);
  for (uint32_t p = 0; p < n->size; p++) {
    size_t l = strlen(b->endpoints[p]) + 1;
    memcpy(at, b->endpoints[p], l);
    at += l;
  }
  int rc = 0;
  for (uint32_t p = 0; p < n->size && rc == 0; p++)
    rc = real_transport_connect(n, p, b->endpoints[p], err, errlen);
  n->peers_made = true;
  for (uint32_t p = 1; p < n->size && rc == 0; p++)
    real_send_ctl(n, p, REAL_CTL_BOOK, n->seal, payload, len, false);
  sodium_memzero(payload, PS_SECRET_LEN);
  free(payload);
  return rc;
}

static int announce(real_node *n, const real_node_config *c, char *err, size_t errlen) {
  char hp[REAL_ENDPOINT_MAX];
  host_port_of(n->endpoint, hp, sizeof hp);
  if (c->listening) c->listening(c->listening_ctx, hp);
  if (c->coordinator_file)
    return real_coordinator_file_write(c->coordinator_file, n->run, hp, err, errlen);
  return 0;
}

static int root_rendezvous(real_node *n, const real_node_config *c, char *err,
                           size_t errlen) {
  book b = {.endpoints = calloc(n->size, sizeof(char *)), .arrived = 1,
            .all_gmac = run_seal_gmac_offered()};
  if (!b.endpoints || !(b.endpoints[0] = strdup(n->endpoint))) {
    free(b.endpoints);
    snprintf(err, errlen, "node 0: out of memory");
    return -1;
  }
  int rc = announce(n, c, err, errlen);
  double deadline = real_clock() + n->cluster.timeout_s;
  while (rc == 0 && b.arrived < n->size) {
    rc = read_hellos(n, &b, err, errlen);
    double left = deadline - real_clock();
    if (rc != 0 || b.arrived == n->size || left <= 0) break;
    poll_for(n, NULL, left);
  }
  if (rc == 0 && b.arrived < n->size) {
    char missing[128], hp[REAL_ENDPOINT_MAX];
    missing_ranks(&b, n->size, missing, sizeof missing);
    host_port_of(n->endpoint, hp, sizeof hp);
    uint64_t refused = atomic_load(&n->refused);
    char why[160] = "", bad[BAD_MAX + 96];
    if (refused)
      snprintf(why, sizeof why, "; it refused %llu connection%s without this cluster's key: "
               "do all nodes use the same cluster.key_file?", (unsigned long long)refused,
               refused == 1 ? "" : "s");
    bad_suffix(&b.bad, bad, sizeof bad);
    snprintf(err, errlen, "node%s %s of %u never arrived within %g s (node 0 listened at %s%s%s)",
             n->size - b.arrived > 1 ? "s" : "", missing, n->size, n->cluster.timeout_s, hp,
             why, bad);
    rc = -1;
  }
  if (rc == 0) rc = run_seal_choose(b.all_gmac, &n->seal, err, errlen);
  if (rc == 0) rc = send_book(n, &b, err, errlen);
  else abort_arrived(n, &b, err);
  for (uint32_t p = 0; p < n->size; p++) free(b.endpoints[p]);
  free(b.endpoints);
  return rc;
}

/* ---------------------------------------------------------- other ranks */

/* Takes the reply of rank 0: 1 with the book taken, 0 for anything else,
 * -1 with err set. */
static int take_reply(real_node *n, const real_ctl *m, char *err, size_t errlen) {
  if (m->type == REAL_CTL_ABORT) {
    snprintf(err, errlen, "node %u: %.*s", m->seq, (int)m->payload_len,
             (const char *)m->payload);
    return -1;
  }
  if (m->type != REAL_CTL_BOOK) return 0;
  if (m->size != n->size) {
    snprintf(err, errlen, "node 0 runs a cluster of %u nodes, node %u was started for %u",
             m->size, n->rank, n->size);
    return -1;
  }
  if (m->seq >= PS_SEAL_END || (m->seq == PS_SEAL_GMAC && !ps_seal_gmac_available())) {
    snprintf(err, errlen, "node 0 chose the seal %u (%s), which node %u cannot make", m->seq,
             m->seq < PS_SEAL_END ? ps_seal_name((ps_seal)m->seq) : "unknown", n->rank);
    return -1;
  }
  for (uint32_t p = 1; p < n->size; p++)
    if (p != n->rank &&
        real_transport_connect(n, p, real_ctl_book_entry(m, p), err, errlen) != 0)
      return -1;
  if (real_transport_connect(n, n->rank, NULL, err, errlen) != 0) return -1;
  n->peers_made = true;
  memcpy(n->secret, real_ctl_book_secret(m), PS_SECRET_LEN);
  n->seal = (ps_seal)m->seq;
  return 1;
}

/* Reads what rank 0 sent and the events of the link to it. */
static int read_replies(real_node *n, bad_frames *bad, char *err, size_t errlen) {
  int ev;
  while ((ev = real_monitor_event(n->peers[0].monitor)) >= 0) {
    n->peers[0].up = ev == ZMQ_EVENT_HANDSHAKE_SUCCEEDED; /* a stale rank 0 may drop us */
    /* With CURVE, a server that cannot read our HELLO just closes: no detail. */
    if (n->secure && (ev == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
                      ev == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
                      ev == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH))
      n->peers[0].refused = true;
  }
  zmq_msg_t body;
  uint32_t src;
  int rc = 0;
  while (rc == 0 && real_router_recv(n, &body, &src) == 1) {
    real_ctl m;
    bool ctl = real_ctl_decode(zmq_msg_data(&body), zmq_msg_size(&body), &m) == PS_OK;
    if (ctl && src == 0)
      rc = take_reply(n, &m, err, errlen);
    else if (!ctl)
      refuse(n, bad, &body, src, "not a start-up message");
    else if (m.type != REAL_CTL_PING) /* a PING: a node with the book, alive */
      refuse(n, bad, &body, src, "only node 0 answers during start-up");
    zmq_msg_close(&body);
  }
  return rc;
}

static int find_coordinator(real_node *n, const real_node_config *c, char *err,
                            size_t errlen) {
  if (*n->coordinator) return 0;
  if (real_coordinator_file_wait(c->coordinator_file, n->run, n->cluster.timeout_s,
                                 n->coordinator, sizeof n->coordinator, err, errlen) != 0)
    return -1;
  char host[REAL_HOST_MAX];
  uint32_t port;
  return real_split_host_port(n->coordinator, host, sizeof host, &port, err, errlen);
}

static int node_rendezvous(real_node *n, const real_node_config *c, char *err,
                           size_t errlen) {
  if (find_coordinator(n, c, err, errlen) != 0) return -1;
  char root[REAL_ENDPOINT_MAX];
  snprintf(root, sizeof root, "tcp://%s", n->coordinator);
  if (real_transport_connect(n, 0, root, err, errlen) != 0) return -1;
  double deadline = real_clock() + n->cluster.timeout_s, next_hello = 0;
  bool connected = false;
  bad_frames bad = {0};
  int rc = 0;
  while (rc == 0) {
    double now = real_clock();
    if (!connected && n->peers[0].up) { /* rank 0 is there: it will answer */
      connected = true;
      deadline = fmax(deadline, now + n->cluster.timeout_s + ANSWER_MARGIN_S);
    }
    if (now >= next_hello) {
      real_send_ctl(n, 0, REAL_CTL_HELLO, run_seal_gmac_offered() ? REAL_HELLO_GMAC : 0,
                    n->endpoint, strlen(n->endpoint), false);
      next_hello = now + HELLO_EVERY_S;
    }
    rc = read_replies(n, &bad, err, errlen);
    if (rc != 0 || now >= deadline) break;
    poll_for(n, n->peers[0].monitor, fmin(next_hello, deadline) - real_clock());
  }
  char dropped[BAD_MAX + 96];
  bad_suffix(&bad, dropped, sizeof dropped);
  if (rc == 0 && n->peers[0].refused)
    snprintf(err, errlen, "node %u: node 0 at %s did not complete the CURVE handshake "
             "within %g s: do all nodes use the same key (cluster.key_file) and "
             "cluster.auth?%s", n->rank, n->coordinator, n->cluster.timeout_s, dropped);
  else if (rc == 0)
    snprintf(err, errlen, "node %u: no answer from node 0 at %s within %g s (is it running, "
             "and listening at that address?%s)", n->rank, n->coordinator,
             n->cluster.timeout_s, dropped);
  return rc > 0 ? 0 : -1;
}

int real_rendezvous(real_node *n, const real_node_config *c, char *err, size_t errlen) {
  int rc = n->rank == 0 ? root_rendezvous(n, c, err, errlen)
                        : node_rendezvous(n, c, err, errlen);
  for (uint32_t p = 0; rc == 0 && p < n->size; p++)
    if (p != n->rank && n->peers[p].up) n->links_up++;
  return rc;
}
