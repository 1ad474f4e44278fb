/*
 * The backend table: one entry per way of running a run, each with its name,
 * a line saying what it is, the cluster fields it reads, and the function
 * that runs one run on it (in the runner's forked child). Every place that
 * chooses or validates a backend (the spec's "backend", --backend, the
 * runner) looks here, so a third backend is one entry and its folder.
 *
 * The cluster arrives typed (spec/cluster.c); what a backend does not read is
 * the other backend's description of a machine (the simulated network, or
 * the real one's addresses), which spec validation points out.
 */
#include "experiments/backends/backends.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the job's run is made of, its shape as its cluster gives it. */
static run_args job_run_args(const exp_backend_job *job) {
  run_args a = {.workload = job->workload, .policy = job->policy,
                .consistency = job->consistency, .stages = job->stages,
                .base_dir = job->base_dir, .seed = job->seed, .trace_path = job->trace_path,
                .params_dir = job->params_dir,
                .memory.limit = job->memory_limit};
  sim_cluster_shape(&job->cluster->sim, &a);
  return a;
}

/* ------------------------------------------------------------------ sim */

static const char *const sim_keys[] = {"nodes",    "workers_per_node", "host_speed",
                                       "network",  "stragglers",       "platform_file",
                                       "hosts",    "cost",             "machines",
                                       "profile",  "servers",          "worker_nodes",
                                       "scale",    NULL};

static cJSON *run_sim(const exp_backend_job *job, char *err, size_t errlen) {
  if (job->node) {
    snprintf(err, errlen, "the simulator runs a whole cluster in one process: "
                          "`pslab node` is for the real backend");
    return NULL;
  }
  sim_run_args a = {.run = job_run_args(job), .cluster = &job->cluster->sim,
                    .progress = job->progress, .progress_ctx = job->progress_ctx};
  return sim_run(&a, err, errlen);
}

/* ----------------------------------------------------------------- real */

/* stragglers: emulated (real/throttle.c), their bandwidth factors slowing
 * the simulated link's bandwidth, network.bandwidth. */
static const char *const real_keys[] = {"nodes",       "workers_per_node", "host_speed",
                                        "profile",     "bind",             "coordinator",
                                        "base_port",   "timeout_s",        "compute",
                                        "auth",        "key_file",         "stragglers",
                                        "network.bandwidth", "servers",    "worker_nodes",
                                        "scale",       "machines.pin",     "machines.count",
                                        "machines.cores",    "machines.place",   NULL};

/* cluster.machines.pin: the simulator's machines laid out on this one,
 * every node on its machine's cores (real_run_args.pin_*). */
static cJSON *run_real_pinned(real_run_args *a, const sim_cluster *c, char *err,
                              size_t errlen) {
  uint32_t *machine = malloc((size_t)c->nodes * sizeof *machine);
  if (!machine) {
    snprintf(err, errlen, "cluster.machines.pin: out of memory");
    return NULL;
  }
  for (uint32_t i = 0; i < c->nodes; i++) machine[i] = sim_node_machine(c, i);
  a->pin_machine = machine;
  a->pin_machines = c->machines.count;
  a->pin_cores = c->machines.cores;
  cJSON *m = real_run_local(a, err, errlen);
  free(machine);
  return m;
}

static cJSON *run_real(const exp_backend_job *job, char *err, size_t errlen) {
  const exp_cluster *c = job->cluster;
  real_run_args a = {.run = job_run_args(job), .host_speed = c->sim.host_speed,
                     .cluster = &c->real, .run_number = job->run,
                     .progress = job->progress, .progress_ctx = job->progress_ctx};
  bool pin = c->sim.machines.pin && c->sim.machines.count;
  if (!job->node) return pin ? run_real_pinned(&a, &c->sim, err, errlen)
                             : real_run_local(&a, err, errlen);
  if (pin) {
    snprintf(err, errlen, "cluster.machines.pin: expected every node on this machine "
                          "(`pslab run --backend real`), not one of `pslab node`'s processes: "
                          "pin a node's process with taskset instead");
    return NULL;
  }
  if (job->node->size != c->sim.nodes) {
    snprintf(err, errlen, "cluster.nodes is %u but %u processes were started", c->sim.nodes,
             job->node->size);
    return NULL;
  }
  a.rank = job->node->rank;
  a.coordinator = job->node->coordinator;
  a.coordinator_file = job->node->coordinator_file;
  return real_run_node(&a, err, errlen);
}

/* ---------------------------------------------------------------- table */

static const exp_backend backends[] = {
    {"sim", "a SimGrid-simulated cluster in one process; times are simulated", sim_keys,
     run_sim},
    {"real", "one process per node over TCP (ZeroMQ); times are wall-clock", real_keys,
     run_real},
};

const exp_backend *exp_backends(size_t *count) {
  *count = sizeof backends / sizeof backends[0];
  return backends;
}

const exp_backend *exp_backend_find(const exp_backend *table, size_t count, const char *name) {
  for (size_t i = 0; name && i < count; i++)
    if (strcmp(table[i].name, name) == 0) return &table[i];
  return NULL;
}

bool exp_backend_reads(const exp_backend *b, const char *cluster_key) {
  for (size_t i = 0; b->cluster_keys[i]; i++)
    if (strcmp(b->cluster_keys[i], cluster_key) == 0) return true;
  return false;
}

bool exp_backend_reads_within(const exp_backend *b, const char *cluster_key) {
  size_t len = strlen(cluster_key);
  for (size_t i = 0; b->cluster_keys[i]; i++)
    if (strncmp(b->cluster_keys[i], cluster_key, len) == 0 && b->cluster_keys[i][len] == '.')
      return true;
  return false;
}
