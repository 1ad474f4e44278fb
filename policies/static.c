/*
 * static: the classic parameter server (PS-Lite). Keys are partitioned by hash
 * or range and never move; every access goes to the key's server. With
 * fast_local_access (default) a worker reads keys of its own node from memory;
 * without it, even those go through the node's server as messages, as in
 * PS-Lite. Intents are ignored.
 */
#include "policies/policy.h"
#include "policies/common.h"

typedef struct {
  int partition;
  bool fast_local_access;
} static_knobs;

const policy_field policy_static_fields[] = {
    POLICY_FIELD_PARTITION(static_knobs),
    POLICY_FIELD_FAST_LOCAL_ACCESS(static_knobs, NULL, NULL),
    {0},
};

static int static_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                            size_t errlen) {
  static_knobs k;
  int rc = policy_read_fields(json, policy_static_fields, FIELDS_CONFIGURE, &k, err,
                              errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k.partition;
  s->fast_local_access = k.fast_local_access;
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
