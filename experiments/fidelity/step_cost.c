/*
 * `pslab calibrate --workload SPEC --profile P`: a worker's own work per
 * step (cost.step_s) for SPEC's workload on this machine, added to P.
 *
 * What no other figure charges: the workload's bookkeeping (drawing keys,
 * making the step's lists, finding a key's slot for real math) and real
 * math slower than its flop count at host_speed. It is measured where
 * nothing else is at work: SPEC validated (experiments/fidelity/
 * validate_command.c) on one node of one worker, static, the sweep left out
 * (its base workload), step_s 0, EXP_STEP_RUNS runs on each backend; per run,
 * (real CPU - simulated CPU) / steps, and step_s is their median. The
 * simulator is deterministic, so the runs differ only on the real side:
 * their range is the figure's spread. A median below 0 (the simulator
 * charges more than the real runs spent) gives 0 and a note.
 *
 * The profile written is P with cost.step_s set and, under its
 * EXP_PROFILE_ABOUT, "step": the workload measured (as validated), the spec,
 * steps, the runs' figures and their spread; a note says that step_s
 * belongs to that workload. The validation stays in <OUT>.runs/ (its
 * table, records and plots). See
 * docs/fidelity.md, "A worker's own work per step".
 */
#include "experiments/results/results.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_NOTE "cost.step_s belongs to the workload of"

int exp_step_cost_read(const char *dir, double *v, size_t *n, uint64_t *steps,
                       cJSON **workload, char *err, size_t errlen) {
  *workload = NULL;
  char *path = exp_join_path(dir, "sim/runs.jsonl");
  char *text = path ? exp_read_file(path, NULL, err, errlen) : NULL;
  free(path);
  if (!text) return -1;
  char *nl = strchr(text, '\n');
  if (nl) *nl = '\0';
  cJSON *rec = cJSON_Parse(text);
  free(text);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(rec, "metrics"), "steps");
  const cJSON *wl = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(rec, "config"), "workload");
  *steps = cJSON_IsNumber(s) && s->valuedouble >= 1 ? (uint64_t)s->valuedouble : 0;
  *workload = wl ? cJSON_Duplicate(wl, true) : NULL;
  cJSON_Delete(rec);
  path = *steps ? exp_join_path(dir, "validate.jsonl") : NULL;
  text = path ? exp_read_file(path, NULL, err, errlen) : NULL;
  free(path);
  if (!*steps) snprintf(err, errlen, "%s/sim/runs.jsonl: no steps in its first record", dir);
  if (!text) {
    cJSON_Delete(*workload);
    *workload = NULL;
    return -1;
  }
  *n = 0;
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line && *n < EXP_STEP_RUNS;
       line = strtok_r(NULL, "\n", &save)) {
    cJSON *r = cJSON_Parse(line);
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(r, "kind");
    const cJSON *metric = cJSON_GetObjectItemCaseSensitive(r, "metric");
    const cJSON *sim = cJSON_GetObjectItemCaseSensitive(r, "sim");
    const cJSON *real = cJSON_GetObjectItemCaseSensitive(r, "real");
    if (cJSON_IsString(kind) && strcmp(kind->valuestring, "run") == 0 &&
        cJSON_IsString(metric) && strcmp(metric->valuestring, "cpu_s") == 0 &&
        cJSON_IsNumber(sim) && cJSON_IsNumber(real))
      v[(*n)++] = (real->valuedouble - sim->valuedouble) / (double)*steps;
    cJSON_Delete(r);
  }
  free(text);
  if (*n == 0) {
    snprintf(err, errlen, "%s/validate.jsonl: no run compared CPU (cpu_s)", dir);
    cJSON_Delete(*workload);
    *workload = NULL;
    return -1;
  }
  for (size_t i = 1; i < *n; i++) /* a handful: insertion sort */
    for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
      double t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return 0;
}

double exp_median_sorted(const double *sorted, size_t n) {
  if (n == 0) return NAN;
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* The profile at path with step_s and its record added (workload taken,
 * freed on failure); NULL with a message. */
static cJSON *profile_with(const char *path, double step_s, const double *v, size_t n,
                           uint64_t steps, cJSON *workload, const char *spec, char *err,
                           size_t errlen) {
  char *text = exp_read_file(path, NULL, err, errlen);
  if (!text) {
    cJSON_Delete(workload);
    return NULL;
  }
  cJSON *p = cJSON_Parse(text);
  free(text);
  cJSON *cost = cJSON_GetObjectItemCaseSensitive(p, "cost");
  cJSON *about = cJSON_GetObjectItemCaseSensitive(p, EXP_PROFILE_ABOUT);
  if (!cJSON_IsObject(cost) || !cJSON_IsObject(about)) {
    snprintf(err, errlen, "%s: not a profile of pslab calibrate (expected \"cost\" and \"%s\")",
             path, EXP_PROFILE_ABOUT);
    cJSON_Delete(p);
    cJSON_Delete(workload);
    return NULL;
  }
  cJSON_DeleteItemFromObjectCaseSensitive(cost, "step_s");
  cJSON_AddNumberToObject(cost, "step_s", step_s);
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddStringToObject(rec, "spec", spec);
  if (workload) cJSON_AddItemToObject(rec, "workload", workload);
  cJSON_AddNumberToObject(rec, "steps", (double)steps);
  cJSON_AddItemToObject(rec, "per_step_s", cJSON_CreateDoubleArray(v, (int)n));
  double m = exp_median_sorted(v, n);
  cJSON_AddNumberToObject(rec, "spread", m > 0 ? (v[n - 1] - v[0]) / 2 / m : 0);
  cJSON_DeleteItemFromObjectCaseSensitive(about, "step");
  cJSON_AddItemToObject(about, "step", rec);
  cJSON *notes = cJSON_GetObjectItemCaseSensitive(about, "notes");
  if (!cJSON_IsArray(notes)) notes = cJSON_AddArrayToObject(about, "notes");
  for (int i = cJSON_GetArraySize(notes) - 1; i >= 0; i--) { /* an earlier workload's */
    const cJSON *old = cJSON_GetArrayItem(notes, i);
    if (cJSON_IsString(old) && strncmp(old->valuestring, STEP_NOTE, strlen(STEP_NOTE)) == 0)
      cJSON_DeleteItemFromArray(notes, i);
  }
  char note[512];
  snprintf(note, sizeof note,
           STEP_NOTE " %s (calibration.step.workload): another workload's steps cost other "
           "work%s", spec,
           m < 0 ? "; the simulator charged more than the real runs spent, so it is 0" : "");
  cJSON_AddItemToArray(notes, cJSON_CreateString(note));
  return p;
}

/* Whether the profile at path (readable or not: exp_validate says so) has a
 * cost.step_s other than 0. */
static bool profile_has_step(const char *path) {
  char err[256];
  char *text = exp_read_file(path, NULL, err, sizeof err);
  cJSON *p = text ? cJSON_Parse(text) : NULL;
  free(text);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "cost"),
                                                    "step_s");
  bool has = cJSON_IsNumber(s) && s->valuedouble != 0;
  cJSON_Delete(p);
  return has;
}

/* SPEC validated on one node of one worker into dir: exp_validate's status. */
static int validate_alone(const char *spec, const char *profile, const char *dir, FILE *log,
                          FILE *progress) {
  /* A profile that has a step_s (another workload's) would charge it: 0
   * then; only then, as the real side warns of a cost it does not read. */
  static const char *const sets[] = {"cluster.nodes=1", "cluster.workers_per_node=1", "sweep={}",
                                     "policy={\"type\":\"static\"}", "cluster.cost.step_s=0"};
  size_t n_sets = sizeof sets / sizeof *sets - !profile_has_step(profile);
  exp_validate_options o;
  exp_validate_options_default(&o);
  o.out_dir = dir;
  o.repeats = EXP_STEP_RUNS;
  o.profile = profile;
  o.quiet = progress == NULL;
  o.force = true;
  o.out = progress ? progress : fopen("/dev/null", "w");
  o.log = log;
  if (!o.out) {
    fprintf(log, "pslab calibrate: /dev/null: cannot open\n");
    return EXP_EXIT_FAILED;
  }
  if (progress)
    fprintf(progress, "pslab calibrate: %s's workload on one node of one worker, %d runs on "
            "each backend, into %s/\n", spec, EXP_STEP_RUNS, dir);
  int rc = exp_validate(spec, sets, n_sets, &o);
  if (!progress) fclose(o.out);
  return rc;
}

int exp_calibrate_workload(const char *spec, const char *profile, const char *out, FILE *log,
                           FILE *progress) {
  char err[1024];
  size_t len = strlen(out);
  char *dir = malloc(len + sizeof ".runs");
  if (!dir) return EXP_EXIT_FAILED;
  memcpy(dir, out, len);
  if (len > 5 && strcmp(out + len - 5, ".json") == 0) len -= 5;
  memcpy(dir + len, ".runs", sizeof ".runs");
  int rc = validate_alone(spec, profile, dir, log, progress);
  double v[EXP_STEP_RUNS];
  size_t n = 0;
  uint64_t steps = 0;
  cJSON *workload = NULL, *p = NULL;
  if (rc != EXP_EXIT_OK && rc != EXP_EXIT_PLOTS) {
    snprintf(err, sizeof err, "the validation of %s failed (see above)", spec);
  } else if (exp_step_cost_read(dir, v, &n, &steps, &workload, err, sizeof err) == 0) {
    double m = exp_median_sorted(v, n);
    p = profile_with(profile, m > 0 ? m : 0, v, n, steps, workload, spec, err, sizeof err);
    if (p && progress)
      fprintf(progress, "step_s %.3g s a step (%zu real runs of %llu steps: %.3g to %.3g)%s\n",
              m > 0 ? m : 0, n, (unsigned long long)steps, v[0], v[n - 1],
              m < 0 ? "; the simulator charged more than the real runs spent: 0" : "");
  }
  free(dir);
  rc = p ? exp_write_json_atomic(out, p, err, sizeof err) : -1;
  cJSON_Delete(p);
  if (rc != 0) {
    fprintf(log, "pslab calibrate: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  if (progress) fprintf(progress, "wrote %s\n", out);
  return EXP_EXIT_OK;
}
