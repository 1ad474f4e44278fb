/*
 * The `mf` workload: matrix factorization by SGD, as in the Lapse and NuPS
 * papers.
 *
 * Model. A ratings matrix (mf_data.c: a file or a generator) is approximated
 * by W H^T: row r's factor W_r is key r of table 0 (rows keys), column c's
 * factor H_c is key rows + c of table 1 (cols keys), each `rank` floats. A
 * step takes `batch` ratings of the worker's share; it reads and writes the
 * distinct row keys and then the distinct column keys they name (one array:
 * writes == reads), and its items are the ratings' indices. Its math
 * minimizes, over the step's ratings (r, c, y),
 *     f = sum (W_r . H_c - y)^2 + reg (|W_r|^2 + |H_c|^2)
 * and pushes delta = -lr * df/dtheta, the gradient taken at the pulled values
 * and summed over the step's ratings (a minibatch: a row rated twice in a
 * step gets both terms). The loss reported is the squared error alone (reg
 * left out), one example per rating. Cost: 8 * rank flops a rating (the dot
 * product and the two updates), unless flops_per_step says otherwise.
 *
 * Optimizer "adagrad": each factor key holds [factor | accumulated squared
 * gradients] (2 rank floats; internal.h, AdaGrad), and a key's step takes
 * the same summed gradient g through AdaGrad (per float: acc += g^2,
 * factor -= lr g / sqrt(acc + g^2 + 1e-10), from the pulled acc): per-key
 * step sizes, which shrink on the hot factors that many ratings push.
 * Cost: 6 flops more a float of each key written.
 *
 * Initial values. The store starts at zero; a factor's value is the stored
 * one plus uniform(-s, s) per float (wl_initial_uniform, a fixed function of
 * the key), s = sqrt(rms / rank) for rms the root mean square of the
 * training ratings (init_scale overrides): |W_r| |H_c| starts near rms / 3,
 * enough to break symmetry and let every factor move, small enough that the
 * first predictions do not swamp the ratings.
 *
 * Split over workers. With W workers (nodes * workers_per_node, rank w =
 * node * workers_per_node + index) the training ratings are shuffled by
 * data_seed and dealt round-robin. With clustering, rating (r, c) goes to
 * node floor(r * N / rows) -- rows [ceil(n rows / N), ceil((n+1) rows / N))
 * go to node n, the blocks range partitioning cuts the row table into -- and
 * is dealt round-robin among that node's workers, so a node's workers train
 * their node's rows and only the column factors travel. Every worker runs
 * the same number of steps an epoch (ceil of the largest share / batch; the
 * smaller shares make smaller or empty steps, so epochs end together) and
 * shuffles its share at each epoch's start with its own stream's generator.
 *
 * Blocking (DSGD, Gemulla et al. 2011). Columns are cut into W blocks,
 * [ceil(b cols / W), ceil((b+1) cols / W)); an epoch has W sub-epochs, and in
 * sub-epoch s worker w trains only its ratings in column block (w + s) mod W.
 * DSGD's stratum s is the set of blocks (row block w, column block
 * (w + s) mod W): no two workers share a column block in a sub-epoch, so
 * column factors are never updated by two workers at once; the rows are the
 * worker's own data. With clustering and one worker per node the row blocks
 * are disjoint too and it is DSGD exactly; with several workers per node the
 * row factors of a node are shared by its workers, which Lapse's MF does
 * with its data clustering and parameter blocking. Sub-epochs have the same
 * number of steps for every worker (the largest block over all workers,
 * padded), so the driver's lookahead intents name the next block's columns
 * just before the block changes hands: relocating policies move it then.
 *
 * Held-out quality: RMSE on the held-out ratings; worker w of W evaluates
 * held-out ratings i with i % W == w, pulling their distinct row and column
 * keys, and returns the sum of squared errors and their count.
 *
 * math "none" keeps the access pattern (the same keys, steps and flops) and
 * does no arithmetic.
 */
#include "workloads/mf.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MF_INIT_SALT 0x6d66696e6974ULL /* "mfinit" */
#define MF_MAX_RANK 65536


/* Keys to positions, cleared in O(1) by a stamp: a slot is in use when its
 * stamp is the map's. */
typedef struct {
  ps_key *keys;
  uint32_t *pos;
  uint64_t *stamps;
  size_t mask;
  uint64_t stamp;
} keymap;

typedef struct {
  const mf_workload *m;
  uint32_t worker;
  gsl_rng *rng;
  uint64_t *items;     /* the worker's share (its copy, shuffled each epoch) */
  uint64_t *block_off; /* blocks + 1 offsets into items */
  uint64_t drawn;
  keymap seen;         /* next_step: the step's distinct keys */
  keymap where;        /* math: a key's position in the step's reads */
} mf_stream;

/* --------------------------------------------------------------- keymap */

static bool keymap_init(keymap *k, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  k->keys = malloc(cap * sizeof *k->keys);
  k->pos = malloc(cap * sizeof *k->pos);
  k->stamps = calloc(cap, sizeof *k->stamps);
  k->mask = cap - 1;
  k->stamp = 1;
  return k->keys && k->pos && k->stamps;
}

static void keymap_free(keymap *k) {
  free(k->keys);
  free(k->pos);
  free(k->stamps);
}

static void keymap_clear(keymap *k) { k->stamp++; }

/* Inserts key at position pos unless present; returns whether it was new. */
static bool keymap_put(keymap *k, ps_key key, uint32_t pos) {
  size_t i = (size_t)ps_mix64(key) & k->mask;
  while (k->stamps[i] == k->stamp) {
    if (k->keys[i] == key) return false;
    i = (i + 1) & k->mask;
  }
  k->stamps[i] = k->stamp;
  k->keys[i] = key;
  k->pos[i] = pos;
  return true;
}

/* key's position, UINT32_MAX when absent. */
static uint32_t keymap_get(const keymap *k, ps_key key) {
  size_t i = (size_t)ps_mix64(key) & k->mask;
  while (k->stamps[i] == k->stamp) {
    if (k->keys[i] == key) return k->pos[i];
    i = (i + 1) & k->mask;
  }
  return UINT32_MAX;
}

/* ------------------------------------------------------------- the split */

static uint32_t column_block(const mf_workload *m, uint32_t col) {
  return (uint32_t)((uint64_t)col * m->blocks / m->d.cols);
}

/* The worker of each training rating, in a shuffle by data_seed. */
static bool assign_workers(const mf_workload *m, uint64_t *order, uint32_t *worker) {
  gsl_rng *rng = wl_rng_new(m->d.data_seed, 1);
  uint64_t *dealt = calloc(m->nodes, sizeof *dealt); /* per node, with clustering */
  if (!rng || !dealt) {
    if (rng) gsl_rng_free(rng);
    free(dealt);
    return false;
  }
  for (size_t i = 0; i < m->d.n_train; i++) order[i] = i;
  gsl_ran_shuffle(rng, order, m->d.n_train, sizeof *order);
  for (size_t p = 0; p < m->d.n_train; p++) {
    uint64_t i = order[p];
    if (!m->clustering) {
      worker[i] = (uint32_t)(p % m->workers);
      continue;
    }
    uint32_t node = (uint32_t)((uint64_t)m->d.train[i].row * m->nodes / m->d.rows);
    worker[i] = node * m->workers_per_node + (uint32_t)(dealt[node]++ % m->workers_per_node);
  }
  gsl_rng_free(rng);
  free(dealt);
  return true;
}

/* Fills share and share_off: each worker's ratings grouped by column block,
 * in the shuffled order within a group; and the steps an epoch takes. */
static bool split_data(mf_workload *m) {
  size_t groups = (size_t)m->workers * m->blocks;
  uint64_t *order = malloc((m->d.n_train ? m->d.n_train : 1) * sizeof *order);
  uint32_t *worker = malloc((m->d.n_train ? m->d.n_train : 1) * sizeof *worker);
  m->share = malloc((m->d.n_train ? m->d.n_train : 1) * sizeof *m->share);
  m->share_off = calloc(groups + 1, sizeof *m->share_off);
  bool ok = order && worker && m->share && m->share_off && assign_workers(m, order, worker);
  if (ok) {
    for (size_t i = 0; i < m->d.n_train; i++)
      m->share_off[(size_t)worker[i] * m->blocks + column_block(m, m->d.train[i].col) + 1]++;
    uint64_t largest = 0;
    for (size_t g = 0; g < groups; g++) {
      if (m->share_off[g + 1] > largest) largest = m->share_off[g + 1];
      m->share_off[g + 1] += m->share_off[g];
    }
    m->steps_per_block = (largest + m->batch - 1) / m->batch;
    uint64_t *next = malloc(groups * sizeof *next);
    ok = next != NULL;
    if (ok) {
      memcpy(next, m->share_off, groups * sizeof *next);
      for (size_t p = 0; p < m->d.n_train; p++) {
        uint64_t i = order[p];
        size_t g = (size_t)worker[i] * m->blocks + column_block(m, m->d.train[i].col);
        m->share[next[g]++] = i;
      }
    }
    free(next);
  }
  free(order);
  free(worker);
  m->steps_per_epoch = m->steps_per_block * m->blocks;
  m->steps_per_worker = m->steps_per_epoch * m->epochs;
  return ok;
}

/* ------------------------------------------------------------- creation */

static const char *const mf_fields[] = {
    "type",       "rank",     "lr",     "reg",  "batch", "epochs", "flops_per_step",
    "init_scale", "clustering", "blocking", "math", "target_quality", "eval_every",
    "optimizer", "stop_after", NULL};

/* The known fields: the type's own and the data's. */
static bool check_fields(const cJSON *json, char *err, size_t errlen) {
  const char *known[32];
  size_t n = 0;
  for (size_t i = 0; mf_fields[i]; i++) known[n++] = mf_fields[i];
  for (size_t i = 0; mf_data_fields[i]; i++) known[n++] = mf_data_fields[i];
  known[n] = NULL;
  return wlj_check_fields(json, known, err, errlen);
}

static bool mf_parse(const cJSON *json, mf_workload *m, char *err, size_t errlen) {
  const uint64_t ten = 10, hundred = 100, one = 1;
  if (!check_fields(json, err, errlen) ||
      !wlj_uint(json, "rank", 1, MF_MAX_RANK, &ten, &m->rank, err, errlen) ||
      !wlj_number(json, "lr", 0, INFINITY, 0.02, &m->lr, err, errlen) ||
      !wlj_number(json, "reg", 0, INFINITY, 0.05, &m->reg, err, errlen) ||
      !wlj_uint(json, "batch", 1, PS_MAX_OP_KEYS / 2, &hundred, &m->batch, err, errlen) ||
      !wlj_uint(json, "epochs", 1, 1u << 30, &one, &m->epochs, err, errlen) ||
      !wlj_number(json, "flops_per_step", 0, INFINITY, 0, &m->flops, err, errlen) ||
      !wlj_number(json, "init_scale", 0, INFINITY, -1, &m->init_scale, err, errlen) ||
      !wlj_bool(json, "clustering", false, &m->clustering, err, errlen) ||
      !wlj_bool(json, "blocking", false, &m->blocking, err, errlen) ||
      !wlj_optimizer(json, &m->optimizer, err, errlen))
    return false;
  m->has_flops = cJSON_GetObjectItemCaseSensitive(json, "flops_per_step") != NULL;
  if (m->blocking && m->workers > MF_MAX_BLOCKING_WORKERS) {
    char expected[96];
    snprintf(expected, sizeof expected, "false with more than %d workers (found %u)",
             MF_MAX_BLOCKING_WORKERS, m->workers);
    wlj_error(err, errlen, "blocking", expected,
              cJSON_GetObjectItemCaseSensitive(json, "blocking"));
    return false;
  }
  return true;
}

/* sqrt(rms / rank), rms over the training ratings (0.1 when they are all 0). */
static double default_init_scale(const mf_workload *m) {
  double sq = 0;
  for (size_t i = 0; i < m->d.n_train; i++)
    sq += (double)m->d.train[i].rating * m->d.train[i].rating;
  double rms = sqrt(sq / (double)m->d.n_train);
  return rms > 0 ? sqrt(rms / (double)m->rank) : 0.1;
}

static void mf_free(void *impl) {
  mf_workload *m = impl;
  if (!m) return;
  mf_data_free(&m->d);
  free(m->share);
  free(m->share_off);
  free(m);
}

/* Held-out ratings are measured by their RMSE. */
static const char *mf_quality_name(const cJSON *json) {
  (void)json;
  return "rmse";
}

static void *mf_create(const cJSON *json, const wl_context *ctx, wl_info *info, char *err,
                       size_t errlen) {
  mf_workload *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  m->nodes = ctx->nodes;
  m->workers_per_node = ctx->workers_per_node;
  uint64_t workers = (uint64_t)ctx->nodes * ctx->workers_per_node;
  if (workers > UINT32_MAX) {
    snprintf(err, errlen, "expected at most %u workers, found %llu", UINT32_MAX,
             (unsigned long long)workers);
    free(m);
    return NULL;
  }
  m->workers = (uint32_t)workers;
  if (!mf_parse(json, m, err, errlen) || !mf_data_load(json, ctx, m->rank, &m->d, err, errlen)) {
    free(m);
    return NULL;
  }
  m->blocks = m->blocking ? m->workers : 1;
  if (!split_data(m)) {
    snprintf(err, errlen, "out of memory splitting %zu ratings over %u workers",
             m->d.n_train, m->workers);
    mf_free(m);
    return NULL;
  }
  if (m->init_scale < 0) m->init_scale = default_init_scale(m);
  info->has_quality = m->d.n_test > 0;
  info->quality = wl_quality_named(mf_quality_name(json));
  if (!wlj_math_fields(json, info, err, errlen)) {
    mf_free(m);
    return NULL;
  }
  m->math = info->math;
  info->steps_per_worker = m->steps_per_worker;
  info->steps_per_epoch = m->steps_per_epoch;
  info->max_step_keys = (size_t)(2 * m->batch);
  info->max_step_items = m->math ? (size_t)m->batch : 0;
  info->samples = false;
  return m;
}

static void mf_tables(const void *impl, ps_layout *layout) {
  const mf_workload *m = impl;
  uint32_t len = wl_value_len(m->optimizer, (uint32_t)m->rank);
  layout->num_tables = 2;
  layout->tables[0] = (ps_table){.first = 0, .count = m->d.rows, .value_len = len};
  layout->tables[1] = (ps_table){.first = m->d.rows, .count = m->d.cols, .value_len = len};
}

/* -------------------------------------------------------------- streams */

static void mf_stream_free(void *stream) {
  mf_stream *s = stream;
  if (!s) return;
  if (s->rng) gsl_rng_free(s->rng);
  free(s->items);
  free(s->block_off);
  keymap_free(&s->seen);
  keymap_free(&s->where);
  free(s);
}

static void *mf_stream_new(const void *impl, uint32_t node, uint32_t worker_rank,
                           uint64_t seed) {
  const mf_workload *m = impl;
  if (node >= m->nodes || worker_rank >= m->workers) return NULL;
  mf_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->m = m;
  s->worker = worker_rank;
  const uint64_t *off = m->share_off + (size_t)worker_rank * m->blocks;
  uint64_t n = off[m->blocks] - off[0];
  s->items = malloc((n ? n : 1) * sizeof *s->items);
  s->block_off = malloc(((size_t)m->blocks + 1) * sizeof *s->block_off);
  s->rng = wl_rng_new(seed, worker_rank);
  bool ok = s->items && s->block_off && s->rng && keymap_init(&s->seen, 2 * m->batch) &&
            keymap_init(&s->where, 2 * m->batch);
  if (!ok) {
    mf_stream_free(s);
    return NULL;
  }
  memcpy(s->items, m->share + off[0], n * sizeof *s->items);
  for (uint32_t b = 0; b <= m->blocks; b++) s->block_off[b] = off[b] - off[0];
  return s;
}

/* A new epoch: every block of the share in a fresh order. */
static void shuffle_share(mf_stream *s) {
  for (uint32_t b = 0; b < s->m->blocks; b++) {
    uint64_t lo = s->block_off[b], n = s->block_off[b + 1] - lo;
    if (n > 1) gsl_ran_shuffle(s->rng, s->items + lo, n, sizeof *s->items);
  }
}

static bool mf_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  mf_stream *s = stream;
  const mf_workload *m = s->m;
  if (s->drawn == m->steps_per_worker) return false;
  uint64_t j = s->drawn % m->steps_per_epoch;
  if (j == 0) shuffle_share(s);
  uint64_t sub = j / m->steps_per_block, k = j % m->steps_per_block;
  uint32_t block = m->blocking ? (uint32_t)((s->worker + sub) % m->blocks) : 0;
  uint64_t first = s->block_off[block], size = s->block_off[block + 1] - first;
  uint64_t lo = k * m->batch < size ? k * m->batch : size;
  uint64_t hi = lo + m->batch < size ? lo + m->batch : size;
  const uint64_t *chosen = s->items + first + lo;
  size_t n_items = (size_t)(hi - lo), n = 0;
  keymap_clear(&s->seen);
  for (size_t i = 0; i < n_items; i++) { /* the rows, then the columns */
    ps_key key = m->d.train[chosen[i]].row;
    if (keymap_put(&s->seen, key, 0)) slot[n++] = key;
  }
  for (size_t i = 0; i < n_items; i++) {
    ps_key key = (ps_key)m->d.rows + m->d.train[chosen[i]].col;
    if (keymap_put(&s->seen, key, 0)) slot[n++] = key;
  }
  out->reads = slot;
  out->n_reads = n;
  out->writes = slot;
  out->n_writes = n;
  out->n_samples = 0;
  out->flops = m->has_flops ? m->flops : 8.0 * (double)m->rank * (double)n_items;
  if (!m->has_flops && m->optimizer == WL_OPT_ADAGRAD) out->flops += 6.0 * (double)m->rank * n;
  if (items) {
    memcpy(items, chosen, n_items * sizeof *items);
    out->items = items;
    out->n_items = n_items;
  }
  s->drawn++;
  return true;
}

/* ------------------------------------------------------------------ math */

static void mf_initial(const void *impl, ps_key k, float *val, uint32_t len) {
  const mf_workload *m = impl; /* the factor; AdaGrad's accumulators start at 0 */
  for (uint32_t i = 0; i < len && i < m->rank; i++)
    val[i] += wl_initial_uniform(MF_INIT_SALT, k, i, (float)m->init_scale);
}

static double dot(const float *a, const float *b, uint64_t n) {
  double sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += (double)a[i] * b[i];
  return sum;
}

static int mf_math(void *stream, const wl_step *st, wl_math_io *io) {
  mf_stream *s = stream;
  const mf_workload *m = s->m;
  keymap_clear(&s->where);
  for (size_t i = 0; i < st->n_reads; i++) keymap_put(&s->where, st->reads[i], (uint32_t)i);
  /* SGD adds -lr times the gradient; AdaGrad sums the gradient first */
  const bool adagrad = m->optimizer == WL_OPT_ADAGRAD;
  const float step = adagrad ? 2.0f : (float)(-2.0 * m->lr), reg = (float)m->reg;
  for (size_t i = 0; i < st->n_items; i++) {
    const mf_rating *r = &m->d.train[st->items[i]];
    uint32_t pw = keymap_get(&s->where, r->row);
    uint32_t ph = keymap_get(&s->where, (ps_key)m->d.rows + r->col);
    if (pw == UINT32_MAX || ph == UINT32_MAX) return PS_ERR_INVAL;
    const float *w = io->reads + io->read_off[pw], *h = io->reads + io->read_off[ph];
    float *dw = io->write_deltas + io->write_off[pw], *dh = io->write_deltas + io->write_off[ph];
    double e = dot(w, h, m->rank) - r->rating;
    io->loss += e * e;
    float ef = (float)e;
    /* df/dW_r = 2 e H_c + 2 reg W_r, df/dH_c = 2 e W_r + 2 reg H_c */
    for (uint64_t k = 0; k < m->rank; k++) {
      dw[k] += step * (ef * h[k] + reg * w[k]);
      dh[k] += step * (ef * w[k] + reg * h[k]);
    }
  }
  io->examples += (double)st->n_items;
  for (size_t i = 0; adagrad && i < st->n_writes; i++)
    wl_adagrad_key(m->lr, io->reads + io->read_off[i], io->write_deltas + io->write_off[i],
                   (uint32_t)m->rank);
  return PS_OK;
}

/* -------------------------------------------------------------- held out */

/* The distinct row keys, then column keys, of held-out ratings i with
 * i % workers == rank, in order of first appearance. */
static int mf_eval_keys(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                        size_t *n) {
  const mf_workload *m = impl;
  size_t share = m->d.n_test > rank ? (m->d.n_test - rank + workers - 1) / workers : 0;
  keymap seen = {0};
  ps_key *out = malloc((share ? 2 * share : 1) * sizeof *out);
  if (!out || !keymap_init(&seen, 2 * share)) {
    free(out);
    keymap_free(&seen);
    return PS_ERR_NOMEM;
  }
  size_t count = 0;
  for (size_t i = rank; i < m->d.n_test; i += workers)
    if (keymap_put(&seen, m->d.test[i].row, 0)) out[count++] = m->d.test[i].row;
  for (size_t i = rank; i < m->d.n_test; i += workers) {
    ps_key key = (ps_key)m->d.rows + m->d.test[i].col;
    if (keymap_put(&seen, key, 0)) out[count++] = key;
  }
  keymap_free(&seen);
  *keys = out;
  *n = count;
  return PS_OK;
}

static int mf_eval(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
                   double *num, double *den) {
  const mf_workload *m = impl;
  keymap where = {0};
  if (!keymap_init(&where, in->n)) {
    keymap_free(&where);
    return PS_ERR_NOMEM;
  }
  for (size_t i = 0; i < in->n; i++) keymap_put(&where, in->keys[i], (uint32_t)i);
  double sum = 0, count = 0;
  int rc = PS_OK;
  for (size_t i = rank; i < m->d.n_test; i += workers) {
    const mf_rating *r = &m->d.test[i];
    uint32_t pw = keymap_get(&where, r->row);
    uint32_t ph = keymap_get(&where, (ps_key)m->d.rows + r->col);
    if (pw == UINT32_MAX || ph == UINT32_MAX) {
      rc = PS_ERR_INVAL;
      break;
    }
    double e = dot(in->vals + in->off[pw], in->vals + in->off[ph], m->rank) - r->rating;
    sum += e * e;
    count++;
  }
  keymap_free(&where);
  *num = sum;
  *den = count;
  return rc;
}

/* -------------------------------------------------------------- hot keys */

/* The most rated rows and columns of the training data. */
static size_t mf_hot_keys(const void *impl, size_t n, ps_key *out) {
  const mf_workload *m = impl;
  size_t keys = (size_t)m->d.rows + m->d.cols;
  wl_key_count *c = calloc(keys, sizeof *c);
  if (!c) return 0;
  for (size_t k = 0; k < keys; k++) c[k].key = k;
  for (size_t i = 0; i < m->d.n_train; i++) {
    c[m->d.train[i].row].count++;
    c[(size_t)m->d.rows + m->d.train[i].col].count++;
  }
  size_t found = wl_hottest(c, keys, n, out);
  free(c);
  return found;
}

/* ---------------------------------------------------------------- saving */

/* One factor table as CSV: a header "<what>,f0,...", then a line per id,
 * its name (the ratings file's; generated data: the id) and its factor: the
 * first `rank` floats of each value, which is `stride` long (AdaGrad's
 * accumulators follow the factor). */
static int save_factors(const mf_workload *m, const char *dir, const char *file,
                        const char *what, char *const *names, uint32_t n, const float *vals,
                        uint32_t stride, char *err, size_t errlen) {
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, file, err, errlen)) return -1;
  fputs(what, sv.f);
  for (uint64_t j = 0; j < m->rank; j++) fprintf(sv.f, ",f%llu", (unsigned long long)j);
  fputc('\n', sv.f);
  wl_save_rows(sv.f, ',', names, n, vals, (uint32_t)m->rank, stride);
  return wl_save_close(&sv, true, err, errlen);
}

/* user_factors.csv (table 0, W) and item_factors.csv (table 1, H): a
 * rating is predicted as their dot product. */
static int mf_save(const void *impl, const ps_layout *layout, const float *const *vals,
                   const char *dir, char *err, size_t errlen) {
  const mf_workload *m = impl;
  return save_factors(m, dir, "user_factors.csv", "user", m->d.user_names, m->d.rows, vals[0],
                      layout->tables[0].value_len, err, errlen) == 0 &&
                 save_factors(m, dir, "item_factors.csv", "item", m->d.item_names, m->d.cols,
                              vals[1], layout->tables[1].value_len, err, errlen) == 0
             ? 0
             : -1;
}

const wl_type wl_type_mf = {
    .quality_name = mf_quality_name,
    .name = "mf",
    .create = mf_create,
    .free = mf_free,
    .tables = mf_tables,
    .stream_new = mf_stream_new,
    .stream_free = mf_stream_free,
    .next_step = mf_next_step,
    .hot_keys = mf_hot_keys,
    .initial = mf_initial,
    .math = mf_math,
    .eval_keys = mf_eval_keys,
    .eval = mf_eval,
    .save = mf_save,
};
