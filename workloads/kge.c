/*
 * The `kge` workload: knowledge-graph embeddings trained with negative
 * sampling (ComplEx, DistMult, RESCAL), as in the Lapse and NuPS papers.
 *
 * Keys. Table 0 holds the entities (key e for entity e), table 1 the
 * relations (key E + r). Each value is [embedding | AdaGrad's accumulated
 * squared gradient], as Lapse stores it, so the value is twice the
 * embedding: entities 2*dim floats (ComplEx: 4*dim, dim complex numbers),
 * relations the same, or 2*dim*dim for RESCAL's matrices. Embeddings start
 * uniform in [-init_scale, init_scale) (a fixed function of the key), the
 * AdaGrad half at 0.
 *
 * Data. The training triples are shuffled once (data_seed) and dealt round
 * robin to the run's workers; each worker reshuffles its share at every
 * epoch with its own stream's generator and runs floor(train / workers) of
 * them per epoch, `batch` per step, so every worker runs the same number of
 * steps.
 *
 * A step: its reads and writes are the distinct entities (heads and tails)
 * of its triples, then their distinct relations; its items the triples'
 * indices; its samples batch * neg entities drawn by the policy's sampling
 * scheme from the entity table (uniform, or degree^sample_power). Triple i
 * of the step is corrupted with samples i*neg .. i*neg+neg-1 as tails (only
 * tails are corrupted, matching the tail ranking of the evaluation). Each
 * true triple is an example of label 1, each corrupted one of label 0; the
 * loss is logistic with L2 regularization (kge_math.c). The gradients of a
 * step are summed per distinct key (a sample that is also a read, or drawn
 * twice, adds to one gradient, pushed once) and each key takes one AdaGrad
 * step computed from the pulled state: acc += g^2, emb -= lr g / sqrt(acc +
 * g^2 + 1e-10).
 *
 * Quality: the filtered MRR (or Hits@10) of the tail over a sample of the
 * held-out triples (test, else valid): eval_triples of them, fixed by
 * data_seed, split over workers (triple i goes to worker i % workers). Each
 * is ranked against the candidates: with "eval": "filtered" (the default)
 * every entity, as LibKGE ranks; with "eval": "sampled" every entity when
 * there are at most eval_candidates, else a fixed random subset of that
 * many, plus the true tail (a sample estimate, cheaper per evaluation).
 * Candidates that make a known triple (train, valid or test) with the head
 * and relation are skipped; ties count half.
 *
 * Hot keys: keys ranked by their accesses in the training triples (an
 * entity's degree, a relation's triple count), ties by key; relations,
 * being few and in every step, come first in practice.
 */
#include "workloads/kge.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KGE_SALT 0x6b6765ULL /* "kge" */

typedef struct {
  kge_model model;
  uint32_t dim, ent_len, rel_len; /* embedding floats (values are twice) */
  double lr, reg, init_scale, sample_power, ex_flops;
  uint64_t batch, neg, epochs, data_seed;
  bool hits10, math;
  uint32_t workers;
  kge_graph g;
  size_t *order;        /* train indices shuffled by data_seed */
  uint64_t per_worker;  /* triples a worker runs per epoch */
  uint64_t steps_per_epoch;
  uint32_t *degree;     /* per entity: heads and tails in train */
  uint32_t *rel_count;  /* per relation: train triples */
  kge_triple *eval;     /* the held-out triples evaluated */
  size_t n_eval;
  uint32_t *candidates; /* sorted entity ids */
  size_t n_candidates;
  size_t *known_at;     /* per eval triple: its known tails in known */
  uint32_t *known;
} kge_workload;

typedef struct {
  const kge_workload *k;
  gsl_rng *rng;
  size_t *share; /* the worker's train indices */
  size_t n_share;
  uint64_t drawn, pos; /* steps drawn; triples run in this epoch */
  /* key -> slot of the current step: a slot is in use when its stamp is
   * the step's, so nothing is cleared between steps */
  ps_key *set_key;
  uint32_t *set_val;
  uint64_t *set_stamp;
  size_t set_mask;
  uint64_t stamp;
  /* math scratch: per slot (writes, then samples) its gradient */
  double *grad;
  size_t *grad_off;
  uint32_t *sample_slot;
} kge_stream;

/* ------------------------------------------------------- known tails */

/* An eval triple's query (head, relation) and its index. */
typedef struct {
  uint32_t h, r, i;
} query;

static int by_query(const void *a, const void *b) {
  const query *x = a, *y = b;
  if (x->h != y->h) return x->h < y->h ? -1 : 1;
  return x->r < y->r ? -1 : x->r > y->r;
}

/* Adds (counts, or with fill stores) the tail of each of the n triples v
 * to the known tails of every eval triple whose query is its head and
 * relation (qs: the n_eval queries, sorted). */
static void add_known(kge_workload *k, const query *qs, const kge_triple *v, size_t n,
                      size_t *at, bool fill) {
  for (size_t i = 0; i < n; i++) {
    query want = {v[i].h, v[i].r, 0};
    size_t lo = 0, hi = k->n_eval;
    while (lo < hi) { /* the first query not below want */
      size_t mid = lo + (hi - lo) / 2;
      if (by_query(&qs[mid], &want) < 0) lo = mid + 1;
      else hi = mid;
    }
    for (; lo < k->n_eval && by_query(&qs[lo], &want) == 0; lo++) {
      if (fill) k->known[at[qs[lo].i]] = v[i].t;
      at[qs[lo].i]++;
    }
  }
}

/* For each eval triple, the tails of every known triple (train, valid,
 * test) with its head and relation, its own included: known[known_at[i]
 * .. known_at[i + 1]), which ranking skips. Counted, then filled. */
static bool known_tails(kge_workload *k) {
  const kge_graph *g = &k->g;
  query *by = malloc((k->n_eval ? k->n_eval : 1) * sizeof *by);
  size_t *at = calloc(k->n_eval + 1, sizeof *at);
  k->known_at = calloc(k->n_eval + 1, sizeof *k->known_at);
  if (!by || !at || !k->known_at) {
    free(by);
    free(at);
    return false;
  }
  for (size_t i = 0; i < k->n_eval; i++) by[i] = (query){k->eval[i].h, k->eval[i].r, (uint32_t)i};
  qsort(by, k->n_eval, sizeof *by, by_query);
  const kge_triple *sets[3] = {g->train, g->valid, g->test};
  size_t sizes[3] = {g->n_train, g->n_valid, g->n_test};
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      for (size_t i = 0; i < k->n_eval; i++) k->known_at[i + 1] = k->known_at[i] + at[i];
      memcpy(at, k->known_at, k->n_eval * sizeof *at);
      k->known = malloc((k->known_at[k->n_eval] ? k->known_at[k->n_eval] : 1) * sizeof *k->known);
      if (!k->known) break;
    }
    for (int s = 0; s < 3; s++) add_known(k, by, sets[s], sizes[s], at, pass == 1);
  }
  free(by);
  free(at);
  return k->known != NULL;
}

/* ------------------------------------------------------------ creation */

static const char *const kge_fields[] = {
    "type", "model", "dim", "lr", "reg", "init_scale", "batch", "neg", "epochs",
    "sample_power", "data", "train", "valid", "test", "wordnet_dir", "test_fraction",
    "data_seed", "quality", "eval", "eval_triples", "eval_candidates", "math",
    "target_quality", "eval_every", "stop_after", NULL};

typedef struct {
  size_t data; /* 0: tsv, 1: wordnet */
  bool sampled; /* "eval": "sampled" (eval_candidates), else every entity */
  const char *train, *valid, *test, *wordnet_dir;
  double test_fraction;
  uint64_t eval_triples, eval_candidates;
} kge_source;

static bool refuse(const cJSON *json, const char *field, const char *why, char *err,
                   size_t errlen) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(json, field);
  if (!v) return true;
  wlj_error(err, errlen, field, why, v);
  return false;
}

/* "eval": how held-out tails are ranked. */
static const char *const kge_evals[] = {"filtered", "sampled", NULL};
#define KGE_EVAL_DEFAULT 0 /* filtered: see docs/training.md for its cost */

static bool kge_parse(const cJSON *json, kge_workload *k, kge_source *src, char *err,
                      size_t errlen) {
  static const char *const models[] = {"complex", "distmult", "rescal", NULL};
  static const char *const datas[] = {"tsv", "wordnet", NULL};
  static const char *const qualities[] = {"mrr", "hits10", NULL};
  const uint64_t d50 = 50, b100 = 100, n10 = 10, one = 1, e500 = 500, c1000 = 1000;
  size_t model, quality, eval;
  uint64_t dim;
  if (!wlj_check_fields(json, kge_fields, err, errlen) ||
      !wlj_choice(json, "model", models, 0, &model, err, errlen) ||
      !wlj_uint(json, "dim", 1, 1024, &d50, &dim, err, errlen))
    return false;
  k->model = (kge_model)model;
  k->dim = (uint32_t)dim;
  if (!wlj_number(json, "lr", 0, INFINITY, 0.1, &k->lr, err, errlen) ||
      !wlj_number(json, "reg", 0, INFINITY, 1e-5, &k->reg, err, errlen) ||
      !wlj_number(json, "init_scale", 0, INFINITY, 0.1, &k->init_scale, err, errlen) ||
      !wlj_uint(json, "batch", 1, PS_MAX_OP_KEYS / 3, &b100, &k->batch, err, errlen) ||
      !wlj_uint(json, "neg", 0, 1000, &n10, &k->neg, err, errlen) ||
      !wlj_uint(json, "epochs", 1, 1000000, &one, &k->epochs, err, errlen) ||
      !wlj_number(json, "sample_power", 0, INFINITY, 0, &k->sample_power, err, errlen) ||
      !wlj_choice(json, "data", datas, 0, &src->data, err, errlen) ||
      !wlj_uint(json, "data_seed", 0, UINT64_MAX, &one, &k->data_seed, err, errlen) ||
      !wlj_choice(json, "quality", qualities, 0, &quality, err, errlen) ||
      !wlj_uint(json, "eval_triples", 1, UINT32_MAX, &e500, &src->eval_triples, err, errlen) ||
      !wlj_choice(json, "eval", kge_evals, KGE_EVAL_DEFAULT, &eval, err, errlen))
    return false;
  src->sampled = eval == 1;
  src->eval_candidates = UINT64_MAX;
  if (!src->sampled &&
      !refuse(json, "eval_candidates",
              "nothing with \"eval\": \"filtered\" (it ranks against every entity; "
              "\"eval\": \"sampled\" takes eval_candidates)", err, errlen))
    return false;
  if (src->sampled && !wlj_uint(json, "eval_candidates", 1, UINT32_MAX, &c1000,
                                &src->eval_candidates, err, errlen))
    return false;
  k->hits10 = quality == 1;
  if (k->batch * k->neg > PS_MAX_OP_KEYS) {
    wlj_error(err, errlen, "neg", "batch * neg <= 16777216 (samples of one step)",
              cJSON_GetObjectItemCaseSensitive(json, "neg"));
    return false;
  }
  if (src->data == 1) {
    const char *why = "nothing with \"data\": \"wordnet\" (it splits WordNet itself)";
    return refuse(json, "train", why, err, errlen) && refuse(json, "valid", why, err, errlen) &&
           refuse(json, "test", why, err, errlen) &&
           wlj_string(json, "wordnet_dir", "/usr/share/wordnet", &src->wordnet_dir, err,
                      errlen) &&
           wlj_number(json, "test_fraction", 0, 0.5, 0.01, &src->test_fraction, err, errlen);
  }
  const char *why = "nothing with \"data\": \"tsv\" (a WordNet field)";
  return refuse(json, "wordnet_dir", why, err, errlen) &&
         refuse(json, "test_fraction", why, err, errlen) &&
         wlj_string(json, "train", NULL, &src->train, err, errlen) &&
         (!cJSON_GetObjectItemCaseSensitive(json, "valid") ||
          wlj_string(json, "valid", NULL, &src->valid, err, errlen)) &&
         (!cJSON_GetObjectItemCaseSensitive(json, "test") ||
          wlj_string(json, "test", NULL, &src->test, err, errlen));
}

static void kge_free(void *impl) {
  kge_workload *k = impl;
  if (!k) return;
  kge_graph_free(&k->g);
  free(k->order);
  free(k->degree);
  free(k->rel_count);
  free(k->eval);
  free(k->candidates);
  free(k->known_at);
  free(k->known);
  free(k);
}

static int by_id(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The training order, counts, evaluation sample and candidates. */
static bool kge_prepare(kge_workload *k, const kge_source *src) {
  const kge_graph *g = &k->g;
  gsl_rng *rng = wl_rng_new(k->data_seed, 0);
  k->order = malloc(g->n_train * sizeof *k->order);
  k->degree = calloc(g->entities ? g->entities : 1, sizeof *k->degree);
  k->rel_count = calloc(g->relations ? g->relations : 1, sizeof *k->rel_count);
  bool ok = rng && k->order && k->degree && k->rel_count;
  for (size_t i = 0; ok && i < g->n_train; i++) {
    k->order[i] = i;
    k->degree[g->train[i].h]++;
    k->degree[g->train[i].t]++;
    k->rel_count[g->train[i].r]++;
  }
  if (ok) gsl_ran_shuffle(rng, k->order, g->n_train, sizeof *k->order);
  const kge_triple *held = g->n_test ? g->test : g->valid;
  size_t n_held = g->n_test ? g->n_test : g->n_valid;
  if (ok && n_held && k->math) {
    k->n_eval = n_held < src->eval_triples ? n_held : (size_t)src->eval_triples;
    size_t *pick = malloc(n_held * sizeof *pick);
    k->eval = malloc(k->n_eval * sizeof *k->eval);
    k->n_candidates = g->entities <= src->eval_candidates ? g->entities
                                                          : (size_t)src->eval_candidates;
    uint32_t *ids = malloc(g->entities * sizeof *ids);
    ok = pick && k->eval && ids;
    if (ok) {
      for (size_t i = 0; i < n_held; i++) pick[i] = i;
      gsl_ran_shuffle(rng, pick, n_held, sizeof *pick);
      for (size_t i = 0; i < k->n_eval; i++) k->eval[i] = held[pick[i]];
      ok = known_tails(k);
    }
    if (ok) {
      for (uint32_t e = 0; e < g->entities; e++) ids[e] = e;
      for (size_t i = 0; i < k->n_candidates && k->n_candidates < g->entities; i++) {
        size_t j = i + gsl_rng_uniform_int(rng, g->entities - i); /* partial Fisher-Yates */
        uint32_t x = ids[i];
        ids[i] = ids[j];
        ids[j] = x;
      }
      qsort(ids, k->n_candidates, sizeof *ids, by_id);
      k->candidates = malloc((k->n_candidates ? k->n_candidates : 1) * sizeof *ids);
      if ((ok = k->candidates != NULL))
        memcpy(k->candidates, ids, k->n_candidates * sizeof *ids);
    }
    free(pick);
    free(ids);
  }
  if (rng) gsl_rng_free(rng);
  return ok;
}

/* The steps, their sizes and the quality, once the graph is loaded and
 * prepared; false with a message when a target quality cannot be measured. */
static bool kge_describe(kge_workload *k, const cJSON *json, wl_info *info, char *err,
                         size_t errlen) {
  k->steps_per_epoch = (k->per_worker + k->batch - 1) / k->batch;
  k->ex_flops = kge_example_flops(k->model, k->dim);
  info->steps_per_worker = k->steps_per_epoch * k->epochs;
  info->steps_per_epoch = k->steps_per_epoch;
  uint64_t keys = 3 * k->batch, all = (uint64_t)k->g.entities + k->g.relations;
  info->max_step_keys = (size_t)(keys < all ? keys : all);
  info->max_step_items = (size_t)k->batch;
  info->samples = k->neg > 0;
  info->has_quality = k->n_eval > 0;
  if (info->quality.has_target && !info->has_quality) {
    wlj_error(err, errlen, "target_quality",
              "nothing: there are no held-out triples to measure (give test or valid)",
              cJSON_GetObjectItemCaseSensitive(json, "target_quality"));
    return false;
  }
  return true;
}

/* "quality": "mrr" (the default) or "hits10", filtered (ranked against
 * every entity) or sampled ("eval": "sampled"), as "eval" or its default
 * says. */
static const char *kge_quality_name(const cJSON *json) {
  const cJSON *q = cJSON_GetObjectItemCaseSensitive(json, "quality");
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(json, "eval");
  bool hits = cJSON_IsString(q) && strcmp(q->valuestring, "hits10") == 0;
  bool sampled = cJSON_IsString(e) ? strcmp(e->valuestring, kge_evals[1]) == 0
                                   : KGE_EVAL_DEFAULT == 1;
  if (sampled) return hits ? "sampled_hits10" : "sampled_mrr";
  return hits ? "hits10" : "mrr";
}

static void *kge_create(const cJSON *json, const wl_context *ctx, wl_info *info, char *err,
                        size_t errlen) {
  kge_workload *k = calloc(1, sizeof *k);
  if (!k) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  kge_source src = {0};
  if (!kge_parse(json, k, &src, err, errlen)) {
    free(k);
    return NULL;
  }
  k->ent_len = kge_entity_len(k->model, k->dim);
  k->rel_len = kge_relation_len(k->model, k->dim);
  k->workers = ctx->nodes * ctx->workers_per_node;
  info->has_quality = true;
  info->quality = wl_quality_named(kge_quality_name(json));
  if (!wlj_math_fields(json, info, err, errlen)) {
    free(k);
    return NULL;
  }
  k->math = info->math;
  bool loaded = src.data == 1
                    ? kge_load_wordnet(&k->g, ctx, src.wordnet_dir, err, errlen)
                    : kge_load_tsv(&k->g, ctx, src.train, src.valid, src.test, err, errlen);
  if (!loaded) {
    free(k);
    return NULL;
  }
  if (src.data == 1 && !kge_split(&k->g, src.test_fraction, k->data_seed)) {
    snprintf(err, errlen, "wordnet_dir: out of memory splitting the graph");
    kge_free(k);
    return NULL;
  }
  k->per_worker = k->g.n_train / k->workers;
  if (k->per_worker == 0) {
    snprintf(err, errlen, "%s: expected at least one training triple per worker (%u), found %zu",
             src.data == 1 ? "wordnet_dir" : "train", (unsigned)k->workers, k->g.n_train);
    kge_free(k);
    return NULL;
  }
  if (!kge_prepare(k, &src)) {
    snprintf(err, errlen, "out of memory");
    kge_free(k);
    return NULL;
  }
  if (!kge_describe(k, json, info, err, errlen)) {
    kge_free(k);
    return NULL;
  }
  return k;
}

static void kge_tables(const void *impl, ps_layout *layout) {
  const kge_workload *k = impl;
  layout->num_tables = 2;
  layout->tables[0].first = 0;
  layout->tables[0].count = k->g.entities;
  layout->tables[0].value_len = 2 * k->ent_len;
  layout->tables[1].first = k->g.entities;
  layout->tables[1].count = k->g.relations;
  layout->tables[1].value_len = 2 * k->rel_len;
}

/* -------------------------------------------------------------- streams */

static void kge_stream_free(void *stream) {
  kge_stream *s = stream;
  if (!s) return;
  if (s->rng) gsl_rng_free(s->rng);
  free(s->share);
  free(s->set_key);
  free(s->set_val);
  free(s->set_stamp);
  free(s->grad);
  free(s->grad_off);
  free(s->sample_slot);
  free(s);
}

static void *kge_stream_new(const void *impl, uint32_t node, uint32_t worker_rank,
                            uint64_t seed) {
  const kge_workload *k = impl;
  (void)node;
  if (worker_rank >= k->workers) return NULL;
  kge_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->k = k;
  s->n_share = (k->g.n_train - worker_rank + k->workers - 1) / k->workers;
  size_t slots = (size_t)(3 * k->batch + k->batch * k->neg), cap = 16;
  while (cap < 2 * slots) cap *= 2;
  s->set_mask = cap - 1;
  s->share = malloc(s->n_share * sizeof *s->share);
  s->set_key = malloc(cap * sizeof *s->set_key);
  s->set_val = malloc(cap * sizeof *s->set_val);
  s->set_stamp = calloc(cap, sizeof *s->set_stamp);
  s->rng = wl_rng_new(seed, worker_rank);
  bool ok = s->share && s->set_key && s->set_val && s->set_stamp && s->rng;
  if (ok && k->math) {
    size_t floats = (size_t)(2 * k->batch + k->batch * k->neg) * k->ent_len +
                    (size_t)k->batch * k->rel_len;
    s->grad = malloc(floats * sizeof *s->grad);
    s->grad_off = malloc(slots * sizeof *s->grad_off);
    s->sample_slot = malloc((k->batch * k->neg + 1) * sizeof *s->sample_slot);
    ok = s->grad && s->grad_off && s->sample_slot;
  }
  if (!ok) {
    kge_stream_free(s);
    return NULL;
  }
  for (size_t i = 0; i < s->n_share; i++) s->share[i] = k->order[worker_rank + i * k->workers];
  return s;
}

/* The slot of key in the current step's set, UINT32_MAX if not there. */
static uint32_t set_find(const kge_stream *s, ps_key key) {
  for (size_t i = (size_t)ps_mix64(key) & s->set_mask; s->set_stamp[i] == s->stamp;
       i = (i + 1) & s->set_mask)
    if (s->set_key[i] == key) return s->set_val[i];
  return UINT32_MAX;
}

/* Adds key with value val unless it is there; returns its value. */
static uint32_t set_insert(kge_stream *s, ps_key key, uint32_t val) {
  size_t i = (size_t)ps_mix64(key) & s->set_mask;
  for (; s->set_stamp[i] == s->stamp; i = (i + 1) & s->set_mask)
    if (s->set_key[i] == key) return s->set_val[i];
  s->set_stamp[i] = s->stamp;
  s->set_key[i] = key;
  s->set_val[i] = val;
  return val;
}

static bool kge_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  kge_stream *s = stream;
  const kge_workload *k = s->k;
  if (s->drawn == k->steps_per_epoch * k->epochs) return false;
  if (s->pos == 0) gsl_ran_shuffle(s->rng, s->share, s->n_share, sizeof *s->share);
  uint64_t left = k->per_worker - s->pos;
  size_t count = (size_t)(left < k->batch ? left : k->batch);
  const kge_triple *tr = k->g.train;
  s->stamp++;
  size_t n = 0;
  for (size_t i = 0; i < count; i++) {
    items[i] = s->share[s->pos + i];
    const kge_triple *x = &tr[items[i]];
    if (set_insert(s, x->h, (uint32_t)n) == n) slot[n++] = x->h;
    if (set_insert(s, x->t, (uint32_t)n) == n) slot[n++] = x->t;
  }
  size_t n_entities = n;
  for (size_t i = 0; i < count; i++) {
    ps_key r = (ps_key)k->g.entities + tr[items[i]].r;
    if (set_insert(s, r, (uint32_t)n) == n) slot[n++] = r;
  }
  s->pos = s->pos + count == k->per_worker ? 0 : s->pos + count;
  s->drawn++;
  size_t samples = count * (size_t)k->neg;
  out->reads = out->writes = slot;
  out->n_reads = out->n_writes = n;
  out->n_samples = samples;
  out->items = items;
  out->n_items = count;
  /* the examples, then one AdaGrad update (about 6 flops a float) per key */
  double updated = (double)(n_entities + samples) * k->ent_len +
                   (double)(n - n_entities) * k->rel_len;
  out->flops = (double)(count + samples) * k->ex_flops + 6 * updated;
  return true;
}

/* ----------------------------------------------------------------- math */

/* AdaGrad from the pulled value v = [emb | acc] and the gradient g (in
 * double, hence not wl_adagrad_key, whose gradient is the float delta). */
static void adagrad(const kge_workload *k, const float *v, const double *g, uint32_t len,
                    float *delta) {
  for (uint32_t i = 0; i < len; i++)
    wl_adagrad(k->lr, g[i], v[len + i], delta + i, delta + len + i);
}

static int kge_math(void *stream, const wl_step *st, wl_math_io *io) {
  kge_stream *s = stream;
  const kge_workload *k = s->k;
  const ps_key E = k->g.entities;
  size_t nw = st->n_writes, slots = nw + io->n_samples, floats = 0;
  /* slots: the writes, then each sample not already a write or an earlier
   * sample; the gradient of a key is summed in its first slot */
  s->stamp++;
  for (size_t i = 0; i < nw; i++) set_insert(s, st->writes[i], (uint32_t)i);
  for (size_t j = 0; j < io->n_samples; j++)
    s->sample_slot[j] = set_insert(s, io->samples[j], (uint32_t)(nw + j));
  for (size_t i = 0; i < slots; i++) {
    s->grad_off[i] = floats;
    floats += i < nw && st->writes[i] >= E ? k->rel_len : k->ent_len;
  }
  memset(s->grad, 0, floats * sizeof *s->grad);
  double loss = 0;
  for (size_t i = 0; i < st->n_items; i++) {
    const kge_triple *x = &k->g.train[st->items[i]];
    uint32_t h = set_find(s, x->h), r = set_find(s, E + x->r), t = set_find(s, x->t);
    const float *vh = io->reads + io->read_off[h], *vr = io->reads + io->read_off[r];
    double *gh = s->grad + s->grad_off[h], *gr = s->grad + s->grad_off[r];
    loss += kge_example(k->model, k->dim, vh, vr, io->reads + io->read_off[t], 1, k->reg, gh, gr,
                        s->grad + s->grad_off[t]);
    for (size_t j = i * k->neg; j < (i + 1) * k->neg && j < io->n_samples; j++)
      loss += kge_example(k->model, k->dim, vh, vr, io->sample_vals + io->sample_off[j], 0,
                          k->reg, gh, gr, s->grad + s->grad_off[s->sample_slot[j]]);
  }
  for (size_t i = 0; i < nw; i++)
    adagrad(k, io->reads + io->read_off[i], s->grad + s->grad_off[i],
            st->writes[i] >= E ? k->rel_len : k->ent_len, io->write_deltas + io->write_off[i]);
  for (size_t j = 0; j < io->n_samples; j++)
    if (s->sample_slot[j] == nw + j)
      adagrad(k, io->sample_vals + io->sample_off[j], s->grad + s->grad_off[nw + j], k->ent_len,
              io->sample_deltas + io->sample_off[j]);
  io->loss += loss;
  io->examples += (double)(st->n_items + io->n_samples);
  return PS_OK;
}

static void kge_initial(const void *impl, ps_key key, float *val, uint32_t len) {
  const kge_workload *k = impl;
  uint64_t salt = ps_mix64(KGE_SALT ^ k->data_seed);
  for (uint32_t i = 0; i < len / 2; i++)
    val[i] += wl_initial_uniform(salt, key, i, (float)k->init_scale);
}

/* ----------------------------------------------------------- evaluation */

static int by_key(const void *a, const void *b) {
  ps_key x = *(const ps_key *)a, y = *(const ps_key *)b;
  return x < y ? -1 : x > y;
}

static int kge_eval_keys(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                         size_t *n) {
  const kge_workload *k = impl;
  size_t mine = k->n_eval > rank ? (k->n_eval - rank + workers - 1) / workers : 0;
  size_t cap = k->n_candidates + 3 * mine;
  ps_key *v = malloc((cap ? cap : 1) * sizeof *v);
  if (!v) return PS_ERR_NOMEM;
  size_t m = 0;
  for (size_t i = 0; i < k->n_candidates; i++) v[m++] = k->candidates[i];
  for (size_t i = rank; i < k->n_eval; i += workers) {
    v[m++] = k->eval[i].h;
    v[m++] = k->eval[i].t;
    v[m++] = (ps_key)k->g.entities + k->eval[i].r;
  }
  qsort(v, m, sizeof *v, by_key);
  size_t u = 0;
  for (size_t i = 0; i < m; i++)
    if (u == 0 || v[u - 1] != v[i]) v[u++] = v[i];
  *keys = v;
  *n = u;
  return PS_OK;
}

static const float *eval_value(const wl_eval_in *in, ps_key key) {
  const ps_key *p = bsearch(&key, in->keys, in->n, sizeof key, by_key);
  return p ? in->vals + in->off[p - in->keys] : NULL;
}

static double dot(const double *q, const float *x, uint32_t n) {
  double s = 0;
  for (uint32_t i = 0; i < n; i++) s += q[i] * x[i];
  return s;
}

/* The candidates' values in in (keys and candidates both ascending: one
 * walk), into vals; false when one is missing. */
static bool candidate_values(const kge_workload *k, const wl_eval_in *in, const float **vals) {
  size_t j = 0;
  for (size_t c = 0; c < k->n_candidates; c++) {
    while (j < in->n && in->keys[j] < k->candidates[c]) j++;
    if (j == in->n || in->keys[j] != k->candidates[c]) return false;
    vals[c] = in->vals + in->off[j];
  }
  return true;
}

/* Triple x's rank among the candidates (1 + those scoring above it, ties
 * half), skipping the tails skip marks (its known ones). */
static double rank_among(const kge_workload *k, const double *q, double truth,
                         const float *const *vals, const uint8_t *skip) {
  double rank_of = 1;
  for (size_t c = 0; c < k->n_candidates; c++) {
    if (skip[k->candidates[c]]) continue;
    double s = dot(q, vals[c], k->ent_len);
    rank_of += !isfinite(s) || s > truth ? 1 : s == truth ? 0.5 : 0;
  }
  return rank_of;
}

static int kge_eval(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
                    double *num, double *den) {
  const kge_workload *k = impl;
  double *q = malloc(k->ent_len * sizeof *q);
  const float **cand = malloc((k->n_candidates ? k->n_candidates : 1) * sizeof *cand);
  uint8_t *skip = calloc(k->g.entities ? k->g.entities : 1, 1);
  int rc = q && cand && skip ? PS_OK : PS_ERR_NOMEM;
  if (rc == PS_OK && !candidate_values(k, in, cand)) rc = PS_ERR_INVAL;
  for (size_t i = rank; rc == PS_OK && i < k->n_eval; i += workers) {
    kge_triple x = k->eval[i];
    const float *h = eval_value(in, x.h), *r = eval_value(in, (ps_key)k->g.entities + x.r);
    const float *t = eval_value(in, x.t);
    if (!h || !r || !t) {
      rc = PS_ERR_INVAL;
      break;
    }
    kge_query(k->model, k->dim, h, r, q);
    double truth = dot(q, t, k->ent_len);
    if (!isfinite(truth)) { /* a diverged model ranks nothing */
      *num = NAN;
      *den += 1;
      continue;
    }
    for (size_t j = k->known_at[i]; j < k->known_at[i + 1]; j++) skip[k->known[j]] = 1;
    skip[x.t] = 1;
    double rank_of = rank_among(k, q, truth, cand, skip);
    for (size_t j = k->known_at[i]; j < k->known_at[i + 1]; j++) skip[k->known[j]] = 0;
    skip[x.t] = 0;
    *num += k->hits10 ? (rank_of <= 10) : 1 / rank_of;
    *den += 1;
  }
  free(q);
  free(cand);
  free(skip);
  return rc;
}

/* ------------------------------------------------- samples and hot keys */

static int kge_sample_distribution(const void *impl, ps_key *first, uint64_t *count,
                                   double **weights) {
  const kge_workload *k = impl;
  *first = 0;
  *count = k->g.entities;
  *weights = NULL;
  if (k->sample_power == 0) return PS_OK;
  double *w = malloc(k->g.entities * sizeof *w);
  if (!w) return PS_ERR_NOMEM;
  for (uint32_t e = 0; e < k->g.entities; e++)
    w[e] = k->degree[e] ? pow((double)k->degree[e], k->sample_power) : 0;
  *weights = w;
  return PS_OK;
}

static size_t kge_hot_keys(const void *impl, size_t n, ps_key *out) {
  const kge_workload *k = impl;
  size_t all = (size_t)k->g.entities + k->g.relations, m = 0;
  wl_key_count *v = malloc((all ? all : 1) * sizeof *v);
  if (!v) return 0;
  for (uint32_t e = 0; e < k->g.entities; e++) v[m++] = (wl_key_count){e, k->degree[e]};
  for (uint32_t r = 0; r < k->g.relations; r++)
    v[m++] = (wl_key_count){(ps_key)k->g.entities + r, k->rel_count[r]};
  size_t found = wl_hottest(v, m, n, out);
  free(v);
  return found;
}

/* ---------------------------------------------------------------- saving */

/* One embedding table as TSV: a line per id, its name and its embedding
 * (the value's first half; the AdaGrad state is left out). */
static int save_embeddings(const char *dir, const char *file, char *const *names, uint32_t n,
                           const float *vals, uint32_t len, char *err, size_t errlen) {
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, file, err, errlen)) return -1;
  wl_save_rows(sv.f, '\t', names, n, vals, len, 2 * (uint64_t)len);
  return wl_save_close(&sv, true, err, errlen);
}

/* entities.tsv (table 0) and relations.tsv (table 1). */
static int kge_save(const void *impl, const ps_layout *layout, const float *const *vals,
                    const char *dir, char *err, size_t errlen) {
  (void)layout;
  const kge_workload *k = impl;
  return save_embeddings(dir, "entities.tsv", k->g.entity_names, k->g.entities, vals[0],
                         k->ent_len, err, errlen) == 0 &&
                 save_embeddings(dir, "relations.tsv", k->g.relation_names, k->g.relations,
                                 vals[1], k->rel_len, err, errlen) == 0
             ? 0
             : -1;
}

const wl_type wl_type_kge = {
    .quality_name = kge_quality_name,
    .name = "kge",
    .create = kge_create,
    .free = kge_free,
    .tables = kge_tables,
    .stream_new = kge_stream_new,
    .stream_free = kge_stream_free,
    .next_step = kge_next_step,
    .sample_distribution = kge_sample_distribution,
    .hot_keys = kge_hot_keys,
    .initial = kge_initial,
    .math = kge_math,
    .eval_keys = kge_eval_keys,
    .eval = kge_eval,
    .save = kge_save,
};
