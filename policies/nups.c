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

#include <stdio.h>
#include <stdlib.h>

#define NUPS_DEFAULT_LOOKAHEAD 10

static const replication_config nups_defaults = {
    .hot_keys = 1000, .syncs_per_sec = 25, .sync = PS_SYNC_ALLREDUCE};

static int nups_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                          size_t errlen) {
  static const char *const known[] = {"type", "partition", "hot_keys", "syncs_per_sec",
                                      "sync", "threshold", "lookahead", NULL};
  replication_config cfg = nups_defaults;
  s->lookahead = NUPS_DEFAULT_LOOKAHEAD;
  s->keys_at_workers = true; /* replicas and relocation at the workers' nodes */
  int rc;
  if ((rc = policy_check_fields(json, known, err, errlen)) ||
      (rc = policy_get_partition(json, &s->partition, err, errlen)) ||
      (rc = policy_get_uint(json, "lookahead", 1, PS_MAX_LOOKAHEAD, &s->lookahead, err, errlen)) ||
      (rc = replication_parse(json, &cfg, err, errlen)))
    return rc;
  if (cfg.hot_keys == REPLICATION_ALL_KEYS) {
    snprintf(err, errlen, "hot_keys: expected an integer >= 1 (nups relocates the keys it "
                          "does not replicate; use policy replicate for all), found \"all\"");
    return PS_ERR_INVAL;
  }
  s->fast_local_access = true; /* relocation needs it (see relocate) */
  s->hot_keys = cfg.hot_keys;
  s->replicas_per_node = cfg.hot_keys;
  s->owner_replicas = cfg.sync == PS_SYNC_OWNER;
  return PS_OK;
}

static int nups_init(ps_node *node, const struct cJSON *json, void **state) {
  replication_config cfg = nups_defaults;
  char err[256];
  if (replication_parse(json, &cfg, err, sizeof err) != PS_OK) return PS_ERR_INVAL;
  return replication_init(node, &cfg, state);
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
    .free = replication_free,
};
