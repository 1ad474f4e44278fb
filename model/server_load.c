/*
 * Servers' load, as a node sees it.
 *
 * As a server: the key operations it served for requests that came in
 * messages (counted inside each call, added once per call), over time in
 * buckets that widen as the run grows, and what its backend reports of each
 * message it handled (busy time; messages waiting, as a sum, the most and
 * a histogram) and of the thread that handles them (its wake-ups). As a
 * client: the response time of every reply its workers received, by the
 * server that answered, from the moment the request was sent (its ticket's
 * issue) to the moment the reply is handled. A policy (psld) reads both;
 * the run layer reports them per server and for the whole run.
 *
 * The server side lives under one leaf mutex (taken with no other core lock
 * held, or under the order lock only, never before a stripe lock); the
 * client side in atomic counters per server, made on a server's first reply.
 */
#include "model/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ps__load_init(ps_node *n) {
  node_load *l = &n->load;
  pthread_mutex_init(&l->lock, NULL);
  l->bucket_s = PS_SERIES_FIRST_BUCKET_S;
  pthread_mutex_init(&l->rt_lock, NULL);
  l->rt = calloc(n->layout.num_nodes, sizeof *l->rt);
  return l->rt ? PS_OK : PS_ERR_NOMEM;
}

void ps__load_destroy(ps_node *n) {
  node_load *l = &n->load;
  for (uint32_t i = 0; l->rt && i < n->layout.num_nodes; i++) free(atomic_load(&l->rt[i]));
  free((void *)l->rt);
  pthread_mutex_destroy(&l->lock);
  pthread_mutex_destroy(&l->rt_lock);
}

/* ---------------------------------------------------------------- server */

/* With the lock: widens the buckets until `bucket` fits, merging pairs. */
static void series_fit(node_load *l, uint64_t *bucket, double now) {
  while ((*bucket = (uint64_t)(now / l->bucket_s)) >= PS_SERIES_MAX) {
    for (uint32_t i = 0; i < PS_SERIES_MAX / 2; i++)
      l->series[i] = l->series[2 * i] + l->series[2 * i + 1];
    memset(l->series + PS_SERIES_MAX / 2, 0, sizeof l->series / 2);
    l->n_series = (l->n_series + 1) / 2;
    l->bucket_s *= 2;
  }
}

void ps__load_note_served(ps_node *n, double now, uint64_t keys, uint64_t floats) {
  node_load *l = &n->load;
  pthread_mutex_lock(&l->lock);
  l->keys += keys;
  l->floats += floats;
  uint64_t b;
  series_fit(l, &b, now > 0 ? now : 0);
  l->series[b] += keys;
  if (b + 1 > l->n_series) l->n_series = (uint32_t)b + 1;
  pthread_mutex_unlock(&l->lock);
}

static unsigned queue_bucket(uint32_t waiting) {
  if (waiting < PS_QUEUE_EXACT) return waiting;
  unsigned k = 0;
  while ((uint64_t)PS_QUEUE_EXACT << (k + 1) <= waiting) k++;
  return PS_QUEUE_EXACT + k;
}

double ps_queue_quantile(const uint64_t hist[PS_QUEUE_BUCKETS], double q) {
  int b = hist_quantile_bucket(hist, PS_QUEUE_BUCKETS, q);
  if (b < PS_QUEUE_EXACT) return b < 0 ? 0 : b;
  return (double)(((uint64_t)PS_QUEUE_EXACT << (b - PS_QUEUE_EXACT + 1)) - 1);
}

void ps_node_note_handling(ps_node *n, double busy_s, uint32_t waiting) {
  node_load *l = &n->load;
  pthread_mutex_lock(&l->lock);
  l->handled++;
  if (busy_s > 0) l->busy_s += busy_s;
  l->queue_sum += waiting;
  l->queue_hist[queue_bucket(waiting)]++;
  if (waiting > l->queue_max) l->queue_max = waiting;
  pthread_mutex_unlock(&l->lock);
}

void ps_node_note_wakeup(ps_node *n) {
  node_load *l = &n->load;
  pthread_mutex_lock(&l->lock);
  l->wakeups++;
  pthread_mutex_unlock(&l->lock);
}

void ps_node_server_load(ps_node *n, ps_server_load *out) {
  node_load *l = &n->load;
  pthread_mutex_lock(&l->lock);
  *out = (ps_server_load){.keys = l->keys, .floats = l->floats, .handled = l->handled,
                          .busy_s = l->busy_s, .queue_sum = l->queue_sum,
                          .queue_max = l->queue_max, .wakeups = l->wakeups};
  memcpy(out->queue_hist, l->queue_hist, sizeof out->queue_hist);
  pthread_mutex_unlock(&l->lock);
}

size_t ps_node_served_series(ps_node *n, uint64_t *out, size_t cap, double *bucket_s) {
  node_load *l = &n->load;
  pthread_mutex_lock(&l->lock);
  size_t count = l->n_series < cap ? l->n_series : cap;
  memcpy(out, l->series, count * sizeof *out);
  *bucket_s = l->bucket_s;
  pthread_mutex_unlock(&l->lock);
  return count;
}

/* ---------------------------------------------------------------- client */

static unsigned rt_bucket(double s) {
  double us = s * 1e6;
  if (!(us >= 1)) return 0;
  double b = 1 + floor(2 * log2(us));
  return b >= PS_RT_BUCKETS - 1 ? PS_RT_BUCKETS - 1 : (unsigned)b;
}

double ps_rt_quantile(const uint64_t hist[PS_RT_BUCKETS], double q) {
  int b = hist_quantile_bucket(hist, PS_RT_BUCKETS, q);
  return b < 0 ? 0 : 1e-6 * exp2(b / 2.0); /* the bucket's upper bound */
}

/* server's counters, made on its first reply (NULL: no memory). */
static rt_counters *rt_of(ps_node *n, uint32_t server) {
  node_load *l = &n->load;
  rt_counters *r = atomic_load(&l->rt[server]);
  if (r) return r;
  pthread_mutex_lock(&l->rt_lock);
  if (!(r = atomic_load(&l->rt[server])) && (r = calloc(1, sizeof *r)))
    atomic_store(&l->rt[server], r);
  pthread_mutex_unlock(&l->rt_lock);
  return r;
}

static void atomic_max_u64(_Atomic uint64_t *a, uint64_t v) {
  uint64_t old = atomic_load_explicit(a, memory_order_relaxed);
  while (v > old && !atomic_compare_exchange_weak(a, &old, v)) {
  }
}

void ps__load_note_reply(ps_node *n, uint32_t server, double rt_s, uint32_t keys) {
  rt_counters *r = server < n->layout.num_nodes ? rt_of(n, server) : NULL;
  if (!r) return; /* no memory: a figure less, nothing wrong */
  uint64_t ns = rt_s > 0 ? (uint64_t)(rt_s * 1e9) : 0;
  stat_add(&r->count, 1);
  stat_add(&r->keys, keys);
  stat_add(&r->sum_ns, ns);
  atomic_max_u64(&r->max_ns, ns);
  stat_add(&r->hist[rt_bucket(rt_s)], 1);
}

int ps_node_response_times(ps_node *n, uint32_t server, ps_rt_stats *out) {
  memset(out, 0, sizeof *out);
  if (server >= n->layout.num_nodes) return PS_ERR_INVAL;
  rt_counters *r = atomic_load(&n->load.rt[server]);
  if (!r) return PS_OK;
  out->count = atomic_load(&r->count);
  out->keys = atomic_load(&r->keys);
  out->sum_s = (double)atomic_load(&r->sum_ns) * 1e-9;
  out->max_s = (double)atomic_load(&r->max_ns) * 1e-9;
  for (unsigned i = 0; i < PS_RT_BUCKETS; i++) out->hist[i] = atomic_load(&r->hist[i]);
  return PS_OK;
}

void ps_rt_stats_add(ps_rt_stats *sum, const ps_rt_stats *s) {
  sum->count += s->count;
  sum->keys += s->keys;
  sum->sum_s += s->sum_s;
  if (s->max_s > sum->max_s) sum->max_s = s->max_s;
  for (unsigned i = 0; i < PS_RT_BUCKETS; i++) sum->hist[i] += s->hist[i];
}
