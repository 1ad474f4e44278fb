/*
 * What a trace says about its access pattern (`pslab trace stats`), and its
 * hottest keys (the `trace` workload's hot_keys).
 *
 *   counts     accesses per key, in an open-addressing table (memory: the
 *              distinct keys), sorted into the rank-frequency curve;
 *   skew       the Zipf exponent, a weighted least-squares line through the
 *              head of log(count) against log(rank) (wl_trace_fit_zipf);
 *   locality   the share of each worker's accesses that range partitioning
 *              over `nodes` nodes homes on its own node;
 *   reuse      per worker, the distinct keys touched between two touches of
 *              one key: a Fenwick tree over the worker's touches marks the
 *              latest touch of each key, so the distance is the count of
 *              marks after the previous touch, O(log n) per touch.
 */
#include "workloads/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- key map */

typedef struct {
  ps_key key;
  uint64_t value; /* a count, or a touch index + 1 */
  bool used;
} key_slot;

typedef struct {
  key_slot *slots;
  size_t cap, used;
} key_map;

static bool map_grow(key_map *m) {
  size_t cap = m->cap ? m->cap * 2 : 4096;
  key_slot *slots = calloc(cap, sizeof *slots);
  if (!slots) return false;
  for (size_t i = 0; i < m->cap; i++) {
    if (!m->slots[i].used) continue;
    size_t j = ps_mix64(m->slots[i].key) & (cap - 1);
    while (slots[j].used) j = (j + 1) & (cap - 1);
    slots[j] = m->slots[i];
  }
  free(m->slots);
  m->slots = slots;
  m->cap = cap;
  return true;
}

/* The slot of k, added (value 0) if new; NULL on no memory. */
static key_slot *map_get(key_map *m, ps_key k) {
  if ((m->used + 1) * 10 > m->cap * 7 && !map_grow(m)) return NULL;
  size_t j = ps_mix64(k) & (m->cap - 1);
  while (m->slots[j].used && m->slots[j].key != k) j = (j + 1) & (m->cap - 1);
  if (!m->slots[j].used) {
    m->slots[j] = (key_slot){.key = k, .used = true};
    m->used++;
  }
  return &m->slots[j];
}

/* Every key's accesses over every record of every worker. */
static bool count_keys(const wl_trace *t, key_map *m, uint64_t by_op[3]) {
  ps_key *keys = malloc(wl_trace_max_record_keys(t) * sizeof *keys);
  if (!keys) return false;
  bool ok = true;
  for (uint32_t w = 0; ok && w < wl_trace_workers(t); w++) {
    wl_trace_cursor c;
    wl_trace_record r;
    wl_trace_cursor_init(&c, t, w);
    while (ok && wl_trace_next(&c, &r, keys)) {
      if (by_op) by_op[r.op] += r.n;
      for (size_t i = 0; ok && i < r.n; i++) {
        key_slot *s = map_get(m, keys[i]);
        if (s) s->value++;
        ok = s != NULL;
      }
    }
  }
  free(keys);
  return ok;
}

static int by_count_then_key(const void *a, const void *b) {
  const key_slot *x = a, *y = b;
  if (x->value != y->value) return x->value > y->value ? -1 : 1;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* Packs the used slots to the front, hottest first; returns how many. */
static size_t rank_keys(key_map *m) {
  size_t n = 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slots[i].used) m->slots[n++] = m->slots[i];
  qsort(m->slots, n, sizeof *m->slots, by_count_then_key);
  return n;
}

size_t wl_trace_hot_keys(const wl_trace *t, size_t n, ps_key *out) {
  key_map m = {0};
  size_t found = 0;
  if (count_keys(t, &m, NULL)) {
    size_t k = rank_keys(&m);
    found = k < n ? k : n;
    for (size_t i = 0; i < found; i++) out[i] = m.slots[i].key;
  }
  free(m.slots);
  return found;
}

/* ------------------------------------------------------------------- fit */

double wl_trace_fit_zipf(const uint64_t *counts, uint64_t n, uint64_t *ranks_used) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  uint64_t used = 0;
  for (uint64_t r = 0; r < n && counts[r] >= WL_TRACE_FIT_MIN_COUNT; r++) {
    double w = 1.0 / (double)(r + 1), x = log((double)(r + 1)), y = log((double)counts[r]);
    sw += w;
    sx += w * x;
    sy += w * y;
    sxx += w * x * x;
    sxy += w * x * y;
    used++;
  }
  if (ranks_used) *ranks_used = used;
  double det = sw * sxx - sx * sx;
  if (used < 3 || !(det > 0)) return NAN;
  return -(sw * sxy - sx * sy) / det;
}

/* ------------------------------------------------------------- locality */

static double locality(const wl_trace *t, uint32_t nodes, uint64_t accesses, bool *ok) {
  ps_layout l = {0};
  wl_trace_tables(t, &l);
  l.num_nodes = nodes;
  l.partition = PS_PARTITION_RANGE;
  uint32_t workers = wl_trace_workers(t);
  ps_key *keys = malloc(wl_trace_max_record_keys(t) * sizeof *keys);
  *ok = keys != NULL;
  uint64_t local = 0;
  for (uint32_t w = 0; *ok && w < workers; w++) {
    uint32_t node = (uint32_t)((uint64_t)w * nodes / workers);
    wl_trace_cursor c;
    wl_trace_record r;
    wl_trace_cursor_init(&c, t, w);
    while (wl_trace_next(&c, &r, keys))
      for (size_t i = 0; i < r.n; i++) local += ps_layout_home(&l, keys[i]) == node;
  }
  free(keys);
  return accesses ? (double)local / (double)accesses : 0;
}

/* ---------------------------------------------------------------- reuse */

typedef struct {
  uint64_t *tree; /* Fenwick tree over touch indices 1..n */
  size_t n;
} fenwick;

static void fen_add(fenwick *f, size_t i, int64_t d) {
  for (; i <= f->n; i += i & (~i + 1)) f->tree[i] += (uint64_t)d;
}

static uint64_t fen_sum(const fenwick *f, size_t i) { /* marks at 1..i */
  uint64_t s = 0;
  for (; i > 0; i -= i & (~i + 1)) s += f->tree[i];
  return s;
}

typedef struct {
  uint64_t *v;
  size_t n, cap;
} u64_list;

static bool list_add(u64_list *l, uint64_t x) {
  uint64_t *p = wl_grow(l->v, &l->cap, l->n + 1, sizeof *p);
  if (!p) return false;
  l->v = p;
  l->v[l->n++] = x;
  return true;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* A worker's steps' distinct keys, one step after another, into *touches. */
static bool worker_touches(const wl_trace *t, uint32_t w, ps_key *keys, u64_list *touches) {
  wl_trace_cursor c;
  wl_trace_record r = {0};
  wl_trace_cursor_init(&c, t, w);
  touches->n = 0;
  size_t step_start = 0;
  int64_t clock = -1;
  bool more = true;
  while (more) {
    more = wl_trace_next(&c, &r, keys);
    if (!more || r.clock != clock) { /* the step ends: keep its keys once */
      size_t n = touches->n - step_start;
      if (n > 1) qsort(touches->v + step_start, n, sizeof *touches->v, cmp_u64);
      size_t k = 0;
      for (size_t i = 0; i < n; i++)
        if (i == 0 || touches->v[step_start + i] != touches->v[step_start + i - 1])
          touches->v[step_start + k++] = touches->v[step_start + i];
      touches->n = step_start + k;
      step_start = touches->n;
      clock = r.clock;
    }
    for (size_t i = 0; more && i < r.n; i++)
      if (!list_add(touches, keys[i])) return false;
  }
  return true;
}

static bool reuse(const wl_trace *t, wl_trace_stats *s) {
  ps_key *keys = malloc(wl_trace_max_record_keys(t) * sizeof *keys);
  u64_list touches = {0}, dist = {0};
  fenwick f = {0};
  bool ok = keys != NULL;
  for (uint32_t w = 0; ok && w < wl_trace_workers(t); w++) {
    if (!(ok = worker_touches(t, w, keys, &touches))) break;
    free(f.tree);
    f.n = touches.n;
    if (!(f.tree = calloc(f.n + 1, sizeof *f.tree))) {
      ok = false;
      break;
    }
    key_map last = {0};
    for (size_t i = 1; ok && i <= touches.n; i++) {
      key_slot *slot = map_get(&last, touches.v[i - 1]);
      if (!slot) {
        ok = false;
        break;
      }
      if (slot->value) { /* touched before, at slot->value */
        ok = list_add(&dist, fen_sum(&f, i - 1) - fen_sum(&f, (size_t)slot->value));
        fen_add(&f, (size_t)slot->value, -1);
      } else {
        s->cold++;
      }
      fen_add(&f, i, 1);
      slot->value = i;
    }
    free(last.slots);
  }
  if (ok && dist.n) {
    qsort(dist.v, dist.n, sizeof *dist.v, cmp_u64);
    uint64_t *p[3] = {&s->reuse_p50, &s->reuse_p90, &s->reuse_p99};
    const double q[3] = {0.5, 0.9, 0.99};
    for (int i = 0; i < 3; i++) { /* nearest rank: the ceil(q * n)-th smallest */
      size_t rank = (size_t)ceil(q[i] * (double)dist.n);
      *p[i] = dist.v[(rank ? rank : 1) - 1];
    }
  }
  s->reuses = dist.n;
  free(keys);
  free(touches.v);
  free(dist.v);
  free(f.tree);
  return ok;
}

/* ---------------------------------------------------------------- stats */

int wl_trace_stats_compute(const wl_trace *t, uint32_t nodes, wl_trace_stats *out) {
  memset(out, 0, sizeof *out);
  out->workers = wl_trace_workers(t);
  out->nodes = nodes ? nodes : wl_trace_nodes(t);
  ps_layout l = {0};
  wl_trace_tables(t, &l);
  out->table_keys = ps_layout_num_keys(&l);
  for (uint32_t w = 0; w < out->workers; w++) out->steps += wl_trace_steps(t, w);
  key_map m = {0};
  uint64_t by_op[3] = {0, 0, 0};
  if (!count_keys(t, &m, by_op)) {
    free(m.slots);
    return PS_ERR_NOMEM;
  }
  out->reads = by_op[WL_TRACE_READ];
  out->writes = by_op[WL_TRACE_WRITE];
  out->samples = by_op[WL_TRACE_SAMPLE];
  out->accesses = out->reads + out->writes + out->samples;
  size_t n = rank_keys(&m);
  out->keys = n;
  out->rank_counts = malloc((n ? n : 1) * sizeof *out->rank_counts);
  if (!out->rank_counts) {
    free(m.slots);
    return PS_ERR_NOMEM;
  }
  for (size_t i = 0; i < n; i++) out->rank_counts[i] = m.slots[i].value;
  free(m.slots);
  const double top[3] = {0.001, 0.01, 0.1};
  for (int i = 0; i < 3 && n; i++) {
    size_t k = (size_t)ceil(top[i] * (double)n);
    uint64_t sum = 0;
    if (k < 1) k = 1;
    for (size_t r = 0; r < k; r++) sum += out->rank_counts[r];
    out->top_share[i] = (double)sum / (double)out->accesses;
  }
  out->zipf_skew = wl_trace_fit_zipf(out->rank_counts, n, &out->zipf_ranks);
  bool ok;
  out->locality = locality(t, out->nodes, out->accesses, &ok);
  if (ok) ok = reuse(t, out);
  if (!ok) {
    wl_trace_stats_free(out);
    return PS_ERR_NOMEM;
  }
  return PS_OK;
}

void wl_trace_stats_free(wl_trace_stats *s) {
  free(s->rank_counts);
  s->rank_counts = NULL;
}
