/*
 * The replica check: once a run is quiet, every all-reduce replica must
 * equal its owner's value, up to the float rounding of deltas summed in a
 * different order on each node. value_sum sums owned copies only, so a
 * replica that counted a delta twice (or missed one) passes it; this check
 * does not. Replicas synced through their owner are not compared: they hold
 * the owner's value as of their last sync plus their own deltas, so they
 * differ from the owner's final value by design.
 *
 * The owners' values travel as bytes (run_replica_owned) because on the
 * real backend owner and replica live in different processes: every node's
 * bytes, concatenated, reach every node, which compares its replicas
 * (run_replica_check) and puts the result in its report.
 */
#include "run/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RECORD_HEAD (sizeof(ps_key) + sizeof(uint32_t))

void run_bytes_put(run_bytes *b, ps_key k, const float *value, uint32_t len) {
  if (b->oom) return;
  size_t need = b->len + RECORD_HEAD + (size_t)len * sizeof(float);
  if (need > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *buf = realloc(b->buf, cap);
    if (!buf) {
      b->oom = true;
      return;
    }
    b->buf = buf;
    b->cap = cap;
  }
  uint8_t *p = b->buf + b->len;
  memcpy(p, &k, sizeof k);
  memcpy(p + sizeof k, &len, sizeof len);
  if (value) memcpy(p + RECORD_HEAD, value, (size_t)len * sizeof(float));
  else memset(p + RECORD_HEAD, 0, (size_t)len * sizeof(float));
  b->len = need;
}

static void put_owned(void *ctx, ps_key k, const float *value, uint32_t len, bool owned) {
  if (owned) run_bytes_put(ctx, k, value, len);
}

int run_replica_owned(ps_node *core, uint8_t **buf, size_t *len) {
  run_bytes b = {0};
  ps_node_each_replicated(core, put_owned, &b);
  if (b.oom) {
    free(b.buf);
    *buf = NULL;
    *len = 0;
    return PS_ERR_NOMEM;
  }
  *buf = b.buf;
  *len = b.len;
  return PS_OK;
}

typedef run_record owner_record;

typedef struct {
  const uint8_t *bytes;
  owner_record *recs;
  size_t n;
  double max_diff;
  uint64_t checked;
} check_ctx;

static int cmp_record(const void *a, const void *b) {
  ps_key x = ((const owner_record *)a)->key, y = ((const owner_record *)b)->key;
  return x < y ? -1 : x > y;
}

/* |replica - owner| at its largest, over the larger of the two values' own
 * largest magnitudes (0 when both are zero). */
static double relative_diff(const float *replica, const uint8_t *owner, uint32_t len) {
  double diff = 0, scale = 0;
  for (uint32_t j = 0; j < len; j++) {
    float o;
    memcpy(&o, owner + (size_t)j * sizeof o, sizeof o);
    double r = replica ? replica[j] : 0;
    diff = fmax(diff, fabs(r - o));
    scale = fmax(scale, fmax(fabs(r), fabs((double)o)));
  }
  return scale > 0 ? diff / scale : 0;
}

static void compare_one(void *ctx, ps_key k, const float *value, uint32_t len, bool owned) {
  check_ctx *c = ctx;
  if (owned) return;
  owner_record want = {.key = k};
  const owner_record *r = c->n ? bsearch(&want, c->recs, c->n, sizeof *r, cmp_record) : NULL;
  if (!r || r->len != len) return; /* synced through the owner: not comparable */
  c->max_diff = fmax(c->max_diff, relative_diff(value, c->bytes + r->at, len));
  c->checked++;
}

int run_bytes_records(const uint8_t *bytes, size_t len, run_record **recs, size_t *n) {
  size_t cap = 0;
  *recs = NULL;
  *n = 0;
  for (size_t at = 0; at < len;) {
    if (len - at < RECORD_HEAD) return PS_ERR_INVAL;
    run_record r;
    memcpy(&r.key, bytes + at, sizeof r.key);
    memcpy(&r.len, bytes + at + sizeof r.key, sizeof r.len);
    r.at = at + RECORD_HEAD;
    if ((len - r.at) / sizeof(float) < r.len) return PS_ERR_INVAL;
    if (*n == cap) {
      cap = cap ? 2 * cap : 256;
      run_record *grown = realloc(*recs, cap * sizeof *grown);
      if (!grown) return PS_ERR_NOMEM;
      *recs = grown;
    }
    (*recs)[(*n)++] = r;
    at = r.at + (size_t)r.len * sizeof(float);
  }
  return PS_OK;
}

int run_replica_check(run_node_report *rep, ps_node *core, const uint8_t *owned, size_t len) {
  check_ctx c = {.bytes = owned};
  int rc = run_bytes_records(owned, len, &c.recs, &c.n);
  if (rc == PS_OK) {
    if (c.n) qsort(c.recs, c.n, sizeof *c.recs, cmp_record);
    ps_node_each_replicated(core, compare_one, &c);
    rep->replica_max_diff = c.max_diff;
    rep->replicas_checked = c.checked;
  }
  free(c.recs);
  return rc;
}
