/*
 * The replication shared by replicate and nups: which keys get replicas (the
 * workload's `hot_keys` hottest, handed to the node by the backend, or all
 * keys), and sync rounds `syncs_per_sec` times a second, by all-reduce of
 * deltas or through the owner (model/replica.c does the work).
 */
#include "policies/replication.h"

#include <math.h>
#include <stdlib.h>

const policy_enum_value replication_sync_values[] = {
    {"allreduce", PS_SYNC_ALLREDUCE}, {"owner", PS_SYNC_OWNER}, {NULL, 0}};

/* Every key of the layout, for hot_keys "all". */
static ps_key *all_keys(const ps_layout *l, size_t *n) {
  uint64_t total = ps_layout_num_keys(l);
  ps_key *keys = malloc(total * sizeof *keys);
  for (uint64_t i = 0; keys && i < total; i++) keys[i] = ps_layout_key_at(l, i);
  *n = keys ? (size_t)total : 0;
  return keys;
}

int replication_init(ps_node *node, const replication_config *cfg, void **state) {
  replication_state *s = calloc(1, sizeof *s);
  if (!s) return PS_ERR_NOMEM;
  s->node = node;
  s->cfg = *cfg;
  size_t n;
  int rc;
  if (cfg->hot_keys == REPLICATION_ALL_KEYS) {
    ps_key *keys = all_keys(ps_node_layout(node), &n);
    rc = keys ? ps_node_add_initial_replicas(node, keys, n, (ps_sync_mode)cfg->sync) : PS_ERR_NOMEM;
    free(keys);
  } else {
    const ps_key *hot = ps_node_hot_keys(node, &n);
    rc = ps_node_add_initial_replicas(node, hot, n, (ps_sync_mode)cfg->sync);
  }
  if (rc != PS_OK) {
    free(s);
    return rc;
  }
  *state = s;
  return PS_OK;
}

double replication_on_timer(void *state, double now) {
  replication_state *s = state;
  ps_node_sync_replicas(s->node, (ps_sync_mode)s->cfg.sync, s->cfg.threshold, now);
  /* 0: no sync rounds while training; the deltas meet at the run's end
   * (ps_node_finish), so replicas only ever see their own node's updates. */
  if (s->cfg.syncs_per_sec == 0) return INFINITY;
  return now + 1.0 / s->cfg.syncs_per_sec;
}

void replication_free(void *state) { free(state); }
