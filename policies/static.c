/*
 * static: the classic parameter server (PS-Lite). Keys are partitioned by hash
 * or range and never move; every access goes to the key's server. With
 * fast_local_access (default) a worker reads keys of its own node from memory;
 * without it, even those go through the node's server as messages, as in
 * PS-Lite. Intents are ignored.
 */
#include "policies/policy.h"
#include "policies/common.h"

static int static_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                            size_t errlen) {
  static const char *const known[] = {"type", "partition", "fast_local_access", NULL};
  int rc;
  if ((rc = policy_check_fields(json, known, err, errlen)) ||
      (rc = policy_get_partition(json, &s->partition, err, errlen)) ||
      (rc = policy_get_bool(json, "fast_local_access", &s->fast_local_access, err, errlen)))
    return rc;
  s->lookahead = 0;
  return PS_OK;
}

static int static_init(ps_node *node, const struct cJSON *json, void **state) {
  (void)node;
  (void)json;
  *state = NULL;
  return PS_OK;
}

const ps_policy_ops ps_policy_static = {
    .name = "static",
    .configure = static_configure,
    .init = static_init,
};
