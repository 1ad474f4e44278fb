/*
 * replicate: every node holds replicas of the workload's `hot_keys` hottest
 * keys (or of all keys) and syncs them `syncs_per_sec` times a second, by
 * all-reduce of deltas (default) or through the owner; other keys stay on
 * their home servers as under `static`. Replication alone: syncing every
 * key costs more than it saves, which is what nups answers.
 */
#include "policies/common.h"
#include "policies/policy.h"
#include "policies/replication.h"

#include <stdio.h>

static const replication_config replicate_defaults = {
    .hot_keys = REPLICATION_ALL_KEYS, .syncs_per_sec = 25, .sync = PS_SYNC_ALLREDUCE};

static int replicate_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                               size_t errlen) {
  static const char *const known[] = {"type", "partition", "fast_local_access", "hot_keys",
                                      "syncs_per_sec", "sync", "threshold", NULL};
  replication_config cfg = replicate_defaults;
  int rc;
  if ((rc = policy_check_fields(json, known, err, errlen)) ||
      (rc = policy_get_partition(json, &s->partition, err, errlen)) ||
      (rc = policy_get_bool(json, "fast_local_access", &s->fast_local_access, err, errlen)) ||
      (rc = replication_parse(json, &cfg, err, errlen)))
    return rc;
  s->lookahead = 0;
  s->keys_at_workers = true; /* replicas on every node */
  s->hot_keys = cfg.hot_keys == REPLICATION_ALL_KEYS ? 0 : cfg.hot_keys;
  s->replicas_per_node = cfg.hot_keys == REPLICATION_ALL_KEYS ? PS_ALL_KEYS : cfg.hot_keys;
  s->owner_replicas = cfg.sync == PS_SYNC_OWNER;
  return PS_OK;
}

static int replicate_init(ps_node *node, const struct cJSON *json, void **state) {
  replication_config cfg = replicate_defaults;
  char err[256];
  if (replication_parse(json, &cfg, err, sizeof err) != PS_OK) return PS_ERR_INVAL;
  return replication_init(node, &cfg, state);
}

const ps_policy_ops ps_policy_replicate = {
    .name = "replicate",
    .configure = replicate_configure,
    .init = replicate_init,
    .on_timer = replication_on_timer,
    .free = replication_free,
};
