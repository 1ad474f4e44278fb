/*
 * What the replicating policies (replicate, nups) share: their replication
 * fields, the replicas they create at start, and the sync-round timer.
 */
#ifndef PSLAB_POLICIES_REPLICATION_H
#define PSLAB_POLICIES_REPLICATION_H

#include "model/ps.h"
#include "policies/common.h"

#include <stdatomic.h>

#define REPLICATION_ALL_KEYS FIELD_ALL

typedef struct {
  uint32_t hot_keys;      /* how many hottest keys to replicate, or ALL_KEYS */
  double syncs_per_sec;   /* sync rounds per second (0: none until the run ends) */
  uint32_t syncs_per_step; /* instead: a round every this many steps of the
                              node's workers, each (0: by time) */
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
       .meaning = "sync rounds of the replicas a second, the first one interval in "      \
                  "(0: none until the run ends)"},                                          \
      {.name = "syncs_per_step", .type = FIELD_INT, .offset = offsetof(T, m.syncs_per_step), \
       .def = 0, .min = 0, .max = 100000000, .default_text = "by time: syncs_per_sec",     \
       .meaning = "instead of syncs_per_sec: a sync round each time this node's workers "  \
                  "have done this many steps each since the last (a sync interval in "      \
                  "worker steps)"},                                                         \
      {.name = "sync", .type = FIELD_ENUM, .offset = offsetof(T, m.sync),                 \
       .def = PS_SYNC_ALLREDUCE, .values = replication_sync_values,                       \
       .meaning = "a sync round all-reduces deltas among the nodes, or goes through "     \
                  "each key's owner (delta in, fresh value back)"},                        \
      {.name = "threshold", .type = FIELD_NUMBER, .offset = offsetof(T, m.threshold),      \
       .def = 0, .min = 0, .min_ok = true, .max = 1e300,                                   \
       .meaning = "all-reduce: a delta with a smaller L2 norm waits for a later round"}

/* Sync rounds counted in worker steps (syncs_per_step): the node's steps
 * and the count at which the next round is due (the first: one interval). */
typedef struct {
  bool on;               /* rounds by steps (syncs_per_step > 0), none by time */
  uint64_t interval;     /* syncs_per_step x the node's workers (0: none) */
  _Atomic uint64_t done, due;
} step_rounds;

typedef struct {
  ps_node *node;
  replication_config cfg;
  bool timer_started;    /* the timer's first call (at 0) runs no round */
  step_rounds steps;
} replication_state;

/* Refuses syncs_per_sec and syncs_per_step both in the policy's JSON (rounds
 * come by time or by steps). PS_OK or PS_ERR_INVAL with a message in err. */
int replication_check_rounds(const struct cJSON *json, uint32_t syncs_per_step, char *err,
                             size_t errlen);
/* Sets r up for a round every syncs_per_step steps of each of node's workers. */
void step_rounds_init(step_rounds *r, ps_node *node, uint32_t syncs_per_step);
/* Counts a step; true for the one caller whose step makes a round due. */
bool step_rounds_due(step_rounds *r);

/* Creates the node's replicas of the hot keys (or of every key). */
int replication_init(ps_node *node, const replication_config *cfg, void **state);
/* One sync round (none at the first call, at 0: the first round comes one
 * interval in); returns when the next is due. By steps: INFINITY. */
double replication_on_timer(void *state, double now);
/* By steps: a sync round when the node's workers' steps make one due. */
void replication_on_step(void *state, ps_worker *w, int64_t clock, double now);
void replication_free(void *state);

#endif
