/*
 * The policies' key map (keymap.h): open addressing, linear probing.
 */
#include "policies/keymap.h"

#include <stdlib.h>

#define MAP_EMPTY UINT64_MAX

static size_t map_index(size_t cap, ps_key k) { return (size_t)ps_mix64(k) & (cap - 1); }

static int map_grow(keymap *m) {
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

uint64_t *keymap_slot(keymap *m, ps_key k) {
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

uint64_t *keymap_find(const keymap *m, ps_key k) {
  if (m->cap == 0) return NULL;
  size_t j = map_index(m->cap, k);
  while (m->keys[j] != MAP_EMPTY) {
    if (m->keys[j] == k) return &m->vals[j];
    j = (j + 1) & (m->cap - 1);
  }
  return NULL;
}

void keymap_remove(keymap *m, ps_key k) {
  if (m->cap == 0) return;
  size_t mask = m->cap - 1, j = map_index(m->cap, k);
  while (m->keys[j] != k) {
    if (m->keys[j] == MAP_EMPTY) return;
    j = (j + 1) & mask;
  }
  /* Backward shift: move later entries of the probe run into the hole when
   * their home slot does not lie (cyclically) between the hole and them. */
  size_t hole = j;
  for (size_t i = (j + 1) & mask; m->keys[i] != MAP_EMPTY; i = (i + 1) & mask) {
    size_t home = map_index(m->cap, m->keys[i]);
    if (((i - home) & mask) >= ((i - hole) & mask)) {
      m->keys[hole] = m->keys[i];
      m->vals[hole] = m->vals[i];
      hole = i;
    }
  }
  m->keys[hole] = MAP_EMPTY;
  m->len--;
}

void keymap_free(keymap *m) {
  free(m->keys), free(m->vals);
  *m = (keymap){0};
}
