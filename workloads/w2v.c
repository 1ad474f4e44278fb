/*
 * The `w2v` workload: word2vec's skip-gram with negative sampling (SGNS),
 * the third task of the Lapse and NuPS papers, on a real corpus.
 *
 * Model. Two tables of `dim` floats per vocabulary word: table 0 the input
 * vectors (keys 0..V-1, word id = key; initial values uniform in
 * [-0.5/dim, 0.5/dim), as word2vec), table 1 the output vectors (keys
 * V..2V-1, initial 0). A (center, context) pair trains, as word2vec.c and
 * gensim do, the context's input vector to predict the center: its loss is
 * -log sigma(in_x . out_c) - sum over its `neg` negatives n of
 * -log sigma(-in_x . out_n), x the context and c the center, the negatives
 * standing in for the center; the step pushes -lr times its gradients, all
 * taken at the values pulled at the step's start (a minibatch).
 *
 * Steps. The corpus (w2v_data.c) is one array of tokens; worker r of W
 * takes the contiguous chunk [r*N/W, (r+1)*N/W) (balanced, deterministic)
 * and walks it `batch` tokens a step, an epoch being one pass: every worker
 * runs ceil(ceil(N/W)/batch) steps per epoch (a shorter chunk's last steps
 * may be empty). A token is a center unless subsampling drops it; its
 * window is word2vec's reduced one, b uniform in [1, window]; its contexts
 * are the b nearest kept tokens on each side within its sentence: distances
 * count kept tokens only, so subsampling closes gaps as word2vec.c (which
 * drops tokens while reading a sentence) and gensim (which drops them
 * before taking windows) do, and a center trains up to 2b pairs however
 * many tokens between were dropped. Subsampling keeps a
 * token of a word of frequency f (of T tokens) with word2vec's probability
 * (sqrt(f/(t*T)) + 1) * t*T/f for `subsample` = t, decided once per token
 * occurrence and epoch: a hash of the position and a salt each epoch draws
 * from the worker stream's generator, so a token dropped as a center is
 * dropped as a context too, in any order.
 *
 * A step reads and writes the output vectors of its centers and the input
 * vectors of their contexts (distinct keys; one array) and samples exactly
 * pairs * neg output vectors through the policy's sampling scheme, from
 * unigram^sample_power over the output table. Its items are the step's
 * index in the run (for the learning rate) and its pairs as read indices.
 * Flops: 6 * dim per (pair, target), target = the center or a negative: a
 * dot product and two scaled additions.
 *
 * Optimizer "adagrad": every vector's key holds [vector | accumulated
 * squared gradients] (2 dim floats; internal.h, AdaGrad). The step's
 * gradients are summed per distinct key (a negative that is also one of the
 * step's output vectors, or drawn twice, adds to the key's first slot: the
 * writes, then the samples in order; its other slots push 0) and each key
 * takes one AdaGrad step from its pulled accumulators, at the scheduled lr
 * (lr_schedule applies to AdaGrad's lr too). 6 flops more a float of each
 * key updated.
 *
 * Quality: Spearman's rho between the cosine of input vectors and a
 * similarity set's scores, evaluated by rank 0 alone; or 3CosAdd analogy
 * accuracy among the analogy_vocab most frequent words, questions split
 * over the workers.
 */
#include "workloads/w2v.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W2V_INITIAL_SALT 0x77327620696e6974ULL /* "w2v init" */

enum { LR_LINEAR, LR_CONSTANT };
enum { QUALITY_NONE, QUALITY_SIMILARITY, QUALITY_ANALOGY };

typedef struct {
  w2v_corpus c;
  uint32_t V;
  uint64_t dim, window, neg, batch, epochs, min_count;
  double subsample, sample_power, lr;
  size_t lr_schedule;
  wl_optimizer optimizer;
  double *keep;      /* per word: the probability subsampling keeps a token */
  uint32_t workers;
  uint64_t steps_per_epoch;
  int quality;
  w2v_similarity sim;
  ps_key *sim_keys;  /* the similarity words' input keys, sorted */
  size_t n_sim_keys;
  w2v_analogy ana;
  uint32_t ana_vocab;
} w2v_workload;

/* Keys to indices: open addressing, an entry is in use when its stamp is
 * the set's, so a new stamp empties the set in O(1). */
typedef struct {
  ps_key *keys;
  uint32_t *index;
  uint64_t *stamps;
  size_t mask;
  uint64_t stamp;
} key_set;

typedef struct {
  const w2v_workload *w;
  gsl_rng *rng;
  uint64_t lo, hi;   /* the worker's chunk of tokens */
  uint64_t pos, sentence, step_in_epoch, drawn, salt;
  key_set seen;      /* next_step: the step's keys -> their index in the slot */
  key_set first;     /* math under AdaGrad: a key -> its first slot */
} w2v_stream;

/* ------------------------------------------------------------ creation */

static void w2v_free(void *impl) {
  w2v_workload *w = impl;
  if (!w) return;
  w2v_corpus_free(&w->c);
  free(w->keep);
  free(w->sim.pairs);
  free(w->sim_keys);
  free(w->ana.q);
  free(w);
}

/* The rules between fields of a w2v object whose fields each parsed. */
static bool check_together(const cJSON *json, const w2v_workload *w, const char *corpus,
                           const char *sim, const char *ana, char *err, size_t errlen) {
  if (cJSON_GetObjectItemCaseSensitive(json, "wordnet_dir") &&
      strncmp(corpus, "wordnet:", 8) != 0 && strncmp(sim, "wordnet:", 8) != 0) {
    wlj_error(err, errlen, "wordnet_dir",
              "nothing unless corpus or similarity reads WordNet (\"wordnet:...\")",
              cJSON_GetObjectItemCaseSensitive(json, "wordnet_dir"));
    return false;
  }
  uint64_t keys = w->batch * (1 + 2 * w->window), samples = w->batch * 2 * w->window * w->neg;
  if (keys > PS_MAX_OP_KEYS || samples > PS_MAX_OP_KEYS) {
    char expected[160];
    snprintf(expected, sizeof expected,
             "a batch whose keys (batch * (1 + 2 * window)) and samples (batch * 2 * window * "
             "neg) stay within %u",
             (unsigned)PS_MAX_OP_KEYS);
    wlj_error(err, errlen, "batch", expected, cJSON_GetObjectItemCaseSensitive(json, "batch"));
    return false;
  }
  if (*sim && *ana) {
    wlj_error(err, errlen, "analogy",
              "nothing when similarity is set (one quality measure at a time)",
              cJSON_GetObjectItemCaseSensitive(json, "analogy"));
    return false;
  }
  if (cJSON_GetObjectItemCaseSensitive(json, "similarity_pairs") &&
      strcmp(sim, "wordnet:synonyms") != 0) {
    wlj_error(err, errlen, "similarity_pairs",
              "nothing unless similarity is \"wordnet:synonyms\"",
              cJSON_GetObjectItemCaseSensitive(json, "similarity_pairs"));
    return false;
  }
  if (cJSON_GetObjectItemCaseSensitive(json, "analogy_vocab") && !*ana) {
    wlj_error(err, errlen, "analogy_vocab", "nothing unless analogy is set",
              cJSON_GetObjectItemCaseSensitive(json, "analogy_vocab"));
    return false;
  }
  return true;
}

static bool parse(const cJSON *json, w2v_workload *w, const char **corpus, const char **sim,
                  const char **ana, uint64_t *sim_pairs, uint64_t *ana_vocab,
                  const char **wordnet_dir, char *err, size_t errlen) {
  static const char *const known[] = {
      "type", "corpus", "min_count", "dim", "window", "neg", "batch", "subsample",
      "sample_power", "lr", "lr_schedule", "epochs", "similarity", "similarity_pairs",
      "analogy", "analogy_vocab", "wordnet_dir", "math", "target_quality", "eval_every",
      "optimizer", "stop_after", NULL};
  static const char *const schedules[] = {"linear", "constant", NULL};
  const uint64_t one = 1, five = 5, ten = 10, fifty = 50, thousand = 1000, tenk = 10000;
  if (!wlj_check_fields(json, known, err, errlen) ||
      !wlj_string(json, "corpus", NULL, corpus, err, errlen) ||
      !wlj_uint(json, "min_count", 1, UINT32_MAX, &five, &w->min_count, err, errlen) ||
      !wlj_uint(json, "dim", 1, 65536, &fifty, &w->dim, err, errlen) ||
      !wlj_uint(json, "window", 1, 1000, &five, &w->window, err, errlen) ||
      !wlj_uint(json, "neg", 0, 1000, &five, &w->neg, err, errlen) ||
      !wlj_uint(json, "batch", 1, PS_MAX_OP_KEYS, &ten, &w->batch, err, errlen) ||
      !wlj_number(json, "subsample", 0, 1, 1e-3, &w->subsample, err, errlen) ||
      !wlj_number(json, "sample_power", 0, 10, 0.75, &w->sample_power, err, errlen) ||
      !wlj_number(json, "lr", 0, 100, 0.025, &w->lr, err, errlen) ||
      !wlj_choice(json, "lr_schedule", schedules, LR_LINEAR, &w->lr_schedule, err, errlen) ||
      !wlj_uint(json, "epochs", 1, 1000000, &one, &w->epochs, err, errlen) ||
      !wlj_string(json, "similarity", "", sim, err, errlen) ||
      !wlj_uint(json, "similarity_pairs", 1, 10000000, &thousand, sim_pairs, err, errlen) ||
      !wlj_string(json, "analogy", "", ana, err, errlen) ||
      !wlj_uint(json, "analogy_vocab", 1, UINT32_MAX, &tenk, ana_vocab, err, errlen) ||
      !wlj_string(json, "wordnet_dir", W2V_WORDNET_DIR, wordnet_dir, err, errlen) ||
      !wlj_optimizer(json, &w->optimizer, err, errlen))
    return false;
  return check_together(json, w, *corpus, *sim, *ana, err, errlen);
}

static int by_key(const void *x, const void *y) {
  ps_key a = *(const ps_key *)x, b = *(const ps_key *)y;
  return a < b ? -1 : a > b;
}

/* The similarity words' input keys, sorted and distinct. */
static bool make_sim_keys(w2v_workload *w) {
  ps_key *k = malloc(2 * w->sim.n * sizeof *k);
  if (!k) return false;
  for (size_t i = 0; i < w->sim.n; i++) {
    k[2 * i] = w->sim.pairs[i].a;
    k[2 * i + 1] = w->sim.pairs[i].b;
  }
  qsort(k, 2 * w->sim.n, sizeof *k, by_key);
  size_t n = 0;
  for (size_t i = 0; i < 2 * w->sim.n; i++)
    if (!n || k[i] != k[n - 1]) k[n++] = k[i];
  w->sim_keys = k;
  w->n_sim_keys = n;
  return true;
}

static bool make_keep(w2v_workload *w) {
  if (!(w->keep = malloc(w->V * sizeof *w->keep))) return false;
  double tt = w->subsample * (double)w->c.n_tokens;
  for (uint32_t i = 0; i < w->V; i++) {
    double f = (double)w->c.counts[i];
    double p = tt > 0 ? (sqrt(f / tt) + 1) * tt / f : 1.0;
    w->keep[i] = p < 1 ? p : 1;
  }
  return true;
}

static void *fail(w2v_workload *w, char *err, size_t errlen, const char *what) {
  if (what) snprintf(err, errlen, "%s", what);
  w2v_free(w);
  return NULL;
}

/* Analogy accuracy with "analogy", Spearman's rho with "similarity" (one
 * at a time), else none. */
static const char *w2v_quality_name(const cJSON *json) {
  const cJSON *ana = cJSON_GetObjectItemCaseSensitive(json, "analogy");
  const cJSON *sim = cJSON_GetObjectItemCaseSensitive(json, "similarity");
  if (cJSON_IsString(ana) && *ana->valuestring) return "analogy";
  if (cJSON_IsString(sim) && *sim->valuestring) return "spearman";
  return NULL;
}

static void *w2v_create(const cJSON *json, const wl_context *ctx, wl_info *info, char *err,
                        size_t errlen) {
  w2v_workload *w = calloc(1, sizeof *w);
  if (!w) return fail(NULL, err, errlen, "out of memory");
  const char *corpus, *sim, *ana, *wn_given;
  uint64_t sim_pairs, ana_vocab;
  if (!parse(json, w, &corpus, &sim, &ana, &sim_pairs, &ana_vocab, &wn_given, err, errlen))
    return fail(w, err, errlen, NULL);
  info->has_quality = *sim || *ana;
  if (info->has_quality) info->quality = wl_quality_named(w2v_quality_name(json));
  if (!wlj_math_fields(json, info, err, errlen)) return fail(w, err, errlen, NULL);
  char *wordnet_dir = wl_path(ctx, wn_given); /* relative: from the spec's directory */
  if (!wordnet_dir) return fail(w, err, errlen, "out of memory");
  bool loaded = w2v_corpus_load(&w->c, ctx, corpus, w->min_count, wordnet_dir, err, errlen) &&
                (!*sim || w2v_similarity_load(&w->sim, ctx, sim, &w->c, sim_pairs, wordnet_dir,
                                              err, errlen));
  free(wordnet_dir);
  if (!loaded) return fail(w, err, errlen, NULL);
  w->V = w->c.vocab.count;
  if (w->V > (uint32_t)(UINT32_MAX / 2)) return fail(w, err, errlen, "corpus: too many words");
  if (!make_keep(w)) return fail(w, err, errlen, "corpus: out of memory");
  if (*sim) {
    if (!make_sim_keys(w)) return fail(w, err, errlen, "similarity: out of memory");
    w->quality = QUALITY_SIMILARITY;
  } else if (*ana) {
    w->ana_vocab = ana_vocab < w->V ? (uint32_t)ana_vocab : w->V;
    if (!w2v_analogy_load(&w->ana, ctx, ana, &w->c, w->ana_vocab, err, errlen))
      return fail(w, err, errlen, NULL);
    w->quality = QUALITY_ANALOGY;
  }
  w->workers = ctx->nodes * ctx->workers_per_node;
  uint64_t chunk = (w->c.n_tokens + w->workers - 1) / w->workers;
  w->steps_per_epoch = (chunk + w->batch - 1) / w->batch;
  if (w->steps_per_epoch == 0) w->steps_per_epoch = 1;
  info->steps_per_epoch = w->steps_per_epoch;
  info->steps_per_worker = w->steps_per_epoch * w->epochs;
  info->max_step_keys = (size_t)(w->batch * (1 + 2 * w->window));
  info->max_step_items = (size_t)(1 + w->batch * 2 * w->window);
  info->samples = w->neg > 0;
  return w;
}

static void w2v_tables(const void *impl, ps_layout *layout) {
  const w2v_workload *w = impl;
  uint32_t len = wl_value_len(w->optimizer, (uint32_t)w->dim);
  layout->num_tables = 2;
  layout->tables[0] = (ps_table){.first = 0, .count = w->V, .value_len = len};
  layout->tables[1] = (ps_table){.first = w->V, .count = w->V, .value_len = len};
}

/* -------------------------------------------------------------- streams */

/* Room for n keys (at least twice as many entries, a power of two). */
static bool key_set_init(key_set *k, size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  k->mask = cap - 1;
  k->keys = malloc(cap * sizeof *k->keys);
  k->index = malloc(cap * sizeof *k->index);
  k->stamps = calloc(cap, sizeof *k->stamps);
  return k->keys && k->index && k->stamps;
}

static void key_set_free(key_set *k) {
  free(k->keys);
  free(k->index);
  free(k->stamps);
}

/* The index of key, or `fresh` once key is added with it. */
static uint32_t key_set_find_or_add(key_set *k, ps_key key, uint32_t fresh) {
  size_t i = (size_t)ps_mix64(key) & k->mask;
  while (k->stamps[i] == k->stamp) {
    if (k->keys[i] == key) return k->index[i];
    i = (i + 1) & k->mask;
  }
  k->stamps[i] = k->stamp;
  k->keys[i] = key;
  k->index[i] = fresh;
  return fresh;
}

static void w2v_stream_free(void *stream) {
  w2v_stream *s = stream;
  if (!s) return;
  if (s->rng) gsl_rng_free(s->rng);
  key_set_free(&s->seen);
  key_set_free(&s->first);
  free(s);
}

/* Start of worker r's chunk of n tokens over W workers (balanced). */
static uint64_t chunk_start(uint64_t n, uint32_t workers, uint32_t r) {
  uint64_t q = n / workers, rem = n % workers;
  return q * r + (r < rem ? r : rem);
}

static void *w2v_stream_new(const void *impl, uint32_t node, uint32_t worker_rank,
                            uint64_t seed) {
  (void)node;
  const w2v_workload *w = impl;
  w2v_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->w = w;
  uint32_t r = worker_rank % w->workers; /* a rank beyond the cluster wraps */
  s->lo = chunk_start(w->c.n_tokens, w->workers, r);
  s->hi = chunk_start(w->c.n_tokens, w->workers, r + 1);
  size_t keys = (size_t)(w->batch * (1 + 2 * w->window));
  size_t samples = (size_t)(w->batch * 2 * w->window * w->neg);
  bool adagrad = w->optimizer == WL_OPT_ADAGRAD;
  s->rng = wl_rng_new(seed, worker_rank);
  if (!key_set_init(&s->seen, keys) || (adagrad && !key_set_init(&s->first, keys + samples)) ||
      !s->rng) {
    w2v_stream_free(s);
    return NULL;
  }
  return s;
}

/* The index of key k in the step's keys, appended if new. */
static uint32_t key_index(w2v_stream *s, ps_key k, ps_key *slot, size_t *n) {
  uint32_t i = key_set_find_or_add(&s->seen, k, (uint32_t)*n);
  if (i == *n) slot[(*n)++] = k;
  return i;
}

/* Whether subsampling keeps the token at pos this epoch. */
static bool kept(const w2v_stream *s, uint64_t pos) {
  const w2v_workload *w = s->w;
  double p = w->keep[w->c.tokens[pos]];
  if (p >= 1) return true;
  double u = (double)(ps_mix64(s->salt ^ pos) >> 11) * 0x1.0p-53;
  return u < p;
}

/* The sentence holding pos, moving forward from s->sentence. */
static void find_sentence(w2v_stream *s, uint64_t pos) {
  const uint64_t *starts = s->w->c.sentences;
  while (starts[s->sentence + 1] <= pos) s->sentence++;
}

/* The first sentence holding a token at or after pos (binary search). */
static uint64_t sentence_at(const w2v_corpus *c, uint64_t pos) {
  uint64_t lo = 0, hi = c->n_sentences; /* starts[lo] <= pos < starts[hi] */
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (c->sentences[mid] <= pos) lo = mid;
    else hi = mid;
  }
  return lo;
}

/* The window [q0, q1) of the center at pos, in its sentence: out to the
 * b-th kept token on each side, or to the sentence's edge (dropped tokens
 * are skipped, not counted). */
static void window_bounds(const w2v_stream *s, uint64_t pos, uint64_t b, uint64_t *q0,
                          uint64_t *q1) {
  const w2v_workload *w = s->w;
  uint64_t first = w->c.sentences[s->sentence], last = w->c.sentences[s->sentence + 1];
  uint64_t q = pos, found = 0;
  while (q > first && found < b) found += kept(s, --q);
  *q0 = q;
  q = pos + 1;
  for (found = 0; q < last && found < b; q++) found += kept(s, q);
  *q1 = q;
}

static bool w2v_next_step(void *stream, ps_key *slot, uint64_t *items, wl_step *out) {
  w2v_stream *s = stream;
  const w2v_workload *w = s->w;
  if (s->drawn == w->steps_per_epoch * w->epochs) return false;
  if (s->step_in_epoch == 0) {
    s->pos = s->lo;
    s->sentence = sentence_at(&w->c, s->lo);
    s->salt = (uint64_t)gsl_rng_get(s->rng) << 32 ^ gsl_rng_get(s->rng);
  }
  uint64_t end = s->pos + w->batch < s->hi ? s->pos + w->batch : s->hi;
  size_t n_keys = 0, pairs = 0;
  s->seen.stamp++;
  items[0] = s->drawn;
  for (uint64_t p = s->pos; p < end; p++) {
    find_sentence(s, p);
    if (!kept(s, p)) continue;
    uint64_t b = 1 + gsl_rng_uniform_int(s->rng, (unsigned long)w->window), q0, q1;
    window_bounds(s, p, b, &q0, &q1);
    uint64_t center = UINT32_MAX; /* its output vector */
    for (uint64_t q = q0; q < q1; q++) {
      if (q == p || !kept(s, q)) continue;
      if (center == UINT32_MAX)
        center = key_index(s, (ps_key)w->V + w->c.tokens[p], slot, &n_keys);
      uint64_t ctx = key_index(s, w->c.tokens[q], slot, &n_keys); /* its input vector */
      items[1 + pairs++] = ctx | center << 32;
    }
  }
  s->pos = end;
  if (++s->step_in_epoch == w->steps_per_epoch) s->step_in_epoch = 0;
  s->drawn++;
  out->reads = slot;
  out->n_reads = n_keys;
  out->writes = slot;
  out->n_writes = n_keys;
  out->n_samples = pairs * (size_t)w->neg;
  out->flops = 6.0 * (double)w->dim * (double)pairs * (double)(1 + w->neg);
  if (w->optimizer == WL_OPT_ADAGRAD)
    out->flops += 6.0 * (double)w->dim * (double)(n_keys + out->n_samples);
  out->items = items;
  out->n_items = 1 + pairs;
  return true;
}

static int w2v_sample_distribution(const void *impl, ps_key *first, uint64_t *count,
                                   double **weights) {
  const w2v_workload *w = impl;
  *first = w->V;
  *count = w->V;
  double *wt = malloc(w->V * sizeof *wt);
  if (!wt) return PS_ERR_NOMEM;
  for (uint32_t i = 0; i < w->V; i++) wt[i] = pow((double)w->c.counts[i], w->sample_power);
  *weights = wt;
  return PS_OK;
}

/* The input and output vectors of the most frequent words, in that order,
 * word by word (ids are frequency ranks). */
static size_t w2v_hot_keys(const void *impl, size_t n, ps_key *out) {
  const w2v_workload *w = impl;
  size_t total = 2 * (size_t)w->V, found = n < total ? n : total;
  for (size_t i = 0; i < found; i++) out[i] = (i % 2 ? w->V : 0) + i / 2;
  return found;
}

/* ------------------------------------------------------------------ math */

static void w2v_initial(const void *impl, ps_key k, float *val, uint32_t len) {
  const w2v_workload *w = impl;
  if (k >= w->V) return; /* output vectors start at 0, as AdaGrad's accumulators */
  float scale = 0.5f / (float)w->dim;
  for (uint32_t i = 0; i < len && i < w->dim; i++)
    val[i] += wl_initial_uniform(W2V_INITIAL_SALT, k, i, scale);
}

static double dot(const float *a, const float *b, uint32_t n) {
  double s = 0;
  for (uint32_t i = 0; i < n; i++) s += (double)a[i] * b[i];
  return s;
}

/* -log sigma(x), stably. */
static double neg_log_sigmoid(double x) { return x >= 0 ? log1p(exp(-x)) : -x + log1p(exp(x)); }

static double sigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

static void axpy(float *y, float a, const float *x, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) y[i] += a * x[i];
}

void w2v_sgns(const wl_step *st, wl_math_io *io, uint32_t dim, uint32_t vocab, uint32_t neg,
              float lr) {
  (void)vocab;
  for (size_t p = 0; p + 1 < st->n_items; p++) {
    uint32_t ci = (uint32_t)st->items[1 + p], oi = (uint32_t)(st->items[1 + p] >> 32);
    const float *in = io->reads + io->read_off[ci], *out = io->reads + io->read_off[oi];
    float *d_in = io->write_deltas + io->write_off[ci];
    double f = dot(in, out, dim);
    io->loss += neg_log_sigmoid(f); /* label 1 */
    float g = (float)(lr * (1.0 - sigmoid(f)));
    axpy(d_in, g, out, dim);
    axpy(io->write_deltas + io->write_off[oi], g, in, dim);
    for (size_t k = (size_t)p * neg; k < (size_t)(p + 1) * neg && k < io->n_samples; k++) {
      if (io->samples[k] == st->reads[oi]) continue; /* the pair's own output word */
      const float *nv = io->sample_vals + io->sample_off[k];
      f = dot(in, nv, dim);
      io->loss += neg_log_sigmoid(-f); /* label 0 */
      g = (float)(-lr * sigmoid(f));
      axpy(d_in, g, nv, dim);
      axpy(io->sample_deltas + io->sample_off[k], g, in, dim);
    }
    io->examples += 1;
  }
}

/* AdaGrad on the step's gradients (in the deltas): each key's summed into
 * its first slot, writes then samples, and stepped once. */
static void adagrad_step(w2v_stream *s, const wl_step *st, wl_math_io *io, double lr) {
  key_set *first = &s->first;
  const uint32_t dim = (uint32_t)s->w->dim, nw = (uint32_t)st->n_writes;
  first->stamp++;
  for (uint32_t i = 0; i < nw; i++) key_set_find_or_add(first, st->writes[i], i);
  for (size_t j = 0; j < io->n_samples; j++) {
    uint32_t at = key_set_find_or_add(first, io->samples[j], nw + (uint32_t)j);
    if (at == nw + j) continue;
    float *to = at < nw ? io->write_deltas + io->write_off[at]
                        : io->sample_deltas + io->sample_off[at - nw];
    float *from = io->sample_deltas + io->sample_off[j];
    for (uint32_t k = 0; k < dim; k++) {
      to[k] += from[k];
      from[k] = 0;
    }
  }
  for (uint32_t i = 0; i < nw; i++)
    wl_adagrad_key(lr, io->reads + io->read_off[i], io->write_deltas + io->write_off[i], dim);
  for (size_t j = 0; j < io->n_samples; j++)
    if (key_set_find_or_add(first, io->samples[j], 0) == nw + j)
      wl_adagrad_key(lr, io->sample_vals + io->sample_off[j],
                     io->sample_deltas + io->sample_off[j], dim);
}

static int w2v_math(void *stream, const wl_step *st, wl_math_io *io) {
  w2v_stream *s = stream;
  const w2v_workload *w = s->w;
  if (st->n_items == 0) return PS_OK;
  double lr = w->lr;
  if (w->lr_schedule == LR_LINEAR) { /* word2vec: down to 1e-4 of the start */
    double left = 1.0 - (double)st->items[0] / (double)(w->steps_per_epoch * w->epochs);
    lr *= left > 1e-4 ? left : 1e-4;
  }
  if (w->optimizer == WL_OPT_SGD) {
    w2v_sgns(st, io, (uint32_t)w->dim, w->V, (uint32_t)w->neg, (float)lr);
    return PS_OK;
  }
  w2v_sgns(st, io, (uint32_t)w->dim, w->V, (uint32_t)w->neg, -1.0f); /* the gradients */
  adagrad_step(s, st, io, lr);
  return PS_OK;
}

/* ------------------------------------------------------------ evaluation */

/* Questions [first, end) of worker rank's share. */
static void analogy_share(const w2v_workload *w, uint32_t rank, uint32_t workers,
                          size_t *first, size_t *end) {
  *first = (size_t)chunk_start(w->ana.n, workers, rank);
  *end = (size_t)chunk_start(w->ana.n, workers, rank + 1);
}

static int w2v_eval_keys(const void *impl, uint32_t rank, uint32_t workers, ps_key **keys,
                         size_t *n) {
  const w2v_workload *w = impl;
  *keys = NULL;
  *n = 0;
  size_t count = 0;
  const ps_key *from = NULL;
  if (w->quality == QUALITY_SIMILARITY && rank == 0) {
    count = w->n_sim_keys;
    from = w->sim_keys;
  } else if (w->quality == QUALITY_ANALOGY) {
    size_t first, end;
    analogy_share(w, rank, workers, &first, &end);
    if (end > first) count = w->ana_vocab; /* the candidates: ids 0..A-1 */
  }
  if (count == 0) return PS_OK;
  if (!(*keys = malloc(count * sizeof **keys))) return PS_ERR_NOMEM;
  for (size_t i = 0; i < count; i++) (*keys)[i] = from ? from[i] : (ps_key)i;
  *n = count;
  return PS_OK;
}

static double cosine(const float *a, const float *b, uint32_t n) {
  double ab = dot(a, b, n), aa = dot(a, a, n), bb = dot(b, b, n);
  if (!isfinite(aa) || !isfinite(bb) || !isfinite(ab)) return NAN; /* diverged */
  return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0;
}

static const float *eval_value(const wl_eval_in *in, ps_key k) {
  const ps_key *at = bsearch(&k, in->keys, in->n, sizeof k, by_key);
  return at ? in->vals + in->off[at - in->keys] : NULL;
}

static int eval_similarity(const w2v_workload *w, const wl_eval_in *in, double *num,
                           double *den) {
  double *x = malloc(2 * w->sim.n * sizeof *x);
  if (!x) return PS_ERR_NOMEM;
  double *y = x + w->sim.n;
  for (size_t i = 0; i < w->sim.n; i++) {
    const float *a = eval_value(in, w->sim.pairs[i].a), *b = eval_value(in, w->sim.pairs[i].b);
    x[i] = a && b ? cosine(a, b, (uint32_t)w->dim) : 0;
    y[i] = w->sim.pairs[i].score;
  }
  bool ok;
  *num = w2v_spearman(x, y, w->sim.n, &ok);
  *den = 1;
  free(x);
  return ok ? PS_OK : PS_ERR_NOMEM;
}

/* 3CosAdd: the word (not a, b or c) whose unit vector is nearest b - a + c
 * of unit vectors. */
static int eval_analogy(const w2v_workload *w, uint32_t rank, uint32_t workers,
                        const wl_eval_in *in, double *num, double *den) {
  size_t first, end;
  analogy_share(w, rank, workers, &first, &end);
  if (end <= first) return PS_OK;
  uint32_t dim = (uint32_t)w->dim, A = w->ana_vocab;
  if (in->n != A) return PS_ERR_INVAL;
  float *unit = malloc(((size_t)A + 1) * dim * sizeof *unit);
  if (!unit) return PS_ERR_NOMEM;
  for (uint32_t i = 0; i < A; i++) {
    const float *v = in->vals + in->off[i];
    double norm = sqrt(dot(v, v, dim));
    if (!isfinite(norm)) { /* a diverged model answers nothing */
      free(unit);
      *num = NAN;
      *den = (double)(end - first);
      return PS_OK;
    }
    for (uint32_t j = 0; j < dim; j++)
      unit[(size_t)i * dim + j] = norm > 0 ? (float)(v[j] / norm) : 0;
  }
  float *target = unit + (size_t)A * dim;
  double correct = 0;
  for (size_t q = first; q < end; q++) {
    const uint32_t *abcd = w->ana.q[q];
    for (uint32_t j = 0; j < dim; j++)
      target[j] = unit[(size_t)abcd[1] * dim + j] - unit[(size_t)abcd[0] * dim + j] +
                  unit[(size_t)abcd[2] * dim + j];
    uint32_t best = UINT32_MAX;
    double best_score = -INFINITY;
    for (uint32_t i = 0; i < A; i++) {
      if (i == abcd[0] || i == abcd[1] || i == abcd[2]) continue;
      double score = dot(target, unit + (size_t)i * dim, dim);
      if (score > best_score) {
        best_score = score;
        best = i;
      }
    }
    correct += best == abcd[3];
  }
  free(unit);
  *num = correct;
  *den = (double)(end - first);
  return PS_OK;
}

static int w2v_eval(const void *impl, uint32_t rank, uint32_t workers, const wl_eval_in *in,
                    double *num, double *den) {
  const w2v_workload *w = impl;
  *num = *den = 0;
  if (w->quality == QUALITY_SIMILARITY)
    return rank == 0 ? eval_similarity(w, in, num, den) : PS_OK;
  if (w->quality == QUALITY_ANALOGY) return eval_analogy(w, rank, workers, in, num, den);
  return PS_OK;
}

/* ---------------------------------------------------------------- saving */

/* vectors.txt: word2vec's text format, the input vectors: "<words> <dim>",
 * then "<word> <v1> ... <vdim>" a line, words by id (frequency rank), each
 * float as %.9g (it reads back exactly). Word i's vector starts at in + i *
 * stride (its key's value: AdaGrad's accumulators follow the vector). */
static int save_vectors(const w2v_workload *w, const float *in, uint32_t stride, const char *dir,
                        char *err, size_t errlen) {
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, "vectors.txt", err, errlen)) return -1;
  fprintf(sv.f, "%u %llu\n", (unsigned)w->V, (unsigned long long)w->dim);
  for (uint32_t i = 0; i < w->V; i++) {
    fputs(w->c.vocab.names[i], sv.f);
    for (uint64_t j = 0; j < w->dim; j++) {
      fputc(' ', sv.f);
      wl_save_float(sv.f, in[(size_t)i * stride + j]);
    }
    fputc('\n', sv.f);
  }
  return wl_save_close(&sv, true, err, errlen);
}

/* similarity.tsv: the quality's pairs as scored ("<w1>\t<w2>\t<score>"), so
 * that vectors trained elsewhere can be scored on the same pairs. */
static int save_pairs(const w2v_workload *w, const char *dir, char *err, size_t errlen) {
  wl_save_file sv;
  if (!wl_save_open(&sv, dir, "similarity.tsv", err, errlen)) return -1;
  for (size_t i = 0; i < w->sim.n; i++)
    fprintf(sv.f, "%s\t%s\t%.17g\n", w->c.vocab.names[w->sim.pairs[i].a],
            w->c.vocab.names[w->sim.pairs[i].b], w->sim.pairs[i].score);
  return wl_save_close(&sv, true, err, errlen);
}

static int w2v_save(const void *impl, const ps_layout *layout, const float *const *vals,
                    const char *dir, char *err, size_t errlen) {
  const w2v_workload *w = impl; /* table 0: the input vectors */
  if (save_vectors(w, vals[0], layout->tables[0].value_len, dir, err, errlen) != 0) return -1;
  return w->quality == QUALITY_SIMILARITY ? save_pairs(w, dir, err, errlen) : 0;
}

const wl_type wl_type_w2v = {
    .quality_name = w2v_quality_name,
    .name = "w2v",
    .create = w2v_create,
    .free = w2v_free,
    .tables = w2v_tables,
    .stream_new = w2v_stream_new,
    .stream_free = w2v_stream_free,
    .next_step = w2v_next_step,
    .sample_distribution = w2v_sample_distribution,
    .hot_keys = w2v_hot_keys,
    .initial = w2v_initial,
    .math = w2v_math,
    .eval_keys = w2v_eval_keys,
    .eval = w2v_eval,
    .save = w2v_save,
};
