/*
 * A key -> counter hash map for the samplers' bookkeeping (samples per key
 * for the conformity measure, keys seen local). Open addressing with linear
 * probing and doubling at 1/2 load; memory follows the distinct keys stored,
 * so a distribution over billions of keys costs only what is sampled.
 */
#include "policies/sampling_internal.h"

#include <stdlib.h>

#define MAP_EMPTY UINT64_MAX

static size_t map_index(size_t cap, ps_key k) { return (size_t)ps_mix64(k) & (cap - 1); }

static int map_grow(sampling_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  ps_key *keys = malloc(cap * sizeof *keys);
  uint64_t *vals = malloc(cap * sizeof *vals);
  if (!keys || !vals) {
    free(keys), free(vals);
    return PS_ERR_NOMEM;
  }
  for (size_t i = 0; i < cap; i++) keys[i] = MAP_EMPTY;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->keys[i] == MAP_EMPTY) continue;
    size_t j = map_index(cap, m->keys[i]);
    while (keys[j] != MAP_EMPTY) j = (j + 1) & (cap - 1);
    keys[j] = m->keys[i];
    vals[j] = m->vals[i];
  }
  free(m->keys), free(m->vals);
  m->keys = keys, m->vals = vals, m->cap = cap;
  return PS_OK;
}

uint64_t *sampling_map_slot(sampling_map *m, ps_key k) {
  if ((m->len + 1) * 2 > m->cap && map_grow(m) != PS_OK) return NULL;
  size_t j = map_index(m->cap, k);
  while (m->keys[j] != MAP_EMPTY && m->keys[j] != k) j = (j + 1) & (m->cap - 1);
  if (m->keys[j] == MAP_EMPTY) {
    m->keys[j] = k;
    m->vals[j] = 0;
    m->len++;
  }
  return &m->vals[j];
}

const uint64_t *sampling_map_find(const sampling_map *m, ps_key k) {
  if (m->cap == 0) return NULL;
  size_t j = map_index(m->cap, k);
  while (m->keys[j] != MAP_EMPTY) {
    if (m->keys[j] == k) return &m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

void sampling_map_free(sampling_map *m) {
  free(m->keys), free(m->vals);
  *m = (sampling_map){0};
}
