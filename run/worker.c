/*
 * A run's workers: each one's stream and sampler, seeded by one contract,
 * and the shared worker loop driven with the backend's callbacks; with
 * stages, once per stage the worker is active in, through each stage's
 * closing barrier (run/stages.c made the plan; run.h says what it means).
 */
#include "run/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t run_worker_seed(uint64_t run_seed, uint32_t rank) {
  /* Distinct per worker, the same for a worker whichever backend runs it. */
  return ps_mix64(run_seed ^ ps_mix64((uint64_t)rank + 1));
}

int run_worker_init(run_worker *w, const run_setup *s, ps_node *core, uint32_t index,
                    char *err, size_t errlen) {
  const run_args *a = &s->args;
  uint32_t node = ps_node_id(core);
  /* Workers are numbered over the worker nodes (all nodes, co-located), and
   * the workload sees those nodes only: worker node wnode is this node. */
  uint32_t wnode = node - ps_layout_first_worker_node(&s->layout);
  *w = (run_worker){.node = node, .index = index, .rank = wnode * a->workers_per_node + index};
  w->handle = ps_node_worker(core, index);
  /* With stages, each stage makes the worker a stream of its own. */
  w->stream = s->n_stages ? NULL : wl_stream_new(s->wl, wnode, w->rank, a->seed);
  if (s->n_stages && !(w->stages = calloc(s->n_stages, sizeof *w->stages))) {
    snprintf(err, errlen, "worker %u.%u: out of memory", (unsigned)node, (unsigned)index);
    return -1;
  }
  w->n_stages = s->n_stages;
  if (!w->handle || (!w->stream && !s->n_stages)) {
    snprintf(err, errlen, "worker %u.%u: out of memory", (unsigned)node, (unsigned)index);
    return -1;
  }
  if (s->samples && !(w->sampler = ps_sampler_new(ps_policy_sampling(a->policy), w->handle,
                                                  s->samples,
                                                  run_worker_seed(a->seed, w->rank)))) {
    snprintf(err, errlen, "worker %u.%u: no sampler (out of memory)", (unsigned)node,
             (unsigned)index);
    return -1;
  }
  if (a->trace_path) {
    char *part = wl_trace_part_path(a->trace_path, w->rank);
    if (!part) {
      snprintf(err, errlen, "worker %u.%u: out of memory", (unsigned)node, (unsigned)index);
      return -1;
    }
    w->trace = wl_trace_writer_open(part, &s->layout, ps_layout_worker_nodes(&s->layout),
                                    run_setup_workers(s), w->rank, err, errlen);
    free(part);
    if (!w->trace) return -1;
  }
  return 0;
}

void run_worker_free(run_worker *w) {
  char ignored[8];
  wl_trace_writer_close(w->trace, false, ignored, sizeof ignored);
  wl_stream_free(w->stream);
  ps_sampler_free(w->sampler);
  free(w->stats.epoch_end_s);
  free(w->stats.epoch_quality);
  free(w->stats.evals);
  free(w->stages);
  *w = (run_worker){0};
}

/* --------------------------------------------------------------- stages */

/* The driver's lookahead: the policy's, or under SPARSE consistency its
 * own when longer (its intents tell who writes what). */
static uint32_t driver_lookahead(const run_setup *s, ps_consistency c) {
  uint32_t lookahead = s->settings.lookahead;
  if (c.model == PS_CONSISTENCY_SPARSE && c.lookahead > lookahead) lookahead = c.lookahead;
  return lookahead;
}


/* Adds one stage's driver statistics into the worker's (taking its epoch
 * lists). */
static int stats_add(wl_driver_stats *sum, wl_driver_stats *part) {
  int rc = PS_OK;
  double eval_before = sum->eval_s; /* the stage's times leave out earlier evaluations too */
  sum->steps += part->steps;
  sum->accesses += part->accesses;
  sum->samples += part->samples;
  sum->pushes += part->pushes;
  sum->pushed_floats += part->pushed_floats;
  sum->pushed_sum += part->pushed_sum;
  if (part->samples) { /* the sampler's figures cover every stage so far */
    sum->sample_tv_distance = part->sample_tv_distance;
    sum->sample_reuse_factor = part->sample_reuse_factor;
  }
  sum->eval_s += part->eval_s;
  sum->op_wait_s += part->op_wait_s;
  sum->wait_s += part->wait_s;
  sum->clock_waits += part->clock_waits;
  for (int i = 0; i < PS_CLOCK_BUCKETS; i++) sum->gap_hist[i] += part->gap_hist[i];
  size_t n = sum->epochs + part->epochs;
  if (part->epochs) {
    double *ends = realloc(sum->epoch_end_s, n * sizeof *ends);
    if (ends) {
      for (size_t e = 0; e < part->epochs; e++)
        ends[sum->epochs + e] = part->epoch_end_s[e] - eval_before;
      sum->epoch_end_s = ends;
    }
    wl_epoch_quality *q = part->epoch_quality
                              ? realloc(sum->epoch_quality, n * sizeof *q)
                              : sum->epoch_quality;
    if (q && part->epoch_quality)
      memcpy(q + sum->epochs, part->epoch_quality, part->epochs * sizeof *q);
    if (q) sum->epoch_quality = q;
    if (ends && (q || !part->epoch_quality))
      sum->epochs = n;
    else
      rc = PS_ERR_NOMEM;
  }
  if (part->n_evals) {
    wl_eval_point *e = realloc(sum->evals, (sum->n_evals + part->n_evals) * sizeof *e);
    if (e) {
      for (size_t i = 0; i < part->n_evals; i++) {
        e[sum->n_evals + i] = part->evals[i];
        e[sum->n_evals + i].at_s -= eval_before;
      }
      sum->evals = e;
      sum->n_evals += part->n_evals;
    } else {
      rc = PS_ERR_NOMEM;
    }
  }
  free(part->epoch_end_s);
  free(part->epoch_quality);
  free(part->evals);
  *part = (wl_driver_stats){0};
  return rc;
}

/* Moves the worker's clock to the stage's end and waits until every worker
 * of the run is there (the stage's closing barrier); the time blocked adds
 * to the stage's wait. */
static int stage_barrier(run_worker *w, const run_stage *st, const wl_driver_env *env,
                         run_stage_stats *rec) {
  double t0 = env->now(env->ctx);
  int rc = ps_set_clock(w->handle, st->end_clock, t0);
  ps_ticket t;
  if (rc == PS_OK) rc = ps_clock_wait(w->handle, st->end_clock, NULL, 0, &t, t0);
  if (rc == PS_PENDING) rc = ps_worker_done(w->handle, t) ? PS_OK : env->wait(env->ctx, w->handle, t);
  rec->wait_s += env->now(env->ctx) - t0;
  return rc;
}

/* One stage of the worker: its steps (if it is active) with the stage's
 * stream and consistency, then the barrier. */
static int drive_stage(run_worker *w, const run_setup *s, wl_driver_env *env, size_t k) {
  const run_stage *st = &s->stages[k];
  run_stage_stats *rec = &w->stages[k];
  uint64_t n = run_stage_worker_steps(s->args.nodes, s->args.workers_per_node, st->workers,
                                      st->steps, w->rank);
  if (n) {
    wl_stream *stream = wl_stream_new(st->wl ? st->wl : s->wl, w->node, w->rank, st->seed);
    if (!stream) return PS_ERR_NOMEM;
    wl_stream_limit(stream, n);
    env->consistency = st->consistency;
    wl_driver_stats part;
    int rc = wl_drive(w->handle, stream, env, driver_lookahead(s, st->consistency), &part);
    wl_stream_free(stream);
    *rec = (run_stage_stats){.steps = part.steps, .start_s = part.start_s,
                             .end_s = part.end_s, .wait_s = part.wait_s};
    int added = stats_add(&w->stats, &part);
    if (rc != PS_OK) return rc;
    if (added != PS_OK) return added;
    if (rec->steps != n) return PS_ERR_INVAL; /* the stream ended early */
  }
  return stage_barrier(w, st, env, rec);
}

static int drive_stages(run_worker *w, const run_setup *s, wl_driver_env *env) {
  w->stats = (wl_driver_stats){.start_s = env->now(env->ctx), .mark_s = {NAN, NAN, NAN}};
  int rc = PS_OK;
  for (size_t k = 0; k < s->n_stages && rc == PS_OK; k++) rc = drive_stage(w, s, env, k);
  w->stats.end_s = env->now(env->ctx);
  return rc;
}

int run_worker_drive(run_worker *w, const run_setup *s, wl_driver_env env) {
  env.sample_ctx = w->sampler;
  env.sample_prepare = w->sampler ? ps_sampler_prepare_cb : NULL;
  env.sample_pull = w->sampler ? ps_sampler_pull_cb : NULL;
  env.sample_stats = w->sampler ? ps_sampler_stats_cb : NULL;
  env.rank = w->rank;
  env.workers = s->args.nodes * s->args.workers_per_node;
  env.trace_ctx = w->trace;
  env.trace_step = w->trace ? wl_trace_writer_step : NULL;
  if (s->n_stages) { /* no middle steps timed: each stage has its own */
    env.mark_steps[0] = env.mark_steps[1] = env.mark_steps[2] = 0;
    w->status = drive_stages(w, s, &env);
  } else {
    uint64_t n = wl_steps_per_worker(s->wl); /* the middle and last steps */
    env.mark_steps[0] = n >= 2 ? n / 2 : 0;
    env.mark_steps[1] = n >= 2 ? (n + 1) / 2 : 0;
    env.mark_steps[2] = n >= 2 ? n : 0;
    env.consistency = s->consistency;
    w->status = wl_drive(w->handle, w->stream, &env, driver_lookahead(s, env.consistency),
                         &w->stats);
  }
  if (s->clock_service) { /* it holds nobody back any more (also after a failure) */
    int rc = ps_set_clock(w->handle, PS_CLOCK_DONE, env.now(env.ctx));
    if (rc != PS_OK && w->status == PS_OK) w->status = rc;
  }
  if (w->trace) { /* the part is kept only when the whole of it is there */
    int rc = wl_trace_writer_close(w->trace, w->status == PS_OK, w->trace_error,
                                   sizeof w->trace_error);
    w->trace = NULL;
    if (rc != 0 && w->status == PS_OK) w->status = PS_ERR_INVAL;
    if (rc == 0) w->trace_error[0] = '\0';
  }
  return w->status;
}

const char *run_worker_error(const run_worker *w) {
  return w->trace_error[0] ? w->trace_error : ps_strerror(w->status);
}

void run_describe_wait(ps_worker *w, ps_ticket t, char *out, size_t n) {
  ps_ticket_info ti;
  size_t pending = ps_worker_pending(w);
  char what[96] = "";
  if (ps_worker_ticket_info(w, t, &ti) != PS_OK)
    what[0] = '\0';
  else if (ti.has_key)
    snprintf(what, sizeof what, "; its %s of key %llu, whose home is node %u", ti.op,
             (unsigned long long)ti.key, ti.home);
  else
    snprintf(what, sizeof what, "; a %s on clocks or reads", ti.op);
  snprintf(out, n, "ticket %llu (%zu operation%s pending%s)", (unsigned long long)t, pending,
           pending == 1 ? "" : "s", what);
}
