/*
 * The work a run asks for, and the limit it must stay under without
 * --force: a spec with `steps_per_worker: 1e15` is accepted by every field
 * check and would run until killed, so its size is checked as a whole.
 *
 * The work is the key accesses the run's spec asks for, counted from its
 * fields alone (no data file is read): total steps (nodes x workers per
 * node x steps per worker, or what a workload's size and epochs make) times
 * the keys of a step. Workloads whose steps come from a data file (kge,
 * w2v, mf with ratings, trace without steps_per_worker) are bounded by that
 * file and are not counted. experiments/SPEC.md ("The work a run may ask
 * for") documents the count and the limit, EXP_WORK_LIMIT.
 */
#include "experiments/spec/spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The number at path in config, or dflt when it is not one. */
static double number_at(const cJSON *config, const char *path, double dflt) {
  const cJSON *v = exp_path_get(config, path);
  return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* Work of a workload with steps_per_worker: every worker's steps times the
 * keys of a step (zipf: reads, writes and samples; others one). */
static double steps_work(const cJSON *config, bool zipf, char *how, size_t howlen) {
  double steps = number_at(config, "workload.steps_per_worker", 0);
  double nodes = number_at(config, "cluster.nodes", 1);
  double wpn = number_at(config, "cluster.workers_per_node", 1);
  double keys = 1;
  if (zipf)
    keys = number_at(config, "workload.reads_per_step", 10) +
           number_at(config, "workload.writes_per_step", 10) +
           number_at(config, "workload.samples_per_step", 0);
  if (keys < 1) keys = 1;
  snprintf(how, howlen, "workload.steps_per_worker %g x %g key%s a step%s x cluster.nodes %g x "
           "cluster.workers_per_node %g", steps, keys, keys == 1 ? "" : "s",
           zipf ? " (reads_per_step + writes_per_step + samples_per_step)" : "", nodes, wpn);
  return steps * keys * nodes * wpn;
}

double exp_run_work(const exp_run *run, char *how, size_t howlen) {
  const cJSON *config = run->config;
  const cJSON *type = exp_path_get(config, "workload.type");
  const char *t = cJSON_IsString(type) ? type->valuestring : "";
  double epochs = number_at(config, "workload.epochs", 1);
  if (cJSON_IsNumber(exp_path_get(config, "workload.steps_per_worker")))
    return steps_work(config, strcmp(t, "zipf") == 0, how, howlen);
  if (strcmp(t, "dnn") == 0) {
    double examples = number_at(config, "workload.examples", 4096);
    double batch = number_at(config, "workload.batch", 32);
    double steps = ceil(examples / (batch >= 1 ? batch : 1));
    snprintf(how, howlen, "workload.examples %g / workload.batch %g = %g steps x "
             "workload.epochs %g, a key a step", examples, batch, steps, epochs);
    return steps * epochs;
  }
  if (strcmp(t, "mf") == 0 && cJSON_IsNumber(exp_path_get(config, "workload.nnz"))) {
    double nnz = number_at(config, "workload.nnz", 0);
    snprintf(how, howlen, "workload.nnz %g x workload.epochs %g x 2 keys (a row's, a column's)",
             nnz, epochs);
    return nnz * epochs * 2;
  }
  snprintf(how, howlen, "not counted: a data file bounds it");
  return -1;
}

bool exp_spec_check_work(const exp_spec *s, exp_errors *errs) {
  const exp_run_list *runs = exp_spec_runs(s);
  size_t over = 0, worst = 0;
  double most = -1;
  char how[512];
  for (size_t i = 0; i < runs->count; i++) {
    double work = exp_run_work(&runs->runs[i], how, sizeof how);
    if (!(work <= EXP_WORK_LIMIT)) over++;
    if (!(work <= most)) {
      most = work;
      worst = i;
    }
  }
  if (!over) return true;
  exp_run_work(&runs->runs[worst], how, sizeof how);
  exp_buf b = {0};
  exp_buf_printf(&b, "%s: run %u asks for %.3g key accesses (%s), over the limit of %.0e a run "
                 "(experiments/SPEC.md, \"The work a run may ask for\")", exp_spec_file(s),
                 runs->runs[worst].run, most, how, EXP_WORK_LIMIT);
  if (over > 1) exp_buf_printf(&b, ", as %zu other runs do", over - 1);
  exp_buf_printf(&b, "; --force runs it anyway");
  char *line = exp_buf_take(&b);
  exp_errors_addf(errs, "%s", line ? line : "out of memory");
  free(line);
  return false;
}
