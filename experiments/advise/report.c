/*
 * The recommendation: the ranked table (each candidate's estimate, its
 * interval and how much of the run it comes from), the margin between the
 * first and the second, and a warning when that margin is smaller than the
 * simulator's measured error, which the interval of every estimate also
 * carries: a simulated ranking is worth no more than the simulator's
 * fidelity. Then the results directory: advise.jsonl, advise.txt,
 * winner.json (a spec `pslab run` takes as it is) and the plot of the
 * search (search_plot.c).
 */
#include "experiments/advise/advise.h"
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *adv_round_model(const adv_report *rp, int round) {
  return rp->res->screened && round == 0 ? rp->screen_model : rp->own_model;
}

/* The relative half-width of a candidate's interval: the simulator's error
 * and the extrapolation's (its estimate's last change, or with one prefix
 * the gap to its second half's), as independent. */
static double half_width(const adv_report *rp, size_t c) {
  double sp = rp->res->spread[c];
  return hypot(rp->error, isfinite(sp) ? sp : 0);
}

/* Whether candidate c has an evaluation (failed or not). */
static bool evaluated(const adv_result *r, size_t c) {
  for (const cJSON *e = r->evaluations ? r->evaluations->child : NULL; e; e = e->next)
    if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "candidate")) == (double)c)
      return true;
  return false;
}

static cJSON *rank_record(const adv_report *rp, size_t rank, size_t c) {
  const adv_result *r = rp->res;
  const adv_score *sc = &r->last[c];
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "kind", "rank");
  cJSON_AddNumberToObject(o, "rank", (double)rank);
  cJSON_AddNumberToObject(o, "candidate", (double)c);
  cJSON_AddStringToObject(o, "label", rp->cands->items[c].label);
  if (r->round[c] < 0) {
    cJSON_AddStringToObject(o, "error", evaluated(r, c) ? "failed"
                                                        : "not simulated: the budget ended "
                                                          "the first round before it");
    return o;
  }
  double w = half_width(rp, c);
  cJSON_AddNumberToObject(o, "value", sc->value);
  cJSON_AddBoolToObject(o, "bound", sc->bound);
  if (sc->assumed) cJSON_AddBoolToObject(o, "assumed", true);
  if (!sc->bound) {
    cJSON_AddNumberToObject(o, "low", sc->value * fmax(0, 1 - w));
    cJSON_AddNumberToObject(o, "high", sc->value * (1 + w));
  }
  cJSON_AddNumberToObject(o, "fraction", sc->fraction);
  if (adv_est_name(sc->est)) cJSON_AddStringToObject(o, "estimate", adv_est_name(sc->est));
  adv_half_record(o, sc);
  double sp = r->spread[c];
  if (sc->fraction < 1 && !sc->bound) {
    if (isfinite(sp)) cJSON_AddNumberToObject(o, "extrapolation_error", sp);
    cJSON_AddStringToObject(o, "error_from", !isfinite(sp)    ? "not measured"
                                             : r->from_gap[c] ? "second half"
                                                              : "two prefixes");
  }
  cJSON_AddNumberToObject(o, "round", r->round[c] + 1);
  const char *model = adv_round_model(rp, r->round[c]);
  if (model) cJSON_AddStringToObject(o, "model", model);
  cJSON_AddBoolToObject(o, "screen", r->screened && r->round[c] == 0);
  return o;
}

cJSON *adv_ranking(const adv_report *rp, double *margin) {
  const adv_result *r = rp->res;
  cJSON *list = cJSON_CreateArray();
  for (size_t i = 0; list && i < r->n; i++)
    cJSON_AddItemToArray(list, rank_record(rp, i + 1, r->order[i]));
  *margin = NAN;
  if (r->n >= 2) {
    const adv_score *a = &r->last[r->order[0]], *b = &r->last[r->order[1]];
    if (r->round[r->order[1]] >= 0 && !a->bound && a->value > 0)
      *margin = b->bound ? INFINITY : (b->value - a->value) / a->value;
  }
  return list;
}

/* "97.6 ms", "1.23 s", or the number for a count. */
static void quantity(char *buf, size_t n, const char *metric, double v) {
  size_t len = strlen(metric);
  bool secs = len > 2 && strcmp(metric + len - 2, "_s") == 0;
  if (!isfinite(v)) snprintf(buf, n, "-");
  else if (secs && v < 1) snprintf(buf, n, "%.3g ms", v * 1e3);
  else snprintf(buf, n, "%.4g%s", v, secs ? " s" : "");
}

static void print_row(FILE *f, const adv_report *rp, const cJSON *rec) {
  const char *m = rp->metric.name;
  double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rec, "value"));
  double lo = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rec, "low"));
  double hi = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rec, "high"));
  double fr = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rec, "fraction"));
  bool bound = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "bound"));
  bool assumed = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "assumed"));
  bool screen = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rec, "screen"));
  const char *model = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "model"));
  const char *error = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "error"));
  char value[32], low[32], high[32], interval[72] = "", from[64] = "failed";
  if (error && strncmp(error, "not ", 4) == 0) snprintf(from, sizeof from, "not simulated");
  quantity(value, sizeof value, m, v);
  quantity(low, sizeof low, m, lo);
  quantity(high, sizeof high, m, hi);
  if (isfinite(lo)) snprintf(interval, sizeof interval, "%s .. %s", low, high);
  else if (bound) snprintf(interval, sizeof interval, "target not reached");
  if (isfinite(fr)) snprintf(from, sizeof from, "%.3g%%%s%s", 100 * fr,
                             screen && model ? " under " : "", screen && model ? model : "");
  fprintf(f, "%4d  %-52.52s %s%-15s %-24s %s\n",
          (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(rec, "rank")),
          cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(rec, "label")),
          bound ? ">" : assumed ? "~" : " ", isfinite(v) ? value : "-", interval, from);
}

/* The margin's line and, when it is within the error, the warning. */
static void print_margin(FILE *f, const adv_report *rp, double margin) {
  if (!isfinite(margin) && !(margin > 0)) {
    fprintf(f, "margin: not measured (fewer than two candidates ranked by value)\n");
    return;
  }
  if (isinf(margin)) {
    fprintf(f, "margin: the second did not reach the target quality in the part of the run "
            "simulated\n");
    return;
  }
  fprintf(f, "margin: the first leads the second by %.3g%%; the simulator's error: %.3g%% "
          "(%s)\n", 100 * margin, 100 * rp->error, rp->error_from);
  if (margin < rp->error)
    fprintf(f, "warning: the margin is smaller than the simulator's measured error: on a "
            "real cluster the second may be as fast or faster (--confirm 2 runs both on "
            "the real backend)\n");
}

/* How the screening's order held when the spec's model re-ran its better
 * half; or, when the budget stopped the search before, that the first's
 * estimate is the screening model's only. */
static void print_screen(FILE *f, const adv_report *rp) {
  const adv_result *r = rp->res;
  if (!r->screened || !rp->screen_model) return;
  if (r->round[r->order[0]] == 0) {
    fprintf(f, "note: the first's estimate is %s's only (the screening): the budget ended the "
            "search before the spec's %s simulated it\n", rp->screen_model, rp->own_model);
    return;
  }
  size_t m = (size_t)llround((1 + sqrt(1 + 8.0 * (double)r->screen_pairs)) / 2);
  fprintf(f, "screening: of the %zu pairs among the %zu candidates %s simulated again on the "
          "same prefix, %s ordered %zu as %s did", r->screen_pairs, m, rp->own_model,
          rp->screen_model, r->screen_agree, rp->own_model);
  if (isfinite(r->screen_ratio))
    fprintf(f, "; their %s estimates are %.3g times %s's (median)", rp->own_model,
            r->screen_ratio, rp->screen_model);
  fprintf(f, "\n");
}

void adv_half_record(cJSON *o, const adv_score *sc) {
  if (sc->est == ADV_EST_EXACT) return;
  if (sc->half > 0) cJSON_AddNumberToObject(o, "second_half", sc->half);
  else if (sc->why) cJSON_AddStringToObject(o, "no_second_half", adv_scaled_why(sc->why));
}

/* Which ranked estimates from one prefix have no second half to measure
 * their extrapolation error by, and why: their intervals leave it out. */
static void print_unmeasured(FILE *f, const adv_report *rp) {
  const adv_result *r = rp->res;
  size_t count[ADV_SCALED_FLAT + 1] = {0}, all = 0, ranked = 0;
  for (size_t c = 0; c < r->n; c++) {
    if (r->round[c] < 0) continue;
    ranked++;
    int why = r->last[c].why;
    if (isfinite(r->spread[c]) || r->last[c].bound || why < 1 || why > ADV_SCALED_FLAT)
      continue;
    count[why]++;
    all++;
  }
  if (!all) return;
  fprintf(f, "note: %zu of the %zu estimates come from one prefix without a second-half "
          "estimate beside them, so their extrapolation error is not measured and their "
          "intervals leave it out:", all, ranked);
  const char *sep = " ";
  for (int why = 1; why <= ADV_SCALED_FLAT; why++) {
    if (!count[why]) continue;
    fprintf(f, "%s%zu: %s", sep, count[why], adv_scaled_why(why));
    sep = "; ";
  }
  fprintf(f, "\n");
}

void adv_print(FILE *f, const adv_report *rp, const cJSON *ranking, double margin) {
  const char *what = rp->metric.to_quality ? "time to quality" : rp->metric.name;
  if (rp->metric.to_quality)
    fprintf(f, "ranked by time to quality %s %.6g (%s)\n",
            rp->metric.higher_better ? ">=" : "<=", rp->target, rp->target_from);
  fprintf(f, "rank  %-52s  %-15s %-24s %s\n", "candidate", what, "interval", "from");
  fprintf(f, "----  %-52s  %-15s %-24s %s\n", "---------", "----", "--------", "----");
  size_t shown = 0;
  for (const cJSON *rec = ranking->child; rec && shown < 20; rec = rec->next, shown++)
    print_row(f, rp, rec);
  if (shown < (size_t)cJSON_GetArraySize(ranking))
    fprintf(f, "... and %d more in advise.txt\n", cJSON_GetArraySize(ranking) - (int)shown);
  size_t first = rp->res->order[0];
  if (!isfinite(rp->res->spread[first]) && rp->res->last[first].fraction < 1)
    fprintf(f, "note: the first's estimate comes from one prefix (%.3g%% of the run): how far "
            "it is from the whole run's is not measured, and the interval leaves it out\n",
            100 * rp->res->last[first].fraction);
  else if (rp->res->from_gap[first])
    fprintf(f, "note: the first's estimate comes from one prefix (%.3g%% of the run): its "
            "extrapolation error, %.3g%%, is the gap between that estimate (the prefix's over "
            "its share) and the one from the prefix's second half\n",
            100 * rp->res->last[first].fraction, 100 * rp->res->spread[first]);
  if (rp->res->last[first].assumed)
    fprintf(f, "note: ~: time to quality assumed, not measured: the target is not reached in "
            "the prefix, and the candidate trades no quality (static or relocate with the "
            "spec's consistency and workers), so it is taken to reach it by the run's end, as "
            "the spec's own training does: its estimate is the whole run's time. Candidates "
            "that trade quality rank by value only where a prefix reached the target\n");
  print_unmeasured(f, rp);
  print_margin(f, rp, margin);
  print_screen(f, rp);
  char models[200] = "";
  const adv_result *r = rp->res;
  char later[32] = "round 2";
  if (r->rounds > 2) snprintf(later, sizeof later, "rounds 2-%zu", r->rounds);
  if (r->screened && rp->screen_model && r->rounds > 1)
    snprintf(models, sizeof models, " (round 1 under %s, screening; %s under the spec's %s)",
             rp->screen_model, later, rp->own_model);
  else if (r->screened && rp->screen_model)
    snprintf(models, sizeof models, " (under %s, screening)", rp->screen_model);
  else if (rp->own_model)
    snprintf(models, sizeof models, " (under the spec's %s)", rp->own_model);
  fprintf(f, "search: %zu round%s%s, %.3g s of %.3g s; stopped: %s\n", r->rounds,
          r->rounds == 1 ? "" : "s", models, r->spent_s, rp->budget_s, r->stop);
}
