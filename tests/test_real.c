/*
 * The real backend with real processes on loopback: the core's guarantees
 * (read-your-writes, conservation, one owner per key) with 3-4 node
 * processes and several worker threads each, relocations under way, for
 * every policy; replicas converging to the exact sum of pushes, for both
 * sync modes; whole runs through real_run_local; bad frames dropped and
 * counted; CURVE authentication (which clusters use it, key files,
 * intruders refused, a whole run with it); an outsider forging, replaying
 * and racing a node's messages on the wire during a whole run, refused for
 * their seals (plain) or at the handshake (CURVE), every push applied once;
 * a node that never arrives and a node killed mid-run reported by rank,
 * without hanging; a bad frame during start-up named in the error; a
 * worker's wait that nothing completes failing the run after timeout_s; a
 * whole run with a stopped node ending within timeout_s + 1 s, no process
 * left; runs too large for the memory or for a pids cgroup refused before
 * any fork; a straggler's throttle counted inside its phase, on it only;
 * waiting workers reading the node's socket themselves, every message
 * handled once.
 *
 * Rank 0 runs in this process (so its code runs under the sanitizers with
 * leak checks); ranks 1.. are forked first, before any ZeroMQ context
 * exists here, and wait on a socket pair for rank 0's address, as
 * real_run_local does. Every wait is bounded: children by a deadline after
 * which they are killed (and the test fails), this process by alarm().
 */
#include "model/testing.h"
#include "real/internal.h"
#include "policies/policy.h"
#include "tests/harness.h"
#include "tests/saved_params.h"
#include "tests/saved_quality.h"
#include "tests/unit.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <string.h>
#include <dirent.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define BOUND_S 60      /* no test of this file runs longer (times the scale below) */
#define KIDS_MAX 8

/* BOUND_S times PSLAB_TEST_TIME_SCALE (a positive number, default 1): slow
 * builds such as ThreadSanitizer's set it (tests/CMakeLists.txt), since the
 * bound only catches hangs and must not fail a slow but working run. */
static double time_scale(void) {
  const char *s = getenv("PSLAB_TEST_TIME_SCALE");
  double scale = s ? strtod(s, NULL) : 1.0;
  return !(scale >= 1.0) || scale > 100.0 ? 1.0 : scale;
}

static unsigned bound_s(void) { return (unsigned)(BOUND_S * time_scale()); }

/* ------------------------------------------------------------ children */

typedef int (*node_body)(uint32_t rank, const char *coordinator, void *arg);

typedef struct {
  pid_t pid;
  int addr, life, err; /* rank 0's address goes in; EOF at exit; its stderr */
  int status;
  bool exited;
  char text[4096];     /* what it wrote on stderr */
} kid;

typedef struct {
  kid k[KIDS_MAX];     /* by rank; [0] unused */
  uint32_t n;          /* ranks, rank 0 included */
} kids;

static bool read_line(int fd, char *out, size_t n, double timeout_s) {
  size_t used = 0;
  double deadline = real_clock() + timeout_s;
  while (used + 1 < n) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    double left = deadline - real_clock();
    if (left <= 0 || poll(&p, 1, (int)ceil(left * 1000)) <= 0) return false;
    ssize_t r = read(fd, out + used, n - 1 - used);
    if (r <= 0) return false;
    used += (size_t)r;
    out[used] = '\0';
    char *nl = strchr(out, '\n');
    if (nl) {
      *nl = '\0';
      return true;
    }
  }
  return false;
}

static _Noreturn void kid_main(int addr, node_body body, uint32_t rank, void *arg) {
  char coordinator[REAL_HOST_MAX];
  int rc = 2;
  if (read_line(addr, coordinator, sizeof coordinator, 20) && *coordinator)
    rc = body(rank, coordinator, arg);
  else
    fprintf(stderr, "node %u: no address for node 0\n", rank);
  fflush(NULL);
  _exit(rc);
}

/* Forks ranks 1..n-1 running body. */
static void kids_spawn(kids *ks, uint32_t n, node_body body, void *arg) {
  memset(ks, 0, sizeof *ks);
  ks->n = n;
  fflush(NULL);
  for (uint32_t r = 1; r < n; r++) {
    int sv[2], life[2], err[2];
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && pipe(life) == 0 &&
                    pipe(err) == 0);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
      for (uint32_t o = 1; o < r; o++) {
        close(ks->k[o].addr);
        close(ks->k[o].life);
        close(ks->k[o].err);
      }
      close(sv[0]);
      close(life[0]);
      close(err[0]);
      dup2(err[1], STDERR_FILENO);
      close(err[1]);
      kid_main(sv[1], body, r, arg);
    }
    close(sv[1]);
    close(life[1]);
    close(err[1]);
    ks->k[r] = (kid){.pid = pid, .addr = sv[0], .life = life[0], .err = err[0]};
  }
}

/* rank 0's listening callback: every child learns the address. */
static void kids_tell(void *ctx, const char *host_port) {
  kids *ks = ctx;
  char line[REAL_HOST_MAX + 2];
  int len = snprintf(line, sizeof line, "%s\n", host_port);
  for (uint32_t r = 1; r < ks->n; r++) {
    if (ks->k[r].addr < 0) continue;
    ssize_t sent = send(ks->k[r].addr, line, (size_t)len, MSG_NOSIGNAL);
    (void)sent;
    close(ks->k[r].addr);
    ks->k[r].addr = -1;
  }
}

static void kid_collect(kid *k) {
  size_t used = strlen(k->text);
  ssize_t r;
  while (used + 1 < sizeof k->text &&
         (r = read(k->err, k->text + used, sizeof k->text - 1 - used)) > 0)
    used += (size_t)r;
  k->text[used] = '\0';
  close(k->err);
  close(k->life);
  while (waitpid(k->pid, &k->status, 0) < 0 && errno == EINTR) continue;
  k->exited = true;
}

/* Waits for child k (named `who` if it hangs) until deadline (real_clock),
 * killing it, and failing the test, if it is not gone by then. */
static void kid_wait(kid *k, const char *who, double deadline) {
  struct pollfd p = {.fd = k->life, .events = POLLIN};
  double left = deadline - real_clock();
  if (left <= 0 || poll(&p, 1, (int)ceil(left * 1000)) <= 0) {
    fprintf(stderr, "\n  %s did not exit in time: killed\n", who);
    CU_FAIL("a child process hung");
    kill(k->pid, SIGKILL);
  }
  kid_collect(k);
}

/* Waits for every child (killing, and failing the test for, any that is not
 * gone within timeout_s). */
static void kids_wait(kids *ks, double timeout_s) {
  kids_tell(ks, ""); /* in case rank 0 never listened */
  double deadline = real_clock() + timeout_s;
  for (uint32_t r = 1; r < ks->n; r++) {
    char who[32];
    snprintf(who, sizeof who, "node %u", r);
    kid_wait(&ks->k[r], who, deadline);
  }
}

static bool kid_ok(const kid *k) {
  bool ok = WIFEXITED(k->status) && WEXITSTATUS(k->status) == 0;
  if (!ok) fprintf(stderr, "\n  child %d failed (status 0x%x): %s\n", (int)k->pid, k->status,
                   k->text);
  return ok;
}

static real_cluster test_cluster(double timeout_s) {
  real_cluster c;
  real_cluster_default(&c);
  c.timeout_s = timeout_s;
  return c;
}

/* A node's config: rank of size nodes, `workers` workers, one table of 16
 * keys of 2 floats (or `layout`), no policy. */
static real_node_config node_config(uint32_t rank, uint32_t size, uint32_t workers,
                                    const ps_layout *layout, const real_cluster *c) {
  real_node_config cfg = {.cluster = c, .run = 1};
  ps_node_config_default(&cfg.core);
  if (rank == 0) memcpy(cfg.core.secret, harness_secret(), PS_SECRET_LEN);
  cfg.core.id = rank;
  cfg.core.workers = workers;
  if (layout) {
    cfg.core.layout = *layout;
  } else {
    cfg.core.layout = (ps_layout){.num_tables = 1, .num_nodes = size};
    cfg.core.layout.tables[0] = (ps_table){0, 16, 2};
  }
  return cfg;
}

/* --------------------------------------------- guarantees with processes */

typedef struct {
  uint32_t nodes, workers, keys, ops;
  const char *policy;   /* by name, configured with its defaults */
  bool fast;            /* fast_local_access (static only) */
  /* Or the policy object itself (its "type" names the policy). */
  const char *policy_text;
  /* Checks that replicas converge (see converge_end) instead of the
   * guarantees. */
  bool converge;
  uint64_t seed;
  real_cluster cluster;
  /* Filled by run_scenario: */
  const ps_policy_ops *table;
  ps_policy_settings settings;
  cJSON *json;
} scenario;

static bool is_policy(const scenario *sc, const char *name) {
  return strcmp(sc->policy, name) == 0;
}

typedef struct {
  real_node *node;
  const scenario *sc;
  uint32_t index, g;      /* on its node; over the cluster */
  uint64_t *pushed;       /* per key: this worker's pushes */
  uint64_t checks, wrong; /* read-your-writes */
  int status;
} sc_worker;

static uint32_t total_workers(const scenario *sc) { return sc->nodes * sc->workers; }

static ps_layout sc_layout(const scenario *sc) {
  ps_layout l = {.num_tables = 1, .num_nodes = sc->nodes, .partition = PS_PARTITION_HASH};
  l.tables[0] = (ps_table){100, sc->keys, total_workers(sc)};
  return l;
}

/* Up to 4 pushes outstanding; the oldest is waited for when full. */
typedef struct {
  ps_ticket t[4];
  int n;
} push_ring;

static int ring_add(sc_worker *w, ps_worker *h, push_ring *ring, ps_ticket t) {
  int rc = PS_OK;
  if (ring->n == 4) {
    rc = real_node_wait(w->node, h, ring->t[0]);
    memmove(ring->t, ring->t + 1, 3 * sizeof *ring->t);
    ring->n--;
  }
  ring->t[ring->n++] = t;
  return rc;
}


/* One random operation of worker w: push, pull (checked), intent, localize
 * (relocate only: other policies decide placement themselves, and
 * all-reduce replication wants keys that do not move). */
static int sc_step(sc_worker *w, ps_worker *h, uint64_t *rng, float *vals, float *out,
                   push_ring *ring) {
  const scenario *sc = w->sc;
  uint32_t len = total_workers(sc);
  double now = real_node_now(w->node);
  size_t n = 1 + ps_splitmix64(rng) % 4;
  ps_key keys[4];
  for (size_t i = 0; i < n; i++) keys[i] = 100 + ps_splitmix64(rng) % sc->keys;
  uint64_t r = ps_splitmix64(rng) % 10;
  ps_ticket t;
  int rc = PS_OK;
  if (r < 5) {
    memset(vals, 0, 4 * len * sizeof *vals);
    for (size_t i = 0; i < n; i++) {
      vals[i * len + w->g] = 1;
      w->pushed[keys[i] - 100]++;
    }
    rc = ps_push(h, keys, n, vals, n * len, &t, now);
    if (rc == PS_PENDING) rc = ring_add(w, h, ring, t);
  } else if (r < 8) {
    int before = ps_node_key_locality(real_node_core(w->node), keys[0]);
    rc = ps_pull(h, keys, n, out, n * len, &t, now);
    bool pending = rc == PS_PENDING;
    if (rc == PS_PENDING) rc = real_node_wait(w->node, h, t);
    for (size_t i = 0; rc == PS_OK && i < n; i++) {
      w->checks++;
      bool wrong = out[i * len + w->g] != (float)w->pushed[keys[i] - 100];
      if (wrong && !w->wrong) /* the first one, for the report */
        fprintf(stderr, "node %u, worker %u: read %g from key %llu after pushing %llu to it "
                "(the key's locality here now: %d; the first key's before the pull: %d, "
                "%s)\n", real_node_rank(w->node), w->index,
                out[i * len + w->g], (unsigned long long)keys[i],
                (unsigned long long)w->pushed[keys[i] - 100],
                ps_node_key_locality(real_node_core(w->node), keys[i]), before,
                pending ? "pending" : "served at once");
      w->wrong += wrong;
    }
  } else if (r < 9) {
    int64_t c = ps_worker_clock(h);
    rc = ps_intent(h, keys, n, c + 1, c + 2, now);
  } else if (is_policy(sc, "relocate")) { /* explicit moves, besides the intents' */
    bool wait = ps_splitmix64(rng) % 2;
    rc = ps_localize(h, keys, n, wait ? &t : NULL, now);
    if (rc == PS_PENDING) rc = real_node_wait(w->node, h, t);
  }
  ps_advance_clock(h, 0);
  return rc < 0 ? rc : PS_OK;
}

static void *sc_worker_main(void *arg) {
  sc_worker *w = arg;
  const scenario *sc = w->sc;
  ps_worker *h = ps_node_worker(real_node_core(w->node), w->index);
  uint32_t len = total_workers(sc);
  uint64_t rng = sc->seed * 1000003 + w->g;
  float *vals = calloc(4 * len, sizeof *vals), *out = calloc(4 * len, sizeof *out);
  push_ring ring = {.n = 0};
  for (uint32_t op = 0; op < sc->ops && w->status == PS_OK; op++)
    w->status = sc_step(w, h, &rng, vals, out, &ring);
  for (int i = 0; i < ring.n && w->status == PS_OK; i++)
    w->status = real_node_wait(w->node, h, ring.t[i]);
  free(vals);
  free(out);
  return NULL;
}

/* A node's report: u64 relocations, checks, wrong, bad statuses; u64
 * pushes[workers][keys]; u32 owned; owned x (u64 key, len floats). */
typedef struct {
  uint8_t *buf;
  size_t len, cap;
} bytes;

static void put(bytes *b, const void *p, size_t n) {
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2;
    b->buf = realloc(b->buf, b->cap);
  }
  memcpy(b->buf + b->len, p, n);
  b->len += n;
}

static bytes sc_report(real_node *n, const scenario *sc, sc_worker *ws) {
  bytes b = {0};
  ps_node_stats st;
  ps_node_get_stats(real_node_core(n), &st);
  real_node_stats rs;
  real_node_get_stats(n, &rs);
  /* Bad frames count as failures: nothing here sends any. */
  uint64_t head[4] = {st.relocations, 0, 0, st.bad_messages + rs.dropped + rs.stray};
  for (uint32_t i = 0; i < sc->workers; i++) {
    head[1] += ws[i].checks;
    head[2] += ws[i].wrong;
    head[3] += ws[i].status != PS_OK;
  }
  put(&b, head, sizeof head);
  for (uint32_t i = 0; i < sc->workers; i++) put(&b, ws[i].pushed, sc->keys * sizeof(uint64_t));
  uint32_t len = total_workers(sc), owned = 0;
  size_t count_at = b.len;
  put(&b, &owned, sizeof owned);
  float *v = malloc(len * sizeof *v);
  for (ps_key k = 100; k < 100 + sc->keys; k++) {
    if (ps_node_read_owned(real_node_core(n), k, v) != PS_OK) continue;
    put(&b, &k, sizeof k);
    put(&b, v, len * sizeof *v);
    owned++;
  }
  memcpy(b.buf + count_at, &owned, sizeof owned);
  free(v);
  return b;
}

typedef struct {
  const scenario *sc;
  char verdict[512];
} check_ctx;

/* Every node's reports, merged: per key its owners and value, per key and
 * worker the pushes made, and the summed heads. */
typedef struct {
  uint64_t *expect, totals[4];
  uint32_t *owners;
  float *values;
} merged;

static void merge_report(merged *m, const scenario *sc, uint32_t rank, const uint8_t *at) {
  uint32_t vl = total_workers(sc);
  uint64_t head[4];
  memcpy(head, at, sizeof head);
  at += sizeof head;
  for (int i = 0; i < 4; i++) m->totals[i] += head[i];
  for (uint32_t w = 0; w < sc->workers; w++, at += sc->keys * sizeof(uint64_t))
    for (uint32_t k = 0; k < sc->keys; k++)
      memcpy(&m->expect[(size_t)k * vl + rank * sc->workers + w], at + k * sizeof(uint64_t),
             sizeof(uint64_t));
  uint32_t owned;
  memcpy(&owned, at, sizeof owned);
  at += sizeof owned;
  for (uint32_t i = 0; i < owned; i++, at += sizeof(ps_key) + vl * sizeof(float)) {
    ps_key k;
    memcpy(&k, at, sizeof k);
    m->owners[k - 100]++;
    memcpy(&m->values[(k - 100) * vl], at + sizeof k, vl * sizeof(float));
  }
}

static void judge(const merged *m, const scenario *sc, char *v, size_t vn) {
  uint32_t vl = total_workers(sc);
  const uint64_t *t = m->totals;
  snprintf(v, vn, "ok");
  for (uint32_t k = 0; k < sc->keys && !strcmp(v, "ok"); k++) {
    if (m->owners[k] != 1) snprintf(v, vn, "key %u has %u owners", 100 + k, m->owners[k]);
    for (uint32_t g = 0; g < vl && m->owners[k] == 1; g++)
      if (m->values[k * vl + g] != (float)m->expect[k * vl + g])
        snprintf(v, vn, "key %u, worker %u: value %g, pushes %llu", 100 + k, g,
                 m->values[k * vl + g], (unsigned long long)m->expect[k * vl + g]);
  }
  if (!strcmp(v, "ok") && (t[2] || t[3] || t[1] < sc->ops / 10))
    snprintf(v, vn, "read-your-writes: %llu of %llu pulls wrong; %llu failed workers and "
             "bad messages", (unsigned long long)t[2], (unsigned long long)t[1],
             (unsigned long long)t[3]);
  if (!strcmp(v, "ok") && (is_policy(sc, "relocate") || is_policy(sc, "adaptive")) && t[0] == 0)
    snprintf(v, vn, "%s moved no key", sc->policy);
}

/* Rank 0: every key owned once, holding exactly every worker's pushes;
 * every pull saw its worker's own pushes; relocate and adaptive (keys
 * intended by one node alone) moved keys. */
static void *decide_check(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                          size_t *out_len) {
  (void)len;
  check_ctx *c = ctx;
  const scenario *sc = c->sc;
  uint32_t vl = total_workers(sc);
  merged m = {.expect = calloc((size_t)sc->keys * vl, sizeof(uint64_t)),
              .owners = calloc(sc->keys, sizeof(uint32_t)),
              .values = calloc((size_t)sc->keys * vl, sizeof(float))};
  for (uint32_t p = 0; p < size; p++) merge_report(&m, sc, p, in[p]);
  judge(&m, sc, c->verdict, sizeof c->verdict);
  free(m.expect);
  free(m.owners);
  free(m.values);
  uint8_t *ok = malloc(1);
  *ok = strcmp(c->verdict, "ok") == 0;
  *out_len = 1;
  return ok;
}

static int sc_run_workers(real_node *n, const scenario *sc, sc_worker *ws) {
  pthread_t *th = calloc(sc->workers, sizeof *th);
  for (uint32_t i = 0; i < sc->workers; i++) {
    ws[i] = (sc_worker){.node = n, .sc = sc, .index = i,
                        .g = real_node_rank(n) * sc->workers + i,
                        .pushed = calloc(sc->keys, sizeof(uint64_t))};
    pthread_create(&th[i], NULL, sc_worker_main, &ws[i]);
  }
  for (uint32_t i = 0; i < sc->workers; i++) pthread_join(th[i], NULL);
  free(th);
  return 0;
}

/* Replicas hand on their deltas: the owners will hold every push. */
static void sc_finish_core(real_node *n) {
  ps_node_finish(real_node_core(n), real_node_now(n));
}

/* The end of a guarantees scenario, on every node in step: nothing in
 * flight, then rank 0 checks every node's report (decide_check). PS_OK or
 * PS_ERR_PEER; *ok when rank 0 found everything right. */
static int guarantees_end(real_node *n, const scenario *sc, sc_worker *ws, char *verdict,
                          size_t vlen, bool *ok) {
  sc_finish_core(n);
  check_ctx cc = {.sc = sc};
  void *reply = NULL;
  size_t rlen = 0;
  bytes rep = {0};
  int rc = real_node_barrier(n, "workers done", sc->cluster.timeout_s);
  real_node_stop_timers(n);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK) rep = sc_report(n, sc, ws);
  if (rc == PS_OK)
    rc = real_node_collective(n, "check", rep.buf, rep.len, sc->cluster.timeout_s, decide_check,
                              &cc, &reply, &rlen);
  *ok = rc == PS_OK && rlen == 1 && *(uint8_t *)reply;
  snprintf(verdict, vlen, "%s",
           real_node_rank(n) == 0 ? cc.verdict : *ok ? "ok" : "rank 0 found a problem");
  free(reply);
  free(rep.buf);
  return rc;
}

static int converge_end(real_node *n, const scenario *sc, sc_worker *ws, char *verdict,
                        size_t vlen, bool *ok);

/* The policy's hot keys, when it wants some: the first keys (at most 64). */
static size_t sc_hot_keys(const scenario *sc) {
  size_t n_hot = sc->settings.hot_keys < sc->keys ? sc->settings.hot_keys : sc->keys;
  return n_hot < 64 ? n_hot : 64;
}

/* One node of a scenario; 0 when rank 0 found everything right. */
static int sc_node(const scenario *sc, uint32_t rank, const char *coordinator, kids *tell,
                   char *verdict, size_t vlen) {
  ps_key hot[64];
  size_t n_hot = sc_hot_keys(sc);
  for (size_t i = 0; i < n_hot; i++) hot[i] = 100 + i;
  ps_layout layout = sc_layout(sc);
  real_node_config c = node_config(rank, sc->nodes, sc->workers, &layout, &sc->cluster);
  c.core.policy = sc->table;
  c.core.policy_json = sc->json;
  c.core.settings = sc->settings;
  c.core.hot_keys = hot;
  c.core.num_hot_keys = n_hot;
  c.coordinator = coordinator;
  c.listening = tell ? kids_tell : NULL;
  c.listening_ctx = tell;
  char err[REAL_ERROR_MAX];
  real_node *n = real_node_start(&c, err, sizeof err);
  if (!n) {
    snprintf(verdict, vlen, "start: %.400s", err);
    fprintf(stderr, "node %u: %s\n", rank, verdict);
    return 1;
  }
  sc_worker *ws = calloc(sc->workers, sizeof *ws);
  sc_run_workers(n, sc, ws);
  bool ok = false;
  int rc = sc->converge ? converge_end(n, sc, ws, verdict, vlen, &ok)
                        : guarantees_end(n, sc, ws, verdict, vlen, &ok);
  if (rc == PS_OK) rc = real_node_finish(n);
  if (rc != PS_OK) real_node_failed(n, verdict, vlen);
  if (rc != PS_OK || !ok) fprintf(stderr, "node %u: %s\n", rank, verdict);
  for (uint32_t i = 0; i < sc->workers; i++) free(ws[i].pushed);
  free(ws);
  real_node_free(n);
  return rc == PS_OK && ok ? 0 : 1;
}

static int sc_child(uint32_t rank, const char *coordinator, void *arg) {
  char verdict[512];
  return sc_node(arg, rank, coordinator, NULL, verdict, sizeof verdict);
}

static void run_scenario(scenario *sc) {
  char why[256];
  if (sc->policy_text) {
    sc->json = cJSON_Parse(sc->policy_text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc->json);
    sc->policy = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sc->json, "type"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sc->policy);
  } else {
    sc->json = cJSON_CreateObject();
    cJSON_AddStringToObject(sc->json, "type", sc->policy);
    if (is_policy(sc, "static")) cJSON_AddBoolToObject(sc->json, "fast_local_access", sc->fast);
  }
  ps_policy_settings_default(&sc->settings);
  if (ps_policy_configure(sc->json, &sc->table, &sc->settings, why, sizeof why) != PS_OK) {
    fprintf(stderr, "\n  policy %s: %s\n", sc->policy_text ? sc->policy_text : sc->policy, why);
    CU_FAIL("a policy refused its configuration");
    cJSON_Delete(sc->json);
    return;
  }
  alarm(bound_s());
  kids ks;
  kids_spawn(&ks, sc->nodes, sc_child, (void *)sc);
  char verdict[512];
  int rc = sc_node(sc, 0, NULL, &ks, verdict, sizeof verdict);
  if (rc != 0)
    fprintf(stderr, "\n  policy %s, rank 0: %s\n", sc->policy_text ? sc->policy_text : sc->policy,
            verdict);
  CU_ASSERT_EQUAL(rc, 0);
  kids_wait(&ks, sc->cluster.timeout_s + 5);
  for (uint32_t r = 1; r < ks.n; r++) CU_ASSERT_TRUE(kid_ok(&ks.k[r]));
  alarm(0);
  cJSON_Delete(sc->json);
}

static void test_guarantees_static(void) {
  scenario a = {.nodes = 3, .workers = 2, .keys = 24, .ops = 1500, .policy = "static",
                .fast = true, .seed = 1, .cluster = test_cluster(10)};
  run_scenario(&a);
  scenario b = {.nodes = 4, .workers = 2, .keys = 16, .ops = 1000, .policy = "static",
                .fast = false, .seed = 2, .cluster = test_cluster(10)};
  run_scenario(&b);
}

static void test_guarantees_relocate(void) {
  scenario a = {.nodes = 4, .workers = 2, .keys = 12, .ops = 1500, .policy = "relocate",
                .seed = 3, .cluster = test_cluster(10)};
  run_scenario(&a);
  scenario b = {.nodes = 3, .workers = 3, .keys = 6, .ops = 1500, .policy = "relocate",
                .seed = 4, .cluster = test_cluster(10)};
  run_scenario(&b);
}

/* Every other policy the registry has, with its defaults, on 3 nodes. */
static void test_guarantees_every_other_policy(void) {
  for (const char *const *p = ps_policy_names(); *p; p++) {
    if (strcmp(*p, "static") == 0 || strcmp(*p, "relocate") == 0) continue;
    scenario sc = {.nodes = 3, .workers = 2, .keys = 16, .ops = 1000, .policy = *p,
                   .seed = 5, .cluster = test_cluster(10)};
    run_scenario(&sc);
  }
}

/* Adaptive with sync rounds 8 times as often as its default: replicas of
 * shared keys come and go at run time, synced through owners that move. */
static void test_guarantees_adaptive(void) {
  scenario sc = {.nodes = 4, .workers = 2, .keys = 16, .ops = 1000,
                 .policy_text = "{\"type\": \"adaptive\", \"syncs_per_sec\": 200}", .seed = 6,
                 .cluster = test_cluster(10)};
  run_scenario(&sc);
}

/* ------------------------------------------ replicas converge, processes */

static ps_sync_mode sc_sync_mode(const scenario *sc) {
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sc->json, "sync"));
  return s && strcmp(s, "owner") == 0 ? PS_SYNC_OWNER : PS_SYNC_ALLREDUCE;
}

/* Rank 0: every node's pushes (u64 [workers][keys], as its workers made
 * them) summed per key and component: u64 [keys][total workers], for every
 * node. Nothing (every node then fails) if a report is malformed. */
static void *decide_sums(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                         size_t *out_len) {
  const scenario *sc = ctx;
  uint32_t vl = total_workers(sc);
  size_t want = (size_t)sc->workers * sc->keys * sizeof(uint64_t);
  uint64_t *sum = calloc((size_t)sc->keys * vl, sizeof *sum);
  for (uint32_t p = 0; sum && p < size; p++) {
    if (len[p] != want) {
      free(sum);
      return NULL;
    }
    const uint8_t *at = in[p];
    for (uint32_t w = 0; w < sc->workers; w++)
      for (uint32_t k = 0; k < sc->keys; k++, at += sizeof(uint64_t))
        memcpy(&sum[(size_t)k * vl + p * sc->workers + w], at, sizeof(uint64_t));
  }
  if (sum) *out_len = (size_t)sc->keys * vl * sizeof *sum;
  return sum;
}

enum { COPY_OWNED = 1, COPY_REPLICA = 2 };

/* This node's copies against the cluster's pushes (expect: [keys][total
 * workers]): every key it owns and every replica it holds must equal them
 * exactly; where[k] gets which copies it holds. The first difference goes to
 * v, else "ok". */
static void check_copies(ps_node *core, const scenario *sc, const uint64_t *expect,
                         uint8_t *where, char *v, size_t vn) {
  uint32_t vl = total_workers(sc);
  float *val = malloc(vl * sizeof *val);
  snprintf(v, vn, "ok");
  for (uint32_t i = 0; val && i < sc->keys; i++) {
    ps_key k = 100 + i;
    where[i] = 0;
    for (int copy = COPY_OWNED; copy <= COPY_REPLICA; copy++) {
      int rc = copy == COPY_OWNED ? ps_node_read_owned(core, k, val)
                                  : ps_node_read_replica(core, k, val);
      if (rc != PS_OK) continue;
      where[i] |= (uint8_t)copy;
      for (uint32_t g = 0; g < vl && !strcmp(v, "ok"); g++)
        if (val[g] != (float)expect[(size_t)i * vl + g])
          snprintf(v, vn, "its %s of key %llu: component %u is %g, worker %u pushed %llu",
                   copy == COPY_OWNED ? "value" : "replica", (unsigned long long)k, g, val[g],
                   g, (unsigned long long)expect[(size_t)i * vl + g]);
    }
  }
  if (!val) snprintf(v, vn, "out of memory");
  free(val);
}

typedef struct {
  const scenario *sc;
  char verdict[512];
} converge_ctx;

/* Rank 0: every node's own check (u64 timer_syncs, replica_reads; u8
 * where[keys]; its verdict text) passed; every key is owned once; the hot
 * keys have a replica on every other node, the other keys none; the timers'
 * sync rounds ran and replicas served reads during the run. */
static void *decide_converged(void *ctx, uint32_t size, const void *const *in,
                              const size_t *len, size_t *out_len) {
  converge_ctx *c = ctx;
  const scenario *sc = c->sc;
  size_t head = 2 * sizeof(uint64_t) + sc->keys, n_hot = sc_hot_keys(sc);
  uint64_t syncs = 0, reads = 0;
  uint32_t *owners = calloc(sc->keys, sizeof *owners);
  uint32_t *replicas = calloc(sc->keys, sizeof *replicas);
  char *v = c->verdict;
  size_t vn = sizeof c->verdict;
  snprintf(v, vn, "ok");
  for (uint32_t p = 0; p < size && !strcmp(v, "ok"); p++) {
    const uint8_t *at = in[p];
    if (len[p] < head) {
      snprintf(v, vn, "node %u: a report of %zu bytes", p, len[p]);
      break;
    }
    uint64_t st[2];
    memcpy(st, at, sizeof st);
    syncs += st[0];
    reads += st[1];
    for (uint32_t i = 0; i < sc->keys; i++) {
      owners[i] += (at[sizeof st + i] & COPY_OWNED) != 0;
      replicas[i] += (at[sizeof st + i] & COPY_REPLICA) != 0;
    }
    int tlen = (int)(len[p] - head);
    if (tlen != 2 || memcmp(at + head, "ok", 2) != 0)
      snprintf(v, vn, "node %u: %.*s", p, tlen < 400 ? tlen : 400, (const char *)at + head);
  }
  for (uint32_t i = 0; i < sc->keys && !strcmp(v, "ok"); i++) {
    uint32_t want = i < n_hot ? size - 1 : 0;
    if (owners[i] != 1 || replicas[i] != want)
      snprintf(v, vn, "key %u: %u owners and %u replicas, expected 1 and %u", 100 + i, owners[i],
               replicas[i], want);
  }
  if (!strcmp(v, "ok") && (syncs == 0 || reads == 0))
    snprintf(v, vn, "during the run: %llu replica keys synced, %llu reads by replicas",
             (unsigned long long)syncs, (unsigned long long)reads);
  free(owners);
  free(replicas);
  uint8_t *ok = malloc(1);
  *ok = strcmp(v, "ok") == 0;
  *out_len = 1;
  return ok;
}

/* The end of a convergence scenario, on every node in step. Pushes stop
 * everywhere (a barrier), the timers' sync rounds stop and nothing is left in
 * flight; replicas hand their deltas on (ps_node_finish); then sync rounds
 * by hand, each followed by quiescence. Round 1
 * takes every delta to the owner (all-reduce: to every copy), round 2 brings
 * the owner's value back to every replica (through the owner), round 3 must
 * change nothing. Then rank 0 sums every node's pushes and sends the sums to
 * every node, each node checks its own copies against them, and rank 0
 * gathers the verdicts (decide_converged). */
static int converge_end(real_node *n, const scenario *sc, sc_worker *ws, char *verdict,
                        size_t vlen, bool *ok) {
  ps_node *core = real_node_core(n);
  ps_sync_mode mode = sc_sync_mode(sc);
  double timeout = sc->cluster.timeout_s;
  *ok = false;
  int rc = real_node_barrier(n, "pushes done", timeout);
  real_node_stop_timers(n);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  ps_node_stats st;
  ps_node_get_stats(core, &st);
  uint64_t during[2] = {st.replica_syncs, st.replica_reads}; /* the timers' rounds */
  /* Replicas hand their deltas on as a run's end does (ps_node_finish:
   * through the owner to it, with all-reduce to every copy), then rounds. */
  if (rc == PS_OK) {
    sc_finish_core(n);
    rc = real_node_quiesce(n);
  }
  for (int round = 0; rc == PS_OK && round < 3; round++) {
    ps_node_sync_replicas(core, mode, 0, real_node_now(n));
    rc = real_node_quiesce(n);
  }
  /* The cluster's pushes, summed by rank 0. */
  bytes mine = {0};
  for (uint32_t i = 0; i < sc->workers; i++) put(&mine, ws[i].pushed, sc->keys * sizeof(uint64_t));
  void *sums = NULL, *reply = NULL;
  size_t slen = 0, rlen = 0;
  if (rc == PS_OK)
    rc = real_node_collective(n, "summing pushes", mine.buf, mine.len, timeout, decide_sums,
                              (void *)sc, &sums, &slen);
  /* This node checks its own copies, its workers and what it received. */
  char local[400] = "ok";
  uint8_t *where = calloc(sc->keys, 1);
  if (rc == PS_OK && slen != (size_t)sc->keys * total_workers(sc) * sizeof(uint64_t))
    snprintf(local, sizeof local, "rank 0 sent %zu bytes of sums", slen);
  else if (rc == PS_OK)
    check_copies(core, sc, sums, where, local, sizeof local);
  real_node_stats rs;
  real_node_get_stats(n, &rs);
  ps_node_get_stats(core, &st);
  for (uint32_t i = 0; i < sc->workers && !strcmp(local, "ok"); i++)
    if (ws[i].status != PS_OK || ws[i].wrong)
      snprintf(local, sizeof local, "worker %u: status %d, %llu of %llu pulls missed its pushes",
               i, ws[i].status, (unsigned long long)ws[i].wrong,
               (unsigned long long)ws[i].checks);
  if (!strcmp(local, "ok") && st.bad_messages + rs.dropped + rs.stray)
    snprintf(local, sizeof local, "%llu bad messages",
             (unsigned long long)(st.bad_messages + rs.dropped + rs.stray));
  bytes rep = {0};
  put(&rep, during, sizeof during);
  put(&rep, where, sc->keys);
  put(&rep, local, strlen(local));
  converge_ctx cc = {.sc = sc};
  if (rc == PS_OK)
    rc = real_node_collective(n, "checking copies", rep.buf, rep.len, timeout, decide_converged,
                              &cc, &reply, &rlen);
  *ok = rc == PS_OK && rlen == 1 && *(uint8_t *)reply && !strcmp(local, "ok");
  if (strcmp(local, "ok")) snprintf(verdict, vlen, "%s", local);
  else if (real_node_rank(n) == 0) snprintf(verdict, vlen, "%s", cc.verdict);
  else snprintf(verdict, vlen, "%s", *ok ? "ok" : "rank 0 found a problem");
  free(where);
  free(sums);
  free(reply);
  free(mine.buf);
  free(rep.buf);
  return rc;
}

/* Replicas converge with 3 node processes of 2 workers each: 4 of 16 keys
 * replicated on every node, synced 200 times a second through the owner or
 * by all-reduce, while workers push +1 to their own component of random keys
 * (and pull, checking they read their own pushes). Once pushes stop and sync
 * rounds quiesce, every node finds every replica it holds, and the value of
 * every key it owns, equal to the exact sum of the pushes to that key. */
static void test_replicas_converge(void) {
  static const char *const policies[] = {
      "{\"type\": \"replicate\", \"sync\": \"owner\", \"hot_keys\": 4, \"syncs_per_sec\": 200}",
      "{\"type\": \"replicate\", \"sync\": \"allreduce\", \"hot_keys\": 4, "
      "\"syncs_per_sec\": 200}"};
  for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
    scenario sc = {.nodes = 3, .workers = 2, .keys = 16, .ops = 1000, .policy_text = policies[i],
                   .converge = true, .seed = 7 + i, .cluster = test_cluster(10)};
    run_scenario(&sc);
  }
}

/* ----------------------------------------------------------- whole runs */

static cJSON *parse_json(const char *text) {
  cJSON *j = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  return j;
}

static double metric(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* real_run_local on 3 nodes: the metrics sim_run reports (the telemetry
 * among them: wake-ups, CPU), pushes conserved; with a bounded consistency
 * (JSON text, or NULL), its metrics too and a staleness read within the
 * bound. */
static void check_local_run_with(const char *policy, bool relocates, const char *consistency,
                                 double staleness) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                         "\"steps_per_worker\": 150, \"epochs\": 3, \"locality\": 0.7}");
  cJSON *pol = parse_json(policy);
  cJSON *cons = consistency ? parse_json(consistency) : NULL;
  real_cluster c = test_cluster(10);
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .consistency = cons, .seed = 5}, .host_speed = 1e9, .cluster = &c,
                     .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "steps"), 3 * 2 * 150);
  CU_ASSERT(metric(m, "time_s") > 0);
  CU_ASSERT(metric(m, "steps_per_s") > 0);
  CU_ASSERT(metric(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  /* nups replicates by all-reduce: every replica equals its owner (integer
   * pushes, exactly); the other policies hold no replica to check. */
  if (strstr(policy, "nups")) CU_ASSERT_EQUAL(metric(m, "replica_max_diff"), 0);
  if (!strstr(policy, "nups")) CU_ASSERT_TRUE(isnan(metric(m, "replica_max_diff")));
  /* Rounds by steps, from the worker threads: each node's 2 x 150 steps,
   * a round every 5 of each worker's, 30 a node. */
  if (strstr(policy, "syncs_per_step")) CU_ASSERT_EQUAL(metric(m, "sync_rounds"), 3 * 30);
  /* Replica staleness, in time and steps, through the node processes'
   * reports (timing decides the figures: only that they hang together). */
  if (strstr(policy, "nups")) {
    CU_ASSERT(metric(m, "staleness_max_steps") >= 0); /* present: replicas were read */
    CU_ASSERT(metric(m, "staleness_mean_steps") <= metric(m, "staleness_max_steps"));
    CU_ASSERT(metric(m, "staleness_p99_steps") >= 0);
    CU_ASSERT(metric(m, "staleness_mean_s") <= metric(m, "staleness_max_s"));
  }
  CU_ASSERT(metric(m, "messages") > 0);
  CU_ASSERT(metric(m, "local_ratio") >= 0 && metric(m, "local_ratio") <= 1);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "epoch_time_s")), 3);
  CU_ASSERT_EQUAL(metric(m, "relocations") > 0, relocates);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "bad_messages"));
  /* The telemetry: the nodes' reading threads slept and woke for messages
   * (a wake-up reads at least one), and the node processes spent CPU. */
  CU_ASSERT(metric(m, "messages_per_wakeup") >= 1);
  CU_ASSERT(metric(m, "messages_per_io_wakeup") > 0); /* ZeroMQ's I/O thread found */
  CU_ASSERT(metric(m, "io_cpu_s") > 0 && metric(m, "io_cpu_s") < metric(m, "cpu_s"));
  /* The kernel's schedstat of those threads and of the workers': each turn
   * on a core ran a while, and none waited less than nothing. */
  if (access("/proc/thread-self/schedstat", R_OK) == 0) {
    CU_ASSERT(metric(m, "io_turn_s") > 0 && metric(m, "io_turn_s") <= metric(m, "io_cpu_s"));
    CU_ASSERT(metric(m, "io_run_wait_s") >= 0);
    CU_ASSERT(metric(m, "worker_turn_s") > 0 && metric(m, "worker_turn_s") < metric(m, "cpu_s"));
    CU_ASSERT(metric(m, "worker_run_wait_s") >= 0);
    /* a worker sleeps while its remote operations are under way */
    CU_ASSERT(metric(m, "worker_blocked_s") > 0 && metric(m, "worker_blocked_s") < metric(m, "time_s"));
  }
  CU_ASSERT(metric(m, "cpu_s") > 0);
  CU_ASSERT(metric(m, "cpu_per_message_s") > 0);
  CU_ASSERT(metric(m, "rt_p50_s") > 0 && metric(m, "rt_p99_s") >= metric(m, "rt_p50_s"));
  CU_ASSERT(metric(m, "utilization") > 0);
  CU_ASSERT(metric(m, "queue_p99") >= metric(m, "queue_p50"));
  CU_ASSERT_EQUAL(!isnan(metric(m, "clock_gap_mean")), consistency != NULL);
  if (consistency) {
    CU_ASSERT(metric(m, "clock_messages") > 0);
    CU_ASSERT(metric(m, "wait_s") >= 0);
    CU_ASSERT(!(metric(m, "read_staleness_max_clocks") > staleness));
  }
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  alarm(0);
}

static void check_local_run(const char *policy, bool relocates) {
  check_local_run_with(policy, relocates, NULL, 0);
}

/* PS-Lite's layout with processes: node 0 serves, nodes 1-3 run workers,
 * under BSP (a node without workers holds no clock back). Every worker
 * node's steps run and every push is held once. */
static void test_local_run_servers_and_worker_nodes(void) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                         "\"steps_per_worker\": 100}");
  cJSON *pol = parse_json("{\"type\": \"static\"}");
  cJSON *cons = parse_json("{\"model\": \"bsp\"}");
  real_cluster c = test_cluster(10);
  real_run_args a = {.run = {.nodes = 4, .workers_per_node = 2, .servers = 1, .worker_nodes = 3,
                             .workload = wl, .policy = pol, .consistency = cons, .seed = 5},
                     .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "steps"), 3 * 2 * 100);
  CU_ASSERT(metric(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  CU_ASSERT(metric(m, "clock_messages") > 0);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  alarm(0);
}

typedef struct {
  int n;                            /* the cores of the process */
  int pinned, allowed, core, beyond, none;
  char why[REAL_ERROR_MAX];
} pin_check;

static void *pin_thread(void *arg) {
  pin_check *pc = arg;
  int cores[8];
  pc->pinned = real_pin_cores((uint32_t)pc->n - 1, 1, pc->why, sizeof pc->why);
  pc->allowed = real_cores_allowed(cores, 8, pc->why, sizeof pc->why);
  pc->core = cores[0];
  char none[128];
  pc->none = real_pin_cores(0, 0, none, sizeof none);
  pc->beyond = real_pin_cores(1, 1, pc->why, sizeof pc->why); /* of the one it has now */
  return NULL;
}

/* The most cores rank 0's calling thread may use, over its progress calls. */
static void pinned_progress(void *ctx, double wall_s, double fraction) {
  (void)wall_s;
  (void)fraction;
  int cores[8], *most = ctx;
  char err[128];
  int n = real_cores_allowed(cores, 8, err, sizeof err);
  if (n > *most) *most = n;
}

/* cluster.machines.pin: two nodes, each on a core of its own of this
 * machine (machines 0 and 1 of one core: the first two cores this process
 * may use), run their steps; rank 0, this process, runs on its core (its
 * progress calls see one) and has its cores back after. Machines that need
 * more cores than there are are refused before any node starts, naming
 * the field. real_pin_cores pins the calling thread to the cores asked, or
 * says it cannot. */
static void test_local_run_pinned(void) {
  alarm(bound_s());
  enum { MAX_CPUS = 1024 };
  static int before[MAX_CPUS], after[MAX_CPUS];
  char err[REAL_ERROR_MAX] = "";
  int n = real_cores_allowed(before, MAX_CPUS, err, sizeof err);
  CU_ASSERT_FATAL(n >= 1 && n <= MAX_CPUS);
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                         "\"steps_per_worker\": 300}");
  cJSON *pol = parse_json("{\"type\": \"static\"}");
  real_cluster c = test_cluster(10);
  uint32_t machine[2] = {0, 1};
  int most = 0;
  real_run_args a = {.run = {.nodes = 2, .workers_per_node = 1, .workload = wl, .policy = pol,
                             .seed = 5}, .host_speed = 1e9, .cluster = &c, .run_number = 1,
                     .progress = pinned_progress, .progress_ctx = &most,
                     .pin_machine = machine, .pin_machines = 2, .pin_cores = 1};
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (n >= 2) {
    if (!m) fprintf(stderr, "\n  %s\n", err);
    CU_ASSERT_PTR_NOT_NULL(m);
    CU_ASSERT_EQUAL(metric(m, "steps"), 2 * 300);
    CU_ASSERT(most <= 1); /* 0: the run ended before a progress call */
  } else {
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster.machines.pin"));
  }
  cJSON_Delete(m);
  CU_ASSERT_EQUAL(real_cores_allowed(after, MAX_CPUS, err, sizeof err), n);
  CU_ASSERT_EQUAL(memcmp(before, after, (size_t)n * sizeof *before), 0);
  /* More machines than cores. */
  machine[1] = (uint32_t)n;
  a.pin_machines = (uint32_t)n + 1;
  m = real_run_local(&a, err, sizeof err);
  CU_ASSERT_PTR_NULL(m);
  char want[96];
  snprintf(want, sizeof want, "within the %d cores this process may use", n);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "cluster.machines.pin"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
  cJSON_Delete(m);
  /* Pinning the calling thread (one of its own, so that this one keeps its
   * cores): to the last core, then beyond the cores, then to none. */
  pin_check pc = {.n = n};
  pthread_t t;
  CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, pin_thread, &pc), 0);
  pthread_join(t, NULL);
  CU_ASSERT_EQUAL(pc.pinned, 0);
  CU_ASSERT_EQUAL(pc.allowed, 1);
  CU_ASSERT_EQUAL(pc.core, before[n - 1]);
  CU_ASSERT_EQUAL(pc.beyond, -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(pc.why, "expected cores"));
  CU_ASSERT_EQUAL(pc.none, -1);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  alarm(0);
}

/* psld with processes: 4 servers (2 of them serving from 0.05 s of the run
 * on, the others before) and 4 worker nodes under BSP. Its reports, moves
 * and route hints cross real sockets, and scaling in happens on each
 * node's own clock: every push is held once, every key by exactly one
 * server at the end, and, once the run outlasted the step, none by the
 * servers that left. */
static void test_local_run_psld_scaling_in(void) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"dnn\", \"layers\": [64, 64, 10], \"key_floats\": 128, "
                         "\"batch\": 8, \"examples\": 1024, \"epochs\": 2, \"math\": \"none\"}");
  cJSON *pol = parse_json("{\"type\": \"psld\", \"window_s\": 0.005, \"explore\": 0.5}");
  cJSON *cons = parse_json("{\"model\": \"bsp\"}");
  static const ps_scale_step scale[1] = {{0.05, 2}};
  real_cluster c = test_cluster(10);
  real_run_args a = {.run = {.nodes = 8, .workers_per_node = 1, .servers = 4, .worker_nodes = 4,
                             .scale = scale, .n_scale = 1, .workload = wl, .policy = pol,
                             .consistency = cons, .seed = 5}, .host_speed = 1e9, .cluster = &c,
                     .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  const cJSON *servers = cJSON_GetObjectItemCaseSensitive(m, "servers");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(servers), 4);
  double owned = 0;
  for (const cJSON *s = servers->child; s; s = s->next) {
    owned += metric(s, "owned_keys");
    if (metric(s, "node") >= 2 && metric(m, "time_s") > 0.05)
      CU_ASSERT_EQUAL(metric(s, "owned_keys"), 0);
  }
  CU_ASSERT_EQUAL(owned, 32 + 1 + 5 + 1); /* 64x64+64 and 64x10+10 floats, keys of 128 */
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  alarm(0);
}

/* Saving the trained parameters with processes: each node writes the values
 * it owns, rank 0 merges them. Pushes of +1.0 (math "none") through nups's
 * replicas: the saved table has every key, no part is left, and its floats
 * sum to every float pushed, each counted once. */
static void test_local_run_saves_params(void) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                         "\"steps_per_worker\": 150, \"locality\": 0.7}");
  cJSON *pol = parse_json("{\"type\": \"nups\", \"hot_keys\": 20}");
  char *dir = unit_temp_dir();
  real_cluster c = test_cluster(10);
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .seed = 5, .params_dir = dir},
                     .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  char path[4096];
  snprintf(path, sizeof path, "%s/params.bin", dir);
  wl_params p;
  CU_ASSERT_EQUAL_FATAL(wl_params_load(path, &p, err, sizeof err), 0);
  CU_ASSERT_EQUAL(p.num_tables, 1);
  CU_ASSERT_EQUAL(p.tables[0].count, 300);
  CU_ASSERT_EQUAL(p.tables[0].value_len, 4);
  double sum = 0;
  for (uint64_t i = 0; i < p.n_floats; i++) sum += p.values[i];
  CU_ASSERT(metric(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(sum, metric(m, "pushed_floats"));
  for (int r = 0; r < 3; r++) {
    snprintf(path, sizeof path, "%s/params.part%d", dir, r);
    CU_ASSERT_NOT_EQUAL(access(path, F_OK), 0);
  }
  wl_params_free(&p);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  unit_remove_tree(dir);
  free(dir);
  alarm(0);
}

/* Every workload with files of its own, saved from processes: 2 nodes whose
 * replicas and relocated keys are resolved at the end (nups; dnn: every key
 * replicated). params.bin holds each key once, from its owner (with "math":
 * "none", its floats sum to every float pushed), and the workload's files
 * hold the same floats under the data's names (tests/saved_params.c, as the
 * simulator's suite checks them). */
static void test_local_run_saves_every_workload(void) {
  static const struct {
    const char *type, *const *json, *policy;
  } runs[] = {
      {"mf", &saved_mf_json, "{\"type\": \"nups\", \"hot_keys\": 3, \"syncs_per_step\": 1}"},
      {"kge", &saved_kge_json, "{\"type\": \"nups\", \"hot_keys\": 3, \"syncs_per_step\": 1}"},
      {"w2v", &saved_w2v_json, "{\"type\": \"nups\", \"hot_keys\": 3, \"syncs_per_step\": 1}"},
      {"dnn", &saved_dnn_json,
       "{\"type\": \"replicate\", \"hot_keys\": 5, \"syncs_per_step\": 1}"},
  };
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    alarm(bound_s());
    char *dir = unit_temp_dir();
    saved_write_data(dir);
    cJSON *wl = parse_json(*runs[i].json), *pol = parse_json(runs[i].policy);
    real_cluster c = test_cluster(10);
    real_run_args a = {.run = {.nodes = 2, .workers_per_node = 1, .workload = wl,
                               .policy = pol, .seed = 5, .base_dir = dir, .params_dir = dir},
                       .host_speed = 1e9, .cluster = &c, .run_number = 1};
    char err[REAL_ERROR_MAX] = "";
    cJSON *m = real_run_local(&a, err, sizeof err);
    if (!m) fprintf(stderr, "\n  %s: %s\n", runs[i].type, err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    CU_ASSERT(metric(m, "replica_syncs") > 0);
    wl_params p = saved_load(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p.values);
    if (strstr(*runs[i].json, "\"math\":\"none\""))
      CU_ASSERT_EQUAL(saved_sum(&p), metric(m, "pushed_floats"));
    saved_check_files(runs[i].type, dir, &p);
    saved_check_no_parts(dir, 2);
    wl_params_free(&p);
    cJSON_Delete(m);
    cJSON_Delete(wl);
    cJSON_Delete(pol);
    unit_remove_tree(dir);
    free(dir);
  }
  alarm(0);
}

/* The final evaluation with processes: mf with every key replicated on 2
 * node processes, never synced during training. The run's `quality` is the
 * RMSE of the owners' values once quiet (rank 0 evaluates what every node
 * owns), which the saved parameters hold too; the last epoch's evaluation
 * read each node's own replicas. */
static void test_local_run_final_quality(void) {
  alarm(bound_s());
  const char *text = "{\"type\":\"mf\",\"rows\":40,\"cols\":40,\"nnz\":400,\"rank\":8,"
                     "\"batch\":4,\"epochs\":2,\"test_fraction\":0.2,\"lr\":0.05}";
  cJSON *wl = parse_json(text);
  cJSON *pol = parse_json("{\"type\": \"replicate\", \"hot_keys\": \"all\", \"syncs_per_sec\": 0}");
  char *dir = unit_temp_dir();
  real_cluster c = test_cluster(10);
  real_run_args a = {.run = {.nodes = 2, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .seed = 5, .params_dir = dir},
                     .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  char path[4096];
  snprintf(path, sizeof path, "%s/params.bin", dir);
  wl_params p;
  CU_ASSERT_EQUAL_FATAL(wl_params_load(path, &p, err, sizeof err), 0);
  double owners = saved_rmse(text, &p, 2, 2);
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(m, "epoch_quality");
  double last = cJSON_GetArrayItem(q, cJSON_GetArraySize(q) - 1)->valuedouble;
  printf("\n    final RMSE %.6f (owners %.6f), last epoch's %.6f", metric(m, "quality"), owners,
         last);
  CU_ASSERT_DOUBLE_EQUAL(metric(m, "quality"), owners, 1e-9);
  CU_ASSERT(fabs(owners - last) > 1e-6);
  wl_params_free(&p);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  unit_remove_tree(dir);
  free(dir);
  alarm(0);
}

static void test_local_runs(void) {
  check_local_run("{\"type\": \"static\", \"fast_local_access\": false}", false);
  check_local_run("{\"type\": \"relocate\", \"lookahead\": 4}", true);
  check_local_run("{\"type\": \"nups\", \"hot_keys\": 20, \"syncs_per_step\": 5}", true);
}

/* Bounded consistency through the run layer, with processes. */
static void test_local_runs_bounded(void) {
  check_local_run_with("{\"type\": \"relocate\", \"lookahead\": 4}", true,
                       "{\"model\": \"bsp\"}", 0);
  check_local_run_with("{\"type\": \"nups\", \"hot_keys\": 20}", true,
                       "{\"model\": \"ssp\", \"staleness\": 2}", 2);
  check_local_run_with("{\"type\": \"static\"}", false,
                       "{\"model\": \"essp\", \"staleness\": 1}", 1);
  check_local_run_with("{\"type\": \"static\"}", false,
                       "{\"model\": \"sparse\", \"staleness\": 1}", 1e9);
}

/* ------------------------------------------------------------- bad frames */

static real_node *pair_node(uint32_t rank, const char *coordinator, kids *tell,
                            const real_cluster *c, char *err, size_t errlen) {
  real_node_config cfg = node_config(rank, 2, 1, NULL, c);
  cfg.coordinator = coordinator;
  cfg.listening = tell ? kids_tell : NULL;
  cfg.listening_ctx = tell;
  return real_node_start(&cfg, err, errlen);
}

/* Node 1 sends rank 0 bytes that are no message, a truncated control
 * message and a data message naming a key that does not exist (sealed and
 * numbered as its core would, so that only its key is wrong); then the run
 * ends normally. */
static int garbage_child(uint32_t rank, const char *coordinator, void *arg) {
  (void)arg;
  real_cluster c = test_cluster(10);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(rank, coordinator, NULL, &c, err, sizeof err);
  if (!n) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  real_node_send(n, 0, (uint8_t *)strdup("not a message at all"), 20);
  real_node_send(n, 0, (uint8_t *)strdup("PSLC\x04"), 5);
  ps_key bad = 999;
  uint32_t pos = 0;
  ps_msg m = {.type = PS_MSG_PULL, .src = 1, .origin = 1, .key_count = 1,
              .seq = ps_node_claim_seq(real_node_core(n), 0),
              .keys = (const uint8_t *)&bad, .pos = (const uint8_t *)&pos};
  size_t len = ps_msg_encoded_len(1, 0);
  uint8_t *buf = malloc(len);
  ps_msg_encode(&m, buf, len);
  ps_msg_put_seal(buf, len, n->secret, n->seal);
  real_node_send(n, 0, buf, len);
  int rc = real_node_barrier(n, "garbage sent", c.timeout_s);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK) rc = real_node_finish(n);
  if (rc != PS_OK && real_node_failed(n, err, sizeof err)) fprintf(stderr, "%s\n", err);
  real_node_free(n);
  return rc == PS_OK ? 0 : 1;
}

/* A process that is no node of the run sends rank 0 a frame. */
static void send_foreign_frame(const char *endpoint) {
  void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 2000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s, ZMQ_ROUTING_ID, "intruder", 8);
  zmq_connect(s, endpoint);
  zmq_send(s, "hello?", 6, 0);
  zmq_close(s);
  zmq_ctx_term(ctx); /* returns once the frame is delivered */
}

static void test_bad_frames_are_dropped(void) {
  alarm(bound_s());
  kids ks;
  kids_spawn(&ks, 2, garbage_child, NULL);
  real_cluster c = test_cluster(10);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(0, NULL, &ks, &c, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  send_foreign_frame(n->endpoint);
  CU_ASSERT_EQUAL(real_node_barrier(n, "garbage sent", c.timeout_s), PS_OK);
  CU_ASSERT_EQUAL(real_node_quiesce(n), PS_OK);
  real_node_stats st;
  real_node_get_stats(n, &st);
  CU_ASSERT_EQUAL(st.dropped, 3); /* two that do not decode, one the core refused */
  CU_ASSERT_EQUAL(st.stray, 1);
  ps_node_stats core;
  ps_node_get_stats(real_node_core(n), &core);
  CU_ASSERT_EQUAL(core.bad_messages, 2);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
  alarm(0);
}

/* ---------------------------------------------- who reads the ROUTER */

/* Two worker threads of node 0 each push to every key homed at node 1,
 * FLOOD_PUSHES at a time before waiting for any (the acks pile up: more
 * than a batch of the receiver's reads), and wait for them in both orders.
 * A waiting worker reads the node's ROUTER itself, hands it to the other
 * waiting worker or back to the receiver (real/leader.c): every ack must
 * reach its worker exactly once, and every push must be applied once. */
#define FLOOD_PUSHES 300
#define FLOOD_ROUNDS 4

typedef struct {
  real_node *node;
  uint32_t index;
  int status;
} flood_worker;

static ps_key flood_key(uint32_t i) {
  ps_layout l = {.num_tables = 1, .num_nodes = 2};
  l.tables[0] = (ps_table){0, 16, 2};
  for (ps_key k = 0;; k = (k + 1) % 16)
    if (ps_layout_home(&l, k) == 1 && i-- == 0) return k;
}

static void *flood_main(void *arg) {
  flood_worker *fw = arg;
  ps_worker *w = ps_node_worker(real_node_core(fw->node), fw->index);
  static const float one[2] = {1, 0};
  ps_ticket *t = calloc(FLOOD_PUSHES, sizeof *t);
  int *rc = calloc(FLOOD_PUSHES, sizeof *rc);
  for (int round = 0; round < FLOOD_ROUNDS && fw->status == PS_OK; round++) {
    for (uint32_t i = 0; i < FLOOD_PUSHES; i++) {
      ps_key k = flood_key(i % 4);
      rc[i] = ps_push(w, &k, 1, one, 2, &t[i], real_node_now(fw->node));
    }
    for (uint32_t j = 0; j < FLOOD_PUSHES && fw->status == PS_OK; j++) {
      uint32_t i = round % 2 ? FLOOD_PUSHES - 1 - j : j; /* last first, every other round */
      if (rc[i] == PS_PENDING) rc[i] = real_node_wait(fw->node, w, t[i]);
      if (rc[i] != PS_OK) fw->status = rc[i];
    }
  }
  free(t);
  free(rc);
  return NULL;
}

/* A passive child's end (n NULL: it could not start): waits at `barrier`
 * for the other node's operations, quiesces, runs `between` (if any),
 * finishes and frees n; 0, or 1 with the error on stderr. */
static int passive_end(real_node *n, const char *barrier, double timeout_s,
                       int (*between)(real_node *), char *err, size_t errlen) {
  int rc = n ? real_node_barrier(n, barrier, timeout_s) : PS_ERR_PEER;
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK && between) rc = between(n);
  if (rc == PS_OK) rc = real_node_finish(n);
  if (rc != PS_OK) {
    if (n) real_node_failed(n, err, errlen);
    fprintf(stderr, "%s\n", err);
  }
  real_node_free(n);
  return rc == PS_OK ? 0 : 1;
}

static int flood_child(uint32_t rank, const char *coordinator, void *arg) {
  (void)arg;
  real_cluster c = test_cluster(10);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(rank, coordinator, NULL, &c, err, sizeof err);
  return passive_end(n, "pushes done", c.timeout_s, NULL, err, sizeof err);
}

static void test_waiting_workers_read_the_router(void) {
  alarm(bound_s());
  kids ks;
  kids_spawn(&ks, 2, flood_child, NULL);
  real_cluster c = test_cluster(10);
  real_node_config cfg = node_config(0, 2, 2, NULL, &c);
  cfg.listening = kids_tell;
  cfg.listening_ctx = &ks;
  char err[REAL_ERROR_MAX];
  real_node *n = real_node_start(&cfg, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  flood_worker fw[2] = {{n, 0, PS_OK}, {n, 1, PS_OK}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, flood_main, &fw[i]);
  for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
  CU_ASSERT_EQUAL(fw[0].status, PS_OK);
  CU_ASSERT_EQUAL(fw[1].status, PS_OK);
  /* Each push applied once: the four keys hold every push between them. */
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  float sum = 0;
  for (uint32_t i = 0; i < 4; i++) {
    ps_key k = flood_key(i);
    float v[2] = {0};
    ps_ticket t;
    int rc = ps_pull(w, &k, 1, v, 2, &t, real_node_now(n));
    if (rc == PS_PENDING) rc = real_node_wait(n, w, t);
    CU_ASSERT_EQUAL(rc, PS_OK);
    sum += v[0];
  }
  CU_ASSERT_EQUAL(sum, 2.0f * FLOOD_ROUNDS * FLOOD_PUSHES);
  CU_ASSERT_EQUAL(real_node_barrier(n, "pushes done", c.timeout_s), PS_OK);
  CU_ASSERT_EQUAL(real_node_quiesce(n), PS_OK); /* sent and received counts balance */
  real_node_stats st;
  real_node_get_stats(n, &st);
  CU_ASSERT_EQUAL(st.dropped, 0);
  CU_ASSERT_EQUAL(st.stray, 0);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
  alarm(0);
}

/* ------------------------------------------------------------- seals */

/* Node 1 under PSLAB_SEAL = arg (NULL: unset): it must end with the seal
 * node 0 chose (its exit status 3 if not), pull a key homed at node 0 and
 * end with it. */
typedef struct {
  const char *env;
  ps_seal expect;
} seal_case;

static ps_key key_homed(real_node *n, uint32_t home) {
  const ps_layout *l = ps_node_layout(real_node_core(n));
  for (ps_key k = 0;; k++)
    if (ps_layout_home(l, k) == home) return k;
}

static int pull_from(real_node *n, uint32_t home) {
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  ps_key k = key_homed(n, home);
  float v[2];
  ps_ticket t;
  int rc = ps_pull(w, &k, 1, v, 2, &t, real_node_now(n));
  return rc == PS_PENDING ? real_node_wait(n, w, t) : rc;
}

static int seal_child(uint32_t rank, const char *coordinator, void *arg) {
  const seal_case *sc = arg;
  if (sc->env) setenv(RUN_SEAL_ENV, sc->env, 1);
  else unsetenv(RUN_SEAL_ENV);
  real_cluster c = test_cluster(10);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(rank, coordinator, NULL, &c, err, sizeof err);
  if (n && n->seal != sc->expect) {
    fprintf(stderr, "node 1 seals with %s, not %s\n", ps_seal_name(n->seal),
            ps_seal_name(sc->expect));
    return 3;
  }
  if (n && pull_from(n, 0) != PS_OK) return 4;
  return passive_end(n, "pulled", c.timeout_s, NULL, err, sizeof err);
}

/* Node 0 under PSLAB_SEAL = env0 and node 1 under child->env: both end
 * with the seal `expect` and pull from each other. */
static void check_seal_pair(const char *env0, seal_case *child) {
  kids ks;
  kids_spawn(&ks, 2, seal_child, child);
  if (env0) setenv(RUN_SEAL_ENV, env0, 1);
  real_cluster c = test_cluster(10);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(0, NULL, &ks, &c, err, sizeof err);
  unsetenv(RUN_SEAL_ENV);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  CU_ASSERT_EQUAL(n->seal, child->expect);
  CU_ASSERT_EQUAL(pull_from(n, 1), PS_OK);
  CU_ASSERT_EQUAL(real_node_barrier(n, "pulled", c.timeout_s), PS_OK);
  CU_ASSERT_EQUAL(real_node_quiesce(n), PS_OK);
  ps_node_stats core;
  ps_node_get_stats(real_node_core(n), &core);
  CU_ASSERT_EQUAL(core.bad_seals, 0);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
}

/* Rank 0 chooses the seal and hands it over with the secret: GMAC when
 * every node offers it, SipHash when one does not (here node 1, told so by
 * PSLAB_SEAL); a forced GMAC that node 1 does not offer fails the start-up
 * on both, naming the variable. */
static void test_rank0_chooses_the_seal(void) {
  alarm(bound_s());
  bool gmac = ps_seal_gmac_available();
  seal_case both = {NULL, gmac ? PS_SEAL_GMAC : PS_SEAL_SIPHASH};
  check_seal_pair(NULL, &both);
  seal_case refuses = {"siphash", PS_SEAL_SIPHASH};
  check_seal_pair(NULL, &refuses);
  if (gmac) {
    kids ks;
    kids_spawn(&ks, 2, seal_child, &refuses);
    setenv(RUN_SEAL_ENV, "gmac", 1);
    real_cluster c = test_cluster(10);
    char err[REAL_ERROR_MAX] = "";
    real_node *n = pair_node(0, NULL, &ks, &c, err, sizeof err);
    unsetenv(RUN_SEAL_ENV);
    CU_ASSERT_PTR_NULL(n);
    CU_ASSERT_TRUE(unit_contains(err, "PSLAB_SEAL=gmac"));
    real_node_free(n);
    kids_wait(&ks, c.timeout_s + 5);
    CU_ASSERT_NOT_EQUAL(ks.k[1].status, 0);
    CU_ASSERT_TRUE(unit_contains(ks.k[1].text, "PSLAB_SEAL=gmac"));
  }
  alarm(0);
}

/* ------------------------------------------------------------ stragglers */

/* Node 1 is a straggler whose phase starts at `from_s` (run time) and lasts
 * to the end: its server at half speed, its link at half bandwidth. Rank 0
 * (not slowed) pulls every key, which includes keys homed at node 1, PULLS
 * times; then both nodes tell their throttle counters through a
 * collective. */
#define STRAGGLER_PULLS 20

static real_cluster straggler_cluster(const run_phase *phase, real_straggler *slow) {
  real_cluster c = test_cluster(10);
  *slow = (real_straggler){.node = 1, .phases = phase, .n_phases = 1};
  c.stragglers = slow;
  c.n_stragglers = 1;
  return c;
}

/* Every node's (throttled, throttle_ns) in rank order: 16 bytes each. */
static void *decide_throttles(void *ctx, uint32_t size, const void *const *in,
                              const size_t *len, size_t *out_len) {
  (void)ctx;
  uint8_t *all = calloc(size, 16);
  for (uint32_t r = 0; all && r < size; r++)
    if (len[r] == 16) memcpy(all + 16 * r, in[r], 16);
  *out_len = all ? 16 * (size_t)size : 0;
  return all;
}

static int tell_throttle(real_node *n, uint64_t out[4]) {
  real_node_stats st;
  real_node_get_stats(n, &st);
  uint64_t mine[2] = {st.throttled, (uint64_t)(st.throttle_s * 1e9)};
  void *all = NULL;
  size_t len = 0;
  int rc = real_node_collective(n, "throttles", mine, sizeof mine, n->cluster.timeout_s,
                                decide_throttles, NULL, &all, &len);
  if (rc == PS_OK && len == 4 * sizeof(uint64_t) && out) memcpy(out, all, len);
  free(all);
  return rc;
}

static int tell_throttle_only(real_node *n) { return tell_throttle(n, NULL); }

static int straggler_child(uint32_t rank, const char *coordinator, void *arg) {
  real_straggler slow;
  real_cluster c = straggler_cluster(arg, &slow);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(rank, coordinator, NULL, &c, err, sizeof err);
  return passive_end(n, "pulls done", c.timeout_s, tell_throttle_only, err, sizeof err);
}

/* counts: node 0's throttled messages and ns, then node 1's. */
static void run_straggler_pair(run_phase *phase, uint64_t counts[4]) {
  kids ks;
  kids_spawn(&ks, 2, straggler_child, phase);
  real_straggler slow;
  real_cluster c = straggler_cluster(phase, &slow);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(0, NULL, &ks, &c, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  ps_key keys[16];
  float out[32];
  for (int k = 0; k < 16; k++) keys[k] = (ps_key)k;
  for (int i = 0; i < STRAGGLER_PULLS; i++) {
    ps_ticket t;
    int rc = ps_pull(w, keys, 16, out, 32, &t, real_node_now(n));
    if (rc == PS_PENDING) rc = real_node_wait(n, w, t);
    CU_ASSERT_EQUAL(rc, PS_OK);
  }
  CU_ASSERT_EQUAL(real_node_barrier(n, "pulls done", c.timeout_s), PS_OK);
  CU_ASSERT_EQUAL(real_node_quiesce(n), PS_OK);
  CU_ASSERT_EQUAL(tell_throttle(n, counts), PS_OK);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
}

/* The throttle applies inside a phase and only there, and only on the
 * straggler: counted, not timed (no assertion on how long anything took). */
static void test_straggler_throttle(void) {
  alarm(bound_s());
  /* Inside the phase: node 1's server handled every pull slowed (and its
   * replies crossed a slowed link); node 0 is no straggler. */
  run_phase now = {.from_s = 0, .until_s = INFINITY, .speed_factor = 0.5,
                   .bandwidth_factor = 0.5};
  uint64_t in[4] = {0};
  run_straggler_pair(&now, in);
  CU_ASSERT_EQUAL(in[0], 0);
  CU_ASSERT_EQUAL(in[1], 0);
  CU_ASSERT(in[2] >= STRAGGLER_PULLS);
  CU_ASSERT(in[3] > 0);
  /* A phase that starts after the run: nothing is throttled. */
  run_phase later = now;
  later.from_s = 1e6;
  uint64_t out[4] = {1, 1, 1, 1};
  run_straggler_pair(&later, out);
  CU_ASSERT_EQUAL(out[0], 0);
  CU_ASSERT_EQUAL(out[2], 0);
  CU_ASSERT_EQUAL(out[3], 0);
  alarm(0);
}

/* The start release's clock: a node of rank 0's boot takes rank 0's t0 (in
 * the past, so its times and rank 0's are of one clock); another boot, a t0
 * in the future or absurdly far back, or a reply of the wrong size, gives
 * the node its own now. */
static void test_start_clock_shared_by_one_boot(void) {
  size_t len = 0;
  real_start_clock_msg *c = real_start_clock(&len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(len, sizeof *c);
  double after = real_clock();
  if (c->boot[0]) { /* a kernel that tells its boot */
    CU_ASSERT_EQUAL(real_start_t0(c, len), c->t0);
    CU_ASSERT(c->t0 <= after);
  }
  real_start_clock_msg other = *c;
  other.boot[0] = other.boot[0] == 'x' ? 'y' : 'x';
  CU_ASSERT(real_start_t0(&other, len) >= after);
  real_start_clock_msg future = *c;
  future.t0 = real_clock() + 5;
  CU_ASSERT(real_start_t0(&future, len) < future.t0);
  real_start_clock_msg old = *c;
  old.t0 = real_clock() - 120;
  CU_ASSERT(real_start_t0(&old, len) >= after);
  CU_ASSERT(real_start_t0(c, len - 1) >= after);
  CU_ASSERT(real_start_t0(NULL, 0) >= after);
  memset(other.boot, 'z', sizeof other.boot); /* no terminator: read as cut */
  CU_ASSERT(real_start_t0(&other, len) >= after);
  free(c);
}

/* Through a whole run: the metrics say how much the emulation did, and a
 * run without stragglers has none of them. */
static void test_straggler_metrics(void) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 200, \"value_length\": 8, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 2, "
                         "\"steps_per_worker\": 60, \"flops_per_step\": 1e4}");
  cJSON *pol = parse_json("{\"type\": \"static\"}");
  run_phase phase = {.from_s = 0, .until_s = INFINITY, .speed_factor = 0.25,
                     .bandwidth_factor = 0.25};
  real_straggler slow;
  real_cluster c = straggler_cluster(&phase, &slow);
  real_run_args a = {.run = {.nodes = 2, .workers_per_node = 1, .workload = wl, .policy = pol,
                             .seed = 3}, .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT(metric(m, "throttled_messages") > 0);
  CU_ASSERT(metric(m, "throttle_s") > 0);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  cJSON_Delete(m);
  c.n_stragglers = 0;
  m = real_run_local(&a, err, sizeof err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "throttled_messages"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "throttle_s"));
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  alarm(0);
}

/* --------------------------------------------------------- authentication */

static real_curve_key test_key(void) {
  real_curve_key k;
  char err[256];
  CU_ASSERT_FATAL(real_curve_keygen(&k, err, sizeof err) == 0);
  return k;
}

/* Loopback with CURVE forced on: the cluster's key in memory. */
static real_cluster curve_cluster(const real_curve_key *k) {
  real_cluster c = test_cluster(10);
  c.auth = REAL_AUTH_CURVE;
  c.key = *k;
  return c;
}

/* Which clusters use CURVE: anything that binds beyond loopback unless told
 * "insecure"; loopback only when told "curve". A local launch of a cluster
 * that binds "*" gets a key in memory (it would run with CURVE on); one of
 * loopback gets none. */
static void test_auth_decision(void) {
  static const struct {
    const char *bind;
    real_auth auth;
    int curve;
  } cases[] = {
      {"127.0.0.1", REAL_AUTH_AUTO, 0},     {"127.1.2.3", REAL_AUTH_AUTO, 0},
      {"*", REAL_AUTH_AUTO, 1},             {"0.0.0.0", REAL_AUTH_AUTO, 1},
      {"10.1.2.3", REAL_AUTH_AUTO, 1},      {"198.18.7.1", REAL_AUTH_AUTO, 1},
      {"127.0.0.1", REAL_AUTH_CURVE, 1},    {"127.0.0.1", REAL_AUTH_NONE, 0},
      {"*", REAL_AUTH_NONE, -1},            {"10.1.2.3", REAL_AUTH_NONE, -1},
      {"*", REAL_AUTH_INSECURE, 0},         {"127.0.0.1", REAL_AUTH_INSECURE, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    real_cluster c;
    real_cluster_default(&c);
    snprintf(c.bind, sizeof c.bind, "%s", cases[i].bind);
    c.auth = cases[i].auth;
    char err[512] = "";
    int got = real_auth_uses_curve(&c, err, sizeof err);
    if (got != cases[i].curve)
      fprintf(stderr, "\n  bind %s auth %s: %d, expected %d\n", cases[i].bind,
              real_auth_name(cases[i].auth), got, cases[i].curve);
    CU_ASSERT_EQUAL(got, cases[i].curve);
    CU_ASSERT_EQUAL(got < 0, strstr(err, "\"insecure\"") != NULL);
    CU_ASSERT_EQUAL(real_auth_local_keys(&c, err, sizeof err), got < 0 ? -1 : 0);
    CU_ASSERT_EQUAL(c.key.set, got == 1);
  }
  real_cluster c;
  real_cluster_default(&c);
  CU_ASSERT_EQUAL(c.auth, REAL_AUTH_AUTO);
  snprintf(c.bind, sizeof c.bind, "*");
  snprintf(c.key_file, sizeof c.key_file, "/some/cluster.key");
  char err[512];
  CU_ASSERT_EQUAL(real_auth_local_keys(&c, err, sizeof err), 0);
  CU_ASSERT_FALSE(c.key.set); /* the nodes read the file the spec names */
}

/* Key files: written 0600 and never over an existing file; read back equal;
 * refused when others may read them, or when the halves do not match. */
static void test_key_files(void) {
  char *dir = unit_temp_dir();
  char path[512], err[1024];
  snprintf(path, sizeof path, "%s/cluster.key", dir);
  real_curve_key k = test_key(), back;
  CU_ASSERT_EQUAL(real_key_file_write(path, &k, err, sizeof err), 0);
  struct stat st;
  CU_ASSERT_FATAL(stat(path, &st) == 0);
  CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
  real_curve_key other = test_key();
  CU_ASSERT_EQUAL(real_key_file_write(path, &other, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "never overwritten"));
  CU_ASSERT_EQUAL(real_key_file_read(path, &back, err, sizeof err), 0);
  CU_ASSERT(back.set && strcmp(back.public_key, k.public_key) == 0 &&
            strcmp(back.secret_key, k.secret_key) == 0);
  CU_ASSERT_FATAL(chmod(path, 0644) == 0);
  CU_ASSERT_EQUAL(real_key_file_read(path, &back, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "group or others may read or write it (mode 0644)"));
  CU_ASSERT_FALSE(back.set);
  CU_ASSERT_FATAL(chmod(path, 0600) == 0);
  char text[512];
  snprintf(text, sizeof text, "public %s\nsecret %s\n", other.public_key, k.secret_key);
  snprintf(path, sizeof path, "%s/mixed.key", dir);
  FILE *f = fopen(path, "w");
  CU_ASSERT_FATAL(f != NULL);
  fputs(text, f);
  fclose(f);
  chmod(path, 0600);
  CU_ASSERT_EQUAL(real_key_file_read(path, &back, err, sizeof err), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not the one of its secret key"));
  unit_remove_tree(dir);
  free(dir);
}

/* A node told to use CURVE with a key file others may read does not start:
 * nothing is bound, the message names the file. */
static void test_node_refuses_readable_key_file(void) {
  alarm(bound_s());
  char *dir = unit_temp_dir();
  real_cluster c = test_cluster(5);
  c.auth = REAL_AUTH_CURVE;
  snprintf(c.key_file, sizeof c.key_file, "%s/cluster.key", dir);
  real_curve_key k = test_key();
  char err[REAL_ERROR_MAX] = "";
  CU_ASSERT_EQUAL_FATAL(real_key_file_write(c.key_file, &k, err, sizeof err), 0);
  CU_ASSERT_FATAL(chmod(c.key_file, 0640) == 0);
  real_node_config cfg = node_config(0, 1, 1, NULL, &c);
  real_node *n = real_node_start(&cfg, err, sizeof err);
  CU_ASSERT_PTR_NULL(n);
  real_node_free(n);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, c.key_file));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "mode 0640"));
  CU_ASSERT_FATAL(chmod(c.key_file, 0600) == 0); /* and with 0600 it does */
  n = real_node_start(&cfg, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  CU_ASSERT_TRUE(real_node_secure(n));
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  unit_remove_tree(dir);
  free(dir);
  alarm(0);
}

/* A node's threads carry names that top and perf show: the receiver is
 * "pslab-recv" while the node runs; a name is cut to the kernel's 15
 * characters. */
static void test_node_names_its_threads(void) {
  alarm(bound_s());
  real_cluster c = test_cluster(5);
  char err[REAL_ERROR_MAX] = "";
  real_node_config cfg = node_config(0, 1, 1, NULL, &c);
  CU_ASSERT_EQUAL(real_named_thread("pslab-recv"), 0);
  real_node *n = real_node_start(&cfg, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  CU_ASSERT_NOT_EQUAL(real_named_thread("pslab-recv"), 0);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  CU_ASSERT_EQUAL(real_named_thread("pslab-recv"), 0);
  char old[32] = "";
  FILE *f = fopen("/proc/thread-self/comm", "r");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_PTR_NOT_NULL(fgets(old, sizeof old, f));
  fclose(f);
  old[strcspn(old, "\n")] = '\0';
  real_name_thread(pthread_self(), "abcdefghijklmnopqrstuvwxyz");
  CU_ASSERT_EQUAL(real_named_thread("abcdefghijklmno"), (pid_t)syscall(SYS_gettid));
  real_name_thread(pthread_self(), old);
  alarm(0);
}

/* A key file that is named but not there is an error even on loopback,
 * where no key is needed: the message names the file. */
static void test_node_refuses_missing_key_file(void) {
  alarm(bound_s());
  real_cluster c = test_cluster(5);
  snprintf(c.key_file, sizeof c.key_file, "/nonexistent/cluster.key");
  char err[REAL_ERROR_MAX] = "";
  real_node_config cfg = node_config(0, 1, 1, NULL, &c);
  real_node *n = real_node_start(&cfg, err, sizeof err);
  CU_ASSERT_PTR_NULL(n);
  real_node_free(n);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "key file /nonexistent/cluster.key: cannot open it"));
  alarm(0);
}

/* Node 1 of the intruder test: joins, waits while rank 0 is attacked, ends. */
static int patient_child(uint32_t rank, const char *coordinator, void *arg) {
  const real_cluster *c = arg;
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(rank, coordinator, NULL, c, err, sizeof err);
  if (!n) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int rc = real_node_barrier(n, "intruders gone", c->timeout_s);
  if (rc == PS_OK) rc = real_node_quiesce(n);
  if (rc == PS_OK) rc = real_node_finish(n);
  if (rc != PS_OK && real_node_failed(n, err, sizeof err)) fprintf(stderr, "%s\n", err);
  real_node_free(n);
  return rc == PS_OK ? 0 : 1;
}

typedef enum {
  INTRUDER_PLAIN,        /* no CURVE at all */
  INTRUDER_WRONG_SERVER, /* CURVE, but not knowing the cluster's public key */
  INTRUDER_OWN_KEY       /* CURVE to the right server key, with a key of its own */
} intruder;

/* Blocks until n has refused more than `before` connections (the guard
 * signals the node's condition): false after timeout_s. */
static bool wait_refused(real_node *n, uint64_t before, double timeout_s) {
  double deadline = real_clock() + timeout_s;
  pthread_mutex_lock(&n->lock);
  while (atomic_load(&n->refused) <= before && real_cond_wait_until(n, deadline)) continue;
  bool ok = atomic_load(&n->refused) > before;
  pthread_mutex_unlock(&n->lock);
  return ok;
}

/* A process that is no node of the run connects to rank 0 as node 1 would
 * (node 1's routing id) and sends a well-formed PUSH of 4 floats to key 0;
 * it gives up once rank 0 has refused its connection. */
static void intrude(real_node *n, intruder kind, const real_curve_key *cluster) {
  uint64_t before = atomic_load(&n->refused);
  void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
  uint8_t id[REAL_ID_LEN];
  real_id_encode(1, n->run, id);
  zmq_setsockopt(s, ZMQ_ROUTING_ID, id, sizeof id);
  if (kind != INTRUDER_PLAIN) {
    real_curve_key mine = test_key(), stranger = test_key();
    const char *server = kind == INTRUDER_OWN_KEY ? cluster->public_key : stranger.public_key;
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server, REAL_Z85_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, mine.public_key, REAL_Z85_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, mine.secret_key, REAL_Z85_KEY_LEN);
  }
  zmq_connect(s, n->endpoint);
  ps_key key = 0;
  uint32_t pos = 0;
  float vals[2] = {1000, 1000};
  ps_msg m = {.type = PS_MSG_PUSH, .src = 1, .origin = 1, .key_count = 1,
              .value_floats = 2, .keys = (const uint8_t *)&key,
              .pos = (const uint8_t *)&pos, .values = (const uint8_t *)vals};
  size_t len = ps_msg_encoded_len(1, 2);
  uint8_t buf[256];
  CU_ASSERT_FATAL(len <= sizeof buf && ps_msg_encode(&m, buf, len) > 0);
  zmq_send(s, buf, len, ZMQ_DONTWAIT); /* queued until a handshake that never succeeds */
  CU_ASSERT_TRUE(wait_refused(n, before, 10));
  int linger = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(s);
  zmq_ctx_term(ctx);
}

/* Rank 0's stderr goes to a file while intruders knock. */
static int stderr_to(const char *path) {
  fflush(stderr);
  int saved = dup(STDERR_FILENO), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  dup2(fd, STDERR_FILENO);
  close(fd);
  return saved;
}

static void stderr_back(int saved) {
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
}

static size_t count_lines_with(const char *text, const char *needle) {
  size_t count = 0;
  for (const char *at = text; (at = strstr(at, needle)); at += strlen(needle)) count++;
  return count;
}

/* Two nodes with CURVE on loopback. Three intruders claiming to be node 1
 * send a PUSH: without CURVE, with CURVE but a wrong server key, with the
 * right server key but a key of their own. Each is refused: the node counts
 * it, nothing arrives (no frame received, dropped or stray, the core saw no
 * message), and each refusal is one line on stderr naming the address,
 * however often the intruder reconnected (ZeroMQ retries every 100 ms). The run then ends normally. */
static void test_intruders_are_refused(void) {
  alarm(bound_s());
  real_curve_key key = test_key();
  real_cluster c = curve_cluster(&key);
  kids ks;
  kids_spawn(&ks, 2, patient_child, &c);
  char err[REAL_ERROR_MAX];
  real_node *n = pair_node(0, NULL, &ks, &c, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  CU_ASSERT_TRUE(real_node_secure(n));
  char *dir = unit_temp_dir(), log[512];
  snprintf(log, sizeof log, "%s/stderr", dir);
  int saved = stderr_to(log);
  intrude(n, INTRUDER_PLAIN, &key);
  intrude(n, INTRUDER_PLAIN, &key); /* again: counted, not logged again */
  intrude(n, INTRUDER_WRONG_SERVER, &key);
  intrude(n, INTRUDER_OWN_KEY, &key);
  CU_ASSERT_EQUAL(real_node_barrier(n, "intruders gone", c.timeout_s), PS_OK);
  CU_ASSERT_EQUAL(real_node_quiesce(n), PS_OK);
  stderr_back(saved);
  real_node_stats st;
  real_node_get_stats(n, &st);
  CU_ASSERT(st.refused >= 4);
  CU_ASSERT_EQUAL(st.received, 0);
  CU_ASSERT_EQUAL(st.dropped, 0);
  CU_ASSERT_EQUAL(st.stray, 0);
  ps_node_stats core;
  ps_node_get_stats(real_node_core(n), &core);
  CU_ASSERT_EQUAL(core.bad_messages, 0);
  CU_ASSERT_EQUAL(real_node_finish(n), PS_OK);
  real_node_free(n);
  char *text = unit_slurp(dir, "stderr");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  /* A plain client that sees the mismatch first closes the connection
   * itself: either reason may name it, each at most once per address; and a
   * client gone before its address could be read is logged under "an
   * address already gone" (best effort: getpeername on a closed socket). */
  size_t plain = count_lines_with(text, "from 127.0.0.1: it does not use CURVE"),
         closed = count_lines_with(text, "from 127.0.0.1: it closed the connection before"),
         gone = count_lines_with(text, "from an address already gone: it does not use CURVE") +
                count_lines_with(text, "from an address already gone: it closed the connection"),
         lines = count_lines_with(text, "pslab: node 0 refused a connection from ");
  CU_ASSERT(plain <= 1 && closed <= 1 && gone <= 2 && plain + closed + gone >= 1);
  CU_ASSERT_EQUAL(count_lines_with(text, "its CURVE handshake failed"), 1);
  CU_ASSERT_EQUAL(count_lines_with(text, "from 127.0.0.1: its CURVE key is not this cluster's"),
                  1);
  CU_ASSERT_EQUAL(lines, 2 + plain + closed + gone);
  if (lines != 2 + plain + closed + gone) fprintf(stderr, "\n%s", text);
  free(text);
  unit_remove_tree(dir);
  free(dir);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
  alarm(0);
}

/* A whole run with CURVE forced on loopback: real_run_local makes the key
 * in memory for its nodes; the run's pushes are conserved. */
static void test_local_run_with_curve(void) {
  alarm(bound_s());
  cJSON *wl = parse_json("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                         "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                         "\"steps_per_worker\": 150, \"locality\": 0.5}");
  cJSON *pol = parse_json("{\"type\": \"relocate\", \"lookahead\": 4}");
  real_cluster c = test_cluster(10);
  c.auth = REAL_AUTH_CURVE;
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .seed = 9}, .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  if (!m) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  CU_ASSERT_EQUAL(metric(m, "steps"), 3 * 2 * 150);
  CU_ASSERT(metric(m, "pushed_floats") > 0);
  CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
  CU_ASSERT(metric(m, "messages") > 0);
  CU_ASSERT(metric(m, "relocations") > 0);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "bad_messages"));
  CU_ASSERT_FALSE(c.key.set); /* the caller's cluster is left as it was */
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  alarm(0);
}

/* ------------------------------------------------- forged on the wire */

/* An outsider: a process that is no node of the run and holds neither the
 * run's secret nor, under CURVE, the cluster's key, but knows the routing id
 * node 1 uses at node 0 (its rank and the run's number, neither secret).
 *
 * On a plain run it sits in the path: node 1 is given the outsider's
 * address as node 0's, and the outsider relays node 1's frames to node 0
 * under node 1's routing id. Ahead of the first FORGED_AHEAD data messages
 * of each type it sends node 0 a forgery numbered as node 0 takes next on
 * node 1's channel (the real message's number: the number race), its values
 * 1000, its request (ticket or clock) moved by 1000, sealed under a secret
 * of its own; after the first of each type, a replay of it, renumbered as
 * node 0 takes next (its seal left as it was). Once the run has started
 * ("go") it also connects to node 0's real address and sends DIRECT_FORGED
 * messages (PUSH, PULL_REPLY, CLOCK, TRANSFER) numbered as node 0 takes
 * next, once under node 1's routing id (which node 1's connection holds)
 * and once under a routing id of its own.
 *
 * Under CURVE it cannot sit in the path; on "go" it connects to node 0 as
 * node 1, as a CURVE client with the cluster's public key and a key of its
 * own, sends the same DIRECT_FORGED messages and says whether its handshake
 * was refused. */
#define FORGED_AHEAD 3
#define DIRECT_FORGED 4

static const uint8_t direct_types[DIRECT_FORGED] = {PS_MSG_PUSH, PS_MSG_PULL_REPLY,
                                                    PS_MSG_CLOCK, PS_MSG_TRANSFER};

typedef struct {
  kid k;  /* its process (addr unused) */
  int ch; /* a socket pair: node 0's address and "go" to it, its answers back, EOF: stop */
} outsider;

typedef struct {
  bool curve;
  real_curve_key cluster; /* under CURVE: the cluster's key, of which it uses the public half */
} outsider_args;

/* A copy of m numbered seq with values 1000 and request + 1000, sealed under
 * a secret that is not the run's (malloc'd, *len bytes), or NULL. */
static uint8_t *forge_like(const ps_msg *m, uint32_t seq, size_t *len) {
  ps_msg f = *m;
  float *vals = calloc(f.value_floats + 1, sizeof *vals);
  uint8_t stranger[PS_SECRET_LEN];
  memset(stranger, 0x5a, sizeof stranger);
  for (uint32_t i = 0; vals && i < f.value_floats; i++) vals[i] = 1000;
  f.values = f.value_floats ? (const uint8_t *)vals : NULL;
  f.request += 1000;
  f.seq = seq;
  *len = ps_msg_encoded_len(f.key_count, f.value_floats);
  uint8_t *buf = vals ? malloc(*len) : NULL;
  if (buf && ps_msg_encode(&f, buf, *len) > 0) {
    ps_msg_put_seal(buf, *len, stranger, PS_SEAL_SIPHASH);
  } else {
    free(buf);
    buf = NULL;
  }
  free(vals);
  return buf;
}

/* Sends s one forgery of each direct type from node 1 to node 0, numbered seq. */
static void send_direct(void *s, uint32_t seq) {
  ps_key key = 0;
  uint32_t pos = 0;
  float vals[4] = {0};
  for (int i = 0; i < DIRECT_FORGED; i++) {
    bool has = ps_msg_type_has_values(direct_types[i]);
    ps_msg m = {.type = direct_types[i], .src = 1, .dst = 0, .origin = 1,
                .key_count = has ? 1 : 0, .value_floats = has ? 4 : 0,
                .keys = (const uint8_t *)&key, .pos = (const uint8_t *)&pos,
                .values = (const uint8_t *)vals};
    size_t len;
    uint8_t *buf = forge_like(&m, seq, &len);
    if (buf) zmq_send(s, buf, len, ZMQ_DONTWAIT);
    free(buf);
  }
}

static void *dealer_as(void *ctx, const void *id, size_t id_len, int linger_ms) {
  void *s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  zmq_setsockopt(s, ZMQ_ROUTING_ID, id, id_len);
  zmq_setsockopt(s, ZMQ_LINGER, &linger_ms, sizeof linger_ms);
  zmq_setsockopt(s, ZMQ_SNDHWM, &zero, sizeof zero);
  return s;
}

/* Plain: the direct forgeries, as node 1 and as itself; returns once they
 * have left (or 2 s passed). */
static void direct_plain(const char *endpoint, uint32_t seq) {
  uint8_t id[REAL_ID_LEN];
  real_id_encode(1, 1, id);
  void *ctx = zmq_ctx_new();
  void *as_node_1 = dealer_as(ctx, id, sizeof id, 2000),
       *as_itself = dealer_as(ctx, "outsider", 8, 2000);
  zmq_connect(as_node_1, endpoint);
  zmq_connect(as_itself, endpoint);
  send_direct(as_node_1, seq);
  send_direct(as_itself, seq);
  zmq_close(as_node_1);
  zmq_close(as_itself);
  zmq_ctx_term(ctx); /* returns once the frames are delivered */
}

/* CURVE: the direct forgeries as node 1 with a key of its own; whether its
 * handshake failed (waiting at most timeout_s for the verdict). */
static bool direct_curve(const char *endpoint, const real_curve_key *cluster,
                         double timeout_s) {
  uint8_t id[REAL_ID_LEN];
  real_id_encode(1, 1, id);
  real_curve_key mine;
  char err[256];
  if (real_curve_keygen(&mine, err, sizeof err) != 0) return false;
  void *ctx = zmq_ctx_new(), *s = dealer_as(ctx, id, sizeof id, 0);
  zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, cluster->public_key, REAL_Z85_KEY_LEN);
  zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, mine.public_key, REAL_Z85_KEY_LEN);
  zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, mine.secret_key, REAL_Z85_KEY_LEN);
  zmq_socket_monitor(s, "inproc://outsider", ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH);
  void *mon = zmq_socket(ctx, ZMQ_PAIR);
  zmq_connect(mon, "inproc://outsider");
  zmq_connect(s, endpoint);
  send_direct(s, 1); /* queued until a handshake that never succeeds */
  int event = -1;
  double deadline = real_clock() + timeout_s;
  while (event < 0 && real_clock() < deadline) {
    zmq_pollitem_t it = {.socket = mon, .events = ZMQ_POLLIN};
    if (zmq_poll(&it, 1, (long)ceil((deadline - real_clock()) * 1000)) > 0)
      event = real_monitor_event(mon);
  }
  zmq_socket_monitor(s, NULL, 0);
  zmq_close(mon);
  zmq_close(s);
  zmq_ctx_term(ctx);
  return event >= 0 && event != ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
}

/* The relay of a plain run: node 1 connects to front, back is node 1 at
 * node 0. */
typedef struct {
  void *front, *back;
  uint32_t next_seq;               /* node 0's next number on node 1's channel */
  uint32_t ahead[PS_MSG_TYPE_END]; /* forgeries sent ahead, by type */
  uint32_t replayed;               /* replays sent */
  bool replay_done[PS_MSG_TYPE_END];
} relay;

/* After the first real message of each type: the same bytes, numbered as
 * node 0 takes next. */
static void replay(relay *r, const ps_msg *m, const void *real, size_t len) {
  uint8_t *copy = r->replay_done[m->type] ? NULL : malloc(len);
  if (!copy) return;
  memcpy(copy, real, len);
  ps_msg_put_dst_seq(copy, 0, m->seq + 1);
  r->replay_done[m->type] = true;
  if (zmq_send(r->back, copy, len, 0) == (int)len) r->replayed++;
  free(copy);
}

/* Relays one frame of node 1's, with a forgery ahead of it and a replay
 * behind; false when none is waiting. */
static bool relay_one(relay *r) {
  zmq_msg_t id, body;
  zmq_msg_init(&id);
  zmq_msg_init(&body);
  bool got = zmq_msg_recv(&id, r->front, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&id) &&
             zmq_msg_recv(&body, r->front, 0) >= 0;
  ps_msg m;
  size_t real_len = zmq_msg_size(&body), len;
  bool data = got && ps_msg_decode(zmq_msg_data(&body), real_len, &m) == PS_OK;
  uint8_t *real = data && !r->replay_done[m.type] ? malloc(real_len) : NULL;
  if (data) {
    r->next_seq = m.seq + 1;
    uint8_t *f = r->ahead[m.type] < FORGED_AHEAD ? forge_like(&m, m.seq, &len) : NULL;
    if (f && zmq_send(r->back, f, len, 0) == (int)len) r->ahead[m.type]++;
    free(f);
  }
  if (real) memcpy(real, zmq_msg_data(&body), real_len);
  if (got) zmq_msg_send(&body, r->back, 0);
  if (real && ps_msg_decode(real, real_len, &m) == PS_OK) replay(r, &m, real, real_len);
  free(real);
  zmq_msg_close(&body);
  zmq_msg_close(&id);
  return got;
}

/* Opens the relay's front on a free port of loopback and tells the parent
 * "HOST:PORT"; then takes node 0's address and connects back to it. */
static bool relay_open(void *ctx, relay *r, int ch, char *node_0, size_t n) {
  uint8_t id[REAL_ID_LEN];
  real_id_encode(1, 1, id);
  r->front = zmq_socket(ctx, ZMQ_ROUTER);
  r->back = dealer_as(ctx, id, sizeof id, 0);
  char ep[REAL_ENDPOINT_MAX], line[REAL_ENDPOINT_MAX];
  size_t len = sizeof ep;
  if (zmq_bind(r->front, "tcp://127.0.0.1:*") != 0 ||
      zmq_getsockopt(r->front, ZMQ_LAST_ENDPOINT, ep, &len) != 0)
    return false;
  int k = snprintf(line, sizeof line, "%s\n", ep + strlen("tcp://"));
  if (send(ch, line, (size_t)k, MSG_NOSIGNAL) != k || !read_line(ch, node_0, n, bound_s()))
    return false;
  snprintf(ep, sizeof ep, "tcp://%s", node_0);
  return zmq_connect(r->back, ep) == 0;
}

/* The plain outsider: relays and forges until the parent closes ch; what it
 * sent goes to stderr ("forged N, replayed R: TYPE=forgeries ahead ..."). */
static int outsider_relay(int ch) {
  void *ctx = zmq_ctx_new();
  relay r = {.next_seq = 1};
  char node_0[REAL_HOST_MAX], ep[REAL_ENDPOINT_MAX], buf[16];
  bool ok = relay_open(ctx, &r, ch, node_0, sizeof node_0), done = false;
  snprintf(ep, sizeof ep, "tcp://%s", node_0);
  while (ok && !done) {
    zmq_pollitem_t it[2] = {{.socket = r.front, .events = ZMQ_POLLIN},
                            {.fd = ch, .events = ZMQ_POLLIN}};
    ok = zmq_poll(it, 2, (long)bound_s() * 1000) > 0;
    while (ok && relay_one(&r)) continue;
    if (!ok || !(it[1].revents & ZMQ_POLLIN)) continue;
    ssize_t got = read(ch, buf, sizeof buf);
    done = got <= 0;
    if (got > 0) { /* "go": the run has started */
      direct_plain(ep, r.next_seq);
      ok = send(ch, "sent\n", 5, MSG_NOSIGNAL) == 5;
    }
  }
  uint32_t total = 0;
  for (int t = 0; t < PS_MSG_TYPE_END; t++) total += r.ahead[t];
  fprintf(stderr, "forged %u, replayed %u:", total, r.replayed);
  for (int t = 0; t < PS_MSG_TYPE_END; t++)
    if (r.ahead[t]) fprintf(stderr, " %s=%u", ps_msg_type_name(t), r.ahead[t]);
  fprintf(stderr, "\n");
  zmq_close(r.front);
  zmq_close(r.back);
  zmq_ctx_term(ctx);
  return ok && done ? 0 : 1;
}

/* The CURVE outsider: on "go", knocks as node 1 and answers "refused" or
 * "admitted"; then waits for the parent to close ch. */
static int outsider_curve(int ch, const real_curve_key *cluster) {
  char node_0[REAL_HOST_MAX], go[16], ep[REAL_ENDPOINT_MAX];
  if (!read_line(ch, node_0, sizeof node_0, bound_s()) ||
      !read_line(ch, go, sizeof go, bound_s()))
    return 1;
  snprintf(ep, sizeof ep, "tcp://%s", node_0);
  const char *answer = direct_curve(ep, cluster, 10) ? "refused\n" : "admitted\n";
  if (send(ch, answer, strlen(answer), MSG_NOSIGNAL) != (ssize_t)strlen(answer)) return 1;
  read_line(ch, go, sizeof go, bound_s()); /* EOF: the run is over */
  return 0;
}

/* Forks the outsider (before any ZeroMQ context exists here). */
static void outsider_spawn(outsider *o, const outsider_args *oa) {
  int ch[2], life[2], err[2];
  CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, ch) == 0 && pipe(life) == 0 &&
                  pipe(err) == 0);
  fflush(NULL);
  pid_t pid = fork();
  CU_ASSERT_FATAL(pid >= 0);
  if (pid == 0) {
    close(ch[0]);
    close(life[0]);
    close(err[0]);
    dup2(err[1], STDERR_FILENO);
    close(err[1]);
    int rc = oa->curve ? outsider_curve(ch[1], &oa->cluster) : outsider_relay(ch[1]);
    fflush(NULL);
    _exit(rc);
  }
  close(ch[1]);
  close(life[1]);
  close(err[1]);
  *o = (outsider){.k = {.pid = pid, .addr = -1, .life = life[0], .err = err[0]}, .ch = ch[0]};
}

/* Rank 0's hooks: node 0's address to the outsider (and, when it is not in
 * the path, to node 1); "go" once the run has started, and its answer,
 * before node 0's workers start. */
typedef struct {
  kids *ks;
  outsider *o;
  bool relay;
  char answer[32];
} forge_hooks;

static void forge_listening(void *ctx, const char *host_port) {
  forge_hooks *h = ctx;
  char line[REAL_HOST_MAX + 2];
  int len = snprintf(line, sizeof line, "%s\n", host_port);
  ssize_t sent = send(h->o->ch, line, (size_t)len, MSG_NOSIGNAL);
  (void)sent;
  if (!h->relay) kids_tell(h->ks, host_port);
}

static void forge_started(void *ctx) {
  forge_hooks *h = ctx;
  if (send(h->o->ch, "go\n", 3, MSG_NOSIGNAL) != 3 ||
      !read_line(h->o->ch, h->answer, sizeof h->answer, bound_s()))
    snprintf(h->answer, sizeof h->answer, "(no answer)");
}

/* The run under attack: 2 nodes of 2 workers, relocations (TRANSFERs) and
 * BSP (CLOCKs); hooks only on rank 0. */
static cJSON *forge_run(const real_cluster *c, uint32_t rank, const char *coordinator,
                        forge_hooks *h, char *err, size_t errlen) {
  cJSON *wl = cJSON_Parse("{\"type\": \"zipf\", \"keys\": 300, \"value_length\": 4, "
                          "\"reads_per_step\": 4, \"writes_per_step\": 3, "
                          "\"steps_per_worker\": 150, \"locality\": 0.5}"),
        *pol = cJSON_Parse("{\"type\": \"relocate\", \"lookahead\": 4}"),
        *cons = cJSON_Parse("{\"model\": \"bsp\"}");
  real_run_args a = {.run = {.nodes = 2, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .consistency = cons, .seed = 13}, .host_speed = 1e9, .cluster = c,
                     .run_number = 1, .rank = rank, .coordinator = coordinator};
  if (h) {
    a.listening = forge_listening;
    a.started = forge_started;
    a.hook_ctx = h;
  }
  cJSON *m = real_run_node(&a, err, errlen);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  return m;
}

static int forge_child(uint32_t rank, const char *coordinator, void *arg) {
  char err[REAL_ERROR_MAX];
  cJSON *m = forge_run(arg, rank, coordinator, NULL, err, sizeof err);
  if (!m) fprintf(stderr, "pslab node %u: %s\n", rank, err);
  cJSON_Delete(m);
  return m ? 0 : 1;
}

/* Plain: every forgery ahead of a real message, and every replay, reached
 * node 0's core under node 1's routing id and was refused for its seal
 * without taking the real one's number; the direct ones never reached the
 * core: under node 1's routing id, held by node 1's connection, ZeroMQ
 * passes on nothing (a ROUTER without ZMQ_ROUTER_HANDOVER rejects a client
 * whose routing id is in use), and under the outsider's own they are
 * dropped as from no node of the run. */
static void check_plain_forgeries(const cJSON *m, const forge_hooks *h, const char *said) {
  unsigned forged = 0, replayed = 0;
  const char *at = strstr(said, "forged ");
  if (!at || sscanf(at, "forged %u, replayed %u:", &forged, &replayed) != 2) {
    CU_FAIL("the outsider did not say what it sent");
    return;
  }
  CU_ASSERT_STRING_EQUAL(h->answer, "sent");
  CU_ASSERT(forged >= 4 && replayed >= 4);
  static const char *const types[] = {" PUSH=", " PULL_REPLY=", " CLOCK=", " TRANSFER="};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (!unit_contains(at, types[i])) {
      fprintf(stderr, "\n  no forgery ahead of a%s message: %s", types[i], at);
      CU_FAIL("a message type went unforged");
    }
  CU_ASSERT_EQUAL(metric(m, "bad_seals"), forged + replayed);
  CU_ASSERT_EQUAL(metric(m, "bad_messages"), forged + replayed + DIRECT_FORGED);
}

/* A whole run with an outsider forging node 1's messages (see above): it
 * ends, every push is applied once and the forgeries are counted (plain),
 * or the outsider is refused and nothing of it is counted (CURVE). */
static void check_forged_on_the_wire(bool curve) {
  alarm(bound_s());
  outsider_args oa = {.curve = curve};
  if (curve) oa.cluster = test_key();
  real_cluster c = curve ? curve_cluster(&oa.cluster) : test_cluster(10);
  kids ks;
  kids_spawn(&ks, 2, forge_child, &c);
  outsider o;
  outsider_spawn(&o, &oa);
  forge_hooks h = {.ks = &ks, .o = &o, .relay = !curve};
  char front[REAL_HOST_MAX];
  if (!curve) {
    CU_ASSERT_FATAL(read_line(o.ch, front, sizeof front, bound_s()));
    kids_tell(&ks, front); /* node 1's way to node 0 is through the outsider */
  }
  char *dir = unit_temp_dir(), log[512], err[REAL_ERROR_MAX] = "";
  snprintf(log, sizeof log, "%s/stderr", dir);
  int saved = stderr_to(log);
  cJSON *m = forge_run(&c, 0, NULL, &h, err, sizeof err);
  stderr_back(saved);
  close(o.ch); /* the run is over: the outsider ends */
  kid_wait(&o.k, "the outsider", real_clock() + c.timeout_s);
  kids_wait(&ks, c.timeout_s + 5);
  char *text = unit_slurp(dir, "stderr");
  if (!m) fprintf(stderr, "\n  %s\n%s", err, text ? text : "");
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
  CU_ASSERT_TRUE(kid_ok(&o.k));
  if (m) {
    CU_ASSERT_EQUAL(metric(m, "steps"), 2 * 2 * 150);
    CU_ASSERT(metric(m, "pushed_floats") > 0);
    CU_ASSERT_EQUAL(metric(m, "value_sum"), metric(m, "pushed_floats"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "duplicates"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "out_of_sequence"));
    if (!curve) check_plain_forgeries(m, &h, o.k.text);
  }
  if (m && curve) {
    CU_ASSERT_STRING_EQUAL(h.answer, "refused");
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "bad_seals"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItemCaseSensitive(m, "bad_messages"));
    CU_ASSERT_EQUAL(count_lines_with(text ? text : "", "node 0 refused a connection from "
                                     "127.0.0.1: its CURVE key is not this cluster's key"), 1);
  }
  CU_ASSERT_PTR_NOT_NULL(m);
  cJSON_Delete(m);
  free(text);
  unit_remove_tree(dir);
  free(dir);
  alarm(0);
}

static void test_forged_on_the_wire_plain(void) { check_forged_on_the_wire(false); }
static void test_forged_on_the_wire_curve(void) { check_forged_on_the_wire(true); }

/* ------------------------------------------------------- stalled waits */

/* A node of two with the clock service and one worker. */
static real_node *clocked_node(uint32_t rank, const char *coordinator, kids *tell,
                               const real_cluster *c, char *err, size_t errlen) {
  real_node_config cfg = node_config(rank, 2, 1, NULL, c);
  cfg.core.clock_service = true;
  cfg.coordinator = coordinator;
  cfg.listening = tell ? kids_tell : NULL;
  cfg.listening_ctx = tell;
  return real_node_start(&cfg, err, errlen);
}

/* Node 1: alive (it answers pings) but its worker never ends a clock; it
 * waits until the run fails and prints why. */
static int idle_clock_child(uint32_t rank, const char *coordinator, void *arg) {
  const real_cluster *c = arg;
  char err[REAL_ERROR_MAX] = "";
  real_node *n = clocked_node(rank, coordinator, NULL, c, err, sizeof err);
  int rc = n ? real_node_barrier(n, "never reached", INFINITY) : PS_ERR_PEER;
  if (n) real_node_failed(n, err, sizeof err);
  fprintf(stderr, "%s\n", err);
  real_node_free(n);
  return rc == PS_OK ? 0 : 1;
}

/* A worker waits for a ticket that nothing will complete (the run's clock,
 * which node 1 never moves) while no message comes and nothing completes:
 * the wait ends after timeout_s, failing the run on both nodes with an
 * error naming the worker and what it waited for. With `slow`, node 0 is a
 * straggler (at full speed), whose workers sleep on their condition instead
 * of reading the node's socket (real/leader.c). */
static void check_stalled_wait(bool slow) {
  alarm((unsigned)ceil(20 * time_scale()));
  real_cluster c = test_cluster(1);
  run_phase phase = {.from_s = 0, .until_s = INFINITY, .speed_factor = 1,
                     .bandwidth_factor = 1};
  real_straggler straggler = {.node = 0, .phases = &phase, .n_phases = 1};
  if (slow) {
    c.stragglers = &straggler;
    c.n_stragglers = 1;
  }
  kids ks;
  kids_spawn(&ks, 2, idle_clock_child, &c);
  char err[REAL_ERROR_MAX] = "";
  real_node *n = clocked_node(0, NULL, &ks, &c, err, sizeof err);
  if (!n) fprintf(stderr, "\n  %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(n);
  ps_worker *w = ps_node_worker(real_node_core(n), 0);
  ps_advance_clock(w, real_node_now(n));
  ps_ticket t = 0;
  CU_ASSERT_EQUAL_FATAL(ps_clock_wait(w, 1, NULL, 0, &t, real_node_now(n)), PS_PENDING);
  double began = real_clock();
  CU_ASSERT_EQUAL(real_node_wait(n, w, t), PS_ERR_PEER);
  double waited = real_clock() - began;
  CU_ASSERT_TRUE(real_node_failed(n, err, sizeof err));
  fprintf(stderr, "\n  the wait ended after %.3f s (timeout_s %g): %s\n", waited, c.timeout_s,
          err);
  CU_ASSERT_TRUE(waited >= c.timeout_s * 0.99);
  CU_ASSERT_TRUE(waited <= c.timeout_s + 0.5 * time_scale());
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "worker 0.0 waited"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "timeout_s 1"));
  real_node_free(n);
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(WIFEXITED(ks.k[1].status) && WEXITSTATUS(ks.k[1].status) == 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(ks.k[1].text, "worker 0.0 waited"));
  alarm(0);
}

static void test_stalled_wait_fails_within_timeout(void) { check_stalled_wait(false); }
static void test_stalled_wait_of_a_straggler(void) { check_stalled_wait(true); }

/* --------------------------------------------------------------- failures */

static int start_only_child(uint32_t rank, const char *coordinator, void *arg) {
  const real_cluster *c = arg;
  real_node_config cfg = node_config(rank, 3, 1, NULL, c);
  cfg.coordinator = coordinator;
  char err[REAL_ERROR_MAX];
  real_node *n = real_node_start(&cfg, err, sizeof err);
  if (!n) fprintf(stderr, "%s\n", err);
  real_node_free(n);
  return n ? 0 : 1;
}

/* A cluster of 3 where node 2 never starts: rank 0 names it within its
 * timeout, and node 1, which did arrive, is told why and fails too. */
static void test_node_that_never_arrives(void) {
  alarm(bound_s());
  real_cluster c = test_cluster(1);
  kids ks;
  kids_spawn(&ks, 2, start_only_child, &c); /* rank 1 only */
  ks.n = 2;
  real_node_config cfg = node_config(0, 3, 1, NULL, &c);
  cfg.listening = kids_tell;
  cfg.listening_ctx = &ks;
  char err[REAL_ERROR_MAX] = "";
  real_node *n = real_node_start(&cfg, err, sizeof err);
  CU_ASSERT_PTR_NULL(n);
  real_node_free(n);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 2 of 3 never arrived within 1 s"));
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_FALSE(WIFEXITED(ks.k[1].status) && WEXITSTATUS(ks.k[1].status) == 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(ks.k[1].text, "node 2 of 3 never arrived"));
  alarm(0);
}

/* Not a node: claims to be node 1 of run 1 and sends rank 0 a frame that is
 * no start-up message, then leaves. */
static int forged_hello_child(uint32_t rank, const char *coordinator, void *arg) {
  (void)arg;
  uint8_t id[REAL_ID_LEN];
  real_id_encode(rank, 1, id);
  char ep[REAL_ENDPOINT_MAX];
  snprintf(ep, sizeof ep, "tcp://%s", coordinator);
  void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_DEALER);
  int linger = 2000;
  zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
  zmq_setsockopt(s, ZMQ_ROUTING_ID, id, sizeof id);
  zmq_connect(s, ep);
  int rc = zmq_send(s, "not a message at all", 20, 0) == 20 ? 0 : 1;
  zmq_close(s);
  zmq_ctx_term(ctx); /* returns once the frame is delivered */
  return rc;
}

/* A frame that is no start-up message reaches rank 0 where node 1's HELLO
 * should be: rank 0 drops it and, node 1 never arriving, fails within its
 * timeout with an error that names what arrived, from whom and why it was
 * refused. */
static void test_bad_frame_during_start_up_is_named(void) {
  alarm(bound_s());
  real_cluster c = test_cluster(1);
  kids ks;
  kids_spawn(&ks, 2, forged_hello_child, NULL);
  real_node_config cfg = node_config(0, 2, 1, NULL, &c);
  cfg.listening = kids_tell;
  cfg.listening_ctx = &ks;
  char err[REAL_ERROR_MAX] = "";
  real_node *n = real_node_start(&cfg, err, sizeof err);
  CU_ASSERT_PTR_NULL(n);
  real_node_free(n);
  fprintf(stderr, "\n  rank 0: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 1 of 2 never arrived within 1 s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 1 (from 127.0.0.1) sent 20 bytes "
                                     "\"not a message at all\" (not a start-up message"));
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(kid_ok(&ks.k[1]));
  alarm(0);
}

/* A node that nobody answers: no rank 0 at the address it was given. */
static void test_coordinator_that_never_answers(void) {
  alarm(bound_s());
  real_cluster c = test_cluster(0.5);
  /* A port that was free a moment ago: bind one, close it, use it. */
  void *ctx = zmq_ctx_new(), *s = zmq_socket(ctx, ZMQ_ROUTER);
  char ep[64];
  size_t len = sizeof ep;
  zmq_bind(s, "tcp://127.0.0.1:*");
  zmq_getsockopt(s, ZMQ_LAST_ENDPOINT, ep, &len);
  zmq_close(s);
  zmq_ctx_term(ctx);
  char err[REAL_ERROR_MAX] = "";
  CU_ASSERT_EQUAL(start_only_child(1, strstr(ep, "127.0.0.1"), &c), 1);
  (void)err;
  alarm(0);
}

typedef struct {
  kids *ks;
  int signal;   /* sent to node 2 once the run is under way */
  bool sent;
  double sent_at; /* real_clock() when it was sent */
} killer;

static void signal_node_2(void *ctx, double wall_s, double fraction) {
  (void)wall_s;
  (void)fraction;
  killer *k = ctx;
  if (k->sent) return;
  k->sent_at = real_clock();
  kill(k->ks->k[2].pid, k->signal);
  k->sent = true;
}

static const char *long_workload =
    "{\"type\": \"zipf\", \"keys\": 1000, \"value_length\": 8, \"reads_per_step\": 4, "
    "\"writes_per_step\": 4, \"steps_per_worker\": 10000000, \"locality\": 0.5}";

/* Failure tests use a short timeout: a stopped peer is detected within it. */
#define FAILURE_TIMEOUT_S 2.0
/* What a report may take beyond timeout_s: the ABORT's trip and the close. */
#define DETECTION_MARGIN_S 0.25

/* arg: the run's "consistency" as JSON text, or NULL. */
static int run_child(uint32_t rank, const char *coordinator, void *arg) {
  cJSON *wl = cJSON_Parse(long_workload), *pol = cJSON_Parse("{\"type\": \"static\"}");
  cJSON *cons = arg ? cJSON_Parse(arg) : NULL;
  real_cluster c = test_cluster(FAILURE_TIMEOUT_S);
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .consistency = cons, .seed = 1}, .host_speed = 1e9, .cluster = &c,
                     .run_number = 1, .rank = rank, .coordinator = coordinator};
  char err[REAL_ERROR_MAX];
  cJSON *m = real_run_node(&a, err, sizeof err);
  if (!m) fprintf(stderr, "pslab node %u: %s\n", rank, err);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  return m ? 0 : 1;
}

/* A 3-node run (with this consistency, NULL: async) during which node 2
 * gets `signal`: nodes 0 and 1 must fail, naming node 2, and exit. */
static void check_node_2_lost(int signal, const char *consistency) {
  alarm(bound_s());
  kids ks;
  kids_spawn(&ks, 3, run_child, (void *)consistency);
  cJSON *wl = parse_json(long_workload), *pol = parse_json("{\"type\": \"static\"}");
  cJSON *cons = consistency ? parse_json(consistency) : NULL;
  real_cluster c = test_cluster(FAILURE_TIMEOUT_S);
  killer k = {.ks = &ks, .signal = signal};
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .consistency = cons, .seed = 1}, .host_speed = 1e9, .cluster = &c,
                     .run_number = 1, .listening = kids_tell, .hook_ctx = &ks,
                     .progress = signal_node_2, .progress_ctx = &k};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_node(&a, err, sizeof err);
  double detected_s = real_clock() - k.sent_at;
  CU_ASSERT_PTR_NULL(m);
  cJSON_Delete(m);
  CU_ASSERT_TRUE(k.sent);
  /* The spec reference's promise: a peer that stops answering is reported
   * within timeout_s (a margin for the report to reach rank 0 and the node
   * to close). A correctness bound, not a speed figure. */
  fprintf(stderr, "\n  node 2 got signal %d; rank 0 failed %.3f s later (timeout_s %g)\n",
          signal, detected_s, c.timeout_s);
  CU_ASSERT_TRUE(detected_s <= c.timeout_s + DETECTION_MARGIN_S);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "node 2"));
  if (!strstr(err, "node 2")) fprintf(stderr, "\n  rank 0: %s\n", err);
  if (signal != SIGKILL) kill(ks.k[2].pid, SIGKILL); /* a stopped node stays stopped */
  kids_wait(&ks, c.timeout_s + 5);
  CU_ASSERT_TRUE(WIFSIGNALED(ks.k[2].status));
  CU_ASSERT_TRUE(WIFEXITED(ks.k[1].status) && WEXITSTATUS(ks.k[1].status) == 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(ks.k[1].text, "node 2"));
  if (!strstr(ks.k[1].text, "node 2")) fprintf(stderr, "\n  node 1: %s\n", ks.k[1].text);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  cJSON_Delete(cons);
  alarm(0);
}

/* Its connections close at once: the others see it go. */
static void test_node_killed_mid_run(void) { check_node_2_lost(SIGKILL, NULL); }

/* Its connections stay open but it answers nothing: ZeroMQ's heartbeats
 * time out within timeout_s. */
static void test_node_that_stops_answering(void) { check_node_2_lost(SIGSTOP, NULL); }

/* Under BSP the others soon all wait for node 2's clock: they must still
 * end, naming it, rather than wait for ever. */
static void test_node_killed_under_bsp(void) {
  check_node_2_lost(SIGKILL, "{\"model\": \"bsp\"}");
}

/* The children of process `parent` (from /proc), up to max of them. */
static size_t children_of(pid_t parent, pid_t *out, size_t max) {
  size_t count = 0;
  DIR *d = opendir("/proc");
  for (struct dirent *e; d && (e = readdir(d));) {
    char path[288], line[512];
    pid_t pid = (pid_t)atoi(e->d_name);
    if (pid <= 0) continue;
    snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    bool read = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    const char *close_paren = read ? strrchr(line, ')') : NULL;
    int ppid = 0;
    if (close_paren && sscanf(close_paren + 1, " %*c %d", &ppid) == 1 && ppid == parent &&
        count < max)
      out[count++] = pid;
  }
  if (d) closedir(d);
  return count;
}

typedef struct {
  pid_t stopped;
  double stopped_at;
} stopper;

/* Rank 0's progress under real_run_local: stops one of the forked nodes. */
static void stop_a_child(void *ctx, double wall_s, double fraction) {
  (void)wall_s;
  (void)fraction;
  stopper *st = ctx;
  pid_t kids_now[KIDS_MAX];
  if (st->stopped || children_of(getpid(), kids_now, KIDS_MAX) == 0) return;
  st->stopped = kids_now[0];
  st->stopped_at = real_clock();
  kill(st->stopped, SIGSTOP);
}

/* A whole run on this machine (real_run_local) during which one node is
 * stopped: the run fails naming a node, within timeout_s + 1 s of the stop
 * (the launcher does not wait for a process that cannot exit), and no
 * process of the run is left, the stopped one included. */
static void test_local_run_with_a_stopped_node(void) {
  alarm(bound_s());
  cJSON *wl = parse_json(long_workload), *pol = parse_json("{\"type\": \"static\"}");
  real_cluster c = test_cluster(FAILURE_TIMEOUT_S);
  stopper st = {0};
  real_run_args a = {.run = {.nodes = 3, .workers_per_node = 2, .workload = wl, .policy = pol,
                             .seed = 1}, .host_speed = 1e9, .cluster = &c, .run_number = 1,
                     .progress = stop_a_child, .progress_ctx = &st};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  double ended_s = real_clock() - st.stopped_at;
  CU_ASSERT_PTR_NULL(m);
  cJSON_Delete(m);
  CU_ASSERT_FATAL(st.stopped > 0);
  fprintf(stderr, "\n  a node was stopped; the run ended %.3f s later (timeout_s %g): %s\n",
          ended_s, c.timeout_s, err);
  CU_ASSERT_TRUE(ended_s <= (c.timeout_s + 1.0) * time_scale());
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "node "));
  pid_t left[KIDS_MAX];
  CU_ASSERT_EQUAL(children_of(getpid(), left, KIDS_MAX), 0);
  CU_ASSERT_TRUE(kill(st.stopped, 0) != 0 && errno == ESRCH);
  if (kill(st.stopped, 0) == 0) kill(st.stopped, SIGKILL);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  alarm(0);
}

/* ------------------------------------------------------- the fork bound */

/* Makes a pids cgroup (cgroup v1's pids hierarchy, or v2's root when it
 * hands pids to its children) with pids.max `max`, into dir; false when
 * this machine or user cannot. */
static bool make_pids_cgroup(uint64_t max, char *dir, size_t n) {
  const char *roots[] = {"/sys/fs/cgroup/pids", "/sys/fs/cgroup"};
  for (int i = 0; i < 2; i++) {
    char path[600];
    char *control = i ? unit_slurp(roots[i], "cgroup.subtree_control") : NULL;
    bool usable = i == 0 ? access(roots[0], W_OK) == 0 : control && strstr(control, "pids");
    free(control);
    if (!usable) continue;
    snprintf(dir, n, "%s/pslab-test-%d", roots[i], (int)getpid());
    if (mkdir(dir, 0755) != 0) continue;
    snprintf(path, sizeof path, "%s/pids.max", dir);
    FILE *f = fopen(path, "w");
    bool ok = f && fprintf(f, "%llu\n", (unsigned long long)max) > 0;
    if (f && fclose(f) != 0) ok = false;
    if (ok) return true;
    rmdir(dir);
  }
  return false;
}

/* Runs body(arg) in a child process moved into a new pids cgroup of
 * pids.max `max`: the child's exit status (0: body passed), or -1 when no
 * such cgroup can be made here (the test is then skipped, saying so). */
static int in_pids_cgroup(uint64_t max, int (*body)(void *), void *arg) {
  char dir[512];
  if (!make_pids_cgroup(max, dir, sizeof dir)) {
    fprintf(stderr, "\n  skipped: cannot make a pids cgroup here (needs cgroup write access)\n");
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char procs[600];
    snprintf(procs, sizeof procs, "%s/cgroup.procs", dir);
    FILE *f = fopen(procs, "w");
    bool in = f && fprintf(f, "0\n") > 0;
    if (f && fclose(f) != 0) in = false;
    int rc = in ? body(arg) : 3;
    fflush(NULL);
    _exit(rc);
  }
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  rmdir(dir);
  return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 4;
}

typedef struct {
  uint32_t nodes;
  uint64_t memory_limit;
  const char *expect[2]; /* in the error */
} bound_case;

/* real_run_local of bound_case's run: refused, with an error holding both
 * expected texts, and no process forked. 0, or 1 with what went wrong. */
static int refused_run(void *arg) {
  const bound_case *bc = arg;
  cJSON *wl = cJSON_Parse(long_workload), *pol = cJSON_Parse("{\"type\": \"static\"}");
  real_cluster c = test_cluster(2);
  real_run_args a = {.run = {.nodes = bc->nodes, .workers_per_node = 2, .workload = wl,
                             .policy = pol, .seed = 1,
                             .memory = {.limit = bc->memory_limit}},
                     .host_speed = 1e9, .cluster = &c, .run_number = 1};
  char err[REAL_ERROR_MAX] = "";
  cJSON *m = real_run_local(&a, err, sizeof err);
  pid_t left[KIDS_MAX];
  bool ok = !m && strstr(err, bc->expect[0]) && strstr(err, bc->expect[1]) &&
            children_of(getpid(), left, KIDS_MAX) == 0;
  fprintf(stderr, "\n  %u nodes: %s\n", bc->nodes, err);
  cJSON_Delete(m);
  cJSON_Delete(wl);
  cJSON_Delete(pol);
  return ok ? 0 : 1;
}

/* cluster.nodes 100000 is refused by the memory estimate of all its nodes
 * before any fork: inside a cgroup that allows 4 tasks, a fork first would
 * fail and say so instead. */
static void test_huge_cluster_refused_before_fork(void) {
  alarm(bound_s());
  bound_case bc = {.nodes = 100000, .memory_limit = 1ull << 30,
                   .expect = {"needs about", "cluster.nodes"}};
  int rc = in_pids_cgroup(4, refused_run, &bc);
  CU_ASSERT_TRUE(rc == 0 || rc == -1);
  alarm(0);
}

/* A cgroup whose pids.max cannot hold the run's processes and threads
 * refuses it before any fork, naming the numbers. */
static void test_process_limit_refuses_run(void) {
  alarm(bound_s());
  bound_case bc = {.nodes = 8, .expect = {"pids.max 6", "cluster.nodes 8 x cluster.workers_per_node 2 needs about 47 more"}};
  int rc = in_pids_cgroup(6, refused_run, &bc);
  CU_ASSERT_TRUE(rc == 0 || rc == -1);
  alarm(0);
}

/* ---------------------------------------------------- the lead's release */

/* A node's lead state alone (leader.c), with an eventfd standing for the
 * ROUTER's ZMQ_FD: enough for real_lead_release. */
static void lead_node(real_node *n, real_waiter *waiters, uint32_t workers) {
  memset(n, 0, sizeof *n);
  n->size = 1;
  n->workers = workers;
  n->waiters = waiters;
  for (uint32_t i = 0; i < workers; i++) {
    pthread_mutex_init(&waiters[i].lock, NULL);
    pthread_cond_init(&waiters[i].cond, NULL);
  }
  CU_ASSERT_EQUAL_FATAL(real_lead_init(n), 0);
  n->router_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  CU_ASSERT_FATAL(n->router_fd >= 0);
}

static void lead_node_free(real_node *n) {
  close(n->router_fd);
  for (uint32_t i = 0; i < n->workers; i++) {
    pthread_mutex_destroy(&n->waiters[i].lock);
    pthread_cond_destroy(&n->waiters[i].cond);
  }
  real_lead_free(n);
}

static bool nudged(const real_node *n) {
  struct pollfd p = {.fd = n->nudge_fd, .events = POLLIN};
  return poll(&p, 1, 0) == 1;
}

/* A worker whose ticket was done while it asked for the ROUTER, and to whom
 * the holder passed it after the worker last looked: at the end of its wait
 * it holds a socket it never read. It must not keep it (nobody would read
 * the node's messages until it waits again, never after its last wait, and
 * its peers would report the node silent): the receiver gets it, woken to
 * read on, or a worker that asks. A worker that read it until empty parks
 * it; one that does not hold it changes nothing. */
static void test_lead_release_hands_on_a_late_router(void) {
  real_waiter waiters[2];
  real_node n;
  lead_node(&n, waiters, 2);
  atomic_store(&n.lead, 0); /* handed to worker 0, its ask already cleared */
  real_lead_release(&n, 0, false, false);
  CU_ASSERT_EQUAL(atomic_load(&n.lead), REAL_LEAD_RECEIVER);
  CU_ASSERT_TRUE(nudged(&n));
  lead_node_free(&n);

  lead_node(&n, waiters, 2);
  atomic_store(&n.lead, 0);
  n.lead_wants[1] = true;
  n.lead_wanting = 1;
  real_lead_release(&n, 0, false, false);
  CU_ASSERT_EQUAL(atomic_load(&n.lead), 1);
  CU_ASSERT_EQUAL(n.lead_wanting, 0);
  lead_node_free(&n);

  lead_node(&n, waiters, 2);
  atomic_store(&n.lead, 0); /* it led and read until empty */
  real_lead_release(&n, 0, true, true);
  CU_ASSERT_EQUAL(atomic_load(&n.lead), REAL_LEAD_PARKED);
  CU_ASSERT_FALSE(nudged(&n));
  lead_node_free(&n);

  lead_node(&n, waiters, 2);
  atomic_store(&n.lead, REAL_LEAD_RECEIVER); /* it asked and was not given it */
  n.lead_wants[0] = true;
  n.lead_wanting = 1;
  real_lead_release(&n, 0, false, false);
  CU_ASSERT_EQUAL(atomic_load(&n.lead), REAL_LEAD_RECEIVER);
  CU_ASSERT_FALSE(n.lead_wants[0]);
  CU_ASSERT_EQUAL(n.lead_wanting, 0);
  lead_node_free(&n);
}

/* A peer's disconnect is handled only after a read of the ROUTER that
 * began after the event was kept: what the peer sent before it went (rank
 * 0's ABORT naming the node that failed first) comes before its
 * disconnect, and must be what the node reports. An event kept while a
 * read was under way waits for the next read. */
static void test_lost_peer_waits_for_a_later_read(void) {
  real_waiter waiters[1];
  real_node n;
  lead_node(&n, waiters, 1);
  real_peer peers[3];
  memset(peers, 0, sizeof peers);
  for (int p = 0; p < 3; p++) snprintf(peers[p].endpoint, sizeof peers[p].endpoint,
                                       "tcp://127.0.0.1:%d", 4000 + p);
  n.size = 3;
  n.rank = 1;
  n.peers = peers;
  free(n.lost_event); /* lead_node made them for 1 node */
  free(n.lost_seq);
  n.lost_event = calloc(3, sizeof *n.lost_event);
  n.lost_seq = calloc(3, sizeof *n.lost_seq);
  pthread_mutex_init(&n.lock, NULL);
  pthread_cond_init(&n.cond, NULL);
  pthread_mutex_init(&n.core_mutex, NULL);

  uint64_t read_began = real_events_mark(&n); /* a read is under way ... */
  real_keep_event(&n, 0, ZMQ_EVENT_DISCONNECTED); /* ... when rank 0 goes */
  real_handle_kept_events(&n, read_began);        /* that read ends */
  CU_ASSERT_FALSE(real_node_failed(&n, NULL, 0));
  CU_ASSERT_TRUE(atomic_load(&n.events_pending));

  uint64_t next = real_events_mark(&n); /* the next read finds the ABORT */
  real_fail(&n, "node 0: lost node 2");
  real_handle_kept_events(&n, next);
  char err[REAL_ERROR_MAX];
  CU_ASSERT_TRUE(real_node_failed(&n, err, sizeof err));
  CU_ASSERT_STRING_EQUAL(err, "node 0: lost node 2");
  CU_ASSERT_FALSE(atomic_load(&n.events_pending));
  CU_ASSERT_EQUAL(n.lost_event[0], 0);

  /* Without the ABORT, the event after the next read names the peer. */
  atomic_store(&n.failed, false);
  real_keep_event(&n, 2, ZMQ_EVENT_DISCONNECTED);
  real_handle_kept_events(&n, real_events_mark(&n));
  CU_ASSERT_TRUE(real_node_failed(&n, err, sizeof err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "lost node 2 at tcp://127.0.0.1:4002"));

  pthread_mutex_destroy(&n.lock);
  pthread_cond_destroy(&n.cond);
  pthread_mutex_destroy(&n.core_mutex);
  lead_node_free(&n);
}

PSLAB_SUITE("real",
            {"the lead's release hands on a ROUTER that came late",
             test_lead_release_hands_on_a_late_router},
            {"a lost peer waits for a read of the ROUTER that began after it",
             test_lost_peer_waits_for_a_later_read},
            {"guarantees with processes: static", test_guarantees_static},
            {"guarantees with processes: relocate", test_guarantees_relocate},
            {"guarantees with processes: every other policy",
             test_guarantees_every_other_policy},
            {"guarantees with processes: adaptive, 200 syncs a second",
             test_guarantees_adaptive},
            {"replicas converge on the real backend with 3 processes",
             test_replicas_converge},
            {"whole runs on this machine", test_local_runs},
            {"whole runs with bounded consistency", test_local_runs_bounded},
            {"a whole run saves its parameters", test_local_run_saves_params},
            {"a whole run with its nodes pinned to cores", test_local_run_pinned},
            {"a whole run saves every workload's files", test_local_run_saves_every_workload},
            {"the final quality reads the owners", test_local_run_final_quality},
            {"a whole run with separate servers and worker nodes",
             test_local_run_servers_and_worker_nodes},
            {"psld scaling in, with processes", test_local_run_psld_scaling_in},
            {"bad frames are dropped and counted", test_bad_frames_are_dropped},
            {"rank 0 chooses the seal: GMAC only if every node offers it",
             test_rank0_chooses_the_seal},
            {"waiting workers read the ROUTER: every ack once, every push once",
             test_waiting_workers_read_the_router},
            {"which clusters authenticate with CURVE", test_auth_decision},
            {"key files: 0600, never overwritten, refused when others may read them",
             test_key_files},
            {"a node refuses a key file others may read",
             test_node_refuses_readable_key_file},
            {"a node names its threads", test_node_names_its_threads},
            {"a node refuses a named key file that is not there, even on loopback",
             test_node_refuses_missing_key_file},
            {"intruders without the cluster's key are refused, counted and logged",
             test_intruders_are_refused},
            {"a whole run with CURVE conserves values", test_local_run_with_curve},
            {"forged messages on the wire, numbered as node 0 takes next: refused for their "
             "seal on a plain run, every push applied once",
             test_forged_on_the_wire_plain},
            {"... and under CURVE the forger's connection is refused",
             test_forged_on_the_wire_curve},
            {"a stalled wait fails the run within timeout_s, naming the worker",
             test_stalled_wait_fails_within_timeout},
            {"... and on a straggler, whose workers sleep while they wait",
             test_stalled_wait_of_a_straggler},
            {"a node that never arrives", test_node_that_never_arrives},
            {"a coordinator that never answers", test_coordinator_that_never_answers},
            {"a bad frame during start-up is named in the error",
             test_bad_frame_during_start_up_is_named},
            {"a node killed mid-run", test_node_killed_mid_run},
            {"a node that stops answering mid-run", test_node_that_stops_answering},
            {"a node killed mid-run under bsp", test_node_killed_under_bsp},
            {"a whole run with a stopped node ends within timeout_s + 1 s, nothing left",
             test_local_run_with_a_stopped_node},
            {"a huge cluster is refused by its memory estimate before any fork",
             test_huge_cluster_refused_before_fork},
            {"a run the pids cgroup cannot hold is refused before any fork",
             test_process_limit_refuses_run},
            {"a straggler's throttle applies in its phase, on it only",
             test_straggler_throttle},
            {"a straggler's throttle in a run's metrics", test_straggler_metrics},
            {"nodes of one boot share rank 0's start clock", test_start_clock_shared_by_one_boot})
