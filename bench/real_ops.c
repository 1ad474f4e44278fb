/*
 * real_ops: what a remote operation costs on the real backend, beside what
 * the same bytes cost through bare ZeroMQ, measured in the same run.
 *
 * Two node processes on loopback (this one is node 0, a forked child node
 * 1, which dies with the bench), three tables of 10, 100 and 1000 floats per
 * value, static hash partitioning. Figures, in interleaved rounds (each
 * round: pslab, then its yardstick; bench/bench.h prints medians over the
 * rounds, their spread, and the median of the rounds' ratios):
 *
 *   remote pull p50   a pull of one key homed at node 1, one at a time: the
 *                     median round trip of the round's pulls, against a
 *                     bare ZeroMQ DEALER/ROUTER request/reply between the
 *                     same two processes with the same request and reply
 *                     sizes (goal at 100 floats: at most 1.3x);
 *   remote push p50   likewise, the values going out and the ack back;
 *   remote pull, 16 outstanding   time per pull, against bare ZeroMQ with
 *                     16 requests outstanding;
 *   localize p50      moving a key of 100 floats from node 1 (its home and
 *                     owner) to node 0 and waiting for it (LOCALIZE there,
 *                     TRANSFER back), against a remote pull of the same
 *                     key size (one round trip as well).
 *
 * Local access (no message) is bench/local_ops. Exit status 0 when every
 * figure was measured and both nodes ended cleanly; no wait is unbounded
 * (the nodes' barriers, quiescence and every bare ZeroMQ receive time out).
 * Usage: real_ops [scale] [curve] (scale multiplies the operations measured;
 * default 1, about 10 s in all; "curve": the two nodes authenticate and
 * encrypt with CURVE, as nodes that bind beyond loopback do, while the bare
 * ZeroMQ yardstick stays plain).
 */
#include "bench/bench.h"
#include "real/internal.h"
#include "run/run.h"

#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define KEYS_PER_TABLE 4096u
#define WINDOW 16 /* remote pulls outstanding, for throughput */
#define TIMEOUT_S 30 /* the nodes' and the bare sockets' bound on any wait */
#define ROUNDS 7

static const uint32_t lengths[3] = {10, 100, 1000};
static double scale = 1;
static bool use_curve;          /* both nodes with CURVE, one key */
static real_curve_key bench_key; /* made before the fork */

static ps_layout bench_layout(void) {
  ps_layout l = {.num_tables = 3, .num_nodes = 2, .partition = PS_PARTITION_HASH};
  for (uint32_t t = 0; t < 3; t++) l.tables[t] = (ps_table){t * KEYS_PER_TABLE, KEYS_PER_TABLE,
                                                            lengths[t]};
  return l;
}

/* The i-th key of table t homed at `home`. */
static ps_key key_at(uint32_t t, uint32_t home, uint32_t i) {
  ps_layout l = bench_layout();
  for (ps_key k = t * KEYS_PER_TABLE;; k++)
    if (ps_layout_home(&l, k) == home && i-- == 0) return k;
}

static real_node *start(uint32_t rank, const char *coordinator, int tell_fd, char *err,
                        size_t errlen);

/* ------------------------------------------------------------ launching */

static void tell(void *ctx, const char *host_port) {
  int fd = *(int *)ctx;
  char line[REAL_HOST_MAX + 2];
  int n = snprintf(line, sizeof line, "%s\n", host_port);
  ssize_t w = send(fd, line, (size_t)n, MSG_NOSIGNAL);
  (void)w;
}

static bool read_line(int fd, char *out, size_t n) {
  size_t used = 0;
  while (used + 1 < n) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 30000) <= 0) return false;
    ssize_t r = read(fd, out + used, 1);
    if (r <= 0) return false;
    if (out[used] == '\n') {
      out[used] = '\0';
      return true;
    }
    used++;
  }
  return false;
}

static real_node *start(uint32_t rank, const char *coordinator, int tell_fd, char *err,
                        size_t errlen) {
  static real_cluster c;
  real_cluster_default(&c);
  c.timeout_s = TIMEOUT_S;
  if (use_curve) {
    c.auth = REAL_AUTH_CURVE;
    c.key = bench_key;
  }
  static int fd;
  fd = tell_fd;
  real_node_config cfg = {.cluster = &c, .coordinator = coordinator, .run = 1,
                          .listening = rank == 0 ? tell : NULL, .listening_ctx = &fd};
  ps_node_config_default(&cfg.core);
  cfg.core.id = rank;
  cfg.core.workers = 2;
  cfg.core.layout = bench_layout();
  if (rank == 0) run_secret_new(cfg.core.secret); /* node 1 gets it at rendezvous */
  return real_node_start(&cfg, err, errlen);
}

/* ------------------------------------------------------- bare ZeroMQ */

typedef struct {
  void *ctx, *sock;
  char endpoint[REAL_ENDPOINT_MAX];
  pthread_t thread;
} echo_server;

/* Answers each request with a reply of the size its first 4 bytes ask for. */
static void *echo_main(void *arg) {
  echo_server *e = arg;
  char *reply = calloc(1, 1 << 20);
  for (;;) {
    zmq_msg_t id, body;
    zmq_msg_init(&id);
    zmq_msg_init(&body);
    if (zmq_msg_recv(&id, e->sock, 0) < 0 || zmq_msg_recv(&body, e->sock, 0) < 0) break;
    uint32_t want = 0;
    if (zmq_msg_size(&body) >= 4) memcpy(&want, zmq_msg_data(&body), 4);
    bool stop = want == 0;
    zmq_msg_send(&id, e->sock, ZMQ_SNDMORE);
    zmq_send(e->sock, reply, want < (1u << 20) ? want : 1, 0);
    zmq_msg_close(&body);
    if (stop) break;
  }
  free(reply);
  return NULL;
}

static void echo_start(echo_server *e) {
  e->ctx = zmq_ctx_new();
  e->sock = zmq_socket(e->ctx, ZMQ_ROUTER);
  zmq_bind(e->sock, "tcp://127.0.0.1:*");
  size_t len = sizeof e->endpoint;
  zmq_getsockopt(e->sock, ZMQ_LAST_ENDPOINT, e->endpoint, &len);
  pthread_create(&e->thread, NULL, echo_main, e);
}

static void echo_join(echo_server *e) {
  pthread_join(e->thread, NULL);
  zmq_close(e->sock);
  zmq_ctx_term(e->ctx);
}

/* ------------------------------------------------------------- node 1 */

static _Noreturn void child_main(int fd) {
  char coordinator[REAL_HOST_MAX], err[REAL_ERROR_MAX];
  if (!read_line(fd, coordinator, sizeof coordinator)) _exit(2);
  echo_server e;
  echo_start(&e);
  char line[REAL_ENDPOINT_MAX + 2];
  int n = snprintf(line, sizeof line, "%s\n", e.endpoint);
  ssize_t w = write(fd, line, (size_t)n);
  (void)w;
  real_node *node = start(1, coordinator, -1, err, sizeof err);
  if (!node) {
    fprintf(stderr, "node 1: %s\n", err);
    _exit(1);
  }
  /* Node 0 measures first: its figures take about 10 s per unit of scale. */
  int rc = real_node_barrier(node, "the end of the bench", TIMEOUT_S * (4 + 4 * scale));
  if (rc == PS_OK) rc = real_node_quiesce(node); /* as node 0 does: every node must */
  if (rc == PS_OK) rc = real_node_finish(node);
  real_node_free(node);
  echo_join(&e);
  _exit(rc == PS_OK ? 0 : 1);
}

/* ---------------------------------------------------------- bare side */

/* A DEALER to the echo server whose receives give up after TIMEOUT_S. */
typedef struct {
  void *ctx, *sock;
} bare_client;

static bool bare_open(bare_client *b, const char *endpoint) {
  int timeout_ms = TIMEOUT_S * 1000, linger = 0;
  b->ctx = zmq_ctx_new();
  b->sock = b->ctx ? zmq_socket(b->ctx, ZMQ_DEALER) : NULL;
  return b->sock && zmq_setsockopt(b->sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms) == 0 &&
         zmq_setsockopt(b->sock, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms) == 0 &&
         zmq_setsockopt(b->sock, ZMQ_LINGER, &linger, sizeof linger) == 0 &&
         zmq_connect(b->sock, endpoint) == 0;
}

static void bare_close(bare_client *b) {
  if (b->sock) zmq_close(b->sock);
  if (b->ctx) zmq_ctx_term(b->ctx);
}

/* Sends `window` requests of req_len bytes asking for reply_len bytes back,
 * then takes the replies; false on a timeout or an error. */
static bool bare_exchange(bare_client *b, size_t req_len, size_t reply_len, uint32_t window) {
  static uint8_t req[1 << 16], reply[1 << 16];
  uint32_t want = (uint32_t)reply_len;
  memcpy(req, &want, 4);
  for (uint32_t i = 0; i < window; i++)
    if (zmq_send(b->sock, req, req_len, 0) != (int)req_len) return false;
  for (uint32_t i = 0; i < window; i++)
    if (zmq_recv(b->sock, reply, sizeof reply, 0) != (int)reply_len) return false;
  return true;
}

/* Median round trip of `count` exchanges, one at a time; 0 on failure. */
static double bare_p50(bare_client *b, size_t req_len, size_t reply_len, uint32_t count) {
  double t[512];
  for (uint32_t i = 0; i < count; i++) {
    double t0 = bench_now();
    if (!bare_exchange(b, req_len, reply_len, 1)) return 0;
    t[i] = bench_now() - t0;
  }
  return bench_median(t, (int)count, NULL, NULL);
}

/* Time per exchange with WINDOW outstanding; 0 on failure. */
static double bare_windowed(bare_client *b, size_t req_len, size_t reply_len, uint32_t ops) {
  double t0 = bench_now();
  for (uint32_t done = 0; done < ops; done += WINDOW)
    if (!bare_exchange(b, req_len, reply_len, WINDOW)) return 0;
  return (bench_now() - t0) / (double)ops;
}

/* ---------------------------------------------------------- pslab side */

/* Median round trip of `count` pulls (push: pushes) of one key of table t
 * homed at node 1, one at a time; 0 on failure. A pull may complete before
 * ps_pull returns (PS_OK): its reply came back first. */
static double pslab_p50(real_node *n, uint32_t table, bool push, uint32_t count) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  uint32_t len = lengths[table];
  float buf[1000] = {0};
  ps_key k = key_at(table, 1, 0);
  double t[512];
  for (uint32_t i = 0; i < count; i++) {
    ps_ticket tk;
    double t0 = bench_now();
    int rc = push ? ps_push(w, &k, 1, buf, len, &tk, 0) : ps_pull(w, &k, 1, buf, len, &tk, 0);
    if (rc == PS_PENDING) rc = real_node_wait(n, w, tk);
    if (rc != PS_OK) return 0;
    t[i] = bench_now() - t0;
  }
  return bench_median(t, (int)count, NULL, NULL);
}

/* Time per pull of one key of table t with WINDOW pulls outstanding (each
 * of its own key homed at node 1); 0 on failure. */
static double pslab_windowed(real_node *n, uint32_t table, uint32_t ops) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  uint32_t len = lengths[table];
  static float buf[1000 * WINDOW];
  ps_key keys[WINDOW];
  for (uint32_t i = 0; i < WINDOW; i++) keys[i] = key_at(table, 1, i);
  double t0 = bench_now();
  for (uint32_t done = 0; done < ops; done += WINDOW) {
    ps_ticket t[WINDOW];
    int rc[WINDOW];
    for (uint32_t i = 0; i < WINDOW; i++)
      rc[i] = ps_pull(w, &keys[i], 1, buf + (size_t)i * len, len, &t[i], 0);
    for (uint32_t i = 0; i < WINDOW; i++) {
      if (rc[i] == PS_PENDING) rc[i] = real_node_wait(n, w, t[i]);
      if (rc[i] != PS_OK) return 0;
    }
  }
  return (bench_now() - t0) / (double)ops;
}

/* Median time of `count` localizes of keys of 100 floats owned by node 1,
 * the next ones from *next on; 0 on failure or when keys run out. */
static double pslab_localize_p50(real_node *n, uint32_t count, uint32_t *next) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  double t[512];
  if (*next + count > KEYS_PER_TABLE / 4) return 0; /* keys homed at 1 that never moved */
  for (uint32_t i = 0; i < count; i++) {
    ps_key k = key_at(1, 1, WINDOW + (*next)++);
    ps_ticket tk;
    double t0 = bench_now();
    int rc = ps_localize(w, &k, 1, &tk, 0);
    if (rc == PS_PENDING) rc = real_node_wait(n, w, tk);
    if (rc != PS_OK) return 0;
    t[i] = bench_now() - t0;
  }
  return bench_median(t, (int)count, NULL, NULL);
}

/* ------------------------------------------------------------- rounds */

typedef struct {
  bench_fig pull[3], bare_pull[3], push, bare_push, win, bare_win, loc, loc_pull;
} figures;

static void name_figures(figures *f) {
  static char names[6][96];
  for (uint32_t t = 0; t < 3; t++) {
    snprintf(names[t], sizeof names[t], "remote pull p50, 1 key of %u floats", lengths[t]);
    snprintf(names[3 + t], sizeof names[3 + t], "bare ZeroMQ request/reply p50, %zu + %zu B",
             ps_msg_encoded_len(1, 0), ps_msg_encoded_len(1, lengths[t]));
    f->pull[t] = (bench_fig){.name = names[t], .unit = "us"};
    f->bare_pull[t] = (bench_fig){.name = names[3 + t], .unit = "us"};
  }
  static char push_bare[96], win_bare[96];
  snprintf(push_bare, sizeof push_bare, "bare ZeroMQ request/reply p50, %zu + %zu B",
           ps_msg_encoded_len(1, 100), ps_msg_encoded_len(1, 0));
  snprintf(win_bare, sizeof win_bare, "bare ZeroMQ, %d outstanding, %zu + %zu B", WINDOW,
           ps_msg_encoded_len(1, 0), ps_msg_encoded_len(1, 100));
  f->push = (bench_fig){.name = "remote push p50, 1 key of 100 floats", .unit = "us"};
  f->bare_push = (bench_fig){.name = push_bare, .unit = "us"};
  f->win = (bench_fig){.name = "remote pull, 16 outstanding, 100 floats", .unit = "us/op"};
  f->bare_win = (bench_fig){.name = win_bare, .unit = "us/op"};
  f->loc = (bench_fig){.name = "localize p50, 1 key of 100 floats", .unit = "us"};
  f->loc_pull = (bench_fig){.name = "remote pull p50, 1 key of 100 floats, same rounds",
                            .unit = "us"};
}

/* One round of every figure, pslab then its yardstick; false on failure. */
static bool one_round(real_node *n, bare_client *b, figures *f, uint32_t *next_loc) {
  uint32_t count = (uint32_t)(100 * scale), ops = (uint32_t)(800 * scale);
  if (count < 5) count = 5;
  if (count > 512) count = 512;
  if (ops < WINDOW) ops = WINDOW;
  double p, q;
  for (uint32_t t = 0; t < 3; t++) {
    if (!(p = pslab_p50(n, t, false, count))) return false;
    if (!(q = bare_p50(b, ps_msg_encoded_len(1, 0), ps_msg_encoded_len(1, lengths[t]), count)))
      return false;
    bench_add(&f->pull[t], p * 1e6);
    bench_add(&f->bare_pull[t], q * 1e6);
  }
  if (!(p = pslab_p50(n, 1, true, count))) return false;
  if (!(q = bare_p50(b, ps_msg_encoded_len(1, 100), ps_msg_encoded_len(1, 0), count))) return false;
  bench_add(&f->push, p * 1e6);
  bench_add(&f->bare_push, q * 1e6);
  if (!(p = pslab_windowed(n, 1, ops))) return false;
  if (!(q = bare_windowed(b, ps_msg_encoded_len(1, 0), ps_msg_encoded_len(1, 100), ops)))
    return false;
  bench_add(&f->win, p * 1e6);
  bench_add(&f->bare_win, q * 1e6);
  uint32_t moves = count / 4 ? count / 4 : 1;
  if (moves > KEYS_PER_TABLE / 4 / ROUNDS) moves = KEYS_PER_TABLE / 4 / ROUNDS;
  if (!(p = pslab_localize_p50(n, moves, next_loc))) return false;
  if (!(q = pslab_p50(n, 1, false, count))) return false;
  bench_add(&f->loc, p * 1e6);
  bench_add(&f->loc_pull, q * 1e6);
  return true;
}

static void print_figures(const figures *f) {
  double ratio_100 = 0;
  for (uint32_t t = 0; t < 3; t++) {
    bench_print(&f->bare_pull[t]);
    double r = bench_print_ratio(&f->pull[t], &f->bare_pull[t], false);
    if (t == 1) ratio_100 = r;
  }
  bench_print(&f->bare_push);
  bench_print_ratio(&f->push, &f->bare_push, false);
  bench_print(&f->bare_win);
  bench_print_ratio(&f->win, &f->bare_win, false);
  bench_print(&f->loc_pull);
  bench_print_ratio(&f->loc, &f->loc_pull, false);
  bench_goal("remote pull p50 against bare ZeroMQ, 100 floats", ratio_100, "<=", 1.3);
}

/* Waits up to `seconds` for the child to exit (then kills it); whether it
 * exited with status 0. */
static bool reap(pid_t pid, double seconds) {
  int status = 0;
  double deadline = bench_now() + seconds;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (bench_now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return false;
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv) {
  if (argc > 1) scale = atof(argv[1]) > 0 ? atof(argv[1]) : 1;
  use_curve = argc > 2 && strcmp(argv[2], "curve") == 0;
  char kerr[256];
  if (use_curve && real_curve_keygen(&bench_key, kerr, sizeof kerr) != 0) {
    fprintf(stderr, "real_ops: %s\n", kerr);
    return 1;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    run_die_with_parent(parent); /* never outlive the bench */
    close(sv[0]);
    child_main(sv[1]);
  }
  close(sv[1]);
  char err[REAL_ERROR_MAX], echo[REAL_ENDPOINT_MAX];
  real_node *n = start(0, NULL, sv[0], err, sizeof err);
  bare_client b = {0};
  if (!n || !read_line(sv[0], echo, sizeof echo) || !bare_open(&b, echo)) {
    fprintf(stderr, "real_ops: %s\n", n ? "no echo server" : err);
    kill(pid, SIGKILL);
    reap(pid, TIMEOUT_S);
    return 1;
  }
  figures f;
  name_figures(&f);
  uint32_t next_loc = 0;
  bool ok = bare_exchange(&b, 8, 8, 1); /* connected */
  for (int r = 0; ok && r < ROUNDS; r++) ok = one_round(n, &b, &f, &next_loc);
  if (ok) {
    printf("real_ops: 2 nodes on loopback (%s), node 0 -> node 1; medians of %d interleaved "
           "rounds\n", use_curve ? "CURVE" : "plain ZeroMQ", ROUNDS);
    print_figures(&f);
  } else {
    fprintf(stderr, "real_ops: a remote operation or a bare exchange failed%s%s\n",
            real_node_failed(n, err, sizeof err) ? ": " : "",
            real_node_failed(n, NULL, 0) ? err : "");
  }
  uint32_t stop = 0; /* the echo server's last request: it stops */
  if (zmq_send(b.sock, &stop, 4, 0) == 4) {
    uint8_t none[8];
    zmq_recv(b.sock, none, sizeof none, 0);
  }
  bare_close(&b);
  int rc = real_node_barrier(n, "the end of the bench", TIMEOUT_S);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK) rc = real_node_finish(n);
  if (rc != PS_OK && real_node_failed(n, err, sizeof err)) fprintf(stderr, "real_ops: %s\n", err);
  real_node_free(n);
  bool child_ok = reap(pid, 2 * TIMEOUT_S);
  if (!child_ok) fprintf(stderr, "real_ops: node 1 did not end cleanly\n");
  return ok && rc == PS_OK && child_ok ? 0 : 1;
}
