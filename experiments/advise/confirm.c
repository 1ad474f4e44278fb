/*
 * `--confirm N`: the top N candidates run on the real backend (every node
 * a process on this machine, over loopback, as `pslab run --backend real`
 * runs them; EXP_VALIDATE_REPEATS repeats each, since real runs vary), each
 * into DIR/confirm/<rank>/, and whether their real order is the simulated
 * one. Without a calibrated profile (cluster.profile) the simulated figures
 * are not of this machine: the comparison says it is uncalibrated, and only
 * the order means anything.
 */
#include "experiments/advise/advise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The mean of metric over the successful records of DIR/runs.jsonl; NaN
 * when none has it. */
static double mean_of(const char *dir, const char *metric) {
  char *path = exp_join_path(dir, "runs.jsonl");
  exp_errors e;
  exp_errors_init(&e);
  cJSON *recs = path ? exp_jsonl_load(path, &e) : NULL;
  double sum = 0;
  size_t n = 0;
  for (const cJSON *r = recs ? recs->child : NULL; r; r = r->next) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, metric);
    if (cJSON_IsNumber(v)) {
      sum += v->valuedouble;
      n++;
    }
  }
  cJSON_Delete(recs);
  exp_errors_free(&e);
  free(path);
  return n ? sum / (double)n : NAN;
}

/* Runs candidate c on the real backend into dir: the mean of the metric. */
static double run_real(const adv_report *rp, size_t c, const char *dir, FILE *out, FILE *log) {
  cJSON *spec = cJSON_Duplicate(rp->cands->items[c].spec, true);
  cJSON_DeleteItemFromObjectCaseSensitive(spec, "backend");
  cJSON_AddStringToObject(spec, "backend", "real");
  cJSON_DeleteItemFromObjectCaseSensitive(spec, "repeats");
  cJSON_AddNumberToObject(spec, "repeats", EXP_VALIDATE_REPEATS);
  char *text = cJSON_PrintUnformatted(spec);
  cJSON_Delete(spec);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *s = text ? exp_spec_parse(text, strlen(text), rp->file, rp->base_dir, NULL, 0, &e)
                     : NULL;
  free(text);
  double mean = NAN;
  if (!s) {
    exp_errors_print(&e, log);
  } else {
    exp_runner_options o;
    exp_runner_options_default(&o);
    o.out_dir = dir;
    o.out = out;
    o.log = log;
    o.prefix = "confirm: ";
    if (exp_run_experiment(s, &o) != EXP_EXIT_FAILED) mean = mean_of(dir, rp->metric.name);
  }
  exp_spec_free(s);
  exp_errors_free(&e);
  return mean;
}

/* Whether the real means keep the simulated order of sim[0..n). */
static bool order_held(const double *real, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (!(real[i - 1] <= real[i])) return false;
  return true;
}

cJSON *adv_confirm(const adv_report *rp, const cJSON *ranking, uint32_t n, const char *dir,
                   FILE *out, FILE *log) {
  cJSON *rec = cJSON_CreateObject(), *list = cJSON_CreateArray();
  cJSON_AddStringToObject(rec, "kind", "confirm");
  cJSON_AddItemToObject(rec, "candidates", list);
  double real[64];
  size_t k = 0;
  for (const cJSON *r = ranking->child; r && k < n && k < 64; r = r->next) {
    if (cJSON_GetObjectItemCaseSensitive(r, "error")) continue;
    size_t c = (size_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(r, "candidate"));
    char name[32];
    snprintf(name, sizeof name, "confirm/%zu", k + 1);
    char *sub = exp_join_path(dir, name);
    real[k] = sub ? run_real(rp, c, sub, out, log) : NAN;
    free(sub);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "label", rp->cands->items[c].label);
    cJSON_AddNumberToObject(o, "sim", rp->res->last[c].value);
    if (isfinite(real[k])) cJSON_AddNumberToObject(o, "real", real[k]);
    cJSON_AddItemToArray(list, o);
    if (!isfinite(real[k])) {
      fprintf(log, "pslab advise: --confirm: %s failed on the real backend\n",
              rp->cands->items[c].label);
      cJSON_Delete(rec);
      return NULL;
    }
    k++;
  }
  const cJSON *profile = exp_path_get(rp->cands->items[0].spec, "cluster.profile");
  bool calibrated = cJSON_IsString(profile);
  cJSON_AddBoolToObject(rec, "held", order_held(real, k));
  cJSON_AddBoolToObject(rec, "calibrated", calibrated);
  cJSON_AddStringToObject(rec, "note", calibrated
      ? "the spec's cluster has a profile: simulated and real figures are of one machine "
        "when it is this machine's (pslab calibrate)"
      : "uncalibrated: the spec's cluster has no profile of this machine (pslab calibrate), "
        "so only the order is compared, not the figures");
  return rec;
}

/* The confirmation's lines. */
void adv_print_confirm(FILE *f, const adv_report *rp, const cJSON *rec) {
  fprintf(f, "confirm on the real backend (%s, %d repeats each):\n", rp->metric.name,
          EXP_VALIDATE_REPEATS);
  for (const cJSON *o = cJSON_GetObjectItemCaseSensitive(rec, "candidates")->child; o;
       o = o->next)
    fprintf(f, "  %-52.52s sim %.4g  real %.4g\n",
            cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, "label")),
            cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "sim")),
            cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "real")));
  fprintf(f, "the simulated ranking %s on the real backend; %s\n",
          cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "held")) ? "held" : "did NOT hold",
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "note")));
}
