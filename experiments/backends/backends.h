/*
 * experiments/backends/: what the backend table and the stage scheduler
 * offer the rooms above them beyond the door (experiment.h, which has the
 * table itself, exp_backends, and the scheduler's exp_stages_schedule):
 * which cluster fields a backend reads, for spec/'s checks, and the
 * scheduler's records put into a run's metrics, for runner/.
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes common/ and no other room.
 */
#ifndef PSLAB_EXPERIMENTS_BACKENDS_H
#define PSLAB_EXPERIMENTS_BACKENDS_H

#include "experiments/common/common.h"

/* Whether backend b reads the cluster field `cluster_key` ("network", or a
 * field inside one, "network.bandwidth") (backend_table.c). */
bool exp_backend_reads(const exp_backend *b, const char *cluster_key);
/* Whether b reads some fields inside the object field `cluster_key` but not
 * all of it (its list names "network.bandwidth" but not "network"). */
bool exp_backend_reads_within(const exp_backend *b, const char *cluster_key);

/* What the stage scheduler simulates for a "workers": "auto" stage of
 * `steps` steps on a cluster of `workers` workers, before the run starts:
 * one simulation per candidate count (returned), each of the stages before
 * it whole, then a prefix of this one; *prefix_steps: those prefixes'
 * steps, summed over the candidates. At most what it simulates (a
 * workload's limit on a worker's steps can leave out candidates). For the
 * wall-time estimate (runner/estimate.c). */
size_t exp_stages_trials(uint64_t steps, uint32_t workers, double *prefix_steps);

/* Puts each auto stage's record (exp_stages_schedule's) into the run's
 * metrics, as stages[k].auto (stage_scheduler.c). */
void exp_stages_attach(struct cJSON *metrics, struct cJSON *records);

#endif
