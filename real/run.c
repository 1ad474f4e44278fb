/*
 * real_run_node: this process's node of one experiment run, from the spec's
 * objects to the run's metrics, as sim_run is for a simulated cluster.
 * Everything that is not transport, time or compute comes from run/.
 *
 * Order of events: the run's setup (policy, workload, layout, hot keys,
 * sample distribution: a bad spec fails before any socket opens); start the
 * node (rendezvous, start barrier); run one thread per worker through the
 * shared worker loop (run_worker_drive) with a driver env whose wait blocks
 * on the node and whose compute spins for flops / host_speed seconds of the
 * thread's CPU (or sleeps that long; stretched by a straggler's phases:
 * throttle.c); when the node's
 * workers are done, ps_node_finish (replicas hand
 * on their deltas); then, on every node: the end barrier (no deadline:
 * peers may still be working; a dead one is detected anyway), timers off,
 * quiescence, the replica check and the final evaluation (owners' values
 * through rank 0, which evaluates), every node's report gathered to rank 0
 * and reduced there by run_metrics, the clean shutdown. A node's report carries its process's
 * CPU time from the start release to the report.
 *
 * A worker whose node fails wakes from its wait with the ticket undone and
 * PS_ERR_PEER, which stops its driver; the run then reports the node's
 * failure (which names the peer), not the worker's status.
 */
#include "real/internal.h"

#include "run/run.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_EVERY_S 0.2

typedef struct {
  node_run *run;
  run_worker rw;         /* handle, stream, sampler, status, driver stats */
  pthread_t thread;
  bool started;
  run_thread_sched sched; /* its thread's, over its steps (no turns: unread) */
} node_worker;

struct node_run {
  const real_run_args *a;
  run_setup *setup;      /* policy, workload, layout, hot keys, samples */
  real_node *node;
  node_worker *workers;
  uint32_t n_workers;    /* this node's: workers_per_node, or 0 (server only) */
  pthread_mutex_t lock;  /* guards done, signalled on cond */
  pthread_cond_t cond;
  uint32_t done, started; /* worker threads finished, started */
  double cpu_start;      /* the process's CPU time at the start release */
  pid_t io_tid;          /* ZeroMQ's I/O thread (0: not found) */
  double io_start;       /* its voluntary context switches then */
  double io_cpu_start;   /* and its CPU seconds */
  double io_sched[3];    /* and its schedstat (real_thread_schedstat) */
  bool io_sched_ok;
  char *err;
  size_t errlen;
};

static int fail(node_run *s, const char *fmt, ...) REAL_PRINTF(2, 3);
static int fail(node_run *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s->err, s->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* ----------------------------------------------------------- driver env */

static int drv_wait(void *ctx, ps_worker *w, ps_ticket t) {
  node_worker *nw = ctx;
  return real_node_wait(nw->run->node, w, t);
}

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void drv_compute(void *ctx, double flops, bool math_done) {
  node_worker *nw = ctx;
  const real_run_args *a = nw->run->a;
  if (math_done) return; /* the step's real math took its own time */
  if (!(flops > 0) || !(a->host_speed > 0)) return;
  double s = real_throttle_compute(nw->run->node, flops / a->host_speed);
  if (a->cluster->compute == REAL_COMPUTE_SLEEP) {
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) continue;
    return;
  }
  /* s seconds of this thread's CPU, not of the wall clock: the work a real
   * step would do, which takes longer when the thread shares its core with
   * others (the node's receiver, ZeroMQ's I/O thread, other nodes), as the
   * simulator's compute on shared cores does. A wall-clock spin would end
   * on time however little of the core it got. */
  double end = thread_cpu_s() + s;
  while (thread_cpu_s() < end) continue;
}

static double drv_now(void *ctx) {
  node_worker *nw = ctx;
  return real_node_now(nw->run->node);
}

static void *worker_main(void *arg) {
  node_worker *w = arg;
  node_run *s = w->run;
  wl_driver_env env = {.ctx = w, .wait = drv_wait, .compute = drv_compute, .now = drv_now};
  double a[3], b[3];
  double from = real_clock();
  bool sched = real_thread_schedstat(0, a);
  run_worker_drive(&w->rw, s->setup, env);
  if (sched && real_thread_schedstat(0, b)) {
    double ran = b[0] - a[0], waited = b[1] - a[1];
    /* the rest of its steps' wall time it slept (the clock is read just
     * outside the two schedstat readings: never below nothing) */
    double blocked = fmax(0, real_clock() - from - ran - waited);
    w->sched = (run_thread_sched){
        .turns = b[2] - a[2], .ran_s = ran, .wait_s = waited, .blocked_s = blocked};
  }
  pthread_mutex_lock(&s->lock);
  s->done++;
  pthread_cond_signal(&s->cond);
  pthread_mutex_unlock(&s->lock);
  return NULL;
}

/* ---------------------------------------------------------------- setup */

static int configure(node_run *s) {
  const real_run_args *a = s->a;
  if (!a->cluster || a->run.nodes == 0 || a->run.workers_per_node == 0 ||
      a->rank >= a->run.nodes)
    return fail(s, "real_run: bad arguments (nodes, workers, rank or cluster)");
  run_args ra = a->run;
  /* A node process (its ZeroMQ context, threads and buffers) and a worker
   * thread, roughly. */
  ra.memory = (run_memory){.limit = a->run.memory.limit,
                           .nodes_here = a->memory_all_nodes ? 0 : 1,
                           .per_node = 16 << 20,
                           .per_worker = 1 << 20};
  /* Rank 0 makes the run's secret and hands it to the others in the
   * rendezvous (real/rendezvous.c); theirs comes from there. */
  if (a->rank == 0) run_secret_new(ra.secret);
  s->setup = run_setup_new(&ra, s->err, s->errlen);
  if (s->setup) s->n_workers = run_node_workers(s->setup, a->rank);
  return s->setup ? 0 : -1;
}

static int start_node(node_run *s) {
  const real_run_args *a = s->a;
  real_node_config c = {.cluster = a->cluster, .coordinator = a->coordinator,
                        .coordinator_file = a->coordinator_file, .run = a->run_number,
                        .listening = a->listening, .listening_ctx = a->hook_ctx};
  run_node_config(s->setup, a->rank, &c.core);
  s->node = real_node_start(&c, s->err, s->errlen);
  return s->node ? 0 : -1;
}

static int start_workers(node_run *s) {
  const real_run_args *a = s->a;
  uint32_t wpn = s->n_workers;
  s->workers = calloc(wpn ? wpn : 1, sizeof *s->workers);
  if (!s->workers) return fail(s, "node %u: out of memory", a->rank);
  for (uint32_t i = 0; i < wpn; i++) {
    s->workers[i].run = s;
    if (run_worker_init(&s->workers[i].rw, s->setup, real_node_core(s->node), i, s->err,
                        s->errlen) != 0)
      return -1;
  }
  for (uint32_t i = 0; i < wpn; i++) {
    if (pthread_create(&s->workers[i].thread, NULL, worker_main, &s->workers[i]) != 0)
      return fail(s, "node %u: cannot start worker thread %u", a->rank, i);
    char name[32];
    snprintf(name, sizeof name, "pslab-w%u", i);
    real_name_thread(s->workers[i].thread, name);
    s->workers[i].started = true;
    s->started++;
  }
  return 0;
}

/* ------------------------------------------------------------ the run */

static void report_progress(node_run *s) {
  const real_run_args *a = s->a;
  uint64_t total = 0, done = 0;
  for (uint32_t i = 0; i < s->n_workers; i++) {
    total += run_setup_worker_steps(s->setup, s->workers[i].rw.rank);
    done += run_worker_progress(s->setup, &s->workers[i].rw);
  }
  if (total) a->progress(a->progress_ctx, real_node_now(s->node), (double)done / (double)total);
}

/* Waits for this node's workers, reporting progress on the way. */
static void join_workers(node_run *s) {
  uint32_t n = s->n_workers;
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
  if (!real_node_failed(s->node, NULL, 0))
    ps_node_finish(real_node_core(s->node), real_node_now(s->node));
}

/* Tells everyone if a worker of this node failed (not for the node's own
 * failure, which stopped it: that one was told already). */
static void check_workers(node_run *s) {
  if (real_node_failed(s->node, NULL, 0)) return;
  for (uint32_t i = 0; s->workers && i < s->n_workers; i++) {
    int st = s->workers[i].rw.status;
    if (st == PS_OK) continue;
    real_fail_and_tell(s->node, "worker %u.%u failed: %s", s->a->rank, i,
                       run_worker_error(&s->workers[i].rw));
    return;
  }
}

typedef struct {
  double time_s;
  const wl_quality *quality;
  cJSON *metrics;
  char err[REAL_ERROR_MAX];
} reduce_ctx;

/* Rank 0: every node's report, read back and reduced as sim/ reduces its
 * nodes' reports. */
static void *decide_metrics(void *ctx, uint32_t size, const void *const *in,
                            const size_t *len, size_t *out_len) {
  reduce_ctx *r = ctx;
  run_node_report *reports = calloc(size, sizeof *reports);
  uint32_t read = 0;
  char why[256];
  if (!reports) snprintf(r->err, sizeof r->err, "node 0: out of memory reducing metrics");
  for (; reports && read < size; read++) {
    if (run_report_decode(in[read], len[read], &reports[read], why, sizeof why) == 0) continue;
    snprintf(r->err, sizeof r->err, "node %u sent a bad report: %s", read, why);
    break;
  }
  if (reports && read == size)
    r->metrics = run_metrics(reports, size, r->time_s, r->quality, r->err, sizeof r->err);
  for (uint32_t p = 0; reports && p < read; p++) run_report_free(&reports[p]);
  free(reports);
  *out_len = 0;
  return NULL;
}

/* CPU seconds this process has used, all its threads (ZeroMQ's I/O thread
 * included) and the kernel's work for them: a node's figure, since each
 * node is a process. */
static double process_cpu_s(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Rank 0: every node's owned values of replicated keys, concatenated for
 * all (none past a control message's limit: the replicas then go
 * unchecked). */
static void *concat_owned(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                          size_t *out_len) {
  (void)ctx;
  size_t total = 0;
  for (uint32_t p = 0; p < size; p++) total += len[p];
  uint8_t *all = total && total <= REAL_CTL_MAX_PAYLOAD ? malloc(total) : NULL;
  *out_len = all ? total : 0;
  size_t at = 0;
  for (uint32_t p = 0; all && p < size; at += len[p], p++)
    if (len[p]) memcpy(all + at, in[p], len[p]);
  return all;
}

/* The replica check (run/replica_check.c): the owners' values of replicated
 * keys go round through rank 0, and each node compares its replicas. */
static int check_replicas(node_run *s, run_node_report *rep) {
  real_node *n = s->node;
  uint8_t *mine = NULL, *all = NULL;
  size_t len = 0, all_len = 0;
  if (run_replica_owned(n->core, &mine, &len) != PS_OK) {
    real_fail_and_tell(n, "node %u: out of memory checking replicas", s->a->rank);
    return PS_ERR_PEER;
  }
  int rc = real_node_collective(n, "checking replicas", mine, len, n->cluster.timeout_s,
                                concat_owned, NULL, (void **)&all, &all_len);
  free(mine);
  if (rc == PS_OK && run_replica_check(rep, n->core, all, all_len) != PS_OK) {
    real_fail_and_tell(n, "node %u: bad owner values in the replica check", s->a->rank);
    rc = PS_ERR_PEER;
  }
  free(all);
  return rc;
}

/* A final part over what a control message carries is sent as this one
 * byte instead (a record is longer): rank 0 then makes no final
 * evaluation. */
#define FINAL_TOO_BIG 1

/* Rank 0: the final evaluation from every node's part; its sums
 * (num, den) are the answer, or nothing when it could not be made (a part
 * too big to travel, or all of them together). */
static void *evaluate_final(void *ctx, uint32_t size, const void *const *in, const size_t *len,
                            size_t *out_len) {
  node_run *s = ctx;
  size_t total = 0;
  bool fits = true;
  for (uint32_t p = 0; p < size; p++) {
    fits = fits && len[p] != FINAL_TOO_BIG;
    total += len[p];
  }
  *out_len = 0;
  if (!fits || total > REAL_CTL_MAX_PAYLOAD) return NULL;
  size_t all_len;
  uint8_t *all = concat_owned(NULL, size, in, len, &all_len);
  run_node_report r = {0};
  double *sums = (all || !total) ? malloc(2 * sizeof *sums) : NULL;
  if (sums && run_final_eval(s->setup, all, all_len, &r) == PS_OK && r.final_done) {
    sums[0] = r.final_num;
    sums[1] = r.final_den;
    *out_len = 2 * sizeof *sums;
  } else {
    free(sums);
    sums = NULL;
  }
  free(all);
  return sums;
}

/* The final evaluation (run/final_eval.c): every node's owned values of the
 * keys it reads go to rank 0, which evaluates; the sums come back into the
 * report. Without a wait limit: rank 0 may evaluate for longer than
 * timeout_s, and a peer's death is detected all the same. */
static int final_eval(node_run *s, run_node_report *rep) {
  real_node *n = s->node;
  uint8_t *mine = NULL, too_big = 0;
  size_t len = 0, out_len = 0;
  double *sums = NULL;
  if (run_final_part(s->setup, n->core, &mine, &len) != PS_OK) {
    real_fail_and_tell(n, "node %u: out of memory for the final evaluation", s->a->rank);
    return PS_ERR_PEER;
  }
  bool big = len > REAL_CTL_MAX_PAYLOAD;
  int rc = real_node_collective(n, "the final evaluation", big ? &too_big : mine,
                                big ? FINAL_TOO_BIG : len, INFINITY, evaluate_final, s,
                                (void **)&sums, &out_len);
  free(mine);
  if (rc == PS_OK && out_len == 2 * sizeof *sums) {
    rep->final_done = true;
    rep->final_num = sums[0];
    rep->final_den = sums[1];
  }
  free(sums);
  return rc;
}

/* This node's report, as text. */
static char *node_report(node_run *s) {
  real_node *n = s->node;
  run_node_report rep;
  if (run_report_make(&rep, n->core, s->n_workers, NULL) != PS_OK) return NULL;
  if (check_replicas(s, &rep) != PS_OK || final_eval(s, &rep) != PS_OK) {
    run_report_free(&rep);
    return NULL;
  }
  bool ok = true;
  for (uint32_t i = 0; ok && i < s->n_workers; i++)
    ok = run_report_worker(&rep, &s->workers[i].rw) == PS_OK;
  rep.dropped = atomic_load(&n->dropped) + atomic_load(&n->stray);
  rep.throttling = n->slow != NULL;
  rep.throttled = atomic_load(&n->throttled);
  rep.throttle_s = 1e-9 * (double)atomic_load(&n->throttle_ns);
  rep.cpu_s = process_cpu_s() - s->cpu_start;
  rep.io_wakeups = real_thread_switches(s->io_tid) - s->io_start;
  rep.io_cpu_s = real_thread_cpu_s(s->io_tid) - s->io_cpu_start;
  double io[3];
  if (s->io_sched_ok && real_thread_schedstat(s->io_tid, io))
    rep.io_sched = (run_thread_sched){.turns = io[2] - s->io_sched[2],
                                      .ran_s = io[0] - s->io_sched[0],
                                      .wait_s = io[1] - s->io_sched[1]};
  for (uint32_t i = 0; i < s->n_workers; i++)
    run_thread_sched_add(&rep.worker_sched, &s->workers[i].sched);
  char *text = ok ? run_report_encode(&rep) : NULL;
  run_report_free(&rep);
  return text;
}

/* End barrier, quiescence, metrics, shutdown: every node, in step. */
static cJSON *finish_run(node_run *s) {
  real_node *n = s->node;
  /* No deadline: a peer whose workers are slower may take as long as they
   * need. A peer that dies or falls silent still ends the wait: its
   * frames stop and the receiver fails the node within timeout_s
   * (real/receiver.c). */
  if (real_node_barrier(n, "the end of the run", INFINITY) != PS_OK) return NULL;
  reduce_ctx r = {.time_s = real_node_now(n), .quality = run_setup_quality(s->setup)};
  real_node_stop_timers(n);
  if (real_node_quiesce(n) != PS_OK) return NULL;
  /* Each node's part of the saved parameters is written before its report,
   * so rank 0 finds every part once it has every report. */
  if (run_params_save_part(s->setup, n->core, s->a->rank, s->err, s->errlen) != 0) {
    real_fail_and_tell(n, "node %u: %s", s->a->rank, s->err);
    return NULL;
  }
  char *mine = node_report(s);
  if (!mine) real_fail_and_tell(n, "node %u: out of memory reporting metrics", s->a->rank);
  int rc = mine ? real_node_collective(n, "gathering metrics", mine, strlen(mine),
                                       n->cluster.timeout_s, decide_metrics, &r, NULL, NULL)
                : PS_ERR_PEER;
  free(mine);
  if (rc == PS_OK && s->a->rank == 0 && !r.metrics)
    real_fail_and_tell(n, "%s", r.err);
  else if (rc == PS_OK && s->a->rank == 0 && run_params_merge(s->setup, r.err, sizeof r.err))
    real_fail_and_tell(n, "%s", r.err);
  else if (rc != PS_OK && s->a->rank == 0)
    run_params_discard(s->setup);
  if (rc == PS_OK && real_node_finish(n) == PS_OK)
    return s->a->rank == 0 ? r.metrics : (cJSON_Delete(r.metrics), cJSON_CreateObject());
  cJSON_Delete(r.metrics);
  return NULL;
}

/* -------------------------------------------------------------- entry */

static void teardown(node_run *s) {
  for (uint32_t i = 0; s->workers && i < s->n_workers; i++)
    run_worker_free(&s->workers[i].rw);
  free(s->workers);
  real_node_free(s->node);
  run_setup_free(s->setup);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
}

node_run *real_run_prepare(const real_run_args *a, char *err, size_t errlen) {
  node_run *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errlen, "node %u: out of memory", a->rank);
    return NULL;
  }
  *s = (node_run){.a = a, .err = err, .errlen = errlen};
  pthread_mutex_init(&s->lock, NULL);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&s->cond, &attr);
  pthread_condattr_destroy(&attr);
  if (configure(s) == 0) return s;
  real_run_discard(s);
  return NULL;
}

void real_run_discard(node_run *s) {
  if (!s) return;
  teardown(s);
  free(s);
}

cJSON *real_run_go(node_run *s) {
  const real_run_args *a = s->a;
  char *err = s->err;
  size_t errlen = s->errlen;
  cJSON *metrics = NULL;
  if (start_node(s) == 0) {
    s->cpu_start = process_cpu_s(); /* from the start release on, as time_s */
    s->io_tid = real_named_thread(REAL_ZMQ_IO_THREAD);
    s->io_start = real_thread_switches(s->io_tid);
    s->io_cpu_start = real_thread_cpu_s(s->io_tid);
    s->io_sched_ok = s->io_tid && real_thread_schedstat(s->io_tid, s->io_sched);
    if (a->started) a->started(a->hook_ctx);
    if (start_workers(s) != 0) real_fail_and_tell(s->node, "%s", err);
    join_workers(s);
    check_workers(s);
    metrics = finish_run(s);
    if (!metrics) real_node_failed(s->node, err, errlen);
    /* Every node is past this run's rendezvous: the address is stale now. */
    if (metrics && a->rank == 0 && a->coordinator_file) unlink(a->coordinator_file);
  }
  real_run_discard(s);
  return metrics;
}

cJSON *real_run_node(const real_run_args *a, char *err, size_t errlen) {
  node_run *s = real_run_prepare(a, err, errlen);
  return s ? real_run_go(s) : NULL;
}
