/*
 * Saving a run's trained parameters: each node's owned values, once the run
 * is quiet, as a part (ps_node_owned_each into workloads/' part writer), and
 * the merge of the parts with the run's workload (initial values, the
 * workload's own files). The files are workloads/' (saved parameters).
 */
#include "run/internal.h"

#include <stdio.h>

int run_params_save_part(const run_setup *s, ps_node *core, uint32_t node, char *err,
                         size_t errlen) {
  const char *dir = s->args.params_dir;
  if (!dir) return 0;
  wl_params_part *p = wl_params_part_open(dir, node, err, errlen);
  if (!p) return -1;
  ps_node_owned_each(core, wl_params_part_add, p);
  return wl_params_part_close(p, true, err, errlen);
}

int run_params_merge(const run_setup *s, char *err, size_t errlen) {
  const char *dir = s->args.params_dir;
  if (!dir) return 0;
  int rc = wl_params_merge(s->wl, &s->layout, dir, s->layout.num_nodes, err, errlen);
  if (rc != 0) run_params_discard(s);
  return rc;
}

void run_params_discard(const run_setup *s) {
  if (s->args.params_dir) wl_params_remove_parts(s->args.params_dir, s->layout.num_nodes);
}
