/*
 * A node's report: what it says about itself once the run is quiet, in
 * memory and as text.
 *
 * The simulator makes every node's report in one process and reduces them
 * at once; the real backend makes each node's in its own process, sends it
 * as text to rank 0 (run_report_encode), which reads them back
 * (run_report_decode) and reduces them the same way. The text is JSON with
 * every number written with 17 significant digits, which strtod reads back
 * exactly, so both paths give the same figures. (cJSON's own printer is not
 * exact: 1.7.15 keeps 15 digits whenever they come within a relative
 * epsilon, so 2^53 - 1 comes back as 9007199254740990.)
 */
#include "run/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ps_node_stats fields, by name: one list for both directions, so the
 * text and its reading cannot drift apart. */
#define STATS_COUNTS(X)                                                      \
  X(local_accesses) X(remote_accesses) X(messages_sent) X(bytes_sent)        \
  X(messages_received) X(forwards) X(relocations) X(queued) X(bad_messages)  \
  X(duplicates) X(out_of_sequence) X(hop_drops) X(bad_seals)                        \
  X(replica_syncs) X(sync_rounds) X(replica_reads) X(staleness_sum_steps)                  \
  X(staleness_max_steps) X(cache_reads) X(cache_misses) X(bounded_reads)    \
  X(bounded_staleness_sum) X(bounded_staleness_max) X(clock_messages)        \
  X(refreshes) X(shared_accesses) X(shared_floats) X(shared_handled)                 \
  X(shared_handled_floats)
#define STATS_REALS(X) X(staleness_sum_s) X(staleness_max_s)

/* ------------------------------------------------------------ in memory */

/* The node's load as a server and its clients' response times by server. */
static int load_make(run_node_report *r, ps_node *core, const uint64_t *homed) {
  const ps_layout *l = ps_node_layout(core);
  r->server = ps_layout_is_server(l, ps_node_id(core));
  uint64_t *own = NULL;
  if (!homed) {
    if (!(own = malloc(ps_layout_homes(l) * sizeof *own))) return PS_ERR_NOMEM;
    ps_layout_homed_counts(l, own);
  }
  r->owned_keys = ps_node_owned_keys(core, homed ? homed : own);
  free(own);
  ps_node_server_load(core, &r->load);
  r->n_rt = ps_layout_servers(l);
  r->series = malloc(PS_SERIES_MAX * sizeof *r->series);
  r->rt = calloc(r->n_rt, sizeof *r->rt);
  if (!r->series || !r->rt) return PS_ERR_NOMEM;
  r->n_series = ps_node_served_series(core, r->series, PS_SERIES_MAX, &r->bucket_s);
  for (uint32_t s = 0; s < r->n_rt; s++) ps_node_response_times(core, s, &r->rt[s]);
  return PS_OK;
}

int run_report_make(run_node_report *r, ps_node *core, uint32_t n_workers,
                    const uint64_t *homed) {
  *r = (run_node_report){.n_workers = n_workers};
  ps_node_get_stats(core, &r->stats);
  ps_node_owned_sum(core, &r->owned_sum, &r->in_transfer);
  r->workers = calloc(n_workers ? n_workers : 1, sizeof *r->workers);
  if (!r->workers || load_make(r, core, homed) != PS_OK) {
    run_report_free(r);
    return PS_ERR_NOMEM;
  }
  return PS_OK;
}

int run_report_worker(run_node_report *r, const run_worker *rw) {
  if (rw->index >= r->n_workers) return PS_ERR_INVAL;
  const wl_driver_stats *st = &rw->stats;
  run_worker_report *w = &r->workers[rw->index];
  free(w->epoch_end_s);
  free(w->epoch_quality);
  free(w->evals);
  free(w->stages);
  *w = (run_worker_report){.steps = st->steps, .accesses = st->accesses,
                           .pushed_floats = st->pushed_floats, .samples = st->samples,
                           .pushed_sum = st->pushed_sum,
                           .sample_tv_distance = st->sample_tv_distance,
                           .sample_reuse_factor = st->sample_reuse_factor,
                           .start_s = st->start_s, .eval_s = st->eval_s,
                           .half_s = (st->mark_s[0] + st->mark_s[1]) / 2,
                           .last_s = st->mark_s[2],
                           .eval_keys = st->eval_keys,
                           .eval_replica_keys = st->eval_replica_keys,
                           .op_wait_s = st->op_wait_s,
                           .wait_s = st->wait_s, .clock_waits = st->clock_waits};
  memcpy(w->gap_hist, st->gap_hist, sizeof w->gap_hist);
  if (rw->stages && rw->n_stages) {
    if (!(w->stages = malloc(rw->n_stages * sizeof *w->stages))) return PS_ERR_NOMEM;
    memcpy(w->stages, rw->stages, rw->n_stages * sizeof *w->stages);
    w->n_stages = rw->n_stages;
  }
  if (st->n_evals) {
    if (!(w->evals = malloc(st->n_evals * sizeof *w->evals))) return PS_ERR_NOMEM;
    memcpy(w->evals, st->evals, st->n_evals * sizeof *w->evals);
    w->n_evals = st->n_evals;
  }
  if (!st->epochs) return PS_OK;
  if (!(w->epoch_end_s = malloc(st->epochs * sizeof *w->epoch_end_s))) return PS_ERR_NOMEM;
  memcpy(w->epoch_end_s, st->epoch_end_s, st->epochs * sizeof *w->epoch_end_s);
  w->epochs = st->epochs;
  if (!st->epoch_quality) return PS_OK;
  if (!(w->epoch_quality = malloc(st->epochs * sizeof *w->epoch_quality))) return PS_ERR_NOMEM;
  memcpy(w->epoch_quality, st->epoch_quality, st->epochs * sizeof *w->epoch_quality);
  return PS_OK;
}

void run_report_free(run_node_report *r) {
  for (uint32_t i = 0; r->workers && i < r->n_workers; i++) {
    free(r->workers[i].epoch_end_s);
    free(r->workers[i].epoch_quality);
    free(r->workers[i].evals);
    free(r->workers[i].stages);
  }
  free(r->workers);
  free(r->series);
  free(r->rt);
  *r = (run_node_report){0};
}

/* ---------------------------------------------------------------- text */

/* A number as exact JSON text (a non-finite one, which JSON cannot hold, as
 * null: the reader then refuses the report). */
static cJSON *exact(double v) {
  char text[40];
  if (!isfinite(v)) return cJSON_CreateNull();
  snprintf(text, sizeof text, "%.17g", v);
  return cJSON_CreateRaw(text);
}

static bool put(cJSON *o, const char *name, double v) {
  cJSON *n = exact(v);
  if (n && cJSON_AddItemToObject(o, name, n)) return true;
  cJSON_Delete(n);
  return false;
}

static bool append(cJSON *list, double v) {
  cJSON *n = exact(v);
  if (n && cJSON_AddItemToArray(list, n)) return true;
  cJSON_Delete(n);
  return false;
}

void run_thread_sched_add(run_thread_sched *sum, const run_thread_sched *x) {
  sum->turns += x->turns;
  sum->ran_s += x->ran_s;
  sum->wait_s += x->wait_s;
  sum->blocked_s += x->blocked_s;
}

/* A thread's scheduling as [turns, seconds run, seconds waited, seconds
 * blocked]. */
static bool put_sched(cJSON *o, const char *name, const run_thread_sched *t) {
  cJSON *a = cJSON_AddArrayToObject(o, name);
  return a && append(a, t->turns) && append(a, t->ran_s) && append(a, t->wait_s) &&
         append(a, t->blocked_s);
}

/* counts[n] as a list named `name` of o. */
static bool put_counts(cJSON *o, const char *name, const uint64_t *counts, int n) {
  cJSON *list = cJSON_AddArrayToObject(o, name);
  bool ok = list != NULL;
  for (int i = 0; ok && i < n; i++) ok = append(list, (double)counts[i]);
  return ok;
}

static cJSON *stats_to_json(const ps_node_stats *s) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
#define PUT(f) ok = ok && put(o, #f, (double)s->f);
  STATS_COUNTS(PUT)
  STATS_REALS(PUT)
#undef PUT
  ok = ok && put_counts(o, "staleness_hist", s->staleness_hist, PS_STALENESS_BUCKETS) &&
       put_counts(o, "staleness_steps_hist", s->staleness_steps_hist, PS_STALENESS_BUCKETS) &&
       put_counts(o, "bounded_staleness_hist", s->bounded_staleness_hist, PS_CLOCK_BUCKETS);
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static cJSON *worker_to_json(const run_worker_report *w) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o && put(o, "steps", (double)w->steps) && put(o, "accesses", (double)w->accesses) &&
            put(o, "pushed_floats", (double)w->pushed_floats) &&
            put(o, "pushed_sum", w->pushed_sum) &&
            put(o, "samples", (double)w->samples) &&
            put(o, "sample_tv_distance", w->sample_tv_distance) &&
            put(o, "sample_reuse_factor", w->sample_reuse_factor) &&
            put(o, "start_s", w->start_s) && put(o, "wait_s", w->wait_s) &&
            (!isfinite(w->half_s) || put(o, "half_s", w->half_s)) &&
            (!isfinite(w->last_s) || put(o, "last_s", w->last_s)) &&
            put(o, "op_wait_s", w->op_wait_s) &&
            put(o, "clock_waits", (double)w->clock_waits) &&
            put_counts(o, "gap_hist", w->gap_hist, PS_CLOCK_BUCKETS);
  cJSON *ends = ok ? cJSON_AddArrayToObject(o, "epoch_end_s") : NULL;
  for (size_t e = 0; ends && e < w->epochs; e++) ok = ok && append(ends, w->epoch_end_s[e]);
  if (ok && ends && w->epoch_quality) { /* [[loss, examples, q_num, q_den], ...] */
    ok = put(o, "eval_s", w->eval_s) && put(o, "eval_keys", (double)w->eval_keys) &&
         put(o, "eval_replica_keys", (double)w->eval_replica_keys);
    cJSON *qs = ok ? cJSON_AddArrayToObject(o, "epoch_quality") : NULL;
    for (size_t e = 0; qs && ok && e < w->epochs; e++) {
      const wl_epoch_quality *q = &w->epoch_quality[e];
      cJSON *four = cJSON_CreateArray();
      ok = four && cJSON_AddItemToArray(qs, four) && append(four, q->loss) &&
           append(four, q->examples) && append(four, q->q_num) && append(four, q->q_den);
      if (!ok && four && !four->prev) cJSON_Delete(four);
    }
    ok = ok && qs;
  }
  if (ok && ends && w->n_evals) { /* [[at_s, q_num, q_den], ...] */
    cJSON *list = cJSON_AddArrayToObject(o, "evals");
    for (size_t k = 0; list && ok && k < w->n_evals; k++) {
      const wl_eval_point *p = &w->evals[k];
      cJSON *three = cJSON_CreateArray();
      ok = three && cJSON_AddItemToArray(list, three) && append(three, p->at_s) &&
           append(three, p->q_num) && append(three, p->q_den);
      if (!ok && three && !three->prev) cJSON_Delete(three);
    }
    ok = ok && list;
  }
  if (ok && ends && w->n_stages) { /* [[steps, start_s, end_s, wait_s], ...] */
    cJSON *list = cJSON_AddArrayToObject(o, "stages");
    for (size_t k = 0; list && ok && k < w->n_stages; k++) {
      const run_stage_stats *st = &w->stages[k];
      cJSON *four = cJSON_CreateArray();
      ok = four && cJSON_AddItemToArray(list, four) && append(four, (double)st->steps) &&
           append(four, st->start_s) && append(four, st->end_s) && append(four, st->wait_s);
      if (!ok && four && !four->prev) cJSON_Delete(four);
    }
    ok = ok && list;
  }
  if (!ok || !ends) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

#define LOAD_FIELDS(X) X(keys) X(floats) X(handled) X(queue_sum) X(queue_max) X(wakeups)

/* "load": {..., "queue_hist": [...]}, "bucket_s", "series": [...], "n_rt",
 * "rt": [[server, count, keys, sum_s, max_s, hist...], ...] (servers that
 * answered only). */
static bool load_to_json(cJSON *o, const run_node_report *r) {
  cJSON *load = cJSON_AddObjectToObject(o, "load");
  bool ok = load && put(o, "server", r->server) && put(o, "bucket_s", r->bucket_s) &&
            put(o, "owned_keys", (double)r->owned_keys) &&
            put(o, "n_rt", r->n_rt) && put(load, "busy_s", r->load.busy_s);
#define PUT(f) ok = ok && put(load, #f, (double)r->load.f);
  LOAD_FIELDS(PUT)
#undef PUT
  ok = ok && put_counts(load, "queue_hist", r->load.queue_hist, PS_QUEUE_BUCKETS);
  cJSON *series = ok ? cJSON_AddArrayToObject(o, "series") : NULL;
  for (size_t i = 0; series && ok && i < r->n_series; i++) ok = append(series, (double)r->series[i]);
  cJSON *rt = ok && series ? cJSON_AddArrayToObject(o, "rt") : NULL;
  for (uint32_t s = 0; rt && ok && s < r->n_rt; s++) {
    const ps_rt_stats *x = &r->rt[s];
    if (!x->count) continue;
    cJSON *one = cJSON_CreateArray();
    ok = one && cJSON_AddItemToArray(rt, one) && append(one, s) && append(one, (double)x->count) &&
         append(one, (double)x->keys) && append(one, x->sum_s) && append(one, x->max_s);
    if (!ok && one && !one->prev && rt->child != one) cJSON_Delete(one);
    for (unsigned b = 0; ok && b < PS_RT_BUCKETS; b++) ok = append(one, (double)x->hist[b]);
  }
  return ok && rt;
}

char *run_report_encode(const run_node_report *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON *stats = stats_to_json(&r->stats);
  bool ok = o && stats && cJSON_AddItemToObject(o, "stats", stats);
  if (!ok) cJSON_Delete(stats);
  ok = ok && put(o, "owned_sum", r->owned_sum) && put(o, "in_transfer", (double)r->in_transfer) &&
       put(o, "dropped", (double)r->dropped) && put(o, "cpu_s", r->cpu_s) &&
       put(o, "io_wakeups", r->io_wakeups) && put(o, "io_cpu_s", r->io_cpu_s) &&
       put_sched(o, "io_sched", &r->io_sched) && put_sched(o, "worker_sched", &r->worker_sched) &&
       put(o, "replicas_checked", (double)r->replicas_checked) &&
       put(o, "replica_max_diff", r->replica_max_diff) &&
       /* a non-finite final evaluation (diverged) is left out, as not made */
       (!r->final_done || !isfinite(r->final_num) || !isfinite(r->final_den) ||
        (put(o, "final_num", r->final_num) && put(o, "final_den", r->final_den))) &&
       load_to_json(o, r);
  cJSON *throttle = ok && r->throttling ? cJSON_AddArrayToObject(o, "throttle") : NULL;
  if (ok && r->throttling) /* [messages, seconds], a straggler's only */
    ok = throttle && append(throttle, (double)r->throttled) && append(throttle, r->throttle_s);
  cJSON *workers = ok ? cJSON_AddArrayToObject(o, "workers") : NULL;
  for (uint32_t i = 0; workers && i < r->n_workers; i++) {
    cJSON *w = worker_to_json(&r->workers[i]);
    if (!w || !cJSON_AddItemToArray(workers, w)) {
      cJSON_Delete(w);
      workers = NULL;
    }
  }
  char *text = workers ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return text;
}

/* Reading: every field must be there with its type; the first problem is
 * the message. */
typedef struct {
  char *err;
  size_t errlen;
  bool bad;
} reader;

/* A problem: the message, if it is the first. */
static void fail(reader *rd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(reader *rd, const char *fmt, ...) {
  if (!rd->bad) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rd->err, rd->errlen, fmt, ap);
    va_end(ap);
  }
  rd->bad = true;
}

/* Whether v is a list of exactly n numbers, which go into x[n]. */
static bool numbers(const cJSON *v, double *x, int n) {
  int k = 0;
  for (const cJSON *c = cJSON_IsArray(v) ? v->child : NULL; c && k < n && cJSON_IsNumber(c);
       c = c->next)
    x[k++] = c->valuedouble;
  return k == n && cJSON_GetArraySize(v) == n;
}

static double num(reader *rd, const cJSON *o, const char *where, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (cJSON_IsNumber(v)) return v->valuedouble;
  fail(rd, "%s.%s: expected a number", where, key);
  return 0;
}

static uint64_t count(reader *rd, const cJSON *o, const char *where, const char *key) {
  double d = num(rd, o, where, key);
  if (d >= 0 && d <= 18446744073709549568.0) return (uint64_t)d;
  fail(rd, "%s.%s: expected a count", where, key);
  return 0;
}

/* The list `name` of o, of exactly n counts, into out[n]. */
static void get_counts(reader *rd, const cJSON *o, const char *where, const char *name,
                       uint64_t *out, int n) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, name);
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != n) {
    fail(rd, "%s.%s: expected %d counts", where, name, n);
    return;
  }
  int i = 0;
  for (const cJSON *h = list->child; h; h = h->next, i++) {
    if (cJSON_IsNumber(h) && h->valuedouble >= 0) {
      out[i] = (uint64_t)h->valuedouble;
      continue;
    }
    fail(rd, "%s.%s[%d]: expected a count", where, name, i);
  }
}

static void stats_from_json(reader *rd, const cJSON *o, ps_node_stats *s) {
#define GET_COUNT(f) s->f = count(rd, o, "stats", #f);
#define GET_REAL(f) s->f = num(rd, o, "stats", #f);
  STATS_COUNTS(GET_COUNT)
  STATS_REALS(GET_REAL)
#undef GET_COUNT
#undef GET_REAL
  get_counts(rd, o, "stats", "staleness_hist", s->staleness_hist, PS_STALENESS_BUCKETS);
  get_counts(rd, o, "stats", "staleness_steps_hist", s->staleness_steps_hist,
             PS_STALENESS_BUCKETS);
  get_counts(rd, o, "stats", "bounded_staleness_hist", s->bounded_staleness_hist,
             PS_CLOCK_BUCKETS);
}

/* "stages": [[steps, start_s, end_s, wait_s], ...], when the run has stages. */
static void stages_from_json(reader *rd, const cJSON *o, run_worker_report *w) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "stages");
  if (!list) return;
  size_t n = cJSON_IsArray(list) ? (size_t)cJSON_GetArraySize(list) : 0;
  if (!n || !(w->stages = calloc(n, sizeof *w->stages))) {
    fail(rd, "%s", n ? "out of memory" : "workers[].stages: expected a list");
    return;
  }
  w->n_stages = n;
  size_t k = 0;
  for (const cJSON *v = list->child; v; v = v->next, k++) {
    double x[4];
    if (numbers(v, x, 4) && x[0] >= 0) {
      w->stages[k] = (run_stage_stats){(uint64_t)x[0], x[1], x[2], x[3]};
      continue;
    }
    fail(rd, "workers[].stages[%zu]: expected 4 numbers", k);
  }
}

/* "epoch_end_s": [s, ...], and with real math "eval_s" and "epoch_quality":
 * [[loss, examples, q_num, q_den], ...], one per epoch. */
static void epochs_from_json(reader *rd, const cJSON *o, run_worker_report *w) {
  const cJSON *ends = cJSON_GetObjectItemCaseSensitive(o, "epoch_end_s");
  if (!cJSON_IsArray(ends)) {
    fail(rd, "workers[].epoch_end_s: expected a list");
    return;
  }
  size_t n = (size_t)cJSON_GetArraySize(ends), e = 0;
  if (n && !(w->epoch_end_s = malloc(n * sizeof *w->epoch_end_s))) {
    fail(rd, "out of memory");
    return;
  }
  w->epochs = n; /* before the check: run_report_free frees what was allocated */
  for (const cJSON *v = ends->child; v; v = v->next, e++) {
    if (cJSON_IsNumber(v)) {
      w->epoch_end_s[e] = v->valuedouble;
      continue;
    }
    fail(rd, "workers[].epoch_end_s[%zu]: expected a number", e);
  }
  const cJSON *qs = cJSON_GetObjectItemCaseSensitive(o, "epoch_quality");
  if (!qs) return; /* no real math */
  w->eval_s = num(rd, o, "workers[]", "eval_s");
  w->eval_keys = count(rd, o, "workers[]", "eval_keys");
  w->eval_replica_keys = count(rd, o, "workers[]", "eval_replica_keys");
  if (!cJSON_IsArray(qs) || (size_t)cJSON_GetArraySize(qs) != n || !n) {
    fail(rd, "workers[].epoch_quality: expected a list of %zu", n);
    return;
  }
  if (!(w->epoch_quality = calloc(n, sizeof *w->epoch_quality))) {
    fail(rd, "out of memory");
    return;
  }
  e = 0;
  for (const cJSON *v = qs->child; v; v = v->next, e++) {
    double x[4];
    if (numbers(v, x, 4)) {
      w->epoch_quality[e] = (wl_epoch_quality){x[0], x[1], x[2], x[3]};
      continue;
    }
    fail(rd, "workers[].epoch_quality[%zu]: expected 4 numbers", e);
  }
}

/* "evals": [[at_s, q_num, q_den], ...], with held-out data. */
static void evals_from_json(reader *rd, const cJSON *o, run_worker_report *w) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "evals");
  if (!list) return;
  size_t n = cJSON_IsArray(list) ? (size_t)cJSON_GetArraySize(list) : 0, k = 0;
  if (!n || !(w->evals = calloc(n, sizeof *w->evals))) {
    fail(rd, n ? "out of memory" : "workers[].evals: expected a list of evaluations");
    return;
  }
  w->n_evals = n;
  for (const cJSON *v = list->child; v; v = v->next, k++) {
    double x[3];
    if (numbers(v, x, 3)) {
      w->evals[k] = (wl_eval_point){.at_s = x[0], .q_num = x[1], .q_den = x[2]};
      continue;
    }
    fail(rd, "workers[].evals[%zu]: expected 3 numbers", k);
  }
}

static void worker_from_json(reader *rd, const cJSON *o, run_worker_report *w) {
  const char *at = "workers[]";
  w->steps = count(rd, o, at, "steps");
  w->accesses = count(rd, o, at, "accesses");
  w->pushed_floats = count(rd, o, at, "pushed_floats");
  w->pushed_sum = num(rd, o, at, "pushed_sum");
  w->samples = count(rd, o, at, "samples");
  w->sample_tv_distance = num(rd, o, at, "sample_tv_distance");
  w->sample_reuse_factor = num(rd, o, at, "sample_reuse_factor");
  w->start_s = num(rd, o, at, "start_s");
  w->half_s = cJSON_GetObjectItemCaseSensitive(o, "half_s") ? num(rd, o, at, "half_s") : NAN;
  w->last_s = cJSON_GetObjectItemCaseSensitive(o, "last_s") ? num(rd, o, at, "last_s") : NAN;
  w->wait_s = num(rd, o, at, "wait_s");
  w->op_wait_s = num(rd, o, at, "op_wait_s");
  w->clock_waits = count(rd, o, at, "clock_waits");
  get_counts(rd, o, at, "gap_hist", w->gap_hist, PS_CLOCK_BUCKETS);
  stages_from_json(rd, o, w);
  epochs_from_json(rd, o, w);
  evals_from_json(rd, o, w);
}

/* What load_to_json wrote. */
static void load_from_json(reader *rd, const cJSON *o, run_node_report *r) {
  const cJSON *load = cJSON_GetObjectItemCaseSensitive(o, "load");
  r->server = num(rd, o, "report", "server") != 0;
  r->bucket_s = num(rd, o, "report", "bucket_s");
  r->owned_keys = count(rd, o, "report", "owned_keys");
  double n_rt = num(rd, o, "report", "n_rt");
#define GET(f) r->load.f = count(rd, load, "load", #f);
  LOAD_FIELDS(GET)
#undef GET
  r->load.busy_s = num(rd, load, "load", "busy_s");
  get_counts(rd, load, "load", "queue_hist", r->load.queue_hist, PS_QUEUE_BUCKETS);
  const cJSON *series = cJSON_GetObjectItemCaseSensitive(o, "series");
  const cJSON *rt = cJSON_GetObjectItemCaseSensitive(o, "rt");
  size_t n = cJSON_IsArray(series) ? (size_t)cJSON_GetArraySize(series) : 0;
  if (rd->bad) return;
  if (!cJSON_IsArray(series) || !cJSON_IsArray(rt) || n > PS_SERIES_MAX || !(n_rt >= 0) ||
      n_rt > 1e7 || n_rt != (double)(uint32_t)n_rt) {
    fail(rd, "report: expected series, rt and n_rt");
    return;
  }
  r->n_rt = (uint32_t)n_rt;
  r->series = calloc(PS_SERIES_MAX, sizeof *r->series);
  r->rt = calloc(r->n_rt ? r->n_rt : 1, sizeof *r->rt);
  if (!r->series || !r->rt) {
    fail(rd, "out of memory");
    return;
  }
  r->n_series = n;
  size_t i = 0;
  for (const cJSON *v = series->child; v; v = v->next, i++)
    r->series[i] = cJSON_IsNumber(v) && v->valuedouble >= 0 ? (uint64_t)v->valuedouble : 0;
  for (const cJSON *one = rt->child; one && !rd->bad; one = one->next) {
    double x[5 + PS_RT_BUCKETS];
    if (!numbers(one, x, 5 + PS_RT_BUCKETS) || !(x[0] >= 0) || x[0] >= r->n_rt) {
      fail(rd, "report: rt: expected [server, count, keys, sum_s, max_s, and %d counts]",
           PS_RT_BUCKETS);
      return;
    }
    ps_rt_stats *s = &r->rt[(uint32_t)x[0]];
    *s = (ps_rt_stats){.count = (uint64_t)x[1], .keys = (uint64_t)x[2], .sum_s = x[3],
                       .max_s = x[4]};
    for (int b = 0; b < PS_RT_BUCKETS; b++) s->hist[b] = (uint64_t)x[5 + b];
  }
}

/* "NAME": [turns, seconds run, seconds waited, seconds blocked], each >= 0. */
static void sched_from_json(reader *rd, const cJSON *o, const char *name, run_thread_sched *t) {
  double x[4];
  if (numbers(cJSON_GetObjectItemCaseSensitive(o, name), x, 4) && x[0] >= 0 && x[1] >= 0 &&
      x[2] >= 0 && x[3] >= 0) {
    *t = (run_thread_sched){.turns = x[0], .ran_s = x[1], .wait_s = x[2], .blocked_s = x[3]};
    return;
  }
  fail(rd,
       "report.%s: expected 4 numbers >= 0 (turns, seconds run, seconds waited, seconds "
       "blocked)",
       name);
}

/* "throttle": [messages, seconds], on a straggler's report only. */
static void throttle_from_json(reader *rd, const cJSON *o, run_node_report *r) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "throttle");
  if (!list) return;
  const cJSON *m = cJSON_GetArrayItem(list, 0), *s = cJSON_GetArrayItem(list, 1);
  if (cJSON_IsArray(list) && cJSON_GetArraySize(list) == 2 && cJSON_IsNumber(m) &&
      cJSON_IsNumber(s) && m->valuedouble >= 0 && s->valuedouble >= 0) {
    r->throttling = true;
    r->throttled = (uint64_t)m->valuedouble;
    r->throttle_s = s->valuedouble;
    return;
  }
  fail(rd, "report.throttle: expected 2 numbers >= 0");
}

int run_report_decode(const char *text, size_t len, run_node_report *r, char *err,
                      size_t errlen) {
  reader rd = {err, errlen, false};
  *r = (run_node_report){0};
  cJSON *o = cJSON_ParseWithLength(text, len);
  const cJSON *workers = cJSON_GetObjectItemCaseSensitive(o, "workers");
  const cJSON *stats = cJSON_GetObjectItemCaseSensitive(o, "stats");
  if (!cJSON_IsObject(o) || !cJSON_IsArray(workers) || !cJSON_IsObject(stats)) {
    snprintf(err, errlen, "expected a node report (a JSON object with stats and workers)");
    cJSON_Delete(o);
    return -1;
  }
  stats_from_json(&rd, stats, &r->stats);
  r->owned_sum = num(&rd, o, "report", "owned_sum");
  r->in_transfer = count(&rd, o, "report", "in_transfer");
  r->dropped = count(&rd, o, "report", "dropped");
  r->cpu_s = num(&rd, o, "report", "cpu_s");
  r->io_wakeups = num(&rd, o, "report", "io_wakeups");
  r->io_cpu_s = num(&rd, o, "report", "io_cpu_s");
  sched_from_json(&rd, o, "io_sched", &r->io_sched);
  sched_from_json(&rd, o, "worker_sched", &r->worker_sched);
  r->replicas_checked = count(&rd, o, "report", "replicas_checked");
  r->replica_max_diff = num(&rd, o, "report", "replica_max_diff");
  if ((r->final_done = cJSON_GetObjectItemCaseSensitive(o, "final_num") != NULL)) {
    r->final_num = num(&rd, o, "report", "final_num");
    r->final_den = num(&rd, o, "report", "final_den");
  }
  load_from_json(&rd, o, r);
  throttle_from_json(&rd, o, r);
  r->n_workers = (uint32_t)cJSON_GetArraySize(workers);
  r->workers = calloc(r->n_workers ? r->n_workers : 1, sizeof *r->workers);
  if (!r->workers) fail(&rd, "out of memory");
  uint32_t i = 0;
  for (const cJSON *w = r->workers ? workers->child : NULL; w; w = w->next, i++)
    worker_from_json(&rd, w, &r->workers[i]);
  cJSON_Delete(o);
  if (rd.bad) run_report_free(r);
  return rd.bad ? -1 : 0;
}
