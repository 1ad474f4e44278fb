/*
 * The worker loop, written once for every backend.
 *
 * For step i the driver signals the intent of step i + lookahead (its reads
 * and writes, for the clock window [c + lookahead, c + lookahead + 1) where c
 * is the current clock; the first `lookahead` steps are signalled before the
 * loop), pulls step i's reads and waits for them, charges its compute, pushes
 * +1.0 to every float of its writes and advances the clock. Pushes overlap
 * the next step: at most one is outstanding, and the driver waits for it
 * before the next push, at each epoch's end and at the end of the run, so an
 * epoch's recorded end time covers all of its writes.
 *
 * Steps drawn ahead wait in a ring of lookahead + 1 entries; their key arrays
 * live in the stream, which is asked to keep lookahead + 2 steps valid (the
 * last one for the push still in flight). Buffers grow to the largest step
 * seen and are reused, so a step allocates nothing after the first few.
 *
 * Samples go through the backend's sampling callbacks (the policies' sampling
 * management): a step's samples are prepared while the step before runs
 * (with lookahead 0, or for the first step, when it starts), pulled after
 * its reads, and pushed with its writes in one push.
 */
#include "workloads/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  ps_worker *w;
  wl_stream *s;
  const wl_driver_env *env;
  const ps_layout *layout;
  uint32_t lookahead;
  wl_step *ahead;  /* drawn, not yet run: ring of lookahead + 1 */
  size_t ahead_head, ahead_count;
  bool exhausted;  /* the stream has no more steps */
  float *pull_buf; /* values of the current pull */
  size_t pull_cap;
  float *ones;     /* push values: all 1.0 */
  size_t ones_cap;
  ps_key *union_buf; /* reads then writes, when they are separate arrays */
  size_t union_cap;
  ps_key *push_keys; /* writes then samples */
  size_t push_keys_cap;
  ps_key *sample_keys;
  size_t sample_keys_cap;
  float *sample_vals;
  size_t sample_vals_cap;
  uint32_t max_value_len; /* over the layout's tables */
  bool sample_prepared;   /* sample_handle names the current step's samples */
  uint64_t sample_handle;
  bool push_pending;
  size_t last_push_floats; /* floats of the step's push */
  ps_ticket push_ticket;
  uint64_t steps_per_epoch;
  size_t epochs_cap;
} drive_state;

/* ------------------------------------------------------------- buffers */

/* Returns buf grown (doubling) to hold `need` elements of `size` bytes and
 * updates *cap; NULL on no memory, buf then unchanged. */
static void *grow(void *buf, size_t *cap, size_t need, size_t size) {
  if (need <= *cap && *cap) return buf;
  size_t n = *cap ? *cap : 64;
  while (n < need) {
    if (n > SIZE_MAX / 2 / size) return NULL;
    n *= 2;
  }
  void *p = realloc(buf, n * size);
  if (p) *cap = n;
  return p;
}

static int grow_floats(float **buf, size_t *cap, size_t need) {
  float *p = grow(*buf, cap, need, sizeof *p);
  if (!p) return PS_ERR_NOMEM;
  *buf = p;
  return PS_OK;
}

static int grow_ones(drive_state *d, size_t need) {
  size_t old = d->ones_cap;
  int rc = grow_floats(&d->ones, &d->ones_cap, need);
  for (size_t i = old; i < d->ones_cap; i++) d->ones[i] = 1.0f;
  return rc;
}

/* Floats the keys' values take, or 0 with *rc set if a key is in no table. */
static size_t value_floats(const drive_state *d, const ps_key *keys, size_t n,
                           int *rc) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(d->layout, keys[i]);
    if (len == 0) {
      *rc = PS_ERR_KEY_RANGE;
      return 0;
    }
    total += len;
  }
  *rc = PS_OK;
  return total;
}

static double now(const drive_state *d) { return d->env->now(d->env->ctx); }

static int wait_ticket(drive_state *d, ps_ticket t) {
  if (ps_worker_done(d->w, t)) return PS_OK;
  return d->env->wait(d->env->ctx, d->w, t);
}

static int wait_push(drive_state *d) {
  if (!d->push_pending) return PS_OK;
  d->push_pending = false;
  return wait_ticket(d, d->push_ticket);
}

/* ------------------------------------------------------------ look-ahead */

/* Signals that `st` runs `ahead` clocks from now: its reads and writes. */
static int signal_intent(drive_state *d, const wl_step *st, int64_t ahead) {
  const ps_key *keys = st->reads;
  size_t n = st->n_reads;
  if (st->writes == st->reads) { /* one array: the longer covers both */
    if (st->n_writes > n) n = st->n_writes;
  } else if (n == 0) {
    keys = st->writes;
    n = st->n_writes;
  } else if (st->n_writes > 0) { /* duplicates are allowed: concatenate */
    ps_key *u = grow(d->union_buf, &d->union_cap, n + st->n_writes,
                     sizeof *u);
    if (!u) return PS_ERR_NOMEM;
    d->union_buf = u;
    memcpy(d->union_buf, st->reads, n * sizeof(ps_key));
    memcpy(d->union_buf + n, st->writes, st->n_writes * sizeof(ps_key));
    keys = d->union_buf;
    n += st->n_writes;
  }
  if (n == 0) return PS_OK;
  int64_t c = ps_worker_clock(d->w) + ahead;
  int rc = ps_intent(d->w, keys, n, c, c + 1, now(d));
  return rc < 0 ? rc : PS_OK;
}

/* Draws one more step into the ring and signals it `ahead` clocks away
 * (no signal without lookahead). */
static int draw_ahead(drive_state *d, int64_t ahead) {
  if (d->exhausted) return PS_OK;
  size_t cap = (size_t)d->lookahead + 1;
  wl_step *st = &d->ahead[(d->ahead_head + d->ahead_count) % cap];
  if (!wl_next_step(d->s, st)) {
    d->exhausted = true;
    return PS_OK;
  }
  d->ahead_count++;
  return d->lookahead ? signal_intent(d, st, ahead) : PS_OK;
}

/* ------------------------------------------------------------- one step */

static int pull_reads(drive_state *d, const wl_step *st) {
  if (st->n_reads == 0) return PS_OK;
  int rc;
  size_t floats = value_floats(d, st->reads, st->n_reads, &rc);
  if (rc == PS_OK)
    rc = grow_floats(&d->pull_buf, &d->pull_cap, floats);
  if (rc != PS_OK) return rc;
  ps_ticket t;
  rc = ps_pull(d->w, st->reads, st->n_reads, d->pull_buf, floats, &t, now(d));
  if (rc == PS_PENDING) rc = wait_ticket(d, t);
  return rc < 0 ? rc : PS_OK;
}

static int prepare_samples(drive_state *d, size_t n) {
  if (!d->env->sample_prepare || !d->env->sample_pull) return PS_ERR_INVAL;
  int rc = d->env->sample_prepare(d->env->sample_ctx, n, &d->sample_handle, now(d));
  if (rc < 0) return rc;
  d->sample_prepared = true;
  return PS_OK;
}

/* Pulls st's samples into sample_keys (preparing them first if the step
 * before could not), then prepares the next step's. */
static int pull_samples(drive_state *d, const wl_step *st, const wl_step *next) {
  int rc = PS_OK;
  if (st->n_samples) {
    if (!d->sample_prepared && (rc = prepare_samples(d, st->n_samples)) != PS_OK) return rc;
    size_t n = st->n_samples, floats = n * d->max_value_len;
    ps_key *k = grow(d->sample_keys, &d->sample_keys_cap, n, sizeof *k);
    if (!k) return PS_ERR_NOMEM;
    d->sample_keys = k;
    if ((rc = grow_floats(&d->sample_vals, &d->sample_vals_cap, floats)) != PS_OK) return rc;
    ps_ticket t;
    d->sample_prepared = false;
    rc = d->env->sample_pull(d->env->sample_ctx, d->sample_handle, d->sample_keys, n,
                             d->sample_vals, floats, &t, now(d));
    if (rc == PS_PENDING) rc = wait_ticket(d, t);
    if (rc < 0) return rc;
  }
  if (next && next->n_samples) rc = prepare_samples(d, next->n_samples);
  return rc;
}

/* Pushes +1.0 to the step's writes and samples. */
static int push_writes(drive_state *d, const wl_step *st) {
  const ps_key *keys = st->writes;
  size_t n = st->n_writes;
  if (st->n_samples) {
    ps_key *u = grow(d->push_keys, &d->push_keys_cap, n + st->n_samples, sizeof *u);
    if (!u) return PS_ERR_NOMEM;
    d->push_keys = u;
    memcpy(u, st->writes, n * sizeof *u);
    memcpy(u + n, d->sample_keys, st->n_samples * sizeof *u);
    keys = u;
    n += st->n_samples;
  }
  if (n == 0) return PS_OK;
  int rc;
  size_t floats = value_floats(d, keys, n, &rc);
  if (rc == PS_OK) rc = grow_ones(d, floats);
  if (rc != PS_OK) return rc;
  if ((rc = wait_push(d)) != PS_OK) return rc; /* at most one push in flight */
  d->last_push_floats = floats;
  ps_ticket t;
  rc = ps_push(d->w, keys, n, d->ones, floats, &t, now(d));
  if (rc == PS_PENDING) {
    d->push_pending = true;
    d->push_ticket = t;
  }
  return rc < 0 ? rc : PS_OK;
}

static int record_epoch(drive_state *d, wl_driver_stats *stats) {
  int rc = wait_push(d);
  if (rc != PS_OK) return rc;
  double *ends = grow(stats->epoch_end_s, &d->epochs_cap, stats->epochs + 1,
                      sizeof *ends);
  if (!ends) return PS_ERR_NOMEM;
  stats->epoch_end_s = ends;
  stats->epoch_end_s[stats->epochs++] = now(d);
  return PS_OK;
}

static int run_step(drive_state *d, const wl_step *st, const wl_step *next,
                    wl_driver_stats *stats) {
  int rc = pull_reads(d, st);
  if (rc == PS_OK) rc = pull_samples(d, st, next);
  if (rc != PS_OK) return rc;
  d->env->compute(d->env->ctx, st->flops);
  rc = push_writes(d, st);
  if (rc != PS_OK) return rc;
  ps_advance_clock(d->w);
  stats->steps++;
  stats->accesses += st->n_reads + st->n_writes + 2 * st->n_samples;
  stats->samples += st->n_samples;
  stats->pushes += st->n_writes + st->n_samples;
  stats->pushed_floats += st->n_writes + st->n_samples ? d->last_push_floats : 0;
  if (d->steps_per_epoch && stats->steps % d->steps_per_epoch == 0)
    return record_epoch(d, stats);
  return PS_OK;
}

/* -------------------------------------------------------------- the loop */

static int drive_init(drive_state *d, ps_worker *w, wl_stream *s,
                      const wl_driver_env *env, uint32_t lookahead) {
  memset(d, 0, sizeof *d);
  d->w = w;
  d->s = s;
  d->env = env;
  d->layout = ps_node_layout(ps_worker_node(w));
  d->lookahead = lookahead;
  d->steps_per_epoch = wl_steps_per_epoch(s->wl);
  for (uint32_t t = 0; t < d->layout->num_tables; t++)
    if (d->layout->tables[t].value_len > d->max_value_len)
      d->max_value_len = d->layout->tables[t].value_len;
  if (lookahead > PS_MAX_LOOKAHEAD) return PS_ERR_INVAL;
  int rc = wl_stream_keep(s, (size_t)lookahead + 2);
  if (rc != PS_OK) return rc;
  d->ahead = malloc(((size_t)lookahead + 1) * sizeof *d->ahead);
  return d->ahead ? PS_OK : PS_ERR_NOMEM;
}

static void drive_free(drive_state *d) {
  free(d->ahead);
  free(d->pull_buf);
  free(d->ones);
  free(d->union_buf);
  free(d->push_keys);
  free(d->sample_keys);
  free(d->sample_vals);
}

static int drive_loop(drive_state *d, wl_driver_stats *stats) {
  for (uint32_t j = 0; j < d->lookahead; j++) {
    int rc = draw_ahead(d, (int64_t)j);
    if (rc != PS_OK) return rc;
  }
  size_t cap = (size_t)d->lookahead + 1;
  for (;;) {
    int rc = draw_ahead(d, (int64_t)d->lookahead);
    if (rc != PS_OK) return rc;
    if (d->ahead_count == 0) break;
    const wl_step *st = &d->ahead[d->ahead_head];
    d->ahead_head = (d->ahead_head + 1) % cap;
    d->ahead_count--;
    rc = run_step(d, st, d->ahead_count ? &d->ahead[d->ahead_head] : NULL, stats);
    if (rc != PS_OK) return rc;
  }
  return wait_push(d);
}

int wl_drive(ps_worker *w, wl_stream *s, const wl_driver_env *env,
             uint32_t lookahead, wl_driver_stats *stats) {
  memset(stats, 0, sizeof *stats);
  drive_state d;
  int rc = drive_init(&d, w, s, env, lookahead);
  stats->start_s = env->now(env->ctx);
  if (rc == PS_OK) rc = drive_loop(&d, stats);
  stats->end_s = env->now(env->ctx);
  if (stats->samples && env->sample_stats)
    env->sample_stats(env->sample_ctx, &stats->sample_tv_distance, &stats->sample_reuse_factor);
  drive_free(&d);
  return rc;
}
