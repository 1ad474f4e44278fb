/*
 * What the replicating policies (replicate, nups) share: their replication
 * fields, the replicas they create at start, and the sync-round timer.
 */
#ifndef PSLAB_POLICIES_REPLICATION_H
#define PSLAB_POLICIES_REPLICATION_H

#include "model/ps.h"

struct cJSON;

#define REPLICATION_ALL_KEYS UINT32_MAX

typedef struct {
  uint32_t hot_keys;      /* how many hottest keys to replicate, or ALL_KEYS */
  double syncs_per_sec;   /* sync rounds per second (0: none until the run ends) */
  ps_sync_mode sync;
  double threshold;       /* deltas with a smaller L2 norm wait (all-reduce) */
} replication_config;

/* Parses the replication fields of a policy object over the defaults given
 * in *cfg; "<field>: expected ..., found ..." on error. */
int replication_parse(const struct cJSON *json, replication_config *cfg, char *err,
                      size_t errlen);

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
