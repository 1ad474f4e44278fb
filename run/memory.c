/*
 * A run's memory, estimated once the workload and the key layout are known
 * and before anything that grows with the run's size is allocated (the
 * hottest keys, the nodes, the backend's actors or processes), so that a
 * spec whose size would exhaust the machine is refused at once, naming the
 * fields that make it large, instead of growing until it is killed.
 *
 * What is counted, for the nodes in this machine's memory:
 *   keys       each key's value and store entry, once (at its owner);
 *   replicas   the keys each node replicates from the start, a value, a
 *              delta and an entry each, on every node;
 *   channels   every node numbers its messages to and from every other
 *              node and knows each one's clock: a few words per pair, and
 *              what the backend keeps per pair (the simulator: a mailbox
 *              and a posted receive once the pair has talked);
 *   rounds     an all-reduce round of replica deltas in flight: each node's
 *              deltas of every replica, once per other node, or once in
 *              all when the backend shares one message among destinations;
 *   backend    the backend's own cost per node and per worker (simulated
 *              actors and hosts, or node processes), as the backend says.
 * Not counted: the workload's data (read before), what operations keep in
 * flight (but sync rounds), the consistency cache and the results. The
 * figures are rough (entry sizes rounded up): the check is for runs many
 * times too large.
 */
#include "run/internal.h"

#include <stdio.h>
#include <string.h>

#define ENTRY_BYTES 128.0   /* a store entry with its share of the table */
#define PAIR_BYTES 16.0     /* per ordered pair of nodes: numbers, clocks */
#define NPARTS 5

typedef struct {
  double bytes;
  char what[160];
} part;

static void human(double b, char *out, size_t len) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  unsigned u = 0;
  while (b >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
    b /= 1024;
    u++;
  }
  snprintf(out, len, u ? "%.3g %s" : "%.0f %s", b, units[u]);
}

int run_memory_check(const run_setup *s, char *err, size_t errlen) {
  const run_args *a = &s->args;
  const run_memory *m = &a->memory;
  if (!m->limit) return 0;
  double nodes = a->nodes, here = m->nodes_here ? m->nodes_here : a->nodes;
  double keys = (double)ps_layout_num_keys(&s->layout), value_bytes = 0;
  for (uint32_t t = 0; t < s->layout.num_tables; t++)
    value_bytes += (double)s->layout.tables[t].count * s->layout.tables[t].value_len * 4.0;
  double mean_value = keys > 0 ? value_bytes / keys : 0;
  uint64_t r = s->settings.replicas_per_node;
  double replicated = r == PS_ALL_KEYS || (double)r > keys ? keys : (double)r;
  /* A round's message from one node: a key, a position and a value each. */
  bool allreduce = r && !s->settings.owner_replicas;
  double round = allreduce ? replicated * (mean_value + 12.0) : 0;
  double copies = m->shared_sends || nodes < 2 ? 1 : nodes - 1;
  part parts[NPARTS] = {
      {(value_bytes + keys * ENTRY_BYTES) * here / nodes, ""},
      {replicated * here * (2 * mean_value + ENTRY_BYTES), ""},
      {nodes * here * (PAIR_BYTES + (double)m->per_pair), ""},
      {here * ((double)m->per_node + (double)a->workers_per_node * (double)m->per_worker), ""},
      {round * copies * here, ""},
  };
  char b[NPARTS][32];
  for (int i = 0; i < NPARTS; i++) human(parts[i].bytes, b[i], sizeof b[i]);
  snprintf(parts[0].what, sizeof parts[0].what, "the workload's %.0f keys of %.0f floats on average (%s)",
           keys, mean_value / 4, b[0]);
  snprintf(parts[1].what, sizeof parts[1].what,
           "policy.hot_keys: %.0f replicas on each of %.0f nodes (%s)", replicated, here, b[1]);
  snprintf(parts[2].what, sizeof parts[2].what,
           "cluster.nodes %.0f: what every node keeps per other node (%s)", nodes, b[2]);
  snprintf(parts[3].what, sizeof parts[3].what,
           "cluster.nodes x cluster.workers_per_node: the backend's %.0f nodes and %.0f workers "
           "(%s)", here, here * a->workers_per_node, b[3]);
  char each[48] = "";
  if (copies > 1) snprintf(each, sizeof each, ", a copy for each of the other %.0f", copies);
  snprintf(parts[4].what, sizeof parts[4].what,
           "policy.hot_keys x cluster.nodes: a sync round's deltas in flight, %.0f keys per "
           "node%s (%s)", replicated, each, b[4]);
  double total = 0;
  for (int i = 0; i < NPARTS; i++) total += parts[i].bytes;
  if (total <= (double)m->limit) return 0;
  char t[32], l[32];
  human(total, t, sizeof t);
  human((double)m->limit, l, sizeof l);
  int n = snprintf(err, errlen, "run: needs about %s of memory, more than the %s available:", t, l);
  /* The parts that matter, largest first. */
  bool said[NPARTS] = {false};
  for (int k = 0; k < NPARTS; k++) {
    int best = -1;
    for (int i = 0; i < NPARTS; i++)
      if (!said[i] && (best < 0 || parts[i].bytes > parts[best].bytes)) best = i;
    said[best] = true;
    if (parts[best].bytes < total / 10) break;
    if (n >= 0 && (size_t)n < errlen)
      n += snprintf(err + n, errlen - (size_t)n, "%s %s", k ? ";" : "", parts[best].what);
  }
  if (n >= 0 && (size_t)n < errlen)
    snprintf(err + n, errlen - (size_t)n, ". Make the run smaller, or pass --force to try anyway");
  return -1;
}
