/*
 * The key store: entries of the keys a node knows about, in open-addressing
 * tables (linear probing, backward-shift deletion) split into stripes, each
 * under its own mutex. Callers lock one stripe at a time and never call out
 * of the core while holding it.
 */
#include "model/internal.h"

#include <stdlib.h>
#include <string.h>

int ps__store_init(key_store *s, uint32_t stripes) {
  if (stripes == 0 || (stripes & (stripes - 1))) return PS_ERR_INVAL;
  s->stripes = aligned_alloc(PS_CACHE_LINE, stripes * sizeof *s->stripes);
  if (!s->stripes) return PS_ERR_NOMEM;
  memset(s->stripes, 0, stripes * sizeof *s->stripes);
  s->num_stripes = stripes;
  for (uint32_t i = 0; i < stripes; i++) pthread_mutex_init(&s->stripes[i].lock, NULL);
  return PS_OK;
}

static void free_queue(pending_op *op) {
  while (op) {
    pending_op *next = op->next;
    free(op);
    op = next;
  }
}

void ps__store_each(key_store *s, void (*fn)(key_entry *e, void *arg), void *arg) {
  for (uint32_t i = 0; i < s->num_stripes; i++) {
    store_stripe *st = &s->stripes[i];
    pthread_mutex_lock(&st->lock);
    for (size_t j = 0; j < st->cap; j++)
      if (st->slots[j].used) fn(&st->slots[j], arg);
    pthread_mutex_unlock(&st->lock);
  }
}

void ps__store_destroy(key_store *s) {
  if (!s->stripes) return;
  for (uint32_t i = 0; i < s->num_stripes; i++) {
    store_stripe *st = &s->stripes[i];
    for (size_t j = 0; j < st->cap; j++) {
      if (!st->slots[j].used) continue;
      free(st->slots[j].value);
      free(st->slots[j].delta);
      free(st->slots[j].intents);
      ps__key_bounded_free(st->slots[j].kb);
      free_queue(st->slots[j].queue_head);
    }
    free(st->slots);
    pthread_mutex_destroy(&st->lock);
  }
  free(s->stripes);
  s->stripes = NULL;
}

static size_t slot_of(const store_stripe *st, ps_key k) { return stripe_slot_of(st, k); }

/* Doubles the table (or makes the first one); false on no memory. */
static bool stripe_grow(store_stripe *st) {
  size_t cap = st->cap ? st->cap * 2 : 16;
  key_entry *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  key_entry *old = st->slots;
  size_t old_cap = st->cap;
  st->slots = slots;
  st->cap = cap;
  for (size_t j = 0; j < old_cap; j++) {
    if (!old[j].used) continue;
    size_t i = slot_of(st, old[j].key);
    while (slots[i].used) i = (i + 1) & (cap - 1);
    slots[i] = old[j];
  }
  free(old);
  return true;
}

key_entry *ps__stripe_get(store_stripe *st, ps_key k, bool *created) {
  key_entry *e = stripe_find(st, k);
  *created = false;
  if (e) return e;
  if ((st->used + 1) * 10 > st->cap * 7 && !stripe_grow(st)) return NULL;
  size_t i = slot_of(st, k);
  while (st->slots[i].used) i = (i + 1) & (st->cap - 1);
  e = &st->slots[i];
  memset(e, 0, sizeof *e);
  e->used = 1;
  e->key = k;
  st->used++;
  *created = true;
  return e;
}

void ps__stripe_remove(store_stripe *st, ps_key k) {
  key_entry *e = stripe_find(st, k);
  if (!e) return;
  size_t mask = st->cap - 1, hole = (size_t)(e - st->slots);
  /* Backward shift: pull later members of the probe run into the hole. */
  for (size_t i = (hole + 1) & mask; st->slots[i].used; i = (i + 1) & mask) {
    size_t want = slot_of(st, st->slots[i].key);
    bool movable = hole <= i ? (want <= hole || want > i) : (want <= hole && want > i);
    if (movable) {
      st->slots[hole] = st->slots[i];
      hole = i;
    }
  }
  memset(&st->slots[hole], 0, sizeof st->slots[hole]);
  st->used--;
}
