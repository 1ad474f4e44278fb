/*
 * The metrics of a real run: what each node reports about itself, and how
 * rank 0 reduces the reports into the object sim_run returns (same fields,
 * same meaning; sim/metrics.c explains them), time_s being the wall-clock
 * time from the start barrier to the end barrier, measured on rank 0.
 *
 * A node's report (JSON, gathered after quiescence):
 *   steps, accesses, pushed_floats   summed over its workers
 *   samples, samplers, sample_tv_sum, sample_reuse_sum   the same for
 *                                workers that sampled (rank 0 averages)
 *   workers: [{start_s, epochs: [end_s...]}]  times on the node's clock,
 *                                which starts at its release from the start
 *                                barrier (clocks agree to the barrier's skew)
 *   stats                        its core's counters (ps_node_stats), every
 *                                field by name, the staleness histogram as
 *                                a list
 *   dropped                      frames the transport dropped (bad or stray)
 *   sum, in_transfer             its owned values summed, and keys still on
 *                                their way to it (ps_node_owned_sum)
 * Rank 0 adds the counters with ps_node_stats_add, as sim/ does, and reports
 * bad_messages when some frames were dropped.
 */
#include "real/internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- counters */

/* The ps_node_stats fields that are counts, by name (one table for both
 * directions, so the report and its reading cannot drift apart). */
#define STATS_COUNTS(X)                                                      \
  X(local_accesses) X(remote_accesses) X(messages_sent) X(bytes_sent)        \
  X(messages_received) X(forwards) X(relocations) X(queued) X(bad_messages)  \
  X(replica_syncs) X(replica_reads) X(staleness_sum_clocks)                  \
  X(staleness_max_clocks)
#define STATS_REALS(X) X(staleness_sum_s) X(staleness_max_s)

static cJSON *stats_to_json(const ps_node_stats *s) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
#define PUT(f) ok = ok && cJSON_AddNumberToObject(o, #f, (double)s->f);
  STATS_COUNTS(PUT)
  STATS_REALS(PUT)
#undef PUT
  double hist[PS_STALENESS_BUCKETS];
  for (int i = 0; i < PS_STALENESS_BUCKETS; i++) hist[i] = (double)s->staleness_hist[i];
  ok = ok && cJSON_AddItemToObject(o, "staleness_hist",
                                   cJSON_CreateDoubleArray(hist, PS_STALENESS_BUCKETS));
  if (!ok) cJSON_Delete(o);
  return ok ? o : NULL;
}

static double num(const cJSON *o, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static void stats_from_json(const cJSON *o, ps_node_stats *s) {
  memset(s, 0, sizeof *s);
#define GET_COUNT(f) s->f = (uint64_t)num(o, #f);
#define GET_REAL(f) s->f = num(o, #f);
  STATS_COUNTS(GET_COUNT)
  STATS_REALS(GET_REAL)
#undef GET_COUNT
#undef GET_REAL
  const cJSON *hist = cJSON_GetObjectItemCaseSensitive(o, "staleness_hist");
  int i = 0;
  for (const cJSON *h = hist ? hist->child : NULL; h && i < PS_STALENESS_BUCKETS;
       h = h->next, i++)
    s->staleness_hist[i] = cJSON_IsNumber(h) ? (uint64_t)h->valuedouble : 0;
}

/* ------------------------------------------------------ a node's report */

static cJSON *worker_times(const real_worker_report *w, uint32_t workers) {
  cJSON *list = cJSON_CreateArray();
  for (uint32_t i = 0; list && i < workers; i++) {
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(list, o)) {
      cJSON_Delete(o);
      cJSON_Delete(list);
      return NULL;
    }
    cJSON *ends = cJSON_AddArrayToObject(o, "epochs");
    if (!ends || !cJSON_AddNumberToObject(o, "start_s", w[i].start_s)) {
      cJSON_Delete(list);
      return NULL;
    }
    for (size_t e = 0; e < w[i].epochs; e++)
      cJSON_AddItemToArray(ends, cJSON_CreateNumber(w[i].epoch_end_s[e]));
  }
  return list;
}

char *real_metrics_local(real_node *n, const real_worker_report *w, uint32_t workers) {
  uint64_t steps = 0, accesses = 0, pushed = 0, moving = 0, samples = 0, samplers = 0;
  double tv = 0, reuse = 0;
  for (uint32_t i = 0; i < workers; i++) {
    steps += w[i].steps;
    accesses += w[i].accesses;
    pushed += w[i].pushed_floats;
    samples += w[i].samples;
    if (!w[i].samples) continue;
    samplers++;
    tv += w[i].sample_tv_distance;
    reuse += w[i].sample_reuse_factor;
  }
  ps_node_stats st;
  double sum;
  ps_node_get_stats(n->core, &st);
  ps_node_owned_sum(n->core, &sum, &moving);
  cJSON *o = cJSON_CreateObject();
  cJSON *times = worker_times(w, workers), *stats = stats_to_json(&st);
  bool ok = o && times && stats && cJSON_AddItemToObject(o, "workers", times);
  if (ok) times = NULL;
  ok = ok && cJSON_AddItemToObject(o, "stats", stats);
  if (ok) stats = NULL;
  ok = ok && cJSON_AddNumberToObject(o, "steps", (double)steps) &&
       cJSON_AddNumberToObject(o, "accesses", (double)accesses) &&
       cJSON_AddNumberToObject(o, "pushed_floats", (double)pushed) &&
       cJSON_AddNumberToObject(o, "samples", (double)samples) &&
       cJSON_AddNumberToObject(o, "samplers", (double)samplers) &&
       cJSON_AddNumberToObject(o, "sample_tv_sum", tv) &&
       cJSON_AddNumberToObject(o, "sample_reuse_sum", reuse) &&
       cJSON_AddNumberToObject(o, "dropped",
                               (double)(atomic_load(&n->dropped) + atomic_load(&n->stray))) &&
       cJSON_AddNumberToObject(o, "sum", sum) &&
       cJSON_AddNumberToObject(o, "in_transfer", (double)moving);
  char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(times);
  cJSON_Delete(stats);
  cJSON_Delete(o);
  return text;
}

/* ------------------------------------------------------ rank 0's reduction */

typedef struct {
  double steps, accesses, pushed_floats, dropped, sum, in_transfer;
  double samples, samplers, sample_tv_sum, sample_reuse_sum;
  ps_node_stats nodes; /* summed */
} totals;

static void add_node(totals *t, const cJSON *o) {
  t->steps += num(o, "steps");
  t->accesses += num(o, "accesses");
  t->pushed_floats += num(o, "pushed_floats");
  t->samples += num(o, "samples");
  t->samplers += num(o, "samplers");
  t->sample_tv_sum += num(o, "sample_tv_sum");
  t->sample_reuse_sum += num(o, "sample_reuse_sum");
  t->dropped += num(o, "dropped");
  t->sum += num(o, "sum");
  t->in_transfer += num(o, "in_transfer");
  ps_node_stats s;
  stats_from_json(cJSON_GetObjectItemCaseSensitive(o, "stats"), &s);
  ps_node_stats_add(&t->nodes, &s);
}

/* As sim/metrics.c: epoch e lasts from the latest end of e - 1 over all
 * workers (the earliest start for e = 0) to the latest end of e. */
static cJSON *epoch_times(cJSON *const *nodes, uint32_t size) {
  double prev = INFINITY;
  size_t epochs = 0;
  for (uint32_t r = 0; r < size; r++) {
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(nodes[r], "workers")) {
      prev = fmin(prev, num(w, "start_s"));
      size_t e = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(w, "epochs"));
      if (e > epochs) epochs = e;
    }
  }
  cJSON *list = cJSON_CreateArray();
  for (size_t e = 0; list && e < epochs; e++) {
    double end = prev;
    for (uint32_t r = 0; r < size; r++) {
      const cJSON *w;
      cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(nodes[r], "workers")) {
        const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(w, "epochs"),
                                            (int)e);
        if (cJSON_IsNumber(v)) end = fmax(end, v->valuedouble);
      }
    }
    cJSON_AddItemToArray(list, cJSON_CreateNumber(end - prev));
    prev = end;
  }
  return list;
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

static bool add_sampling(cJSON *m, const totals *t) {
  if (t->samplers == 0) return true;
  return cJSON_AddNumberToObject(m, "samples", t->samples) &&
         cJSON_AddNumberToObject(m, "sample_tv_distance", t->sample_tv_sum / t->samplers) &&
         cJSON_AddNumberToObject(m, "sample_reuse_factor", t->sample_reuse_sum / t->samplers);
}

static bool add_conservation(cJSON *m, const totals *t) {
  if (!cJSON_AddNumberToObject(m, "pushed_floats", t->pushed_floats)) return false;
  if (t->in_transfer > 0)
    return cJSON_AddNumberToObject(m, "value_sum_unreadable", t->in_transfer) != NULL;
  return cJSON_AddNumberToObject(m, "value_sum", t->sum) != NULL;
}

static cJSON *build(cJSON *const *nodes, const totals *t, uint32_t size, double time_s) {
  const ps_node_stats *s = &t->nodes;
  double touched = (double)(s->local_accesses + s->remote_accesses);
  cJSON *m = cJSON_CreateObject();
  cJSON *epochs = epoch_times(nodes, size);
  bool ok = m && epochs && cJSON_AddNumberToObject(m, "time_s", time_s) &&
            cJSON_AddItemToObject(m, "epoch_time_s", epochs);
  if (!ok) cJSON_Delete(epochs);
  ok = ok && cJSON_AddNumberToObject(m, "steps", t->steps) &&
       cJSON_AddNumberToObject(m, "steps_per_s", time_s > 0 ? t->steps / time_s : 0) &&
       cJSON_AddNumberToObject(m, "accesses", t->accesses) &&
       cJSON_AddNumberToObject(m, "local_ratio",
                               touched ? (double)s->local_accesses / touched : 0) &&
       cJSON_AddNumberToObject(m, "messages", (double)s->messages_sent) &&
       cJSON_AddNumberToObject(m, "bytes", (double)s->bytes_sent) &&
       cJSON_AddNumberToObject(m, "relocations", (double)s->relocations) &&
       cJSON_AddNumberToObject(m, "replica_syncs", (double)s->replica_syncs) &&
       add_staleness(m, s) && add_conservation(m, t) && add_sampling(m, t) &&
       (t->dropped == 0 || cJSON_AddNumberToObject(m, "bad_messages", t->dropped));
  if (!ok) {
    cJSON_Delete(m);
    return NULL;
  }
  return m;
}

cJSON *real_metrics_reduce(const char *const *reports, uint32_t size, double time_s,
                           char *err, size_t errlen) {
  cJSON **nodes = calloc(size, sizeof *nodes);
  totals t = {0};
  cJSON *m = NULL;
  uint32_t bad = size;
  for (uint32_t r = 0; nodes && r < size && bad == size; r++) {
    nodes[r] = reports[r] ? cJSON_Parse(reports[r]) : NULL;
    if (!cJSON_IsObject(nodes[r])) bad = r;
  }
  if (nodes && bad == size) {
    for (uint32_t r = 0; r < size; r++) add_node(&t, nodes[r]);
    m = build(nodes, &t, size, time_s);
    if (!m) snprintf(err, errlen, "node 0: out of memory building metrics");
  } else if (bad < size) {
    snprintf(err, errlen, "node %u sent a report that is not a JSON object", bad);
  } else {
    snprintf(err, errlen, "node 0: out of memory building metrics");
  }
  for (uint32_t r = 0; nodes && r < size; r++) cJSON_Delete(nodes[r]);
  free(nodes);
  return m;
}
