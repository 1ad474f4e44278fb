/*
 * The replication shared by replicate and nups: which keys get replicas (the
 * workload's `hot_keys` hottest, handed to the node by the backend, or all
 * keys), and sync rounds `syncs_per_sec` times a second (the first one
 * interval in) or every `syncs_per_step` steps of each of the node's
 * workers, by all-reduce of deltas or through the owner (model/replica.c
 * does the work).
 */
#include "policies/replication.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
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
  step_rounds_init(&s->steps, node, cfg->syncs_per_step);
  *state = s;
  return PS_OK;
}

int replication_check_rounds(const struct cJSON *json, uint32_t syncs_per_step, char *err,
                             size_t errlen) {
  if (!syncs_per_step || !cJSON_GetObjectItemCaseSensitive(json, "syncs_per_sec")) return PS_OK;
  snprintf(err, errlen, "syncs_per_step: expected either syncs_per_sec (rounds by time) or "
                        "syncs_per_step (rounds by worker steps), not both");
  return PS_ERR_INVAL;
}

void step_rounds_init(step_rounds *r, ps_node *node, uint32_t syncs_per_step) {
  uint32_t workers = 0;
  while (ps_node_worker(node, workers)) workers++;
  r->on = syncs_per_step > 0;
  r->interval = (uint64_t)syncs_per_step * workers;
  atomic_init(&r->done, 0);
  atomic_init(&r->due, r->interval);
}

bool step_rounds_due(step_rounds *r) {
  if (!r->interval) return false;
  uint64_t done = atomic_fetch_add(&r->done, 1) + 1;
  uint64_t due = atomic_load(&r->due);
  /* One caller takes the round: the one whose step reached it and moved it. */
  return done >= due && atomic_compare_exchange_strong(&r->due, &due, due + r->interval);
}

double replication_on_timer(void *state, double now) {
  replication_state *s = state;
  /* By steps, or 0: no rounds by time (with 0 the deltas meet at the run's
   * end, ps_node_finish, so replicas only ever see their own node's
   * updates). The first call comes at 0, with nothing to send: the first
   * round is one interval in. */
  if (s->steps.on || s->cfg.syncs_per_sec == 0) return INFINITY;
  if (s->timer_started)
    ps_node_sync_replicas(s->node, (ps_sync_mode)s->cfg.sync, s->cfg.threshold, now);
  s->timer_started = true;
  return now + 1.0 / s->cfg.syncs_per_sec;
}

void replication_on_step(void *state, ps_worker *w, int64_t clock, double now) {
  (void)w, (void)clock;
  replication_state *s = state;
  if (step_rounds_due(&s->steps))
    ps_node_sync_replicas(s->node, (ps_sync_mode)s->cfg.sync, s->cfg.threshold, now);
}

void replication_free(void *state) { free(state); }
