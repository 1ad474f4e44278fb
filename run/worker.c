/*
 * A run's workers: each one's stream and sampler, seeded by one contract,
 * and the shared worker loop driven with the backend's callbacks.
 */
#include "run/internal.h"

#include <stdio.h>
#include <stdlib.h>

uint64_t run_worker_seed(uint64_t run_seed, uint32_t rank) {
  /* Distinct per worker, the same for a worker whichever backend runs it. */
  return ps_mix64(run_seed ^ ps_mix64((uint64_t)rank + 1));
}

int run_worker_init(run_worker *w, const run_setup *s, ps_node *core, uint32_t index,
                    char *err, size_t errlen) {
  const run_args *a = &s->args;
  uint32_t node = ps_node_id(core);
  *w = (run_worker){.node = node, .index = index, .rank = node * a->workers_per_node + index};
  w->handle = ps_node_worker(core, index);
  w->stream = wl_stream_new(s->wl, node, w->rank, a->seed);
  if (!w->handle || !w->stream) {
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
    w->trace = wl_trace_writer_open(part, &s->layout, a->nodes,
                                    a->nodes * a->workers_per_node, w->rank, err, errlen);
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
  *w = (run_worker){0};
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
  env.consistency = s->consistency;
  uint32_t lookahead = s->settings.lookahead;
  if (env.consistency.model == PS_CONSISTENCY_SPARSE && env.consistency.lookahead > lookahead)
    lookahead = env.consistency.lookahead; /* its intents tell who writes what */
  w->status = wl_drive(w->handle, w->stream, &env, lookahead, &w->stats);
  if (s->clock_service) { /* it holds nobody back any more */
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
