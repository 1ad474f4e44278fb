/*
 * The metrics of a finished simulated run, as the JSON object sim_run
 * returns.
 *
 *   time_s         simulated time at which the run went quiet: every worker
 *                  done and no message in flight
 *   epoch_time_s   per epoch e: max over workers of e's end, minus the same
 *                  for e - 1 (the start for e = 0)
 *   steps, accesses, steps_per_s          from the workers' driver stats
 *   local_ratio, messages, bytes, relocations   summed over the nodes' core
 *                  counters (local_ratio = local / (local + remote) accesses)
 *   replica_syncs  replica keys sent in sync rounds
 *   staleness_*    with replicas: the age of the values replica reads
 *                  returned, in seconds (mean, p99, max) and clocks (mean, max)
 *   pushed_floats  floats pushed (the driver's count): what every value summed
 *                  must come to, since each push adds 1.0 per float
 *   value_sum      every value summed over the nodes that own it;
 *                  value_sum_unreadable instead when keys were still in
 *                  transfer (never, once a run is quiet)
 *   samples, sample_tv_distance, sample_reuse_factor   when the workload
 *                  samples: keys sampled, and the samplers' conformity (total
 *                  variation distance, reuse factor) averaged over workers
 *
 * Workers and keys are visited in index order, so the same run gives the
 * same figures bit for bit.
 */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>


typedef struct {
  uint64_t steps, accesses, pushed_floats, samples;
  double tv_sum, reuse_sum; /* over workers that sampled */
  uint32_t samplers;
  ps_node_stats nodes; /* summed */
} sim_totals;

static void totals(const sim_state *run, sim_totals *t) {
  *t = (sim_totals){0};
  for (uint32_t i = 0; i < run->num_workers; i++) {
    const wl_driver_stats *st = &run->workers[i].stats;
    t->steps += st->steps;
    t->accesses += st->accesses;
    t->pushed_floats += st->pushed_floats;
    t->samples += st->samples;
    if (st->samples) {
      t->samplers++;
      t->tv_sum += st->sample_tv_distance;
      t->reuse_sum += st->sample_reuse_factor;
    }
  }
  for (uint32_t i = 0; i < run->num_nodes; i++) {
    ps_node_stats s;
    ps_node_get_stats(run->nodes[i].core, &s);
    ps_node_stats_add(&t->nodes, &s);
  }
}

static cJSON *epoch_times(const sim_state *run) {
  cJSON *list = cJSON_CreateArray();
  size_t epochs = 0;
  double prev = INFINITY;
  for (uint32_t i = 0; i < run->num_workers; i++) {
    const wl_driver_stats *st = &run->workers[i].stats;
    if (st->epochs > epochs) epochs = st->epochs;
    if (st->start_s < prev) prev = st->start_s;
  }
  for (size_t e = 0; list && e < epochs; e++) {
    double end = prev;
    for (uint32_t i = 0; i < run->num_workers; i++) {
      const wl_driver_stats *st = &run->workers[i].stats;
      if (e < st->epochs && st->epoch_end_s[e] > end) end = st->epoch_end_s[e];
    }
    cJSON_AddItemToArray(list, cJSON_CreateNumber(end - prev));
    prev = end;
  }
  return list;
}

/* Sums every value on its owner; returns keys still in transfer (none,
 * once a run is quiet). */
static uint64_t value_sum(const sim_state *run, double *sum) {
  double total = 0;
  uint64_t moving = 0;
  for (uint32_t i = 0; i < run->num_nodes; i++) {
    double s;
    uint64_t m;
    ps_node_owned_sum(run->nodes[i].core, &s, &m);
    total += s;
    moving += m;
  }
  *sum = total;
  return moving;
}

static bool add_conservation(cJSON *m, const sim_state *run, const sim_totals *t) {
  if (!cJSON_AddNumberToObject(m, "pushed_floats", (double)t->pushed_floats)) return false;
  double sum;
  uint64_t unreadable = value_sum(run, &sum);
  if (unreadable) return cJSON_AddNumberToObject(m, "value_sum_unreadable", (double)unreadable);
  return cJSON_AddNumberToObject(m, "value_sum", sum) != NULL;
}

static bool add_staleness(cJSON *m, const ps_node_stats *s) {
  if (!s->replica_reads) return true;
  double reads = (double)s->replica_reads;
  return cJSON_AddNumberToObject(m, "staleness_mean_s", s->staleness_sum_s / reads) &&
         cJSON_AddNumberToObject(m, "staleness_p99_s",
                                 ps_staleness_quantile(s->staleness_hist, 0.99)) &&
         cJSON_AddNumberToObject(m, "staleness_max_s", s->staleness_max_s) &&
         cJSON_AddNumberToObject(m, "staleness_mean_clocks",
                                 (double)s->staleness_sum_clocks / reads) &&
         cJSON_AddNumberToObject(m, "staleness_max_clocks", (double)s->staleness_max_clocks);
}

cJSON *sim_metrics(const sim_state *run) {
  sim_totals t;
  totals(run, &t);
  double time_s = run->quiet_time;
  uint64_t touched = t.nodes.local_accesses + t.nodes.remote_accesses;
  cJSON *m = cJSON_CreateObject();
  cJSON *epochs = epoch_times(run);
  bool ok = m && epochs && cJSON_AddNumberToObject(m, "time_s", time_s) &&
            cJSON_AddItemToObject(m, "epoch_time_s", epochs);
  if (!ok) cJSON_Delete(epochs);
  ok = ok && cJSON_AddNumberToObject(m, "steps", (double)t.steps) &&
       cJSON_AddNumberToObject(m, "steps_per_s", time_s > 0 ? (double)t.steps / time_s : 0) &&
       cJSON_AddNumberToObject(m, "accesses", (double)t.accesses) &&
       cJSON_AddNumberToObject(m, "local_ratio",
                               touched ? (double)t.nodes.local_accesses / (double)touched : 0) &&
       cJSON_AddNumberToObject(m, "messages", (double)t.nodes.messages_sent) &&
       cJSON_AddNumberToObject(m, "bytes", (double)t.nodes.bytes_sent) &&
       cJSON_AddNumberToObject(m, "relocations", (double)t.nodes.relocations) &&
       cJSON_AddNumberToObject(m, "replica_syncs", (double)t.nodes.replica_syncs) &&
       add_staleness(m, &t.nodes) && add_conservation(m, run, &t) &&
       (!t.samplers ||
        (cJSON_AddNumberToObject(m, "samples", (double)t.samples) &&
         cJSON_AddNumberToObject(m, "sample_tv_distance", t.tv_sum / t.samplers) &&
         cJSON_AddNumberToObject(m, "sample_reuse_factor", t.reuse_sum / t.samplers)));
  if (!ok) {
    cJSON_Delete(m);
    return NULL;
  }
  return m;
}
