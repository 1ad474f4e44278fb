/*
 * The table printed when an experiment ends, for a human at a terminal and
 * for pasting into a paper: one row per sweep point; a label column per
 * sweep path whose value varies (what is the same everywhere says nothing
 * about the rows), each label only what tells its point apart, in the
 * words the plots use (exp_value_labels_varying); a "runs ok" column when
 * there are repeats, failures or diverged runs ("1/3, 2 diverged": a run
 * whose training diverged is a result but not an ok one);
 * then the metric columns, each value in engineering form with its unit,
 * "mean ± ci95" over three or more successful repeats, "mean ± sd" over
 * two (a t interval of two runs is wide past use), a line under the table
 * saying which ± is shown; a metric no run of a
 * point has because its runs diverged reads "diverged @ epoch 2". summary.csv holds the
 * same figures exactly, for programs. The label columns are made apart
 * (exp_point_labels_make), so that `pslab validate`'s table labels its rows
 * the same way.
 */
#include "experiments/results/results.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ labels */

static bool varies(const cJSON *const *sweeps, size_t n, const char *path) {
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(sweeps[0], path);
  for (size_t i = 1; i < n; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sweeps[i], path);
    if (!first || !v || !cJSON_Compare(first, v, true)) return true;
  }
  return false;
}

/* Column `col` (sweep path `path`): every point's value there labelled
 * among the others, in the words the plots use (exp_value_labels_varying);
 * "-" where a point has no value at the path. */
static bool label_column(exp_point_labels *l, size_t col, const cJSON *const *sweeps,
                         const char *path) {
  const cJSON **values = calloc(l->rows + 1, sizeof *values);
  char **labels = calloc(l->rows + 1, sizeof *labels);
  size_t n = 0;
  for (size_t i = 0; values && labels && i < l->rows; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(sweeps[i], path);
    if (v) values[n++] = v;
  }
  bool ok = values && labels && exp_value_labels_varying(values, n, "type", labels) &&
            exp_label_empty_values(values, n, path, labels);
  for (size_t i = 0, k = 0; ok && i < l->rows; i++) {
    bool has = cJSON_GetObjectItemCaseSensitive(sweeps[i], path) != NULL;
    l->cells[i * l->cols + col] = strdup(has ? labels[k++] : "-");
    ok = l->cells[i * l->cols + col] != NULL;
  }
  for (size_t i = 0; labels && i < n; i++) free(labels[i]);
  free(labels);
  free(values);
  return ok;
}

bool exp_point_labels_make(exp_point_labels *l, const cJSON *records,
                           const cJSON *const *sweeps, size_t n, const char *name) {
  size_t n_paths = 0;
  *l = (exp_point_labels){.rows = n};
  const char **paths = exp_sweep_paths(records, &n_paths);
  if (!paths) return false;
  l->header = paths; /* the varying ones, kept in place, in order */
  for (size_t i = 0; n > 0 && i < n_paths; i++)
    if (varies(sweeps, n, paths[i])) paths[l->cols++] = paths[i];
  bool nothing = l->cols == 0;
  if (nothing) paths[l->cols++] = "experiment";
  l->cells = calloc(n * l->cols + 1, sizeof *l->cells);
  bool ok = l->cells != NULL;
  for (size_t i = 0; ok && nothing && i < n; i++)
    ok = (l->cells[i] = strdup(name)) != NULL;
  for (size_t c = 0; ok && !nothing && c < l->cols; c++)
    ok = label_column(l, c, sweeps, paths[c]);
  return ok;
}

void exp_point_labels_free(exp_point_labels *l) {
  for (size_t i = 0; l->cells && i < l->rows * l->cols; i++) free(l->cells[i]);
  free(l->cells);
  free(l->header);
  *l = (exp_point_labels){0};
}

static bool some_repeats(const exp_points *pts) {
  for (size_t i = 0; i < pts->count; i++)
    if (pts->items[i].runs > 1 || pts->items[i].ok < pts->items[i].runs ||
        pts->items[i].diverged)
      return true;
  return false;
}

/* ------------------------------------------------------------ cells */

/* What the ± of the cells shown mean, said once under the table. */
typedef struct {
  bool ci, sd;  /* some cell shows a 95% interval; some a standard deviation */
  size_t ci_n;  /* the repeats behind the intervals: 0 none yet, SIZE_MAX several */
} plus_minus;

static void metric_cell(const exp_point *pt, size_t i, const run_metric *m,
                        plus_minus *pm, char *buf, size_t n) {
  const exp_stats *s = &pt->stats[i];
  bool mean = m->combine == RUN_COMBINE_MEAN;
  if (pt->ok == 0) {
    snprintf(buf, n, "%s", i == 0 ? "failed" : "-");
  } else if (s->n == 0 && pt->hidden[i]) {
    snprintf(buf, n, "diverged @ epoch %d", pt->diverged_epoch);
  } else if (s->n == 0) {
    snprintf(buf, n, "-");
  } else if (mean && s->n == 2) { /* a t interval of two runs says little: their sd */
    exp_format_interval(s->mean, exp_stats_sd(s), m->unit, buf, n);
    pm->sd = true;
  } else if (mean && s->n > 2) {
    exp_format_interval(s->mean, exp_stats_ci95(s), m->unit, buf, n);
    pm->ci_n = !pm->ci || pm->ci_n == s->n ? s->n : SIZE_MAX;
    pm->ci = true;
  } else {
    exp_format_quantity(exp_stats_combined(s, m->combine), m->unit, buf, n);
  }
}

/* The line under the table that says what ± means, when some cell has one. */
static void print_plus_minus(FILE *f, const plus_minus *pm) {
  if (pm->ci && pm->sd)
    fprintf(f, "\n\xc2\xb1 half-width of the 95%% interval over the row's repeats; in rows "
               "of 2 repeats, too few for an interval, their standard deviation\n");
  else if (pm->ci && pm->ci_n != SIZE_MAX)
    fprintf(f, "\n\xc2\xb1 half-width of the 95%% interval over %zu repeats\n", pm->ci_n);
  else if (pm->ci)
    fprintf(f, "\n\xc2\xb1 half-width of the 95%% interval over the row's repeats\n");
  else if (pm->sd)
    fprintf(f, "\n\xc2\xb1 standard deviation over 2 repeats (too few for a 95%% interval)\n");
}

/* Under a table with a quality column, when some run's evaluations during
 * training read replicas: which model each figure is of. */
static void print_which_model(FILE *f, const cJSON *records, const exp_metric_list *metrics,
                              bool below_note) {
  bool quality = false;
  for (size_t i = 0; i < metrics->count; i++)
    quality = quality || strcmp(metrics->items[i]->name, "quality") == 0;
  double share = 0;
  for (const cJSON *r = records->child; quality && r; r = r->next) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "eval_replica_share");
    if (cJSON_IsNumber(v) && v->valuedouble > share) share = v->valuedouble;
  }
  if (share > 0)
    fprintf(f, "%squality: the model as a whole, evaluated on the owners' values once the run was "
               "quiet; the evaluations during training (the curves) read node-local replicas "
               "for up to %.0f%% of their keys (eval_replica_share)\n",
            below_note ? "" : "\n", 100 * share);
}

/* Row `row` of the grid: point k's labels, runs and metrics. */
static bool put_row(exp_grid *g, size_t row, const exp_points *pts, size_t k,
                    const exp_point_labels *labels, bool runs_col,
                    const exp_metric_list *metrics, plus_minus *pm) {
  const exp_point *pt = &pts->items[k];
  char buf[128];
  size_t col = 0;
  bool ok = true;
  for (; col < labels->cols && ok; col++)
    ok = exp_grid_set(g, row, col, labels->cells[k * labels->cols + col]);
  if (runs_col) {
    int len = snprintf(buf, sizeof buf, "%zu/%zu", pt->ok - pt->diverged, pt->runs);
    if (pt->diverged)
      snprintf(buf + len, sizeof buf - (size_t)len, ", %zu diverged", pt->diverged);
    ok = ok && exp_grid_set(g, row, col++, buf);
  }
  for (size_t i = 0; i < metrics->count && ok; i++) {
    metric_cell(pt, i, metrics->items[i], pm, buf, sizeof buf);
    ok = exp_grid_set(g, row, col++, buf);
  }
  return ok;
}

/* A metric's column: its name, and for a held-out quality the measure and
 * its better direction, when the runs share one ("quality (RMSE ↓)"). */
static bool put_header(exp_grid *g, const exp_point_labels *labels, bool runs_col,
                       const exp_metric_list *metrics, const cJSON *records) {
  size_t col = 0;
  bool ok = true, higher;
  const char *measure;
  bool named = exp_records_quality(records, &measure, &higher);
  for (; col < labels->cols && ok; col++) ok = exp_grid_set(g, 0, col, labels->header[col]);
  if (runs_col) ok = ok && exp_grid_set(g, 0, col++, "runs ok");
  for (size_t i = 0; i < metrics->count && ok; i++) {
    const char *name = metrics->items[i]->name;
    char head[128], words[64];
    if (named && exp_is_quality_metric(name)) {
      exp_quality_words(measure, higher, words, sizeof words);
      snprintf(head, sizeof head, "%s (%s)", name, words);
      name = head;
    }
    ok = exp_grid_set(g, 0, col++, name);
  }
  return ok;
}

/* ------------------------------------------------------------ table */

static void print_points(FILE *f, const exp_results *r, const exp_points *pts,
                         const exp_metric_list *metrics) {
  const cJSON *e = cJSON_GetObjectItemCaseSensitive(r->records->child, "experiment");
  const char *name = cJSON_IsString(e) ? e->valuestring : "experiment";
  const cJSON **sweeps = calloc(pts->count + 1, sizeof *sweeps);
  for (size_t k = 0; sweeps && k < pts->count; k++) sweeps[k] = pts->items[k].sweep;
  exp_point_labels labels = {0};
  bool runs_col = some_repeats(pts);
  exp_grid g = {0};
  bool ok = sweeps && exp_point_labels_make(&labels, r->records, sweeps, pts->count, name) &&
            exp_grid_init(&g, pts->count + 1, labels.cols + runs_col + metrics->count,
                          labels.cols, EXP_LABEL_WRAP) &&
            put_header(&g, &labels, runs_col, metrics, r->records);
  plus_minus pm = {0};
  for (size_t k = 0; k < pts->count && ok; k++)
    ok = put_row(&g, k + 1, pts, k, &labels, runs_col, metrics, &pm);
  if (ok) exp_grid_print(&g, f);
  if (ok) print_plus_minus(f, &pm);
  if (ok) print_which_model(f, r->records, metrics, pm.ci || pm.sd);
  else fprintf(f, "(the table: out of memory)\n");
  exp_grid_free(&g);
  exp_point_labels_free(&labels);
  free(sweeps);
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
