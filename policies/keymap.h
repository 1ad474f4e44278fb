/*
 * A key -> uint64 hash map for the policies' bookkeeping (the samplers'
 * counts, adaptive's intended keys). Open addressing with linear probing,
 * doubling at 1/2 load, backward-shift deletion (no tombstones); memory
 * follows the keys stored, not the key space. UINT64_MAX marks an empty slot:
 * it is never a valid key (ps_layout_check refuses tables that reach it).
 */
#ifndef PSLAB_POLICIES_KEYMAP_H
#define PSLAB_POLICIES_KEYMAP_H

#include "model/ps.h"

typedef struct {
  ps_key *keys;
  uint64_t *vals;
  size_t cap, len; /* cap a power of two, or 0 */
} keymap;

/* The value slot of k, inserted as 0 when absent; NULL on no memory. The
 * pointer dies at the next insert or remove. */
uint64_t *keymap_slot(keymap *m, ps_key k);
/* The value of k, or NULL when absent. */
uint64_t *keymap_find(const keymap *m, ps_key k);
/* Removes k if present. */
void keymap_remove(keymap *m, ps_key k);
void keymap_free(keymap *m);

#endif
