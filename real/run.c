/*
 * real_run_node: this process's node of one experiment run, from the spec's
 * objects to the run's metrics, as sim_run is for a simulated cluster.
 *
 * Order of events: configure the policy and create the workload (a bad spec
 * fails before any socket opens); start the node (rendezvous, start
 * barrier); run one thread per worker through the shared worker loop
 * (wl_drive) with a driver env whose wait blocks on the node and whose
 * compute spins (or sleeps) flops / host_speed seconds; when the node's
 * workers are done, ps_node_finish (replicas hand on their deltas); then,
 * on every node: the end barrier (no deadline: peers may still be working;
 * a dead one is detected anyway), timers off, quiescence, the metrics
 * gathered to rank 0, the clean shutdown.
 *
 * The core lock (real/internal.h). The driver passes now() to every core
 * call it makes, evaluated just before the call, and calls back (wait,
 * compute, now) or returns after it; so a worker enters the lock in now()
 * and leaves it at its next callback: it holds the lock for its core calls
 * (and the step drawing between them), never while waiting or computing.
 *
 * A worker whose node fails wakes from its wait with the ticket undone and
 * PS_ERR_PEER, which stops its driver; the run then reports the node's
 * failure (which names the peer), not the worker's status.
 */
#include "real/internal.h"

#include "policies/policy.h"
#include "workloads/workload.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_EVERY_S 0.2

typedef struct run_state run_state;

typedef struct {
  run_state *run;
  uint32_t index;
  ps_worker *handle;
  wl_stream *stream;
  ps_sampler *sampler;   /* when the workload samples */
  pthread_t thread;
  bool started;
  bool in_core;          /* holds the node's core lock */
  int status;
  wl_driver_stats stats;
} run_worker;

struct run_state {
  const real_run_args *a;
  const ps_policy_ops *policy;
  ps_policy_settings settings;
  wl_workload *wl;
  ps_layout layout;
  ps_key *hot;           /* the workload's hottest keys, when the policy asks */
  size_t n_hot;
  ps_sample_dist *samples; /* the workload's sample distribution, if it samples */
  real_node *node;
  run_worker *workers;
  pthread_mutex_t lock;  /* guards done, signalled on cond */
  pthread_cond_t cond;
  uint32_t done, started; /* worker threads finished, started */
  char *err;
  size_t errlen;
};

static int fail(run_state *s, const char *fmt, ...) REAL_PRINTF(2, 3);
static int fail(run_state *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, s->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* ----------------------------------------------------------- driver env */

static void leave_core(run_worker *rw) {
  if (!rw->in_core) return;
  real_node_leave(rw->run->node);
  rw->in_core = false;
}

static int drv_wait(void *ctx, ps_worker *w, ps_ticket t) {
  run_worker *rw = ctx;
  leave_core(rw);
  return real_node_wait(rw->run->node, w, t);
}

static void drv_compute(void *ctx, double flops) {
  run_worker *rw = ctx;
  leave_core(rw);
  const real_run_args *a = rw->run->a;
  if (!(flops > 0) || !(a->host_speed > 0)) return;
  double s = flops / a->host_speed;
  if (a->cluster->compute == REAL_COMPUTE_SLEEP) {
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) continue;
    return;
  }
  double end = real_clock() + s;
  while (real_clock() < end) continue; /* the work a real step would do */
}

/* The driver's next core call comes right after: enter the lock for it
 * (leaving it first gives the receiver and the other workers their turn). */
static double drv_now(void *ctx) {
  run_worker *rw = ctx;
  leave_core(rw);
  real_node_enter(rw->run->node);
  rw->in_core = true;
  return real_node_now(rw->run->node);
}

static void *worker_main(void *arg) {
  run_worker *w = arg;
  run_state *s = w->run;
  wl_driver_env env = {.ctx = w, .wait = drv_wait, .compute = drv_compute, .now = drv_now};
  if (w->sampler) {
    env.sample_ctx = w->sampler;
    env.sample_prepare = ps_sampler_prepare_cb;
    env.sample_pull = ps_sampler_pull_cb;
    env.sample_stats = ps_sampler_stats_cb;
  }
  w->status = wl_drive(w->handle, w->stream, &env, s->settings.lookahead, &w->stats);
  leave_core(w);
  pthread_mutex_lock(&s->lock);
  s->done++;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* ---------------------------------------------------------------- setup */

static int configure(run_state *s) {
  const real_run_args *a = s->a;
  char why[256];
  if (!a->cluster || a->nodes == 0 || a->workers_per_node == 0 || a->rank >= a->nodes)
    return fail(s, "real_run: bad arguments (nodes, workers, rank or cluster)");
  if (ps_policy_configure(a->policy, &s->policy, &s->settings, why, sizeof why) != PS_OK)
    return fail(s, "policy.%s", why);
  s->wl = wl_create(a->workload, a->nodes, why, sizeof why);
  if (!s->wl) return fail(s, "workload.%s", why);
  memset(&s->layout, 0, sizeof s->layout);
  wl_tables(s->wl, &s->layout);
  s->layout.num_nodes = a->nodes;
  s->layout.partition = s->settings.partition;
  if (ps_layout_check(&s->layout) != PS_OK) return fail(s, "workload: invalid key tables");
  if (s->settings.hot_keys) { /* the policy treats the hottest keys apart */
    s->hot = malloc(s->settings.hot_keys * sizeof *s->hot);
    if (!s->hot) return fail(s, "node %u: out of memory", a->rank);
    s->n_hot = wl_hot_keys(s->wl, s->settings.hot_keys, s->hot);
  }
  if (wl_samples(s->wl)) { /* one distribution, read by every worker's sampler */
    ps_key first;
    uint64_t count;
    double *weights;
    if (wl_sample_distribution(s->wl, &first, &count, &weights) != PS_OK)
      return fail(s, "node %u: out of memory", a->rank);
    s->samples = ps_sample_dist_new(first, count, weights);
    free(weights);
    if (!s->samples) return fail(s, "workload: invalid sample distribution");
  }
  return 0;
}

static int start_node(run_state *s) {
  const real_run_args *a = s->a;
  real_node_config c = {.rank = a->rank, .size = a->nodes, .workers = a->workers_per_node,
                        .layout = s->layout, .policy = s->policy, .policy_json = a->policy,
                        .settings = s->settings, .hot_keys = s->hot,
                        .num_hot_keys = s->n_hot, .cluster = a->cluster,
                        .coordinator = a->coordinator,
                        .coordinator_file = a->coordinator_file, .run = a->run,
                        .listening = a->listening, .listening_ctx = a->hook_ctx};
  s->node = real_node_start(&c, s->err, s->errlen);
  return s->node ? 0 : -1;
}

static int start_workers(run_state *s) {
  const real_run_args *a = s->a;
  uint32_t wpn = a->workers_per_node;
  s->workers = calloc(wpn, sizeof *s->workers);
  if (!s->workers) return fail(s, "node %u: out of memory", a->rank);
  for (uint32_t i = 0; i < wpn; i++) {
    run_worker *w = &s->workers[i];
    *w = (run_worker){.run = s, .index = i,
                      .handle = ps_node_worker(real_node_core(s->node), i),
                      .stream = wl_stream_new(s->wl, a->rank, a->rank * wpn + i, a->seed)};
    if (!w->handle || !w->stream) return fail(s, "node %u: out of memory", a->rank);
    uint32_t rank = a->rank * wpn + i;
    if (s->samples &&
        !(w->sampler = ps_sampler_new(ps_policy_sampling(a->policy), w->handle, s->samples,
                                      ps_mix64(a->seed ^ ps_mix64(rank + 1)))))
      return fail(s, "node %u: no sampler (out of memory)", a->rank);
  }
  for (uint32_t i = 0; i < wpn; i++) {
    if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0)
      return fail(s, "node %u: cannot start worker thread %u", a->rank, i);
    s->workers[i].started = true;
    s->started++;
  }
  return 0;
}

/* ------------------------------------------------------------ the run */

static void report_progress(run_state *s) {
  const real_run_args *a = s->a;
  uint64_t total = wl_steps_per_worker(s->wl) * a->workers_per_node, done = 0;
  for (uint32_t i = 0; i < a->workers_per_node; i++)
    done += (uint64_t)ps_worker_clock(s->workers[i].handle);
  if (total) a->progress(a->progress_ctx, real_node_now(s->node), (double)done / (double)total);
}

/* Waits for this node's workers, reporting progress on the way. */
static void join_workers(run_state *s) {
  uint32_t n = s->a->workers_per_node;
  pthread_mutex_lock(&s->lock);
  while (s->done < s->started) {
    if (!s->a->progress) {
      pthread_cond_wait(&s->cond, &s->lock);
      continue;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_nsec += (long)(PROGRESS_EVERY_S * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_sec++;
      ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    pthread_mutex_unlock(&s->lock);
    report_progress(s);
    pthread_mutex_lock(&s->lock);
  }
  pthread_mutex_unlock(&s->lock);
  for (uint32_t i = 0; i < n; i++)
    if (s->workers[i].started) pthread_join(s->workers[i].thread, NULL);
  /* This node's workers are done: its replicas hand on their deltas. */
  real_node_enter(s->node);
  if (!real_node_failed(s->node, NULL, 0))
    ps_node_finish(real_node_core(s->node), real_node_now(s->node));
  real_node_leave(s->node);
}

/* Tells everyone if a worker of this node failed (not for the node's own
 * failure, which stopped it: that one was told already). */
static void check_workers(run_state *s) {
  if (real_node_failed(s->node, NULL, 0)) return;
  for (uint32_t i = 0; s->workers && i < s->a->workers_per_node; i++) {
    int st = s->workers[i].status;
    if (st == PS_OK) continue;
    real_fail_and_tell(s->node, "worker %u.%u failed: %s", s->a->rank, i, ps_strerror(st));
    return;
  }
}

typedef struct {
  double time_s;
  cJSON *metrics;
  char err[REAL_ERROR_MAX];
} reduce_ctx;

static void *decide_metrics(void *ctx, uint32_t size, const void *const *in,
                            const size_t *len, size_t *out_len) {
  reduce_ctx *r = ctx;
  char **texts = calloc(size, sizeof *texts);
  for (uint32_t p = 0; texts && p < size; p++)
    texts[p] = len[p] ? strndup(in[p], len[p]) : NULL;
  r->metrics = texts ? real_metrics_reduce((const char *const *)texts, size, r->time_s,
                                           r->err, sizeof r->err)
                     : NULL;
  for (uint32_t p = 0; texts && p < size; p++) free(texts[p]);
  free(texts);
  *out_len = 0;
  return NULL;
}

/* End barrier, quiescence, metrics, shutdown: every node, in step. */
static cJSON *finish_run(run_state *s) {
  real_node *n = s->node;
  if (real_node_barrier(n, "the end of the run", INFINITY) != PS_OK) return NULL;
  reduce_ctx r = {.time_s = real_node_now(n)};
  real_node_stop_timers(n);
  if (real_node_quiesce(n) != PS_OK) return NULL;
  uint32_t wpn = s->a->workers_per_node;
  real_worker_report *rep = calloc(wpn, sizeof *rep);
  char *mine = NULL;
  if (rep) {
    for (uint32_t i = 0; i < wpn; i++) {
      const wl_driver_stats *st = &s->workers[i].stats;
      rep[i] = (real_worker_report){st->steps,        st->accesses,
                                    st->pushed_floats, st->samples,
                                    st->sample_tv_distance, st->sample_reuse_factor,
                                    st->start_s,      st->epoch_end_s,
                                    st->epochs};
    }
    mine = real_metrics_local(n, rep, wpn);
  }
  free(rep);
  if (!mine) real_fail_and_tell(n, "node %u: out of memory reporting metrics", s->a->rank);
  int rc = mine ? real_node_collective(n, "gathering metrics", mine, strlen(mine),
                                       n->cluster.timeout_s, decide_metrics, &r, NULL, NULL)
                : PS_ERR_PEER;
  free(mine);
  if (rc == PS_OK && s->a->rank == 0 && !r.metrics)
    real_fail_and_tell(n, "%s", r.err);
  if (rc == PS_OK && real_node_finish(n) == PS_OK)
    return s->a->rank == 0 ? r.metrics : (cJSON_Delete(r.metrics), cJSON_CreateObject());
  cJSON_Delete(r.metrics);
  return NULL;
}

/* -------------------------------------------------------------- entry */

static void teardown(run_state *s) {
  for (uint32_t i = 0; s->workers && i < s->a->workers_per_node; i++) {
    wl_stream_free(s->workers[i].stream);
    ps_sampler_free(s->workers[i].sampler);
    free(s->workers[i].stats.epoch_end_s);
  }
  free(s->workers);
  real_node_free(s->node);
  free(s->hot);
  ps_sample_dist_free(s->samples);
  wl_free(s->wl);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
}

cJSON *real_run_node(const real_run_args *a, char *err, size_t errlen) {
  run_state s = {.a = a, .err = err, .errlen = errlen};
  pthread_mutex_init(&s.lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s.cond, &attr);
  pthread_condattr_destroy(&attr);
  cJSON *metrics = NULL;
  if (configure(&s) == 0 && start_node(&s) == 0) {
    if (a->started) a->started(a->hook_ctx);
    if (start_workers(&s) != 0) real_fail_and_tell(s.node, "%s", err);
    join_workers(&s);
    check_workers(&s);
    metrics = finish_run(&s);
    if (!metrics) real_node_failed(s.node, err, errlen);
    /* Every node is past this run's rendezvous: the address is stale now. */
    if (metrics && a->rank == 0 && a->coordinator_file) unlink(a->coordinator_file);
  }
  teardown(&s);
  return metrics;
}
