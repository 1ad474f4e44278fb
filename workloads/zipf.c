/*
 * The `zipf` workload: skewed key access on one table, no real math.
 *
 * Key model. One table, keys 0..keys-1, each value_length floats. A step
 * draws its keys from one source, chosen per step: with probability
 * `locality` the block of the worker's own node, [ceil(node*K/N),
 * ceil((node+1)*K/N)) -- exactly the keys range partitioning homes on that
 * node (ps_layout_home) -- otherwise the whole key space [0, K). Within a
 * source of n keys starting at `first`, rank r in [0, n) has probability
 * proportional to 1/(r+1)^skew (skew 0: uniform) and sits at key
 * first + perm_n(r), perm_n a fixed pseudo-random permutation of [0, n)
 * (zipf_dist.c): hot keys are the same keys in every run and are spread over
 * the space. Blocks differ in size by at most one key, so one
 * alias table per distinct block size serves every node (at most two, built
 * only when locality > 0). A node whose block is empty (more nodes than keys)
 * always draws from the whole space.
 *
 * A step makes reads_per_step independent draws and reads each drawn key
 * once (duplicates are dropped, so a step reads at most reads_per_step keys;
 * each draw keeps the exact Zipf law, and a key hot enough to be drawn twice
 * is read once, as in a minibatch). If writes_per_step <= reads_per_step, the
 * step writes the first writes_per_step keys it read (SGD pushes what it
 * pulled); otherwise it writes all it read plus writes_per_step -
 * reads_per_step further draws from the same source, duplicates dropped.
 * Reads and writes share one array: writes is a prefix of it, or extends
 * the reads. steps_per_worker must be a multiple of epochs.
 *
 * Samples (samples_per_step > 0, default 0): each step also samples that many
 * keys, as word2vec's negative samples, from the whole key space with each
 * key's popularity raised to sample_power (default 0.75: unigram^0.75), i.e.
 * rank r weighs 1/(r+1)^(skew * sample_power). Sampling management (policies)
 * draws them; the workload only names the distribution.
 */
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  uint64_t keys, value_length, reads, writes, steps, epochs, samples;
  double skew, flops, locality, sample_power;
  uint32_t num_nodes;
  wl_zipf whole;    /* over [0, keys) */
  wl_zipf block[2]; /* per distinct block size other than keys; size 0: unused */
} zipf_workload;

typedef struct {
  ps_key first;
  const wl_zipf *dist; /* NULL: this source is empty */
} zipf_source;

typedef struct {
  const zipf_workload *z;
  gsl_rng *rng;
  zipf_source whole, block;
  uint64_t drawn;
  /* Keys already in the current step: open addressing, a slot is in use when
   * its stamp is the step's, so nothing is cleared between steps. */
  ps_key *seen;
  uint64_t *seen_stamp;
  size_t seen_mask;
  uint64_t stamp;
} zipf_stream;

/* ------------------------------------------------------------ creation */

static bool zipf_parse(const cJSON *json, uint32_t num_nodes, zipf_workload *z,
                       char *err, size_t errlen) {
  static const char *const known[] = {
      "type", "keys", "skew", "value_length", "reads_per_step",
      "writes_per_step", "steps_per_worker", "epochs", "flops_per_step",
      "locality", "samples_per_step", "sample_power", NULL};
  const uint64_t zero = 0, one = 1, ten = 10, hundred = 100;
  const uint64_t max_op = PS_MAX_OP_KEYS;
  z->num_nodes = num_nodes;
  if (!wlj_check_fields(json, known, err, errlen) ||
      !wlj_uint(json, "keys", 1, UINT32_MAX, NULL, &z->keys, err, errlen) ||
      !wlj_number(json, "skew", 0, INFINITY, 1.0, &z->skew, err, errlen) ||
      !wlj_uint(json, "value_length", 1, UINT32_MAX, &hundred,
                &z->value_length, err, errlen) ||
      !wlj_uint(json, "reads_per_step", 0, max_op, &ten, &z->reads, err,
                errlen) ||
      !wlj_uint(json, "writes_per_step", 0, max_op, &ten, &z->writes, err,
                errlen) ||
      !wlj_uint(json, "steps_per_worker", 1, UINT64_MAX, NULL, &z->steps, err,
                errlen) ||
      !wlj_uint(json, "epochs", 1, UINT64_MAX, &one, &z->epochs, err,
                errlen) ||
      !wlj_number(json, "flops_per_step", 0, INFINITY, 0, &z->flops, err,
                  errlen) ||
      !wlj_number(json, "locality", 0, 1, 0, &z->locality, err, errlen) ||
      !wlj_uint(json, "samples_per_step", 0, max_op, &zero, &z->samples, err, errlen) ||
      !wlj_number(json, "sample_power", 0, INFINITY, 0.75, &z->sample_power, err, errlen))
    return false;
  if (z->steps % z->epochs != 0) {
    char expected[96];
    snprintf(expected, sizeof expected, "a divisor of steps_per_worker (%llu)",
             (unsigned long long)z->steps);
    wlj_error(err, errlen, "epochs", expected,
              cJSON_GetObjectItemCaseSensitive(json, "epochs"));
    return false;
  }
  return true;
}

/* Tables for the distinct block sizes K/N and K/N + 1, when steps may draw
 * from blocks; a block as large as the key space uses the whole table. */
static int build_block_tables(zipf_workload *z) {
  if (z->locality == 0) return PS_OK;
  uint64_t small = z->keys / z->num_nodes;
  size_t kinds = z->keys % z->num_nodes ? 2 : 1;
  for (size_t i = 0; i < kinds; i++) {
    uint64_t size = small + i;
    if (size == 0 || size == z->keys) continue;
    int rc = wl_zipf_init(&z->block[i], size, z->skew);
    if (rc != PS_OK) return rc;
  }
  return PS_OK;
}

static void zipf_free(void *impl) {
  zipf_workload *z = impl;
  if (!z) return;
  wl_zipf_free(&z->whole);
  wl_zipf_free(&z->block[0]);
  wl_zipf_free(&z->block[1]);
  free(z);
}

static void *zipf_create(const cJSON *json, const wl_context *ctx, wl_info *info,
                         char *err, size_t errlen) {
  uint32_t num_nodes = ctx->nodes;
  zipf_workload *z = calloc(1, sizeof *z);
  if (!z) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (!zipf_parse(json, num_nodes, z, err, errlen)) {
    free(z);
    return NULL;
  }
  if (wl_zipf_init(&z->whole, z->keys, z->skew) != PS_OK ||
      build_block_tables(z) != PS_OK) {
    snprintf(err, errlen, "keys: out of memory for the alias table of %llu keys",
             (unsigned long long)z->keys);
    zipf_free(z);
    return NULL;
  }
  info->steps_per_worker = z->steps;
  info->steps_per_epoch = z->steps / z->epochs;
  info->max_step_keys = (size_t)(z->reads > z->writes ? z->reads : z->writes);
  info->samples = z->samples > 0;
  return z;
}

static void zipf_tables(const void *impl, ps_layout *layout) {
  const zipf_workload *z = impl;
  layout->num_tables = 1;
  layout->tables[0].first = 0;
  layout->tables[0].count = z->keys;
  layout->tables[0].value_len = (uint32_t)z->value_length;
}

/* -------------------------------------------------------------- streams */

/* ceil(node * K / N): the first key range partitioning homes on `node`
 * (node * K + N - 1 < 2^64, since node <= N < 2^32 and K < 2^32). */
static uint64_t block_start(const zipf_workload *z, uint64_t node) {
  return (node * z->keys + z->num_nodes - 1) / z->num_nodes;
}

static const wl_zipf *block_dist(const zipf_workload *z, uint64_t size) {
  if (size == 0) return NULL;
  if (size == z->keys) return &z->whole;
  return z->block[0].size == size ? &z->block[0] : &z->block[1];
}

static void zipf_stream_free(void *stream) {
  zipf_stream *s = stream;
  if (!s) return;
  if (s->rng) gsl_rng_free(s->rng);
  free(s->seen);
  free(s->seen_stamp);
  free(s);
}

static void *zipf_stream_new(const void *impl, uint32_t node,
                             uint32_t worker_rank, uint64_t seed) {
  const zipf_workload *z = impl;
  if (node >= z->num_nodes) return NULL;
  zipf_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->z = z;
  s->whole.dist = &z->whole;
  uint64_t lo = block_start(z, node), hi = block_start(z, node + 1);
  s->block.first = lo;
  s->block.dist = z->locality > 0 ? block_dist(z, hi - lo) : NULL;
  size_t cap = 16;
  while (cap < 2 * (z->reads > z->writes ? z->reads : z->writes)) cap *= 2;
  s->seen_mask = cap - 1;
  s->seen = malloc(cap * sizeof *s->seen);
  s->seen_stamp = calloc(cap, sizeof *s->seen_stamp);
  s->rng = wl_rng_new(seed, worker_rank);
  if (!s->seen || !s->seen_stamp || !s->rng) {
    zipf_stream_free(s);
    return NULL;
  }
  return s;
}

/* Adds k to the current step's set; false if it is there already. */
static bool seen_insert(zipf_stream *s, ps_key k) {
  size_t i = (size_t)ps_mix64(k) & s->seen_mask;
  while (s->seen_stamp[i] == s->stamp) {
    if (s->seen[i] == k) return false;
    i = (i + 1) & s->seen_mask;
  }
  s->seen_stamp[i] = s->stamp;
  s->seen[i] = k;
  return true;
}

/* Makes `draws` draws from src, appending new keys to keys[n...]. */
static size_t draw_distinct(zipf_stream *s, const zipf_source *src,
                            ps_key *keys, size_t n, uint64_t draws) {
  for (uint64_t d = 0; d < draws; d++) {
    ps_key k = src->first + wl_zipf_draw(src->dist, s->rng);
    if (seen_insert(s, k)) keys[n++] = k;
  }
  return n;
}

static const zipf_source *pick_source(zipf_stream *s) {
  double p = s->z->locality;
  if (!s->block.dist || p == 0) return &s->whole;
  if (p >= 1 || gsl_rng_uniform(s->rng) < p) return &s->block;
  return &s->whole;
}

static bool zipf_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  (void)items;
  zipf_stream *s = stream;
  const zipf_workload *z = s->z;
  if (s->drawn == z->steps) return false;
  const zipf_source *src = pick_source(s);
  s->stamp++;
  size_t n = draw_distinct(s, src, slot, 0, z->reads);
  size_t n_writes;
  if (z->writes <= z->reads)
    n_writes = z->writes < n ? (size_t)z->writes : n;
  else
    n_writes = draw_distinct(s, src, slot, n, z->writes - z->reads);
  out->reads = slot;
  out->n_reads = n;
  out->writes = slot;
  out->n_writes = n_writes;
  out->n_samples = (size_t)z->samples;
  out->flops = z->flops;
  s->drawn++;
  return true;
}

static int zipf_sample_distribution(const void *impl, ps_key *first, uint64_t *count,
                                    double **weights) {
  const zipf_workload *z = impl;
  *first = 0;
  *count = z->keys;
  double power = z->skew * z->sample_power;
  if (power == 0) {
    *weights = NULL;
    return PS_OK;
  }
  double *w = malloc(z->keys * sizeof *w);
  if (!w) return PS_ERR_NOMEM;
  for (uint64_t r = 0; r < z->keys; r++) /* rank r sits where access puts it */
    w[wl_perm_apply(&z->whole.perm, r)] = pow((double)(r + 1), -power);
  *weights = w;
  return PS_OK;
}

const wl_type wl_type_zipf = {
    .name = "zipf",
    .create = zipf_create,
    .free = zipf_free,
    .tables = zipf_tables,
    .stream_new = zipf_stream_new,
    .stream_free = zipf_stream_free,
    .next_step = zipf_next_step,
    .sample_distribution = zipf_sample_distribution,
};
