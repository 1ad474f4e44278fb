/*
 * The wall time of a sweep, estimated before it starts (`pslab check`, the
 * start of `pslab run`).
 *
 * How: every distinct run config (the runs of a sweep point differ only by
 * their seed) is a run whose cost is unknown until it runs, so each is run
 * for a short while, as the runner runs it (a forked child, exp_run_probe),
 * and its progress reports are timed: wall seconds since the fork against
 * the fraction of its steps done. A line through the first and the last
 * report, wall = setup + per_run * fraction, gives the run's wall time at
 * fraction 1 (setup: forking, loading data, building the cluster; the
 * reports come every 2% of the steps on the simulator). With one report,
 * wall / fraction (setup counted as steps: an upper bound on that line). A
 * run that ends within its share of the budget counts its own wall time;
 * one that gave no report in it counts the time it was given, as a lower
 * bound ("more than"). The whole budget is shared among at least
 * budget / EXP_ESTIMATE_MIN_S points spread over the sweep, what one
 * leaves going to the next, and more while time is left; a point not
 * calibrated counts the mean of those that were. The sweep's estimate: the sum over points of the
 * estimate times the point's runs.
 *
 * A real run's estimate is the simulator's prediction of its time (the
 * calibration runs its simulated twin: the time so far at the last report
 * over the fraction done) plus the setup the calibration measured.
 */
#include "experiments/runner/runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EXP_ESTIMATE_MIN_S 1.0 /* the least budget a calibrated point gets */
#define EXP_ESTIMATE_POINTS 1024

double exp_estimate_run(const exp_calibration *c, bool real, bool *lower) {
  *lower = false;
  const exp_calib_point *first = NULL, *last = NULL;
  for (size_t i = 0; i < c->n; i++) {
    const exp_calib_point *p = &c->points[i];
    if (!(p->fraction > 0 && p->fraction < 1)) continue;
    if (!first) first = p;
    if (p->fraction > first->fraction) last = p;
  }
  double setup = first ? first->wall_s : 0;
  double whole = NAN; /* wall time of the whole run, on the simulator */
  if (first && last) {
    double per_run = (last->wall_s - first->wall_s) / (last->fraction - first->fraction);
    setup = fmax(0, first->wall_s - per_run * first->fraction);
    whole = setup + per_run;
  }
  if (first && !last) { /* setup unknown: counted as steps, an upper bound */
    setup = 0;
    whole = first->wall_s / first->fraction;
  }
  if (!real) {
    if (c->finished) return c->elapsed_s;
    if (!isnan(whole)) return whole;
    *lower = true;
    return c->elapsed_s;
  }
  const exp_calib_point *at = last ? last : first;
  if (c->finished) return setup + c->time_s;
  if (at) return setup + at->time_s / at->fraction;
  *lower = true;
  return c->elapsed_s;
}

double exp_estimate_total(const double *est, const bool *calibrated, const size_t *runs,
                          size_t n) {
  double sum = 0, mean = 0;
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (calibrated[i]) {
      mean += est[i];
      k++;
    }
  mean = k ? mean / (double)k : 0;
  for (size_t i = 0; i < n; i++) sum += (calibrated[i] ? est[i] : mean) * (double)runs[i];
  return sum;
}

/* ----------------------------------------------------------- calibrating */

typedef struct {
  exp_calib_point points[EXP_ESTIMATE_POINTS];
  size_t n;
} collected;

static void collect(void *ctx, double wall_s, double time_s, double fraction) {
  collected *c = ctx;
  if (c->n == EXP_ESTIMATE_POINTS) c->n--; /* the last one replaces the one before */
  c->points[c->n++] = (exp_calib_point){wall_s, time_s, fraction};
}

/* The distinct configs of the runs shard holds: first[k] the index of the
 * first run of each, runs[k] how many; the count. */
static size_t distinct_configs(const exp_run_list *runs, const exp_shard *shard,
                               size_t *first, size_t *count) {
  size_t n = 0;
  for (size_t i = 0; i < runs->count; i++) {
    if (!exp_shard_has(shard, runs->runs[i].run)) continue;
    size_t k = 0;
    while (k < n && !cJSON_Compare(runs->runs[first[k]].config, runs->runs[i].config, true))
      k++;
    if (k == n) {
      first[n] = i;
      count[n++] = 0;
    }
    count[k]++;
  }
  return n;
}

static bool is_real(const exp_run *run) {
  const cJSON *b = exp_path_get(run->config, "backend");
  return cJSON_IsString(b) && strcmp(b->valuestring, "real") == 0;
}

/* Calibrates the point whose first run is run with budget_s: its estimate. */
static double calibrate(const exp_spec *spec, const exp_run *run, double budget_s,
                        exp_estimate *out, bool *lower) {
  collected *c = calloc(1, sizeof *c);
  if (!c) {
    *lower = true;
    return 0;
  }
  exp_probe_result res;
  int rc = exp_run_probe(spec, run, budget_s, collect, c, &res);
  out->spent_s += res.elapsed_s;
  if (rc < 0) {
    out->failed++;
    snprintf(out->error, sizeof out->error, "run %u: %s", run->run, res.error);
  }
  exp_calibration cal = {c->points, c->n, res.elapsed_s, rc > 0, res.time_s};
  double est = exp_estimate_run(&cal, is_real(run), lower);
  free(c);
  return est;
}

/* The j-th number of the van der Corput sequence in base 2, in [0, 1). */
static double spread(size_t j) {
  double x = 0, unit = 0.5;
  for (; j; j >>= 1, unit /= 2)
    if (j & 1) x += unit;
  return x;
}

int exp_estimate_spec(const exp_spec *spec, const exp_shard *shard, double budget_s,
                      exp_estimate *out) {
  *out = (exp_estimate){0};
  const exp_run_list *runs = exp_spec_runs(spec);
  size_t *first = calloc(runs->count + 1, sizeof *first);
  size_t *count = calloc(runs->count + 1, sizeof *count);
  double *est = calloc(runs->count + 1, sizeof *est);
  bool *done = calloc(runs->count + 1, sizeof *done);
  if (!first || !count || !est || !done) {
    free(first), free(count), free(est), free(done);
    return -1;
  }
  size_t n = distinct_configs(runs, shard, first, count);
  size_t k = (size_t)(budget_s / EXP_ESTIMATE_MIN_S);
  k = k < 1 ? 1 : k > n ? n : k;
  /* Points in the order of the van der Corput sequence (0, 1/2, 1/4, 3/4,
   * ... of the sweep), so that however many are calibrated they are spread
   * over it: k of them, each with its share of what is left, then others
   * while time is left (runs that ended early). */
  size_t span = 1;
  while (span < n) span *= 2;
  for (size_t j = 0; n && j < span && (out->calibrated < k || out->spent_s < budget_s); j++) {
    size_t i = (size_t)(spread(j) * (double)n);
    if (done[i]) continue;
    size_t left = out->calibrated < k ? k - out->calibrated : 1;
    double share = (budget_s - out->spent_s) / (double)left;
    bool lower;
    est[i] = calibrate(spec, &runs->runs[first[i]], fmax(share, 0.05), out, &lower);
    done[i] = true;
    out->calibrated++;
    out->lower |= lower;
  }
  for (size_t i = 0; i < n; i++) {
    out->runs += count[i];
    out->real |= is_real(&runs->runs[first[i]]);
  }
  out->total_s = exp_estimate_total(est, done, count, n);
  out->points = n;
  free(first), free(count), free(est), free(done);
  return 0;
}

/* ---------------------------------------------------------------- saying */

/* "42 s", "3 min 20 s", "2 h 5 min". */
static void format_wall(double s, char *buf, size_t n) {
  if (s < 10)
    snprintf(buf, n, "%.1f s", s);
  else if (s < 60)
    snprintf(buf, n, "%.0f s", s);
  else if (s < 3600)
    snprintf(buf, n, "%.0f min %.0f s", floor(s / 60), fmod(floor(s), 60));
  else
    snprintf(buf, n, "%.0f h %.0f min", floor(s / 3600), fmod(floor(s / 60), 60));
}

void exp_estimate_print(FILE *f, const char *lead, const exp_estimate *e) {
  char total[48], spent[48];
  format_wall(e->total_s, total, sizeof total);
  format_wall(e->spent_s, spent, sizeof spent);
  fprintf(f, "%sestimate: %s %s of wall time for %zu run%s (", lead,
          e->lower ? "more than" : "about", total, e->runs, e->runs == 1 ? "" : "s");
  if (e->real)
    fprintf(f, "the simulator's prediction of each run's time plus its setup, ");
  fprintf(f, "from %s simulating the first steps of ", spent);
  if (e->points == 1)
    fprintf(f, "its sweep point");
  else if (e->calibrated == e->points)
    fprintf(f, "each of the %zu sweep points", e->points);
  else
    fprintf(f, "%zu of the %zu sweep points, the others taken as their mean", e->calibrated,
            e->points);
  fprintf(f, ")%s\n", e->lower ? "; a run that had not got going in its share of the "
                                 "calibration counts only that share" : "");
  if (e->failed)
    fprintf(f, "%s%zu sweep point%s failed in the calibration: %s\n", lead, e->failed,
            e->failed == 1 ? "" : "s", e->error);
}
