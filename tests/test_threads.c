/*
 * The core under real threads: several worker threads of one node (and one
 * on each other node) hammer the same keys with local and remote pulls,
 * pushes and sets while the keys relocate, and one thread delivers the
 * messages. The fast path (a local access served under its key's stripe lock
 * alone, model/client.c) races here with handovers, transfers and replies on
 * the delivering thread, and with the other workers' slow paths.
 *
 * What must hold: every pull reads exactly the puller's own earlier pushes
 * (component g of a value is written by worker g alone) and sets, also when
 * the key moved between the write and the read; once quiet, every key has
 * one owner and holds every push (conservation); the nodes' access counters
 * add up to the keys the workers touched. Built under ThreadSanitizer
 * (make test TSAN=1), the test also proves the fast path free of data races.
 *
 * The transport is this file's own: one FIFO queue per ordered pair of nodes
 * under one mutex, a delivering thread that takes the head of a random
 * non-empty queue (seeded), and a condition on which workers wait for their
 * tickets and the deliverer for messages. Nobody sleeps to wait.
 */
#include "tests/unit.h"
#include "tests/harness.h"

#include "model/testing.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum {
  FIRST = 100,
  SHARED = 12,  /* keys every worker pushes to and pulls */
  NODES = 3,
  NODE0_WORKERS = 3,
  OTHER_WORKERS = 1,
  GLOBAL = NODE0_WORKERS + (NODES - 1) * OTHER_WORKERS, /* workers in all */
  LEN = GLOBAL, /* component g belongs to worker g */
  MAX_KEYS = 3,
};

/* ------------------------------------------------------------ transport */

typedef struct packet {
  struct packet *next;
  uint8_t *buf;
  size_t len;
} packet;

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond; /* a message queued, a ticket done, a worker finished */
  packet *head[NODES * NODES], *tail[NODES * NODES];
  uint64_t in_flight, delivered, recv_errors;
  uint32_t running;    /* worker threads not finished yet */
  uint64_t rng;        /* the delivery order, under lock */
  ps_node *node[NODES];
  bool replicas;       /* node 0 runs replica sync rounds now and then */
} net;

typedef struct {
  net *n;
  uint32_t id;
} endpoint;

static void on_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  endpoint *e = ctx;
  net *n = e->n;
  packet *p = malloc(sizeof *p);
  if (!p) abort();
  *p = (packet){NULL, buf, len};
  pthread_mutex_lock(&n->lock);
  size_t c = (size_t)e->id * NODES + dst;
  if (n->tail[c]) n->tail[c]->next = p;
  else n->head[c] = p;
  n->tail[c] = p;
  n->in_flight++;
  pthread_cond_broadcast(&n->cond);
  pthread_mutex_unlock(&n->lock);
}

static void on_wake(void *ctx, uint32_t worker, ps_ticket t) {
  (void)worker, (void)t;
  net *n = ((endpoint *)ctx)->n;
  pthread_mutex_lock(&n->lock);
  pthread_cond_broadcast(&n->cond);
  pthread_mutex_unlock(&n->lock);
}

/* Blocks until ticket t of w completes (a wake comes under the lock after
 * the ticket is done, so checking under it loses none). */
static void wait_ticket(net *n, ps_worker *w, ps_ticket t) {
  pthread_mutex_lock(&n->lock);
  while (!ps_worker_done(w, t)) pthread_cond_wait(&n->cond, &n->lock);
  pthread_mutex_unlock(&n->lock);
}

/* Delivers messages, one at a time, until every worker finished and nothing
 * is in flight. Node 0's replicas sync every 16 deliveries (this thread is
 * the node's timer owner). */
static void *deliver_main(void *arg) {
  net *n = arg;
  pthread_mutex_lock(&n->lock);
  for (;;) {
    if (!n->in_flight) {
      if (!n->running) break;
      pthread_cond_wait(&n->cond, &n->lock);
      continue;
    }
    size_t start = ps_splitmix64(&n->rng) % (NODES * NODES), c = start;
    while (!n->head[c]) c = (c + 1) % (NODES * NODES);
    packet *p = n->head[c];
    n->head[c] = p->next;
    if (!n->head[c]) n->tail[c] = NULL;
    n->in_flight--;
    uint64_t count = ++n->delivered;
    pthread_mutex_unlock(&n->lock);
    int rc = ps_node_recv(n->node[c % NODES], (uint32_t)(c / NODES), p->buf, p->len, 0);
    free(p->buf);
    free(p);
    if (n->replicas && count % 16 == 0) ps_node_sync_replicas(n->node[0], PS_SYNC_OWNER, 0, 0);
    pthread_mutex_lock(&n->lock);
    if (rc != PS_OK) n->recv_errors++;
  }
  pthread_mutex_unlock(&n->lock);
  return NULL;
}

static ps_layout layout(void) {
  ps_layout l = {.num_tables = 1, .num_nodes = NODES, .partition = PS_PARTITION_HASH};
  l.tables[0] = (ps_table){FIRST, SHARED + GLOBAL, LEN};
  return l;
}

/* -------------------------------------------------------------- workers */

typedef struct {
  net *n;
  ps_worker *w;
  uint32_t g;              /* global index: the component it writes */
  uint64_t rng;
  uint32_t ops;
  bool relocate;           /* localize its own key now and then ... */
  bool localize_shared;    /* ... and shared keys */
  uint64_t pushed[SHARED]; /* its pushes per shared key */
  float last_set;          /* the value its own key was set to */
  uint64_t accesses;       /* keys its pulls, pushes and sets touched */
  uint64_t ryw_checks, ryw_failures, bad_rc;
} worker_job;

static bool started(int rc) { return rc == PS_OK || rc == PS_PENDING; }

/* Pulls keys[k] and checks that component g holds exactly g's pushes. */
static void pull_and_check(worker_job *j, const ps_key *keys, size_t k, float *out) {
  ps_ticket t;
  uint64_t expect[MAX_KEYS];
  for (size_t i = 0; i < k; i++) expect[i] = j->pushed[keys[i] - FIRST];
  int rc = ps_pull(j->w, keys, k, out, k * LEN, &t, 0);
  j->accesses += k;
  if (!started(rc)) {
    j->bad_rc++;
    return;
  }
  if (rc == PS_PENDING) wait_ticket(j->n, j->w, t);
  for (size_t i = 0; i < k; i++) {
    j->ryw_checks++;
    if (out[i * LEN + j->g] != (float)expect[i]) j->ryw_failures++;
  }
}

/* Sets the worker's own key to a new value and reads it back. */
static void set_and_check(worker_job *j, float *vals, float *out) {
  ps_key own = FIRST + SHARED + j->g;
  ps_ticket t;
  j->last_set += 1;
  for (uint32_t i = 0; i < LEN; i++) vals[i] = j->last_set;
  int rc = ps_set(j->w, &own, 1, vals, LEN, &t, 0); /* not waited for */
  if (!started(rc)) j->bad_rc++;
  rc = ps_pull(j->w, &own, 1, out, LEN, &t, 0);
  j->accesses += 2;
  if (!started(rc)) {
    j->bad_rc++;
    return;
  }
  if (rc == PS_PENDING) wait_ticket(j->n, j->w, t);
  j->ryw_checks++;
  for (uint32_t i = 0; i < LEN; i++)
    if (out[i] != j->last_set) {
      j->ryw_failures++;
      break;
    }
}

static void *worker_main(void *arg) {
  worker_job *j = arg;
  float vals[MAX_KEYS * LEN], out[MAX_KEYS * LEN];
  for (uint32_t op = 0; op < j->ops; op++) {
    size_t k = 1 + ps_splitmix64(&j->rng) % MAX_KEYS;
    ps_key keys[MAX_KEYS + 1];
    for (size_t i = 0; i < k; i++) keys[i] = FIRST + ps_splitmix64(&j->rng) % SHARED;
    uint64_t r = ps_splitmix64(&j->rng) % 20;
    ps_ticket t;
    if (r >= 16 && r < 18 && j->localize_shared) {
      /* Shared keys move here, and some worker's own key (which only that
       * worker reads and sets) with them. */
      keys[k] = FIRST + SHARED + ps_splitmix64(&j->rng) % GLOBAL;
      int rc = ps_localize(j->w, keys, k + 1, r == 16 ? NULL : &t, 0);
      if (rc == PS_PENDING) wait_ticket(j->n, j->w, t);
      else if (rc != PS_OK) j->bad_rc++;
    } else if (r >= 18 && j->relocate) { /* its own key moves here */
      ps_key own = FIRST + SHARED + j->g;
      int rc = ps_localize(j->w, &own, 1, &t, 0);
      if (rc == PS_PENDING) wait_ticket(j->n, j->w, t);
      else if (rc != PS_OK) j->bad_rc++;
    } else if (r < 8 || r >= 16) { /* push +1 into its component; not waited for */
      memset(vals, 0, sizeof vals);
      for (size_t i = 0; i < k; i++) {
        vals[i * LEN + j->g] = 1;
        j->pushed[keys[i] - FIRST]++;
      }
      if (!started(ps_push(j->w, keys, k, vals, k * LEN, &t, 0))) j->bad_rc++;
      j->accesses += k;
    } else if (r < 14) {
      pull_and_check(j, keys, k, out);
    } else {
      set_and_check(j, vals, out);
    }
  }
  pthread_mutex_lock(&j->n->lock);
  j->n->running--;
  pthread_cond_broadcast(&j->n->cond);
  pthread_mutex_unlock(&j->n->lock);
  return NULL;
}

/* --------------------------------------------------------------- a run */

typedef struct {
  uint64_t seed;
  uint32_t ops;     /* per worker */
  bool relocate;
  uint32_t replicas; /* node 0 replicates the first `replicas` shared keys */
} scenario;

static void run(const scenario *sc) {
  net *n = calloc(1, sizeof *n);
  endpoint ends[NODES];
  pthread_mutex_init(&n->lock, NULL);
  pthread_cond_init(&n->cond, NULL);
  n->rng = sc->seed;
  n->replicas = sc->replicas > 0;
  for (uint32_t i = 0; i < NODES; i++) {
    ends[i] = (endpoint){n, i};
    ps_node_config c;
    ps_node_config_default(&c);
    c.id = i;
    c.workers = i == 0 ? NODE0_WORKERS : OTHER_WORKERS;
    c.layout = layout();
    c.stripes = 4; /* few stripes: keys share them, as hot keys do */
    c.env = (ps_env){.ctx = &ends[i], .send = on_send, .wake = on_wake};
    memcpy(c.secret, harness_secret(), PS_SECRET_LEN);
    n->node[i] = ps_node_new(&c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(n->node[i]);
  }
  ps_key hot[SHARED];
  for (uint32_t i = 0; i < sc->replicas; i++) hot[i] = FIRST + i;
  if (sc->replicas)
    CU_ASSERT_EQUAL(ps_node_add_initial_replicas(n->node[0], hot, sc->replicas, PS_SYNC_OWNER),
                    PS_OK);
  worker_job jobs[GLOBAL];
  pthread_t threads[GLOBAL], deliverer;
  n->running = GLOBAL;
  for (uint32_t g = 0; g < GLOBAL; g++) {
    uint32_t node = g < NODE0_WORKERS ? 0 : 1 + (g - NODE0_WORKERS) / OTHER_WORKERS;
    uint32_t index = node == 0 ? g : (g - NODE0_WORKERS) % OTHER_WORKERS;
    /* With replicas on node 0, node 0 leaves the shared keys where they are
     * (its localize would drop its replica): their owners move under it. */
    jobs[g] = (worker_job){.n = n, .w = ps_node_worker(n->node[node], index), .g = g,
                           .rng = sc->seed * 1000 + g, .ops = sc->ops,
                           .relocate = sc->relocate,
                           .localize_shared = sc->relocate && !(sc->replicas && node == 0)};
  }
  pthread_create(&deliverer, NULL, deliver_main, n);
  for (uint32_t g = 0; g < GLOBAL; g++) pthread_create(&threads[g], NULL, worker_main, &jobs[g]);
  for (uint32_t g = 0; g < GLOBAL; g++) pthread_join(threads[g], NULL);
  pthread_join(deliverer, NULL);
  /* Quiet now: hand replicas' deltas on, deliver them (one thread). */
  if (sc->replicas) {
    ps_node_finish(n->node[0], 0);
    n->replicas = false;
    deliver_main(n); /* every worker finished: it leaves once nothing is in flight */
  }
  CU_ASSERT_EQUAL(n->recv_errors, 0);
  CU_ASSERT_EQUAL(n->in_flight, 0);

  uint64_t checks = 0, accesses = 0;
  for (uint32_t g = 0; g < GLOBAL; g++) {
    CU_ASSERT_EQUAL(jobs[g].ryw_failures, 0);
    CU_ASSERT_EQUAL(jobs[g].bad_rc, 0);
    CU_ASSERT_EQUAL(ps_worker_pending(jobs[g].w), 0);
    checks += jobs[g].ryw_checks;
    accesses += jobs[g].accesses;
  }
  CU_ASSERT(checks > (uint64_t)sc->ops * GLOBAL / 4);
  /* Conservation: one owner per key, holding every push (every set). */
  float v[LEN];
  for (uint32_t i = 0; i < SHARED + GLOBAL; i++) {
    ps_key k = FIRST + i;
    int owners = 0;
    uint32_t owner = 0;
    for (uint32_t nd = 0; nd < NODES; nd++)
      if (ps_node_read_owned(n->node[nd], k, v) == PS_OK) owners++, owner = nd;
    CU_ASSERT_EQUAL(owners, 1);
    CU_ASSERT_EQUAL_FATAL(ps_node_read_owned(n->node[owner], k, v), PS_OK);
    for (uint32_t g = 0; g < GLOBAL; g++) {
      float want = i < SHARED ? (float)jobs[g].pushed[i] : jobs[i - SHARED].last_set;
      CU_ASSERT_EQUAL(v[g], want);
    }
  }
  /* The counters saw every key access, once. */
  ps_node_stats sum = {0}, s;
  uint64_t relocations = 0;
  for (uint32_t nd = 0; nd < NODES; nd++) {
    ps_node_get_stats(n->node[nd], &s);
    ps_node_stats_add(&sum, &s);
    relocations += s.relocations;
  }
  CU_ASSERT_EQUAL(sum.local_accesses + sum.remote_accesses, accesses);
  CU_ASSERT(sum.local_accesses > 0 && sum.remote_accesses > 0);
  if (sc->relocate) CU_ASSERT(relocations > 0);
  if (sc->replicas) CU_ASSERT(sum.replica_reads > 0);
  for (uint32_t i = 0; i < NODES; i++) ps_node_free(n->node[i]);
  pthread_cond_destroy(&n->cond);
  pthread_mutex_destroy(&n->lock);
  free(n);
}

/* ---------------------------------------------------------------- tests */

static void test_static_keys_local_and_remote(void) {
  for (uint64_t seed = 1; seed <= 3; seed++)
    run(&(scenario){.seed = seed, .ops = 3000});
}

static void test_keys_relocating_under_the_fast_path(void) {
  for (uint64_t seed = 1; seed <= 4; seed++)
    run(&(scenario){.seed = seed, .ops = 3000, .relocate = true});
}

static void test_replicas_beside_relocating_keys(void) {
  for (uint64_t seed = 1; seed <= 3; seed++)
    run(&(scenario){.seed = seed, .ops = 3000, .relocate = true, .replicas = 4});
}

PSLAB_SUITE("threads",
            {"static keys, local and remote, from several threads",
             test_static_keys_local_and_remote},
            {"keys relocating under the fast path", test_keys_relocating_under_the_fast_path},
            {"replicas beside relocating keys", test_replicas_beside_relocating_keys})
