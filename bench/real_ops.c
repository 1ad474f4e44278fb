/*
 * real_ops: what one operation costs on the real backend, beside what the
 * same bytes cost without pslab, measured in the same run.
 *
 * Two node processes on loopback (this one is node 0, a forked child node
 * 1), three tables of 10, 100 and 1000 floats per value, static hash
 * partitioning with fast local access. Figures:
 *
 *   local   per worker thread, pulls and pushes of one key homed at node 0
 *           (fast local access: the core reads the value from memory), each
 *           inside the node's core lock as the driver makes them, against a
 *           plain memcpy of the same bytes (ratio = op time / memcpy time);
 *           also 64 keys per call (time per key), and 2 threads at once
 *           (each thread's rate, contending for the core lock);
 *   remote  a pull of one key homed at node 1: round-trip time with one
 *           pull outstanding, and throughput with 16 outstanding, against a
 *           bare ZeroMQ DEALER/ROUTER request/reply between the same two
 *           processes with the same request and reply sizes (ratio = pslab
 *           time / bare time);
 *   localize  moving a key from node 1 (its home and owner) to node 0 and
 *           waiting for it: LOCALIZE there, TRANSFER back.
 *
 * Targets: local pull of 100 floats within 3x of memcpy; remote round trip
 * within 1.5x of bare ZeroMQ. Usage: real_ops [scale] [curve] (scale
 * multiplies the time spent on each figure; default 1, about 10 s in all;
 * "curve": the two nodes authenticate and encrypt with CURVE, as nodes that
 * bind beyond loopback do, while the bare ZeroMQ yardstick stays plain).
 */
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
  c.timeout_s = 30;
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
  int rc = real_node_barrier(node, "the end of the bench", INFINITY);
  if (rc == PS_OK) rc = real_node_quiesce(node); /* as node 0 does: every node must */
  if (rc == PS_OK) rc = real_node_finish(node);
  real_node_free(node);
  echo_join(&e);
  _exit(rc == PS_OK ? 0 : 1);
}

/* ------------------------------------------------------------- local */

typedef struct {
  real_node *node;
  uint32_t worker, table, batch;
  bool push;
  double seconds;
  double per_key_s; /* result */
} local_job;

static void *local_main(void *arg) {
  local_job *j = arg;
  ps_worker *w = ps_node_worker(real_node_core(j->node), j->worker);
  uint32_t len = lengths[j->table];
  ps_key keys[64];
  for (uint32_t i = 0; i < j->batch; i++) keys[i] = key_at(j->table, 0, i + 64 * j->worker);
  float *buf = calloc((size_t)len * j->batch, sizeof *buf);
  ps_ticket t;
  uint64_t ops = 0;
  double start = real_clock(), end = start + j->seconds;
  while (real_clock() < end) {
    for (int rep = 0; rep < 64; rep++, ops++) {
      int rc = j->push ? ps_push(w, keys, j->batch, buf, (size_t)len * j->batch, &t, 0)
                       : ps_pull(w, keys, j->batch, buf, (size_t)len * j->batch, &t, 0);
      if (rc != PS_OK) abort(); /* every key is local: never pending */
    }
  }
  j->per_key_s = (real_clock() - start) / (double)(ops * j->batch);
  free(buf);
  return NULL;
}

static double memcpy_time(uint32_t len, double seconds) {
  float *src = calloc(len, sizeof *src), *dst = calloc(len, sizeof *dst);
  uint64_t ops = 0;
  double start = real_clock(), end = start + seconds;
  while (real_clock() < end) {
    for (int rep = 0; rep < 256; rep++, ops++) {
      memcpy(dst, src, len * sizeof *src);
      __asm__ volatile("" : : "r"(dst), "r"(src) : "memory"); /* keep the copy */
      src[ops % len] = (float)ops;
    }
  }
  double per = (real_clock() - start) / (double)ops;
  free(src);
  free(dst);
  return per;
}

static double run_local(real_node *n, uint32_t table, uint32_t batch, bool push,
                        uint32_t threads) {
  local_job jobs[2];
  pthread_t th[2];
  for (uint32_t i = 0; i < threads; i++) {
    jobs[i] = (local_job){n, i, table, batch, push, 0.25 * scale, 0};
    pthread_create(&th[i], NULL, local_main, &jobs[i]);
  }
  double worst = 0;
  for (uint32_t i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    worst = fmax(worst, jobs[i].per_key_s);
  }
  return worst;
}

static void bench_local(real_node *n) {
  printf("local access, per worker thread (fast local access, core lock included)\n");
  printf("  floats  op           1 key/call        64 keys/call      2 threads, 1 key  "
         "memcpy     ratio(1 key)\n");
  for (uint32_t t = 0; t < 3; t++) {
    /* First touch: values exist before timing. */
    run_local(n, t, 64, true, 2);
    double copy = memcpy_time(lengths[t], 0.2 * scale);
    for (int push = 0; push < 2; push++) {
      double one = run_local(n, t, 1, push, 1), batch = run_local(n, t, 64, push, 1);
      double two = run_local(n, t, 1, push, 2);
      printf("  %6u  %-5s  %8.0f ns %5.2f M/s  %8.0f ns/key  %8.2f M/s/thread  %6.0f ns  "
             "%5.2fx\n", lengths[t], push ? "push" : "pull", one * 1e9, 1e-6 / one,
             batch * 1e9, 1e-6 / two, copy * 1e9, one / copy);
      if (t == 1 && !push)
        printf("  target: local pull of 100 floats within 3x of memcpy: %s (%.2fx; %.2fx "
               "per key at 64 keys/call)\n", one / copy <= 3 ? "met" : "MISSED", one / copy,
               batch / copy);
    }
  }
}

/* ------------------------------------------------------------- remote */

typedef struct {
  double rtt_s, per_op_s; /* one outstanding; WINDOW outstanding */
} remote_figures;

static remote_figures pslab_pulls(real_node *n, uint32_t table) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  uint32_t len = lengths[table];
  float *buf = calloc((size_t)len * WINDOW, sizeof *buf);
  remote_figures f = {0};
  ps_key keys[WINDOW];
  for (uint32_t i = 0; i < WINDOW; i++) keys[i] = key_at(table, 1, i);
  for (int mode = 0; mode < 2; mode++) {
    uint32_t window = mode == 0 ? 1 : WINDOW;
    ps_ticket t[WINDOW];
    uint64_t ops = 0;
    double start = real_clock(), end = start + 0.4 * scale;
    while (real_clock() < end) {
      bool pending[WINDOW];
      for (uint32_t i = 0; i < window; i++) {
        /* PS_OK too: the reply may come back before the call returns */
        int rc = ps_pull(w, &keys[i], 1, buf + (size_t)i * len, len, &t[i], 0);
        if (rc != PS_PENDING && rc != PS_OK) abort();
        pending[i] = rc == PS_PENDING;
      }
      for (uint32_t i = 0; i < window; i++)
        if (pending[i] && real_node_wait(n, w, t[i]) != PS_OK) abort();
      ops += window;
    }
    double per = (real_clock() - start) / (double)ops;
    if (mode == 0) f.rtt_s = per;
    else f.per_op_s = per;
  }
  free(buf);
  return f;
}

static remote_figures bare_pulls(const char *endpoint, uint32_t table) {
  void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
  zmq_connect(s, endpoint);
  size_t req_len = ps_msg_encoded_len(1, 0), reply_len = ps_msg_encoded_len(1, lengths[table]);
  uint8_t *req = calloc(1, req_len), *reply = malloc(reply_len + 16);
  uint32_t want = (uint32_t)reply_len;
  memcpy(req, &want, 4);
  remote_figures f = {0};
  zmq_send(s, req, req_len, 0); /* connect and warm up */
  zmq_recv(s, reply, reply_len + 16, 0);
  for (int mode = 0; mode < 2; mode++) {
    uint32_t window = mode == 0 ? 1 : WINDOW;
    uint64_t ops = 0;
    double start = real_clock(), end = start + 0.4 * scale;
    while (real_clock() < end) {
      for (uint32_t i = 0; i < window; i++) zmq_send(s, req, req_len, 0);
      for (uint32_t i = 0; i < window; i++) zmq_recv(s, reply, reply_len + 16, 0);
      ops += window;
    }
    double per = (real_clock() - start) / (double)ops;
    if (mode == 0) f.rtt_s = per;
    else f.per_op_s = per;
  }
  if (table == 2) { /* the last figure: stop the echo server */
    want = 0;
    memcpy(req, &want, 4);
    zmq_send(s, req, req_len, 0);
    zmq_recv(s, reply, reply_len + 16, 0);
  }
  free(req);
  free(reply);
  zmq_close(s);
  zmq_ctx_term(ctx);
  return f;
}

static void bench_remote(real_node *n, const char *echo) {
  printf("\nremote pull of one key, node 0 -> node 1 over loopback TCP\n");
  printf("  floats  pslab rtt   bare rtt   ratio   pslab %2d out   bare %2d out   ratio\n",
         WINDOW, WINDOW);
  double rtt_ratio_100 = 0;
  for (uint32_t t = 0; t < 3; t++) {
    remote_figures p = pslab_pulls(n, t), b = bare_pulls(echo, t);
    printf("  %6u  %7.1f us  %7.1f us  %5.2fx  %7.0f /s  %9.0f /s   %5.2fx\n", lengths[t],
           p.rtt_s * 1e6, b.rtt_s * 1e6, p.rtt_s / b.rtt_s, 1 / p.per_op_s, 1 / b.per_op_s,
           p.per_op_s / b.per_op_s);
    if (t == 1) rtt_ratio_100 = p.rtt_s / b.rtt_s;
  }
  printf("  target: remote round trip within 1.5x of bare ZeroMQ: %s (%.2fx at 100 floats)\n",
         rtt_ratio_100 <= 1.5 ? "met" : "MISSED", rtt_ratio_100);
}

static void bench_localize(real_node *n) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  uint32_t moved = 0;
  double total = 0;
  for (uint32_t i = WINDOW; i < WINDOW + 400; i++) {
    ps_key k = key_at(1, 1, i);
    ps_ticket t;
    double start = real_clock();
    int rc = ps_localize(w, &k, 1, &t, 0);
    if (rc == PS_PENDING) rc = real_node_wait(n, w, t);
    if (rc != PS_OK) abort();
    total += real_clock() - start;
    moved++;
  }
  printf("\nlocalize of one key of 100 floats (home and owner node 1 -> node 0): %.1f us "
         "(mean of %u)\n", total / moved * 1e6, moved);
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
  printf("nodes' connections: %s\n", use_curve ? "CURVE (authenticated, encrypted)"
                                                : "plain ZeroMQ");
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return 1;
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    run_die_with_parent(parent); /* never outlive the bench */
    close(sv[0]);
    child_main(sv[1]);
  }
  close(sv[1]);
  char err[REAL_ERROR_MAX], echo[REAL_ENDPOINT_MAX];
  real_node *n = start(0, NULL, sv[0], err, sizeof err);
  if (!n || !read_line(sv[0], echo, sizeof echo)) {
    fprintf(stderr, "real_ops: %s\n", n ? "no echo server" : err);
    kill(pid, SIGKILL);
    return 1;
  }
  bench_local(n);
  bench_remote(n, echo);
  bench_localize(n);
  int rc = real_node_barrier(n, "the end of the bench", INFINITY);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK) rc = real_node_finish(n);
  real_node_free(n);
  int status = 0;
  waitpid(pid, &status, 0);
  return rc == PS_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
