/*
 * relocate: Lapse's dynamic parameter allocation. The driver signals each
 * step's keys as an intent `lookahead` steps ahead; this policy answers an
 * intent by localizing the keys, so they are (ideally) local when the step
 * runs. Correctness never depends on it: an access to a key that has not
 * arrived yet waits for it, one to a key that moved on is forwarded.
 */
#include "policies/policy.h"
#include "policies/common.h"

#define RELOCATE_DEFAULT_LOOKAHEAD 10

typedef struct {
  int partition;
  bool fast_local_access;
  uint32_t lookahead;
} relocate_knobs;

/* fast_local_access must stay true: without it a worker's own node is
 * reached by messages to itself; one in flight when the key moves away
 * takes another route than the next operation, and per-key order is lost.
 * PS-Lite, the one system without fast local access, never relocates. */
const policy_field policy_relocate_fields[] = {
    POLICY_FIELD_PARTITION(relocate_knobs),
    POLICY_FIELD_FAST_LOCAL_ACCESS(relocate_knobs, "false",
                                   "relocation keeps a worker's operations in order only "
                                   "with direct local access"),
    POLICY_FIELD_LOOKAHEAD(relocate_knobs, RELOCATE_DEFAULT_LOOKAHEAD),
    {0},
};

static int relocate_configure(const struct cJSON *json, ps_policy_settings *s, char *err,
                              size_t errlen) {
  relocate_knobs k;
  int rc = policy_read_fields(json, policy_relocate_fields, FIELDS_CONFIGURE, &k, err,
                              errlen);
  if (rc != PS_OK) return rc;
  s->partition = (ps_partition)k.partition;
  s->fast_local_access = k.fast_local_access;
  s->lookahead = k.lookahead;
  s->keys_at_workers = true; /* localizes to the worker's node */
  return PS_OK;
}

static int relocate_init(ps_node *node, const struct cJSON *json, void **state) {
  (void)node;
  (void)json;
  *state = NULL;
  return PS_OK;
}

static void relocate_on_intent(void *state, ps_worker *w, const ps_key *keys, size_t n,
                               int64_t clock_start, int64_t clock_end, double now) {
  (void)state;
  (void)clock_start;
  (void)clock_end;
  /* Nobody waits on this localize: the step's own pull will, if it must. */
  ps_localize(w, keys, n, NULL, now);
}

const ps_policy_ops ps_policy_relocate = {
    .name = "relocate",
    .configure = relocate_configure,
    .init = relocate_init,
    .on_intent = relocate_on_intent,
};
