/*
 * How skewed a workload is, measured: sample streams of its steps (one per
 * node, up to 8 nodes, fixed seed), every key read or written counted, and
 * the counts of hottest keys that serve 50%, 80% and 95% of the accesses:
 * the hot-key counts worth trying with replication (a Zipf(1.1) workload
 * over 1M keys needs a few hundred for half its accesses, a uniform one
 * half its keys).
 */
#include "experiments/advise/advise.h"
#include "workloads/workload.h"

#include <stdlib.h>

#define HOT_SAMPLE_ACCESSES 200000u
#define HOT_SAMPLE_NODES 8u
#define HOT_SAMPLE_SEED 0x616476697365ULL /* "advise" */

static int by_key(const void *a, const void *b) {
  ps_key x = *(const ps_key *)a, y = *(const ps_key *)b;
  return x < y ? -1 : x > y;
}

static int by_count_desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x > y ? -1 : x < y;
}

/* Up to cap keys the workload's streams read and write; how many. */
static size_t sample_keys(const wl_workload *wl, uint32_t nodes, ps_key *keys, size_t cap) {
  size_t n = 0;
  uint32_t streams = nodes < HOT_SAMPLE_NODES ? nodes : HOT_SAMPLE_NODES;
  for (uint32_t node = 0; node < streams; node++) {
    wl_stream *s = wl_stream_new(wl, node, node, HOT_SAMPLE_SEED);
    size_t mine = (node + 1) * cap / streams;
    wl_step st;
    while (s && n < mine && wl_next_step(s, &st)) {
      for (size_t i = 0; i < st.n_reads && n < mine; i++) keys[n++] = st.reads[i];
      for (size_t i = 0; i < st.n_writes && n < mine; i++) keys[n++] = st.writes[i];
    }
    wl_stream_free(s);
  }
  return n;
}

/* The counts of hottest keys that cover 50%, 80% and 95% of n sorted
 * keys' accesses. */
static size_t coverage(ps_key *keys, size_t n, uint64_t out[3]) {
  uint64_t *counts = malloc(n * sizeof *counts);
  if (!counts) return 0;
  size_t distinct = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && keys[j] == keys[i]) j++;
    counts[distinct++] = j - i;
    i = j;
  }
  qsort(counts, distinct, sizeof *counts, by_count_desc);
  static const double shares[3] = {0.5, 0.8, 0.95};
  size_t found = 0, k = 0;
  uint64_t sum = 0;
  for (size_t s = 0; s < 3; s++) {
    while (k < distinct && (double)sum < shares[s] * (double)n) sum += counts[k++];
    uint64_t h = k ? k : 1;
    if (!found || out[found - 1] < h) out[found++] = h;
  }
  free(counts);
  return found;
}

size_t adv_hot_key_counts(const cJSON *workload, uint32_t nodes, uint32_t workers_per_node,
                          const char *base_dir, uint64_t counts[3]) {
  wl_context ctx = {.nodes = nodes ? nodes : 1,
                    .workers_per_node = workers_per_node ? workers_per_node : 1,
                    .base_dir = base_dir};
  char err[512];
  wl_workload *wl = wl_create(workload, &ctx, err, sizeof err);
  ps_key *keys = wl ? malloc(HOT_SAMPLE_ACCESSES * sizeof *keys) : NULL;
  size_t found = 0;
  if (keys) {
    size_t n = sample_keys(wl, ctx.nodes, keys, HOT_SAMPLE_ACCESSES);
    qsort(keys, n, sizeof *keys, by_key);
    found = n ? coverage(keys, n, counts) : 0;
  }
  free(keys);
  wl_free(wl);
  return found;
}
