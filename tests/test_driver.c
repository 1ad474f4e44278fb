/*
 * The worker loop (wl_drive) against real ps_nodes, with no network: a
 * 1-node cluster where every key is local (a send fails the test), and a
 * 2-node cluster whose messages wait in a FIFO that the driver's wait
 * callback delivers with ps_node_recv until the ticket completes. A policy
 * table of the test's own logs every intent. The same stream replayed on the
 * side says what the driver must have done: the steps, the keys of each
 * intent and how often each key was pushed, hence every value afterwards.
 */
#include "model/testing.h"
#include "tests/unit.h"
#include "tests/harness.h"
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 2
#define MAX_INTENTS 4096

/* ------------------------------------------------------- intent logging */

typedef struct {
  uint64_t calls;
  int64_t clock_start[MAX_INTENTS];
  int64_t ahead[MAX_INTENTS];    /* clock_start - the worker's clock */
  uint64_t key_sum[MAX_INTENTS]; /* sum of keys, to compare with the steps */
  size_t n_keys[MAX_INTENTS];
  bool bad_window;
} intent_log;

static intent_log logs[MAX_NODES];

static int log_init(ps_node *node, const cJSON *json, void **state) {
  (void)json;
  intent_log *log = &logs[ps_node_id(node)];
  memset(log, 0, sizeof *log);
  *state = log;
  return PS_OK;
}

static void log_intent(void *state, ps_worker *w, const ps_key *keys, size_t n,
                       int64_t clock_start, int64_t clock_end, double now) {
  (void)now;
  intent_log *log = state;
  if (clock_end != clock_start + 1) log->bad_window = true;
  if (log->calls < MAX_INTENTS) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += keys[i];
    log->clock_start[log->calls] = clock_start;
    log->ahead[log->calls] = clock_start - ps_worker_clock(w);
    log->key_sum[log->calls] = sum;
    log->n_keys[log->calls] = n;
  }
  log->calls++;
}

static const ps_policy_ops intent_logger = {
    .name = "intent-logger", .init = log_init, .on_intent = log_intent};

/* --------------------------------------------------------- the cluster */

typedef struct message {
  struct message *next;
  uint32_t src, dst;
  uint8_t *buf;
  size_t len;
} message;

typedef struct cluster cluster;
typedef struct {
  cluster *c;
  uint32_t id;
} endpoint;

struct cluster {
  uint32_t num_nodes;
  ps_node *nodes[MAX_NODES];
  endpoint ends[MAX_NODES];
  message *head, *tail;
  double clock;    /* seconds: compute and each delivery advance it */
  ps_worker *running; /* the worker whose driver runs */
  uint64_t waits;  /* calls of env->wait */
  uint64_t delivered;
  uint64_t computes;
  bool math;       /* the workload driven has real math */
};

static void send_forbidden(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  CU_FAIL("a 1-node cluster sent a message");
  free(buf);
}

static void send_queued(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  endpoint *e = ctx;
  message *m = calloc(1, sizeof *m);
  CU_ASSERT_PTR_NOT_NULL_FATAL(m);
  *m = (message){NULL, e->id, dst, buf, len};
  if (e->c->tail)
    e->c->tail->next = m;
  else
    e->c->head = m;
  e->c->tail = m;
}

static void wake_ignored(void *ctx, uint32_t worker, ps_ticket t) {
  (void)ctx, (void)worker, (void)t;
}

static bool deliver_one(cluster *c) {
  message *m = c->head;
  if (!m) return false;
  c->head = m->next;
  if (!c->head) c->tail = NULL;
  CU_ASSERT_EQUAL(ps_node_recv(c->nodes[m->dst], m->src, m->buf, m->len,
                               c->clock), PS_OK);
  c->delivered++;
  c->clock += 1e-6;
  free(m->buf);
  free(m);
  return true;
}

static void cluster_init(cluster *c, uint32_t nodes, const ps_layout *tables,
                         ps_partition partition) {
  memset(c, 0, sizeof *c);
  c->num_nodes = nodes;
  for (uint32_t i = 0; i < nodes; i++) {
    ps_node_config cfg;
    ps_node_config_default(&cfg);
    cfg.id = i;
    cfg.layout = *tables;
    cfg.layout.num_nodes = nodes;
    cfg.layout.partition = partition;
    c->ends[i] = (endpoint){c, i};
    cfg.env = (ps_env){.ctx = &c->ends[i], .send = nodes == 1 ? send_forbidden : send_queued,
                       .wake = wake_ignored};
    cfg.policy = &intent_logger;
    memcpy(cfg.secret, harness_secret(), PS_SECRET_LEN);
    c->nodes[i] = ps_node_new(&cfg);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c->nodes[i]);
  }
}

static void cluster_free(cluster *c) {
  while (deliver_one(c)) {
  }
  for (uint32_t i = 0; i < c->num_nodes; i++) ps_node_free(c->nodes[i]);
}

/* ---------------------------------------------------------- driver env */

static int env_wait(void *ctx, ps_worker *w, ps_ticket t) {
  cluster *c = ctx;
  c->waits++;
  while (!ps_worker_done(w, t))
    if (!deliver_one(c)) {
      CU_FAIL("waiting for a ticket with no message in flight");
      return PS_ERR_PROTOCOL;
    }
  return PS_OK;
}

static void env_compute(void *ctx, double flops, bool math_done) {
  cluster *c = ctx;
  CU_ASSERT_EQUAL(math_done, c->math); /* only a workload with math says so */
  c->computes++;
  /* The step's pull is complete; only the last push may be in flight. */
  CU_ASSERT(ps_worker_pending(c->running) <= 1);
  c->clock += flops / 1e9; /* a 1 Gflop/s worker */
}

static double env_now(void *ctx) { return ((cluster *)ctx)->clock; }

/* ------------------------------------------------------------- helpers */

static wl_workload *make(const char *json, uint32_t nodes) {
  cJSON *j = cJSON_Parse(json);
  char err[256] = "";
  wl_context ctx = {.nodes = nodes, .workers_per_node = 1};
  wl_workload *wl = wl_create(j, &ctx, err, sizeof err);
  cJSON_Delete(j);
  if (!wl) fprintf(stderr, "workload: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  return wl;
}

/* What a stream's steps add up to, replayed on the side. */
typedef struct {
  uint64_t steps, accesses, pushes;
  uint64_t *pushed;     /* per key: pushes */
  uint64_t key_sum[MAX_INTENTS];
  size_t n_keys[MAX_INTENTS];
} replay;

static void replay_stream(const wl_workload *wl, uint32_t node, uint32_t rank,
                          uint64_t seed, replay *r) {
  wl_stream *s = wl_stream_new(wl, node, rank, seed);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  wl_step st;
  while (wl_next_step(s, &st)) {
    uint64_t sum = 0; /* zipf writes are a prefix or extension of reads */
    size_t n = st.n_reads > st.n_writes ? st.n_reads : st.n_writes;
    for (size_t i = 0; i < n; i++) sum += st.reads[i];
    if (r->steps < MAX_INTENTS) {
      r->key_sum[r->steps] = sum;
      r->n_keys[r->steps] = n;
    }
    for (size_t i = 0; i < st.n_writes; i++) r->pushed[st.writes[i]]++;
    r->steps++;
    r->accesses += st.n_reads + st.n_writes;
    r->pushes += st.n_writes;
  }
  wl_stream_free(s);
}

/* Every key's value is its push count in every float, wherever it lives. */
static void check_values(cluster *c, uint64_t keys, uint32_t value_len,
                         const uint64_t *pushed) {
  float v[64];
  CU_ASSERT_FATAL(value_len <= 64);
  for (ps_key k = 0; k < keys; k++) {
    int owners = 0;
    for (uint32_t n = 0; n < c->num_nodes; n++) {
      if (ps_node_read_owned(c->nodes[n], k, v) != PS_OK) continue;
      owners++;
      for (uint32_t i = 0; i < value_len; i++)
        CU_ASSERT_EQUAL(v[i], (float)pushed[k]);
    }
    CU_ASSERT_EQUAL(owners, 1);
  }
}

/* The intents: one per step, in step order, `lookahead` clocks ahead once
 * the loop runs, with exactly the step's keys. */
static void check_intents(const intent_log *log, const replay *r,
                          uint32_t lookahead) {
  CU_ASSERT_FALSE(log->bad_window);
  CU_ASSERT_EQUAL_FATAL(log->calls, lookahead ? r->steps : 0);
  for (uint64_t j = 0; j < log->calls && j < MAX_INTENTS; j++) {
    CU_ASSERT_EQUAL(log->clock_start[j], (int64_t)j);
    int64_t want = j < lookahead ? (int64_t)j : (int64_t)lookahead;
    CU_ASSERT_EQUAL(log->ahead[j], want);
    CU_ASSERT_EQUAL(log->n_keys[j], r->n_keys[j]);
    CU_ASSERT_EQUAL(log->key_sum[j], r->key_sum[j]);
  }
}

/* --------------------------------------------------------------- tests */

#define ONE_NODE_SPEC                                                      \
  "{\"type\":\"zipf\",\"keys\":500,\"skew\":1.1,\"value_length\":8,"       \
  "\"reads_per_step\":10,\"writes_per_step\":6,\"steps_per_worker\":200,"  \
  "\"epochs\":4,\"flops_per_step\":1e6}"

static void run_one_node(uint32_t lookahead) {
  wl_workload *wl = make(ONE_NODE_SPEC, 1);
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(wl, &tables);
  cluster c;
  cluster_init(&c, 1, &tables, PS_PARTITION_HASH);
  wl_stream *s = wl_stream_new(wl, 0, 0, 99);
  wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now};
  wl_driver_stats stats;
  c.running = ps_node_worker(c.nodes[0], 0);
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, lookahead, &stats), PS_OK);

  replay r = {.pushed = calloc(500, sizeof(uint64_t))};
  replay_stream(wl, 0, 0, 99, &r);
  CU_ASSERT_EQUAL(stats.steps, 200);
  CU_ASSERT_EQUAL(stats.accesses, r.accesses);
  CU_ASSERT_EQUAL(stats.pushes, r.pushes);
  CU_ASSERT_EQUAL(c.computes, 200);
  CU_ASSERT_EQUAL(c.waits, 0); /* all local: nothing pending */
  CU_ASSERT_EQUAL(ps_worker_clock(ps_node_worker(c.nodes[0], 0)), 200);
  /* Epochs end every 50 steps of 1 ms each. */
  CU_ASSERT_EQUAL_FATAL(stats.epochs, 4);
  for (size_t e = 0; e < 4; e++)
    CU_ASSERT_DOUBLE_EQUAL(stats.epoch_end_s[e], 0.05 * (double)(e + 1), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(stats.start_s, 0.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(stats.end_s, 0.2, 1e-9);
  check_values(&c, 500, 8, r.pushed);
  check_intents(&logs[0], &r, lookahead);

  free(r.pushed);
  free(stats.epoch_end_s);
  wl_stream_free(s);
  cluster_free(&c);
  wl_free(wl);
}

static void test_one_node_lookahead(void) { run_one_node(5); }
static void test_one_node_no_lookahead(void) { run_one_node(0); }
static void test_one_node_lookahead_beyond_steps(void) { run_one_node(300); }

static void run_two_nodes(ps_partition partition) {
  wl_workload *wl = make("{\"type\":\"zipf\",\"keys\":300,\"skew\":0.8,"
                         "\"value_length\":4,\"reads_per_step\":6,"
                         "\"writes_per_step\":9,\"steps_per_worker\":150,"
                         "\"epochs\":3,\"flops_per_step\":2e6,"
                         "\"locality\":0.5}", 2);
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(wl, &tables);
  cluster c;
  cluster_init(&c, 2, &tables, partition);
  wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now};
  replay r = {.pushed = calloc(300, sizeof(uint64_t))};
  uint64_t pushes = 0;
  for (uint32_t n = 0; n < 2; n++) { /* one worker after the other */
    wl_stream *s = wl_stream_new(wl, n, n, 5);
    wl_driver_stats stats;
    uint64_t waits = c.waits;
    c.running = ps_node_worker(c.nodes[n], 0);
    CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, 3, &stats), PS_OK);
    CU_ASSERT_EQUAL(stats.steps, 150);
    CU_ASSERT_EQUAL_FATAL(stats.epochs, 3);
    /* An epoch ends once its pushes are applied: the last one at the end. */
    CU_ASSERT_EQUAL(stats.epoch_end_s[2], stats.end_s);
    CU_ASSERT(stats.epoch_end_s[0] < stats.epoch_end_s[1]);
    CU_ASSERT(c.waits - waits > 100); /* remote keys made tickets pend */
    CU_ASSERT_EQUAL(ps_worker_pending(ps_node_worker(c.nodes[n], 0)), 0);
    pushes += stats.pushes;
    replay one = {.pushed = r.pushed};
    replay_stream(wl, n, n, 5, &one);
    CU_ASSERT_EQUAL(stats.pushes, one.pushes);
    check_intents(&logs[n], &one, 3);
    free(stats.epoch_end_s);
    wl_stream_free(s);
  }
  CU_ASSERT_PTR_NULL(c.head); /* the last push was waited for */
  uint64_t total = 0;
  for (ps_key k = 0; k < 300; k++) total += r.pushed[k];
  CU_ASSERT_EQUAL(total, pushes);
  check_values(&c, 300, 4, r.pushed);
  free(r.pushed);
  cluster_free(&c);
  wl_free(wl);
}

static void test_lookahead_limit(void) {
  wl_workload *wl = make("{\"type\":\"zipf\",\"keys\":50,\"value_length\":2,"
                         "\"steps_per_worker\":20}", 1);
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(wl, &tables);
  cluster c;
  cluster_init(&c, 1, &tables, PS_PARTITION_HASH);
  wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now};
  wl_driver_stats stats;
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  c.running = ps_node_worker(c.nodes[0], 0);
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, PS_MAX_LOOKAHEAD + 1, &stats),
                  PS_ERR_INVAL);
  CU_ASSERT_EQUAL(stats.steps, 0);
  CU_ASSERT_PTR_NULL(stats.epoch_end_s);
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, PS_MAX_LOOKAHEAD, &stats),
                  PS_OK);
  CU_ASSERT_EQUAL(stats.steps, 20);
  free(stats.epoch_end_s);
  wl_stream_free(s);
  cluster_free(&c);
  wl_free(wl);
}

static void test_core_error_is_returned(void) {
  /* The nodes know 10 keys; the workload uses 1000: with lookahead the
   * core's ps_intent refuses, without it the driver's own check does. */
  wl_workload *wl = make("{\"type\":\"zipf\",\"keys\":1000,\"skew\":0,"
                         "\"value_length\":2,\"steps_per_worker\":20}", 1);
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(wl, &tables);
  tables.tables[0].count = 10;
  for (uint32_t lookahead = 0; lookahead <= 2; lookahead += 2) {
    cluster c;
    cluster_init(&c, 1, &tables, PS_PARTITION_HASH);
    wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now};
    wl_driver_stats stats;
    wl_stream *s = wl_stream_new(wl, 0, 0, 1);
    c.running = ps_node_worker(c.nodes[0], 0);
    CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, lookahead, &stats),
                    PS_ERR_KEY_RANGE);
    CU_ASSERT(stats.steps < 20);
    free(stats.epoch_end_s);
    wl_stream_free(s);
    cluster_free(&c);
  }
  wl_free(wl);
}

/* Hash partitioning: almost every step has remote keys. */
static void test_two_nodes_hash(void) { run_two_nodes(PS_PARTITION_HASH); }

/* Range partitioning: a step in the node's block is all local, so a push
 * may still be in flight when the next one is due. */
static void test_two_nodes_range(void) { run_two_nodes(PS_PARTITION_RANGE); }

/* A scripted sampler: prepare names n samples and notes the clock; pull
 * hands out keys (handle * 7 + i) % 500 with their values. */
typedef struct {
  cluster *c;
  uint64_t next_handle, prepares, pulls;
  int64_t prepared_clock[256];
  size_t prepared_n[256];
  uint64_t *pushed; /* counts the sampled keys, which the driver pushes */
  bool values_ok;
} script_sampler;

static int script_prepare(void *ctx, size_t n, uint64_t *handle, double now) {
  (void)now;
  script_sampler *sc = ctx;
  *handle = sc->next_handle++;
  if (*handle < 256) {
    sc->prepared_clock[*handle] = ps_worker_clock(sc->c->running);
    sc->prepared_n[*handle] = n;
  }
  sc->prepares++;
  return PS_OK;
}

static int script_pull(void *ctx, uint64_t handle, ps_key *keys, size_t n, float *vals,
                       size_t vals_len, ps_ticket *t, double now) {
  script_sampler *sc = ctx;
  if (handle >= sc->next_handle || (handle < 256 && sc->prepared_n[handle] != n))
    return PS_ERR_INVAL;
  for (size_t i = 0; i < n; i++) keys[i] = (handle * 7 + i) % 500;
  sc->pulls++;
  int rc = ps_pull(sc->c->running, keys, n, vals, vals_len, t, now);
  for (size_t i = 0; rc == PS_OK && i < n; i++) { /* reads at least its sample pushes */
    if (vals[i * 8] < (float)sc->pushed[keys[i]]) sc->values_ok = false;
    sc->pushed[keys[i]]++;
  }
  return rc;
}

static void script_stats(void *ctx, double *tv, double *reuse) {
  script_sampler *sc = ctx;
  *tv = 0.25;
  *reuse = (double)sc->pulls;
}

/* Steps that sample: each step's samples are prepared during the step
 * before (the first at its start), pulled, and pushed with the writes; a
 * driver without sampling callbacks refuses such a workload. */
/* ------------------------------------------------------------ real math */

/* A workload of the test's own with real math: key k (value of 2 floats,
 * initially (1, 1)) is fitted to the target (k, -k) by gradient steps on
 * the squared error; step i reads and writes key i % FIT_KEYS (its item is
 * i). Held-out "quality" is the RMSE of every key against its target,
 * evaluated by worker 0 alone. */
#define FIT_KEYS 10
#define FIT_STEPS 200
#define FIT_LR 0.25f

typedef struct {
  uint64_t drawn;
  uint64_t math_calls, bad_inputs;
} fit_stream;

static fit_stream fit_last; /* the last stream's counters, for the test */

static void *fit_stream_new(const void *impl, uint32_t node, uint32_t rank, uint64_t seed) {
  (void)impl, (void)node, (void)rank, (void)seed;
  return calloc(1, sizeof(fit_stream));
}

static void fit_stream_free(void *s) {
  fit_last = *(fit_stream *)s;
  free(s);
}

static bool fit_next(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  fit_stream *s = stream;
  if (s->drawn == FIT_STEPS) return false;
  slot[0] = s->drawn % FIT_KEYS;
  items[0] = s->drawn++;
  *out = (wl_step){.reads = slot, .n_reads = 1, .writes = slot, .n_writes = 1,
                   .flops = 1e3, .items = items, .n_items = 1};
  return true;
}

static void fit_tables(const void *impl, ps_layout *l) {
  (void)impl;
  l->num_tables = 1;
  l->tables[0] = (ps_table){.first = 0, .count = FIT_KEYS, .value_len = 2};
}

static void fit_initial(const void *impl, ps_key k, float *val, uint32_t len) {
  (void)impl, (void)k;
  for (uint32_t i = 0; i < len; i++) val[i] += 1.0f;
}

static int fit_math(void *stream, const wl_step *st, wl_math_io *io) {
  fit_stream *s = stream;
  s->math_calls++;
  ps_key k = st->reads[0];
  if (st->n_items != 1 || st->items[0] % FIT_KEYS != k || io->read_off[0] != 0 ||
      io->write_off[0] != 0 || io->n_samples != 0)
    s->bad_inputs++;
  float target[2] = {(float)k, -(float)k};
  for (int i = 0; i < 2; i++) {
    float err = io->reads[i] - target[i];
    if (io->write_deltas[i] != 0) s->bad_inputs++; /* handed zeroed */
    io->write_deltas[i] = -FIT_LR * 2 * err;
    io->loss += err * err;
  }
  io->examples += 1;
  return PS_OK;
}

static int fit_eval_keys(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                         size_t *n) {
  (void)impl, (void)workers;
  *n = rank == 0 ? FIT_KEYS : 0;
  *keys = malloc(FIT_KEYS * sizeof **keys);
  if (!*keys) return PS_ERR_NOMEM;
  for (ps_key k = 0; k < *n; k++) (*keys)[k] = k;
  return PS_OK;
}

static int fit_eval(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
                    double *num, double *den) {
  (void)impl, (void)rank, (void)workers;
  for (size_t i = 0; i < in->n; i++) {
    const float *v = in->vals + in->off[i];
    double a = v[0] - (double)in->keys[i], b = v[1] + (double)in->keys[i];
    *num += a * a + b * b;
    *den += 2;
  }
  return PS_OK;
}

static const wl_type fit_type = {
    .name = "fit", .tables = fit_tables, .stream_new = fit_stream_new,
    .stream_free = fit_stream_free, .next_step = fit_next, .initial = fit_initial,
    .math = fit_math, .eval_keys = fit_eval_keys, .eval = fit_eval};

static void test_real_math(void) {
  wl_workload wl = {
      .type = &fit_type,
      .info = {.steps_per_worker = FIT_STEPS, .steps_per_epoch = FIT_STEPS / 4,
               .max_step_keys = 1, .max_step_items = 1, .math = true, .has_quality = true,
               .quality = {.name = "rmse", .sqrt = true}},
      .num_nodes = 2,
      .ctx = {.nodes = 2, .workers_per_node = 1}};
  CU_ASSERT_TRUE(wl_math(&wl));
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(&wl, &tables);
  cluster c;
  cluster_init(&c, 2, &tables, PS_PARTITION_HASH); /* half the keys are remote */
  c.math = true;
  wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now,
                       .rank = 0, .workers = 1};
  wl_stream *s = wl_stream_new(&wl, 0, 0, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  c.running = ps_node_worker(c.nodes[0], 0);
  wl_driver_stats stats;
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, 3, &stats), PS_OK);
  wl_stream_free(s);
  CU_ASSERT_EQUAL(fit_last.math_calls, FIT_STEPS);
  CU_ASSERT_EQUAL(fit_last.bad_inputs, 0);
  CU_ASSERT_EQUAL(c.computes, FIT_STEPS);
  /* Each key gets 20 steps, each halving its error: the loss of an epoch is
   * 1/32 of the one before; the first epoch starts from the initial error. */
  CU_ASSERT_EQUAL_FATAL(stats.epochs, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(stats.epoch_quality);
  double first_loss = 0;
  for (ps_key k = 0; k < FIT_KEYS; k++) {
    double a = 1.0 - (double)k, b = 1.0 + (double)k, e2 = a * a + b * b;
    first_loss += e2 * (1 + 0.25 + 0.0625 + 0.015625 + 0.00390625);
  }
  CU_ASSERT_DOUBLE_EQUAL(stats.epoch_quality[0].loss, first_loss, first_loss * 1e-5);
  for (size_t e = 0; e < 4; e++) {
    const wl_epoch_quality *q = &stats.epoch_quality[e];
    CU_ASSERT_EQUAL(q->examples, FIT_STEPS / 4);
    CU_ASSERT_EQUAL(q->q_den, 2 * FIT_KEYS);
    if (e) CU_ASSERT_DOUBLE_EQUAL(q->loss, stats.epoch_quality[e - 1].loss / 1024, q->loss * 1e-3 + 1e-9);
    /* After epoch e every error is 2^-(5(e+1)) of the initial one. */
    double scale = pow(0.5, 5.0 * (double)(e + 1));
    double want = 0;
    for (ps_key k = 0; k < FIT_KEYS; k++) {
      double a = (1.0 - (double)k) * scale, b = (1.0 + (double)k) * scale;
      want += a * a + b * b;
    }
    CU_ASSERT_DOUBLE_EQUAL(q->q_num, want, want * 1e-3 + 1e-9);
  }
  /* The store holds the pushes only: value - initial, and they add up to
   * the deltas pushed. */
  float v[2];
  double stored = 0;
  for (ps_key k = 0; k < FIT_KEYS; k++) {
    int found = 0;
    for (uint32_t n = 0; n < 2; n++) {
      if (ps_node_read_owned(c.nodes[n], k, v) != PS_OK) continue;
      found++;
      stored += (double)v[0] + v[1];
      CU_ASSERT_DOUBLE_EQUAL(v[0] + 1.0f, (float)k, 1e-4);
      CU_ASSERT_DOUBLE_EQUAL(v[1] + 1.0f, -(float)k, 1e-4);
    }
    CU_ASSERT_EQUAL(found, 1);
  }
  CU_ASSERT_DOUBLE_EQUAL(stored, stats.pushed_sum, 1e-4);
  CU_ASSERT(stats.pushed_sum < -10); /* the targets pull every key down, overall */
  CU_ASSERT(c.delivered > 0); /* remote keys and evaluation went through messages */
  /* Evaluating pulled remote keys, which took time; epoch ends leave it out. */
  CU_ASSERT(stats.eval_s > 0);
  CU_ASSERT_DOUBLE_EQUAL(stats.epoch_end_s[3] + stats.eval_s, stats.end_s, 1e-12);
  free(stats.epoch_end_s);
  free(stats.epoch_quality);
  free(stats.evals);
  cluster_free(&c);
}

/* eval_every half an epoch: an evaluation in the middle of each epoch
 * besides the one at its end, which is the epoch's; the model improves
 * between them; every point's time leaves out the evaluating before it. */
static void test_eval_every(void) {
  wl_workload wl = {
      .type = &fit_type,
      .info = {.steps_per_worker = FIT_STEPS, .steps_per_epoch = FIT_STEPS / 4,
               .eval_steps = FIT_STEPS / 8, .max_step_keys = 1, .max_step_items = 1,
               .math = true, .has_quality = true, .quality = {.name = "rmse", .sqrt = true}},
      .num_nodes = 2,
      .ctx = {.nodes = 2, .workers_per_node = 1}};
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(&wl, &tables);
  cluster c;
  cluster_init(&c, 2, &tables, PS_PARTITION_HASH);
  c.math = true;
  wl_driver_env env = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now,
                       .rank = 0, .workers = 1};
  wl_stream *s = wl_stream_new(&wl, 0, 0, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  c.running = ps_node_worker(c.nodes[0], 0);
  wl_driver_stats stats;
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, 3, &stats), PS_OK);
  wl_stream_free(s);
  CU_ASSERT_EQUAL_FATAL(stats.epochs, 4);
  CU_ASSERT_EQUAL_FATAL(stats.n_evals, 8);
  for (size_t e = 0; e < 4; e++) {
    const wl_eval_point *mid = &stats.evals[2 * e], *end = &stats.evals[2 * e + 1];
    CU_ASSERT_EQUAL(end->q_num, stats.epoch_quality[e].q_num);
    CU_ASSERT_EQUAL(end->at_s, stats.epoch_end_s[e]);
    CU_ASSERT(mid->q_num > end->q_num);
    if (e) CU_ASSERT(mid->q_num < stats.evals[2 * e - 1].q_num);
    CU_ASSERT(mid->at_s < end->at_s);
  }
  CU_ASSERT_DOUBLE_EQUAL(stats.evals[7].at_s + stats.eval_s, stats.end_s, 1e-12);
  free(stats.epoch_end_s);
  free(stats.epoch_quality);
  free(stats.evals);
  cluster_free(&c);
}

static void test_samples(void) {
  wl_workload *wl = make("{\"type\":\"zipf\",\"keys\":500,\"skew\":1.1,"
                         "\"value_length\":8,\"reads_per_step\":4,\"writes_per_step\":4,"
                         "\"steps_per_worker\":100,\"samples_per_step\":3}", 1);
  CU_ASSERT_TRUE(wl_samples(wl));
  ps_key first;
  uint64_t count;
  double *weights;
  CU_ASSERT_EQUAL(wl_sample_distribution(wl, &first, &count, &weights), PS_OK);
  CU_ASSERT_EQUAL(first, 0);
  CU_ASSERT_EQUAL(count, 500);
  CU_ASSERT_PTR_NOT_NULL_FATAL(weights);
  double top = 0;
  for (uint64_t i = 0; i < count; i++) top = weights[i] > top ? weights[i] : top;
  CU_ASSERT_DOUBLE_EQUAL(top, 1.0, 1e-12); /* rank 0 weighs 1/1^(1.1 * 0.75) */
  free(weights);
  ps_layout tables;
  memset(&tables, 0, sizeof tables);
  wl_tables(wl, &tables);
  cluster c;
  cluster_init(&c, 1, &tables, PS_PARTITION_HASH);
  script_sampler sc = {.c = &c, .pushed = calloc(500, sizeof(uint64_t)), .values_ok = true};
  c.running = ps_node_worker(c.nodes[0], 0);
  wl_stream *s = wl_stream_new(wl, 0, 0, 5);
  wl_driver_env plain = {.ctx = &c, .wait = env_wait, .compute = env_compute, .now = env_now};
  wl_driver_stats stats;
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &plain, 2, &stats), PS_ERR_INVAL);
  free(stats.epoch_end_s);
  wl_stream_free(s);
  s = wl_stream_new(wl, 0, 0, 5);
  wl_driver_env env = plain;
  env.sample_ctx = &sc;
  env.sample_prepare = script_prepare;
  env.sample_pull = script_pull;
  env.sample_stats = script_stats;
  CU_ASSERT_EQUAL(wl_drive(c.running, s, &env, 2, &stats), PS_OK);
  CU_ASSERT_EQUAL(sc.prepares, 100);
  CU_ASSERT_EQUAL(sc.pulls, 100);
  CU_ASSERT_EQUAL(stats.samples, 300);
  CU_ASSERT_EQUAL(stats.sample_tv_distance, 0.25); /* asked at the end */
  CU_ASSERT_EQUAL(stats.sample_reuse_factor, 100);
  CU_ASSERT_TRUE(sc.values_ok);
  for (uint64_t h = 1; h < 100; h++) /* step h's samples: prepared in step h - 1 */
    CU_ASSERT_EQUAL(sc.prepared_clock[h], (int64_t)h - 1);
  CU_ASSERT_EQUAL(sc.prepared_clock[0], 0);
  replay r = {.pushed = calloc(500, sizeof(uint64_t))};
  replay_stream(wl, 0, 0, 5, &r);
  for (ps_key k = 0; k < 500; k++) r.pushed[k] += sc.pushed[k];
  CU_ASSERT_EQUAL(stats.pushes, r.pushes + 300);
  CU_ASSERT_EQUAL(stats.pushed_floats, (r.pushes + 300) * 8);
  CU_ASSERT_EQUAL(stats.accesses, r.accesses + 600);
  check_values(&c, 500, 8, r.pushed);
  free(r.pushed);
  free(sc.pushed);
  free(stats.epoch_end_s);
  wl_stream_free(s);
  cluster_free(&c);
  wl_free(wl);
}

PSLAB_SUITE("driver",
            {"steps with samples", test_samples},
            {"real math: values in, deltas out, loss and quality per epoch", test_real_math},
            {"eval_every: evaluations between epoch ends", test_eval_every},
            {"one node, lookahead 5", test_one_node_lookahead},
            {"one node, no lookahead", test_one_node_no_lookahead},
            {"one node, lookahead beyond the steps",
             test_one_node_lookahead_beyond_steps},
            {"two nodes, hash partitioning", test_two_nodes_hash},
            {"two nodes, range partitioning", test_two_nodes_range},
            {"lookahead limit", test_lookahead_limit},
            {"core error is returned", test_core_error_is_returned})
