/*
 * The `dnn` workload: synchronous data-parallel training of a model given by
 * its layer sizes, the dense workload PSLD studies. Every step pulls every
 * key of the model and pushes every key, so each step waits for the slowest
 * server (and, under BSP, for the slowest worker).
 *
 * Model. "layers": [n0, n1, ..., nL] is a multilayer perceptron: tensor t
 * (t < L) is layer t's weight matrix (n_{t+1} rows of n_t floats, row j the
 * weights of output unit j) followed by its n_{t+1} biases, one tensor of
 * n_t n_{t+1} + n_{t+1} floats. "tensors": [p0, p1, ...] gives the tensors'
 * sizes alone (an access pattern without a model: math "none" only).
 *
 * Keys. A tensor of p floats is cut into floor(p / key_floats) keys of
 * key_floats floats and, when key_floats does not divide p, one key of the
 * remainder. A table holds keys of one length, so the full keys of every
 * tensor go to table 0 (tensor by tensor, in order: range partitioning cuts
 * the model into contiguous blocks) and the remainders to one table per
 * distinct remainder length; the core's PS_MAX_TABLES bounds how many
 * distinct remainders a model may leave. Every float of every tensor is in
 * exactly one key (dnn_key_span; tests/test_dnn.c checks it).
 *
 * Steps. The training examples are dealt round-robin over the workers
 * (example i to worker i mod W); an epoch is ceil(largest share / batch)
 * steps for every worker (the last steps of a smaller share are smaller,
 * possibly empty, so that epochs end together, as data-parallel training
 * with a fixed number of iterations does). A step reads and writes every key
 * of the model (one array, key order) and costs 6 x parameters x its
 * examples flops (forward 2, backward 4 per parameter and example) unless
 * flops_per_step says otherwise. Every key is as hot as every other.
 *
 * Real math ("math": "real", layers only). A fixed teacher network of the
 * same widths, drawn from data_seed (weights N(0, 2/fan_in), the last layer
 * N(0, 1/fan_in), biases N(0, 0.01)), labels inputs x ~ N(0, 1)^n0: the
 * student learns to regress the teacher's output. ReLU between layers, the
 * last layer linear; loss per example: squared error averaged over the
 * outputs. A step gathers the pulled values into the whole model, runs
 * forward and backward over its examples and pushes -lr times the gradient
 * averaged over them. Initial values: Glorot uniform weights,
 * U(-sqrt(6 / (fan_in + fan_out)), +...), a fixed function of the key;
 * biases 0. Held-out quality: "mse" (lower is better) on test_examples more
 * examples of the teacher, worker w evaluating those i with i mod W == w.
 *
 * Determinism: the data and the teacher depend on data_seed only; a
 * worker's order of its share (shuffled at each epoch's start) on its
 * stream's seed.
 */
#include "workloads/dnn.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DNN_INIT_SALT 0x646e6e696e6974ULL /* "dnninit" */

typedef struct {
  const dnn_workload *d;
  gsl_rng *rng;
  uint32_t worker;
  uint64_t *share;   /* its examples (indices), shuffled each epoch */
  uint64_t n_share;
  uint64_t drawn;
  /* Real math: the whole model gathered from a step's values, its
   * gradient, and one example's activations and back-propagated errors. */
  float *theta, *grad, *act, *err, *err_prev;
} dnn_stream;

/* ------------------------------------------------------------- layout */

bool dnn_key_span(const dnn_workload *d, ps_key k, uint32_t *tensor, uint64_t *offset,
                  uint32_t *len) {
  if (k >= d->n_keys) return false;
  *tensor = d->key_tensor[k];
  *offset = d->key_offset[k];
  *len = ps_layout_value_len(&d->layout, k);
  return true;
}

/* Tables and the key map (see the top). false with a message when the
 * tensors leave more remainders than tables, or on no memory. */
static bool build_keys(dnn_workload *d, char *err, size_t errlen) {
  uint64_t full = 0, kf = d->key_floats;
  uint64_t rems[DNN_MAX_TENSORS];
  uint32_t n_rems = 0;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    full += d->params[t] / kf;
    uint64_t r = d->params[t] % kf;
    bool seen = r == 0;
    for (uint32_t i = 0; i < n_rems && !seen; i++) seen = rems[i] == r;
    if (!seen) rems[n_rems++] = r;
  }
  uint32_t tables = (full > 0) + n_rems;
  if (tables > PS_MAX_TABLES) {
    snprintf(err, errlen, "key_floats: expected a key length that leaves at most %u "
             "different remainders of the tensors' sizes (the core keeps keys of one length "
             "per table, %u tables at most), found %u with %u: pick one that divides more of "
             "them", PS_MAX_TABLES - (full > 0), PS_MAX_TABLES, n_rems, d->key_floats);
    return false;
  }
  uint64_t n = full;
  for (uint32_t t = 0; t < d->n_tensors; t++) n += d->params[t] % kf != 0;
  if (n > PS_MAX_OP_KEYS) {
    snprintf(err, errlen, "key_floats: expected a key length that cuts the model into at "
             "most %u keys (a step pulls them all in one operation), found %llu keys of at "
             "most %u floats", PS_MAX_OP_KEYS, (unsigned long long)n, d->key_floats);
    return false;
  }
  d->n_keys = n;
  d->key_tensor = malloc(n * sizeof *d->key_tensor);
  d->key_offset = malloc(n * sizeof *d->key_offset);
  if (!d->key_tensor || !d->key_offset) {
    snprintf(err, errlen, "out of memory for %llu keys", (unsigned long long)n);
    return false;
  }
  ps_key k = 0;
  d->layout.num_tables = 0;
  if (full)
    d->layout.tables[d->layout.num_tables++] = (ps_table){.first = 0, .count = full,
                                                          .value_len = (uint32_t)kf};
  for (uint32_t t = 0; t < d->n_tensors; t++)
    for (uint64_t c = 0; c < d->params[t] / kf; c++, k++) {
      d->key_tensor[k] = t;
      d->key_offset[k] = c * kf;
    }
  for (uint32_t i = 0; i < n_rems; i++) {
    ps_table *tb = &d->layout.tables[d->layout.num_tables++];
    *tb = (ps_table){.first = k, .count = 0, .value_len = (uint32_t)rems[i]};
    for (uint32_t t = 0; t < d->n_tensors; t++) {
      if (d->params[t] % kf != rems[i]) continue;
      d->key_tensor[k] = t;
      d->key_offset[k] = d->params[t] - rems[i];
      k++;
      tb->count++;
    }
  }
  return true;
}

/* -------------------------------------------------------------- parsing */

/* A list of integers in [1, max] at `field`, n in [min_n, max_n], into out. */
static bool parse_sizes(const cJSON *list, const char *field, uint32_t min_n, uint32_t max_n,
                        double max, uint64_t *out, uint32_t *n, char *err, size_t errlen) {
  char expected[128];
  int count = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
  if (count < (int)min_n || count > (int)max_n) {
    snprintf(expected, sizeof expected, "a list of %u to %u integers in [1, %.0f]", min_n,
             max_n, max);
    if (count >= 0)
      snprintf(err, errlen, "%s: expected %s, found a list of %d", field, expected, count);
    else
      wlj_error(err, errlen, field, expected, list);
    return false;
  }
  uint32_t i = 0;
  for (const cJSON *v = list->child; v; v = v->next, i++) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > max ||
        v->valuedouble != floor(v->valuedouble)) {
      char at[64];
      snprintf(at, sizeof at, "%s[%u]", field, i);
      snprintf(expected, sizeof expected, "an integer in [1, %.0f]", max);
      wlj_error(err, errlen, at, expected, v);
      return false;
    }
    out[i] = (uint64_t)v->valuedouble;
  }
  *n = i;
  return true;
}

/* "layers" or "tensors" (exactly one) into the tensors' sizes. */
static bool parse_model(const cJSON *json, dnn_workload *d, char *err, size_t errlen) {
  const cJSON *layers = cJSON_GetObjectItemCaseSensitive(json, "layers");
  const cJSON *tensors = cJSON_GetObjectItemCaseSensitive(json, "tensors");
  if (!layers == !tensors) {
    wlj_error(err, errlen, layers ? "tensors" : "layers",
              layers ? "nothing beside \"layers\" (give one of the two)"
                     : "a list of layer widths, [784, 512, 10] (or \"tensors\", a list of "
                       "tensor sizes)",
              tensors);
    return false;
  }
  if (tensors)
    return parse_sizes(tensors, "tensors", 1, DNN_MAX_TENSORS, (double)DNN_MAX_PARAMS,
                       d->params, &d->n_tensors, err, errlen);
  uint64_t w[DNN_MAX_TENSORS + 1];
  uint32_t n = 0;
  if (!parse_sizes(layers, "layers", 2, DNN_MAX_TENSORS + 1, DNN_MAX_WIDTH, w, &n, err,
                   errlen))
    return false;
  d->width = malloc(n * sizeof *d->width);
  if (!d->width) {
    snprintf(err, errlen, "out of memory");
    return false;
  }
  d->n_tensors = n - 1;
  for (uint32_t i = 0; i < n; i++) d->width[i] = (uint32_t)w[i];
  for (uint32_t t = 0; t < d->n_tensors; t++) d->params[t] = w[t] * w[t + 1] + w[t + 1];
  return true;
}

static bool dnn_parse(const cJSON *json, dnn_workload *d, char *err, size_t errlen) {
  static const char *const known[] = {"type", "layers", "tensors", "key_floats", "batch",
                                      "examples", "epochs", "lr", "flops_per_step",
                                      "test_examples", "data_seed", "math", "target_quality",
                                      "eval_every", NULL};
  const uint64_t kf = 4096, batch = 32, examples = 4096, one = 1, test = 512;
  uint64_t key_floats = kf;
  if (!wlj_check_fields(json, known, err, errlen) || !parse_model(json, d, err, errlen) ||
      !wlj_uint(json, "key_floats", 1, DNN_MAX_KEY_FLOATS, &kf, &key_floats, err, errlen))
    return false;
  d->key_floats = (uint32_t)key_floats;
  if (!wlj_uint(json, "batch", 1, 1u << 20, &batch, &d->batch, err, errlen) ||
      !wlj_uint(json, "examples", 1, WLJ_INT_MAX, &examples, &d->examples, err, errlen) ||
      !wlj_uint(json, "epochs", 1, 1u << 30, &one, &d->epochs, err, errlen) ||
      !wlj_number(json, "lr", 0, INFINITY, 0.05, &d->lr, err, errlen) ||
      !wlj_number(json, "flops_per_step", 0, INFINITY, 0, &d->flops, err, errlen) ||
      !wlj_uint(json, "test_examples", 0, WLJ_INT_MAX, &test, &d->test_examples, err,
                errlen) ||
      !wlj_uint(json, "data_seed", 0, WLJ_INT_MAX, &one, &d->data_seed, err, errlen))
    return false;
  d->has_flops = cJSON_GetObjectItemCaseSensitive(json, "flops_per_step") != NULL;
  d->total = 0;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    d->base[t] = d->total;
    d->total += d->params[t];
  }
  if (d->total > DNN_MAX_PARAMS) {
    snprintf(err, errlen, "%s: expected a model of at most %llu parameters, found %llu",
             d->width ? "layers" : "tensors", (unsigned long long)DNN_MAX_PARAMS,
             (unsigned long long)d->total);
    return false;
  }
  return true;
}

/* ----------------------------------------------------------------- math */

/* Layer t's weights and biases within a model vector. */
static const float *weights(const dnn_workload *d, const float *m, uint32_t t) {
  return m + d->base[t];
}
static const float *biases(const dnn_workload *d, const float *m, uint32_t t) {
  return m + d->base[t] + (uint64_t)d->width[t] * d->width[t + 1];
}

/* Activations of every layer for input x into act (sum of widths floats;
 * layer l's at act + sum of earlier widths); returns the output's. */
static float *forward(const dnn_workload *d, const float *m, const float *x, float *act) {
  uint32_t in = d->width[0];
  memcpy(act, x, in * sizeof *act);
  float *h = act;
  for (uint32_t t = 0; t < d->n_tensors; t++) {
    uint32_t out = d->width[t + 1];
    const float *w = weights(d, m, t), *b = biases(d, m, t);
    float *z = h + in;
    bool last = t + 1 == d->n_tensors;
    for (uint32_t j = 0; j < out; j++) {
      const float *row = w + (uint64_t)j * in;
      float sum = b[j];
      for (uint32_t i = 0; i < in; i++) sum += row[i] * h[i];
      z[j] = last || sum > 0 ? sum : 0; /* ReLU between layers */
    }
    h = z;
    in = out;
  }
  return h;
}

/* Squared error of output y_hat against y, averaged over the outputs. */
static double example_loss(const dnn_workload *d, const float *y_hat, const float *y) {
  uint32_t out = d->width[d->n_tensors];
  double sum = 0;
  for (uint32_t j = 0; j < out; j++) sum += ((double)y_hat[j] - y[j]) * ((double)y_hat[j] - y[j]);
  return sum / out;
}

/* Adds one example's gradient of its loss to g (a model vector), from the
 * activations forward left in act; err, err_prev: room for the widest
 * layer. Returns its loss. */
static double backward(const dnn_workload *d, const float *m, const float *act,
                       const float *y, float *g, float *err, float *err_prev) {
  uint32_t L = d->n_tensors, out = d->width[L];
  const float *offs[DNN_MAX_TENSORS + 1];
  const float *a = act;
  for (uint32_t l = 0; l <= L; l++) {
    offs[l] = a;
    a += d->width[l];
  }
  double loss = example_loss(d, offs[L], y);
  for (uint32_t j = 0; j < out; j++) err[j] = 2.0f * (offs[L][j] - y[j]) / (float)out;
  for (uint32_t t = L; t-- > 0;) {
    uint32_t in = d->width[t], o = d->width[t + 1];
    const float *w = weights(d, m, t), *h = offs[t];
    float *gw = g + d->base[t], *gb = gw + (uint64_t)in * o;
    if (t > 0) memset(err_prev, 0, in * sizeof *err_prev);
    for (uint32_t j = 0; j < o; j++) {
      float e = err[j];
      if (e == 0) continue;
      gb[j] += e;
      float *row_g = gw + (uint64_t)j * in;
      const float *row_w = w + (uint64_t)j * in;
      for (uint32_t i = 0; i < in; i++) row_g[i] += e * h[i];
      if (t > 0)
        for (uint32_t i = 0; i < in; i++) err_prev[i] += e * row_w[i];
    }
    if (t == 0) break;
    for (uint32_t i = 0; i < in; i++) err[i] = h[i] > 0 ? err_prev[i] : 0; /* ReLU' */
  }
  return loss;
}

/* --------------------------------------------------------------- data */

/* The teacher and the examples it labels (real math). */
static bool make_data(dnn_workload *d, char *err, size_t errlen) {
  uint32_t in = d->width[0], out = d->width[d->n_tensors];
  uint64_t floats = (d->examples + d->test_examples) * (uint64_t)(in + out);
  if (floats > DNN_MAX_DATA_FLOATS) {
    snprintf(err, errlen, "examples: expected at most %llu floats of examples and "
             "test_examples ((examples + test_examples) x (inputs + outputs)), found %llu",
             (unsigned long long)DNN_MAX_DATA_FLOATS, (unsigned long long)floats);
    return false;
  }
  uint64_t acts = 0;
  for (uint32_t l = 0; l <= d->n_tensors; l++) acts += d->width[l];
  float *teacher = malloc(d->total * sizeof *teacher), *act = malloc(acts * sizeof *act);
  d->train_x = malloc((d->examples * in + 1) * sizeof(float));
  d->train_y = malloc((d->examples * out + 1) * sizeof(float));
  d->test_x = malloc((d->test_examples * in + 1) * sizeof(float));
  d->test_y = malloc((d->test_examples * out + 1) * sizeof(float));
  gsl_rng *rng = wl_rng_new(d->data_seed, 0);
  bool ok = teacher && act && d->train_x && d->train_y && d->test_x && d->test_y && rng;
  for (uint32_t t = 0; ok && t < d->n_tensors; t++) {
    uint32_t fi = d->width[t], fo = d->width[t + 1];
    double sd = sqrt((t + 1 == d->n_tensors ? 1.0 : 2.0) / fi);
    float *w = teacher + d->base[t];
    for (uint64_t i = 0; i < (uint64_t)fi * fo; i++) w[i] = (float)gsl_ran_gaussian(rng, sd);
    for (uint32_t j = 0; j < fo; j++) w[(uint64_t)fi * fo + j] = (float)gsl_ran_gaussian(rng, 0.1);
  }
  for (uint64_t e = 0; ok && e < d->examples + d->test_examples; e++) {
    bool train = e < d->examples;
    uint64_t i = train ? e : e - d->examples;
    float *x = (train ? d->train_x : d->test_x) + i * in;
    float *y = (train ? d->train_y : d->test_y) + i * out;
    for (uint32_t k = 0; k < in; k++) x[k] = (float)gsl_ran_gaussian(rng, 1.0);
    memcpy(y, forward(d, teacher, x, act), out * sizeof *y);
  }
  if (rng) gsl_rng_free(rng);
  free(teacher);
  free(act);
  if (!ok) snprintf(err, errlen, "out of memory for %llu examples",
                    (unsigned long long)(d->examples + d->test_examples));
  return ok;
}

/* ------------------------------------------------------------ creation */

uint64_t dnn_share(const dnn_workload *d, uint32_t w) {
  return d->examples / d->workers + (w < d->examples % d->workers);
}

static void dnn_free(void *impl) {
  dnn_workload *d = impl;
  if (!d) return;
  free(d->width);
  free(d->key_tensor);
  free(d->key_offset);
  free(d->train_x);
  free(d->train_y);
  free(d->test_x);
  free(d->test_y);
  free(d);
}

/* Held-out examples are measured by their MSE. */
static const char *dnn_quality_name(const cJSON *json) {
  (void)json;
  return "mse";
}

static void *dnn_create(const cJSON *json, const wl_context *ctx, wl_info *info, char *err,
                        size_t errlen) {
  dnn_workload *d = calloc(1, sizeof *d);
  if (!d) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  uint64_t workers = (uint64_t)ctx->nodes * ctx->workers_per_node;
  if (workers > UINT32_MAX) {
    snprintf(err, errlen, "expected at most %u workers, found %llu", UINT32_MAX,
             (unsigned long long)workers);
    free(d);
    return NULL;
  }
  d->workers = (uint32_t)workers;
  d->nodes = ctx->nodes;
  info->has_quality = true;
  info->quality = wl_quality_named(dnn_quality_name(json));
  bool ok = dnn_parse(json, d, err, errlen) && wlj_math_fields(json, info, err, errlen);
  if (ok && info->math && !d->width) {
    snprintf(err, errlen, "math: expected \"none\" with \"tensors\" (real math needs a model: "
             "give \"layers\"), found %s", cJSON_GetObjectItemCaseSensitive(json, "math")
             ? "\"real\"" : "nothing (the default is \"real\")");
    ok = false;
  }
  if (ok && info->math && d->test_examples == 0 &&
      cJSON_GetObjectItemCaseSensitive(json, "target_quality")) {
    wlj_error(err, errlen, "test_examples", "at least 1 with target_quality (the quality is "
              "measured on them)", cJSON_GetObjectItemCaseSensitive(json, "test_examples"));
    ok = false;
  }
  ok = ok && build_keys(d, err, errlen);
  d->math = info->math;
  ok = ok && (!d->math || make_data(d, err, errlen));
  if (!ok) {
    dnn_free(d);
    return NULL;
  }
  info->has_quality = d->math && d->test_examples > 0;
  d->steps_per_epoch = (dnn_share(d, 0) + d->batch - 1) / d->batch;
  if (d->steps_per_epoch == 0) d->steps_per_epoch = 1; /* fewer examples than workers */
  d->steps_per_worker = d->steps_per_epoch * d->epochs;
  info->steps_per_worker = d->steps_per_worker;
  info->steps_per_epoch = d->steps_per_epoch;
  info->max_step_keys = (size_t)d->n_keys;
  info->max_step_items = d->math ? (size_t)d->batch : 0;
  info->samples = false;
  return d;
}

static void dnn_tables(const void *impl, ps_layout *layout) {
  const dnn_workload *d = impl;
  layout->num_tables = d->layout.num_tables;
  memcpy(layout->tables, d->layout.tables, sizeof d->layout.tables);
}

/* -------------------------------------------------------------- streams */

static void dnn_stream_free(void *stream) {
  dnn_stream *s = stream;
  if (!s) return;
  if (s->rng) gsl_rng_free(s->rng);
  free(s->share);
  free(s->theta);
  free(s->grad);
  free(s->act);
  free(s->err);
  free(s->err_prev);
  free(s);
}

static void *dnn_stream_new(const void *impl, uint32_t node, uint32_t worker_rank,
                            uint64_t seed) {
  const dnn_workload *d = impl;
  if (node >= d->nodes || worker_rank >= d->workers) return NULL;
  dnn_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->d = d;
  s->worker = worker_rank;
  s->n_share = dnn_share(d, worker_rank);
  s->share = malloc((s->n_share ? s->n_share : 1) * sizeof *s->share);
  s->rng = wl_rng_new(seed, worker_rank);
  bool ok = s->share && s->rng;
  for (uint64_t i = 0; ok && i < s->n_share; i++) s->share[i] = worker_rank + i * d->workers;
  if (ok && d->math) {
    uint64_t acts = 0, widest = 0;
    for (uint32_t l = 0; l <= d->n_tensors; l++) {
      acts += d->width[l];
      if (d->width[l] > widest) widest = d->width[l];
    }
    s->theta = malloc(d->total * sizeof *s->theta);
    s->grad = malloc(d->total * sizeof *s->grad);
    s->act = malloc(acts * sizeof *s->act);
    s->err = malloc(widest * sizeof *s->err);
    s->err_prev = malloc(widest * sizeof *s->err_prev);
    ok = s->theta && s->grad && s->act && s->err && s->err_prev;
  }
  if (!ok) {
    dnn_stream_free(s);
    return NULL;
  }
  return s;
}

static bool dnn_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  dnn_stream *s = stream;
  const dnn_workload *d = s->d;
  if (s->drawn == d->steps_per_worker) return false;
  uint64_t k = s->drawn % d->steps_per_epoch;
  if (k == 0 && s->n_share > 1) gsl_ran_shuffle(s->rng, s->share, s->n_share, sizeof *s->share);
  uint64_t lo = k * d->batch < s->n_share ? k * d->batch : s->n_share;
  uint64_t hi = lo + d->batch < s->n_share ? lo + d->batch : s->n_share;
  for (uint64_t i = 0; i < d->n_keys; i++) slot[i] = i;
  out->reads = slot;
  out->n_reads = (size_t)d->n_keys;
  out->writes = slot;
  out->n_writes = (size_t)d->n_keys;
  out->n_samples = 0;
  out->flops = d->has_flops ? d->flops : 6.0 * (double)d->total * (double)(hi - lo);
  if (items) {
    memcpy(items, s->share + lo, (size_t)(hi - lo) * sizeof *items);
    out->items = items;
    out->n_items = (size_t)(hi - lo);
  }
  s->drawn++;
  return true;
}

/* ------------------------------------------------------- math and eval */

static void dnn_initial(const void *impl, ps_key k, float *val, uint32_t len) {
  const dnn_workload *d = impl;
  uint32_t t, n;
  uint64_t off;
  if (!d->width || !dnn_key_span(d, k, &t, &off, &n)) return;
  uint64_t wfloats = (uint64_t)d->width[t] * d->width[t + 1];
  float scale = (float)sqrt(6.0 / (d->width[t] + d->width[t + 1]));
  for (uint32_t i = 0; i < len && i < n; i++)
    if (off + i < wfloats) val[i] += wl_initial_uniform(DNN_INIT_SALT, k, i, scale);
}

/* The whole model from the values of keys[n] (vals, key i's at off[i]). */
static int gather(const dnn_workload *d, const ps_key *keys, size_t n, const float *vals,
                  const size_t *off, float *theta) {
  for (size_t i = 0; i < n; i++) {
    uint32_t t, len;
    uint64_t o;
    if (!dnn_key_span(d, keys[i], &t, &o, &len)) return PS_ERR_INVAL;
    memcpy(theta + d->base[t] + o, vals + off[i], len * sizeof *theta);
  }
  return n == d->n_keys ? PS_OK : PS_ERR_INVAL;
}

static int dnn_math(void *stream, const wl_step *st, wl_math_io *io) {
  dnn_stream *s = stream;
  const dnn_workload *d = s->d;
  int rc = gather(d, st->reads, st->n_reads, io->reads, io->read_off, s->theta);
  if (rc != PS_OK || st->writes != st->reads) return rc == PS_OK ? PS_ERR_INVAL : rc;
  if (st->n_items == 0) return PS_OK;
  memset(s->grad, 0, d->total * sizeof *s->grad);
  uint32_t in = d->width[0], out = d->width[d->n_tensors];
  double loss = 0;
  for (size_t e = 0; e < st->n_items; e++) {
    if (st->items[e] >= d->examples) return PS_ERR_INVAL;
    forward(d, s->theta, d->train_x + st->items[e] * in, s->act);
    loss += backward(d, s->theta, s->act, d->train_y + st->items[e] * out, s->grad, s->err,
                     s->err_prev);
  }
  float step = (float)(-d->lr / (double)st->n_items); /* the batch's mean gradient */
  for (size_t i = 0; i < st->n_writes; i++) {
    uint32_t t, len;
    uint64_t o;
    if (!dnn_key_span(d, st->writes[i], &t, &o, &len)) return PS_ERR_INVAL;
    const float *g = s->grad + d->base[t] + o;
    float *delta = io->write_deltas + io->write_off[i];
    for (uint32_t j = 0; j < len; j++) delta[j] += step * g[j];
  }
  io->loss += loss;
  io->examples += (double)st->n_items;
  return PS_OK;
}

static int dnn_eval_keys(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                         size_t *n) {
  const dnn_workload *d = impl;
  (void)rank;
  (void)workers;
  ps_key *all = malloc((d->n_keys ? d->n_keys : 1) * sizeof *all);
  if (!all) return PS_ERR_NOMEM;
  for (uint64_t k = 0; k < d->n_keys; k++) all[k] = k;
  *keys = all;
  *n = (size_t)d->n_keys;
  return PS_OK;
}

static int dnn_eval(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
                    double *num, double *den) {
  const dnn_workload *d = impl;
  uint64_t acts = 0;
  for (uint32_t l = 0; l <= d->n_tensors; l++) acts += d->width[l];
  float *theta = malloc(d->total * sizeof *theta), *act = malloc(acts * sizeof *act);
  int rc = theta && act ? gather(d, in->keys, in->n, in->vals, in->off, theta) : PS_ERR_NOMEM;
  uint32_t n_in = d->width[0], out = d->width[d->n_tensors];
  double sum = 0, count = 0;
  for (uint64_t i = rank; rc == PS_OK && i < d->test_examples; i += workers) {
    const float *y_hat = forward(d, theta, d->test_x + i * n_in, act);
    sum += example_loss(d, y_hat, d->test_y + i * out);
    count++;
  }
  free(theta);
  free(act);
  *num = sum;
  *den = count;
  return rc;
}

/* -------------------------------------------------------------- hot keys */

/* Every key is read and written by every step: all equally hot, ties by key. */
static size_t dnn_hot_keys(const void *impl, size_t n, ps_key *out) {
  const dnn_workload *d = impl;
  size_t found = n < d->n_keys ? n : (size_t)d->n_keys;
  for (size_t k = 0; k < found; k++) out[k] = k;
  return found;
}

/* ---------------------------------------------------------------- saving */

/* One tensor as NumPy's .npy (format 1.0: magic, header length, a Python
 * dict literal padded to 64 bytes, then the floats in C order, float32 of the
 * machine's byte order). shape: rows x cols, or a vector when rows is 0. */
static int save_npy(const char *dir, const char *name, const float *v, uint64_t rows,
                    uint64_t cols, char *err, size_t errlen) {
  const uint16_t one = 1;
  char dict[160], shape[64];
  if (rows) snprintf(shape, sizeof shape, "(%llu, %llu)", (unsigned long long)rows,
                     (unsigned long long)cols);
  else snprintf(shape, sizeof shape, "(%llu,)", (unsigned long long)cols);
  int n = snprintf(dict, sizeof dict, "{'descr': '%cf4', 'fortran_order': False, 'shape': %s, }",
                   *(const uint8_t *)&one ? '<' : '>', shape);
  size_t header = ((size_t)n + 1 + 10 + 63) / 64 * 64 - 10; /* dict, '\n', padding */
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, name, err, errlen)) return -1;
  fwrite("\x93NUMPY\x01\x00", 1, 8, sv.f);
  fputc((int)(header & 0xff), sv.f);
  fputc((int)(header >> 8), sv.f);
  fprintf(sv.f, "%s%*s\n", dict, (int)(header - (size_t)n - 1), "");
  fwrite(v, sizeof *v, (rows ? rows : 1) * cols, sv.f);
  return wl_save_close(&sv, true, err, errlen);
}

/* Every tensor, gathered from its keys: with layers, layer<t>.weight.npy
 * (outputs x inputs) and layer<t>.bias.npy; with tensors, tensor<t>.npy. */
static int dnn_save(const void *impl, const ps_layout *layout, const float *const *vals,
                    const char *dir, char *err, size_t errlen) {
  const dnn_workload *d = impl;
  float *all = malloc((d->total ? d->total : 1) * sizeof *all);
  if (!all) {
    snprintf(err, errlen, "params: out of memory for the model's %llu floats",
             (unsigned long long)d->total);
    return -1;
  }
  for (uint32_t t = 0; t < layout->num_tables; t++) {
    const ps_table *tb = &layout->tables[t];
    for (uint64_t i = 0; i < tb->count; i++) {
      ps_key k = tb->first + i;
      memcpy(all + d->base[d->key_tensor[k]] + d->key_offset[k], vals[t] + i * tb->value_len,
             tb->value_len * sizeof *all);
    }
  }
  int rc = 0;
  for (uint32_t t = 0; rc == 0 && t < d->n_tensors; t++) {
    char name[64];
    const float *v = all + d->base[t];
    if (!d->width) {
      snprintf(name, sizeof name, "tensor%u.npy", (unsigned)t);
      rc = save_npy(dir, name, v, 0, d->params[t], err, errlen);
      continue;
    }
    uint64_t in = d->width[t], out = d->width[t + 1];
    snprintf(name, sizeof name, "layer%u.weight.npy", (unsigned)t);
    rc = save_npy(dir, name, v, out, in, err, errlen);
    snprintf(name, sizeof name, "layer%u.bias.npy", (unsigned)t);
    if (rc == 0) rc = save_npy(dir, name, v + out * in, 0, out, err, errlen);
  }
  free(all);
  return rc;
}

const wl_type wl_type_dnn = {
    .quality_name = dnn_quality_name,
    .name = "dnn",
    .create = dnn_create,
    .free = dnn_free,
    .tables = dnn_tables,
    .stream_new = dnn_stream_new,
    .stream_free = dnn_stream_free,
    .next_step = dnn_next_step,
    .hot_keys = dnn_hot_keys,
    .initial = dnn_initial,
    .math = dnn_math,
    .eval_keys = dnn_eval_keys,
    .eval = dnn_eval,
    .save = dnn_save,
};
