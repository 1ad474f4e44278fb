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

typedef struct {
  int partition;
  bool fast_local_access;
  replication_config repl;
} replicate_knobs;

const policy_field policy_replicate_fields[] = {
    POLICY_FIELD_PARTITION(replicate_knobs),
    POLICY_FIELD_FAST_LOCAL_ACCESS(replicate_knobs, NULL, NULL),
    REPLICATION_FIELDS(replicate_knobs, repl, REPLICATION_ALL_KEYS, NULL, NULL),
    {0},
};

static int replicate_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                               size_t errlen) {
  replicate_knobs k;
  int rc = policy_read_fields(json, policy_replicate_fields, FIELDS_CONFIGURE, &k, err,
                              errlen);
  if (rc == PS_OK) rc = replication_check_rounds(json, k.repl.syncs_per_step, err, errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k.partition;
  s->fast_local_access = k.fast_local_access;
  s->lookahead = 0;
  s->keys_at_workers = true; /* replicas on every node */
  s->hot_keys = k.repl.hot_keys == REPLICATION_ALL_KEYS ? 0 : k.repl.hot_keys;
  s->replicas_per_node = k.repl.hot_keys == REPLICATION_ALL_KEYS ? PS_ALL_KEYS : k.repl.hot_keys;
  s->owner_replicas = k.repl.sync == PS_SYNC_OWNER;
  return PS_OK;
}

static int replicate_init(ps_node *node, const struct cJSON *json, void **state) {
  replicate_knobs k;
  char err[256];
  if (policy_read_fields(json, policy_replicate_fields, FIELDS_INIT, &k, err, sizeof err) !=
      PS_OK)
    return PS_ERR_INVAL;
  return replication_init(node, &k.repl, state);
}

const ps_policy_ops ps_policy_replicate = {
    .name = "replicate",
    .configure = replicate_configure,
    .init = replicate_init,
    .on_timer = replication_on_timer,
    .on_step = replication_on_step,
    .free = replication_free,
};
