/*
 * The hottest keys of a workload, by access frequency, for policies that
 * treat hot keys apart (replicate, nups).
 *
 * Generic over workload types: it draws sample streams, one per node (each
 * node's stream has its own data, e.g. zipf's locality block), with a fixed
 * seed, counts how often each key is read or written, and ranks keys by
 * count (ties by key, so the answer is deterministic). It is an estimate:
 * about HOT_SAMPLE_ACCESSES accesses in all, enough to rank the head of a
 * skewed distribution; keys of the tail tie at low counts.
 */
#include "workloads/internal.h"

#include <stdlib.h>
#include <string.h>

#define HOT_SAMPLE_ACCESSES 2000000u
#define HOT_SAMPLE_SEED 0x686f746b657973ULL /* "hotkeys" */

typedef wl_key_count key_count; /* count 0: an empty slot */

typedef struct {
  key_count *slots;
  size_t cap, used;
} counter;

static bool counter_grow(counter *c) {
  size_t cap = c->cap ? c->cap * 2 : 4096;
  key_count *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < c->cap; i++) {
    if (!c->slots[i].count) continue;
    size_t j = ps_mix64(c->slots[i].key) & (cap - 1);
    while (slots[j].count) j = (j + 1) & (cap - 1);
    slots[j] = c->slots[i];
  }
  free(c->slots);
  c->slots = slots;
  c->cap = cap;
  return true;
}

static bool counter_add(counter *c, ps_key k) {
  if ((c->used + 1) * 10 > c->cap * 7 && !counter_grow(c)) return false;
  size_t j = ps_mix64(k) & (c->cap - 1);
  while (c->slots[j].count && c->slots[j].key != k) j = (j + 1) & (c->cap - 1);
  if (!c->slots[j].count) {
    c->slots[j].key = k;
    c->used++;
  }
  c->slots[j].count++;
  return true;
}

static int by_count_then_key(const void *a, const void *b) {
  const wl_key_count *x = a, *y = b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

size_t wl_hottest(wl_key_count *c, size_t n, size_t want, ps_key *out) {
  size_t used = 0;
  for (size_t i = 0; i < n; i++)
    if (c[i].count) c[used++] = c[i];
  if (used > 1) qsort(c, used, sizeof *c, by_count_then_key); /* c may be NULL when empty */
  size_t found = used < want ? used : want;
  for (size_t i = 0; i < found; i++) out[i] = c[i].key;
  return found;
}

/* Counts the keys of `steps` steps of node's sample stream. */
static bool count_node(const wl_workload *wl, uint32_t node, uint64_t steps, counter *c) {
  wl_stream *s = wl_stream_new(wl, node, node, HOT_SAMPLE_SEED);
  if (!s) return false;
  wl_step st;
  bool ok = true;
  for (uint64_t i = 0; ok && i < steps && wl_next_step(s, &st); i++) {
    for (size_t j = 0; ok && j < st.n_reads; j++) ok = counter_add(c, st.reads[j]);
    if (st.writes == st.reads) continue; /* writes are the first reads */
    for (size_t j = 0; ok && j < st.n_writes; j++) ok = counter_add(c, st.writes[j]);
  }
  wl_stream_free(s);
  return ok;
}

size_t wl_hot_keys(const wl_workload *wl, size_t n, ps_key *out) {
  if (wl->type->hot_keys) return wl->type->hot_keys(wl->impl, n, out);
  uint32_t nodes = wl->num_nodes;
  uint64_t per_step = wl->info.max_step_keys ? wl->info.max_step_keys : 1;
  uint64_t steps = HOT_SAMPLE_ACCESSES / per_step / nodes + 1;
  if (steps > wl->info.steps_per_worker) steps = wl->info.steps_per_worker;
  counter c = {0};
  bool ok = true;
  for (uint32_t node = 0; ok && node < nodes; node++) ok = count_node(wl, node, steps, &c);
  size_t found = ok ? wl_hottest(c.slots, c.cap, n, out) : 0;
  free(c.slots);
  return found;
}
