/*
 * The table printed when an experiment ends, for a human at a terminal and
 * for pasting into a paper: one row per sweep point; a label column per
 * sweep path whose value varies (what is the same everywhere says nothing
 * about the rows), each label only what tells its point apart, in the
 * words the plots use (exp_value_labels_varying); a "runs ok" column when
 * there are repeats or failures;
 * then the metric columns, each value in engineering form with its unit,
 * "mean ± ci95" over two or more successful repeats. summary.csv holds the
 * same figures exactly, for programs.
 */
#include "experiments/internal.h"

#include <stdlib.h>
#include <string.h>

enum { LABEL_WRAP = 40 };

/* The table's label columns: the sweep paths whose value is not the same
 * at every point. */
typedef struct {
  const char **paths; /* borrowed from the records */
  size_t count;
} label_columns;

static bool varies(const exp_points *pts, const char *path) {
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(pts->items[0].sweep, path);
  for (size_t i = 1; i < pts->count; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(pts->items[i].sweep, path);
    if (!first || !v || !cJSON_Compare(first, v, true)) return true;
  }
  return false;
}

static label_columns varying_paths(const cJSON *records, const exp_points *pts) {
  size_t n;
  label_columns l = {exp_sweep_paths(records, &n), 0};
  for (size_t i = 0; l.paths && i < n; i++)
    if (varies(pts, l.paths[i])) l.paths[l.count++] = l.paths[i];
  return l;
}

static bool some_repeats(const exp_points *pts) {
  for (size_t i = 0; i < pts->count; i++)
    if (pts->items[i].runs > 1 || pts->items[i].ok < pts->items[i].runs) return true;
  return false;
}

/* ------------------------------------------------------------ cells */

/* The label of point k at one path, among every point's value there, in
 * the words the plots use (exp_value_labels_varying); "-" where point k has
 * no value at the path. */
static bool put_label(exp_grid *g, size_t row, size_t col, const exp_points *pts,
                      size_t k, const char *path) {
  const cJSON **values = calloc(pts->count + 1, sizeof *values);
  char **labels = calloc(pts->count + 1, sizeof *labels);
  size_t n = 0, at = SIZE_MAX;
  for (size_t i = 0; values && labels && i < pts->count; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(pts->items[i].sweep, path);
    if (!v) continue;
    if (i == k) at = n;
    values[n++] = v;
  }
  bool ok = values && labels && exp_value_labels_varying(values, n, "type", labels);
  ok = ok && exp_grid_set(g, row, col, at == SIZE_MAX ? "-" : labels[at]);
  for (size_t i = 0; labels && i < n; i++) free(labels[i]);
  free(labels);
  free(values);
  return ok;
}

static void metric_cell(const exp_point *pt, size_t i, const run_metric *m,
                        char *buf, size_t n) {
  const exp_stats *s = &pt->stats[i];
  if (pt->ok == 0)
    snprintf(buf, n, "%s", i == 0 ? "failed" : "-");
  else if (s->n == 0)
    snprintf(buf, n, "-");
  else if (m->combine == RUN_COMBINE_MEAN && s->n >= 2)
    exp_format_interval(s->mean, exp_stats_ci95(s), m->unit, buf, n);
  else
    exp_format_quantity(exp_stats_combined(s, m->combine), m->unit, buf, n);
}

/* Row `row` of the grid: point k's labels, runs and metrics. */
static bool put_row(exp_grid *g, size_t row, const exp_points *pts, size_t k,
                    const label_columns *labels, const char *name, bool runs_col,
                    const exp_metric_list *metrics) {
  const exp_point *pt = &pts->items[k];
  char buf[128];
  size_t col = 0;
  bool ok = true;
  for (; col < labels->count && ok; col++)
    ok = put_label(g, row, col, pts, k, labels->paths[col]);
  if (!labels->count) ok = exp_grid_set(g, row, col++, name);
  if (runs_col) {
    snprintf(buf, sizeof buf, "%zu/%zu", pt->ok, pt->runs);
    ok = ok && exp_grid_set(g, row, col++, buf);
  }
  for (size_t i = 0; i < metrics->count && ok; i++) {
    metric_cell(pt, i, metrics->items[i], buf, sizeof buf);
    ok = exp_grid_set(g, row, col++, buf);
  }
  return ok;
}

static bool put_header(exp_grid *g, const label_columns *labels, bool runs_col,
                       const exp_metric_list *metrics) {
  size_t col = 0;
  bool ok = true;
  for (; col < labels->count && ok; col++) ok = exp_grid_set(g, 0, col, labels->paths[col]);
  if (!labels->count) ok = exp_grid_set(g, 0, col++, "experiment");
  if (runs_col) ok = ok && exp_grid_set(g, 0, col++, "runs ok");
  for (size_t i = 0; i < metrics->count && ok; i++)
    ok = exp_grid_set(g, 0, col++, metrics->items[i]->name);
  return ok;
}

/* ------------------------------------------------------------ table */

static void print_points(FILE *f, const exp_results *r, const exp_points *pts,
                         const exp_metric_list *metrics) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(r->records->child, "experiment");
  const char *name = cJSON_IsString(e) ? e->valuestring : "experiment";
  label_columns labels = varying_paths(r->records, pts);
  bool runs_col = some_repeats(pts);
  size_t label_cols = labels.count ? labels.count : 1;
  exp_grid g;
  bool ok = labels.paths &&
            exp_grid_init(&g, pts->count + 1, label_cols + runs_col + metrics->count,
                          label_cols, LABEL_WRAP) &&
            put_header(&g, &labels, runs_col, metrics);
  for (size_t k = 0; k < pts->count && ok; k++)
    ok = put_row(&g, k + 1, pts, k, &labels, name, runs_col, metrics);
  if (ok) exp_grid_print(&g, f);
  else fprintf(f, "(the table: out of memory)\n");
  if (labels.paths) exp_grid_free(&g);
  free(labels.paths);
}

void exp_table_print(FILE *f, const exp_results *r) {
  if (!r->records || !r->records->child) return;
  exp_metric_list metrics;
  exp_points pts;
  if (!exp_table_metric_list(r, &metrics)) {
    fprintf(f, "(the table: out of memory)\n");
    return;
  }
  if (exp_points_collect(&pts, r->records, &metrics)) {
    print_points(f, r, &pts, &metrics);
    exp_points_free(&pts);
  } else {
    fprintf(f, "(the table: out of memory)\n");
  }
  exp_metric_list_free(&metrics);
}
