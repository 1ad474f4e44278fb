/*
 * A probe of the real backend: two nodes on loopback, this process node 0
 * and a forked child node 1, for measuring what the backend's operations
 * cost on this machine (`pslab calibrate`).
 *
 * Tables of REAL_PROBE_LENGTHS floats per value, PROBE_KEYS keys each, hash
 * partitioned with fast local access. A batch (real_probe_batch) is pulls of
 * keys homed at node 1 made by node 0's workers: the calling thread, and for
 * several clients threads the probe starts for the batch, each keeping a
 * window of pulls outstanding as a worker may (a pull's ticket is waited for
 * only when its slot in the window is needed again); with both_ways node 1's
 * main thread pulls keys homed at node 0 meanwhile, the same way. A local
 * batch pulls keys homed at node 0, which the core serves from memory.
 *
 * What is counted, per node (real_probe_node): the process's CPU, its
 * receiver thread's (pthread_getcpuclockid), the pulling threads' and, of
 * theirs, what the calls that issue pulls took (the request built and handed
 * to ZeroMQ, whose I/O thread writes it), and the wake-ups of the threads
 * that read the ROUTER (real/leader.c: a waiting puller reads it itself,
 * else the receiver): the core's count when the backend reports them
 * (ps_node_note_wakeup), else the voluntary context switches of those
 * threads (the receiver found by the name the probe gives it, in
 * /proc/self/task). What is left of the process's CPU is ZeroMQ's I/O
 * thread's (and idle threads'). The pullers read their CPU clock around
 * each call that issues a pull; what those readings cost (measured at the
 * start) is taken out of their figures and of the process's.
 *
 * Node 1 reads its clocks as each collective returns and hands them over in
 * the next one: a batch is three collectives, the first opening it (its
 * answer tells node 1 what to pull), the second closing it (node 1 then
 * reads the end: node 0's batch and its own pulls are done; its start was
 * read as the first returned) and the third fetching node 1's end reading.
 * Node 0 reads its own clocks around its pulls (both ways: after the
 * closing collective, so that node 1's pulls are inside). Node 1 loops on
 * those collectives until node 0 says stop; the child dies with its parent (PR_SET_PDEATHSIG), so a
 * probe killed midway leaves no node behind.
 *
 * Pinned (a core per node, `pslab calibrate --pin`): node 1 runs on the
 * second core this process may use, and node 0, this process, on the first
 * from its start to real_probe_free, with every thread it starts meanwhile.
 */
#define _GNU_SOURCE /* pthread_setname_np, RUSAGE_THREAD, sched_setaffinity */
#include "real/internal.h"
#include "run/run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROBE_KEYS 1024u /* a table's: enough homed at either node for the largest pull */
/* A pushing batch's keys: a pool of this many times a pull's keys, from
 * which each pull draws its keys at random, as a training step draws its
 * examples' keys from a table (the threads' draws differ: they touch some
 * keys one after the other, now and then one at once). */
#define PROBE_POOL_PULLS 6u
#define PROBE_MAX_BATCH_KEYS (REAL_PROBE_MAX_KEYS * PROBE_POOL_PULLS)
#define PROBE_TABLES (sizeof probe_lengths / sizeof probe_lengths[0])
#define PROBE_RECEIVER_NAME "probe-receiver"

static const uint32_t probe_lengths[] = {REAL_PROBE_LENGTHS};

/* A node's clocks at one moment; issue_cpu_s, send_cpu_s, readings_s and
 * the pulling threads' share of wakeups are running totals of its pulls so
 * far. */
typedef struct {
  double process_cpu_s, receiver_cpu_s, issue_cpu_s, send_cpu_s;
  double readings_s; /* the pullers' readings of their CPU clocks: the probe's own work */
  double switches;   /* voluntary context switches of the receiver and pullers */
  double core_wakes; /* the core's wake-up count */
  double io_switches; /* voluntary context switches of ZeroMQ's I/O thread */
  double shared;      /* the core's count of shared accesses (by its workers) */
} node_clocks;

/* One node as the probe drives it. */
typedef struct {
  real_node *node;
  pid_t receiver_tid; /* 0: not found (switches then count the pullers only) */
  pid_t io_tid;       /* ZeroMQ's I/O thread (libzmq names it); 0: not found */
  double clock_s;     /* CPU time of one reading of a thread's CPU clock */
  node_clocks pulled; /* running totals of its pullers */
} probe_node;

struct real_probe {
  probe_node n0;
  real_cluster cluster;
  pid_t child;
  int sock; /* to the child, while it starts */
  /* Pinned: this process's affinity before, given back when the probe ends. */
  bool pinned;
  cpu_set_t was;
};

/* What node 1 pulls in the next batch (count 0: nothing). */
typedef struct {
  uint32_t keys, floats, count, window;
} pull_order;

/* One collective's answer: go on or stop, what node 1 pulls next, and node
 * 1's clocks as the collective before returned. */
typedef struct {
  uint8_t go;
  pull_order order;
  node_clocks node1;
} probe_reply;

static double cpu_clock(clockid_t which) {
  struct timespec ts;
  clock_gettime(which, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static ps_layout probe_layout(void) {
  ps_layout l = {.num_tables = PROBE_TABLES, .num_nodes = 2, .partition = PS_PARTITION_HASH};
  for (uint32_t t = 0; t < PROBE_TABLES; t++)
    l.tables[t] = (ps_table){t * PROBE_KEYS, PROBE_KEYS, probe_lengths[t]};
  return l;
}

static int table_of(uint32_t floats) {
  for (uint32_t t = 0; t < PROBE_TABLES; t++)
    if (probe_lengths[t] == floats) return (int)t;
  return -1;
}

/* The first n keys of table t homed at `home`; false if it has fewer. */
static bool keys_at(uint32_t t, uint32_t home, uint32_t n, ps_key *out) {
  ps_layout l = probe_layout();
  uint32_t found = 0;
  for (ps_key k = t * PROBE_KEYS; k < (t + 1) * PROBE_KEYS && found < n; k++)
    if (ps_layout_home(&l, k) == home) out[found++] = k;
  return found == n;
}

/* ------------------------------------------------------------- threads */

static double own_switches(void) {
  struct rusage ru;
  return getrusage(RUSAGE_THREAD, &ru) == 0 ? (double)ru.ru_nvcsw : 0;
}

/* Names the node's receiver thread, to find it among the process's, and
 * measures what reading a thread's CPU clock costs (a system call on some
 * machines: a fraction of a microsecond, which a pull's figures would
 * otherwise carry twice). */
static void know_threads(probe_node *pn) {
  pthread_setname_np(pn->node->receiver, PROBE_RECEIVER_NAME);
  pn->receiver_tid = real_named_thread(PROBE_RECEIVER_NAME);
  pn->io_tid = real_named_thread(REAL_ZMQ_IO_THREAD);
  enum { READINGS = 2000 };
  double start = cpu_clock(CLOCK_THREAD_CPUTIME_ID), sink = 0;
  for (int i = 0; i < READINGS; i++) sink += cpu_clock(CLOCK_THREAD_CPUTIME_ID);
  double took = cpu_clock(CLOCK_THREAD_CPUTIME_ID) - start;
  pn->clock_s = sink > 0 && took > 0 ? took / (READINGS + 1) : 0;
}

static void read_clocks(const probe_node *pn, node_clocks *out) {
  *out = pn->pulled;
  out->process_cpu_s = cpu_clock(CLOCK_PROCESS_CPUTIME_ID);
  clockid_t id;
  out->receiver_cpu_s = pthread_getcpuclockid(pn->node->receiver, &id) == 0 ? cpu_clock(id) : 0;
  out->switches += real_thread_switches(pn->receiver_tid);
  out->io_switches = real_thread_switches(pn->io_tid);
  ps_server_load l;
  ps_node_server_load(real_node_core(pn->node), &l);
  out->core_wakes = (double)l.wakeups;
  ps_shared_counts sh;
  ps_node_shared_counts(real_node_core(pn->node), &sh);
  out->shared = (double)sh.accesses;
}

/* What a node spent between two readings. */
static real_probe_node spent(const node_clocks *a, const node_clocks *b) {
  double core = b->core_wakes - a->core_wakes;
  /* The process's CPU less the pullers' clock readings, which are the
   * probe's, not the backend's (a system call on some machines). */
  return (real_probe_node){.process_cpu_s = b->process_cpu_s - a->process_cpu_s -
                                            (b->readings_s - a->readings_s),
                           .receiver_cpu_s = b->receiver_cpu_s - a->receiver_cpu_s,
                           .issue_cpu_s = b->issue_cpu_s - a->issue_cpu_s,
                           .send_cpu_s = b->send_cpu_s - a->send_cpu_s,
                           .wakeups = core > 0 ? core : b->switches - a->switches,
                           .io_wakeups = b->io_switches - a->io_switches,
                           .shared_accesses = b->shared - a->shared};
}

/* ------------------------------------------------------------- pulling */

/* One thread's pulls: `count` of keys[nkeys] (len floats in all), a window
 * of `window` outstanding, into bufs (window x len floats). */
typedef struct {
  real_node *node;
  ps_worker *w;
  const ps_key *keys;
  uint32_t nkeys, count, window;
  size_t len;
  float *bufs;
  float *zeros;       /* push: what each push adds (len floats, all 0: the
                         values stay as they are, and every key is written) */
  uint32_t pool;      /* push: keys in `keys` to draw each pull's from (0: keys
                         is the pull's) */
  uint32_t rng;       /* ... the thread's draws (xorshift32, never 0) */
  ps_key drawn[REAL_PROBE_MAX_KEYS]; /* ... the pull's keys */
  struct gate *start; /* threads the probe started wait for it to open */
  double clock_s;     /* the reading's own cost, taken out of what it spent */
  bool local;         /* keys of its own node: no reading a pull (nothing sent) */
  int rc;
  double cpu_s, send_s, switches; /* what the thread spent */
  double readings_s;              /* ... of it, reading its CPU clock (taken out) */
} puller;

/* A pushing batch's next keys: nkeys distinct ones drawn from the pool. */
static const ps_key *draw_keys(puller *c) {
  uint32_t have = 0;
  while (have < c->nkeys) {
    c->rng ^= c->rng << 13, c->rng ^= c->rng >> 17, c->rng ^= c->rng << 5;
    ps_key k = c->keys[c->rng % c->pool];
    bool dup = false;
    for (uint32_t j = 0; j < have && !dup; j++) dup = c->drawn[j] == k;
    if (!dup) c->drawn[have++] = k;
  }
  return c->drawn;
}

static void pull_all(puller *c) {
  ps_ticket t[REAL_PROBE_MAX_WINDOW];
  bool pending[REAL_PROBE_MAX_WINDOW] = {false};
  double sw = own_switches(), cpu = cpu_clock(CLOCK_THREAD_CPUTIME_ID), send = 0;
  int rc = PS_OK;
  for (uint32_t i = 0; rc == PS_OK && i < c->count; i++) {
    uint32_t slot = i % c->window;
    if (pending[slot]) rc = real_node_wait(c->node, c->w, t[slot]);
    pending[slot] = false;
    if (rc != PS_OK) break;
    double s0 = c->local ? 0 : cpu_clock(CLOCK_THREAD_CPUTIME_ID);
    const ps_key *keys = c->pool ? draw_keys(c) : c->keys;
    rc = ps_pull(c->w, keys, c->nkeys, c->bufs + slot * c->len, c->len, &t[slot], 0);
    if (rc == PS_OK && c->zeros) { /* local: the pull is done, its keys written next */
      ps_ticket pt;
      rc = ps_push(c->w, keys, c->nkeys, c->zeros, c->len, &pt, 0);
      if (rc == PS_PENDING) rc = real_node_wait(c->node, c->w, pt);
    }
    if (!c->local) send += cpu_clock(CLOCK_THREAD_CPUTIME_ID) - s0;
    pending[slot] = rc == PS_PENDING;
    if (rc == PS_PENDING) rc = PS_OK;
  }
  for (uint32_t s = 0; s < c->window; s++)
    if (pending[s] && rc == PS_OK) rc = real_node_wait(c->node, c->w, t[s]);
  /* Remote: two readings per pull, whole inside the thread's time; about
   * one inside each send's. Local: none, so that the wall time holds none
   * either (a reading may cost more than a local pull). */
  c->readings_s = c->local ? 0 : 2 * c->clock_s * c->count;
  c->cpu_s = cpu_clock(CLOCK_THREAD_CPUTIME_ID) - cpu - c->readings_s;
  c->send_s = c->local ? 0 : send - c->readings_s / 2;
  c->switches = own_switches() - sw;
  c->rc = rc;
}

/* Where the threads a batch starts wait until it begins. */
typedef struct gate {
  pthread_mutex_t lock;
  pthread_cond_t opened;
  bool open;
} gate;

static void gate_open(gate *g) {
  pthread_mutex_lock(&g->lock);
  g->open = true;
  pthread_cond_broadcast(&g->opened);
  pthread_mutex_unlock(&g->lock);
}

static void *puller_main(void *arg) {
  puller *c = arg;
  pthread_mutex_lock(&c->start->lock);
  while (!c->start->open) pthread_cond_wait(&c->start->opened, &c->start->lock);
  pthread_mutex_unlock(&c->start->lock);
  pull_all(c);
  return NULL;
}

/* Sets c up for `count` pulls by worker `worker` of pn's node, of `keys`
 * keys of table `floats` homed at `home`. False with a message. */
static bool puller_init(puller *c, probe_node *pn, uint32_t worker, uint32_t home,
                        const pull_order *o, ps_key *keys, char *err, size_t errlen) {
  int t = table_of(o->floats);
  uint32_t window = o->window ? o->window : 1;
  if (t < 0 || o->keys == 0 || o->keys > REAL_PROBE_MAX_KEYS || !keys_at((uint32_t)t, home, o->keys, keys)) {
    snprintf(err, errlen, "probe: no %u keys of %u floats homed at node %u", o->keys,
             o->floats, home);
    return false;
  }
  if (window > REAL_PROBE_MAX_WINDOW) {
    snprintf(err, errlen, "probe: a window of %u pulls (at most %u)", window,
             REAL_PROBE_MAX_WINDOW);
    return false;
  }
  *c = (puller){.node = pn->node, .w = ps_node_worker(real_node_core(pn->node), worker),
                .keys = keys, .nkeys = o->keys, .count = o->count, .window = window,
                .len = (size_t)o->keys * o->floats, .clock_s = pn->clock_s};
  c->bufs = calloc(c->len * window, sizeof *c->bufs);
  if (!c->bufs) snprintf(err, errlen, "probe: out of memory");
  return c->bufs != NULL;
}

/* Adds what c spent to pn's running totals and frees its buffers. */
static int puller_end(puller *c, probe_node *pn) {
  pn->pulled.issue_cpu_s += c->cpu_s;
  pn->pulled.send_cpu_s += c->send_s;
  pn->pulled.readings_s += c->readings_s;
  pn->pulled.switches += c->switches;
  free(c->bufs);
  free(c->zeros);
  c->bufs = c->zeros = NULL;
  return c->rc;
}

/* ------------------------------------------------------------ starting */

static void tell(void *ctx, const char *host_port) {
  int fd = *(int *)ctx;
  char line[REAL_HOST_MAX + 2];
  int n = snprintf(line, sizeof line, "%s\n", host_port);
  ssize_t w = send(fd, line, (size_t)n, MSG_NOSIGNAL);
  (void)w;
}

static bool read_line(int fd, char *out, size_t n, double timeout_s) {
  size_t used = 0;
  while (used + 1 < n) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, (int)(timeout_s * 1000)) <= 0) return false;
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

static real_node *start_node(const real_cluster *c, uint32_t rank, const char *coordinator,
                             int *tell_fd, char *err, size_t errlen) {
  real_node_config cfg = {.cluster = c, .coordinator = coordinator, .run = 1,
                          .listening = rank == 0 ? tell : NULL, .listening_ctx = tell_fd};
  ps_node_config_default(&cfg.core);
  cfg.core.id = rank;
  cfg.core.workers = rank == 0 ? REAL_PROBE_MAX_CLIENTS : 1;
  cfg.core.layout = probe_layout();
  if (rank == 0) run_secret_new(cfg.core.secret);
  return real_node_start(&cfg, err, errlen);
}

/* Node 1's pulls of a batch (both ways), by its main thread. */
static int child_pulls(probe_node *pn, const pull_order *o) {
  if (o->count == 0) return PS_OK;
  ps_key keys[REAL_PROBE_MAX_KEYS];
  puller c;
  char err[REAL_ERROR_MAX];
  if (!puller_init(&c, pn, 0, 0, o, keys, err, sizeof err)) {
    fprintf(stderr, "probe node 1: %s\n", err);
    return PS_ERR_INVAL;
  }
  pull_all(&c);
  return puller_end(&c, pn);
}

/* Node 1: serve pulls (its receiver thread does), pull when told, and
 * report its clocks until told to stop. */
static _Noreturn void child_main(const real_cluster *c, bool pin, int fd) {
  char coordinator[REAL_HOST_MAX], err[REAL_ERROR_MAX];
  if (!read_line(fd, coordinator, sizeof coordinator, c->timeout_s)) _exit(2);
  close(fd);
  if (pin && real_pin_cores(1, 1, err, sizeof err) != 0) {
    fprintf(stderr, "probe node 1: %s\n", err);
    _exit(1);
  }
  probe_node pn = {.node = start_node(c, 1, coordinator, NULL, err, sizeof err)};
  if (!pn.node) {
    fprintf(stderr, "probe node 1: %s\n", err);
    _exit(1);
  }
  know_threads(&pn);
  int rc = PS_OK;
  node_clocks last;
  read_clocks(&pn, &last);
  for (;;) {
    void *out = NULL;
    size_t len = 0;
    /* No deadline (node 0's round takes what it measures); a dead or silent
     * node 0 still ends the wait: the receiver fails the node within
     * timeout_s (real/receiver.c). */
    rc = real_node_collective(pn.node, "a probe round", &last, sizeof last, INFINITY, NULL,
                              NULL, &out, &len);
    read_clocks(&pn, &last);
    bool go = rc == PS_OK && len == sizeof(probe_reply) && ((probe_reply *)out)->go;
    pull_order order = go ? ((probe_reply *)out)->order : (pull_order){0};
    free(out);
    if (!go || (rc = child_pulls(&pn, &order)) != PS_OK) break;
  }
  if (rc == PS_OK) rc = real_node_quiesce(pn.node);
  if (rc == PS_OK) rc = real_node_finish(pn.node);
  real_node_free(pn.node);
  _exit(rc == PS_OK ? 0 : 1);
}

real_probe *real_probe_start(const real_cluster *cluster, bool pin, char *err,
                             size_t errlen) {
  real_probe *p = calloc(1, sizeof *p);
  if (!p) {
    snprintf(err, errlen, "probe: out of memory");
    return NULL;
  }
  p->sock = -1;
  if (cluster) p->cluster = *cluster;
  else real_cluster_default(&p->cluster);
  int cores[2], n = pin ? real_cores_allowed(cores, 2, err, errlen) : 2;
  if (n >= 0 && n < 2)
    snprintf(err, errlen, "probe: a core per node needs two cores, found %d", n);
  if (n < 2) {
    free(p);
    return NULL;
  }
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
    snprintf(err, errlen, "probe: socketpair: %s", strerror(errno));
    free(p);
    return NULL;
  }
  fflush(NULL);
  pid_t parent = getpid();
  p->child = fork();
  if (p->child == 0) {
    run_die_with_parent(parent);
    close(sv[0]);
    child_main(&p->cluster, pin, sv[1]);
  }
  close(sv[1]);
  p->sock = sv[0];
  if (p->child < 0) {
    snprintf(err, errlen, "probe: fork: %s", strerror(errno));
    real_probe_free(p);
    return NULL;
  }
  if (pin) { /* node 0 is this process, pinned for the probe's life */
    p->pinned = sched_getaffinity(0, sizeof p->was, &p->was) == 0;
    if (!p->pinned || real_pin_cores(0, 1, err, errlen) != 0) {
      if (!p->pinned) snprintf(err, errlen, "probe: cannot read this process's cores");
      p->pinned = false;
      real_probe_free(p);
      return NULL;
    }
  }
  p->n0.node = start_node(&p->cluster, 0, NULL, &p->sock, err, errlen);
  if (!p->n0.node) {
    real_probe_free(p);
    return NULL;
  }
  know_threads(&p->n0);
  return p;
}

/* ----------------------------------------------------------- measuring */

static void *decide(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                    size_t *out_len) {
  probe_reply *r = malloc(sizeof *r);
  if (!r) return NULL;
  *r = *(const probe_reply *)ctx;
  if (size > 1 && len[1] == sizeof(node_clocks)) memcpy(&r->node1, in[1], sizeof r->node1);
  else r->node1.process_cpu_s = NAN;
  *out_len = sizeof *r;
  return r;
}

/* A collective: tells node 1 whether to go on and what to pull; node 1's
 * clocks as the collective before returned there. */
static int round_trip_clocks(real_probe *p, uint8_t go, const pull_order *order,
                             node_clocks *node1) {
  void *out = NULL;
  size_t len = 0;
  probe_reply ask = {.go = go, .order = order ? *order : (pull_order){0}};
  int rc = real_node_collective(p->n0.node, "a probe round", NULL, 0, p->cluster.timeout_s,
                                decide, &ask, &out, &len);
  if (rc == PS_OK && len == sizeof(probe_reply) && node1) *node1 = ((probe_reply *)out)->node1;
  free(out);
  return rc;
}

static int probe_failed(real_probe *p, int rc, char *err, size_t errlen) {
  char why[REAL_ERROR_MAX] = "";
  real_node_failed(p->n0.node, why, sizeof why);
  snprintf(err, errlen, "probe: %s%s%s", ps_strerror(rc), *why ? ": " : "", why);
  return -1;
}

/* Puller `index` of a pushing batch b: what it pushes, and the pool it
 * draws its keys from, with draws of its own. False with a message. */
static bool push_pool(puller *c, const real_probe_batch *b, uint32_t index, ps_key *keys,
                      char *err, size_t errlen) {
  if (!keys_at((uint32_t)table_of(b->floats), 0, b->keys * PROBE_POOL_PULLS, keys)) {
    snprintf(err, errlen, "probe: no %u keys of %u floats homed at node 0",
             b->keys * PROBE_POOL_PULLS, b->floats);
    return false;
  }
  c->pool = b->keys * PROBE_POOL_PULLS;
  c->rng = 2463534242u + 7919u * index;
  if (!(c->zeros = calloc(c->len, sizeof *c->zeros))) snprintf(err, errlen, "probe: out of memory");
  return c->zeros != NULL;
}

/* Node 0's pullers of batch b, set up, threads past the first started and
 * waiting for g to open. Returns how many were set up; fewer than asked with
 * a message. */
static uint32_t pullers_start(real_probe *p, const real_probe_batch *b, puller *c,
                              ps_key *keys, pthread_t *threads, gate *g, char *err,
                              size_t errlen) {
  uint32_t clients = b->clients ? b->clients : 1;
  pull_order o = {b->keys, b->floats, b->count, b->window};
  uint32_t made = 0;
  for (; made < clients; made++) {
    if (!puller_init(&c[made], &p->n0, made, b->local ? 0 : 1, &o, keys, err, errlen)) break;
    c[made].start = g;
    c[made].local = b->local;
    if (b->push && !push_pool(&c[made], b, made, keys, err, errlen)) {
      free(c[made].bufs);
      break;
    }
    if (made > 0 && pthread_create(&threads[made], NULL, puller_main, &c[made]) != 0) {
      snprintf(err, errlen, "probe: cannot start a pulling thread");
      free(c[made].bufs);
      free(c[made].zeros);
      break;
    }
  }
  return made;
}

/* ------------------------------------------------------------ spinners */

/* Threads that keep the machine's cores busy through a batch: each spins
 * from before the batch's clocks are read until after, and says what CPU
 * it spent between the two readings (SPIN_MEASURE: it reads its own clock
 * as it sees the phase change), which the batch takes out of node 0's. */
enum { SPIN_WARM, SPIN_MEASURE, SPIN_STOP };

typedef struct {
  pthread_t thread;
  atomic_int *phase;
  double cpu_s;
} spinner;

static void *spinner_main(void *arg) {
  spinner *sp = arg;
  while (atomic_load_explicit(sp->phase, memory_order_relaxed) == SPIN_WARM) continue;
  double cpu = cpu_clock(CLOCK_THREAD_CPUTIME_ID);
  while (atomic_load_explicit(sp->phase, memory_order_relaxed) == SPIN_MEASURE) continue;
  sp->cpu_s = cpu_clock(CLOCK_THREAD_CPUTIME_ID) - cpu;
  return NULL;
}

/* Starts n spinners; how many started. */
static uint32_t spinners_start(spinner *sp, uint32_t n, atomic_int *phase) {
  uint32_t made = 0;
  for (; made < n; made++) {
    sp[made] = (spinner){.phase = phase};
    if (pthread_create(&sp[made].thread, NULL, spinner_main, &sp[made]) != 0) break;
  }
  return made;
}

/* Stops them; the CPU they spent while measured. */
static double spinners_stop(spinner *sp, uint32_t n, atomic_int *phase) {
  atomic_store(phase, SPIN_STOP);
  double cpu = 0;
  for (uint32_t i = 0; i < n; i++) {
    pthread_join(sp[i].thread, NULL);
    cpu += sp[i].cpu_s;
  }
  return cpu;
}

/* Runs batch b with both nodes' clocks read around it (see the top). */
static int run_batch(real_probe *p, const real_probe_batch *b, puller *c, uint32_t clients,
                     gate *g, pthread_t *threads, real_probe_sample *out) {
  pull_order order = {b->keys, b->floats, b->both_ways ? b->count : 0, b->window};
  node_clocks n1a = {0}, n1b = {0}, n0a, n0b;
  int rc = round_trip_clocks(p, 1, &order, NULL);
  spinner spin[REAL_PROBE_MAX_SPINNERS];
  atomic_int phase = SPIN_WARM;
  uint32_t spinning = spinners_start(spin, b->spinners, &phase);
  ps_node_count_shared(real_node_core(p->n0.node), b->count_shared);
  read_clocks(&p->n0, &n0a);
  atomic_store(&phase, SPIN_MEASURE);
  double wall = real_clock();
  gate_open(g);
  if (rc != PS_OK) c[0].count = 0;
  pull_all(&c[0]);
  for (uint32_t i = 1; i < clients; i++) pthread_join(threads[i], NULL);
  double end = real_clock();
  out->thread_cpu_s = 0;
  for (uint32_t i = 0; i < clients; i++) {
    out->thread_cpu_s += c[i].cpu_s;
    int crc = puller_end(&c[i], &p->n0);
    if (rc == PS_OK) rc = crc;
  }
  double spun = 0;
  if (!b->both_ways) {
    read_clocks(&p->n0, &n0b);
    spun = spinners_stop(spin, spinning, &phase);
  }
  if (rc == PS_OK) rc = round_trip_clocks(p, 1, NULL, &n1a);
  if (b->both_ways) { /* node 1's pulls are done only now */
    end = real_clock();
    read_clocks(&p->n0, &n0b);
    spun = spinners_stop(spin, spinning, &phase);
  }
  if (rc == PS_OK) rc = round_trip_clocks(p, 1, NULL, &n1b);
  ps_node_count_shared(real_node_core(p->n0.node), false);
  out->wall_s = end - wall;
  out->node[0] = spent(&n0a, &n0b);
  out->node[0].process_cpu_s -= spun; /* about: each read its clock as it saw the phases */
  out->node[1] = spent(&n1a, &n1b);
  out->cpu_s = out->node[0].process_cpu_s + out->node[1].process_cpu_s;
  return rc;
}

int real_probe_run(real_probe *p, const real_probe_batch *b, real_probe_sample *out, char *err,
                   size_t errlen) {
  uint32_t clients = b->clients ? b->clients : 1;
  if (b->spinners > REAL_PROBE_MAX_SPINNERS) {
    snprintf(err, errlen, "probe: %u spinning threads (at most %u)", b->spinners,
             REAL_PROBE_MAX_SPINNERS);
    return -1;
  }
  if (b->push && !b->local) {
    snprintf(err, errlen, "probe: pushes only in a local batch");
    return -1;
  }
  if (clients > REAL_PROBE_MAX_CLIENTS || (b->local && b->both_ways)) {
    snprintf(err, errlen, "probe: %u pulling threads%s (at most %u, one way when local)",
             clients, b->both_ways ? " both ways" : "", REAL_PROBE_MAX_CLIENTS);
    return -1;
  }
  puller c[REAL_PROBE_MAX_CLIENTS];
  pthread_t threads[REAL_PROBE_MAX_CLIENTS];
  ps_key keys[PROBE_MAX_BATCH_KEYS];
  gate g = {.open = false};
  pthread_mutex_init(&g.lock, NULL);
  pthread_cond_init(&g.opened, NULL);
  uint32_t made = pullers_start(p, b, c, keys, threads, &g, err, errlen);
  int rc = PS_OK;
  if (made == clients) {
    *out = (real_probe_sample){0};
    rc = run_batch(p, b, c, clients, &g, threads, out);
  } else { /* the threads started pull nothing */
    for (uint32_t i = 1; i < made; i++) c[i].count = 0;
    gate_open(&g);
    for (uint32_t i = 1; i < made; i++) pthread_join(threads[i], NULL);
    for (uint32_t i = 0; i < made; i++) free(c[i].bufs), free(c[i].zeros);
  }
  pthread_mutex_destroy(&g.lock);
  pthread_cond_destroy(&g.opened);
  if (made < clients) return -1;
  return rc == PS_OK ? 0 : probe_failed(p, rc, err, errlen);
}

int real_probe_remote(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                      real_probe_sample *out, char *err, size_t errlen) {
  real_probe_batch b = {.keys = keys, .floats = floats, .count = count};
  return real_probe_run(p, &b, out, err, errlen);
}

int real_probe_local(real_probe *p, uint32_t keys, uint32_t floats, uint32_t count,
                     real_probe_sample *out, char *err, size_t errlen) {
  real_probe_batch b = {.keys = keys, .floats = floats, .count = count, .local = true};
  return real_probe_run(p, &b, out, err, errlen);
}

/* ------------------------------------------------------------- the end */

int real_probe_preempt_beside(real_probe *p, uint32_t spinners, uint32_t wakes, double *wait_s,
                              double *preempted, char *err, size_t errlen) {
  if (!p->pinned) return real_probe_preempt(spinners, wakes, wait_s, preempted, err, errlen);
  if (sched_setaffinity(0, sizeof p->was, &p->was) != 0) {
    snprintf(err, errlen, "preemption probe: cannot take this process's cores back: %s",
             strerror(errno));
    return -1;
  }
  int rc = real_probe_preempt(spinners, wakes, wait_s, preempted, err, errlen);
  char again[256];
  if (real_pin_cores(0, 1, again, sizeof again) != 0) { /* node 0's core, as before */
    if (rc == 0) snprintf(err, errlen, "preemption probe: %s", again);
    rc = -1;
  }
  return rc;
}

int real_probe_free(real_probe *p) {
  if (!p) return 0;
  int rc = PS_OK;
  if (p->n0.node) {
    rc = round_trip_clocks(p, 0, NULL, NULL);
    if (rc == PS_OK) rc = real_node_quiesce(p->n0.node);
    if (rc == PS_OK) rc = real_node_finish(p->n0.node);
    real_node_free(p->n0.node);
  }
  if (p->pinned) sched_setaffinity(0, sizeof p->was, &p->was);
  if (p->sock >= 0) close(p->sock);
  int status = 0;
  if (p->child > 0) {
    if (rc != PS_OK || !p->n0.node) kill(p->child, SIGKILL);
    waitpid(p->child, &status, 0);
  }
  bool ok = rc == PS_OK && p->n0.node && p->child > 0 && WIFEXITED(status) &&
            WEXITSTATUS(status) == 0;
  free(p);
  return ok ? 0 : -1;
}

/* ------------------------------------------------------- initial values */

int real_probe_initial(double floats, double *wall_s, char *err, size_t errlen) {
  cJSON *json = cJSON_Parse("{\"type\": \"mf\", \"rows\": 64, \"cols\": 64, \"nnz\": 64, "
                            "\"rank\": 64}");
  wl_context c = {.nodes = 1, .workers_per_node = 1};
  wl_workload *wl = json ? wl_create(json, &c, err, errlen) : NULL;
  cJSON_Delete(json);
  if (!wl) {
    if (!json) snprintf(err, errlen, "probe: out of memory");
    return -1;
  }
  /* Keys of both tables (64 rows, then 64 columns), 64 floats each. */
  static float v[64];
  uint64_t keys = (uint64_t)ceil(floats / 64);
  if (keys == 0) keys = 1;
  double start = real_clock();
  for (uint64_t k = 0; k < keys; k++) wl_add_initial(wl, k % 128, v, 64);
  *wall_s = (real_clock() - start) * floats / (64.0 * (double)keys);
  volatile float sink = v[0];
  (void)sink;
  wl_free(wl);
  return 0;
}

/* ---------------------------------------------------------------- slice */

/* A thread of the slice probe: spins from the start signal until `until`,
 * reading its schedstat (time on a core, scheduled-in count) at both ends. */
typedef struct {
  pthread_t thread;
  atomic_int *ready, *go;
  double until;        /* CLOCK_MONOTONIC seconds */
  double run_ns, ins;  /* what it ran between the two readings, and in how many turns */
  bool ok;
} slicer;

static bool read_schedstat(double *run_ns, double *ins) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  if (!f) return false;
  double wait_ns;
  bool ok = fscanf(f, "%lf %lf %lf", run_ns, &wait_ns, ins) == 3;
  fclose(f);
  return ok;
}

static void *slicer_main(void *arg) {
  slicer *s = arg;
  atomic_fetch_add(s->ready, 1);
  while (!atomic_load_explicit(s->go, memory_order_acquire)) continue;
  double run0, in0, run1, in1;
  bool ok = read_schedstat(&run0, &in0);
  while (cpu_clock(CLOCK_MONOTONIC) < s->until) continue;
  ok = ok && read_schedstat(&run1, &in1);
  s->ok = ok;
  s->run_ns = run1 - run0;
  s->ins = in1 - in0;
  return NULL;
}

/* One window of `seconds`: the seconds run and the turns taken by the
 * spinning threads; 0, or -1 with err. */
static int slice_window(uint32_t threads, double seconds, double *run, double *ins, char *err,
                        size_t errlen) {
  slicer sl[REAL_PROBE_MAX_SPINNERS];
  atomic_int ready, go;
  atomic_init(&ready, 0);
  atomic_init(&go, 0);
  uint32_t made = 0;
  for (; made < threads; made++) {
    sl[made] = (slicer){.ready = &ready, .go = &go};
    if (pthread_create(&sl[made].thread, NULL, slicer_main, &sl[made]) != 0) break;
  }
  /* The clock starts once every thread runs: on a loaded machine a thread
   * may start late, and one that started after the end would count no turn. */
  while (atomic_load(&ready) < (int)made) continue;
  double until = cpu_clock(CLOCK_MONOTONIC) + seconds;
  for (uint32_t i = 0; i < made; i++) sl[i].until = until;
  atomic_store_explicit(&go, 1, memory_order_release);
  *run = *ins = 0;
  bool ok = made == threads;
  for (uint32_t i = 0; i < made; i++) {
    pthread_join(sl[i].thread, NULL);
    ok = ok && sl[i].ok;
    *run += sl[i].run_ns;
    *ins += sl[i].ins;
  }
  if (!ok) {
    snprintf(err, errlen, "slice probe: %s", made < threads ? "could not start its threads"
                                                             : "cannot read /proc/thread-self/schedstat");
    return -1;
  }
  return 0;
}

/* Windows that saw no thread scheduled in (on a loaded machine a thread
 * may get one long turn that spans a short window) are tried again,
 * twice as long, a few times. */
#define SLICE_TRIES 5

int real_probe_slice(uint32_t threads, double seconds, double *slice_s, char *err,
                     size_t errlen) {
  if (threads == 0 || threads > REAL_PROBE_MAX_SPINNERS) {
    snprintf(err, errlen, "slice probe: %u threads (1 to %u)", threads,
             REAL_PROBE_MAX_SPINNERS);
    return -1;
  }
  double run = 0, ins = 0, window = seconds;
  for (int t = 0; t < SLICE_TRIES; t++, window *= 2) {
    if (slice_window(threads, window, &run, &ins, err, errlen) != 0) return -1;
    if (ins > 0) break;
  }
  if (!(ins > 0)) {
    snprintf(err, errlen, "slice probe: no thread was scheduled in %d windows of %g to %g s",
             SLICE_TRIES, seconds, window / 2);
    return -1;
  }
  *slice_s = 1e-9 * run / ins;
  return 0;
}
