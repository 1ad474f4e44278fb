/*
 * The metric table, and the metrics of a run computed from it.
 *
 * One entry per metric: its name, unit, axis label, meaning, when a run has
 * it, how repeats combine, where it is shown by default, and how it is
 * computed from the totals of every node's report. Everything that names a
 * metric reads this table: run_metrics below (what runs.jsonl records), the
 * results, the table and the plots (experiments/), spec validation, and
 * `pslab metrics`, from which experiments/SPEC.md's metric list is written
 * (a test compares the two).
 *
 * The totals are summed in rank order, node by node and worker by worker,
 * so the same run gives the same figures bit for bit, whichever backend
 * gathered the reports.
 */
#include "run/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- totals */

struct run_totals {
  double time_s;
  double half_s, last_s; /* the latest worker's half_s, last_s */
  bool half_missing, last_missing; /* a worker has none */
  uint64_t steps, accesses, pushed_floats, samples;
  double pushed_sum;
  uint32_t samplers; /* workers that drew samples */
  double tv_sum, reuse_sum;
  ps_node_stats nodes; /* summed with ps_node_stats_add */
  double owned_sum;
  uint64_t in_transfer, dropped;
  uint64_t replicas_checked;
  double replica_max_diff;
  uint32_t throttling; /* nodes with the real backend's straggler emulation */
  uint64_t throttled;
  double throttle_s;
  double *epochs;      /* per epoch: its duration (slowest worker) */
  double *epoch_ends;  /* per epoch: its end, from the run's start */
  size_t n_epochs;
  /* With real math (epochs_q of them, else 0): per epoch, the mean training
   * loss per example, and the held-out quality when measured. */
  double *loss, *quality;
  size_t epochs_q, n_quality;
  wl_quality q;
  bool has_q;
  /* Every evaluation every worker made (epoch ends and eval_every's): its
   * quality and training time from the run's start; and the final
   * evaluation from the owners' values once quiet (has_final). */
  double *eval_q, *eval_at;
  size_t n_evals;
  bool has_final;
  double final_q;
  double eval_s;       /* the most any worker spent evaluating */
  uint64_t eval_keys, eval_replica_keys; /* evaluations' reads; by replicas */
  /* Bounded consistency: time blocked summed over workers, and how many
   * there are; steps that blocked; steps that passed the gate (0: the run
   * had no bound); clock gaps and read staleness as lists of counts. */
  double wait_sum;
  double op_wait_sum; /* waits for the steps' pulls and pushes, over workers */
  uint32_t workers;
  uint64_t clock_waits, gated, gap_sum;
  double gap_hist[PS_CLOCK_BUCKETS], stale_hist[PS_CLOCK_BUCKETS];
  /* With stages: per stage, over its active workers (those with steps). */
  struct stage_total {
    uint32_t workers;
    uint64_t steps;
    double start, end, wait_sum;
  } *stages;
  size_t n_stages;
  double run_start;    /* the earliest start of any worker */
  const run_node_report *reports; /* every node's, in rank order (servers) */
  uint32_t n_reports;
  /* Telemetry: every reply's response time; the servers' busy time; every
   * node's message handling (messages, wake-ups, messages waiting); CPU. */
  ps_rt_stats rt;
  uint32_t servers;
  double server_busy_s;
  uint64_t handled, wakeups, queue_max;
  uint64_t queue_hist[PS_QUEUE_BUCKETS];
  double cpu_s;
  double io_wakeups; /* the nodes' I/O threads', summed */
  double io_cpu_s;   /* the same threads' CPU seconds, summed */
  run_thread_sched io_sched, worker_sched; /* the nodes', summed */
};

/* Stage k runs from the earliest start of its active workers to the latest
 * end; its wait is theirs (consistency bound and closing barrier). */
static int stage_totals(run_totals *t, const run_node_report *nodes, uint32_t n) {
  t->run_start = INFINITY;
  for (uint32_t r = 0; r < n; r++)
    for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
      const run_worker_report *w = &nodes[r].workers[i];
      if (w->start_s < t->run_start) t->run_start = w->start_s;
      if (w->n_stages > t->n_stages) t->n_stages = w->n_stages;
    }
  if (!t->n_stages) return PS_OK;
  if (!(t->stages = calloc(t->n_stages, sizeof *t->stages))) return PS_ERR_NOMEM;
  for (size_t k = 0; k < t->n_stages; k++) {
    struct stage_total *st = &t->stages[k];
    st->start = INFINITY;
    st->end = -INFINITY;
    for (uint32_t r = 0; r < n; r++)
      for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
        const run_worker_report *w = &nodes[r].workers[i];
        if (k >= w->n_stages || w->stages[k].steps == 0) continue;
        const run_stage_stats *s = &w->stages[k];
        st->workers++;
        st->steps += s->steps;
        st->wait_sum += s->wait_s;
        if (s->start_s < st->start) st->start = s->start_s;
        if (s->end_s > st->end) st->end = s->end_s;
      }
  }
  return PS_OK;
}

/* Epoch e lasts from the latest end of e - 1 over all workers (the earliest
 * start for e = 0) to the latest end of e. */
static int epoch_times(run_totals *t, const run_node_report *nodes, uint32_t n) {
  double prev = INFINITY;
  size_t epochs = 0;
  for (uint32_t r = 0; r < n; r++)
    for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
      const run_worker_report *w = &nodes[r].workers[i];
      if (w->epochs > epochs) epochs = w->epochs;
      if (w->start_s < prev) prev = w->start_s;
    }
  t->epochs = epochs ? malloc(epochs * sizeof *t->epochs) : NULL;
  t->epoch_ends = epochs ? malloc(epochs * sizeof *t->epoch_ends) : NULL;
  if (epochs && (!t->epochs || !t->epoch_ends)) return PS_ERR_NOMEM;
  double start = prev;
  for (size_t e = 0; e < epochs; e++) {
    double end = prev;
    for (uint32_t r = 0; r < n; r++)
      for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
        const run_worker_report *w = &nodes[r].workers[i];
        if (e < w->epochs && w->epoch_end_s[e] > end) end = w->epoch_end_s[e];
      }
    t->epochs[e] = end - prev;
    t->epoch_ends[e] = end - start;
    prev = end;
  }
  t->n_epochs = epochs;
  return PS_OK;
}

/* Epoch e's loss is the loss summed over every worker's epoch e divided by
 * the examples it is over; its quality comes from the held-out sums of all
 * workers (wl_quality says how). Only epochs every worker finished count. */
static int epoch_quality(run_totals *t, const run_node_report *nodes, uint32_t n) {
  size_t epochs = SIZE_MAX;
  for (uint32_t r = 0; r < n; r++)
    for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
      const run_worker_report *w = &nodes[r].workers[i];
      size_t have = w->epoch_quality ? w->epochs : 0;
      if (have < epochs) epochs = have;
      if (w->eval_s > t->eval_s) t->eval_s = w->eval_s;
      t->eval_keys += w->eval_keys;
      t->eval_replica_keys += w->eval_replica_keys;
    }
  if (epochs == SIZE_MAX || epochs == 0) return PS_OK;
  t->loss = malloc(epochs * sizeof *t->loss);
  t->quality = malloc(epochs * sizeof *t->quality);
  if (!t->loss || !t->quality) return PS_ERR_NOMEM;
  t->epochs_q = epochs;
  t->n_quality = t->has_q ? epochs : 0;
  for (size_t e = 0; e < epochs; e++) {
    wl_epoch_quality sum = {0};
    for (uint32_t r = 0; r < n; r++)
      for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
        const wl_epoch_quality *q = &nodes[r].workers[i].epoch_quality[e];
        sum.loss += q->loss;
        sum.examples += q->examples;
        sum.q_num += q->q_num;
        sum.q_den += q->q_den;
      }
    t->loss[e] = sum.examples > 0 ? sum.loss / sum.examples : 0;
    if (!(sum.q_den > 0)) {
      t->n_quality = 0; /* an epoch without held-out data: no quality at all */
      continue;
    }
    double v = sum.q_num / sum.q_den; /* NaN once training diverged: kept */
    t->quality[e] = t->q.sqrt ? sqrt(v) : v;
  }
  return PS_OK;
}

/* A quality from held-out sums, as the measure says (NaN kept: diverged). */
static double quality_of(const run_totals *t, double num, double den) {
  double v = num / den;
  return t->q.sqrt ? sqrt(v) : v;
}

/* Evaluation i's quality sums those of every worker's evaluation i, its
 * time is the latest of theirs (from the run's start); only evaluations
 * every worker made count. The final evaluation is the first node's that
 * made one. */
static int eval_points(run_totals *t, const run_node_report *nodes, uint32_t n) {
  size_t count = SIZE_MAX;
  for (uint32_t r = 0; r < n; r++) {
    if (nodes[r].final_done && !t->has_final && nodes[r].final_den > 0 && t->has_q) {
      t->has_final = true;
      t->final_q = quality_of(t, nodes[r].final_num, nodes[r].final_den);
    }
    for (uint32_t i = 0; i < nodes[r].n_workers; i++)
      if (nodes[r].workers[i].n_evals < count) count = nodes[r].workers[i].n_evals;
  }
  if (count == SIZE_MAX || count == 0 || !t->has_q) return PS_OK;
  t->eval_q = malloc(count * sizeof *t->eval_q);
  t->eval_at = malloc(count * sizeof *t->eval_at);
  if (!t->eval_q || !t->eval_at) return PS_ERR_NOMEM;
  for (size_t e = 0; e < count; e++) {
    double num = 0, den = 0, at = -INFINITY;
    for (uint32_t r = 0; r < n; r++)
      for (uint32_t i = 0; i < nodes[r].n_workers; i++) {
        const wl_eval_point *p = &nodes[r].workers[i].evals[e];
        num += p->q_num;
        den += p->q_den;
        at = fmax(at, p->at_s - t->run_start);
      }
    if (!(den > 0)) return PS_OK; /* one without held-out data: no points at all */
    t->eval_q[e] = quality_of(t, num, den);
    t->eval_at[e] = at;
  }
  t->n_evals = count;
  return PS_OK;
}

/* What locates a difference between backends: response times, handling,
 * CPU, summed over the nodes. */
static void telemetry_totals(run_totals *t, const run_node_report *node) {
  for (uint32_t s = 0; node->rt && s < node->n_rt; s++) ps_rt_stats_add(&t->rt, &node->rt[s]);
  const ps_server_load *l = &node->load;
  if (node->server) {
    t->servers++;
    t->server_busy_s += l->busy_s;
  }
  t->handled += l->handled;
  t->wakeups += l->wakeups;
  if (l->queue_max > t->queue_max) t->queue_max = l->queue_max;
  for (int b = 0; b < PS_QUEUE_BUCKETS; b++) t->queue_hist[b] += l->queue_hist[b];
  t->cpu_s += node->cpu_s;
  t->io_wakeups += node->io_wakeups;
  t->io_cpu_s += node->io_cpu_s;
  run_thread_sched_add(&t->io_sched, &node->io_sched);
  run_thread_sched_add(&t->worker_sched, &node->worker_sched);
}

static int totals_make(run_totals *t, const run_node_report *nodes, uint32_t n,
                       double time_s, const wl_quality *q) {
  *t = (run_totals){.time_s = time_s, .half_s = -INFINITY, .last_s = -INFINITY,
                    .has_q = q != NULL,
                    .reports = nodes, .n_reports = n};
  if (q) t->q = *q;
  for (uint32_t r = 0; r < n; r++) {
    const run_node_report *node = &nodes[r];
    for (uint32_t i = 0; i < node->n_workers; i++) {
      const run_worker_report *w = &node->workers[i];
      t->steps += w->steps;
      /* a worker's half comes no sooner than its start: a report without
       * one has NaN (or, made by hand, 0) */
      if (!(w->half_s >= w->start_s)) t->half_missing = true;
      else if (w->half_s > t->half_s) t->half_s = w->half_s;
      if (!(w->last_s >= w->start_s)) t->last_missing = true;
      else if (w->last_s > t->last_s) t->last_s = w->last_s;
      t->accesses += w->accesses;
      t->pushed_floats += w->pushed_floats;
      t->pushed_sum += w->pushed_sum;
      t->samples += w->samples;
      t->workers++;
      t->wait_sum += w->wait_s;
      t->op_wait_sum += w->op_wait_s;
      t->clock_waits += w->clock_waits;
      for (int g = 0; g < PS_CLOCK_BUCKETS; g++) {
        t->gap_hist[g] += (double)w->gap_hist[g];
        t->gated += w->gap_hist[g];
        t->gap_sum += (uint64_t)g * w->gap_hist[g];
      }
      if (!w->samples) continue;
      t->samplers++;
      t->tv_sum += w->sample_tv_distance;
      t->reuse_sum += w->sample_reuse_factor;
    }
    ps_node_stats_add(&t->nodes, &node->stats);
    t->owned_sum += node->owned_sum;
    t->in_transfer += node->in_transfer;
    t->replicas_checked += node->replicas_checked;
    t->replica_max_diff = fmax(t->replica_max_diff, node->replica_max_diff);
    t->dropped += node->dropped;
    t->throttling += node->throttling;
    t->throttled += node->throttled;
    t->throttle_s += node->throttle_s;
    telemetry_totals(t, node);
  }
  for (int g = 0; g < PS_CLOCK_BUCKETS; g++)
    t->stale_hist[g] = (double)t->nodes.bounded_staleness_hist[g];
  int rc = epoch_times(t, nodes, n);
  if (rc == PS_OK) rc = stage_totals(t, nodes, n);
  if (rc == PS_OK) rc = eval_points(t, nodes, n);
  return rc == PS_OK ? epoch_quality(t, nodes, n) : rc;
}

static void totals_free(run_totals *t) {
  free(t->stages);
  free(t->epochs);
  free(t->epoch_ends);
  free(t->loss);
  free(t->quality);
  free(t->eval_q);
  free(t->eval_at);
}

/* ---------------------------------------------------------- the values */

#define SCALAR(fn, expr)                                        \
  static bool fn(const run_totals *t, double *out) {           \
    *out = (expr);                                             \
    return true;                                               \
  }
#define SCALAR_IF(fn, cond, expr)                               \
  static bool fn(const run_totals *t, double *out) {           \
    if (!(cond)) return false;                                 \
    *out = (expr);                                             \
    return true;                                               \
  }

static double touched(const run_totals *t) {
  return (double)(t->nodes.local_accesses + t->nodes.remote_accesses);
}

SCALAR(v_time, t->time_s)
SCALAR_IF(v_half_time, !t->half_missing && t->workers > 0, t->half_s)
SCALAR_IF(v_last_step, !t->last_missing && t->workers > 0, t->last_s)
SCALAR(v_steps, (double)t->steps)
SCALAR(v_steps_per_s, t->time_s > 0 ? (double)t->steps / t->time_s : 0)
SCALAR(v_accesses, (double)t->accesses)
SCALAR(v_local_ratio, touched(t) > 0 ? (double)t->nodes.local_accesses / touched(t) : 0)
SCALAR(v_messages, (double)t->nodes.messages_sent)
SCALAR(v_bytes, (double)t->nodes.bytes_sent)
SCALAR(v_relocations, (double)t->nodes.relocations)
SCALAR(v_replica_syncs, (double)t->nodes.replica_syncs)
SCALAR_IF(v_sync_rounds, t->nodes.sync_rounds, (double)t->nodes.sync_rounds)
SCALAR_IF(v_stale_mean_s, t->nodes.replica_reads,
          t->nodes.staleness_sum_s / (double)t->nodes.replica_reads)
SCALAR_IF(v_stale_p99_s, t->nodes.replica_reads,
          ps_staleness_quantile(t->nodes.staleness_hist, 0.99))
SCALAR_IF(v_stale_max_s, t->nodes.replica_reads, t->nodes.staleness_max_s)
SCALAR_IF(v_stale_mean_steps, t->nodes.replica_reads,
          (double)t->nodes.staleness_sum_steps / (double)t->nodes.replica_reads)
SCALAR_IF(v_stale_p99_steps, t->nodes.replica_reads,
          ps_staleness_steps_quantile(t->nodes.staleness_steps_hist, 0.99))
SCALAR_IF(v_stale_max_steps, t->nodes.replica_reads, (double)t->nodes.staleness_max_steps)
SCALAR(v_pushed_floats, (double)t->pushed_floats)
SCALAR_IF(v_value_sum, !t->in_transfer, t->owned_sum)
SCALAR_IF(v_pushed_sum, t->epochs_q, t->pushed_sum)
SCALAR_IF(v_value_sum_unreadable, t->in_transfer, (double)t->in_transfer)
SCALAR_IF(v_replica_max_diff, t->replicas_checked, t->replica_max_diff)
SCALAR_IF(v_samples, t->samplers, (double)t->samples)
SCALAR_IF(v_sample_tv, t->samplers, t->tv_sum / t->samplers)
SCALAR_IF(v_sample_reuse, t->samplers, t->reuse_sum / t->samplers)
SCALAR_IF(v_bad_messages, t->dropped, (double)t->dropped)
SCALAR_IF(v_throttled, t->throttling, (double)t->throttled)
SCALAR_IF(v_throttle_s, t->throttling, t->throttle_s)
SCALAR_IF(v_duplicates, t->nodes.duplicates, (double)t->nodes.duplicates)
SCALAR_IF(v_out_of_sequence, t->nodes.out_of_sequence, (double)t->nodes.out_of_sequence)
SCALAR_IF(v_hop_drops, t->nodes.hop_drops, (double)t->nodes.hop_drops)
SCALAR_IF(v_bad_seals, t->nodes.bad_seals, (double)t->nodes.bad_seals)
SCALAR_IF(v_wait, t->gated, t->wait_sum / t->workers)
SCALAR_IF(v_op_wait, t->workers && t->steps, t->op_wait_sum / t->workers)
SCALAR_IF(v_clock_waits, t->gated, (double)t->clock_waits)
SCALAR_IF(v_gap_mean, t->gated, (double)t->gap_sum / (double)t->gated)
SCALAR_IF(v_read_stale_mean, t->nodes.bounded_reads,
          (double)t->nodes.bounded_staleness_sum / (double)t->nodes.bounded_reads)
SCALAR_IF(v_read_stale_max, t->nodes.bounded_reads, (double)t->nodes.bounded_staleness_max)
SCALAR_IF(v_cache_hits, t->nodes.cache_reads + t->nodes.cache_misses,
          (double)t->nodes.cache_reads /
              (double)(t->nodes.cache_reads + t->nodes.cache_misses))
SCALAR_IF(v_clock_messages, t->gated, (double)t->nodes.clock_messages)
SCALAR_IF(v_refreshes, t->nodes.refreshes, (double)t->nodes.refreshes)
/* Percentiles are bucket bounds: never past the largest seen. */
SCALAR_IF(v_rt_p50, t->rt.count, fmin(ps_rt_quantile(t->rt.hist, 0.5), t->rt.max_s))
SCALAR_IF(v_rt_p99, t->rt.count, fmin(ps_rt_quantile(t->rt.hist, 0.99), t->rt.max_s))
SCALAR_IF(v_utilization, t->servers && t->time_s > 0,
          t->server_busy_s / ((double)t->servers * t->time_s))
SCALAR_IF(v_queue_p50, t->handled,
          fmin(ps_queue_quantile(t->queue_hist, 0.5), (double)t->queue_max))
SCALAR_IF(v_queue_p99, t->handled,
          fmin(ps_queue_quantile(t->queue_hist, 0.99), (double)t->queue_max))
SCALAR_IF(v_per_wakeup, t->wakeups, (double)t->handled / (double)t->wakeups)
SCALAR_IF(v_per_io_wakeup, t->io_wakeups > 0, (double)t->handled / t->io_wakeups)
SCALAR_IF(v_io_turn, t->io_sched.turns > 0, t->io_sched.ran_s / t->io_sched.turns)
SCALAR_IF(v_io_run_wait, t->io_sched.turns > 0, t->io_sched.wait_s / t->io_sched.turns)
SCALAR_IF(v_worker_turn, t->worker_sched.turns > 0, t->worker_sched.ran_s / t->worker_sched.turns)
SCALAR_IF(v_worker_run_wait, t->worker_sched.turns > 0,
          t->worker_sched.wait_s / t->worker_sched.turns)
SCALAR_IF(v_worker_blocked, t->worker_sched.turns > 0 && t->workers,
          t->worker_sched.blocked_s / t->workers)
SCALAR(v_cpu, t->cpu_s)
SCALAR_IF(v_io_cpu, t->io_cpu_s > 0, t->io_cpu_s)
SCALAR_IF(v_shared, t->nodes.shared_accesses + t->nodes.shared_handled > 0,
          (double)(t->nodes.shared_accesses + t->nodes.shared_handled))
SCALAR_IF(v_cpu_per_message, t->nodes.messages_sent, t->cpu_s / (double)t->nodes.messages_sent)
static size_t v_gap_hist(const run_totals *t, const double **out) {
  *out = t->gap_hist;
  return t->gated ? PS_CLOCK_BUCKETS : 0;
}
static size_t v_stale_hist(const run_totals *t, const double **out) {
  *out = t->stale_hist;
  return t->nodes.bounded_reads ? PS_CLOCK_BUCKETS : 0;
}

static size_t v_epoch_times(const run_totals *t, const double **out) {
  *out = t->epochs;
  return t->n_epochs;
}

static size_t v_epoch_ends(const run_totals *t, const double **out) {
  *out = t->epoch_ends;
  return t->epochs_q ? t->n_epochs : 0; /* for quality against time */
}

static size_t v_epoch_loss(const run_totals *t, const double **out) {
  *out = t->loss;
  return t->epochs_q;
}

static size_t v_epoch_quality(const run_totals *t, const double **out) {
  *out = t->quality;
  return t->n_quality;
}

static size_t v_eval_quality(const run_totals *t, const double **out) {
  *out = t->eval_q;
  return t->n_evals;
}

static size_t v_eval_ends(const run_totals *t, const double **out) {
  *out = t->eval_at;
  return t->n_evals;
}

SCALAR_IF(v_loss, t->epochs_q, t->loss[t->epochs_q - 1])
/* The final evaluation's (the owners' values once quiet), else the last
 * epoch's. */
SCALAR_IF(v_quality, t->n_quality, t->has_final ? t->final_q : t->quality[t->n_quality - 1])
SCALAR_IF(v_eval_s, t->epochs_q, t->eval_s)
SCALAR_IF(v_eval_replica_share, t->eval_keys,
          (double)t->eval_replica_keys / (double)t->eval_keys)

static bool reaches(const run_totals *t, double v) { /* a NaN (diverged) never does */
  return t->q.higher_better ? v >= t->q.target : v <= t->q.target;
}

/* The training time of the first evaluation whose quality reaches the
 * target (of the epochs' when the reports have no evaluation points); else
 * time_s, when the final evaluation reaches it. */
static bool v_time_to_quality(const run_totals *t, double *out) {
  if (!t->n_quality || !t->q.has_target) return false;
  bool epochs = !t->n_evals && t->n_quality <= t->n_epochs;
  const double *q = epochs ? t->quality : t->eval_q, *at = epochs ? t->epoch_ends : t->eval_at;
  for (size_t e = 0; e < (epochs ? t->n_quality : t->n_evals); e++)
    if (reaches(t, q[e])) {
      *out = at[e];
      return true;
    }
  if (!t->has_final || !reaches(t, t->final_q)) return false;
  *out = t->time_s;
  return true;
}

static bool add_number(cJSON *o, const char *name, double v) {
  return cJSON_AddNumberToObject(o, name, v) != NULL;
}

static bool v_stages(const run_totals *t, cJSON *list) {
  for (size_t k = 0; k < t->n_stages; k++) {
    const struct stage_total *st = &t->stages[k];
    bool active = st->workers > 0;
    double time = active ? st->end - st->start : 0;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(list, o)) {
      cJSON_Delete(o);
      return false;
    }
    if (!add_number(o, "stage", (double)k) || !add_number(o, "workers", st->workers) ||
        !add_number(o, "steps", (double)st->steps) || !add_number(o, "time_s", time) ||
        !add_number(o, "steps_per_s", time > 0 ? (double)st->steps / time : 0) ||
        !add_number(o, "wait_s", active ? st->wait_sum / st->workers : 0) ||
        !add_number(o, "start_s", active ? st->start - t->run_start : 0) ||
        !add_number(o, "end_s", active ? st->end - t->run_start : 0))
      return false;
  }
  return true;
}

#define SERVER_SERIES_MAX 64 /* buckets of keys_per_s: a readable line */

/* One object per server: what it served, how busy the backend saw it, and
 * the response times every client saw from it; keys served per second over
 * time in buckets of one width for all (the widest any server used, doubled
 * until at most SERVER_SERIES_MAX buckets cover the run). */
static bool v_servers(const run_totals *t, cJSON *list) {
  double width = 0, span = 0;
  uint32_t n_servers = 0;
  for (uint32_t r = 0; r < t->n_reports; r++) {
    const run_node_report *x = &t->reports[r];
    if (x->server && x->bucket_s > width) width = x->bucket_s;
    if (x->server && x->n_series * x->bucket_s > span) span = x->n_series * x->bucket_s;
    if (x->n_rt > n_servers) n_servers = x->n_rt;
  }
  while (width > 0 && span / width > SERVER_SERIES_MAX * (1 + 1e-9)) width *= 2;
  for (uint32_t s = 0; s < t->n_reports && s < n_servers; s++) {
    const run_node_report *x = &t->reports[s];
    if (!x->server) continue;
    ps_rt_stats rt = {0};
    for (uint32_t r = 0; r < t->n_reports; r++)
      if (s < t->reports[r].n_rt) ps_rt_stats_add(&rt, &t->reports[r].rt[s]);
    const ps_server_load *l = &x->load;
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(list, o)) {
      cJSON_Delete(o);
      return false;
    }
    double rt_mean = rt.count ? rt.sum_s / (double)rt.count : 0;
    /* a percentile is a bucket's bound: never past the largest seen */
    double p50 = fmin(ps_rt_quantile(rt.hist, 0.5), rt.max_s);
    double p99 = fmin(ps_rt_quantile(rt.hist, 0.99), rt.max_s);
    if (!add_number(o, "node", s) ||
        !add_number(o, "messages", (double)x->stats.messages_received) ||
        !add_number(o, "keys", (double)l->keys) || !add_number(o, "floats", (double)l->floats) ||
        !add_number(o, "owned_keys", (double)x->owned_keys) ||
        !add_number(o, "busy_s", l->busy_s) ||
        !add_number(o, "utilization", t->time_s > 0 ? l->busy_s / t->time_s : 0) ||
        !add_number(o, "queue_mean", l->handled ? (double)l->queue_sum / (double)l->handled : 0) ||
        !add_number(o, "queue_max", (double)l->queue_max) ||
        !add_number(o, "replies", (double)rt.count) || !add_number(o, "rt_mean_s", rt_mean) ||
        !add_number(o, "rt_p50_s", p50) || !add_number(o, "rt_p99_s", p99) ||
        !add_number(o, "rt_max_s", rt.max_s) || !add_number(o, "bucket_s", width))
      return false;
    cJSON *series = cJSON_AddArrayToObject(o, "keys_per_s");
    if (!series) return false;
    size_t f = x->bucket_s > 0 ? (size_t)(width / x->bucket_s + 0.5) : 1; /* a power of 2 */
    if (f == 0) f = 1;
    for (size_t j = 0; j * f < x->n_series; j++) {
      uint64_t sum = 0;
      for (size_t i = j * f; i < (j + 1) * f && i < x->n_series; i++) sum += x->series[i];
      if (!cJSON_AddItemToArray(series, cJSON_CreateNumber((double)sum / width))) return false;
    }
  }
  return true;
}

/* ------------------------------------------------------------- the table */

#define BOTH (RUN_SHOW_TABLE | RUN_SHOW_SUMMARY)
#define SUMMARY RUN_SHOW_SUMMARY
#define MEAN RUN_COMBINE_MEAN
#define SUM RUN_COMBINE_SUM
#define MAX RUN_COMBINE_MAX
#define REPLICAS "with replicas (some read was served by a replica)"
#define SAMPLING "when the workload samples"
#define WITH_MATH "with real math (mf, kge, w2v, dnn)"
#define WITH_QUALITY "with real math and held-out data"
#define BOUNDED "with bounded consistency (bsp, ssp, essp, sparse)"
#define COPIES "with bounded consistency, when a read was served by a copy (cache or replica)"

static const run_metric table[] = {
    {"time_s", "s", "time",
     "Simulated time until every worker was done and no message was in flight; on the "
     "real backend, wall-clock seconds from the start barrier to the end barrier, "
     "measured on rank 0.", NULL, MEAN, false, BOTH, v_time, NULL, NULL},
    {"epoch_time_s", "s", "epoch time",
     "One value per epoch: the epoch's duration, from the end of the one before to the "
     "end of its slowest worker.", NULL, MEAN, true, 0, NULL, v_epoch_times, NULL},
    {"steps", "", "steps", "Steps run by all workers.", NULL, MEAN, false, SUMMARY,
     v_steps, NULL, NULL},
    {"steps_per_s", "steps/s", "throughput", "`steps / time_s`.", NULL, MEAN, false, BOTH,
     v_steps_per_s, NULL, NULL},
    {"half_time_s", "s", "time at half the steps",
     "When every worker had run half the run's steps per worker: the latest over the "
     "workers of the end of its middle step (its push sent; for an odd count, midway "
     "between the ends of the two middle steps), on `time_s`'s clock. With `last_step_s`, "
     "the second half's pace, without what a run pays once at its start or end (`pslab "
     "advise` measures a prefix's extrapolation error by them).",
     "without stages, when every worker ran at least half the steps per worker (not a "
     "trace whose recorded workers ran fewer)", MEAN, false, 0, v_half_time, NULL, NULL},
    {"last_step_s", "s", "time at the last step",
     "When every worker had run all the run's steps per worker: the latest over the "
     "workers of the end of its last step (its push sent, as for `half_time_s`); "
     "`time_s` less the time the run then takes to go quiet (the last pushes applied, "
     "the messages in flight).",
     "without stages, when every worker ran the run's steps per worker (not a trace whose "
     "recorded workers ran fewer)", MEAN, false, 0, v_last_step, NULL, NULL},
    {"accesses", "", "key accesses",
     "Keys read plus keys written (a sampled key counts as both).", NULL, MEAN, false,
     SUMMARY, v_accesses, NULL, NULL},
    {"local_ratio", "share", "local accesses",
     "Share of key accesses served from the worker's own node's memory.", NULL, MEAN,
     false, SUMMARY, v_local_ratio, NULL, NULL},
    {"messages", "", "messages", "Messages sent by all nodes.", NULL, MEAN, false, SUMMARY,
     v_messages, NULL, NULL},
    {"bytes", "B", "bytes sent", "Bytes sent by all nodes (encoded messages).", NULL, MEAN,
     false, SUMMARY, v_bytes, NULL, NULL},
    {"relocations", "", "relocations", "Keys that moved to another node.", NULL, MEAN,
     false, SUMMARY, v_relocations, NULL, NULL},
    {"replica_syncs", "", "replica keys synced",
     "Replica keys sent in sync rounds (0 without replicas).", NULL, MEAN, false, SUMMARY,
     v_replica_syncs, NULL, NULL},
    {"sync_rounds", "", "sync rounds",
     "Sync rounds of replicas the policy ran (by time, `syncs_per_sec`, or by steps, "
     "`syncs_per_step`), summed over nodes; the first comes one interval in, and the "
     "deltas handed on at the run's end are not a round.",
     "when a sync round ran", MEAN, false, 0, v_sync_rounds, NULL, NULL},
    {"staleness_mean_s", "s", "replica staleness",
     "Mean over replica reads of the age of what the replica had not applied yet: the "
     "read's time minus the time it holds every other node's push before (through the "
     "owner: when the owner sent the value it holds; all-reduce: the oldest of the "
     "newest DELTAs from the nodes still sending, an idle round or a node's end saying it is not; "
     "before any, the run's start), so the "
     "sync interval, latency and queueing all count. The "
     "sending node's time: on the real backend, node clocks start at the start "
     "release, within a message's latency of each other.",
     REPLICAS, MEAN, false, SUMMARY, v_stale_mean_s, NULL, NULL},
    {"staleness_p99_s", "s", "replica staleness (p99)",
     "The 99th percentile of the same (a histogram bucket's upper bound: a power of two "
     "in microseconds).", REPLICAS, MEAN, false, 0, v_stale_p99_s, NULL, NULL},
    {"staleness_max_s", "s", "replica staleness (max)", "The largest of the same.",
     REPLICAS, MAX, false, 0, v_stale_max_s, NULL, NULL},
    {"staleness_mean_steps", "steps", "replica staleness",
     "Mean over replica reads of the same in the reader's own steps: how many steps the "
     "reading worker ended in that interval (since the time the replica holds every other "
     "node's push before), so latency and queueing count in the steps the reader took "
     "meanwhile, whatever pace the other nodes keep. Exact over a reader's last 1024 "
     "steps; further back to within 64 steps, never more than it took.",
     REPLICAS, MEAN, false, 0, v_stale_mean_steps, NULL, NULL},
    {"staleness_p99_steps", "steps", "replica staleness (p99)",
     "The 99th percentile of the same (a histogram bucket's largest count: one less than "
     "a power of two; 0 for 0 steps).", REPLICAS, MEAN, false, 0, v_stale_p99_steps,
     NULL, NULL},
    {"staleness_max_steps", "steps", "replica staleness (max)", "The largest of the same.",
     REPLICAS, MAX, false, 0, v_stale_max_steps, NULL, NULL},
    {"pushed_floats", "", "floats pushed",
     "Floats pushed by all workers: without real math (zipf, trace, `\"math\": \"none\"`) "
     "what every value summed must come to, since each push then adds 1.0 per float.",
     NULL, MEAN, false, 0, v_pushed_floats, NULL, NULL},
    {"value_sum", "", "sum of all values",
     "Every value summed over the nodes that own it (the stored part: initial values are "
     "not stored); without real math it equals `pushed_floats` when no push was lost or "
     "doubled.", "once no key is in transfer (every run that ends)",
     MEAN, false, 0, v_value_sum, NULL, NULL},
    {"pushed_sum", "", "sum of the floats pushed",
     "Every float pushed by all workers (the deltas of real math), summed: what `value_sum` "
     "must come to, up to float rounding, when no push was lost or doubled.", WITH_MATH,
     MEAN, false, 0, v_pushed_sum, NULL, NULL},
    {"value_sum_unreadable", "", "keys in transfer",
     "Instead of `value_sum`: keys still in transfer when the run ended (never once a "
     "run is quiet).", "when keys were still in transfer", MAX, false, 0,
     v_value_sum_unreadable, NULL, NULL},
    {"replica_max_diff", "", "replica difference (max)",
     "Once the run is quiet, every all-reduce replica compared with its owner's value: "
     "the largest difference, relative to the larger of the two values' largest "
     "magnitudes. Only float rounding of deltas summed in a different order on each "
     "node (at most 1e-5); exactly 0 without real math, whose pushes are integers. "
     "A delta lost or counted twice by a replica shows here, where `value_sum` (owned "
     "copies only) misses it. Replicas synced through their owner are not compared: "
     "they differ from its final value by design.",
     "with all-reduce replicas", MAX, false, 0, v_replica_max_diff, NULL, NULL},
    {"samples", "", "samples", "Keys sampled (each read, then pushed as a write).",
     SAMPLING, MEAN, false, 0, v_samples, NULL, NULL},
    {"sample_tv_distance", "", "distance from the sample distribution",
     "Total variation distance between the samples handed out and the intended "
     "distribution, mean over workers (0: exact; even a perfect sampler shows about "
     "0.4 sqrt(keys / samples)).", SAMPLING, MEAN, false, SUMMARY, v_sample_tv, NULL, NULL},
    {"sample_reuse_factor", "", "sample reuse",
     "Samples handed out per distinct draw used, mean over workers (1: no reuse).",
     SAMPLING, MEAN, false, SUMMARY, v_sample_reuse, NULL, NULL},
    {"bad_messages", "", "bad messages",
     "Frames dropped because they failed to decode or validate, or came from a process "
     "that is not a node of the run (each is logged).",
     "on the real backend, when some were dropped", RUN_COMBINE_SUM, false, SUMMARY,
     v_bad_messages, NULL, NULL},
    {"throttled_messages", "", "throttled messages",
     "Data messages the real backend's straggler emulation delayed: handled by a slowed "
     "server, or sent or received over a slowed link, inside a phase (summed over nodes).",
     "on the real backend, with cluster.stragglers", MEAN, false, 0, v_throttled, NULL, NULL},
    {"throttle_s", "s", "throttle time",
     "Time the real backend's straggler emulation added, summed over nodes and threads: its "
     "sleeps (slowed servers and links) and the stretch of slowed workers' compute.",
     "on the real backend, with cluster.stragglers", MEAN, false, 0, v_throttle_s, NULL,
     NULL},
    {"loss", "", "training loss",
     "The last epoch's training loss, per example (the task's own loss: squared error "
     "for mf, logistic loss of positives and negatives for kge and w2v, squared error "
     "averaged over the outputs for dnn).", WITH_MATH,
     MEAN, false, BOTH, v_loss, NULL, NULL},
    {"epoch_loss", "", "training loss",
     "One value per epoch: the epoch's training loss summed over every worker's examples, "
     "per example.", WITH_MATH, MEAN, true, 0, NULL, v_epoch_loss, NULL},
    {"quality", "", "quality",
     "The held-out quality of the model as a whole at the run's end: once the run is quiet "
     "(replicas' last deltas handed on to their owners), the whole held-out data evaluated "
     "on the owners' values (never a replica's), at `time_s`. RMSE (mf, lower is better), "
     "filtered or sampled MRR or Hits@10 (kge, `workload.eval`), Spearman's rho or analogy "
     "accuracy (w2v), MSE (dnn, lower is better), as `workload.quality` or the workload's "
     "default says. Without that evaluation (a diverged model), the last epoch's.",
     WITH_QUALITY, MEAN, false, BOTH, v_quality, NULL, NULL},
    {"epoch_quality", "", "quality",
     "One value per epoch: the held-out quality after the epoch, every worker evaluating "
     "its share of the held-out data at its own epoch's end, reading what its node holds "
     "(`eval_replica_share`).", WITH_QUALITY, MEAN, true, 0, NULL, v_epoch_quality, NULL},
    {"epoch_end_s", "s", "training time",
     "One value per epoch: when its slowest worker finished it, from the run's start, "
     "not counting time spent evaluating (the x of quality against time).", WITH_MATH,
     MEAN, true, 0, NULL, v_epoch_ends, NULL},
    {"eval_quality", "", "quality",
     "One value per evaluation during training: at each epoch's end and every "
     "`workload.eval_every` between, every worker evaluating its share of the held-out data "
     "as for `epoch_quality` (the same values where there is no `eval_every`).",
     WITH_QUALITY, MEAN, true, 0, NULL, v_eval_quality, NULL},
    {"eval_end_s", "s", "training time",
     "One value per evaluation of `eval_quality`: when its slowest worker made it, from the "
     "run's start, not counting time spent evaluating (the x of quality against time).",
     WITH_QUALITY, MEAN, true, 0, NULL, v_eval_ends, NULL},
    {"time_to_quality_s", "s", "time to quality",
     "`eval_end_s` of the first evaluation whose quality reaches `workload.target_quality` "
     "(as precise as `workload.eval_every`); else `time_s` when the final `quality` does.",
     "when the spec sets workload.target_quality and a run reaches it", MEAN, false, BOTH,
     v_time_to_quality, NULL, NULL},
    {"eval_s", "s", "evaluation time",
     "The most time one worker spent evaluating held-out data during training (included in "
     "`time_s`, left out of `epoch_end_s` and `eval_end_s`; the final evaluation, made once "
     "the run is quiet, is in neither).", WITH_MATH, MAX, false, 0, v_eval_s, NULL, NULL},
    {"eval_replica_share", "", "evaluation reads from replicas",
     "Which model the evaluations during training saw (`epoch_quality`, `eval_quality`): "
     "the share of their key reads served by the evaluating node's own replicas rather than "
     "by the keys' owners (0: owners only, the model as a whole). A replica holds its node's "
     "updates and what the last sync round brought; with `syncs_per_sec: 0` only its own "
     "node's, so those points then measure each node's local model, not the model as a "
     "whole. The final `quality` always reads the owners.",
     "with real math and held-out data", MEAN, false, 0, v_eval_replica_share, NULL, NULL},
    {"duplicates", "", "duplicate messages",
     "Messages a core refused because their channel number was taken before (a duplicate "
     "or a replay).", "when some were refused", SUM, false, 0, v_duplicates, NULL, NULL},
    {"out_of_sequence", "", "messages out of sequence",
     "Messages a core refused because their channel number skipped one: forged, or one "
     "before them was lost.", "when some were refused",
     SUM, false, 0, v_out_of_sequence, NULL, NULL},
    {"hop_drops", "", "operations dropped in a loop",
     "Operations dropped after being forwarded PS_MAX_HOPS (64) times: a forwarding loop.",
     "when some were dropped", SUM, false, 0, v_hop_drops, NULL, NULL},
    {"bad_seals", "", "messages with a wrong seal",
     "Messages a core refused, before they took a channel number, because their seal did not "
     "match the run's secret and seal algorithm: not sent by a node of this run.",
     "when some were refused",
     SUM, false, 0, v_bad_seals, NULL, NULL},
    {"wait_s", "s", "clock wait",
     "Time a worker spent blocked at the clock bound (its clock more than `staleness` "
     "ahead of the slowest worker's), mean over workers.", BOUNDED, MEAN, false, SUMMARY,
     v_wait, NULL, NULL},
    {"clock_waits", "", "blocked steps", "Steps, over all workers, that blocked at the bound.",
     BOUNDED, MEAN, false, 0, v_clock_waits, NULL, NULL},
    {"clock_gap_mean", "clocks", "clock gap",
     "Mean over steps of how many clocks the worker was ahead of the slowest worker (as its "
     "node knew it) when the step started.", BOUNDED, MEAN, false, SUMMARY, v_gap_mean, NULL, NULL},
    {"clock_gap_hist", "", "clock gaps",
     "The same as a histogram: element i counts steps that started i clocks ahead (the "
     "last element: 16 or more). Not a per-epoch list.", BOUNDED, SUM, true, 0, NULL,
     v_gap_hist, NULL},
    {"read_staleness_mean_clocks", "clocks", "staleness read",
     "Mean over reads served by a copy (the node's cache or a replica) of the reader's "
     "clock minus the clock the copy holds every write before: the staleness actually "
     "read, at most `staleness`.", COPIES, MEAN, false, SUMMARY, v_read_stale_mean, NULL, NULL},
    {"read_staleness_max_clocks", "clocks", "staleness read (max)", "The largest of the same.",
     COPIES, MAX, false, 0, v_read_stale_max, NULL, NULL},
    {"read_staleness_hist", "", "staleness read",
     "The same as a histogram: element i counts reads i clocks stale (the last: 16 or "
     "more). Not a per-epoch list.", COPIES, SUM, true, 0, NULL, v_stale_hist, NULL},
    {"cache_hit_ratio", "share", "cache hits",
     "Share of reads of keys neither owned nor replicated on the reader's node that its "
     "cache served (the rest were fetched from the owner).",
     "with bounded consistency, when a read needed another node", MEAN, false, 0,
     v_cache_hits, NULL, NULL},
    {"clock_messages", "", "clock messages",
     "CLOCK messages sent (a node tells every other its clock when its slowest worker's "
     "advances).", BOUNDED, MEAN, false, 0, v_clock_messages, NULL, NULL},
    {"refreshes", "", "values refreshed",
     "ESSP: keys whose fresh value an owner sent to a node caching them, at clock ends.",
     "with essp", MEAN, false, 0, v_refreshes, NULL, NULL},
    {"stages", "", "stages",
     "One object per stage, in order: `stage` (its index), `workers` (its active "
     "workers), `steps` (theirs, summed), `time_s` (from the first start of one of its "
     "steps to the end of its last), `steps_per_s` (`steps / time_s`), `wait_s` (mean over "
     "its active workers of the time each spent blocked, at the consistency bound and at "
     "the stage's closing barrier), `start_s` and `end_s` (from the run's start). A stage "
     "whose spec said `\"workers\": \"auto\"` also has `auto`: `candidates` (the worker "
     "counts simulated), `prefix_steps` (per worker, for each), `estimated_s` (each one's "
     "estimate of the stage's time) and `chosen`.",
     "with stages", MEAN, true, 0, NULL, NULL, v_stages},
    {"servers", "", "servers",
     "One object per server (every node, co-located): `node`; `messages` (messages it "
     "handled), `keys` and `floats` (key operations it served, as owner, for requests that "
     "came in messages); `owned_keys` (keys it owns when the run ends: summed over the servers, "
     "the workload's keys when each is on exactly one); `busy_s` (time handling messages, as the backend reports it: "
     "simulated handling cost, or wall time in the receiver), `utilization` (`busy_s / "
     "time_s`); `queue_mean` and `queue_max` (messages waiting when one was handled, as the "
     "backend can tell: the simulator counts those sent to the server and not yet handled, "
     "on the wire or waiting; the real backend those its receiver read in the same pass, "
     "ZeroMQ's own queue unseen); `replies`, `rt_mean_s`, `rt_p50_s`, `rt_p99_s`, "
     "`rt_max_s` (response times every client saw from it, request sent to reply handled; "
     "percentiles are half-octave bucket bounds, at most the largest); `bucket_s` and `keys_per_s` (keys served "
     "per second in buckets of `bucket_s` from the run's start, one width for all servers, "
     "at most 64 buckets).",
     NULL, SUM, true, 0, NULL, NULL, v_servers},
    {"rt_p50_s", "s", "response time (p50)",
     "The median response time over every request of the run that had a reply (PULL_REPLY, "
     "WRITE_ACK), request sent to reply handled, at the requesting node's clock: the "
     "`servers` histograms summed (a half-octave bucket's upper bound, at most the "
     "largest).", "when some request had a reply", MEAN, false, 0, v_rt_p50, NULL, NULL},
    {"rt_p99_s", "s", "response time (p99)", "The 99th percentile of the same.",
     "when some request had a reply", MEAN, false, 0, v_rt_p99, NULL, NULL},
    {"utilization", "share", "server utilization",
     "Servers' busy time summed over the servers, divided by servers x `time_s`: the mean "
     "of `servers[].utilization` (busy time as the backend reports it: simulated handling "
     "cost, or wall time in the thread that handled the message).", NULL, MEAN, false, 0,
     v_utilization, NULL, NULL},
    {"queue_p50", "", "messages waiting (p50)",
     "Over every message a node handled (requests on servers, replies on clients), the "
     "median of the messages waiting behind it for that node when it was handled, as the "
     "backend can tell: the real backend counts the frames its reading thread took from "
     "the socket in the same pass and had not handled yet (ZeroMQ's and the kernel's "
     "queues unseen); the simulator those that had reached the node and waited. A count, "
     "not a time: a frame's wait inside ZeroMQ is not visible without a timestamp on "
     "the wire. Exact below 16, above it the largest count of an octave bucket, at most "
     "the largest seen.", "when some message was handled", MEAN, false, 0, v_queue_p50,
     NULL, NULL},
    {"queue_p99", "", "messages waiting (p99)", "The 99th percentile of the same.",
     "when some message was handled", MEAN, false, 0, v_queue_p99, NULL, NULL},
    {"messages_per_wakeup", "", "messages per wake-up",
     "Messages the nodes handled, divided by the times the thread handling a node's "
     "messages had found nothing waiting, slept and woke for a message (summed over the "
     "nodes): 1 when every message finds its node idle, more when messages come in bursts "
     "or queue.", "when the backend counted wake-ups", MEAN, false, 0, v_per_wakeup, NULL,
     NULL},
    {"messages_per_io_wakeup", "", "messages per I/O wake-up",
     "Messages the nodes handled, divided by the times their I/O threads (ZeroMQ's; the "
     "simulator's I/O actors) had nothing to do, slept and woke (summed over the nodes): "
     "how much the I/O threads batch, which the thread they pass messages to does not "
     "show.", "when the backend has I/O threads (the simulator: with placement)", MEAN, false,
     0, v_per_io_wakeup, NULL, NULL},
    {"cpu_s", "s", "CPU time",
     "CPU seconds spent by all nodes over the run. Real backend: each node process's CPU "
     "time (user and system, every thread: workers, the reading thread, ZeroMQ's I/O "
     "thread, and the kernel's work for them) from its start barrier to its report. "
     "Simulator: the node's actors' cost-model charges (handling, sending, local "
     "accesses) plus the workers' flops at `host_speed`.", NULL, MEAN, false, 0, v_cpu,
     NULL, NULL},
    {"io_cpu_s", "s", "I/O threads' CPU time",
     "CPU seconds the nodes' I/O threads spent over the run, summed: the part of `cpu_s` "
     "that moves bytes between the sockets and the threads that read and write messages. "
     "Real backend: ZeroMQ's I/O thread of each node process (the kernel's per-thread "
     "schedstat, from the start release to the report). Simulator: its I/O actors' "
     "charges (`io_per_message_s` a message at each end, `io_wakeup_s` per peer a batch "
     "serves).", "when the backend has I/O threads (the simulator: with placement)", MEAN,
     false, 0, v_io_cpu, NULL, NULL},
    {"io_turn_s", "s", "I/O threads' time a turn",
     "Seconds the nodes' I/O threads ran each time they got a core (their CPU over their "
     "turns on a core, summed over the nodes): short when they wake for every message or "
     "two, long when they gather many. Real backend: the kernel's schedstat of ZeroMQ's I/O "
     "thread (time run, times scheduled in). Simulator: the I/O actors under the run queue "
     "(`cluster.machines.scheduler` `run_queue`).",
     "when measured (real: schedstat readable; simulator: run queue and I/O actors)", MEAN,
     false, 0, v_io_turn, NULL, NULL},
    {"io_run_wait_s", "s", "I/O threads' wait for a core",
     "Seconds the nodes' I/O threads waited runnable for a core each turn (their run-queue "
     "wait over their turns): how long a woken I/O thread waits while other threads hold "
     "the cores. Real backend: schedstat's run delay of ZeroMQ's I/O thread; on a virtual "
     "machine it also holds the time an idle virtual core takes to start. Simulator: the "
     "run queue's wait.",
     "when measured (real: schedstat readable; simulator: run queue and I/O actors)", MEAN,
     false, 0, v_io_run_wait, NULL, NULL},
    {"worker_turn_s", "s", "workers' time a turn",
     "Seconds the workers' threads ran each time they got a core (compute, operations, "
     "and the messages a waiting worker reads itself), over every worker of the run.",
     "when measured (real: schedstat readable; simulator: run queue)", MEAN, false, 0,
     v_worker_turn, NULL, NULL},
    {"worker_run_wait_s", "s", "workers' wait for a core",
     "Seconds the workers' threads waited runnable for a core each turn: after a wake-up, "
     "or put back in the queue while computing (a wait after a wake-up for an operation "
     "is also in `op_wait_s`): how much of a worker's time its machine's other threads "
     "take. Real backend: "
     "schedstat's run delay. Simulator: the run queue's wait.",
     "when measured (real: schedstat readable; simulator: run queue)", MEAN, false, 0,
     v_worker_run_wait, NULL, NULL},
    {"worker_blocked_s", "s", "workers' time asleep",
     "Seconds a worker's thread slept over its steps, mean over workers: its steps' wall "
     "time less what it ran and what it waited for a core. What it waited for messages (its "
     "operations' way through the other threads and nodes) and for the clock bound, apart "
     "from its waits for a core (`worker_run_wait_s`). Real backend: the wall time less "
     "schedstat's run time and run delay. Simulator: the same, counted by the run queue.",
     "when measured (real: schedstat readable; simulator: run queue)", MEAN, false, 0,
     v_worker_blocked, NULL, NULL},
    {"shared_accesses", "", "shared key accesses",
     "Key accesses that found their key last touched by another thread of the same node "
     "(another worker, or the thread that handled a message), summed over the nodes: "
     "their cache lines came from another core, which the simulator charges "
     "`cost.shared_per_key_s` and `cost.shared_per_byte_s` a byte. Counted by the "
     "simulator's cores when the cluster's costs charge them; the real backend does not "
     "count them (counting writes every key's entry).",
     "when counted (the simulator, with shared costs)", MEAN, false, 0, v_shared, NULL, NULL},
    {"cpu_per_message_s", "s", "CPU per message",
     "`cpu_s / messages` (compute included: a run without compute shows what its "
     "messages cost).", "when some message was sent", MEAN, false, 0, v_cpu_per_message,
     NULL, NULL},
    {"op_wait_s", "s", "waiting for operations",
     "Time a worker spent blocked waiting for its steps' pulls and pushes to complete (not "
     "evaluation's, not the clock bound's), mean over workers: with `time_s`, how a step's "
     "time splits into waiting for the servers and the worker's own work.",
     "when workers ran steps", MEAN, false, 0, v_op_wait, NULL, NULL},
    {"wall_s", "s", "wall time",
     "Wall-clock seconds the run took, start to end of its process (added by the "
     "runner).", NULL, MEAN, false, SUMMARY, NULL, NULL, NULL},
};

const run_metric *run_metric_table(size_t *count) {
  *count = sizeof table / sizeof table[0];
  return table;
}

const run_metric *run_metric_find(const char *name) {
  for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

/* ----------------------------------------------------------- the object */

static bool add_metric(cJSON *m, const run_metric *d, const run_totals *t) {
  double v;
  if (d->value) return !d->value(t, &v) || cJSON_AddNumberToObject(m, d->name, v);
  if (d->objects) {
    cJSON *list = cJSON_CreateArray();
    if (!list || !d->objects(t, list)) {
      cJSON_Delete(list);
      return false;
    }
    if (!list->child) { /* none: absent */
      cJSON_Delete(list);
      return true;
    }
    if (cJSON_AddItemToObject(m, d->name, list)) return true;
    cJSON_Delete(list);
    return false;
  }
  if (!d->values) return true;
  const double *vals;
  size_t n = d->values(t, &vals);
  if (n == 0 && d->when) return true; /* a list only some runs have: absent */
  cJSON *list = cJSON_AddArrayToObject(m, d->name);
  for (size_t i = 0; list && i < n; i++)
    if (!cJSON_AddItemToArray(list, cJSON_CreateNumber(vals[i]))) return false;
  return list != NULL;
}

cJSON *run_metrics(const run_node_report *nodes, uint32_t n, double time_s,
                   const wl_quality *quality, char *err, size_t errlen) {
  run_totals t;
  cJSON *m = NULL;
  if (totals_make(&t, nodes, n, time_s, quality) == PS_OK && (m = cJSON_CreateObject())) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
      if (add_metric(m, &table[i], &t)) continue;
      cJSON_Delete(m);
      m = NULL;
      break;
    }
  }
  totals_free(&t);
  if (!m) snprintf(err, errlen, "out of memory building the run's metrics");
  return m;
}
