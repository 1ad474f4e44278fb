/*
 * What the replicating policies (replicate, nups) share: their replication
 * fields, the replicas they create at start, and the sync-round timer.
 */
#ifndef PSLAB_POLICIES_REPLICATION_H
#define PSLAB_POLICIES_REPLICATION_H

#include "model/ps.h"
#include "policies/common.h"

#define REPLICATION_ALL_KEYS FIELD_ALL

typedef struct {
  uint32_t hot_keys;      /* how many hottest keys to replicate, or ALL_KEYS */
  double syncs_per_sec;   /* sync rounds per second (0: none until the run ends) */
  int sync;               /* a ps_sync_mode */
  double threshold;       /* deltas with a smaller L2 norm wait (all-reduce) */
} replication_config;

extern const policy_enum_value replication_sync_values[];

/* The replication fields of a policy's table, in a replication_config
 * member m of knobs struct T: hot_keys (default hot_def_, refusing
 * hot_refused_ for hot_why_ when set), syncs_per_sec, sync, threshold. */
#define REPLICATION_FIELDS(T, m, hot_def_, hot_refused_, hot_why_)                        \
  {.name = "hot_keys", .type = FIELD_COUNT_OR_ALL, .offset = offsetof(T, m.hot_keys),      \
   .def = hot_def_, .min = 1, .max = 100000000, .refused = hot_refused_, .why = hot_why_,  \
   .meaning = "how many of the workload's hottest keys every node holds replicas of"},    \
      {.name = "syncs_per_sec", .type = FIELD_NUMBER,                                      \
       .offset = offsetof(T, m.syncs_per_sec), .def = 25, .min = 0, .min_ok = true,       \
       .max = 1e6,                                                                         \
       .meaning = "sync rounds of the replicas a second (0: none until the run ends)"},   \
      {.name = "sync", .type = FIELD_ENUM, .offset = offsetof(T, m.sync),                 \
       .def = PS_SYNC_ALLREDUCE, .values = replication_sync_values,                       \
       .meaning = "a sync round all-reduces deltas among the nodes, or goes through "     \
                  "each key's owner (delta in, fresh value back)"},                        \
      {.name = "threshold", .type = FIELD_NUMBER, .offset = offsetof(T, m.threshold),      \
       .def = 0, .min = 0, .min_ok = true, .max = 1e300,                                   \
       .meaning = "all-reduce: a delta with a smaller L2 norm waits for a later round"}

typedef struct {
  ps_node *node;
  replication_config cfg;
} replication_state;

/* Creates the node's replicas of the hot keys (or of every key). */
int replication_init(ps_node *node, const replication_config *cfg, void **state);
/* One sync round; returns when the next is due. */
double replication_on_timer(void *state, double now);
void replication_free(void *state);

#endif
