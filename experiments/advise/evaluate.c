/*
 * The simulator as advise's evaluator: a candidate's spec cut to a prefix
 * of its run (fewer steps per worker, or fewer epochs), checked as any spec
 * and run in a forked child on the simulator (the runner's
 * exp_run_simulated), its metric read back and extrapolated to the whole
 * run. Times, bytes and messages grow with the steps, so a prefix's value
 * over the share of the run it is estimates the whole (exactly, for the
 * whole run); that ranks. Beside a time, the estimate from the prefix's
 * second half (the run's half_time_s): the prefix's time plus the rest at
 * the second half's pace, which counts once what a run pays once at its
 * start, but misjudges a warm-up that lasts past the prefix's middle; it is
 * recorded, and its gap from the scaled estimate is the extrapolation error
 * of a candidate evaluated on one prefix only (halving.c). Bytes and
 * messages, counted at the run's end only, have no second half. Time
 * to quality is not extrapolated: a prefix that reaches the target gives
 * the exact time (the prefix is the run's beginning, deterministic for the
 * seed); one that does not gives a lower bound, and ranks by how far its
 * quality is from the target, or, for a candidate that trades no quality,
 * is assumed to be the whole run's time, estimated as above.
 */
#include "experiments/advise/advise.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const known_metrics[] = {"time_s", "time_to_quality_s", "bytes",
                                            "messages"};

bool adv_metric_known(const char *name) {
  for (size_t i = 0; i < sizeof known_metrics / sizeof known_metrics[0]; i++)
    if (strcmp(name, known_metrics[i]) == 0) return true;
  return false;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sets the number at workload.<field> to v. */
static void set_number(cJSON *workload, const char *field, double v) {
  cJSON *n = cJSON_CreateNumber(v);
  if (n && !cJSON_ReplaceItemInObjectCaseSensitive(workload, field, n) &&
      !cJSON_AddItemToObject(workload, field, n))
    cJSON_Delete(n);
}

/* The workers of spec's cluster: its worker nodes (else nodes) times
 * workers_per_node. */
static double spec_workers(const cJSON *spec) {
  const cJSON *n = exp_path_get(spec, "cluster.nodes");
  const cJSON *wn = exp_path_get(spec, "cluster.worker_nodes");
  const cJSON *wpn = exp_path_get(spec, "cluster.workers_per_node");
  return (cJSON_IsNumber(wn) ? wn->valuedouble : cJSON_IsNumber(n) ? n->valuedouble : 1) *
         (cJSON_IsNumber(wpn) ? wpn->valuedouble : 1);
}

/* A dnn without math (its examples only make steps) cut below one epoch:
 * one epoch of fewer examples, ceil(fraction x its steps) steps per worker
 * (at least EXP_ADVISE_MIN_STEPS, or the epoch's own); the share in *got.
 * false when spec is no such workload, or one epoch is already the cut. */
static bool dnn_prefix(cJSON *spec, double fraction, double *got) {
  cJSON *wl = cJSON_GetObjectItemCaseSensitive(spec, "workload");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(wl, "type");
  const cJSON *math = cJSON_GetObjectItemCaseSensitive(wl, "math");
  if (!cJSON_IsString(type) || strcmp(type->valuestring, "dnn") != 0 || !cJSON_IsString(math) ||
      strcmp(math->valuestring, "none") != 0)
    return false;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(wl, "epochs");
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(wl, "examples");
  const cJSON *bt = cJSON_GetObjectItemCaseSensitive(wl, "batch");
  double epochs = cJSON_IsNumber(e) ? e->valuedouble : 1;
  double examples = cJSON_IsNumber(x) ? x->valuedouble : 4096;
  double batch = cJSON_IsNumber(bt) ? bt->valuedouble : 32;
  double workers = spec_workers(spec);
  double per_epoch = ceil(ceil(examples / workers) / batch), total = per_epoch * epochs;
  double steps = fmin(per_epoch, fmax(EXP_ADVISE_MIN_STEPS, ceil(total * fraction)));
  if (!(steps < per_epoch) || fraction * epochs >= 1) return false;
  set_number(wl, "epochs", 1);
  set_number(wl, "examples", steps * batch * workers);
  *got = steps / total;
  return true;
}

bool adv_stops_after(const cJSON *wl) {
  static const char *const types[] = {"mf", "kge", "w2v"};
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(wl, "type");
  for (size_t i = 0; cJSON_IsString(type) && i < sizeof types / sizeof types[0]; i++)
    if (strcmp(type->valuestring, types[i]) == 0) return true;
  return false;
}

/* The steps of "<n> steps" in workload.stop_after; 0 when it is not that. */
static double stop_steps(const cJSON *wl) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(wl, "stop_after");
  char *end = NULL;
  double n = cJSON_IsString(v) ? strtod(v->valuestring, &end) : 0;
  return end && strcmp(end, " steps") == 0 && n >= 1 ? n : 0;
}

/* A workload whose length is its epochs (adv_stops_after), its steps per
 * worker given as workload.stop_after "<n> steps" (candidates.c sets it),
 * cut to ceil(fraction x n) of them (at least EXP_ADVISE_MIN_STEPS): the
 * run's beginning, below one epoch too (the data split, the shuffles and
 * the learning-rate schedule are the whole run's); the share in *got. A
 * cut short of the first epoch's end (n / epochs steps, or fewer where n
 * stops early), without eval_every, evaluates nothing: it runs without math
 * ("math": "none", no target), whose steps draw the same keys and are
 * charged the same flops and bytes, so its simulated time is the same, for
 * a fraction of the wall time (no arithmetic, no final evaluation). false
 * when wl is no such workload. */
static bool steps_prefix(cJSON *wl, double fraction, double *got) {
  double full = stop_steps(wl);
  if (!adv_stops_after(wl) || !full) return false;
  double cut = fmax(EXP_ADVISE_MIN_STEPS, ceil(full * fraction));
  if (!(cut < full)) return true;
  char text[64];
  snprintf(text, sizeof text, "%.0f steps", cut);
  cJSON *v = cJSON_CreateString(text);
  if (v && !cJSON_ReplaceItemInObjectCaseSensitive(wl, "stop_after", v)) cJSON_Delete(v);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(wl, "epochs");
  double epochs = cJSON_IsNumber(e) && e->valuedouble >= 1 ? e->valuedouble : 1;
  if (cut < full / epochs && !cJSON_GetObjectItemCaseSensitive(wl, "eval_every")) {
    cJSON_DeleteItemFromObjectCaseSensitive(wl, "target_quality");
    cJSON_DeleteItemFromObjectCaseSensitive(wl, "math");
    cJSON_AddStringToObject(wl, "math", "none");
  }
  *got = cut / full;
  return true;
}

cJSON *adv_prefix(const cJSON *spec, double fraction, double *got) {
  cJSON *out = cJSON_Duplicate(spec, true);
  cJSON *wl = cJSON_GetObjectItemCaseSensitive(out, "workload");
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(wl, "steps_per_worker");
  const cJSON *epochs = cJSON_GetObjectItemCaseSensitive(wl, "epochs");
  *got = 1;
  if (!out || fraction >= 1) return out;
  if (dnn_prefix(out, fraction, got) || steps_prefix(wl, fraction, got)) return out;
  if (cJSON_IsNumber(steps) && steps->valuedouble > EXP_ADVISE_MIN_STEPS) {
    double full = steps->valuedouble;
    double cut = fmax(EXP_ADVISE_MIN_STEPS, ceil(full * fraction));
    if (cut < full) set_number(wl, "steps_per_worker", cut);
    *got = fmin(1, cut / full);
  } else if (cJSON_IsNumber(epochs) && epochs->valuedouble > 1) {
    double full = epochs->valuedouble;
    double cut = fmax(1, round(full * fraction));
    if (cut < full) set_number(wl, "epochs", cut);
    *got = fmin(1, cut / full);
  }
  return out;
}

double adv_min_fraction(const adv_candidates *c) {
  double least = 1;
  for (size_t i = 0; i < c->count; i++) least = fmin(least, adv_floor(&c->items[i]));
  return least;
}

double adv_floor(const adv_candidate *c) {
  double got = 1;
  cJSON_Delete(adv_prefix(c->spec, 0, &got));
  return got;
}

/* The number metric `name` of m, or NaN. */
static double metric_of(const cJSON *m, const char *name) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, name);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* The metrics kept with an evaluation's record. */
static cJSON *detail_of(const cJSON *m, const char *metric) {
  static const char *const keep[] = {"time_s", "half_time_s", "last_step_s", "steps",
                                     "steps_per_s",
                                     "local_ratio", "bytes",
                                     "messages", "quality", "time_to_quality_s"};
  cJSON *d = cJSON_CreateObject();
  for (size_t i = 0; d && i < sizeof keep / sizeof keep[0]; i++) {
    double v = metric_of(m, keep[i]);
    if (isfinite(v)) cJSON_AddNumberToObject(d, keep[i], v);
  }
  double v = metric_of(m, metric);
  if (d && isfinite(v) && !cJSON_GetObjectItemCaseSensitive(d, metric))
    cJSON_AddNumberToObject(d, metric, v);
  return d;
}

const char *adv_scaled_why(int why) {
  switch (why) {
    case ADV_SCALED_METRIC: return "the run counts it at its end only";
    case ADV_SCALED_SHORT: return "the prefix has fewer than 4 steps per worker";
    case ADV_SCALED_NO_HALF: return "the run reported no half_time_s or last_step_s";
    case ADV_SCALED_FLAT: return "the prefix's second half took no time";
    default: return "not extrapolated";
  }
}

const char *adv_est_name(int est) {
  switch (est) {
    case ADV_EST_SCALED: return "scaled";
    case ADV_EST_TWO: return "two prefixes";
    default: return NULL;
  }
}

void adv_extrapolate(double t, double t_half, double t_last, double got, double steps,
                     adv_score *sc) {
  int why = !(steps >= ADV_HALF_MIN_STEPS)               ? ADV_SCALED_SHORT
            : !isfinite(t_half) || !isfinite(t_last)     ? ADV_SCALED_NO_HALF
            : !(t_last > t_half && t_half > 0)           ? ADV_SCALED_FLAT
                                                         : 0;
  sc->est = ADV_EST_SCALED;
  sc->why = why;
  sc->value = t / got;
  sc->half = why ? 0 : t + (t_last - t_half) * (1 - got) / (got / 2);
}

/* The whole run's value from the prefix's v of metric `name` (got < 1):
 * scaled, and for time_s its second half's estimate beside it. */
static void whole_of(const char *name, const cJSON *m, double v, double got, double workers,
                     adv_score *out) {
  if (strcmp(name, "time_s") == 0) {
    double steps = workers > 0 ? metric_of(m, "steps") / workers : NAN;
    adv_extrapolate(v, metric_of(m, "half_time_s"), metric_of(m, "last_step_s"), got, steps,
                    out);
    return;
  }
  out->value = v / got;
  out->est = ADV_EST_SCALED;
  out->half = 0;
  out->why = ADV_SCALED_METRIC;
}

int adv_score_of(const adv_metric *mt, bool trades, const cJSON *m, double got, double workers,
                 adv_score *out, char *err, size_t errlen) {
  out->fraction = got;
  out->est = ADV_EST_EXACT;
  out->half = 0;
  out->why = 0;
  if (mt->to_quality) {
    double ttq = metric_of(m, "time_to_quality_s"), q = metric_of(m, "quality");
    double t = metric_of(m, "time_s");
    double target = mt->target;
    out->bound = !isfinite(ttq);
    out->value = out->bound ? t : ttq;
    if (out->bound && !trades && got < 1 && isfinite(t)) {
      out->bound = false;
      out->assumed = true;
      whole_of("time_s", m, t, got, workers, out);
      out->raw = t;
    } else if (out->bound) {
      double gap = mt->higher_better ? target - q : q - target;
      out->behind = isfinite(gap) ? gap : INFINITY;
    }
    return 0;
  }
  double v = metric_of(m, mt->name);
  if (!isfinite(v)) {
    snprintf(err, errlen, "the run has no %s", mt->name);
    return -1;
  }
  out->value = v;
  if (got < 1) whole_of(mt->name, m, v, got, workers, out);
  out->raw = v;
  return 0;
}

/* Candidate cand on a prefix of about `fraction` of the run, under the
 * network model `model` (NULL: its own). */
static int sim_eval(const adv_sim_ctx *x, size_t cand, double fraction, const char *model,
                    double timeout_s, adv_score *out, char *err, size_t errlen) {
  double started = now_s(), got = 1;
  const adv_candidate *c = &x->cands->items[cand];
  cJSON *cut = adv_prefix(c->spec, fraction, &got);
  if (cut && model)
    exp_path_set(cut, "cluster.network.model", cJSON_CreateString(model), err, errlen);
  char *text = cut ? cJSON_PrintUnformatted(cut) : NULL;
  double workers = cut ? spec_workers(cut) : 0;
  cJSON_Delete(cut);
  exp_errors e;
  exp_errors_init(&e);
  exp_spec *spec = text ? exp_spec_parse(text, strlen(text), x->file, x->base_dir, NULL, 0,
                                         &e) : NULL;
  free(text);
  int rc = -1;
  if (!spec) {
    snprintf(err, errlen, "%s", e.count ? e.lines[0] : "out of memory");
  } else {
    cJSON *m = exp_run_simulated(spec, &exp_spec_runs(spec)->runs[0], timeout_s, err,
                                 errlen);
    if (m && adv_score_of(&x->metric, c->trades_quality, m, got, workers, out, err, errlen) ==
                 0) {
      out->detail = detail_of(m, x->metric.name);
      rc = 0;
    }
    cJSON_Delete(m);
  }
  exp_spec_free(spec);
  exp_errors_free(&e);
  out->cost_s = now_s() - started;
  return rc;
}

int adv_sim_eval(void *ctx, size_t cand, double fraction, double timeout_s, adv_score *out,
                 char *err, size_t errlen) {
  return sim_eval(ctx, cand, fraction, NULL, timeout_s, out, err, errlen);
}

int adv_sim_screen_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                        adv_score *out, char *err, size_t errlen) {
  const adv_sim_ctx *x = ctx;
  return sim_eval(x, cand, fraction, x->screen_model, timeout_s, out, err, errlen);
}

const char *adv_network_model(const cJSON *spec) {
  const cJSON *m = exp_path_get(spec, "cluster.network.model");
  return cJSON_IsString(m) ? m->valuestring : "CM02";
}
