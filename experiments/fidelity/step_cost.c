/*
 * `pslab calibrate --workload SPEC --profile P`: a worker's own work per step
 * (cost.step_s, and cost.step_s_by_policy) for SPEC's workload on this
 * machine, added to P.
 *
 * What no other figure charges: the workload's bookkeeping (drawing keys,
 * making the step's lists, finding a key's slot for real math), real math
 * slower than its flop count at host_speed, and what a policy costs that the
 * model leaves uncharged (its own work; for adaptive without preemption,
 * mostly the receiver's wake-ups for the keys it announces to its own node,
 * which the simulated server batches). It is measured where nothing else is
 * at work: SPEC validated (experiments/fidelity/validate_command.c) on one
 * node of one worker, the sweep replaced by the policies of SPEC (static,
 * then the first of each other type among its policy and its sweep's "policy"
 * list; other swept fields left out: its base workload), no step figures,
 * EXP_STEP_RUNS runs a policy on each backend; per run, (real CPU - simulated
 * CPU) / steps, and each policy's figure is the median of its runs: static's
 * is step_s, the others' step_s_by_policy (which the simulator charges in
 * place of step_s for a run of that policy type). The simulator is
 * deterministic, so the runs differ only on the real side: their range is the
 * figure's spread. A median below 0 (the simulator charges more than the real
 * runs spent) gives 0 and a note. A policy whose runs fail on one node gets
 * no figure (its runs charge step_s), said on the log; static's must be
 * measured.
 *
 * The figures are what the model leaves uncharged, so they belong to the
 * model too: --set changes of SPEC (exp_workload_options; not the one-node
 * layout's own fields) measure them under a changed model, and reuse_real
 * derives them again from the real runs already in <OUT>.runs/real/.
 *
 * The profile written is P with cost.step_s (and step_s_by_policy) set and,
 * under its EXP_PROFILE_ABOUT, "step": the workload measured (as validated),
 * the spec, the changes ("sets") and whether the real runs were reused,
 * steps, the runs' figures and their spread, and "by_policy" the same for
 * the others; a note says that the figures belong to that workload.
 * The validation stays in <OUT>.runs/ (its table, records and plots). See
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
#define STEP_POLICIES_MAX 16 /* policy types measured, static included */

/* The policy type of a run record: its sweep's policy, else static (the
 * base policy of the validation on one node). */
static const char *run_policy(const cJSON *r) {
  const cJSON *pol = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(r, "sweep"), "policy");
  const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pol, "type"));
  return type ? type : "static";
}

int exp_step_cost_read(const char *dir, const char *policy, double *v, size_t *n,
                       uint64_t *steps, cJSON **workload, char *err, size_t errlen) {
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
        cJSON_IsNumber(sim) && cJSON_IsNumber(real) &&
        (!policy || strcmp(run_policy(r), policy) == 0))
      v[(*n)++] = (real->valuedouble - sim->valuedouble) / (double)*steps;
    cJSON_Delete(r);
  }
  free(text);
  if (*n == 0) {
    snprintf(err, errlen, "%s/validate.jsonl: no run%s%s compared CPU (cpu_s)", dir,
             policy ? " of policy " : "", policy ? policy : "");
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

/* What one policy type measured: its runs' per-step figures. */
typedef struct {
  char type[64];
  double v[EXP_STEP_RUNS];
  size_t n;
} step_of_policy;

static cJSON *policy_record(const step_of_policy *m) {
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddItemToObject(rec, "per_step_s", cJSON_CreateDoubleArray(m->v, (int)m->n));
  double med = exp_median_sorted(m->v, m->n);
  cJSON_AddNumberToObject(rec, "spread", med > 0 ? (m->v[m->n - 1] - m->v[0]) / 2 / med : 0);
  return rec;
}

/* The profile at path with step_s (ms[0], static's), step_s_by_policy (the
 * others') and their record added (workload taken, freed on failure; wo's
 * changes and whether the real runs were reused with them); NULL with a
 * message. */
static cJSON *profile_with(const char *path, const step_of_policy *ms, size_t n_ms,
                           uint64_t steps, cJSON *workload, const char *spec,
                           const exp_workload_options *wo, char *err, size_t errlen) {
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
  double m = exp_median_sorted(ms[0].v, ms[0].n);
  cJSON_DeleteItemFromObjectCaseSensitive(cost, "step_s");
  cJSON_AddNumberToObject(cost, "step_s", m > 0 ? m : 0);
  cJSON_DeleteItemFromObjectCaseSensitive(cost, "step_s_by_policy");
  cJSON *rec = cJSON_CreateObject();
  cJSON_AddStringToObject(rec, "spec", spec);
  if (workload) cJSON_AddItemToObject(rec, "workload", workload);
  if (wo && wo->n_sets)
    cJSON_AddItemToObject(rec, "sets", cJSON_CreateStringArray(wo->sets, (int)wo->n_sets));
  if (wo && wo->reuse_real) cJSON_AddTrueToObject(rec, "real_runs_reused");
  cJSON_AddNumberToObject(rec, "steps", (double)steps);
  cJSON_AddItemToObject(rec, "per_step_s", cJSON_CreateDoubleArray(ms[0].v, (int)ms[0].n));
  cJSON_AddNumberToObject(rec, "spread",
                          m > 0 ? (ms[0].v[ms[0].n - 1] - ms[0].v[0]) / 2 / m : 0);
  if (n_ms > 1) {
    cJSON *by = cJSON_AddObjectToObject(cost, "step_s_by_policy");
    cJSON *recs = cJSON_AddObjectToObject(rec, "by_policy");
    for (size_t i = 1; i < n_ms; i++) {
      double mi = exp_median_sorted(ms[i].v, ms[i].n);
      cJSON_AddNumberToObject(by, ms[i].type, mi > 0 ? mi : 0);
      cJSON_AddItemToObject(recs, ms[i].type, policy_record(&ms[i]));
    }
  }
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
 * cost.step_s other than 0, or figures by policy. */
static bool profile_has_step(const char *path) {
  char err[256];
  char *text = exp_read_file(path, NULL, err, sizeof err);
  cJSON *p = text ? cJSON_Parse(text) : NULL;
  free(text);
  const cJSON *cost = cJSON_GetObjectItemCaseSensitive(p, "cost");
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(cost, "step_s");
  bool has = (cJSON_IsNumber(s) && s->valuedouble != 0) ||
             cJSON_GetObjectItemCaseSensitive(cost, "step_s_by_policy");
  cJSON_Delete(p);
  return has;
}

/* The policies to measure: static first (step_s), then the first of each
 * other type among SPEC's policy and its sweep's "policy" list. Returns the
 * sweep {"policy": [...]} of them as JSON text (caller frees), their types
 * in types[0 .. *n); NULL with a message when SPEC cannot be read. */
static char *policies_of(const char *spec, step_of_policy *types, size_t *n, size_t cap,
                         char *err, size_t errlen) {
  char *text = exp_read_file(spec, NULL, err, errlen);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  free(text);
  if (!j) {
    if (!err[0]) snprintf(err, errlen, "%s: not JSON", spec);
    return NULL;
  }
  cJSON *list = cJSON_CreateArray();
  cJSON *st = cJSON_CreateObject();
  cJSON_AddStringToObject(st, "type", "static");
  cJSON_AddItemToArray(list, st);
  snprintf(types[0].type, sizeof types[0].type, "static");
  *n = 1;
  const cJSON *swept = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(j, "sweep"), "policy");
  /* The base policy (an object), then the swept ones (a list of them). */
  const cJSON *cands[2] = {cJSON_GetObjectItemCaseSensitive(j, "policy"),
                           cJSON_IsArray(swept) ? swept->child : NULL};
  for (int c = 0; c < 2; c++) {
    for (const cJSON *it = cands[c]; it; it = c ? it->next : NULL) {
      const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(it, "type"));
      if (!type || strlen(type) >= sizeof types[0].type) continue;
      bool seen = false;
      for (size_t i = 0; i < *n; i++) seen = seen || strcmp(types[i].type, type) == 0;
      if (seen || *n == cap) continue;
      snprintf(types[*n].type, sizeof types[*n].type, "%s", type);
      (*n)++;
      cJSON_AddItemToArray(list, cJSON_Duplicate(it, true));
    }
  }
  cJSON *sweep = cJSON_CreateObject();
  cJSON_AddItemToObject(sweep, "policy", list);
  char *out = cJSON_PrintUnformatted(sweep);
  cJSON_Delete(sweep);
  cJSON_Delete(j);
  return out;
}

/* The change of o that the one-node layout owns (and would override), or
 * NULL: what a --set of calibrate --workload may not change. */
static const char *refused_set(const exp_workload_options *o) {
  static const char *const owned[] = {"cluster.nodes", "cluster.workers_per_node", "sweep",
                                      "repeats"};
  for (size_t i = 0; o && i < o->n_sets; i++)
    for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) {
      size_t len = strlen(owned[k]);
      if (strncmp(o->sets[i], owned[k], len) == 0 &&
          (o->sets[i][len] == '=' || o->sets[i][len] == '.'))
        return o->sets[i];
    }
  return NULL;
}

/* SPEC validated on one node of one worker, under each of its policies
 * (sweep, a JSON object: {"policy": [...]}; their types ms[0 .. n)), with
 * o's changes made first, into dir: exp_validate's status. */
static int validate_alone(const char *spec, const char *profile, const char *sweep,
                          const step_of_policy *ms, size_t n, const exp_workload_options *wo,
                          const char *dir, FILE *log, FILE *progress) {
  char sweep_set[4096], zero[STEP_POLICIES_MAX][128];
  snprintf(sweep_set, sizeof sweep_set, "sweep=%s", sweep);
  size_t n_user = wo ? wo->n_sets : 0, n_sets = 0;
  const char **sets = malloc((n_user + 3 + STEP_POLICIES_MAX) * sizeof *sets);
  if (!sets) return EXP_EXIT_FAILED;
  for (size_t i = 0; i < n_user; i++) sets[n_sets++] = wo->sets[i];
  sets[n_sets++] = "cluster.nodes=1";
  sets[n_sets++] = "cluster.workers_per_node=1";
  sets[n_sets++] = sweep_set;
  /* A profile that has step figures (another workload's) would charge them:
   * 0 then; only then, as the real side warns of a cost it does not read. */
  if (profile_has_step(profile)) {
    sets[n_sets++] = "cluster.cost.step_s=0";
    for (size_t i = 1; i < n; i++) {
      snprintf(zero[i], sizeof zero[i], "cluster.cost.step_s_by_policy.%s=0", ms[i].type);
      sets[n_sets++] = zero[i];
    }
  }
  exp_validate_options o;
  exp_validate_options_default(&o);
  o.out_dir = dir;
  o.repeats = EXP_STEP_RUNS;
  o.profile = profile;
  o.quiet = progress == NULL;
  o.force = true;
  o.out = progress ? progress : fopen("/dev/null", "w");
  o.log = log;
  o.reuse_real = wo && wo->reuse_real;
  if (!o.out) {
    fprintf(log, "pslab calibrate: /dev/null: cannot open\n");
    free(sets);
    return EXP_EXIT_FAILED;
  }
  if (progress)
    fprintf(progress, "pslab calibrate: %s's workload on one node of one worker under %zu "
            "polic%s, %d runs each %s, into %s/\n", spec, n, n == 1 ? "y" : "ies",
            EXP_STEP_RUNS,
            o.reuse_real ? "simulated against the real runs already there" : "on each backend",
            dir);
  int rc = exp_validate(spec, sets, n_sets, &o);
  if (!progress) fclose(o.out);
  free(sets);
  return rc;
}


/* The figures of the validation in dir, one per policy type of ms[0 .. n)
 * that ran (a type whose runs failed is left out, said on log; static's,
 * ms[0], must be there): kept in ms[0 .. return), the workload as validated
 * into *workload. -1 with a message in err when static's is missing. */
static int read_figures(const char *dir, step_of_policy *ms, size_t n, uint64_t *steps,
                        cJSON **workload, FILE *log, FILE *progress, char *err, size_t errlen) {
  size_t kept = 0;
  for (size_t i = 0; i < n; i++) {
    cJSON *wl = NULL;
    char why[1024];
    step_of_policy *m = &ms[kept];
    if (i != kept) *m = ms[i];
    if (exp_step_cost_read(dir, m->type, m->v, &m->n, steps, &wl, why, sizeof why) != 0) {
      cJSON_Delete(wl);
      if (i == 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
      }
      fprintf(log, "pslab calibrate: %s: no figure for policy %s, whose runs charge step_s\n",
              why, m->type);
      continue;
    }
    if (i == 0) *workload = wl;
    else cJSON_Delete(wl);
    double med = exp_median_sorted(m->v, m->n);
    if (progress)
      fprintf(progress, "%s %s: %.3g s a step (%zu real runs of %llu steps: %.3g to %.3g)%s\n",
              i ? "step_s_by_policy" : "step_s", m->type, med > 0 ? med : 0, m->n,
              (unsigned long long)*steps, m->v[0], m->v[m->n - 1],
              med < 0 ? "; the simulator charged more than the real runs spent: 0" : "");
    kept++;
  }
  return (int)kept;
}

/* With the real runs reused, every one of the n policies kept (read_figures
 * kept ms[0 .. kept)) and with all its runs compared: missing real runs were
 * made for another spec or --set, and figures from fewer runs than measured
 * ones would pass unnoticed. kept, or -1 with a message. */
static int reused_whole(const char *dir, const step_of_policy *ms, size_t n, size_t kept,
                        char *err, size_t errlen) {
  char which[128] = "";
  if (kept < n) snprintf(which, sizeof which, "none of a policy's (named above)");
  for (size_t k = 0; !which[0] && k < kept; k++)
    if (ms[k].n != EXP_STEP_RUNS)
      snprintf(which, sizeof which, "%zu of the %d of policy %.63s", ms[k].n, EXP_STEP_RUNS,
               ms[k].type);
  if (!which[0]) return (int)kept;
  snprintf(err, errlen, "--reuse-real: %.300s/real/ holds %s real runs to compare (made for "
           "another spec or --set, or failed): make them again without --reuse-real", dir,
           which);
  return -1;
}

int exp_calibrate_workload(const char *spec, const char *profile, const char *out,
                           const exp_workload_options *wo, FILE *log, FILE *progress) {
  char err[1024] = "";
  const char *refused = refused_set(wo);
  if (refused) {
    fprintf(log, "pslab calibrate: --set %s: --workload measures on one node of one worker "
            "under SPEC's policies, %d runs each, and sets cluster.nodes, "
            "cluster.workers_per_node, sweep and repeats itself\n", refused, EXP_STEP_RUNS);
    return EXP_EXIT_FAILED;
  }
  size_t len = strlen(out);
  char *dir = malloc(len + sizeof ".runs");
  if (!dir) return EXP_EXIT_FAILED;
  memcpy(dir, out, len);
  if (len > 5 && strcmp(out + len - 5, ".json") == 0) len -= 5;
  memcpy(dir + len, ".runs", sizeof ".runs");
  step_of_policy ms[STEP_POLICIES_MAX];
  size_t n_ms = 0;
  char *sweep = policies_of(spec, ms, &n_ms, STEP_POLICIES_MAX, err, sizeof err);
  int rc = sweep ? validate_alone(spec, profile, sweep, ms, n_ms, wo, dir, log, progress)
                 : EXP_EXIT_FAILED;
  free(sweep);
  /* A policy that cannot run on one node fails its runs only: the others'
   * figures stand, and static's must. */
  if (rc != EXP_EXIT_OK && rc != EXP_EXIT_PLOTS && !err[0])
    fprintf(log, "pslab calibrate: some runs of the validation of %s failed (see above)\n",
            spec);
  uint64_t steps = 0;
  cJSON *workload = NULL, *p = NULL;
  int kept = err[0] ? -1 : read_figures(dir, ms, n_ms, &steps, &workload, log, progress, err,
                                        sizeof err);
  if (kept > 0 && wo && wo->reuse_real) kept = reused_whole(dir, ms, n_ms, (size_t)kept, err,
                                                            sizeof err);
  if (kept > 0) p = profile_with(profile, ms, (size_t)kept, steps, workload, spec, wo, err,
                                 sizeof err);
  free(dir);
  rc = p ? exp_write_json_atomic(out, p, err, sizeof err) : -1;
  cJSON_Delete(p);
  if (rc != 0) {
    fprintf(log, "pslab calibrate: %s\n", err[0] ? err : "no figure measured");
    return EXP_EXIT_FAILED;
  }
  if (progress) fprintf(progress, "wrote %s\n", out);
  return EXP_EXIT_OK;
}
