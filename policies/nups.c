/*
 * nups: NuPS's hybrid for non-uniform access. The `hot_keys` hottest keys
 * (default 1000) are replicated on every node and synced `syncs_per_sec`
 * times a second (default 25, all-reduce); every other key is relocated to
 * where it is about to be used, as under `relocate`, from the driver's
 * intents `lookahead` steps ahead. Hot keys never move, so they never
 * bounce between nodes; cold keys move, so they need no syncing.
 */
#include "policies/common.h"
#include "policies/policy.h"
#include "policies/replication.h"

#include <stdlib.h>

#define NUPS_DEFAULT_LOOKAHEAD 10

typedef struct {
  int partition;
  uint32_t lookahead;
  replication_config repl;
} nups_knobs;

const policy_field policy_nups_fields[] = {
    POLICY_FIELD_PARTITION(nups_knobs),
    REPLICATION_FIELDS(nups_knobs, repl, 1000, "\"all\"",
                       "nups relocates the keys it does not replicate; use policy replicate "
                       "for all"),
    POLICY_FIELD_LOOKAHEAD(nups_knobs, NUPS_DEFAULT_LOOKAHEAD),
    {0},
};

static int nups_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                          size_t errlen) {
  nups_knobs k;
  int rc = policy_read_fields(json, policy_nups_fields, FIELDS_CONFIGURE, &k, err,
                              errlen);
  if (rc == PS_OK) rc = replication_check_rounds(json, k.repl.syncs_per_step, err, errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k.partition;
  s->lookahead = k.lookahead;
  s->keys_at_workers = true;   /* replicas and relocation at the workers' nodes */
  s->fast_local_access = true; /* relocation needs it (see relocate) */
  s->hot_keys = k.repl.hot_keys;
  s->replicas_per_node = k.repl.hot_keys;
  s->owner_replicas = k.repl.sync == PS_SYNC_OWNER;
  return PS_OK;
}

static int nups_init(ps_node *node, const struct cJSON *json, void **state) {
  nups_knobs k;
  char err[256];
  if (policy_read_fields(json, policy_nups_fields, FIELDS_INIT, &k, err, sizeof err) !=
      PS_OK)
    return PS_ERR_INVAL;
  return replication_init(node, &k.repl, state);
}

/* Localizes the intended keys that are neither here nor replicated here. */
static void nups_on_intent(void *state, ps_worker *w, const ps_key *keys, size_t n,
                           int64_t clock_start, int64_t clock_end, double now) {
  (void)state;
  (void)clock_start;
  (void)clock_end;
  ps_key cold[64];
  size_t m = 0;
  for (size_t i = 0; i < n; i++) {
    if (ps_worker_key_locality(w, keys[i]) != PS_KEY_REMOTE) continue;
    cold[m++] = keys[i];
    if (m == sizeof cold / sizeof cold[0]) {
      ps_localize(w, cold, m, NULL, now);
      m = 0;
    }
  }
  if (m) ps_localize(w, cold, m, NULL, now);
}

const ps_policy_ops ps_policy_nups = {
    .name = "nups",
    .configure = nups_configure,
    .init = nups_init,
    .on_intent = nups_on_intent,
    .on_timer = replication_on_timer,
    .on_step = replication_on_step,
    .free = replication_free,
};
