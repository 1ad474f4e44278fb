/*
 * NuPS's sampling management, as a layer over a worker's client operations.
 * Workloads such as word2vec or KGE with negative sampling read, besides the
 * keys of their data, keys drawn at random from a distribution; where those
 * keys live decides much of a step's cost. A sampler draws them in one of
 * four schemes (NuPS, SIGMOD 2022), each trading conformity to the intended
 * distribution against locality:
 *
 *   naive   draws at pull time and pulls wherever the keys live: exact
 *           conformity, mostly remote reads on many nodes.
 *   preloc  draws at prepare time (a step or more ahead) and localizes the
 *           drawn keys without waiting, so they have (ideally) arrived by the
 *           pull: exact conformity, one relocation per sample.
 *   pool    keeps pools of group_size drawn keys, localized when the pool is
 *           made (one spare pool ahead of what prepares promised); each
 *           pool key serves up to `reuse` samples. With postpone, a pool key
 *           not yet local at use time is put off and a local one used now,
 *           the postponed one later. Marginals stay right; samples are
 *           correlated (reuse) and relocations drop by the factor `reuse`.
 *           (sampling_pool.c)
 *   local   draws only among keys local now: rejection sampling against the
 *           worker's locality, at most LOCAL_TRIES draws, then a uniform pick
 *           among keys seen local before. Never remote once warmed up, but
 *           it samples d conditioned on this node's keys: biased by design
 *           when placement is skewed, and its tv_distance says by how much.
 *
 * The core knows nothing of sampling: a scheme calls only ps_pull,
 * ps_localize and ps_worker_key_locality. Randomness is the sampler's own
 * splitmix64 state, seeded by the caller.
 */
#include "policies/sampling_internal.h"
#include "policies/common.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* local: rejection draws per sample before falling back on keys seen local. */
#define LOCAL_TRIES 32
#define SAMPLING_MAX_GROUP (1u << 20)
#define SAMPLING_MAX_REUSE (1u << 20)

/* ------------------------------------------------------- configuration */

static const policy_enum_value scheme_values[] = {{"naive", SCHEME_NAIVE},
                                                   {"preloc", SCHEME_PRELOC},
                                                   {"pool", SCHEME_POOL},
                                                   {"local", SCHEME_LOCAL},
                                                   {NULL, 0}};

/* An absent sampling object means naive; a given one names its scheme. */
const policy_field policy_sampling_fields[] = {
    {.name = "scheme", .type = FIELD_ENUM, .offset = offsetof(sampling_config, scheme),
     .def = SCHEME_NAIVE, .values = scheme_values, .required = true,
     .meaning = "draw at pull time; a step ahead, localized; from pools of keys reused; "
                "or only among keys local now"},
    {.name = "group_size", .type = FIELD_INT, .offset = offsetof(sampling_config, group_size),
     .def = PS_SAMPLING_DEFAULT_GROUP_SIZE, .min = 1, .max = SAMPLING_MAX_GROUP,
     .when_field = "scheme", .when_value = "pool",
     .meaning = "keys drawn and localized together as one pool"},
    {.name = "reuse", .type = FIELD_INT, .offset = offsetof(sampling_config, reuse),
     .def = PS_SAMPLING_DEFAULT_REUSE, .min = 1, .max = SAMPLING_MAX_REUSE,
     .when_field = "scheme", .when_value = "pool",
     .meaning = "samples each pool key serves"},
    {.name = "postpone", .type = FIELD_BOOL, .offset = offsetof(sampling_config, postpone),
     .def = 1, .when_field = "scheme", .when_value = "pool",
     .meaning = "a pool key not local yet is put off and a local one used now"},
    {0},
};

int sampling_parse(const cJSON *json, sampling_config *c, char *err, size_t errlen) {
  return policy_read_fields(json, policy_sampling_fields, FIELDS_PLAIN, c, err, errlen);
}

int ps_sampling_configure(const cJSON *json, char *err, size_t errlen) {
  sampling_config c;
  return sampling_parse(json, &c, err, errlen);
}

const char *ps_sampling_localizing_scheme(const cJSON *json) {
  sampling_config c;
  char err[256];
  if (sampling_parse(json, &c, err, sizeof err) != PS_OK) return NULL;
  return c.scheme == SCHEME_PRELOC ? "preloc" : c.scheme == SCHEME_POOL ? "pool" : NULL;
}

/* --------------------------------------------------------- the sampler */

/* The value length shared by all of d's keys, or 0 unless they lie in one
 * table of the layout. */
static uint32_t dist_value_len(const ps_layout *l, const ps_sample_dist *d) {
  ps_key last = d->first + (d->count - 1);
  for (uint32_t i = 0; i < l->num_tables; i++) {
    const ps_table *t = &l->tables[i];
    if (d->first >= t->first && d->first - t->first < t->count)
      return last - t->first < t->count ? t->value_len : 0;
  }
  return 0;
}

ps_sampler *ps_sampler_new(const cJSON *json, ps_worker *w, const ps_sample_dist *d,
                           uint64_t seed) {
  char err[256];
  sampling_config c;
  if (!w || !d || sampling_parse(json, &c, err, sizeof err) != PS_OK) return NULL;
  uint32_t len = dist_value_len(ps_node_layout(ps_worker_node(w)), d);
  if (len == 0) return NULL;
  ps_sampler *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->cfg = c;
  s->w = w;
  s->d = d;
  s->value_len = len;
  s->rng = seed;
  s->next_handle = 1;
  return s;
}

void ps_sampler_free(ps_sampler *s) {
  if (!s) return;
  for (size_t i = 0; i < s->nprep; i++) free(s->prep[i].keys);
  free(s->prep);
  pool_free_groups(s);
  keymap_free(&s->local_seen);
  free(s->local_keys);
  keymap_free(&s->counts);
  free(s);
}

int sampling_count(ps_sampler *s, ps_key k, bool first_use) {
  uint64_t *c = keymap_slot(&s->counts, k);
  if (!c) return PS_ERR_NOMEM;
  (*c)++;
  s->samples++;
  if (first_use) s->distinct_used++;
  return PS_OK;
}

/* ------------------------------------------------------------- prepare */

/* preloc: draw now and start moving the keys here; nobody waits for them. */
static int preloc_prepare(ps_sampler *s, sampling_prepared *p, double now) {
  p->keys = malloc(p->n * sizeof *p->keys);
  if (!p->keys) return PS_ERR_NOMEM;
  for (size_t i = 0; i < p->n; i++) p->keys[i] = ps_sample_dist_draw(s->d, &s->rng);
  s->draws += p->n;
  int rc = ps_localize(s->w, p->keys, p->n, NULL, now);
  if (rc < 0) {
    free(p->keys);
    return rc;
  }
  return PS_OK;
}

int ps_sample_prepare(ps_sampler *s, size_t n, uint64_t *handle, double now) {
  if (!s || !handle || n == 0 || n > PS_MAX_OP_KEYS) return PS_ERR_INVAL;
  if (s->nprep == s->capprep) {
    size_t cap = s->capprep ? s->capprep * 2 : 8;
    sampling_prepared *prep = realloc(s->prep, cap * sizeof *prep);
    if (!prep) return PS_ERR_NOMEM;
    s->prep = prep, s->capprep = cap;
  }
  sampling_prepared p = {s->next_handle, n, NULL};
  int rc = PS_OK;
  if (s->cfg.scheme == SCHEME_PRELOC) rc = preloc_prepare(s, &p, now);
  else if (s->cfg.scheme == SCHEME_POOL) rc = pool_reserve(s, n, now);
  if (rc != PS_OK) return rc;
  s->prep[s->nprep++] = p;
  *handle = s->next_handle++;
  return PS_OK;
}

/* ---------------------------------------------------------------- pull */

/* Remembers a key seen local, for local's fallback. */
static void local_remember(ps_sampler *s, ps_key k) {
  uint64_t *seen = keymap_slot(&s->local_seen, k);
  if (!seen || *seen) return; /* no memory: the fallback just knows less */
  if (s->nlocal == s->caplocal) {
    size_t cap = s->caplocal ? s->caplocal * 2 : 64;
    ps_key *keys = realloc(s->local_keys, cap * sizeof *keys);
    if (!keys) return;
    s->local_keys = keys, s->caplocal = cap;
  }
  *seen = 1;
  s->local_keys[s->nlocal++] = k;
}

/* local: d conditioned on "local now", by rejection; after LOCAL_TRIES
 * misses a uniform pick among keys seen local (a reuse of an earlier draw,
 * counted so), and before any was seen the last draw, read remotely. */
static int local_draw(ps_sampler *s, ps_key *out) {
  ps_key k = 0;
  for (int t = 0; t < LOCAL_TRIES; t++) {
    k = ps_sample_dist_draw(s->d, &s->rng);
    s->draws++;
    if (ps_worker_key_locality(s->w, k) == PS_KEY_LOCAL) {
      local_remember(s, k);
      *out = k;
      return sampling_count(s, k, true);
    }
  }
  if (s->nlocal == 0) {
    *out = k;
    return sampling_count(s, k, true);
  }
  *out = s->local_keys[ps_splitmix64(&s->rng) % s->nlocal];
  return sampling_count(s, *out, false);
}

/* Fills keys[n] by the scheme and counts what is handed out. */
static int take_samples(ps_sampler *s, sampling_prepared *p, ps_key *keys) {
  int rc = PS_OK;
  switch (s->cfg.scheme) {
  case SCHEME_NAIVE:
    for (size_t i = 0; i < p->n && rc == PS_OK; i++) {
      keys[i] = ps_sample_dist_draw(s->d, &s->rng);
      s->draws++;
      rc = sampling_count(s, keys[i], true);
    }
    return rc;
  case SCHEME_PRELOC:
    memcpy(keys, p->keys, p->n * sizeof *keys);
    for (size_t i = 0; i < p->n && rc == PS_OK; i++) rc = sampling_count(s, keys[i], true);
    return rc;
  case SCHEME_POOL:
    return pool_take(s, keys, p->n);
  case SCHEME_LOCAL:
    for (size_t i = 0; i < p->n && rc == PS_OK; i++) rc = local_draw(s, &keys[i]);
    return rc;
  }
  return PS_ERR_INVAL;
}

int ps_sample_pull(ps_sampler *s, uint64_t handle, ps_key *keys_out, size_t n,
                   float *vals_out, size_t vals_len, ps_ticket *ticket, double now) {
  if (!s || !keys_out || !vals_out) return PS_ERR_INVAL;
  size_t i = 0;
  while (i < s->nprep && s->prep[i].handle != handle) i++;
  if (i == s->nprep) return PS_ERR_INVAL;
  sampling_prepared p = s->prep[i];
  if (n != p.n || vals_len / s->value_len < n) return PS_ERR_INVAL;
  memmove(&s->prep[i], &s->prep[i + 1], (s->nprep - i - 1) * sizeof *s->prep);
  s->nprep--;
  int rc = take_samples(s, &p, keys_out);
  free(p.keys);
  if (rc != PS_OK) return rc;
  return ps_pull(s->w, keys_out, n, vals_out, vals_len, ticket, now);
}

/* ---------------------------------------------------------- conformity */

/* Keys never handed out contribute their whole probability to the sum, so
 * one pass over the counted keys gives the distance over the support. */
static double tv_distance(const ps_sampler *s) {
  if (s->samples == 0) return 0.0;
  double sum = 0.0, p_seen = 0.0, N = (double)s->samples;
  for (size_t j = 0; j < s->counts.cap; j++) {
    if (s->counts.keys[j] == UINT64_MAX) continue;
    double p = ps_sample_dist_prob(s->d, s->counts.keys[j]);
    sum += fabs((double)s->counts.vals[j] / N - p);
    p_seen += p;
  }
  if (p_seen < 1.0) sum += 1.0 - p_seen;
  return 0.5 * sum;
}

void ps_sampler_stats(const ps_sampler *s, ps_sample_stats *out) {
  out->samples = s->samples;
  out->draws = s->draws;
  out->postponed = s->postponed;
  out->reuse_factor =
      s->distinct_used ? (double)s->samples / (double)s->distinct_used : 1.0;
  out->tv_distance = tv_distance(s);
}

/* ------------------------------------------------------------ callbacks */

int ps_sampler_prepare_cb(void *sampler, size_t n, uint64_t *handle, double now) {
  return ps_sample_prepare(sampler, n, handle, now);
}

int ps_sampler_pull_cb(void *sampler, uint64_t handle, ps_key *keys, size_t n, float *vals,
                       size_t vals_len, ps_ticket *ticket, double now) {
  return ps_sample_pull(sampler, handle, keys, n, vals, vals_len, ticket, now);
}

void ps_sampler_stats_cb(void *sampler, double *tv_distance, double *reuse_factor) {
  ps_sample_stats st;
  ps_sampler_stats(sampler, &st);
  *tv_distance = st.tv_distance;
  *reuse_factor = st.reuse_factor;
}
