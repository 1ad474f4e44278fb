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
 *   replica_syncs  0 until the core replicates
 *   pushed_floats  floats pushed (the driver's count): what every value summed
 *                  must come to, since each push adds 1.0 per float
 *   value_sum      every value summed, each read on the owner its home's
 *                  directory names (key spaces up to SIM_VALUE_SUM_MAX_KEYS);
 *                  value_sum_unreadable counts keys whose owner could not
 *                  show them, when any
 *
 * Workers and keys are visited in index order, so the same run gives the
 * same figures bit for bit.
 */
#include "sim/sim_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>

#define SIM_VALUE_SUM_MAX_KEYS (2u * 1000 * 1000)

typedef struct {
  uint64_t steps, accesses, pushed_floats;
  ps_node_stats nodes; /* summed */
} sim_totals;

static void totals(const sim_state *run, sim_totals *t) {
  *t = (sim_totals){0};
  for (uint32_t i = 0; i < run->num_workers; i++) {
    const wl_driver_stats *st = &run->workers[i].stats;
    t->steps += st->steps;
    t->accesses += st->accesses;
    t->pushed_floats += st->pushed_floats;
  }
  for (uint32_t i = 0; i < run->num_nodes; i++) {
    ps_node_stats s;
    ps_node_get_stats(run->nodes[i].core, &s);
    t->nodes.local_accesses += s.local_accesses;
    t->nodes.remote_accesses += s.remote_accesses;
    t->nodes.messages_sent += s.messages_sent;
    t->nodes.bytes_sent += s.bytes_sent;
    t->nodes.relocations += s.relocations;
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

static uint32_t max_value_len(const ps_layout *l) {
  uint32_t m = 0;
  for (uint32_t t = 0; t < l->num_tables; t++)
    if (l->tables[t].value_len > m) m = l->tables[t].value_len;
  return m;
}

/* Sums every value on its owner; returns keys that could not be read, or
 * UINT64_MAX on no memory. */
static uint64_t value_sum(const sim_state *run, const ps_layout *l, double *sum) {
  float *buf = malloc((size_t)max_value_len(l) * sizeof *buf);
  if (!buf) return UINT64_MAX;
  uint64_t keys = ps_layout_num_keys(l), unreadable = 0;
  double total = 0;
  for (uint64_t i = 0; i < keys; i++) {
    ps_key k = ps_layout_key_at(l, i);
    int64_t owner = ps_node_directory_owner(run->nodes[ps_layout_home(l, k)].core, k);
    if (owner < 0 || owner >= run->num_nodes ||
        ps_node_read_owned(run->nodes[owner].core, k, buf) != PS_OK) {
      unreadable++;
      continue;
    }
    uint32_t len = ps_layout_value_len(l, k);
    for (uint32_t j = 0; j < len; j++) total += buf[j];
  }
  free(buf);
  *sum = total;
  return unreadable;
}

static bool add_conservation(cJSON *m, const sim_state *run, const ps_layout *l,
                             const sim_totals *t) {
  if (!cJSON_AddNumberToObject(m, "pushed_floats", (double)t->pushed_floats)) return false;
  if (ps_layout_num_keys(l) > SIM_VALUE_SUM_MAX_KEYS) return true;
  double sum;
  uint64_t unreadable = value_sum(run, l, &sum);
  if (unreadable == UINT64_MAX) return false;
  if (unreadable) return cJSON_AddNumberToObject(m, "value_sum_unreadable", (double)unreadable);
  return cJSON_AddNumberToObject(m, "value_sum", sum) != NULL;
}

cJSON *sim_metrics(const sim_state *run, const ps_layout *layout) {
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
       cJSON_AddNumberToObject(m, "replica_syncs", 0) &&
       add_conservation(m, run, layout, &t);
  if (!ok) {
    cJSON_Delete(m);
    return NULL;
  }
  return m;
}
