/*
 * The `dnn` workload: its keys cover every parameter of the model exactly
 * once, whatever the key length; every step reads and writes every key, and
 * an epoch deals each worker's examples once; the flops formula; the same
 * seeds give the same steps and data; its backpropagation against finite
 * differences of the loss; learning through the driver on an in-process
 * node (held-out MSE falls epoch after epoch); math "none" and "tensors";
 * a message for each bad field.
 */
#include "model/testing.h"
#include "tests/unit.h"
#include "workloads/dnn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

static wl_workload *make_err(const char *single_quoted, uint32_t nodes, uint32_t per_node,
                             char *err, size_t errlen) {
  cJSON *j = unit_json(single_quoted);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  wl_context ctx = {.nodes = nodes, .workers_per_node = per_node};
  wl_workload *wl = wl_create(j, &ctx, err, errlen);
  cJSON_Delete(j);
  return wl;
}

static wl_workload *make(const char *single_quoted, uint32_t nodes, uint32_t per_node) {
  char err[512] = "";
  wl_workload *wl = make_err(single_quoted, nodes, per_node, err, sizeof err);
  if (!wl) fprintf(stderr, "workload: %s\n", err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(wl);
  return wl;
}

static const dnn_workload *dnn_of(const wl_workload *wl) { return wl->impl; }

/* ------------------------------------------------------------- the keys */

/* Every float of every tensor in exactly one key; key lengths are the
 * layout's; the layout is valid; a tensor's full keys are consecutive, in
 * tensor order, in table 0. */
static void check_covers(const char *spec, uint64_t expect_keys) {
  wl_workload *wl = make(spec, 2, 1);
  const dnn_workload *d = dnn_of(wl);
  ps_layout l = {0};
  wl_tables(wl, &l);
  l.num_nodes = 2;
  CU_ASSERT_EQUAL(ps_layout_check(&l), PS_OK);
  CU_ASSERT_EQUAL(ps_layout_num_keys(&l), d->n_keys);
  if (expect_keys) CU_ASSERT_EQUAL(d->n_keys, expect_keys);
  uint8_t *seen = calloc(d->total, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(seen);
  uint64_t floats = 0;
  int64_t last_full_tensor = -1;
  for (uint64_t i = 0; i < ps_layout_num_keys(&l); i++) {
    ps_key k = ps_layout_key_at(&l, i);
    uint32_t t, len;
    uint64_t off;
    CU_ASSERT_TRUE_FATAL(dnn_key_span(d, k, &t, &off, &len));
    CU_ASSERT_EQUAL(len, ps_layout_value_len(&l, k));
    CU_ASSERT_TRUE_FATAL(t < d->n_tensors && off + len <= d->params[t]);
    CU_ASSERT(len <= d->key_floats);
    for (uint32_t j = 0; j < len; j++) seen[d->base[t] + off + j]++;
    floats += len;
    if (len == d->key_floats && k < l.tables[0].count) { /* table 0: tensor order */
      CU_ASSERT((int64_t)t >= last_full_tensor);
      last_full_tensor = t;
    }
  }
  CU_ASSERT_EQUAL(floats, d->total);
  uint64_t once = 0;
  for (uint64_t p = 0; p < d->total; p++) once += seen[p] == 1;
  CU_ASSERT_EQUAL(once, d->total);
  uint32_t t, len;
  uint64_t off;
  CU_ASSERT_FALSE(dnn_key_span(d, d->n_keys, &t, &off, &len));
  free(seen);
  wl_free(wl);
}

static void test_keys_cover_every_parameter_once(void) {
  /* 401920, 262656 and 5130 floats: 98 + 64 + 1 full keys of 4096, and
   * remainders of 512, 512 and 1034: 165 keys in 3 tables. */
  check_covers("{'type':'dnn','layers':[784,512,512,10],'math':'none'}", 98 + 64 + 1 + 3);
  check_covers("{'type':'dnn','layers':[784,512,512,10],'key_floats':1000,'math':'none'}", 0);
  /* A key length that divides every tensor: one table, no remainder. */
  check_covers("{'type':'dnn','tensors':[64,128,64],'key_floats':64,'math':'none'}", 4);
  /* Every tensor smaller than a key: a key each. */
  check_covers("{'type':'dnn','layers':[3,5,2],'math':'none'}", 2);
  check_covers("{'type':'dnn','layers':[7,9,4,3],'key_floats':1,'math':'none'}", 72 + 40 + 15);
  wl_workload *wl = make("{'type':'dnn','layers':[784,512,512,10],'math':'none'}", 1, 1);
  const dnn_workload *d = dnn_of(wl);
  CU_ASSERT_EQUAL(d->total, 784 * 512 + 512 + 512 * 512 + 512 + 512 * 10 + 10);
  ps_layout l = {0};
  wl_tables(wl, &l);
  CU_ASSERT_EQUAL(l.num_tables, 3);
  CU_ASSERT_EQUAL(l.tables[0].value_len, 4096);
  CU_ASSERT_EQUAL(l.tables[1].value_len, 512);
  CU_ASSERT_EQUAL(l.tables[1].count, 2);
  CU_ASSERT_EQUAL(l.tables[2].value_len, 1034);
  wl_free(wl);
}

/* ----------------------------------------------------------- the steps */

/* Every step reads and writes every key once; an epoch deals each of the
 * worker's examples once; flops are 6 x parameters x examples. */
static void test_steps_read_and_write_every_key(void) {
  wl_workload *wl = make("{'type':'dnn','layers':[6,10,3],'key_floats':16,'examples':50,"
                         "'batch':4,'epochs':3}", 2, 2);
  const dnn_workload *d = dnn_of(wl);
  /* 50 examples over 4 workers: shares of 13, 13, 12, 12; 4 steps an epoch. */
  CU_ASSERT_EQUAL(dnn_share(d, 0), 13);
  CU_ASSERT_EQUAL(dnn_share(d, 3), 12);
  CU_ASSERT_EQUAL(wl_steps_per_epoch(wl), 4);
  CU_ASSERT_EQUAL(wl_steps_per_worker(wl), 12);
  for (uint32_t w = 0; w < 4; w++) {
    wl_stream *s = wl_stream_new(wl, w / 2, w, 11);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint8_t *dealt = calloc(d->examples, 1);
    wl_step st;
    uint64_t steps = 0;
    while (wl_next_step(s, &st)) {
      CU_ASSERT_EQUAL_FATAL(st.n_reads, d->n_keys);
      CU_ASSERT_EQUAL(st.n_writes, d->n_keys);
      CU_ASSERT_PTR_EQUAL(st.writes, st.reads);
      for (size_t i = 0; i < st.n_reads; i++) CU_ASSERT_EQUAL(st.reads[i], i);
      CU_ASSERT(st.n_items <= 4);
      CU_ASSERT_DOUBLE_EQUAL(st.flops, 6.0 * (double)d->total * (double)st.n_items, 0);
      for (size_t i = 0; i < st.n_items; i++) {
        CU_ASSERT_EQUAL(st.items[i] % 4, w); /* its own examples */
        dealt[st.items[i]]++;
      }
      if (++steps % 4 == 0) { /* an epoch: each of its examples once */
        uint64_t once = 0, other = 0;
        for (uint64_t e = 0; e < d->examples; e++) {
          once += dealt[e] == 1 && e % 4 == w;
          other += dealt[e] != (e % 4 == w);
        }
        CU_ASSERT_EQUAL(once, dnn_share(d, w));
        CU_ASSERT_EQUAL(other, 0);
        memset(dealt, 0, d->examples);
      }
    }
    CU_ASSERT_EQUAL(steps, 12);
    free(dealt);
    wl_stream_free(s);
  }
  wl_free(wl);
  /* flops_per_step replaces the formula. */
  wl = make("{'type':'dnn','layers':[6,10,3],'flops_per_step':1234,'math':'none'}", 1, 1);
  wl_stream *s = wl_stream_new(wl, 0, 0, 1);
  wl_step st;
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  CU_ASSERT_EQUAL(st.flops, 1234);
  CU_ASSERT_EQUAL(st.n_items, 0); /* no math: no items */
  wl_stream_free(s);
  wl_free(wl);
}

/* Math "none": the same keys and steps, flops by the examples a step would
 * take; no items, no quality, no data. Every key equally hot. */
static void test_math_none_and_hot_keys(void) {
  wl_workload *wl = make("{'type':'dnn','layers':[6,10,3],'examples':10,'batch':4,"
                         "'math':'none'}", 1, 2);
  const dnn_workload *d = dnn_of(wl);
  wl_quality q;
  CU_ASSERT_FALSE(wl_math(wl));
  CU_ASSERT_FALSE(wl_quality_info(wl, &q));
  CU_ASSERT_PTR_NULL(d->train_x);
  wl_stream *s = wl_stream_new(wl, 0, 1, 5);
  wl_step st;
  double flops[2];
  for (int i = 0; i < 2; i++) {
    CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
    flops[i] = st.flops;
  }
  CU_ASSERT_EQUAL(flops[0], 6.0 * (double)d->total * 4);
  CU_ASSERT_EQUAL(flops[1], 6.0 * (double)d->total * 1); /* 5 examples: 4, then 1 */
  CU_ASSERT_FALSE(wl_next_step(s, &st));
  wl_stream_free(s);
  ps_key hot[8];
  CU_ASSERT_EQUAL(wl_hot_keys(wl, 8, hot), d->n_keys);
  for (uint64_t k = 0; k < d->n_keys; k++) CU_ASSERT_EQUAL(hot[k], k);
  wl_free(wl);
  /* "tensors": an access pattern alone. */
  wl = make("{'type':'dnn','tensors':[100,30],'key_floats':40,'math':'none'}", 1, 1);
  CU_ASSERT_EQUAL(dnn_of(wl)->n_keys, 2 + 1 + 1);
  CU_ASSERT_PTR_NULL(dnn_of(wl)->width);
  wl_free(wl);
}

/* ---------------------------------------------------------- determinism */

static void test_deterministic(void) {
  const char *spec = "{'type':'dnn','layers':[5,7,2],'examples':40,'batch':3,'epochs':2}";
  wl_workload *a = make(spec, 1, 2), *b = make(spec, 1, 2);
  const dnn_workload *da = dnn_of(a), *db = dnn_of(b);
  CU_ASSERT_EQUAL(memcmp(da->train_x, db->train_x, da->examples * 5 * sizeof(float)), 0);
  CU_ASSERT_EQUAL(memcmp(da->train_y, db->train_y, da->examples * 2 * sizeof(float)), 0);
  CU_ASSERT_EQUAL(memcmp(da->test_y, db->test_y, da->test_examples * 2 * sizeof(float)), 0);
  wl_stream *s1 = wl_stream_new(a, 0, 1, 9), *s2 = wl_stream_new(b, 0, 1, 9);
  wl_stream *s3 = wl_stream_new(a, 0, 1, 10);
  wl_step x, y, z;
  bool differs = false;
  while (wl_next_step(s1, &x)) {
    CU_ASSERT_TRUE_FATAL(wl_next_step(s2, &y));
    CU_ASSERT_TRUE_FATAL(wl_next_step(s3, &z));
    CU_ASSERT_EQUAL_FATAL(x.n_items, y.n_items);
    CU_ASSERT_EQUAL(memcmp(x.items, y.items, x.n_items * sizeof *x.items), 0);
    differs |= x.n_items == z.n_items && memcmp(x.items, z.items, x.n_items * 8) != 0;
  }
  CU_ASSERT_TRUE(differs); /* another seed, another order */
  wl_stream_free(s1);
  wl_stream_free(s2);
  wl_stream_free(s3);
  /* Another data_seed: other data. */
  wl_workload *c = make("{'type':'dnn','layers':[5,7,2],'examples':40,'data_seed':2}", 1, 2);
  CU_ASSERT_NOT_EQUAL(memcmp(da->train_x, dnn_of(c)->train_x, 40 * 5 * sizeof(float)), 0);
  wl_free(a);
  wl_free(b);
  wl_free(c);
}

/* ------------------------------------------------------------- gradient */

/* The summed loss of the examples in double, straight from the definition:
 * ReLU between layers, squared error averaged over the outputs. */
static double loss_of(const dnn_workload *d, const double *m, const uint64_t *items, size_t n) {
  double total = 0, h[64], z[64];
  for (size_t e = 0; e < n; e++) {
    uint32_t in = d->width[0];
    for (uint32_t i = 0; i < in; i++) h[i] = d->train_x[items[e] * in + i];
    for (uint32_t t = 0; t < d->n_tensors; t++) {
      uint32_t out = d->width[t + 1];
      const double *w = m + d->base[t], *b = w + (uint64_t)in * out;
      for (uint32_t j = 0; j < out; j++) {
        double s = b[j];
        for (uint32_t i = 0; i < in; i++) s += w[j * in + i] * h[i];
        z[j] = t + 1 < d->n_tensors && s < 0 ? 0 : s;
      }
      memcpy(h, z, out * sizeof *h);
      in = out;
    }
    double sq = 0;
    for (uint32_t j = 0; j < in; j++) {
      double r = h[j] - d->train_y[items[e] * in + j];
      sq += r * r;
    }
    total += sq / in;
  }
  return total;
}

/* The deltas of a step, / (-lr / examples), against central differences of
 * the summed loss at the step's pulled values (initial values: the model's
 * own Glorot weights, biases moved off 0 so that ReLUs are not all at a
 * kink). */
static void test_gradient_matches_finite_differences(void) {
  wl_workload *wl = make("{'type':'dnn','layers':[4,6,5,3],'key_floats':7,'examples':12,"
                         "'batch':6,'lr':0.1}", 1, 1);
  const dnn_workload *d = dnn_of(wl);
  wl_stream *s = wl_stream_new(wl, 0, 0, 3);
  wl_step st;
  CU_ASSERT_TRUE_FATAL(wl_next_step(s, &st));
  CU_ASSERT_EQUAL_FATAL(st.n_items, 6);
  size_t *off = malloc(d->n_keys * sizeof *off), floats = 0;
  for (uint64_t k = 0; k < d->n_keys; k++) {
    off[k] = floats;
    floats += ps_layout_value_len(&d->layout, k);
  }
  CU_ASSERT_EQUAL_FATAL(floats, d->total);
  float *vals = calloc(floats, sizeof *vals), *deltas = calloc(floats, sizeof *deltas);
  double *m = malloc(d->total * sizeof *m);
  for (uint64_t k = 0; k < d->n_keys; k++) {
    wl_add_initial(wl, k, vals + off[k], ps_layout_value_len(&d->layout, k));
    uint32_t t, len;
    uint64_t o;
    dnn_key_span(d, k, &t, &o, &len);
    for (uint32_t j = 0; j < len; j++) {
      float *v = vals + off[k] + j;
      if (o + j >= (uint64_t)d->width[t] * d->width[t + 1]) *v = 0.1f; /* a bias */
      m[d->base[t] + o + j] = *v;
    }
  }
  wl_math_io io = {.reads = vals, .read_off = off, .write_deltas = deltas, .write_off = off};
  CU_ASSERT_EQUAL_FATAL(wl->type->math(s->impl, &st, &io), PS_OK);
  CU_ASSERT_EQUAL(io.examples, 6);
  CU_ASSERT_DOUBLE_EQUAL(io.loss, loss_of(d, m, st.items, 6), 1e-4 * io.loss);
  double worst = 0;
  for (uint64_t k = 0; k < d->n_keys; k++) {
    uint32_t t, len;
    uint64_t o;
    dnn_key_span(d, k, &t, &o, &len);
    for (uint32_t j = 0; j < len; j++) {
      uint64_t p = d->base[t] + o + j;
      double keep = m[p], h = 1e-5;
      m[p] = keep + h;
      double up = loss_of(d, m, st.items, 6);
      m[p] = keep - h;
      double down = loss_of(d, m, st.items, 6);
      m[p] = keep;
      double numeric = (up - down) / (2 * h);
      double analytic = deltas[off[k] + j] / (-0.1 / 6);
      double e = fabs(numeric - analytic) / fmax(1e-3, fabs(numeric));
      if (e > worst) worst = e;
    }
  }
  printf("\n  worst relative gradient error %.2e over %llu parameters\n", worst,
         (unsigned long long)d->total);
  CU_ASSERT(worst < 1e-2);
  free(off);
  free(vals);
  free(deltas);
  free(m);
  wl_stream_free(s);
  wl_free(wl);
}

/* ------------------------------------------------------------- learning */

static void send_forbidden(void *ctx, uint32_t dst, uint8_t *buf, size_t len) {
  (void)ctx, (void)dst, (void)len;
  CU_FAIL("a 1-node cluster sent a message");
  free(buf);
}

static void wake_ignored(void *ctx, uint32_t worker, ps_ticket t) {
  (void)ctx, (void)worker, (void)t;
}

static int env_wait(void *ctx, ps_worker *w, ps_ticket t) {
  (void)ctx;
  CU_ASSERT(ps_worker_done(w, t)); /* every key is local */
  return ps_worker_done(w, t) ? PS_OK : PS_ERR_PROTOCOL;
}

static double clock_s;
static void env_compute(void *ctx, double flops, bool math_done) {
  (void)ctx, (void)math_done;
  clock_s += flops / 1e9;
}
static double env_now(void *ctx) { return (void)ctx, clock_s; }

/* The held-out MSE of the values the node holds now, over all test examples. */
static double node_mse(const wl_workload *wl, ps_node *node) {
  ps_key *keys;
  size_t n;
  CU_ASSERT_EQUAL_FATAL(wl->type->eval_keys(wl->impl, 0, 1, &keys, &n), PS_OK);
  const dnn_workload *d = dnn_of(wl);
  float *vals = malloc(d->total * sizeof *vals);
  size_t *off = malloc(n * sizeof *off), at = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(&d->layout, keys[i]);
    off[i] = at;
    CU_ASSERT_EQUAL(ps_node_read_owned(node, keys[i], vals + at), PS_OK);
    wl_add_initial(wl, keys[i], vals + at, len);
    at += len;
  }
  wl_eval_in in = {keys, n, vals, off};
  double num, den;
  CU_ASSERT_EQUAL(wl->type->eval(wl->impl, 0, 1, &in, &num, &den), PS_OK);
  CU_ASSERT_EQUAL(den, d->test_examples);
  free(keys);
  free(vals);
  free(off);
  return num / den;
}

/* A [8, 32, 4] MLP on one node, one worker, through wl_drive: the held-out
 * MSE falls from epoch to epoch (each epoch's below the one before) and
 * ends far below the untrained model's. */
static void test_learning_through_the_driver(void) {
  wl_workload *wl = make("{'type':'dnn','layers':[8,32,4],'key_floats':50,'examples':1024,"
                         "'batch':16,'epochs':6,'test_examples':256}", 1, 1);
  ps_layout layout = {0};
  wl_tables(wl, &layout);
  layout.num_nodes = 1;
  ps_node_config cfg;
  ps_node_config_default(&cfg);
  cfg.layout = layout;
  cfg.workers = 1;
  cfg.env = (ps_env){.send = send_forbidden, .wake = wake_ignored};
  ps_node *node = ps_node_new(&cfg);
  CU_ASSERT_PTR_NOT_NULL_FATAL(node);
  double before = node_mse(wl, node);
  wl_stream *s = wl_stream_new(wl, 0, 0, 17);
  wl_driver_env env = {.wait = env_wait, .compute = env_compute, .now = env_now, .rank = 0,
                       .workers = 1};
  wl_driver_stats stats;
  CU_ASSERT_EQUAL_FATAL(wl_drive(ps_node_worker(node, 0), s, &env, 1, &stats), PS_OK);
  CU_ASSERT_EQUAL_FATAL(stats.epochs, 6);
  CU_ASSERT_PTR_NOT_NULL_FATAL(stats.epoch_quality);
  printf("\n  held-out MSE %.4f before; by epoch", before);
  for (size_t e = 0; e < 6; e++) {
    const wl_epoch_quality *q = &stats.epoch_quality[e];
    printf(" %.4f", q->q_num / q->q_den);
    if (e) CU_ASSERT(q->q_num / q->q_den < q[-1].q_num / q[-1].q_den);
  }
  double after = node_mse(wl, node);
  printf("; after %.4f\n", after);
  CU_ASSERT(after < 0.25 * before);
  CU_ASSERT_DOUBLE_EQUAL(after, stats.epoch_quality[5].q_num / stats.epoch_quality[5].q_den,
                         1e-9);
  free(stats.epoch_end_s);
  free(stats.epoch_quality);
  free(stats.evals);
  wl_stream_free(s);
  ps_node_free(node);
  wl_free(wl);
}

/* --------------------------------------------------------------- errors */

static void test_spec_errors(void) {
  static const struct {
    const char *spec, *message;
  } cases[] = {
      {"{'type':'dnn'}", "layers: expected a list of layer widths, [784, 512, 10] (or "
                         "\"tensors\", a list of tensor sizes), found nothing"},
      {"{'type':'dnn','layers':[8]}", "layers: expected a list of 2 to 257 integers in "
                                      "[1, 1048576], found a list of 1"},
      {"{'type':'dnn','layers':8}", "layers: expected a list of 2 to 257 integers in "
                                    "[1, 1048576], found 8"},
      {"{'type':'dnn','layers':[8,0,2]}", "layers[1]: expected an integer in [1, 1048576], "
                                          "found 0"},
      {"{'type':'dnn','layers':[8,2.5]}", "layers[1]: expected an integer in [1, 1048576], "
                                          "found 2.5"},
      {"{'type':'dnn','layers':[8,2],'tensors':[3]}", "tensors: expected nothing beside "
                                                      "\"layers\" (give one of the two)"},
      {"{'type':'dnn','tensors':[100]}", "math: expected \"none\" with \"tensors\" (real math "
                                         "needs a model: give \"layers\"), found nothing"},
      {"{'type':'dnn','tensors':[]}", "tensors: expected a list of 1 to 256 integers"},
      {"{'type':'dnn','layers':[100000,100000]}", "layers: expected a model of at most "
                                                  "268435456 parameters, found 10000100000"},
      {"{'type':'dnn','layers':[8,2],'key_floats':0}", "key_floats: expected an integer in "
                                                       "[1, 16777216], found 0"},
      {"{'type':'dnn','tensors':[3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35],"
       "'key_floats':100,'math':'none'}",
       "key_floats: expected a key length that leaves at most 16 different remainders"},
      {"{'type':'dnn','tensors':[200000000],'key_floats':1,'math':'none'}",
       "key_floats: expected a key length that cuts the model into at most 16777216 keys"},
      {"{'type':'dnn','layers':[8,2],'batch':0}", "batch: expected an integer"},
      {"{'type':'dnn','layers':[8,2],'examples':0}", "examples: expected an integer"},
      {"{'type':'dnn','layers':[8,2],'lr':-1}", "lr: expected a number"},
      {"{'type':'dnn','layers':[1000,10],'examples':1000000}",
       "examples: expected at most 268435456 floats of examples and test_examples"},
      {"{'type':'dnn','layers':[8,2],'math':'some'}", "math: expected one of \"real\", "
                                                      "\"none\", found \"some\""},
      {"{'type':'dnn','layers':[8,2],'math':'none','target_quality':0.1}",
       "target_quality: expected nothing: with \"math\": \"none\" nothing is measured"},
      {"{'type':'dnn','layers':[8,2],'test_examples':0,'target_quality':0.1}",
       "test_examples: expected at least 1 with target_quality"},
      {"{'type':'dnn','layers':[8,2],'width':3}", "width: expected one of the fields type, "
                                                  "layers, tensors, key_floats"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[512] = "";
    wl_workload *wl = make_err(cases[i].spec, 1, 1, err, sizeof err);
    CU_ASSERT_PTR_NULL(wl);
    wl_free(wl);
    if (!unit_contains(err, cases[i].message))
      fprintf(stderr, "\n  case %zu: got \"%s\"\n  expected \"%s\"\n", i, err, cases[i].message);
    CU_ASSERT_TRUE(unit_contains(err, cases[i].message));
  }
}

PSLAB_SUITE("dnn", {"keys cover every parameter once", test_keys_cover_every_parameter_once},
            {"steps read and write every key", test_steps_read_and_write_every_key},
            {"math none and hot keys", test_math_none_and_hot_keys},
            {"deterministic", test_deterministic},
            {"gradient matches finite differences", test_gradient_matches_finite_differences},
            {"learning through the driver", test_learning_through_the_driver},
            {"spec errors", test_spec_errors})
