/*
 * `pslab advise SPEC`: the spec loaded and checked whole, its candidate set
 * built, the metric chosen (time_s; time to quality where the workload
 * measures a quality, since candidates trade it for speed; or --metric),
 * the search run within the budget, the recommendation printed and
 * written, and with --confirm the top candidates run on the real backend.
 *
 * A workload with a quality measure and no target_quality gets one: the
 * best final quality of the static candidates (which trade none), run
 * whole first and charged to the budget.
 */
#include "experiments/advise/advise.h"
#include "workloads/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void exp_advise_options_default(exp_advise_options *o) {
  *o = (exp_advise_options){.budget_s = EXP_ADVISE_BUDGET_S};
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median |error| of time_s over the point records of a validation
 * (a directory with validate.jsonl, or the file). 0, or -1 with a message. */
static int fidelity_error(const char *path, double *error, char *from, size_t fromlen,
                          exp_errors *errs) {
  char *file = exp_join_path(path, "validate.jsonl");
  exp_errors e;
  exp_errors_init(&e);
  cJSON *recs = file ? exp_jsonl_load(file, &e) : NULL;
  if (!recs) recs = exp_jsonl_load(path, &e);
  double v[4096];
  size_t n = 0;
  for (const cJSON *r = recs ? recs->child : NULL; r && n < 4096; r = r->next) {
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "kind"));
    const char *metric = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "metric"));
    const cJSON *err = cJSON_GetObjectItemCaseSensitive(r, "error");
    if (kind && metric && strcmp(kind, "point") == 0 && strcmp(metric, "time_s") == 0 &&
        cJSON_IsNumber(err))
      v[n++] = fabs(err->valuedouble);
  }
  cJSON_Delete(recs);
  exp_errors_free(&e);
  free(file);
  if (!n) {
    exp_errors_addf(errs, "--fidelity: %s: expected a `pslab validate` results directory "
                    "(or its validate.jsonl) with time_s point records, found none", path);
    return -1;
  }
  qsort(v, n, sizeof *v, cmp_double);
  *error = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  snprintf(from, fromlen, "median |error| of time_s over %zu sweep points of %s", n, path);
  return 0;
}

/* The metric to rank by. 0, or -1 with a message naming --metric. */
static int choose_metric(const cJSON *spec, const char *asked, adv_metric *m, FILE *log,
                         exp_errors *errs) {
  const cJSON *wl = cJSON_GetObjectItemCaseSensitive(spec, "workload");
  const wl_quality *q = wl_quality_of(wl);
  *m = (adv_metric){.name = "time_s", .target = NAN};
  if (asked && !adv_metric_known(asked)) {
    exp_errors_addf(errs, "--metric: expected time_s, time_to_quality_s, bytes or messages, "
                    "found \"%s\"", asked);
    return -1;
  }
  if (asked && strcmp(asked, "time_to_quality_s") == 0 && !q) {
    exp_errors_addf(errs, "--metric: time_to_quality_s needs a workload with a quality "
                    "measure (workload.math \"real\" and held-out data)");
    return -1;
  }
  if (q) {
    if (asked && strcmp(asked, "time_to_quality_s") != 0)
      fprintf(log, "pslab advise: --metric %s not used: the workload measures %s, which "
              "candidates trade for speed, so they are ranked by time to quality\n", asked,
              q->label);
    *m = (adv_metric){.name = "time_to_quality_s", .to_quality = true,
                      .higher_better = q->higher_better, .target = NAN};
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(wl, "target_quality");
    if (cJSON_IsNumber(t)) m->target = t->valuedouble;
  } else if (asked) {
    m->name = asked;
  }
  return 0;
}

/* The first round's network model (rp->screen_model, NULL: none) and the
 * spec's (rp->own_model). 0, or -1 with a message naming --screen. */
static int choose_screen(const cJSON *spec, const char *asked, adv_report *rp,
                         exp_errors *errs) {
  static const char *const models[] = {"CM02", "LV08", ADV_SCREEN_MODEL};
  rp->own_model = adv_network_model(spec);
  rp->screen_model = NULL;
  const char *want = asked ? asked : ADV_SCREEN_MODEL;
  if (strcmp(want, "own") == 0) return 0;
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    if (strcmp(want, models[i]) == 0) {
      if (strcmp(models[i], rp->own_model) != 0) rp->screen_model = models[i];
      return 0;
    }
  exp_errors_addf(errs, "--screen: expected a network model (CM02, LV08, latency_bandwidth) "
                  "or own, found \"%s\"", want);
  return -1;
}

/* Sets workload.target_quality in every candidate. */
static void set_target(adv_candidates *c, double target) {
  for (size_t i = 0; i < c->count; i++) {
    char err[128];
    exp_path_set(c->items[i].spec, "workload.target_quality", cJSON_CreateNumber(target), err,
                 sizeof err);
  }
}

/* Whether candidate i trades no quality: a static policy with the spec's
 * consistency. */
static bool is_static(const adv_candidates *c, size_t i, const cJSON *spec) {
  const cJSON *t = exp_path_get(c->items[i].spec, "policy.type");
  const cJSON *mine = exp_path_get(c->items[i].spec, "consistency");
  const cJSON *theirs = cJSON_GetObjectItemCaseSensitive(spec, "consistency");
  bool same = (!mine && !theirs) || (mine && theirs && cJSON_Compare(mine, theirs, true));
  return cJSON_IsString(t) && strcmp(t->valuestring, "static") == 0 && same;
}

/* The target quality when the spec gives none: the best final quality of
 * the static candidates, each run whole on the simulator (*spent: their
 * wall time). 0, or -1 with a message. */
static int static_target(adv_sim_ctx *x, const cJSON *spec, double budget_s, double *target,
                         double *spent, exp_errors *errs) {
  adv_sim_ctx plain = *x;
  plain.metric = (adv_metric){.name = "time_s"};
  *target = NAN;
  *spent = 0;
  char first_err[512] = "";
  for (size_t i = 0; i < x->cands->count; i++) {
    if (!is_static(x->cands, i, spec)) continue;
    adv_score sc = {0};
    char err[512];
    int rc = adv_sim_eval(&plain, i, 1.0, fmax(budget_s - *spent, 1e-3), &sc, err, sizeof err);
    if (rc != 0 && !*first_err) snprintf(first_err, sizeof first_err, "%s", err);
    *spent += sc.cost_s;
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(sc.detail, "quality");
    if (rc == 0 && cJSON_IsNumber(q) &&
        (!isfinite(*target) || (x->metric.higher_better ? q->valuedouble > *target
                                                        : q->valuedouble < *target)))
      *target = q->valuedouble;
    cJSON_Delete(sc.detail);
  }
  if (!isfinite(*target)) {
    exp_errors_addf(errs, "workload.target_quality: not given, and no static candidate gave "
                    "a final quality to take as the target in %.3g s of the budget%s%s (set it, "
                    "or --set workload.target_quality=...)", *spent, *first_err ? ": " : "",
                    first_err);
    return -1;
  }
  return 0;
}

/* What one advise holds. */
typedef struct {
  const exp_advise_options *o;
  exp_spec *spec;
  adv_candidates cands;
  adv_result res;
  adv_report rp;
  char *dir;
} advice;

/* The metric, the error, the candidates and the target: 0, or -1 with
 * messages in errs. */
static int prepare(advice *a, adv_sim_ctx *x, exp_errors *errs) {
  const cJSON *json = exp_spec_json(a->spec);
  adv_report *rp = &a->rp;
  rp->error = EXP_ADVISE_DEFAULT_ERROR;
  snprintf(rp->error_from, sizeof rp->error_from, "docs/fidelity.md: above the medians measured "
           "on a 16-core machine and a 2-core VM; --fidelity gives this machine's");
  if (a->o->fidelity &&
      fidelity_error(a->o->fidelity, &rp->error, rp->error_from, sizeof rp->error_from,
                     errs) != 0)
    return -1;
  if (choose_metric(json, a->o->metric, &rp->metric, a->o->log, errs) != 0) return -1;
  if (choose_screen(json, a->o->screen, rp, errs) != 0) return -1;
  if (adv_candidates_build(json, exp_spec_file(a->spec), exp_spec_dir(a->spec),
                           a->o->candidates, &a->cands, errs) != 0)
    return -1;
  *x = (adv_sim_ctx){&a->cands, exp_spec_file(a->spec), exp_spec_dir(a->spec), rp->metric,
                     rp->screen_model};
  rp->target = rp->metric.target;
  rp->target_from = "the spec's workload.target_quality";
  if (rp->metric.to_quality && !isfinite(rp->target)) {
    double spent;
    if (static_target(x, json, rp->budget_s, &rp->target, &spent, errs) != 0) return -1;
    rp->budget_s -= spent;
    if (!(rp->budget_s > 0)) {
      exp_errors_addf(errs, "--budget: all of it (%.3g s) went to the static candidates' "
                      "whole runs, which set the target quality; give more, or "
                      "workload.target_quality", spent);
      return -1;
    }
    rp->target_from = "the best final quality of the static candidates";
    set_target(&a->cands, rp->target);
  }
  x->metric.target = rp->metric.target = rp->target;
  return 0;
}

/* The search, the table, the files and the confirmation. */
static int search_and_report(advice *a, adv_sim_ctx *x, FILE *out, FILE *log) {
  const exp_advise_options *o = a->o;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  a->rp.jobs = o->jobs ? o->jobs : cores > 0 ? (size_t)cores : 1;
  if (a->rp.jobs > ADV_JOBS_MAX) a->rp.jobs = ADV_JOBS_MAX;
  double *floors = calloc(a->cands.count ? a->cands.count : 1, sizeof *floors);
  for (size_t i = 0; floors && i < a->cands.count; i++)
    floors[i] = adv_floor(&a->cands.items[i]);
  adv_search s = {.n = a->cands.count, .budget_s = a->rp.budget_s, .eval = adv_sim_eval,
                  .ctx = x, .log = o->quiet ? NULL : log, .jobs = a->rp.jobs,
                  .min_fraction = adv_min_fraction(&a->cands), .floors = floors,
                  .own_name = a->rp.own_model};
  if (x->screen_model) {
    s.screen = adv_sim_screen_eval;
    s.screen_name = x->screen_model;
  }
  char models[160];
  if (x->screen_model)
    snprintf(models, sizeof models, "round 1 screens them under %s, the later rounds run the "
             "spec's %s", x->screen_model, a->rp.own_model);
  else snprintf(models, sizeof models, "every round under the spec's %s", a->rp.own_model);
  if (!o->quiet)
    fprintf(log, "pslab advise: %zu candidates (%d refused by the spec's checks), ranked by "
            "%s, %.3g s of simulation, %zu at a time; %s\n", a->cands.count,
            cJSON_GetArraySize(a->cands.skipped), a->rp.metric.name, a->rp.budget_s,
            a->rp.jobs, models);
  char err[1024];
  int searched = adv_halving(&s, &a->res, err, sizeof err);
  free(floors);
  if (searched != 0) {
    fprintf(log, "pslab advise: %s\n", err);
    return EXP_EXIT_FAILED;
  }
  a->rp.cands = &a->cands;
  a->rp.res = &a->res;
  double margin;
  cJSON *ranking = adv_ranking(&a->rp, &margin);
  adv_print(out, &a->rp, ranking, margin);
  cJSON *extra = cJSON_CreateArray();
  int rc = EXP_EXIT_OK;
  if (o->confirm) {
    cJSON *c = adv_confirm(&a->rp, ranking, o->confirm, a->dir, log, log);
    if (c) adv_print_confirm(out, &a->rp, c);
    if (c) cJSON_AddItemToArray(extra, c);
    else rc = EXP_EXIT_FAILED;
  }
  int w = adv_write(a->dir, &a->rp, ranking, margin, extra, exp_spec_name(a->spec),
                    o->gnuplot, log);
  if (w < 0) rc = EXP_EXIT_FAILED;
  else if (w > 0 && rc == EXP_EXIT_OK) rc = EXP_EXIT_PLOTS;
  if (w >= 0 && !o->quiet)
    fprintf(log, "pslab advise: wrote %s/advise.jsonl, advise.txt, winner.json (`pslab run "
            "%s/winner.json` runs the winner), search.svg\n", a->dir, a->dir);
  cJSON_Delete(ranking);
  cJSON_Delete(extra);
  return rc;
}

/* DIR: --out, or results/<name>-advise, made with its parents. */
static char *out_dir(const exp_advise_options *o, const exp_spec *spec, FILE *log) {
  char name[512];
  snprintf(name, sizeof name, "results/%s-advise", exp_spec_name(spec));
  char *dir = strdup(o->out_dir ? o->out_dir : name);
  char err[512];
  if (dir && exp_mkdir_p(dir, err, sizeof err) != 0) {
    fprintf(log, "pslab advise: %s\n", err);
    free(dir);
    return NULL;
  }
  return dir;
}

int exp_advise(const char *spec_path, const char *const *sets, size_t n_sets,
               const exp_advise_options *o) {
  FILE *out = o->out ? o->out : stdout, *log = o->log ? o->log : stderr;
  exp_errors errs;
  exp_errors_init(&errs);
  advice a = {.o = o};
  a.rp.budget_s = o->budget_s > 0 ? o->budget_s : EXP_ADVISE_BUDGET_S;
  a.rp.file = spec_path;
  adv_sim_ctx x;
  int rc = EXP_EXIT_FAILED;
  /* Every candidate and prefix runs the same workload: its sampling tables
   * are built once, here, and the forked evaluations inherit them. */
  wl_keep_tables(true);
  a.spec = exp_spec_load(spec_path, sets, n_sets, &errs);
  if (a.spec && exp_spec_check_work(a.spec, &errs)) {
    a.rp.file = exp_spec_file(a.spec);
    a.rp.base_dir = exp_spec_dir(a.spec);
    if (prepare(&a, &x, &errs) == 0 && (a.dir = out_dir(o, a.spec, log)))
      rc = search_and_report(&a, &x, out, log);
  }
  for (size_t i = 0; i < errs.count; i++) fprintf(log, "pslab advise: %s\n", errs.lines[i]);
  free(a.dir);
  adv_result_free(&a.res);
  adv_candidates_free(&a.cands);
  exp_spec_free(a.spec);
  exp_errors_free(&errs);
  wl_keep_tables(false);
  return rc;
}
