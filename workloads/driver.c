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
 *
 * Real math (wl_math): the pulled values get their initial values added,
 * the workload's math turns them into the deltas the push carries, and the
 * step's loss adds to its epoch's. At an epoch's end (after its last push
 * completed), and every eval_every steps between (wl_eval_steps), the worker
 * pulls the keys of its share of the held-out data and evaluates them; the
 * time that takes is left out of the recorded times (epoch ends and
 * evaluation points), so they are training times.
 */
#include "workloads/internal.h"

#include <math.h>
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
  const ps_key *to_push; /* the step's push: n_push keys, push_floats floats */
  size_t n_push, push_floats;
  double pushed_sum;     /* every float pushed so far, summed */
  ps_key *sample_keys;
  size_t sample_keys_cap;
  float *sample_vals;
  size_t sample_vals_cap;
  uint32_t max_value_len; /* over the layout's tables */
  bool sample_prepared;   /* sample_handle names the current step's samples */
  uint64_t initial_floats; /* real math: floats given initial values this step */
  double op_wait_s;        /* waiting for the steps' pulls and pushes */
  bool evaluating;         /* in evaluate(): its waits are not a step's */
  uint64_t eval_keys_read, eval_replica_keys; /* evaluations' reads; by replicas */
  uint64_t sample_handle;
  bool push_pending;
  size_t last_push_floats; /* floats of the step's push */
  ps_ticket push_ticket;
  uint64_t steps_per_epoch;
  uint64_t eval_steps;     /* evaluate every this many steps too (0: never) */
  size_t epochs_cap, evals_cap;
  /* real math */
  const wl_workload *wl;
  bool math;
  float *deltas;     /* the push: writes' deltas, then the samples' */
  size_t deltas_cap;
  size_t *read_off, *write_off, *sample_off;
  size_t read_off_cap, write_off_cap, sample_off_cap;
  wl_epoch_quality epoch; /* the current epoch's, so far */
  size_t quality_cap;
  bool quality;      /* the worker evaluates held-out data */
  ps_key *eval_keys; /* its share's keys, pulled at each epoch's end */
  size_t n_eval;
  float *eval_vals;
  size_t *eval_off;
  size_t eval_floats;
} drive_state;

/* ------------------------------------------------------------- buffers */

#define grow wl_grow

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

/* Where each key's value starts in the keys' concatenated values, into
 * *off (grown to n), and the floats in all. PS_OK, PS_ERR_KEY_RANGE or
 * PS_ERR_NOMEM. */
static int value_offsets(const drive_state *d, const ps_key *keys, size_t n, size_t **off,
                         size_t *cap, size_t *floats) {
  size_t *o = grow(*off, cap, n ? n : 1, sizeof *o);
  if (!o) return PS_ERR_NOMEM;
  *off = o;
  size_t total = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(d->layout, keys[i]);
    if (len == 0) return PS_ERR_KEY_RANGE;
    o[i] = total;
    total += len;
  }
  *floats = total;
  return PS_OK;
}

/* Adds the keys' initial values to their pulled values. */
/* Adds the keys' initial values to the pulled values; counts the floats
 * toward the step's (initial_floats). */
static void add_initial(drive_state *d, const ps_key *keys, size_t n, float *vals,
                        const size_t *off) {
  for (size_t i = 0; i < n; i++) {
    uint32_t len = ps_layout_value_len(d->layout, keys[i]);
    wl_add_initial(d->wl, keys[i], vals + off[i], len);
    d->initial_floats += len;
  }
}

static double now(const drive_state *d) { return d->env->now(d->env->ctx); }

/* Waits for ticket t; a step's wait (not evaluation's) counts toward
 * op_wait_s. */
static int wait_ticket(drive_state *d, ps_ticket t) {
  if (ps_worker_done(d->w, t)) return PS_OK;
  double t0 = now(d);
  int rc = d->env->wait(d->env->ctx, d->w, t);
  if (!d->evaluating) d->op_wait_s += now(d) - t0;
  return rc;
}

static int wait_push(drive_state *d) {
  if (!d->push_pending) return PS_OK;
  d->push_pending = false;
  return wait_ticket(d, d->push_ticket);
}

/* ------------------------------------------------------------ look-ahead */

/* The keys a step touches, reads then writes (duplicates allowed), into
 * *keys (the step's own array, or the union buffer) and *count. */
static int step_keys(drive_state *d, const wl_step *st, const ps_key **out, size_t *count) {
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
  *out = keys;
  *count = n;
  return PS_OK;
}

/* Signals that `st` runs `ahead` clocks from now: its reads and writes. */
static int signal_intent(drive_state *d, const wl_step *st, int64_t ahead) {
  const ps_key *keys;
  size_t n;
  int rc = step_keys(d, st, &keys, &n);
  if (rc != PS_OK || n == 0) return rc;
  int64_t c = ps_worker_clock(d->w) + ahead;
  rc = ps_intent(d->w, keys, n, c, c + 1, now(d));
  return rc < 0 ? rc : PS_OK;
}

/* ---------------------------------------------------------- consistency */

static bool bounded(const drive_state *d) {
  return d->env->consistency.model != PS_CONSISTENCY_ASYNC;
}

/* BSP (staleness 0, but sparse): each clock is a superstep, whose reads all
 * come before any of its writes. */
static bool superstep(const drive_state *d) {
  const ps_consistency *c = &d->env->consistency;
  return (c->model == PS_CONSISTENCY_SSP || c->model == PS_CONSISTENCY_ESSP) &&
         c->staleness == 0;
}

/* BSP: says this worker's reads of its clock are done and waits until
 * every worker's are, so no write of the clock reaches a read of it. */
static int reads_barrier(drive_state *d, wl_driver_stats *stats) {
  double t0 = now(d);
  int rc = ps_end_reads(d->w, t0);
  ps_ticket t;
  if (rc == PS_OK) rc = ps_reads_wait(d->w, &t, t0);
  if (rc != PS_PENDING) return rc;
  rc = wait_ticket(d, t);
  stats->wait_s += now(d) - t0;
  return rc;
}

/* Under a bounded model: waits until the run's clock lets step st start
 * (SPARSE: or its keys are clear of every node that holds it back), and
 * counts the gap and the time blocked. */
static int clock_gate(drive_state *d, const wl_step *st, wl_driver_stats *stats) {
  const ps_consistency *cons = &d->env->consistency;
  int64_t c = ps_worker_clock(d->w);
  int64_t gap = c - ps_node_min_clock(ps_worker_node(d->w));
  if (gap < 0) gap = 0;
  stats->gap_hist[gap < PS_CLOCK_BUCKETS - 1 ? gap : PS_CLOCK_BUCKETS - 1]++;
  const ps_key *keys = NULL;
  size_t n = 0;
  if (cons->model == PS_CONSISTENCY_SPARSE) {
    int rc = step_keys(d, st, &keys, &n);
    if (rc != PS_OK) return rc;
  }
  double t0 = now(d);
  ps_ticket t;
  int rc = ps_clock_wait(d->w, c - (int64_t)cons->staleness, keys, n, &t, t0);
  if (rc != PS_PENDING) return rc;
  stats->clock_waits++;
  rc = wait_ticket(d, t);
  stats->wait_s += now(d) - t0;
  return rc;
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
  if (rc < 0) return rc;
  if (!d->math) return PS_OK;
  if ((rc = value_offsets(d, st->reads, st->n_reads, &d->read_off, &d->read_off_cap,
                          &floats)) != PS_OK)
    return rc;
  add_initial(d, st->reads, st->n_reads, d->pull_buf, d->read_off);
  return PS_OK;
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
    if (d->math) {
      if ((rc = value_offsets(d, d->sample_keys, n, &d->sample_off, &d->sample_off_cap,
                              &floats)) != PS_OK)
        return rc;
      add_initial(d, d->sample_keys, n, d->sample_vals, d->sample_off);
    }
  }
  if (next && next->n_samples) rc = prepare_samples(d, next->n_samples);
  return rc;
}

/* Runs the step's math: the deltas of its writes, then of its samples,
 * into d->deltas (floats of them), and its loss into the epoch's. */
static int run_math(drive_state *d, const wl_step *st, size_t floats) {
  int rc = grow_floats(&d->deltas, &d->deltas_cap, floats ? floats : 1);
  size_t write_floats = 0;
  if (rc == PS_OK)
    rc = value_offsets(d, st->writes, st->n_writes, &d->write_off, &d->write_off_cap,
                       &write_floats);
  if (rc != PS_OK) return rc;
  memset(d->deltas, 0, floats * sizeof *d->deltas);
  wl_math_io io = {
      .reads = d->pull_buf, .read_off = d->read_off,
      .samples = d->sample_keys, .sample_vals = d->sample_vals,
      .sample_off = d->sample_off, .n_samples = st->n_samples,
      .write_deltas = d->deltas, .write_off = d->write_off,
      .sample_deltas = d->deltas + write_floats,
  };
  rc = d->wl->type->math(d->s->impl, st, &io);
  if (rc < 0) return rc;
  d->epoch.loss += io.loss;
  d->epoch.examples += io.examples;
  return PS_OK;
}

/* Gathers the step's push: its writes, then its samples, into d->to_push
 * (n_push keys, push_floats floats), with the values it carries: +1.0 to
 * every float, or with real math the deltas its math computes. */
static int prepare_push(drive_state *d, const wl_step *st) {
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
  d->to_push = keys;
  d->n_push = n;
  d->push_floats = 0;
  if (n == 0) return PS_OK;
  int rc;
  d->push_floats = value_floats(d, keys, n, &rc);
  if (rc == PS_OK) rc = d->math ? run_math(d, st, d->push_floats) : grow_ones(d, d->push_floats);
  return rc;
}

/* Pushes what prepare_push gathered; at most one push is in flight. */
static int push_writes(drive_state *d) {
  if (d->n_push == 0) return PS_OK;
  int rc = wait_push(d);
  if (rc != PS_OK) return rc;
  d->last_push_floats = d->push_floats;
  const float *vals = d->math ? d->deltas : d->ones;
  for (size_t i = 0; d->math && i < d->push_floats; i++) d->pushed_sum += vals[i];
  ps_ticket t;
  rc = ps_push(d->w, d->to_push, d->n_push, vals, d->push_floats, &t, now(d));
  if (rc == PS_PENDING) {
    d->push_pending = true;
    d->push_ticket = t;
  }
  return rc < 0 ? rc : PS_OK;
}

/* Pulls the worker's share of the held-out keys, in operations of at most
 * PS_MAX_OP_KEYS keys. */
static int evaluate_pulls(drive_state *d) {
  for (size_t at = 0; at < d->n_eval;) {
    size_t n = d->n_eval - at < PS_MAX_OP_KEYS ? d->n_eval - at : PS_MAX_OP_KEYS;
    size_t first = d->eval_off[at];
    size_t last = at + n < d->n_eval ? d->eval_off[at + n] : d->eval_floats;
    ps_ticket t;
    int rc = ps_pull(d->w, d->eval_keys + at, n, d->eval_vals + first, last - first, &t,
                     now(d));
    if (rc == PS_PENDING) rc = wait_ticket(d, t);
    if (rc < 0) return rc;
    at += n;
  }
  return PS_OK;
}

/* Pulls the worker's share of the held-out keys (in operations of at most
 * PS_MAX_OP_KEYS keys) and evaluates them into d->epoch. Its waits are not
 * a step's (op_wait_s), nor its initial values (initial_floats). */
static int evaluate(drive_state *d) {
  d->evaluating = true;
  int rc = evaluate_pulls(d);
  d->evaluating = false;
  if (rc < 0) return rc;
  ps_node *node = ps_worker_node(d->w);
  for (size_t i = 0; i < d->n_eval; i++)
    d->eval_replica_keys += ps_node_key_locality(node, d->eval_keys[i]) == PS_KEY_REPLICA;
  d->eval_keys_read += d->n_eval;
  uint64_t step_floats = d->initial_floats;
  add_initial(d, d->eval_keys, d->n_eval, d->eval_vals, d->eval_off);
  d->initial_floats = step_floats;
  wl_eval_in in = {.keys = d->eval_keys, .n = d->n_eval, .vals = d->eval_vals,
                   .off = d->eval_off};
  double num = 0, den = 0;
  rc = d->wl->type->eval(d->wl->impl, d->env->rank, d->env->workers, &in, &num, &den);
  if (rc < 0) return rc;
  d->epoch.q_num = num;
  d->epoch.q_den = den;
  return PS_OK;
}

/* Evaluates the worker's share at `end` (its last push completed) and
 * records the point at its training time; the evaluation's time adds to
 * eval_s. */
static int eval_point(drive_state *d, wl_driver_stats *stats, double end) {
  wl_eval_point *p = grow(stats->evals, &d->evals_cap, stats->n_evals + 1, sizeof *p);
  if (!p) return PS_ERR_NOMEM;
  stats->evals = p;
  int rc = evaluate(d);
  if (rc != PS_OK) return rc;
  p[stats->n_evals++] = (wl_eval_point){.at_s = end - stats->eval_s, .q_num = d->epoch.q_num,
                                        .q_den = d->epoch.q_den};
  stats->eval_s += now(d) - end;
  return PS_OK;
}

/* An evaluation between epoch ends (eval_every). */
static int eval_between(drive_state *d, wl_driver_stats *stats) {
  int rc = wait_push(d);
  return rc == PS_OK ? eval_point(d, stats, now(d)) : rc;
}

static int record_epoch(drive_state *d, wl_driver_stats *stats) {
  int rc = wait_push(d);
  if (rc != PS_OK) return rc;
  double *ends = grow(stats->epoch_end_s, &d->epochs_cap, stats->epochs + 1,
                      sizeof *ends);
  if (!ends) return PS_ERR_NOMEM;
  stats->epoch_end_s = ends;
  double end = now(d);
  stats->epoch_end_s[stats->epochs] = end - stats->eval_s;
  if (d->math) {
    size_t cap = d->quality_cap;
    wl_epoch_quality *q = grow(stats->epoch_quality, &cap, stats->epochs + 1, sizeof *q);
    if (!q) return PS_ERR_NOMEM;
    stats->epoch_quality = q;
    d->quality_cap = cap;
    if (d->quality && (rc = eval_point(d, stats, end)) != PS_OK) return rc;
    q[stats->epochs] = d->epoch;
    d->epoch = (wl_epoch_quality){0};
  }
  stats->epochs++;
  return PS_OK;
}

static int run_step(drive_state *d, const wl_step *st, const wl_step *next,
                    wl_driver_stats *stats) {
  int rc = bounded(d) ? clock_gate(d, st, stats) : PS_OK;
  if (rc == PS_OK) rc = pull_reads(d, st);
  if (rc == PS_OK) rc = pull_samples(d, st, next);
  if (rc != PS_OK) return rc;
  if (d->env->trace_step && (rc = d->env->trace_step(d->env->trace_ctx, ps_worker_clock(d->w),
                                                     st, d->sample_keys, st->n_samples)) < 0)
    return rc;
  if ((rc = prepare_push(d, st)) != PS_OK) return rc; /* real math runs here */
  if (d->math && d->env->initial) d->env->initial(d->env->ctx, d->initial_floats);
  d->initial_floats = 0;
  d->env->compute(d->env->ctx, st->flops, d->math);
  if (superstep(d) && (rc = reads_barrier(d, stats)) != PS_OK) return rc;
  if ((rc = push_writes(d)) != PS_OK) return rc;
  /* The push may still travel: the node says this clock has ended only once
   * it is applied (the core holds the CLOCK back until then). */
  ps_advance_clock(d->w, now(d));
  stats->steps++;
  for (int i = 0; i < 3; i++)
    if (d->env->mark_steps[i] == stats->steps) stats->mark_s[i] = now(d);
  stats->accesses += st->n_reads + st->n_writes + 2 * st->n_samples;
  stats->samples += st->n_samples;
  stats->pushes += st->n_writes + st->n_samples;
  stats->pushed_floats += st->n_writes + st->n_samples ? d->last_push_floats : 0;
  if (d->steps_per_epoch && stats->steps % d->steps_per_epoch == 0)
    return record_epoch(d, stats);
  /* eval_every counts from each epoch's start, so its points fall at the
   * same places in every epoch */
  uint64_t in_epoch = d->steps_per_epoch ? stats->steps % d->steps_per_epoch : stats->steps;
  if (d->quality && d->eval_steps && in_epoch % d->eval_steps == 0)
    return eval_between(d, stats);
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
  int rc0 = ps_worker_set_consistency(w, env->consistency);
  if (rc0 != PS_OK) return rc0;
  d->wl = s->wl;
  d->math = wl_math(s->wl);
  wl_quality q;
  d->quality = d->math && wl_quality_info(s->wl, &q) && env->workers > 0;
  d->eval_steps = d->quality ? wl_eval_steps(s->wl) : 0;
  if (d->quality) {
    if (env->rank >= env->workers) return PS_ERR_INVAL;
    int rc = s->wl->type->eval_keys(s->wl->impl, env->rank, env->workers, &d->eval_keys,
                                    &d->n_eval);
    size_t cap = 0;
    if (rc == PS_OK)
      rc = value_offsets(d, d->eval_keys, d->n_eval, &d->eval_off, &cap, &d->eval_floats);
    if (rc != PS_OK) return rc;
    if (!(d->eval_vals = malloc((d->eval_floats ? d->eval_floats : 1) * sizeof(float))))
      return PS_ERR_NOMEM;
  }
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
  free(d->deltas);
  free(d->read_off);
  free(d->write_off);
  free(d->sample_off);
  free(d->eval_keys);
  free(d->eval_vals);
  free(d->eval_off);
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
  stats->mark_s[0] = stats->mark_s[1] = stats->mark_s[2] = NAN;
  drive_state d;
  int rc = drive_init(&d, w, s, env, lookahead);
  stats->start_s = env->now(env->ctx);
  if (rc == PS_OK) rc = drive_loop(&d, stats);
  stats->end_s = env->now(env->ctx);
  if (stats->samples && env->sample_stats)
    env->sample_stats(env->sample_ctx, &stats->sample_tv_distance, &stats->sample_reuse_factor);
  stats->pushed_sum = d.pushed_sum;
  stats->eval_keys = d.eval_keys_read;
  stats->eval_replica_keys = d.eval_replica_keys;
  stats->op_wait_s = d.op_wait_s;
  drive_free(&d);
  return rc;
}
