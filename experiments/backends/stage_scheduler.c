/*
 * The stage scheduler (FlexPS): resolves a stage's "workers": "auto" into a
 * count before a run is handed to its backend, so both backends get counts
 * and one piece of code decides for both.
 *
 * For each auto stage, in order, it simulates every candidate count c
 * (run_stage_candidates: 1, 2, 4, ... and the cluster's workers) on the
 * run's simulated cluster (the spec's cluster as the simulator reads it; for
 * a real run, its simulated twin: its profile, or the defaults), with the
 * run's workload, policy, seed and the stage's own batch, lr and
 * consistency, for a prefix of the stage: min(EXP_SCHED_PREFIX_STEPS,
 * ceil(steps / c)) steps per worker. The stage starts from the state the
 * stages before it leave: each candidate's simulation runs those stages
 * first, whole and with the counts already chosen, so the keys' placement,
 * the replicas and the values are where the run will really have them
 * (a stage after one that moved every key to one node is estimated with
 * the keys there, not from fresh parameters); only the stage's own time
 * counts (its metrics' stages[k].time_s). Its estimate of the stage's time
 * is the prefix's time scaled to the stage's steps per worker:
 * time(prefix) * ceil(steps / c) / prefix. The
 * fastest estimate wins (the fewer workers on a tie). Simulations are
 * deterministic for a seed, so the choice is too; each runs in a forked
 * child, as SimGrid runs once per process.
 *
 * The choice and its figures go into the run's metrics: stages[k].auto
 * (the "stages" metric of run/metrics.c says what they are).
 */
#include "experiments/backends/backends.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXP_SCHED_PREFIX_STEPS 50

bool exp_stages_have_auto(const cJSON *stages) {
  for (const cJSON *st = cJSON_IsArray(stages) ? stages->child : NULL; st; st = st->next) {
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(st, "workers");
    if (cJSON_IsString(w) && strcmp(w->valuestring, "auto") == 0) return true;
  }
  return false;
}

/* ------------------------------------------------------------ simulating */

/* [the first k stages of `resolved` (their counts chosen), then stage k
 * with `workers` workers and `per_worker` steps each]. */
static cJSON *prefix_stages(const cJSON *resolved, size_t k, uint32_t workers,
                            uint64_t per_worker) {
  cJSON *list = cJSON_CreateArray();
  const cJSON *st = resolved->child;
  for (size_t i = 0; list && st && i < k; i++, st = st->next) {
    cJSON *before = cJSON_Duplicate(st, true);
    if (!before || !cJSON_AddItemToArray(list, before)) {
      cJSON_Delete(before);
      cJSON_Delete(list);
      return NULL;
    }
  }
  cJSON *one = st ? cJSON_Duplicate(st, true) : NULL;
  if (!one || !list || !cJSON_AddItemToArray(list, one)) {
    cJSON_Delete(one);
    cJSON_Delete(list);
    return NULL;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(one, "workers");
  cJSON_DeleteItemFromObjectCaseSensitive(one, "steps");
  if (!cJSON_AddNumberToObject(one, "workers", workers) ||
      !cJSON_AddNumberToObject(one, "steps", (double)(per_worker * workers))) {
    cJSON_Delete(list);
    return NULL;
  }
  return list;
}

static noreturn void simulate_child(const exp_backend_job *job, const cJSON *stages, int fd) {
  sim_run_args a = {.run = {.workload = job->workload, .policy = job->policy,
                            .consistency = job->consistency, .stages = stages,
                            .base_dir = job->base_dir, .seed = job->seed},
                    .cluster = &job->cluster->sim};
  char err[1024] = "";
  cJSON *m = sim_run(&a, err, sizeof err);
  char *text = m ? cJSON_PrintUnformatted(m) : NULL;
  FILE *out = fdopen(fd, "w");
  if (out) fprintf(out, "%c%s", text ? 'M' : 'E', text ? text : *err ? err : "failed");
  if (out) fclose(out);
  _exit(text ? 0 : 1);
}

/* Simulates the stages before stage k of `resolved`, then stage k with
 * `workers` workers for per_worker steps each: stage k's time in *time_s.
 * 0, or -1 with a message. */
static int simulate(const exp_backend_job *job, const cJSON *resolved, size_t k,
                    uint32_t workers, uint64_t per_worker, double *time_s, char *err,
                    size_t errlen) {
  cJSON *stages = prefix_stages(resolved, k, workers, per_worker);
  int fds[2];
  if (!stages || pipe(fds) != 0) {
    cJSON_Delete(stages);
    snprintf(err, errlen, "%s", stages ? strerror(errno) : "out of memory");
    return -1;
  }
  fflush(NULL);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    run_die_with_parent(parent); /* never outlive the run */
    close(fds[0]);
    simulate_child(job, stages, fds[1]);
  }
  close(fds[1]);
  cJSON_Delete(stages);
  exp_buf b = {0};
  char chunk[4096];
  ssize_t got;
  while (pid > 0 && (got = read(fds[0], chunk, sizeof chunk)) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    exp_buf_printf(&b, "%.*s", (int)got, chunk);
  }
  close(fds[0]);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) continue;
  char *text = exp_buf_take(&b);
  cJSON *m = text && text[0] == 'M' ? cJSON_Parse(text + 1) : NULL;
  const cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "stages"), (int)k);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(st, "time_s");
  int rc = 0;
  if (cJSON_IsNumber(t)) {
    *time_s = t->valuedouble;
  } else {
    snprintf(err, errlen, "%s", pid < 0 ? "cannot fork" : text && text[0] == 'E' ? text + 1
                                : "the simulation ended without its metrics");
    rc = -1;
  }
  cJSON_Delete(m);
  free(text);
  return rc;
}

/* ------------------------------------------------------------ choosing */

size_t exp_stages_trials(uint64_t steps, uint32_t workers, double *prefix_steps) {
  run_stage_info info = {.auto_workers = true, .steps = steps, .max_per_worker = UINT64_MAX};
  uint32_t cand[RUN_STAGE_CANDIDATES_MAX];
  size_t n = run_stage_candidates(&info, workers, cand);
  *prefix_steps = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t per = (steps + cand[i] - 1) / cand[i];
    *prefix_steps += (double)(per < EXP_SCHED_PREFIX_STEPS ? per : EXP_SCHED_PREFIX_STEPS) *
                     (double)cand[i];
  }
  return n;
}

static bool add_numbers(cJSON *o, const char *name, const double *v, size_t n) {
  cJSON *list = cJSON_AddArrayToObject(o, name);
  for (size_t i = 0; list && i < n; i++)
    if (!cJSON_AddItemToArray(list, cJSON_CreateNumber(v[i]))) return false;
  return list != NULL;
}

/* Resolves stage k of `resolved` (auto; the stages before it resolved):
 * its count into *chosen, its record into *record. */
static int schedule_stage(const exp_backend_job *job, const cJSON *resolved, size_t k,
                          const run_stage_info *info, uint32_t total, uint32_t *chosen,
                          cJSON **record, char *err, size_t errlen) {
  uint32_t cand[RUN_STAGE_CANDIDATES_MAX];
  size_t n = run_stage_candidates(info, total, cand);
  double counts[RUN_STAGE_CANDIDATES_MAX], prefix[RUN_STAGE_CANDIDATES_MAX],
      est[RUN_STAGE_CANDIDATES_MAX];
  size_t best = 0;
  for (size_t i = 0; i < n; i++) {
    uint64_t per = (info->steps + cand[i] - 1) / cand[i];
    uint64_t p = per < EXP_SCHED_PREFIX_STEPS ? per : EXP_SCHED_PREFIX_STEPS;
    double t;
    char why[1024];
    if (simulate(job, resolved, k, cand[i], p, &t, why, sizeof why) != 0) {
      snprintf(err, errlen, "stages[%zu].workers: auto: simulating %u workers failed: %s", k,
               (unsigned)cand[i], why);
      return -1;
    }
    counts[i] = cand[i];
    prefix[i] = (double)p;
    est[i] = t * (double)per / (double)p;
    fprintf(stderr, "pslab: stages[%zu]: %u workers: %llu steps each took %.6g s "
                    "(simulated): estimate %.6g s\n", k, (unsigned)cand[i],
            (unsigned long long)p, t, est[i]);
    if (est[i] < est[best]) best = i;
  }
  *chosen = cand[best];
  cJSON *o = cJSON_CreateObject();
  bool ok = o && add_numbers(o, "candidates", counts, n) &&
            add_numbers(o, "prefix_steps", prefix, n) &&
            add_numbers(o, "estimated_s", est, n) &&
            cJSON_AddNumberToObject(o, "chosen", cand[best]);
  if (!ok) {
    cJSON_Delete(o);
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  *record = o;
  return 0;
}

cJSON *exp_stages_schedule(const exp_backend_job *job, cJSON **records, char *err,
                           size_t errlen) {
  *records = NULL;
  const exp_cluster *c = job->cluster;
  uint32_t total = c->sim.nodes * c->sim.workers_per_node;
  run_args a = {.workload = job->workload, .policy = job->policy,
                .consistency = job->consistency, .stages = job->stages,
                .nodes = c->sim.nodes, .workers_per_node = c->sim.workers_per_node,
                .seed = job->seed, .base_dir = job->base_dir};
  run_stage_info info[RUN_STAGES_MAX];
  size_t n;
  if (run_stages_check(&a, true, info, &n, err, errlen) != 0) return NULL;
  if (n == 0) {
    snprintf(err, errlen, "stages: cannot be scheduled (the workload or the policy is "
                          "invalid)");
    return NULL;
  }
  cJSON *resolved = cJSON_Duplicate(job->stages, true);
  cJSON *list = cJSON_CreateArray();
  if (!resolved || !list) goto nomem;
  size_t k = 0;
  for (cJSON *st = resolved->child; st; st = st->next, k++) {
    cJSON *record = NULL;
    if (info[k].auto_workers) {
      uint32_t chosen;
      if (schedule_stage(job, resolved, k, &info[k], total, &chosen, &record, err, errlen) != 0)
        goto fail;
      cJSON *count = cJSON_CreateNumber(chosen);
      if (!count || !cJSON_ReplaceItemInObjectCaseSensitive(st, "workers", count)) {
        cJSON_Delete(count);
        cJSON_Delete(record);
        goto nomem;
      }
    }
    if (!record) record = cJSON_CreateNull();
    if (!record || !cJSON_AddItemToArray(list, record)) {
      cJSON_Delete(record);
      goto nomem;
    }
  }
  *records = list;
  return resolved;
nomem:
  snprintf(err, errlen, "out of memory scheduling the stages");
fail:
  cJSON_Delete(resolved);
  cJSON_Delete(list);
  return NULL;
}

void exp_stages_attach(cJSON *metrics, cJSON *records) {
  cJSON *stages = cJSON_GetObjectItemCaseSensitive(metrics, "stages");
  size_t k = 0;
  for (cJSON *st = cJSON_IsArray(stages) ? stages->child : NULL; st; st = st->next, k++) {
    cJSON *r = cJSON_GetArrayItem(records, (int)k);
    if (!cJSON_IsObject(r)) continue;
    cJSON_AddItemToObject(st, "auto", cJSON_Duplicate(r, true));
  }
}
