/*
 * `pslab validate`, the comparison: how well the simulator predicted the
 * real backend, from the run records of one spec run on both with the same
 * seeds, run k of one beside run k of the other (same run number, so same
 * sweep point, repeat and seed).
 *
 * Per run and metric: the simulated value, the real value and the relative
 * error (sim - real) / real. Per sweep point and metric, over the runs that
 * both backends completed and that have the metric as a number in both
 * records: the mean of each side, the real runs' least and largest value,
 * and the error of the means. Whether the simulator is *within the real
 * spread*: the simulated value (a run's, or the point's mean) lies in the
 * real mean plus or minus half the range of the point's real runs,
 * |sim - mean| <= (max - min) / 2 (up to rounding: 1e-9 of the mean); with
 * fewer than two real runs there is no spread and the answer is n/a. The
 * noise of the real machine is the yardstick: a prediction inside it is as
 * good as a rerun of the real thing. Real runs that all agree exactly (a
 * message count the seeds fix) measure no noise at all: their spread of 0
 * is not a yardstick that a prediction could be held to, since any error,
 * however small, would fall outside it. There the answer is yes when the
 * simulated value is the real one (up to rounding) and n/a otherwise, and
 * the error alone says how close it came.
 *
 * The comparison is a list of records, validate.jsonl's (with each
 * point's largest gap, validate_gap.c, and the ranking,
 * validate_ranking.c); the CSV, the table, its summary and the scatter plot
 * of time_s are all made from that list (the command itself is
 * validate_command.c). The comparison is not a metric of a run: nothing
 * here enters the metric table.
 */
#include "experiments/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The metrics compared, each when it is a number in both records of a run:
 * how fast and how much was sent, and what the run learned (a training run
 * with real math reports its final loss, with held-out data its quality,
 * with a target the time to reach it; a simulator that learns differently
 * from the real backend mispredicts as surely as one that runs slower);
 * then, from N_DECIDED on, the telemetry that says where the two part
 * (response times, the servers' busy share, messages waiting, messages per
 * wake-up, CPU, workers' waits, the I/O threads' CPU, and the I/O and
 * worker threads' turns on a core, waits for one, and the workers' sleeps):
 * in the records, the CSV and the summary, and in the table as each point's
 * largest gap (validate_gap.c), not a line each. */
static const char *const compared[] = {
    "time_s", "steps_per_s", "messages", "bytes", "local_ratio",
    "quality", "loss", "time_to_quality_s",
    "rt_p50_s", "rt_p99_s", "utilization", "queue_p50", "queue_p99",
    "messages_per_wakeup", "messages_per_io_wakeup", "cpu_s", "cpu_per_message_s",
    "op_wait_s", "io_cpu_s", "io_turn_s", "io_run_wait_s", "worker_turn_s",
    "worker_run_wait_s", "worker_blocked_s"};
enum { N_METRICS = sizeof compared / sizeof compared[0], N_DECIDED = 8 };

const char *const *exp_validate_metrics(size_t *count) {
  *count = N_METRICS;
  return compared;
}

const char *const *exp_validate_telemetry(size_t *count) {
  *count = N_METRICS - N_DECIDED;
  return compared + N_DECIDED;
}

double exp_validate_error(double sim, double real) {
  if (real != 0) return (sim - real) / real;
  return sim == 0 ? 0 : NAN;
}

int exp_validate_within(double sim, double real_mean, double real_min, double real_max,
                        size_t real_runs) {
  if (real_runs < 2) return -1;
  double half = (real_max - real_min) / 2;
  bool inside = fabs(sim - real_mean) <= half + 1e-9 * fabs(real_mean);
  if (half == 0 && !inside) return -1; /* equal real runs: no noise to be within */
  return inside;
}

/* ------------------------------------------------------------ points */

/* One sweep point: its runs, and each metric's values over the runs both
 * backends completed (sim[i] and real[i] hold the same runs). */
typedef struct {
  const cJSON *sweep; /* borrowed from the records */
  size_t runs;        /* runs with a record on either side */
  exp_stats sim[N_METRICS], real[N_METRICS];
  char *label;
} vpoint;

typedef struct {
  vpoint *items;
  size_t count;
  const char *experiment; /* borrowed */
} vpoints;

static const cJSON *find_run(const cJSON *records, double run) {
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "run");
    if (cJSON_IsNumber(n) && n->valuedouble == run) return r;
  }
  return NULL;
}

static double max_run(const cJSON *records) {
  double most = 0;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(r, "run");
    if (cJSON_IsNumber(n) && n->valuedouble > most) most = n->valuedouble;
  }
  return most;
}

/* A metric's value in a record, when it is one number. */
static bool number_of(const cJSON *rec, const char *metric, double *out) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(rec, "metrics");
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, metric);
  if (!cJSON_IsNumber(v)) return false;
  *out = v->valuedouble;
  return true;
}

static bool both_ok(const cJSON *s, const cJSON *r) {
  return s && r && exp_record_ok(s) && exp_record_ok(r);
}

/* The point of sweep, added when new; NULL on no memory. */
static vpoint *point_of(vpoints *p, const cJSON *sweep, size_t cap) {
  for (size_t k = 0; k < p->count; k++)
    if (exp_same_point(p->items[k].sweep, sweep)) return &p->items[k];
  if (p->count == cap) return NULL;
  p->items[p->count] = (vpoint){.sweep = sweep};
  return &p->items[p->count++];
}

static size_t point_index(const vpoints *p, const cJSON *sweep) {
  size_t k = 0;
  while (k < p->count && !exp_same_point(p->items[k].sweep, sweep)) k++;
  return k;
}

/* Run r's pair of records: either may be NULL. */
static void pair_of(const cJSON *sim, const cJSON *real, double r, const cJSON **s,
                    const cJSON **re) {
  *s = find_run(sim, r);
  *re = find_run(real, r);
}

static const cJSON *sweep_of(const cJSON *s, const cJSON *r) {
  return cJSON_GetObjectItemCaseSensitive(s ? s : r, "sweep");
}

/* Groups the runs by sweep point and gathers each metric's pairs. */
static bool collect(vpoints *p, const cJSON *sim, const cJSON *real) {
  size_t cap = (size_t)cJSON_GetArraySize(sim) + (size_t)cJSON_GetArraySize(real);
  double last = fmax(max_run(sim), max_run(real));
  p->items = calloc(cap + 1, sizeof *p->items);
  if (!p->items) return false;
  for (double r = 1; r <= last; r++) {
    const cJSON *s, *re;
    pair_of(sim, real, r, &s, &re);
    if (!s && !re) continue;
    vpoint *pt = point_of(p, sweep_of(s, re), cap);
    if (!pt) return false;
    pt->runs++;
    for (size_t i = 0; both_ok(s, re) && i < N_METRICS; i++) {
      double vs, vr;
      if (!number_of(s, compared[i], &vs) || !number_of(re, compared[i], &vr)) continue;
      exp_stats_add(&pt->sim[i], vs);
      exp_stats_add(&pt->real[i], vr);
    }
  }
  return true;
}

/* Each point's label: the table's label columns, joined ("policy=relocate
 * lookahead=4, cluster.nodes=2" when several vary). */
static bool label_points(vpoints *p, const cJSON *sim, const cJSON *real) {
  const cJSON **sweeps = calloc(p->count + 1, sizeof *sweeps);
  cJSON *holders = cJSON_CreateArray(); /* objects with a "sweep", for the paths' order */
  bool ok = sweeps && holders;
  for (size_t k = 0; ok && k < p->count; k++) {
    sweeps[k] = p->items[k].sweep;
    cJSON *h = cJSON_CreateObject();
    ok = h && cJSON_AddItemToArray(holders, h);
    if (ok && sweeps[k]) ok = cJSON_AddItemToObject(h, "sweep", cJSON_Duplicate(sweeps[k], true));
  }
  const cJSON *any = sim && sim->child ? sim->child : real ? real->child : NULL;
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(any, "experiment");
  p->experiment = cJSON_IsString(e) ? e->valuestring : "experiment";
  exp_point_labels l = {0};
  ok = ok && exp_point_labels_make(&l, holders, sweeps, p->count, p->experiment);
  for (size_t k = 0; ok && k < p->count; k++) {
    exp_buf b = {0};
    exp_buf_puts(&b, "");
    for (size_t c = 0; c < l.cols; c++) {
      if (l.cols > 1) exp_buf_printf(&b, "%s%s=", c ? ", " : "", l.header[c]);
      exp_buf_puts(&b, l.cells[k * l.cols + c]);
    }
    ok = (p->items[k].label = exp_buf_take(&b)) != NULL;
  }
  exp_point_labels_free(&l);
  cJSON_Delete(holders);
  free(sweeps);
  return ok;
}

static void points_free(vpoints *p) {
  for (size_t k = 0; p->items && k < p->count; k++) free(p->items[k].label);
  free(p->items);
  *p = (vpoints){0};
}

/* ----------------------------------------------------------- records */

/* A number, or null when it is none (NaN: an error against a real 0). */
static bool add_number(cJSON *o, const char *key, double v) {
  return isfinite(v) ? cJSON_AddNumberToObject(o, key, v) != NULL
                     : cJSON_AddNullToObject(o, key) != NULL;
}

static bool add_within(cJSON *o, int within) {
  return within < 0 ? cJSON_AddNullToObject(o, "within") != NULL
                    : cJSON_AddBoolToObject(o, "within", within) != NULL;
}

static bool add_copy(cJSON *o, const char *key, const cJSON *v) {
  return cJSON_AddItemToObject(o, key, v ? cJSON_Duplicate(v, true) : cJSON_CreateNull());
}

/* What both kinds of record start with. */
static cJSON *record_head(const char *kind, const vpoints *p, size_t k) {
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddStringToObject(o, "kind", kind) &&
            cJSON_AddStringToObject(o, "experiment", p->experiment) &&
            cJSON_AddNumberToObject(o, "point", (double)k + 1);
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}

static bool record_tail(cJSON *o, const vpoint *pt, const char *metric) {
  return cJSON_AddStringToObject(o, "label", pt->label) && add_copy(o, "sweep", pt->sweep) &&
         cJSON_AddStringToObject(o, "metric", metric);
}

/* Run records: per run both backends completed, per metric both have. */
static bool add_runs(cJSON *out, const vpoints *p, const cJSON *sim, const cJSON *real) {
  double last = fmax(max_run(sim), max_run(real));
  bool ok = true;
  for (double r = 1; ok && r <= last; r++) {
    const cJSON *s, *re;
    pair_of(sim, real, r, &s, &re);
    if (!both_ok(s, re)) continue;
    size_t k = point_index(p, sweep_of(s, re));
    const vpoint *pt = &p->items[k];
    for (size_t i = 0; ok && i < N_METRICS; i++) {
      double vs, vr;
      if (!number_of(s, compared[i], &vs) || !number_of(re, compared[i], &vr)) continue;
      const exp_stats *rs = &pt->real[i];
      cJSON *o = record_head("run", p, k);
      ok = o && cJSON_AddItemToArray(out, o) &&
           add_copy(o, "run", cJSON_GetObjectItemCaseSensitive(s, "run")) &&
           add_copy(o, "repeat", cJSON_GetObjectItemCaseSensitive(s, "repeat")) &&
           add_copy(o, "seed", cJSON_GetObjectItemCaseSensitive(s, "seed")) &&
           record_tail(o, pt, compared[i]) && add_number(o, "sim", vs) &&
           add_number(o, "real", vr) && add_number(o, "error", exp_validate_error(vs, vr)) &&
           add_within(o, exp_validate_within(vs, rs->mean, rs->min, rs->max, rs->n));
    }
  }
  return ok;
}

/* Point records: per point and metric some run of it compared. */
static bool add_points(cJSON *out, const vpoints *p) {
  bool ok = true;
  for (size_t k = 0; ok && k < p->count; k++) {
    const vpoint *pt = &p->items[k];
    for (size_t i = 0; ok && i < N_METRICS; i++) {
      const exp_stats *ss = &pt->sim[i], *rs = &pt->real[i];
      if (ss->n == 0) continue;
      cJSON *o = record_head("point", p, k);
      ok = o && cJSON_AddItemToArray(out, o) && record_tail(o, pt, compared[i]) &&
           cJSON_AddNumberToObject(o, "runs", (double)pt->runs) &&
           cJSON_AddNumberToObject(o, "compared", (double)rs->n) &&
           add_number(o, "sim", ss->mean) && add_number(o, "real", rs->mean) &&
           add_number(o, "real_min", rs->min) && add_number(o, "real_max", rs->max) &&
           add_number(o, "real_spread", rs->n >= 2 ? (rs->max - rs->min) / 2 : NAN) &&
           add_number(o, "error", exp_validate_error(ss->mean, rs->mean)) &&
           add_within(o, exp_validate_within(ss->mean, rs->mean, rs->min, rs->max, rs->n));
    }
  }
  return ok;
}

cJSON *exp_validate_compare(const cJSON *sim, const cJSON *real) {
  vpoints p = {0};
  cJSON *out = cJSON_CreateArray();
  bool ok = out && collect(&p, sim, real) && label_points(&p, sim, real) &&
            add_runs(out, &p, sim, real) && add_points(out, &p) && exp_validate_gaps(out) &&
            (cJSON_GetArraySize(out) == 0 || /* nothing compared: nothing ranked */
             cJSON_AddItemToArray(out, exp_validate_ranking(out, p.experiment)));
  points_free(&p);
  if (ok) return out;
  cJSON_Delete(out);
  return NULL;
}

/* --------------------------------------------------------------- CSV */

static bool is_kind(const cJSON *r, const char *kind) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
  return cJSON_IsString(k) && strcmp(k->valuestring, kind) == 0;
}

static const char *const csv_columns[] = {
    "label", "metric", "runs", "compared", "sim", "real", "real_min", "real_max",
    "real_spread", "error"};

static void csv_within(FILE *f, const cJSON *w) {
  fputs(cJSON_IsTrue(w) ? "yes" : cJSON_IsFalse(w) ? "no" : "n/a", f);
}

bool exp_validate_csv(FILE *f, const cJSON *comparison) {
  size_t n_paths = 0;
  const char **paths = exp_sweep_paths(comparison, &n_paths);
  if (!paths) return false;
  fputs("kind,point,run,repeat,seed", f);
  for (size_t i = 0; i < n_paths; i++) {
    fputc(',', f);
    exp_csv_field(f, paths[i]);
  }
  for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++)
    fprintf(f, ",%s", csv_columns[i]);
  fputs(",within\n", f);
  for (const cJSON *r = comparison ? comparison->child : NULL; r; r = r->next) {
    const char *head[] = {"kind", "point", "run", "repeat", "seed"};
    if (!is_kind(r, "run") && !is_kind(r, "point")) continue; /* the ranking: no row */
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) {
      if (i) fputc(',', f);
      exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, head[i]));
    }
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    for (size_t i = 0; i < n_paths; i++) {
      fputc(',', f);
      exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(sweep, paths[i]));
    }
    for (size_t i = 0; i < sizeof csv_columns / sizeof csv_columns[0]; i++) {
      fputc(',', f);
      exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, csv_columns[i]));
    }
    fputc(',', f);
    csv_within(f, cJSON_GetObjectItemCaseSensitive(r, "within"));
    fputc('\n', f);
  }
  free(paths);
  return true;
}

/* ------------------------------------------------------------- table */

static double num(const cJSON *r, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static bool is_metric(const cJSON *r, const char *metric) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metric");
  return cJSON_IsString(m) && strcmp(m->valuestring, metric) == 0;
}

/* The point records of a comparison, by point, and which metrics they
 * have. */
typedef struct {
  const cJSON **first;  /* per point (number - 1): its first record */
  size_t count;
  bool has[N_METRICS];
  size_t shown;         /* metrics some point has */
  size_t lines;         /* point records of the table's metrics: its lines */
} table_points;

static bool table_points_make(table_points *t, const cJSON *comparison) {
  double most = 0;
  for (const cJSON *r = comparison->child; r; r = r->next)
    if (is_kind(r, "point") && num(r, "point") > most) most = num(r, "point");
  *t = (table_points){.first = calloc((size_t)most + 1, sizeof *t->first),
                      .count = (size_t)most};
  if (!t->first) return false;
  for (const cJSON *r = comparison->child; r; r = r->next) {
    if (!is_kind(r, "point") || !(num(r, "point") >= 1)) continue;
    size_t k = (size_t)num(r, "point") - 1;
    if (!t->first[k]) t->first[k] = r;
    for (size_t i = 0; i < N_METRICS; i++) {
      if (!is_metric(r, compared[i])) continue;
      t->has[i] = true;
      t->lines += i < N_DECIDED; /* telemetry: the point's gap line only */
    }
  }
  /* Points without records (every run failed) are left out. */
  size_t n = 0;
  for (size_t k = 0; k < t->count; k++)
    if (t->first[k]) t->first[n++] = t->first[k];
  t->count = n;
  for (size_t i = 0; i < N_METRICS; i++) t->shown += t->has[i];
  return true;
}

static const cJSON *point_record(const cJSON *comparison, const cJSON *first,
                                 const char *metric) {
  double k = num(first, "point");
  for (const cJSON *r = comparison->child; r; r = r->next)
    if (is_kind(r, "point") && num(r, "point") == k && is_metric(r, metric)) return r;
  return NULL;
}

static void format_error(double e, char *buf, size_t n) {
  if (isnan(e))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%+.1f %%", 100 * e);
}

static const char *within_word(const cJSON *r) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "within");
  return cJSON_IsTrue(w) ? "yes" : cJSON_IsFalse(w) ? "no" : "n/a";
}

/* A line of a point's row: one metric's sim, real (mean ± half the range),
 * error and within, from column col on. */
static bool put_metric(exp_grid *g, size_t row, size_t col, const cJSON *rec) {
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(rec, "metric");
  const run_metric *m = run_metric_find(name->valuestring);
  const char *unit = m ? m->unit : "";
  char sim[96], real[96], err[48];
  exp_format_quantity(num(rec, "sim"), unit, sim, sizeof sim);
  if (num(rec, "compared") >= 2)
    exp_format_interval(num(rec, "real"), num(rec, "real_spread"), unit, real, sizeof real);
  else
    exp_format_quantity(num(rec, "real"), unit, real, sizeof real);
  format_error(num(rec, "error"), err, sizeof err);
  return exp_grid_set(g, row, col, name->valuestring) && exp_grid_set(g, row, col + 1, sim) &&
         exp_grid_set(g, row, col + 2, real) && exp_grid_set(g, row, col + 3, err) &&
         exp_grid_set(g, row, col + 4, within_word(rec));
}

static const char *const metric_head[] = {"runs", "metric", "sim", "real", "error",
                                          "within"};
enum { METRIC_COLS = sizeof metric_head / sizeof metric_head[0] };

static bool put_header(exp_grid *g, const exp_point_labels *l) {
  bool ok = true;
  for (size_t c = 0; ok && c < l->cols; c++) ok = exp_grid_set(g, 0, c, l->header[c]);
  for (size_t c = 0; ok && c < METRIC_COLS; c++)
    ok = exp_grid_set(g, 0, l->cols + c, metric_head[c]);
  return ok;
}

/* Point k's row from grid row *row on: its labels and runs (compared of
 * its runs) on the first line, a line per metric it has. */
static bool put_point(exp_grid *g, size_t *row, size_t k, const exp_point_labels *l,
                      const table_points *t, const cJSON *comparison) {
  const cJSON *first = t->first[k];
  bool ok = true;
  size_t done = 0;
  for (size_t c = 0; ok && c < l->cols; c++)
    ok = exp_grid_set(g, *row, c, l->cells[k * l->cols + c]);
  for (const cJSON *r = comparison->child; r; r = r->next)
    if (is_kind(r, "point") && num(r, "point") == num(first, "point") &&
        num(r, "compared") > (double)done)
      done = (size_t)num(r, "compared");
  char runs[48];
  snprintf(runs, sizeof runs, "%zu/%.0f", done, num(first, "runs"));
  ok = ok && exp_grid_set(g, *row, l->cols, runs);
  for (size_t i = 0; ok && i < N_DECIDED; i++) {
    const cJSON *rec = point_record(comparison, first, compared[i]);
    if (rec) ok = put_metric(g, (*row)++, l->cols + 1, rec);
  }
  return ok;
}

static bool print_points(FILE *f, const cJSON *comparison, const table_points *t) {
  const cJSON **sweeps = calloc(t->count + 1, sizeof *sweeps);
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(t->first[0], "experiment");
  exp_point_labels l = {0};
  exp_grid g = {0};
  for (size_t k = 0; sweeps && k < t->count; k++)
    sweeps[k] = cJSON_GetObjectItemCaseSensitive(t->first[k], "sweep");
  bool ok = sweeps &&
            exp_point_labels_make(&l, comparison, sweeps, t->count,
                                  cJSON_IsString(e) ? e->valuestring : "experiment") &&
            exp_grid_init(&g, t->lines + 1, l.cols + METRIC_COLS, l.cols + 2,
                          EXP_LABEL_WRAP) &&
            put_header(&g, &l);
  for (size_t k = 0, row = 1; ok && k < t->count; k++)
    ok = put_point(&g, &row, k, &l, t, comparison);
  if (ok) exp_grid_print(&g, f);
  exp_grid_free(&g);
  exp_point_labels_free(&l);
  free(sweeps);
  return ok;
}

/* ----------------------------------------------------------- summary */

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One metric's summary row: sweep points, median and max |error|, how
 * many within the spread. */
static bool summary_row(exp_grid *g, size_t row, const cJSON *comparison, const char *metric) {
  size_t points = 0, n = 0, yes = 0, judged = 0;
  for (const cJSON *r = comparison->child; r; r = r->next)
    points += is_kind(r, "point") && is_metric(r, metric);
  double *errs = calloc(points + 1, sizeof *errs);
  if (!errs) return false;
  for (const cJSON *r = comparison->child; r; r = r->next) {
    if (!is_kind(r, "point") || !is_metric(r, metric)) continue;
    double e = num(r, "error");
    if (!isnan(e)) errs[n++] = fabs(e);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(r, "within");
    judged += cJSON_IsBool(w);
    yes += cJSON_IsTrue(w);
  }
  qsort(errs, n, sizeof *errs, by_value);
  double median = n == 0 ? NAN : n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2;
  char buf[5][64];
  snprintf(buf[0], sizeof buf[0], "%zu", points);
  snprintf(buf[1], sizeof buf[1], "-");
  snprintf(buf[2], sizeof buf[2], "-");
  if (n) snprintf(buf[1], sizeof buf[1], "%.1f %%", 100 * median);
  if (n) snprintf(buf[2], sizeof buf[2], "%.1f %%", 100 * errs[n - 1]);
  if (judged)
    snprintf(buf[3], sizeof buf[3], "%zu of %zu", yes, judged);
  else
    snprintf(buf[3], sizeof buf[3], "n/a");
  free(errs);
  bool ok = exp_grid_set(g, row, 0, metric);
  for (size_t c = 0; ok && c < 4; c++) ok = exp_grid_set(g, row, c + 1, buf[c]);
  return ok;
}

static bool print_summary(FILE *f, const cJSON *comparison, const table_points *t) {
  static const char *const head[] = {"metric", "sweep points", "median |error|",
                                     "max |error|", "within spread"};
  exp_grid g = {0};
  bool ok = exp_grid_init(&g, t->shown + 1, 5, 1, EXP_LABEL_WRAP);
  for (size_t c = 0; ok && c < 5; c++) ok = exp_grid_set(&g, 0, c, head[c]);
  for (size_t i = 0, row = 1; ok && i < N_METRICS; i++)
    if (t->has[i]) ok = summary_row(&g, row++, comparison, compared[i]);
  if (ok) exp_grid_print(&g, f);
  exp_grid_free(&g);
  return ok;
}

void exp_validate_print(FILE *f, const cJSON *comparison) {
  table_points t = {0};
  if (!comparison || !table_points_make(&t, comparison)) {
    fprintf(f, "(the comparison: out of memory)\n");
    return;
  }
  if (t.count == 0) {
    fprintf(f, "(no run succeeded on both backends: nothing to compare)\n");
  } else if (!print_points(f, comparison, &t)) {
    fprintf(f, "(the table: out of memory)\n");
  } else {
    exp_validate_print_gaps(f, comparison);
    fputc('\n', f);
    if (!print_summary(f, comparison, &t)) fprintf(f, "(the summary: out of memory)\n");
    fputs("error: (sim - real) / real, of the means over the runs compared at a point.\n"
          "real: mean \xc2\xb1 half the range of its real runs; within: sim inside that "
          "(n/a: one real run, or\nreal runs all equal and sim not).\n", f);
    for (const cJSON *r = comparison->child; r; r = r->next)
      if (is_kind(r, "ranking")) exp_validate_print_ranking(f, r);
  }
  free(t.first);
}
