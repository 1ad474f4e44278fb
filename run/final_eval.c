/*
 * The final evaluation: once a run is quiet (every worker done, replicas'
 * last deltas handed on to their owners, no message in flight), the whole
 * held-out data is evaluated once on the owners' values. That is the model
 * as a whole, whatever the policy replicated or relocated: the evaluations
 * during training read what the evaluating worker's node holds (a replica
 * holds its node's updates and what the last sync brought), this one never
 * reads a replica. It is the run's `quality`, at time_s, so that a curve of
 * quality against time ends where a plot of time_s puts the run.
 *
 * Each node's owned values of the keys the evaluation reads travel as
 * bytes (run_bytes, the replica check's records) to the node that
 * evaluates: on the real backend owners live in other processes.
 */
#include "run/internal.h"

#include <stdlib.h>
#include <string.h>

/* A key of the evaluation and where its value goes. */
typedef struct {
  ps_key key;
  size_t index;
} slot;

static int by_key(const void *a, const void *b) {
  ps_key x = ((const slot *)a)->key, y = ((const slot *)b)->key;
  return x < y ? -1 : x > y;
}

/* The evaluation's keys, sorted into *slots with their index in *keys.
 * false on no memory or no quality (then *keys is NULL). */
static bool eval_slots(const run_setup *s, ps_key **keys, size_t *n, slot **slots) {
  *keys = NULL;
  *slots = NULL;
  if (!s->has_quality || wl_eval_keys_all(s->wl, keys, n) != PS_OK) return false;
  if (!(*slots = malloc((*n ? *n : 1) * sizeof **slots))) return false;
  for (size_t i = 0; i < *n; i++) (*slots)[i] = (slot){(*keys)[i], i};
  qsort(*slots, *n, sizeof **slots, by_key);
  return true;
}

static const slot *find(const slot *slots, size_t n, ps_key k) {
  slot want = {.key = k};
  return n ? bsearch(&want, slots, n, sizeof want, by_key) : NULL;
}

typedef struct {
  const slot *slots;
  size_t n;
  run_bytes bytes;
} part_ctx;

static void put_evaluated(void *ctx, ps_key k, const float *value, uint32_t len) {
  part_ctx *p = ctx;
  if (find(p->slots, p->n, k)) run_bytes_put(&p->bytes, k, value, len);
}

int run_final_part(const run_setup *s, ps_node *core, uint8_t **buf, size_t *len) {
  ps_key *keys;
  slot *slots;
  part_ctx p = {0};
  *buf = NULL;
  *len = 0;
  if (!s->has_quality) return PS_OK;
  bool ok = eval_slots(s, &keys, &p.n, &slots);
  p.slots = slots;
  if (ok) ps_node_owned_each(core, put_evaluated, &p);
  free(keys);
  free(slots);
  if (!ok || p.bytes.oom) {
    free(p.bytes.buf);
    return PS_ERR_NOMEM;
  }
  *buf = p.bytes.buf;
  *len = p.bytes.len;
  return PS_OK;
}

/* Places the records' values at their keys' offsets in vals. */
static int place(const uint8_t *parts, const run_record *recs, size_t n_recs, const slot *slots,
                 size_t n, const size_t *off, const uint32_t *lens, float *vals) {
  for (size_t i = 0; i < n_recs; i++) {
    const slot *at = find(slots, n, recs[i].key);
    if (!at) continue;
    if (recs[i].len != lens[at->index]) return PS_ERR_INVAL;
    memcpy(vals + off[at->index], parts + recs[i].at, (size_t)recs[i].len * sizeof(float));
  }
  return PS_OK;
}

int run_final_eval(const run_setup *s, const uint8_t *parts, size_t len, run_node_report *r) {
  ps_key *keys;
  slot *slots;
  size_t n = 0, floats = 0, n_recs = 0;
  r->final_done = false;
  if (!s->has_quality) return PS_OK;
  bool ok = eval_slots(s, &keys, &n, &slots);
  size_t *off = ok ? malloc((n ? n : 1) * sizeof *off) : NULL;
  uint32_t *lens = ok ? malloc((n ? n : 1) * sizeof *lens) : NULL;
  for (size_t i = 0; off && lens && i < n; i++) {
    off[i] = floats;
    lens[i] = ps_layout_value_len(&s->layout, keys[i]);
    floats += lens[i];
  }
  float *vals = off && lens ? calloc(floats ? floats : 1, sizeof *vals) : NULL;
  run_record *recs = NULL;
  int rc = vals ? run_bytes_records(parts, len, &recs, &n_recs) : PS_ERR_NOMEM;
  if (rc == PS_OK) rc = place(parts, recs, n_recs, slots, n, off, lens, vals);
  for (size_t i = 0; rc == PS_OK && i < n; i++)
    wl_add_initial(s->wl, keys[i], vals + off[i], lens[i]);
  if (rc == PS_OK) rc = wl_eval_all(s->wl, keys, n, vals, off, &r->final_num, &r->final_den);
  r->final_done = rc == PS_OK;
  free(recs);
  free(vals);
  free(lens);
  free(off);
  free(slots);
  free(keys);
  return rc;
}
