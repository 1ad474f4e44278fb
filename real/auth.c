/*
 * Who may send messages into a run: ZeroMQ CURVE between the nodes, the
 * cluster's key and its file, and the guard thread that admits or refuses
 * every connection to a node's ROUTER.
 *
 * The core trusts every message it is given, so the transport decides who
 * may give it one. A node that binds beyond loopback (cluster.auth "auto",
 * the default) or any node when cluster.auth is "curve" makes its ROUTER a
 * CURVE server and its DEALERs CURVE clients, all with the cluster's one
 * keypair: a client must know the server's public key to be heard at all,
 * and the guard (a ZAP handler) admits it only when its own public key is
 * the cluster's, which CURVE's handshake proves it holds the secret half
 * of. One shared keypair is what makes this simple: no list of node keys
 * to distribute, and a node is "whoever has the key file" (the threat model:
 * docs/real-clusters.md, "Authenticated clusters"). Loopback runs stay plain
 * unless asked, since only processes of this machine can reach them.
 *
 * Refusals are counted (real_node_stats.refused) and logged once per peer
 * address and reason: a ZAP refusal names the address ZeroMQ gives the handler; a
 * handshake that fails before ZAP (a plain client, or a CURVE client that
 * does not know the cluster's public key, a connection closed before it
 * authenticated) is seen on the ROUTER's monitor,
 * whose ACCEPTED event gives the connection's descriptor (its peer address
 * read at once) and whose failure is followed, on the context's one I/O
 * thread, by that connection's DISCONNECTED event with the same descriptor.
 */
#include "real/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ROUTER_MONITOR "inproc://pslab-router-monitor"
#define GUARD_EVENTS                                                              \
  (ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | \
   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
#define GUARD_ADDRESSES 16 /* peer addresses logged by name, then paced */
#define GUARD_FDS 64       /* accepted connections whose address is kept */
#define GUARD_ADDR_MAX 64
#define ZAP_FRAMES 8
#define CURVE_KEY_BYTES 32

typedef struct {
  int fd;
  char addr[GUARD_ADDR_MAX];
} accepted_conn;

struct real_guard {
  pthread_t thread;
  bool running;
  void *zap;     /* REP at ZAP_ENDPOINT: the handler */
  void *monitor; /* PAIR: the ROUTER's events */
  uint8_t cluster_key[CURVE_KEY_BYTES]; /* the only client key admitted */
  accepted_conn conns[GUARD_FDS];
  unsigned next_conn;
  bool failed;       /* a handshake failure waits for its DISCONNECTED */
  int failed_reason; /* its ZMTP protocol error, or 0 */
  struct {
    char addr[GUARD_ADDR_MAX];
    const char *why; /* one of the static reasons */
  } logged[GUARD_ADDRESSES];
  unsigned n_logged;
};

/* ------------------------------------------------------------ decisions */

bool real_bind_is_loopback(const char *bind) {
  struct in_addr a;
  return bind && inet_pton(AF_INET, bind, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

const char *real_auth_name(real_auth a) {
  switch (a) {
  case REAL_AUTH_AUTO: return "auto";
  case REAL_AUTH_CURVE: return "curve";
  case REAL_AUTH_NONE: return "none";
  case REAL_AUTH_INSECURE: return "insecure";
  }
  return "?";
}

int real_auth_uses_curve(const real_cluster *c, char *err, size_t errlen) {
  bool loopback = real_bind_is_loopback(c->bind);
  switch (c->auth) {
  case REAL_AUTH_CURVE: return 1;
  case REAL_AUTH_INSECURE: return 0;
  case REAL_AUTH_NONE:
    if (loopback) return 0;
    snprintf(err, errlen, "cluster.auth is \"none\" but cluster.bind \"%s\" is reachable "
             "beyond this machine: any host could send messages into the run (use \"auto\" "
             "with a key, or \"insecure\" to run without authentication anyway)", c->bind);
    return -1;
  case REAL_AUTH_AUTO: break;
  }
  return loopback ? 0 : 1;
}

/* ----------------------------------------------------------------- keys */

/* Zeroes memory that held a secret (a store the compiler cannot drop). */
static void wipe(void *at, size_t n) {
  volatile unsigned char *p = at;
  for (size_t i = 0; i < n; i++) p[i] = 0;
}

void real_curve_key_wipe(real_curve_key *k) { wipe(k, sizeof *k); }

static int no_curve(char *err, size_t errlen) {
  snprintf(err, errlen, "this ZeroMQ (libzmq) was built without CURVE security "
           "(zmq_has(\"curve\") is false): install one built with libsodium");
  return -1;
}

int real_curve_keygen(real_curve_key *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (!zmq_has("curve")) return no_curve(err, errlen);
  if (zmq_curve_keypair(out->public_key, out->secret_key) != 0) {
    snprintf(err, errlen, "cannot make a CURVE keypair: %s", zmq_strerror(zmq_errno()));
    return -1;
  }
  out->set = true;
  return 0;
}

int real_key_file_write(const char *path, const real_curve_key *k, char *err,
                        size_t errlen) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    snprintf(err, errlen, "key file %s: cannot create it: %s%s", path, strerror(errno),
             errno == EEXIST ? " (a key in use is never overwritten: remove it first)" : "");
    return -1;
  }
  char text[512];
  int len = snprintf(text, sizeof text,
                     "# pslab cluster key: one ZeroMQ CURVE keypair (Z85) that every node\n"
                     "# of the cluster reads (cluster.key_file). Whoever holds this file can\n"
                     "# send messages into the cluster's runs: keep it mode 0600.\n"
                     "public %s\nsecret %s\n", k->public_key, k->secret_key);
  bool ok = fchmod(fd, 0600) == 0 && write(fd, text, (size_t)len) == len && fsync(fd) == 0;
  int saved = errno;
  wipe(text, sizeof text);
  if (close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok) return 0;
  unlink(path);
  snprintf(err, errlen, "key file %s: cannot write it: %s", path, strerror(saved));
  return -1;
}

/* A Z85 key of 40 characters after `name ` on a line; false if absent. */
static bool key_field(const char *line, const char *name, char out[REAL_Z85_KEY_LEN]) {
  size_t nl = strlen(name);
  if (strncmp(line, name, nl) != 0 || line[nl] != ' ') return false;
  const char *v = line + nl + 1;
  size_t len = strcspn(v, " \t\r\n");
  if (len != REAL_Z85_KEY_LEN - 1) return false;
  memcpy(out, v, len);
  out[len] = '\0';
  uint8_t bin[CURVE_KEY_BYTES];
  return zmq_z85_decode(bin, out) != NULL;
}

static int parse_key_text(const char *path, char *text, real_curve_key *out, char *err,
                          size_t errlen) {
  bool pub = false, sec = false;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (line[0] == '#' || line[0] == '\0') continue;
    if (key_field(line, "public", out->public_key)) pub = true;
    else if (key_field(line, "secret", out->secret_key)) sec = true;
    else break;
  }
  char derived[REAL_Z85_KEY_LEN];
  if (!pub || !sec) {
    snprintf(err, errlen, "key file %s: expected a \"public KEY\" and a \"secret KEY\" line "
             "(40 Z85 characters each), as `pslab keygen` writes", path);
    return -1;
  }
  if (zmq_curve_public(derived, out->secret_key) != 0 ||
      strcmp(derived, out->public_key) != 0) {
    snprintf(err, errlen, "key file %s: its public key is not the one of its secret key "
             "(make a new file with `pslab keygen`)", path);
    return -1;
  }
  out->set = true;
  return 0;
}

int real_key_file_read(const char *path, real_curve_key *out, char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  if (!zmq_has("curve")) return no_curve(err, errlen);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, errlen, "key file %s: cannot open it: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  const char *why = NULL;
  if (fstat(fd, &st) != 0) why = strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != geteuid()) why = "owned by another user";
  else if (st.st_mode & 077) why = "group or others may read or write it";
  char text[1024];
  ssize_t got = why ? 0 : read(fd, text, sizeof text - 1);
  close(fd);
  if (why) {
    snprintf(err, errlen, "key file %s: refused: %s (mode %04o); it holds the cluster's "
             "secret key: chmod 600 it, as `pslab keygen` makes it", path, why,
             (unsigned)(st.st_mode & 07777));
    return -1;
  }
  if (got < 0) {
    snprintf(err, errlen, "key file %s: cannot read it: %s", path, strerror(errno));
    return -1;
  }
  text[got] = '\0';
  int rc = parse_key_text(path, text, out, err, errlen);
  wipe(text, sizeof text);
  if (rc != 0) real_curve_key_wipe(out);
  return rc;
}

int real_auth_local_keys(real_cluster *c, char *err, size_t errlen) {
  int use = real_auth_uses_curve(c, err, errlen);
  if (use <= 0 || c->key.set || c->key_file[0]) return use < 0 ? -1 : 0;
  return real_curve_keygen(&c->key, err, errlen);
}

/* ---------------------------------------------------------------- log */

/* Counts a refusal and wakes whoever waits on the node's condition. */
static void count_refusal(real_node *n) {
  pthread_mutex_lock(&n->lock);
  atomic_fetch_add(&n->refused, 1);
  pthread_cond_broadcast(&n->cond);
  pthread_mutex_unlock(&n->lock);
}

/* Logs a refusal of addr once per address and reason (the first
 * GUARD_ADDRESSES of them; past them every 1000th refusal): a peer that
 * reconnects every 100 ms is one line, not a flood. why is a static string. */
static void log_refusal(real_node *n, struct real_guard *g, const char *addr,
                        const char *why) {
  for (unsigned i = 0; i < g->n_logged; i++)
    if (g->logged[i].why == why && strcmp(g->logged[i].addr, addr) == 0) return;
  if (g->n_logged < GUARD_ADDRESSES) {
    snprintf(g->logged[g->n_logged].addr, GUARD_ADDR_MAX, "%s", addr);
    g->logged[g->n_logged++].why = why;
    fprintf(stderr, "pslab: node %u refused a connection from %s: %s (not logged again "
            "for this address)\n", n->rank, addr, why);
    return;
  }
  uint64_t count = atomic_load(&n->refused);
  if (count % 1000 == 0)
    fprintf(stderr, "pslab: node %u refused a connection from %s: %s (%llu refusals so "
            "far)\n", n->rank, addr, why, (unsigned long long)count);
}

/* ---------------------------------------------------------------- ZAP */

static const char ZAP_REASON[] = "its CURVE key is not this cluster's key";

static bool frame_is(zmq_msg_t *m, const char *s) {
  size_t len = strlen(s);
  return zmq_msg_size(m) == len && memcmp(zmq_msg_data(m), s, len) == 0;
}

static void send_frame(void *sock, const void *data, size_t len, bool more) {
  zmq_send(sock, data, len, more ? ZMQ_SNDMORE : 0);
}

/* Answers one ZAP request: admits a CURVE client whose key is the cluster's. */
static void serve_zap(real_node *n, struct real_guard *g) {
  zmq_msg_t f[ZAP_FRAMES];
  int count = 0;
  bool more = true;
  while (more) {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, g->zap, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&m);
      break;
    }
    more = zmq_msg_more(&m);
    if (count < ZAP_FRAMES) f[count++] = m;
    else zmq_msg_close(&m);
  }
  if (count == 0) return;
  bool ok = count >= 7 && frame_is(&f[0], "1.0") && frame_is(&f[5], "CURVE") &&
            zmq_msg_size(&f[6]) == CURVE_KEY_BYTES &&
            memcmp(zmq_msg_data(&f[6]), g->cluster_key, CURVE_KEY_BYTES) == 0;
  send_frame(g->zap, "1.0", 3, true);
  if (count >= 2) send_frame(g->zap, zmq_msg_data(&f[1]), zmq_msg_size(&f[1]), true);
  else send_frame(g->zap, "", 0, true);
  send_frame(g->zap, ok ? "200" : "400", 3, true);
  send_frame(g->zap, ok ? "OK" : "not this cluster's key", ok ? 2 : 22, true);
  send_frame(g->zap, "", 0, true);
  send_frame(g->zap, "", 0, false);
  if (!ok) {
    char addr[GUARD_ADDR_MAX] = "an unknown address";
    if (count >= 4 && zmq_msg_size(&f[3]) > 0 && zmq_msg_size(&f[3]) < sizeof addr)
      snprintf(addr, sizeof addr, "%.*s", (int)zmq_msg_size(&f[3]),
               (const char *)zmq_msg_data(&f[3]));
    log_refusal(n, g, addr, ZAP_REASON);
  }
  for (int i = 0; i < count; i++) zmq_msg_close(&f[i]);
}

/* ------------------------------------------------------------- events */

/* One monitor event: its number and value; false when none is waiting. */
static bool read_event(void *monitor, int *event, uint32_t *value) {
  zmq_msg_t m;
  zmq_msg_init(&m);
  if (zmq_msg_recv(&m, monitor, ZMQ_DONTWAIT) < 0) {
    zmq_msg_close(&m);
    return false;
  }
  *event = -1;
  *value = 0;
  if (zmq_msg_size(&m) >= 6) {
    const uint8_t *d = zmq_msg_data(&m);
    *event = d[0] | d[1] << 8;
    *value = (uint32_t)d[2] | (uint32_t)d[3] << 8 | (uint32_t)d[4] << 16 |
             (uint32_t)d[5] << 24;
  }
  bool more = zmq_msg_more(&m);
  zmq_msg_close(&m);
  while (more) { /* the endpoint frame */
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, monitor, 0) < 0) break;
    more = zmq_msg_more(&m);
    zmq_msg_close(&m);
  }
  return true;
}

static void peer_address(int fd, char *out, size_t n) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;
  snprintf(out, n, "an address already gone");
  if (getpeername(fd, (struct sockaddr *)&ss, &len) != 0) return;
  if (ss.ss_family == AF_INET)
    inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)n);
  else if (ss.ss_family == AF_INET6)
    inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, (socklen_t)n);
}

static accepted_conn *find_conn(struct real_guard *g, int fd) {
  for (unsigned i = 0; i < GUARD_FDS; i++)
    if (g->conns[i].fd == fd) return &g->conns[i];
  return NULL;
}

/* Why a handshake failed before ZAP: value is a ZMTP protocol error, or 0
 * for a connection that closed during the handshake (a plain client that
 * saw the mismatch first, a port scanner, a peer that died). */
static const char *protocol_reason(int value) {
  static const char gone[] = "it closed the connection before authenticating",
                    plain[] = "it does not use CURVE (a peer without this cluster's key)",
                    crypto[] = "its CURVE handshake failed (it does not know this cluster's "
                               "key)",
                    other[] = "its handshake broke the protocol";
  if (value == 0) return gone;
  if (value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH) return plain;
  if (value == ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC) return crypto;
  return other;
}

static void handle_event(real_node *n, struct real_guard *g, int event, uint32_t value) {
  int fd = (int)value;
  accepted_conn *c;
  switch (event) {
  case ZMQ_EVENT_ACCEPTED:
    c = &g->conns[g->next_conn++ % GUARD_FDS];
    c->fd = fd;
    peer_address(fd, c->addr, sizeof c->addr);
    break;
  /* A handshake that fails before ZAP names no connection: it is logged and
   * counted when its connection closes (the count comes after the line, so
   * whoever waits for the count finds the line written). */
  case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL: /* value: an errno */
    g->failed = true;
    g->failed_reason = 0;
    break;
  case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    g->failed = true;
    g->failed_reason = (int)value;
    break;
  case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH: /* the ZAP handler said why */
    count_refusal(n);
    break;
  case ZMQ_EVENT_DISCONNECTED:
    c = find_conn(g, fd);
    if (g->failed) {
      log_refusal(n, g, c ? c->addr : "an unknown address", protocol_reason(g->failed_reason));
      count_refusal(n);
    }
    g->failed = false;
    if (c) c->fd = -1;
    break;
  default:
    break;
  }
}

/* --------------------------------------------------------------- thread */

static void *guard_main(void *arg) {
  real_node *n = arg;
  struct real_guard *g = n->guard;
  zmq_pollitem_t items[2] = {{.socket = g->zap, .events = ZMQ_POLLIN},
                             {.socket = g->monitor, .events = ZMQ_POLLIN}};
  for (;;) {
    if (zmq_poll(items, 2, -1) < 0) {
      if (zmq_errno() == EINTR) continue;
      break; /* ETERM: real_auth_close shut the context down */
    }
    if (items[0].revents & ZMQ_POLLIN) serve_zap(n, g);
    int event;
    uint32_t value;
    if (items[1].revents & ZMQ_POLLIN)
      while (read_event(g->monitor, &event, &value)) handle_event(n, g, event, value);
  }
  zmq_close(g->zap);
  zmq_close(g->monitor);
  g->zap = g->monitor = NULL;
  return NULL;
}

/* ----------------------------------------------------------------- door */

static int zfail(char *err, size_t errlen, uint32_t rank, const char *what) {
  snprintf(err, errlen, "node %u: %s: %s", rank, what, zmq_strerror(zmq_errno()));
  return -1;
}

static int load_key(real_node *n, char *err, size_t errlen) {
  real_cluster *c = &n->cluster;
  if (c->key.set) return 0;
  if (!c->key_file[0]) {
    if (c->auth == REAL_AUTH_CURVE)
      snprintf(err, errlen, "node %u: cluster.auth is \"curve\" but there is no key: make "
               "one with `pslab keygen --out FILE` and give cluster.key_file", n->rank);
    else
      snprintf(err, errlen, "node %u binds %s, reachable beyond this machine, so it "
               "authenticates its peers with CURVE and needs the cluster's key: make one "
               "with `pslab keygen --out FILE` and give it to every node as "
               "cluster.key_file (or `pslab node --key-file FILE`)", n->rank, c->bind);
    return -1;
  }
  char why[REAL_ERROR_MAX];
  if (real_key_file_read(c->key_file, &c->key, why, sizeof why) == 0) return 0;
  snprintf(err, errlen, "node %u: %s", n->rank, why);
  return -1;
}

static int start_guard(real_node *n, char *err, size_t errlen) {
  struct real_guard *g = calloc(1, sizeof *g);
  if (!g) {
    snprintf(err, errlen, "node %u: out of memory", n->rank);
    return -1;
  }
  n->guard = g;
  for (unsigned i = 0; i < GUARD_FDS; i++) g->conns[i].fd = -1;
  zmq_z85_decode(g->cluster_key, n->cluster.key.public_key);
  int zero = 0;
  g->zap = zmq_socket(n->zctx, ZMQ_REP);
  g->monitor = zmq_socket(n->zctx, ZMQ_PAIR);
  if (!g->zap || !g->monitor) return zfail(err, errlen, n->rank, "creating sockets");
  zmq_setsockopt(g->zap, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(g->monitor, ZMQ_LINGER, &zero, sizeof zero);
  /* Bound before the ROUTER is: without a handler ZeroMQ admits anyone. */
  if (zmq_bind(g->zap, ZAP_ENDPOINT) != 0)
    return zfail(err, errlen, n->rank, "binding the authentication handler");
  if (zmq_socket_monitor(n->router, ROUTER_MONITOR, GUARD_EVENTS) != 0 ||
      zmq_connect(g->monitor, ROUTER_MONITOR) != 0)
    return zfail(err, errlen, n->rank, "monitoring the server socket");
  if (pthread_create(&g->thread, NULL, guard_main, n) != 0) {
    snprintf(err, errlen, "node %u: cannot start the authentication thread", n->rank);
    return -1;
  }
  g->running = true;
  return 0;
}

int real_auth_open(real_node *n, char *err, size_t errlen) {
  char why[REAL_ERROR_MAX];
  int use = real_auth_uses_curve(&n->cluster, why, sizeof why);
  if (use < 0) {
    snprintf(err, errlen, "node %u: %s", n->rank, why);
    return -1;
  }
  struct stat st;
  if (use == 0 && n->cluster.key_file[0] && !n->cluster.key.set &&
      stat(n->cluster.key_file, &st) != 0) {
    /* Not needed here, but named, so meant: a missing one is a mistake. */
    snprintf(err, errlen, "node %u: key file %s: cannot open it: %s", n->rank,
             n->cluster.key_file, strerror(errno));
    return -1;
  }
  if (use == 0) return 0;
  if (!zmq_has("curve")) return no_curve(err, errlen);
  if (load_key(n, err, errlen) != 0) return -1;
  n->secure = true;
  int one = 1;
  if (zmq_setsockopt(n->router, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
      zmq_setsockopt(n->router, ZMQ_CURVE_SECRETKEY, n->cluster.key.secret_key,
                     REAL_Z85_KEY_LEN) != 0 ||
      zmq_setsockopt(n->router, ZMQ_ZAP_DOMAIN, "pslab", 5) != 0)
    return zfail(err, errlen, n->rank, "making the server socket a CURVE server");
  return start_guard(n, err, errlen);
}

void real_auth_client(real_node *n, void *sock) {
  if (!n->secure) return;
  const real_curve_key *k = &n->cluster.key;
  zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->public_key, REAL_Z85_KEY_LEN);
  zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->public_key, REAL_Z85_KEY_LEN);
  zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->secret_key, REAL_Z85_KEY_LEN);
}

void real_auth_close(real_node *n) {
  struct real_guard *g = n->guard;
  if (g && g->running) {
    zmq_ctx_shutdown(n->zctx); /* the guard's poll returns ETERM */
    pthread_join(g->thread, NULL);
  } else if (g) {
    if (g->zap) zmq_close(g->zap);
    if (g->monitor) zmq_close(g->monitor);
  }
  free(g);
  n->guard = NULL;
  real_curve_key_wipe(&n->cluster.key);
}

bool real_node_secure(const real_node *n) { return n->secure; }
