/*
 * The pool scheme of NuPS's sampling management. Instead of relocating every
 * sample (preloc), a worker draws group_size keys at once, localizes them
 * together and then serves up to `reuse` samples from each, so relocations
 * drop by that factor while every key's share of the samples stays right
 * (each draw from d is used the same number of times; samples within a pool
 * are correlated, which is the price).
 *
 * Prepares promise uses; pools are drawn (and their localizes started) as
 * promises need them, always one full pool ahead, so the next pool is on its
 * way while the current one is used. At pull time a use is taken from the
 * oldest pool, at a random live slot. With postpone, a slot whose key is not
 * local yet is put off: the first local key among the oldest two pools is
 * used instead, and the postponed one later, once it has (ideally) arrived.
 * When none is local the random slot is read remotely: sampling never waits
 * for a relocation. The search costs up to two pools' worth of locality
 * lookups per postponed use; pools are small (NuPS: 250 keys).
 */
#include "policies/sampling_internal.h"

#include <stdlib.h>

static void group_free(sampling_group *g) {
  free(g->keys);
  free(g->uses);
  free(g);
}

/* Draws a new pool and appends it to the sampler's list. */
static sampling_group *group_new(ps_sampler *s) {
  uint32_t size = s->cfg.group_size;
  sampling_group *g = calloc(1, sizeof *g);
  if (!g) return NULL;
  g->keys = malloc(size * sizeof *g->keys);
  g->uses = malloc(size * sizeof *g->uses);
  if (!g->keys || !g->uses) {
    group_free(g);
    return NULL;
  }
  for (uint32_t i = 0; i < size; i++) {
    g->keys[i] = ps_sample_dist_draw(s->d, &s->rng);
    g->uses[i] = s->cfg.reuse;
  }
  g->live = size;
  s->draws += size;
  if (s->last_group) s->last_group->next = g;
  else s->groups = g;
  s->last_group = g;
  s->pool_uses += (uint64_t)size * s->cfg.reuse;
  return g;
}

int pool_reserve(ps_sampler *s, size_t n, double now) {
  uint64_t spare = (uint64_t)s->cfg.group_size * s->cfg.reuse;
  while (s->pool_uses < s->pool_reserved + n + spare) {
    sampling_group *g = group_new(s);
    if (!g) return PS_ERR_NOMEM;
    /* Nobody waits for the pool: a use that finds a key still away is
     * postponed or read remotely. */
    int rc = ps_localize(s->w, g->keys, s->cfg.group_size, NULL, now);
    if (rc < 0) return rc;
  }
  s->pool_reserved += n;
  return PS_OK;
}

void pool_free_groups(ps_sampler *s) {
  while (s->groups) {
    sampling_group *g = s->groups;
    s->groups = g->next;
    group_free(g);
  }
  s->last_group = NULL;
}

/* With postpone: the first slot holding a local key, from slot `from` of the
 * oldest pool on, then in the next pool; false when there is none. */
static bool find_local(ps_sampler *s, uint32_t from, sampling_group **gout, uint32_t *jout) {
  sampling_group *g = s->groups;
  for (int depth = 0; g && depth < 2; depth++, g = g->next, from = 0) {
    for (uint32_t t = 0; t < g->live; t++) {
      uint32_t j = (from + t) % g->live;
      if (ps_worker_key_locality(s->w, g->keys[j]) == PS_KEY_LOCAL) {
        *gout = g;
        *jout = j;
        return true;
      }
    }
  }
  return false;
}

/* Uses slot j of pool g once; a slot used up leaves the live prefix. */
static int use_slot(ps_sampler *s, sampling_group *g, uint32_t j, ps_key *out) {
  bool first = g->uses[j] == s->cfg.reuse;
  *out = g->keys[j];
  if (--g->uses[j] == 0) {
    g->live--;
    g->keys[j] = g->keys[g->live];
    g->uses[j] = g->uses[g->live];
  }
  s->pool_uses--;
  return sampling_count(s, *out, first);
}

static int take_one(ps_sampler *s, ps_key *out) {
  while (s->groups && s->groups->live == 0) {
    sampling_group *g = s->groups;
    s->groups = g->next;
    if (!s->groups) s->last_group = NULL;
    group_free(g);
  }
  sampling_group *g = s->groups;
  if (!g) return PS_ERR_PROTOCOL; /* a use was taken that no prepare promised */
  uint32_t j = (uint32_t)(ps_splitmix64(&s->rng) % g->live);
  if (s->cfg.postpone && ps_worker_key_locality(s->w, g->keys[j]) != PS_KEY_LOCAL) {
    sampling_group *lg;
    uint32_t lj;
    if (find_local(s, j, &lg, &lj)) {
      s->postponed++;
      return use_slot(s, lg, lj, out);
    }
  }
  return use_slot(s, g, j, out);
}

int pool_take(ps_sampler *s, ps_key *keys, size_t n) {
  s->pool_reserved -= n; /* the prepare is spent, whatever happens below */
  for (size_t i = 0; i < n; i++) {
    int rc = take_one(s, &keys[i]);
    if (rc != PS_OK) return rc;
  }
  return PS_OK;
}
