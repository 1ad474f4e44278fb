/*
 * local_ops: what a local access costs through the core, beside the same
 * bytes moved without pslab, and how it scales with worker threads.
 *
 * Node 0 of two (no network: every key used is owned by it or replicated
 * on it, nothing is ever sent), two workers, 4096 keys of 100 floats, fast
 * local access. Figures, measured side by side in interleaved rounds
 * (bench/bench.h), times per operation in thread CPU time:
 *
 *   local pull          ps_pull of one key, per call, against memcpy of the
 *                       same 400 bytes (goal: at most 2x);
 *   local push          ps_push of one key, against adding 100 floats into
 *                       a plain array;
 *   local pull 64 keys  ps_pull of 64 keys in one call, per key, against
 *                       64 memcpys of 400 bytes;
 *   2 threads           two worker threads of the node, each pulling (or
 *                       pushing) its own key (on distinct stripes), their
 *                       summed rate against one thread's (goal for pulls:
 *                       at least 1.7 on 2 free cores); memcpy on 2 threads
 *                       against 1 says what the machine itself gives (on a
 *                       shared machine, less than 2), and the pulls'
 *                       scaling is also given against it; per CPU second,
 *                       the threads slow each other down only where they
 *                       ran at once;
 *   replica             a pull of a key replicated on the node (its owner
 *                       elsewhere), against memcpy, and on 2 threads.
 *
 * Usage: local_ops [--rounds R] [--slice SECONDS]   (default 9 rounds of
 *        30 ms slices: about 3 s)
 *        local_ops --calls N pull|push|replica   N operations of one key and
 *        nothing printed: for instruction counts, e.g.
 *        valgrind --tool=callgrind --toggle-collect=ps_pull \
 *          build/bench/local_ops --calls 100000 pull
 */
#include "bench/bench.h"
#include "model/internal.h"

#include <pthread.h>
#include <stdatomic.h>

#define LEN 100
#define KEYS 4096
#define BATCH 64
#define MIN_OPS 4096 /* per thread and slice */

static void no_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  free(buf);
  fprintf(stderr, "local_ops: a one-node core sent a message\n");
  exit(1);
}

/* Node 0 of a 2-node key space (node 1 is never made: nothing is sent). */
static ps_node *make_node(void) {
  ps_node_config c;
  ps_node_config_default(&c);
  c.workers = 2;
  c.layout.num_tables = 1;
  c.layout.tables[0] = (ps_table){0, KEYS, LEN};
  c.layout.num_nodes = 2;
  c.env = (ps_env){.send = no_send};
  run_secret_new(c.secret);
  return ps_node_new(&c);
}

/* The i-th key (from `from` on) homed at node `home`. */
static ps_key homed(ps_node *node, uint32_t home, ps_key from, int i) {
  for (ps_key k = from;; k++)
    if (ps_layout_home(ps_node_layout(node), k) == home && i-- == 0) return k;
}

/* ------------------------------------------------------------- kinds */

enum { K_MEMCPY, K_ADD, K_PULL, K_PUSH, K_PULL64, K_MEMCPY64, K_PULL_REPLICA };

typedef struct {
  ps_node *node;
  int kind;
  uint32_t worker;
  ps_key keys[BATCH];
  atomic_bool *stop;
  pthread_barrier_t *start;
  double rate, cpu_rate; /* operations (keys, for the 64-key kinds) per
                            second of wall time, and of the thread's CPU time */
} job;

static void fail(const char *what, int rc) {
  fprintf(stderr, "local_ops: %s: %s\n", what, ps_strerror(rc));
  exit(1);
}

/* 64 operations of the job's kind. */
static void ops64(job *j, float *src, float *dst) {
  ps_worker *w = ps_node_worker(j->node, j->worker);
  ps_ticket t;
  int rc = PS_OK;
  for (int r = 0; r < 64; r++) {
    switch (j->kind) {
    case K_MEMCPY: memcpy(dst, src, LEN * sizeof *src); break;
    case K_MEMCPY64:
      for (int k = 0; k < BATCH; k++) memcpy(dst + k * LEN, src + k * LEN, LEN * sizeof *src);
      break;
    case K_ADD:
      for (int i = 0; i < LEN; i++) dst[i] += src[i];
      break;
    case K_PULL:
    case K_PULL_REPLICA: rc = ps_pull(w, j->keys, 1, dst, LEN, &t, 0); break;
    case K_PUSH: rc = ps_push(w, j->keys, 1, src, LEN, &t, 0); break;
    case K_PULL64: rc = ps_pull(w, j->keys, BATCH, dst, LEN * BATCH, &t, 0); break;
    }
    __asm__ volatile("" : : "r"(dst), "r"(src) : "memory"); /* keep the work */
    if (rc != PS_OK) fail("a local operation did not complete at once", rc);
  }
}

static void *job_main(void *arg) {
  job *j = arg;
  float *src = calloc(LEN * BATCH, sizeof *src), *dst = calloc(LEN * BATCH, sizeof *dst);
  if (!src || !dst) exit(1);
  for (int i = 0; i < LEN * BATCH; i++) src[i] = 1e-6f * (float)i;
  uint64_t ops = 0;
  pthread_barrier_wait(j->start);
  double t0 = bench_now(), c0 = bench_cpu_now();
  /* At least MIN_OPS, so that a thread the machine did not run during the
   * slice still measures something. */
  while (ops < MIN_OPS || !atomic_load_explicit(j->stop, memory_order_relaxed)) {
    ops64(j, src, dst);
    ops += 64;
  }
  double per_op = j->kind == K_PULL64 || j->kind == K_MEMCPY64 ? BATCH : 1;
  j->rate = (double)ops * per_op / (bench_now() - t0);
  j->cpu_rate = (double)ops * per_op / (bench_cpu_now() - c0);
  free(src);
  free(dst);
  return NULL;
}

/* Runs `threads` jobs of one kind for `slice` seconds; their summed rate per
 * wall second, and per second of each thread's CPU time into *cpu_rate (if
 * not NULL). */
static double run_kind(ps_node *node, int kind, uint32_t threads, const ps_key keys[4][BATCH],
                       double slice, double *cpu_rate) {
  job jobs[2];
  pthread_t th[2];
  atomic_bool stop = false;
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, threads + 1);
  for (uint32_t i = 0; i < threads; i++) {
    jobs[i] = (job){.node = node, .kind = kind, .worker = i, .stop = &stop, .start = &start};
    memcpy(jobs[i].keys, keys[kind == K_PULL_REPLICA ? 2 + i : i], sizeof jobs[i].keys);
    pthread_create(&th[i], NULL, job_main, &jobs[i]);
  }
  pthread_barrier_wait(&start);
  struct timespec ts = {0, (long)(slice * 1e9)};
  nanosleep(&ts, NULL); /* a benchmark's measuring slice, not a test's wait */
  atomic_store(&stop, true);
  double sum = 0, cpu_sum = 0;
  for (uint32_t i = 0; i < threads; i++) {
    pthread_join(th[i], NULL);
    sum += jobs[i].rate;
    cpu_sum += jobs[i].cpu_rate;
  }
  pthread_barrier_destroy(&start);
  if (cpu_rate) *cpu_rate = cpu_sum;
  return sum;
}

/* Keys for the two workers: keys[0] and keys[1] owned by the node (worker
 * 0's from key 0 on, worker 1's from key 2048 on), keys[2] and keys[3]
 * replicas (homed at node 1) likewise; worker 1's skip the stripe of worker
 * 0's first key (distinct keys on distinct stripes, as workers on disjoint
 * keys mostly are). Makes the replicas. */
static int pick_keys(ps_node *node, ps_key keys[4][BATCH]) {
  for (uint32_t set = 0; set < 4; set++) {
    uint32_t home = set < 2 ? 0 : 1;
    ps_key from = set % 2 ? KEYS / 2 : 0;
    store_stripe *avoid = set % 2 ? store_stripe_of(&node->store, keys[set - 1][0]) : NULL;
    for (int i = 0, j = 0; i < BATCH; j++) {
      ps_key k = homed(node, home, from, j);
      if (store_stripe_of(&node->store, k) != avoid) keys[set][i++] = k;
    }
    if (home == 1 && ps_node_add_initial_replicas(node, keys[set], BATCH, PS_SYNC_OWNER) != PS_OK)
      return -1;
  }
  return 0;
}

/* ------------------------------------------------------------ callgrind */

static int calls_only(long calls, const char *what) {
  ps_node *node = make_node();
  ps_key keys[4][BATCH];
  if (!node || pick_keys(node, keys) != 0) return 1;
  ps_worker *w = ps_node_worker(node, 0);
  float buf[LEN] = {0};
  bool push = strcmp(what, "push") == 0, replica = strcmp(what, "replica") == 0;
  ps_key k = keys[replica ? 2 : 0][0];
  ps_ticket t;
  if (ps_push(w, &k, 1, buf, LEN, &t, 0) != PS_OK) return 1; /* the value exists */
  for (long i = 0; i < calls; i++) {
    int rc = push ? ps_push(w, &k, 1, buf, LEN, &t, 0) : ps_pull(w, &k, 1, buf, LEN, &t, 0);
    if (rc != PS_OK) return 1;
  }
  ps_node_free(node);
  return 0;
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv) {
  int rounds = 9;
  double slice = 0.03;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--calls") == 0 && i + 2 < argc)
      return calls_only(atol(argv[i + 1]), argv[i + 2]);
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--slice") == 0 && i + 1 < argc) slice = atof(argv[++i]);
    else {
      fprintf(stderr, "usage: local_ops [--rounds R] [--slice SECONDS] | "
                      "--calls N pull|push|replica\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > BENCH_MAX_ROUNDS || !(slice > 0)) return 2;
  ps_node *node = make_node();
  ps_key keys[4][BATCH];
  if (!node || pick_keys(node, keys) != 0) return 1;
  run_kind(node, K_PUSH, 2, keys, 0.01, NULL);   /* first touch: every value exists */
  run_kind(node, K_PULL64, 2, keys, 0.01, NULL); /* ... and the stripes' entries */
  /* Times per operation are of the thread's CPU time; rates of 2 threads
   * are per wall second (do they run at once?) and per CPU second (do they
   * slow each other down?). */
  bench_fig memcpy1 = {.name = "memcpy 400 B", .unit = "ns"},
            pull1 = {.name = "local pull 1 key of 100 floats", .unit = "ns"},
            add1 = {.name = "add 100 floats", .unit = "ns"},
            push1 = {.name = "local push 1 key of 100 floats", .unit = "ns"},
            memcpy64 = {.name = "memcpy 400 B, 64 in a row", .unit = "ns/key"},
            pull64 = {.name = "local pull 64 keys of 100 floats", .unit = "ns/key"},
            mem_t1 = {.name = "memcpy 400 B, 1 thread", .unit = "M/s"},
            mem_t2 = {.name = "memcpy 400 B, 2 threads", .unit = "M/s"},
            pull_t1 = {.name = "local pull, 1 thread", .unit = "M/s"},
            pull_t2 = {.name = "local pull, 2 threads on distinct keys", .unit = "M/s"},
            pull_c1 = {.name = "local pull, 1 thread, per CPU second", .unit = "M/s"},
            pull_c2 = {.name = "local pull, 2 threads on distinct keys, per CPU second",
                       .unit = "M/s"},
            rep1 = {.name = "local pull of a replica, 1 key of 100 floats", .unit = "ns"},
            rep_t1 = {.name = "local pull of a replica, 1 thread", .unit = "M/s"},
            rep_t2 = {.name = "local pull of a replica, 2 threads on distinct keys",
                      .unit = "M/s"},
            pull_sc = {.name = "local pull, 2 threads against 1", .unit = "x"},
            mem_sc = {.name = "memcpy 400 B, 2 threads against 1", .unit = "x"},
            push_t1 = {.name = "local push, 1 thread", .unit = "M/s"},
            push_t2 = {.name = "local push, 2 threads on distinct keys", .unit = "M/s"};
  for (int r = 0; r < rounds; r++) {
    double cpu, cpu2;
    double m = run_kind(node, K_MEMCPY, 1, keys, slice, &cpu);
    bench_add(&memcpy1, 1e9 / cpu);
    bench_add(&mem_t1, m / 1e6);
    double p = run_kind(node, K_PULL, 1, keys, slice, &cpu);
    bench_add(&pull1, 1e9 / cpu);
    bench_add(&pull_t1, p / 1e6);
    bench_add(&pull_c1, cpu / 1e6);
    run_kind(node, K_ADD, 1, keys, slice, &cpu);
    bench_add(&add1, 1e9 / cpu);
    double u = run_kind(node, K_PUSH, 1, keys, slice, &cpu);
    bench_add(&push1, 1e9 / cpu);
    bench_add(&push_t1, u / 1e6);
    run_kind(node, K_MEMCPY64, 1, keys, slice, &cpu);
    bench_add(&memcpy64, 1e9 / cpu);
    run_kind(node, K_PULL64, 1, keys, slice, &cpu);
    bench_add(&pull64, 1e9 / cpu);
    double m2 = run_kind(node, K_MEMCPY, 2, keys, slice, NULL);
    double p2 = run_kind(node, K_PULL, 2, keys, slice, &cpu2);
    bench_add(&mem_t2, m2 / 1e6);
    bench_add(&pull_t2, p2 / 1e6);
    bench_add(&mem_sc, m2 / m); /* what the machine gives 2 threads now */
    bench_add(&pull_sc, p2 / p);
    bench_add(&pull_c2, cpu2 / 1e6);
    bench_add(&push_t2, run_kind(node, K_PUSH, 2, keys, slice, NULL) / 1e6);
    double q = run_kind(node, K_PULL_REPLICA, 1, keys, slice, &cpu);
    bench_add(&rep1, 1e9 / cpu);
    bench_add(&rep_t1, q / 1e6);
    bench_add(&rep_t2, run_kind(node, K_PULL_REPLICA, 2, keys, slice, NULL) / 1e6);
  }
  printf("local_ops: node 0 of 2, nothing sent, keys of 100 floats, fast local access; "
         "medians of %d interleaved rounds of %.0f ms slices; ns of thread CPU time\n", rounds,
         slice * 1e3);
  bench_print(&memcpy1);
  double pull_ratio = bench_print_ratio(&pull1, &memcpy1, false);
  bench_print(&add1);
  bench_print_ratio(&push1, &add1, false);
  bench_print(&memcpy64);
  bench_print_ratio(&pull64, &memcpy64, false);
  bench_print(&mem_t1);
  bench_print_ratio(&mem_t2, &mem_t1, false);
  bench_print(&pull_t1);
  double scale = bench_print_ratio(&pull_t2, &pull_t1, false);
  bench_print(&pull_c1);
  double scale_cpu = bench_print_ratio(&pull_c2, &pull_c1, false);
  bench_print(&mem_sc);
  bench_print_ratio(&pull_sc, &mem_sc, false);
  bench_print(&push_t1);
  bench_print_ratio(&push_t2, &push_t1, false);
  bench_print_ratio(&rep1, &memcpy1, false);
  bench_print(&rep_t1);
  bench_print_ratio(&rep_t2, &rep_t1, false);
  bench_goal("local pull against memcpy", pull_ratio, "<=", 2);
  bench_goal("local pull, 2 threads against 1", scale, ">=", 1.7);
  bench_goal("local pull, 2 threads against 1, per CPU second", scale_cpu, ">=", 1.7);
  ps_node_free(node);
  return 0;
}
