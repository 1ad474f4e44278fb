/*
 * The cluster's roles and scaling: which nodes are servers and which run
 * workers (cluster.servers, cluster.worker_nodes), and when servers join or
 * leave (cluster.scale), checked against the policy and the rest of the
 * run, and turned into the layout's roles and each node's worker count.
 *
 * Roles follow PS-Lite: servers are the first nodes, worker nodes the last
 * ones; a node in both is both (the co-located layout, the default, is every
 * node both). Keys are homed on the servers that serve for the whole run
 * (the fewest the scaling schedule ever leaves), so a home never leaves:
 * a server that leaves hands its keys to their homes, and one that joins
 * holds keys only when the policy moves some there.
 */
#include "run/internal.h"

#include <stdio.h>

/* Servers serving at every moment: the fewest the schedule leaves (all of
 * them before its first step). */
static uint32_t stable_servers(const run_args *a, uint32_t servers) {
  uint32_t least = a->n_scale && a->scale[0].at_s <= 0 ? a->scale[0].servers : servers;
  for (size_t i = 0; i < a->n_scale; i++)
    if (a->scale[i].servers < least) least = a->scale[i].servers;
  return least;
}

static int check_scale(const run_args *a, uint32_t servers, char *err, size_t errlen) {
  for (size_t i = 0; i < a->n_scale; i++) {
    const ps_scale_step *st = &a->scale[i];
    if (!(st->at_s >= 0) || (i > 0 && st->at_s < a->scale[i - 1].at_s)) {
      snprintf(err, errlen, "cluster.scale[%zu].at_s: expected a time >= %g (steps in time "
               "order), found %g", i, i > 0 ? a->scale[i - 1].at_s : 0.0, st->at_s);
      return -1;
    }
    if (st->servers < 1 || st->servers > servers) {
      snprintf(err, errlen, "cluster.scale[%zu].servers: expected an integer in [1, %u] (the "
               "servers of cluster.servers), found %u", i, servers, st->servers);
      return -1;
    }
  }
  return 0;
}

/* Sampling schemes that localize what a worker samples (preloc, pool) move
 * keys to the worker's node, as a keys_at_workers policy does: with a
 * worker-only node there is no store to move them to. */
static int check_sampling(const run_args *a, uint32_t servers, char *err, size_t errlen) {
  const char *scheme = ps_sampling_localizing_scheme(ps_policy_sampling(a->policy));
  if (!scheme || servers == a->nodes) return 0;
  snprintf(err, errlen, "policy.sampling.scheme: \"%s\" localizes the keys a worker samples "
           "to the worker's node, which holds no keys when it is not a server (cluster.servers "
           "%u of %u nodes); expected \"naive\" or \"local\" (they read sampled keys where "
           "they are), or every node a server, found \"%s\"", scheme, servers, a->nodes, scheme);
  return -1;
}

int run_roles_check(const run_args *a, const ps_policy_ops *policy,
                    const ps_policy_settings *settings, bool stages, char *err, size_t errlen) {
  const char *name = policy ? policy->name : "?";
  uint32_t nodes = a->nodes;
  uint32_t servers = a->servers ? a->servers : nodes;
  uint32_t workers = a->worker_nodes ? a->worker_nodes : nodes;
  if (servers > nodes) {
    snprintf(err, errlen, "cluster.servers: expected an integer in [1, %u] (cluster.nodes), "
             "found %u", nodes, servers);
    return -1;
  }
  if (workers > nodes) {
    snprintf(err, errlen, "cluster.worker_nodes: expected an integer in [1, %u] "
             "(cluster.nodes), found %u", nodes, workers);
    return -1;
  }
  if ((uint64_t)servers + workers < nodes) {
    snprintf(err, errlen, "cluster.worker_nodes: expected at least %u with %u servers of %u "
             "nodes (every node a server, a worker node or both), found %u", nodes - servers,
             servers, nodes, workers);
    return -1;
  }
  if (check_scale(a, servers, err, errlen) != 0) return -1;
  bool split = servers < nodes || workers < nodes;
  if (settings && settings->keys_at_workers && servers < nodes) {
    snprintf(err, errlen, "cluster.servers: policy.type \"%s\" puts keys on the nodes of the "
             "workers that use them, so every worker node must be a server; expected %u (every "
             "node) with it, found %u servers and %u worker nodes of %u nodes", name, nodes,
             servers, workers, nodes);
    return -1;
  }
  if (check_sampling(a, servers, err, errlen) != 0) return -1;
  if (settings && settings->keys_at_workers && a->n_scale) {
    snprintf(err, errlen, "cluster.scale: expected none with policy.type \"%s\", which puts "
             "keys on the nodes of the workers that use them (a server that left would take "
             "keys again), found %zu steps", name, a->n_scale);
    return -1;
  }
  if (stages && split) {
    snprintf(err, errlen, "stages: expected none with separate servers and worker nodes "
             "(cluster.servers %u and cluster.worker_nodes %u of %u nodes; not implemented)",
             servers, workers, nodes);
    return -1;
  }
  return 0;
}

/* The layout's roles from the run's arguments (checked already). */
void run_roles_layout(const run_args *a, ps_layout *l) {
  uint32_t servers = a->servers ? a->servers : a->nodes;
  l->num_servers = servers == a->nodes ? 0 : servers;
  l->num_worker_nodes = a->worker_nodes == a->nodes ? 0 : a->worker_nodes;
  uint32_t homes = stable_servers(a, servers);
  l->num_homes = homes == servers ? 0 : homes;
}

uint32_t run_node_workers(const run_setup *s, uint32_t id) {
  return ps_layout_runs_workers(&s->layout, id) ? s->args.workers_per_node : 0;
}

uint32_t run_setup_workers(const run_setup *s) {
  return ps_layout_worker_nodes(&s->layout) * s->args.workers_per_node;
}
