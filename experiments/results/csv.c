/*
 * The two CSV files of a results directory, for programs (R, pandas, a
 * spreadsheet), derived from the run records:
 *
 *   runs.csv     one row per run: run, repeat, seed, the sweep values, every
 *                scalar metric, error (runs.jsonl flattened);
 *   summary.csv  one row per sweep point: the sweep values, runs, runs_ok,
 *                then each summary metric combined over the point's
 *                successful repeats as its metric-table entry says (mean,
 *                max or sum), a mean with its sample standard deviation
 *                (<name>_sd) and the half-width of its 95% confidence
 *                interval (<name>_ci95).
 *
 * Numbers are exact (exp_format_number), strings bare, objects and lists
 * compact JSON, fields quoted as RFC 4180 says. An empty cell means "no
 * value": a failed run's metrics, a metric a point lacks, an interval over
 * fewer than two repeats.
 */
#include "experiments/results/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ fields */

void exp_csv_field(FILE *f, const char *s) {
  if (!s[strcspn(s, ",\"\r\n")]) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

void exp_csv_value(FILE *f, const cJSON *v) {
  char num[40];
  if (!v || cJSON_IsNull(v)) return;
  if (cJSON_IsString(v)) {
    exp_csv_field(f, v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    exp_format_number(v->valuedouble, num, sizeof num);
    fputs(num, f);
  } else {
    char *text = cJSON_PrintUnformatted(v);
    if (text) exp_csv_field(f, text);
    free(text);
  }
}

/* ",<number>", or "," alone for NaN (no value). */
static void csv_number(FILE *f, double v) {
  char num[40];
  fputc(',', f);
  if (isnan(v)) return;
  exp_format_number(v, num, sizeof num);
  fputs(num, f);
}

static void csv_header(FILE *f, const char *const *paths, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) fputc(',', f);
    exp_csv_field(f, paths[i]);
  }
}

/* ---------------------------------------------------------- runs.csv */

/* Names in first-appearance order, without duplicates. */
typedef struct {
  const char **names;
  size_t count;
  bool failed; /* out of memory: some name is missing */
} name_list;

static void name_add(name_list *l, const char *name) {
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->names[i], name) == 0) return;
  const char **n = realloc(l->names, (l->count + 1) * sizeof *n);
  l->failed = l->failed || !n;
  if (!n) return;
  l->names = n;
  l->names[l->count++] = name;
}

static bool some_record_has_number(const cJSON *records, const char *name) {
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, name))) return true;
  }
  return false;
}

/* The scalar metrics records have: the metric table's in its order, then
 * unknown ones as met. (List metrics are in runs.jsonl.) */
static name_list scalar_metrics(const cJSON *records) {
  name_list l = {0};
  size_t n;
  const run_metric *table = run_metric_table(&n);
  for (size_t i = 0; i < n; i++)
    if (some_record_has_number(records, table[i].name)) name_add(&l, table[i].name);
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    for (const cJSON *c = cJSON_IsObject(m) ? m->child : NULL; c; c = c->next)
      if (cJSON_IsNumber(c) && !run_metric_find(c->string)) name_add(&l, c->string);
  }
  return l;
}

static void runs_row(FILE *f, const cJSON *r, const char *const *paths, size_t n_paths,
                     const name_list *metrics) {
  const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
  exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "run"));
  fputc(',', f);
  exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "repeat"));
  fputc(',', f);
  exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "seed"));
  for (size_t i = 0; i < n_paths; i++) {
    fputc(',', f);
    exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(sweep, paths[i]));
  }
  for (size_t i = 0; i < metrics->count; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, metrics->names[i]);
    fputc(',', f);
    if (cJSON_IsNumber(v)) exp_csv_value(f, v);
  }
  fputc(',', f);
  exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(r, "error"));
  fputc('\n', f);
}

bool exp_runs_csv(FILE *f, const cJSON *records) {
  size_t n_paths = 0;
  const char **paths = exp_sweep_paths(records, &n_paths);
  name_list metrics = scalar_metrics(records);
  bool ok = paths && !metrics.failed;
  if (!ok) {
    free(paths);
    free(metrics.names);
    return false;
  }
  fputs("run,repeat,seed", f);
  for (size_t i = 0; i < n_paths; i++) {
    fputc(',', f);
    exp_csv_field(f, paths[i]);
  }
  for (size_t i = 0; i < metrics.count; i++) {
    fputc(',', f);
    exp_csv_field(f, metrics.names[i]);
  }
  fputs(",error\n", f);
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    runs_row(f, r, paths, n_paths, &metrics);
  free(paths);
  free(metrics.names);
  return true;
}

/* ------------------------------------------------------- summary.csv */

static void summary_header(FILE *f, const char *const *paths, size_t n_paths,
                           const exp_metric_list *metrics) {
  csv_header(f, paths, n_paths);
  fputs(n_paths ? ",runs,runs_ok" : "runs,runs_ok", f);
  for (size_t i = 0; i < metrics->count; i++) {
    const run_metric *m = metrics->items[i];
    fprintf(f, ",%s", m->name);
    if (m->combine == RUN_COMBINE_MEAN) fprintf(f, ",%s_sd,%s_ci95", m->name, m->name);
  }
  fputc('\n', f);
}

static void summary_row(FILE *f, const exp_point *pt, const char *const *paths,
                        size_t n_paths, const exp_metric_list *metrics) {
  for (size_t i = 0; i < n_paths; i++) {
    if (i) fputc(',', f);
    exp_csv_value(f, cJSON_GetObjectItemCaseSensitive(pt->sweep, paths[i]));
  }
  fprintf(f, "%s%zu,%zu", n_paths ? "," : "", pt->runs, pt->ok);
  for (size_t i = 0; i < metrics->count; i++) {
    const run_metric *m = metrics->items[i];
    csv_number(f, exp_stats_combined(&pt->stats[i], m->combine));
    if (m->combine != RUN_COMBINE_MEAN) continue;
    csv_number(f, exp_stats_sd(&pt->stats[i]));
    csv_number(f, exp_stats_ci95(&pt->stats[i]));
  }
  fputc('\n', f);
}

bool exp_summary_csv(FILE *f, const exp_results *r) {
  size_t n_paths = 0;
  const char **paths = exp_sweep_paths(r->records, &n_paths);
  exp_metric_list metrics;
  exp_points pts;
  bool ok = paths && exp_summary_metric_list(r, &metrics);
  if (ok && !exp_points_collect(&pts, r->records, &metrics)) {
    exp_metric_list_free(&metrics);
    ok = false;
  }
  if (!ok) {
    free(paths);
    return false;
  }
  summary_header(f, paths, n_paths, &metrics);
  for (size_t i = 0; i < pts.count; i++)
    summary_row(f, &pts.items[i], paths, n_paths, &metrics);
  exp_points_free(&pts);
  exp_metric_list_free(&metrics);
  free(paths);
  return true;
}
