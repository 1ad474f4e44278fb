/*
 * The workload door: wl_create finds the type named by the JSON "type" and
 * dispatches to its table; streams share one implementation of step storage.
 *
 * Step storage is a ring of `keep` slots, each big enough for the type's
 * largest step. Slot i % keep holds step i, so a step's arrays stay valid
 * until `keep` more steps are drawn. keep defaults to WL_STEP_KEEP; the driver
 * asks for only what its lookahead needs (wl_stream_keep), which keeps the
 * memory of a simulation with thousands of workers small. The ring is
 * allocated once, before the first step; drawing a step allocates nothing.
 * A type whose math needs more than keys (the examples of a minibatch) names
 * them as items, kept in a second ring beside the keys.
 */
#include "workloads/internal.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- registry */

const wl_type *const wl_types[] = {&wl_type_zipf, &wl_type_mf, &wl_type_kge,
                                          &wl_type_w2v, &wl_type_trace, &wl_type_dnn, NULL};

static const wl_type *find_type(const char *name) {
  for (size_t i = 0; wl_types[i]; i++)
    if (strcmp(wl_types[i]->name, name) == 0) return wl_types[i];
  return NULL;
}

static void type_error(const cJSON *type, char *err, size_t errlen) {
  char expected[256] = "one of";
  size_t used = strlen(expected);
  for (size_t i = 0; wl_types[i] && used < sizeof expected; i++) {
    int n = snprintf(expected + used, sizeof expected - used, "%s \"%s\"",
                     i ? "," : "", wl_types[i]->name);
    if (n < 0) break;
    used += (size_t)n;
  }
  wlj_error(err, errlen, "type", expected, type);
}

/* ------------------------------------------------------------- workloads */

/* The workloads wl_keep_tables keeps: created once per object (less the
 * fields wl_create reads itself, "eval_every" and "stop_after") and
 * cluster, then their type's data (read files, indexes, generated ratings)
 * shared read-only, as a workload is, by every workload created from an
 * equal object, in this process and in the children it forks. */
#define KEPT_MAX 8
typedef struct {
  char *key;
  wl_workload *wl; /* its info without eval_every and stop_after */
} kept_workload;
static kept_workload kept[KEPT_MAX];
static size_t n_kept;
static bool keeping;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

void wl_keep_workloads(bool keep) {
  pthread_mutex_lock(&kept_lock);
  keeping = keep;
  for (size_t i = 0; !keep && i < n_kept; i++) {
    kept[i].wl->type->free(kept[i].wl->impl);
    free(kept[i].wl);
    free(kept[i].key);
  }
  if (!keep) n_kept = 0;
  pthread_mutex_unlock(&kept_lock);
}

/* What makes two workloads the same: the object less eval_every and
 * stop_after, and the context. NULL on no memory. */
static char *kept_key(const cJSON *json, const wl_context *ctx) {
  cJSON *j = cJSON_Duplicate(json, true);
  cJSON_DeleteItemFromObjectCaseSensitive(j, "eval_every");
  cJSON_DeleteItemFromObjectCaseSensitive(j, "stop_after");
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  const char *dir = ctx->base_dir ? ctx->base_dir : "";
  size_t len = text ? strlen(text) + strlen(dir) + 32 : 0;
  char *key = len ? malloc(len) : NULL;
  if (key) snprintf(key, len, "%u.%u|%s|%s", ctx->nodes, ctx->workers_per_node, dir, text);
  free(text);
  return key;
}

/* A workload of type t made of json, created. */
static wl_workload *create(const wl_type *t, const cJSON *json, const wl_context *ctx,
                           char *err, size_t errlen) {
  wl_workload *wl = calloc(1, sizeof *wl);
  if (!wl) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  wl->type = t;
  wl->num_nodes = ctx->nodes;
  wl->ctx = *ctx;
  wl->ctx.base_dir = NULL; /* only create reads files */
  wl->impl = t->create(json, ctx, &wl->info, err, errlen);
  if (!wl->impl) {
    free(wl);
    return NULL;
  }
  return wl;
}

/* A workload of type t made of json: while keeping, its type's data from
 * the kept one made of an equal object on the same cluster, else created
 * and kept (while there is room); wl->shared says whether its impl is a
 * kept one's. Not keeping, created (without the lock: workloads are
 * created at once by threads of a run). NULL with a message in err. */
static wl_workload *create_or_share(const wl_type *t, const cJSON *json, const wl_context *ctx,
                                    char *err, size_t errlen) {
  pthread_mutex_lock(&kept_lock);
  if (!keeping) {
    pthread_mutex_unlock(&kept_lock);
    return create(t, json, ctx, err, errlen);
  }
  char *key = kept_key(json, ctx);
  wl_workload *wl = NULL;
  for (size_t i = 0; key && !wl && i < n_kept; i++)
    if (strcmp(kept[i].key, key) == 0 && (wl = malloc(sizeof *wl))) {
      *wl = *kept[i].wl;
      wl->shared = true;
    }
  if (!wl && (wl = create(t, json, ctx, err, errlen)) && key && n_kept < KEPT_MAX) {
    wl_workload *copy = malloc(sizeof *copy);
    if (copy) {
      *copy = *wl;
      kept[n_kept++] = (kept_workload){key, copy};
      key = NULL;
      wl->shared = true;
    }
  }
  pthread_mutex_unlock(&kept_lock);
  free(key);
  return wl;
}

wl_workload *wl_create(const cJSON *json, const wl_context *ctx, char *err,
                       size_t errlen) {
  char scratch[1];
  if (!err || !errlen) { /* callers may not care for the message */
    err = scratch;
    errlen = sizeof scratch;
  }
  if (!cJSON_IsObject(json)) {
    char what[64];
    wlj_describe(json, what, sizeof what);
    snprintf(err, errlen, "expected an object, found %s", what);
    return NULL;
  }
  if (!ctx || ctx->nodes == 0 || ctx->workers_per_node == 0) {
    snprintf(err, errlen, "expected a cluster of at least one node and one worker");
    return NULL;
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(json, "type");
  const wl_type *t = cJSON_IsString(type) ? find_type(type->valuestring) : NULL;
  if (!t) {
    type_error(type, err, errlen);
    return NULL;
  }
  wl_workload *wl = create_or_share(t, json, ctx, err, errlen);
  if (wl && (!wlj_eval_every(json, &wl->info, err, errlen) ||
             !wlj_stop_after(json, &wl->info, err, errlen))) {
    wl_free(wl);
    return NULL;
  }
  return wl;
}

void wl_free(wl_workload *wl) {
  if (!wl) return;
  if (!wl->shared) wl->type->free(wl->impl);
  free(wl);
}

void wl_tables(const wl_workload *wl, ps_layout *layout) {
  wl->type->tables(wl->impl, layout);
}

uint64_t wl_steps_per_worker(const wl_workload *wl) {
  return wl->info.steps_per_worker;
}

uint64_t wl_steps_per_epoch(const wl_workload *wl) {
  return wl->info.steps_per_epoch;
}

uint64_t wl_eval_steps(const wl_workload *wl) { return wl->info.eval_steps; }

bool wl_samples(const wl_workload *wl) { return wl->info.samples; }

int wl_sample_distribution(const wl_workload *wl, ps_key *first, uint64_t *count,
                           double **weights) {
  if (!wl->info.samples || !wl->type->sample_distribution) return PS_ERR_INVAL;
  return wl->type->sample_distribution(wl->impl, first, count, weights);
}

/* ------------------------------------------------------------ real math */

bool wl_math(const wl_workload *wl) { return wl->info.math && wl->type->math; }

bool wl_quality_info(const wl_workload *wl, wl_quality *out) {
  if (!wl_math(wl) || !wl->info.has_quality || !wl->type->eval) return false;
  *out = wl->info.quality;
  return true;
}

int wl_eval_keys_all(const wl_workload *wl, ps_key **keys, size_t *n) {
  wl_quality q;
  if (!wl_quality_info(wl, &q) || !wl->type->eval_keys) return PS_ERR_INVAL;
  return wl->type->eval_keys(wl->impl, 0, 1, keys, n);
}

int wl_eval_all(const wl_workload *wl, const ps_key *keys, size_t n, const float *vals,
                const size_t *off, double *num, double *den) {
  wl_quality q;
  if (!wl_quality_info(wl, &q)) return PS_ERR_INVAL;
  wl_eval_in in = {.keys = keys, .n = n, .vals = vals, .off = off};
  *num = *den = 0;
  return wl->type->eval(wl->impl, 0, 1, &in, num, den);
}

/* The quality measures: what each is called on an axis or in a table, and
 * which way is better. Workload types name theirs (wl_type.quality_name). */
static const wl_quality measures[] = {
    {.name = "rmse", .label = "RMSE", .higher_better = false, .sqrt = true},
    {.name = "mrr", .label = "filtered MRR", .higher_better = true},
    {.name = "hits10", .label = "filtered Hits@10", .higher_better = true},
    {.name = "spearman", .label = "Spearman's rho", .higher_better = true},
    {.name = "analogy", .label = "analogy accuracy", .higher_better = true},
    {.name = "mse", .label = "MSE", .higher_better = false},
    {.name = "sampled_mrr", .label = "sampled MRR", .higher_better = true},
    {.name = "sampled_hits10", .label = "sampled Hits@10", .higher_better = true},
};

const wl_quality *wl_quality_measures(size_t *count) {
  *count = sizeof measures / sizeof measures[0];
  return measures;
}

const wl_quality *wl_quality_find(const char *name) {
  for (size_t i = 0; name && i < sizeof measures / sizeof measures[0]; i++)
    if (strcmp(measures[i].name, name) == 0) return &measures[i];
  return NULL;
}

wl_quality wl_quality_named(const char *name) {
  const wl_quality *q = wl_quality_find(name);
  return q ? *q : (wl_quality){.name = "quality", .label = "quality"};
}

const wl_quality *wl_quality_of(const cJSON *json) {
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(json, "type");
  const wl_type *t = cJSON_IsString(type) ? find_type(type->valuestring) : NULL;
  const cJSON *math = cJSON_GetObjectItemCaseSensitive(json, "math");
  if (!t || !t->quality_name || (cJSON_IsString(math) && strcmp(math->valuestring, "none") == 0))
    return NULL;
  return wl_quality_find(t->quality_name(json));
}

void wl_add_initial(const wl_workload *wl, ps_key k, float *val, uint32_t len) {
  if (!wl_math(wl) || !wl->type->initial || len == 0) return;
  wl->type->initial(wl->impl, k, val, len);
}

/* --------------------------------------------------------------- streams */

wl_stream *wl_stream_new(const wl_workload *wl, uint32_t node,
                         uint32_t worker_rank, uint64_t seed) {
  wl_stream *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->type = wl->type;
  s->wl = wl;
  s->keep = WL_STEP_KEEP;
  s->limit = wl->info.stop_steps ? wl->info.stop_steps : UINT64_MAX;
  s->slot_keys = wl->info.max_step_keys ? wl->info.max_step_keys : 1;
  s->slot_items = wl->info.max_step_items;
  s->impl = wl->type->stream_new(wl->impl, node, worker_rank, seed);
  if (!s->impl) {
    free(s);
    return NULL;
  }
  return s;
}

void wl_stream_free(wl_stream *s) {
  if (!s) return;
  s->type->stream_free(s->impl);
  free(s->ring);
  free(s->item_ring);
  free(s);
}

int wl_stream_keep(wl_stream *s, size_t steps) {
  if (steps < 1 || steps > WL_STEP_KEEP) return PS_ERR_INVAL;
  if (s->ring) /* steps were drawn: only a guarantee already given stands */
    return steps <= s->keep ? PS_OK : PS_ERR_INVAL;
  uint64_t total = s->wl->info.steps_per_worker;
  size_t slots = total < steps ? (size_t)(total ? total : 1) : steps;
  if (s->slot_keys > SIZE_MAX / sizeof(ps_key) / slots) return PS_ERR_NOMEM;
  if (s->slot_items > SIZE_MAX / sizeof(uint64_t) / slots) return PS_ERR_NOMEM;
  s->ring = malloc(slots * s->slot_keys * sizeof(ps_key));
  if (!s->ring) return PS_ERR_NOMEM;
  if (s->slot_items && !(s->item_ring = malloc(slots * s->slot_items * sizeof(uint64_t)))) {
    free(s->ring);
    s->ring = NULL;
    return PS_ERR_NOMEM;
  }
  s->keep = steps;
  s->slots = slots;
  return PS_OK;
}

void wl_stream_limit(wl_stream *s, uint64_t steps) { s->limit = steps; }

bool wl_next_step(wl_stream *s, wl_step *out) {
  if (s->drawn >= s->limit) return false;
  if (!s->ring && wl_stream_keep(s, s->keep) != PS_OK) return false;
  size_t i = (size_t)(s->drawn % s->slots);
  ps_key *slot = s->ring + i * s->slot_keys;
  uint64_t *items = s->item_ring ? s->item_ring + i * s->slot_items : NULL;
  out->items = NULL;
  out->n_items = 0;
  if (!s->type->next_step(s->impl, slot, items, out)) return false;
  s->drawn++;
  return true;
}
