/*
 * train_step: what a training step costs through pslab's core, against a
 * plain single-threaded loop doing the same SGD on local arrays.
 *
 * For each workload (by default mf on its generator, and kge and w2v on
 * WordNet when wordnet-base is installed; or the workload JSON files given
 * as arguments), it runs, in turn and several rounds:
 *
 *   pslab  one node with one worker (policy static, fast local access): the
 *          run layer's setup, a ps_node, the shared worker loop (wl_drive)
 *          with no network and no compute charge, so what is timed is the
 *          core (pull, push, sampling management) plus the task's math;
 *   plain  the same workload's steps and the same math function on local
 *          float arrays, one per table: gather each key's value (initial
 *          value added), run the math, add the deltas back; negative
 *          samples drawn straight from the workload's sample distribution.
 *
 * Both process the same steps (the same stream seed). It prints ns per step
 * for each (the median of the rounds, and the spread) and pslab / plain, the
 * overhead of going through the PS, as bench/bench.h's lines. Goal:
 * <= 1.3x.
 *
 * Usage: train_step [--rounds N] [workload.json ...]
 */
#include "bench/bench.h"
#include "run/run.h"
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- pslab */

static void no_send(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  fprintf(stderr, "train_step: a 1-node run sent a message\n");
  free(buf);
  exit(1);
}
static void no_wake(void *ctx, uint32_t worker, ps_ticket t) { (void)ctx, (void)worker, (void)t; }
static int spin_wait(void *ctx, ps_worker *w, ps_ticket t) {
  (void)ctx;
  while (!ps_worker_done(w, t)) continue;
  return PS_OK;
}
static void no_compute(void *ctx, double flops, bool math_done) {
  (void)ctx, (void)flops, (void)math_done;
}
static double now_wall(void *ctx) {
  (void)ctx;
  return wall();
}

/* Seconds per step through the core; 0 on error. */
static double time_pslab(const cJSON *workload, uint64_t *steps) {
  cJSON *policy = cJSON_Parse("{\"type\": \"static\"}");
  run_args a = {.workload = workload, .policy = policy, .nodes = 1, .workers_per_node = 1,
                .seed = 1};
  char err[512];
  run_setup *s = run_setup_new(&a, err, sizeof err);
  if (!s) {
    fprintf(stderr, "train_step: %s\n", err);
    cJSON_Delete(policy);
    return 0;
  }
  ps_node_config cfg;
  run_node_config(s, 0, &cfg);
  cfg.env = (ps_env){.send = no_send, .wake = no_wake};
  ps_node *node = ps_node_new(&cfg);
  run_worker w;
  double t = 0;
  if (node && run_worker_init(&w, s, node, 0, err, sizeof err) == 0) {
    wl_driver_env env = {.wait = spin_wait, .compute = no_compute, .now = now_wall};
    double t0 = wall();
    int rc = run_worker_drive(&w, s, env);
    t = wall() - t0;
    *steps = w.stats.steps;
    if (rc != PS_OK) fprintf(stderr, "train_step: drive: %s\n", ps_strerror(rc));
    if (rc != PS_OK) t = 0;
  }
  run_worker_free(&w);
  ps_node_free(node);
  run_setup_free(s);
  cJSON_Delete(policy);
  return *steps ? t / (double)*steps : 0;
}

/* ------------------------------------------------------------- plain */

typedef struct {
  const wl_workload *wl;
  ps_layout layout;
  float *table[PS_MAX_TABLES];
  float *vals, *svals, *deltas;
  size_t *roff, *woff, *soff;
  ps_key *samples;
} plain;

static float *value_of(plain *p, ps_key k) {
  for (uint32_t t = 0; t < p->layout.num_tables; t++) {
    const ps_table *tb = &p->layout.tables[t];
    if (k >= tb->first && k - tb->first < tb->count)
      return p->table[t] + (k - tb->first) * tb->value_len;
  }
  return NULL;
}

static size_t gather(plain *p, const ps_key *keys, size_t n, float *out, size_t *off) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(&p->layout, keys[i]);
    off[i] = at;
    memcpy(out + at, value_of(p, keys[i]), len * sizeof *out);
    wl_add_initial(p->wl, keys[i], out + at, len);
    at += len;
  }
  return at;
}

static void scatter_add(plain *p, const ps_key *keys, size_t n, const float *d) {
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(&p->layout, keys[i]);
    float *v = value_of(p, keys[i]);
    for (uint32_t j = 0; j < len; j++) v[j] += d[at + j];
    at += len;
  }
}

/* Seconds per step of the plain loop; 0 on error. */
static double time_plain(const cJSON *workload) {
  char err[512];
  wl_context ctx = {.nodes = 1, .workers_per_node = 1};
  wl_workload *wl = wl_create(workload, &ctx, err, sizeof err);
  if (!wl || !wl_math(wl)) {
    fprintf(stderr, "train_step: %s\n", wl ? "the workload has no math" : err);
    wl_free(wl);
    return 0;
  }
  plain p = {.wl = wl};
  wl_tables(wl, &p.layout);
  p.layout.num_nodes = 1;
  uint32_t max_len = 0;
  for (uint32_t t = 0; t < p.layout.num_tables; t++) {
    const ps_table *tb = &p.layout.tables[t];
    p.table[t] = calloc(tb->count * tb->value_len, sizeof(float));
    if (tb->value_len > max_len) max_len = tb->value_len;
  }
  ps_sample_dist *dist = NULL;
  if (wl_samples(wl)) {
    ps_key first;
    uint64_t count;
    double *weights;
    if (wl_sample_distribution(wl, &first, &count, &weights) == PS_OK) {
      dist = ps_sample_dist_new(first, count, weights);
      free(weights);
    }
  }
  size_t cap = wl->info.max_step_keys + 1, scap = 1 << 16;
  p.vals = malloc(cap * max_len * sizeof(float));
  p.deltas = malloc((cap + scap) * max_len * sizeof(float));
  p.svals = malloc(scap * max_len * sizeof(float));
  p.roff = malloc(cap * sizeof(size_t));
  p.woff = malloc(cap * sizeof(size_t));
  p.soff = malloc(scap * sizeof(size_t));
  p.samples = malloc(scap * sizeof(ps_key));
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  uint64_t rng = 42, steps = 0;
  wl_step st;
  double t0 = wall();
  bool ok = s && p.vals && p.deltas && p.svals;
  while (ok && wl_next_step(s, &st)) {
    gather(&p, st.reads, st.n_reads, p.vals, p.roff);
    size_t ns = st.n_samples < scap ? st.n_samples : scap;
    for (size_t i = 0; dist && i < ns; i++) p.samples[i] = ps_sample_dist_draw(dist, &rng);
    gather(&p, p.samples, ns, p.svals, p.soff);
    size_t wf = 0;
    for (size_t i = 0; i < st.n_writes; i++) {
      p.woff[i] = wf;
      wf += ps_layout_value_len(&p.layout, st.writes[i]);
    }
    size_t sf = ns ? p.soff[ns - 1] + ps_layout_value_len(&p.layout, p.samples[ns - 1]) : 0;
    memset(p.deltas, 0, (wf + sf) * sizeof(float));
    wl_math_io io = {.reads = p.vals, .read_off = p.roff, .samples = p.samples,
                     .sample_vals = p.svals, .sample_off = p.soff, .n_samples = ns,
                     .write_deltas = p.deltas, .write_off = p.woff,
                     .sample_deltas = p.deltas + wf};
    ok = wl->type->math(s->impl, &st, &io) == PS_OK;
    scatter_add(&p, st.writes, st.n_writes, p.deltas);
    scatter_add(&p, p.samples, ns, p.deltas + wf);
    steps++;
  }
  double t = wall() - t0;
  wl_stream_free(s);
  ps_sample_dist_free(dist);
  for (uint32_t i = 0; i < p.layout.num_tables; i++) free(p.table[i]);
  free(p.vals), free(p.deltas), free(p.svals), free(p.roff), free(p.woff), free(p.soff);
  free(p.samples);
  wl_free(wl);
  return ok && steps ? t / (double)steps : 0;
}

/* --------------------------------------------------------------- main */

/* Rounds of pslab and plain on one workload; false if either failed. */
static bool bench(const char *name, const cJSON *workload, int rounds) {
  char pname[160], lname[160];
  snprintf(pname, sizeof pname, "train step through pslab, %s", name);
  snprintf(lname, sizeof lname, "train step on plain arrays, %s", name);
  bench_fig ps = {.name = pname, .unit = "ns/step"}, pl = {.name = lname, .unit = "ns/step"};
  uint64_t steps = 0;
  for (int r = 0; r < rounds; r++) { /* interleaved, so load hits both */
    double a = time_pslab(workload, &steps), b = time_plain(workload);
    if (!a || !b) {
      fprintf(stderr, "train_step: %s: failed\n", name);
      return false;
    }
    bench_add(&ps, a * 1e9);
    bench_add(&pl, b * 1e9);
  }
  bench_print(&pl);
  double ratio = bench_print_ratio(&ps, &pl, false);
  char goal[200];
  snprintf(goal, sizeof goal, "train step through pslab against plain arrays, %s", name);
  bench_goal(goal, ratio, "<=", 1.3);
  (void)steps;
  return true;
}

static const char *const defaults[][2] = {
    {"mf generated", "{\"type\": \"mf\", \"rows\": 20000, \"cols\": 5000, \"nnz\": 400000, "
                       "\"rank\": 32, \"epochs\": 1}"},
    {"kge complex wordnet", "{\"type\": \"kge\", \"data\": \"wordnet\", \"dim\": 50, "
                              "\"epochs\": 1}"},
    {"w2v wordnet glosses", "{\"type\": \"w2v\", \"corpus\": \"wordnet:glosses\", \"dim\": 50, "
                              "\"epochs\": 1}"},
};

int main(int argc, char **argv) {
  int rounds = 3, first = 1;
  if (argc > 2 && strcmp(argv[1], "--rounds") == 0) {
    rounds = atoi(argv[2]);
    first = 3;
  }
  if (rounds < 1 || rounds > 16) {
    fprintf(stderr, "usage: train_step [--rounds 1..16] [workload.json ...]\n");
    return 2;
  }
  printf("train_step: one worker, one node; medians of %d interleaved rounds\n", rounds);
  bool ok = true;
  if (first < argc) {
    for (int i = first; i < argc; i++) {
      FILE *f = fopen(argv[i], "r");
      char buf[1 << 16];
      size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
      if (f) fclose(f);
      buf[n] = '\0';
      cJSON *j = cJSON_Parse(buf);
      if (!j) {
        fprintf(stderr, "train_step: %s: not a JSON workload object\n", argv[i]);
        return 2;
      }
      ok &= bench(argv[i], j, rounds);
      cJSON_Delete(j);
    }
    return ok ? 0 : 1;
  }
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
    cJSON *j = cJSON_Parse(defaults[i][1]);
    ok &= bench(defaults[i][0], j, rounds);
    cJSON_Delete(j);
  }
  return ok ? 0 : 1;
}
