/*
 * The table printed when an experiment ends: one row per sweep point, the
 * swept values, then the main metrics averaged over the point's successful
 * repeats, in aligned columns (labels left, numbers right). It is for a
 * human at a terminal; summary.csv and runs.jsonl are for programs.
 */
#include "experiments/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const table_metrics[] = {
    "time_s", "steps_per_s", "local_ratio", "messages", "bytes", "wall_s", NULL};
enum { TABLE_METRICS = 6, LABEL_MAX = 40 };

typedef struct {
  const cJSON *sweep; /* of the point's first record */
  size_t ok, total;
  double sum[TABLE_METRICS];
  size_t n[TABLE_METRICS];
} group;

static bool same_point(const cJSON *a, const cJSON *b) {
  if (!a || !b) return a == b;
  return cJSON_Compare(a, b, true);
}

static void group_add(group *g, const cJSON *r) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
  g->total++;
  if (!cJSON_IsObject(m) || cJSON_GetObjectItemCaseSensitive(r, "error")) return;
  g->ok++;
  for (size_t i = 0; i < TABLE_METRICS; i++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, table_metrics[i]);
    if (!cJSON_IsNumber(v)) continue;
    g->sum[i] += v->valuedouble;
    g->n[i]++;
  }
}

/* Groups records by sweep point, in first-appearance order. */
static group *group_records(const cJSON *records, size_t *count) {
  size_t cap = (size_t)cJSON_GetArraySize(records) + 1;
  group *groups = calloc(cap, sizeof *groups);
  *count = 0;
  for (const cJSON *r = groups ? records->child : NULL; r; r = r->next) {
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    size_t g = 0;
    while (g < *count && !same_point(groups[g].sweep, sweep)) g++;
    if (g == *count) groups[(*count)++].sweep = sweep;
    group_add(&groups[g], r);
  }
  return groups;
}

typedef struct {
  char **cells; /* rows * cols, row 0 the header */
  size_t rows, cols;
  size_t label_cols; /* left-aligned columns */
} grid;

static void set_cell(grid *t, size_t row, size_t col, const char *text) {
  size_t len = strlen(text);
  char *c = len > LABEL_MAX ? malloc(LABEL_MAX + 1) : strdup(text);
  if (c && len > LABEL_MAX) snprintf(c, LABEL_MAX + 1, "%.*s...", LABEL_MAX - 3, text);
  t->cells[row * t->cols + col] = c;
}

/* Per sweep path, what all its swept objects share (left out of labels). */
static cJSON **shared_per_path(const group *groups, size_t n_groups,
                               const cJSON *paths) {
  size_t n_paths = (size_t)cJSON_GetArraySize(paths), k = 0;
  cJSON **shared = calloc(n_paths + 1, sizeof *shared);
  const cJSON **values = calloc(n_groups + 1, sizeof *values);
  for (const cJSON *p = shared && values && paths ? paths->child : NULL; p; p = p->next, k++) {
    for (size_t g = 0; g < n_groups; g++)
      values[g] = cJSON_GetObjectItemCaseSensitive(groups[g].sweep, p->string);
    shared[k] = exp_shared_members(values, n_groups);
  }
  free(values);
  return shared;
}

static void fill_row(grid *t, size_t row, const group *g, const cJSON *paths_from,
                     cJSON *const *shared, bool runs_col) {
  size_t col = 0;
  char buf[64];
  for (const cJSON *p = paths_from ? paths_from->child : NULL; p; p = p->next, col++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g->sweep, p->string);
    char *label = exp_value_label_except(v, shared ? shared[col] : NULL);
    set_cell(t, row, col, label ? label : "?");
    free(label);
  }
  if (runs_col) {
    snprintf(buf, sizeof buf, "%zu/%zu", g->ok, g->total);
    set_cell(t, row, col++, buf);
  }
  for (size_t i = 0; i < TABLE_METRICS; i++) {
    if (g->n[i])
      snprintf(buf, sizeof buf, "%.6g", g->sum[i] / (double)g->n[i]);
    else
      snprintf(buf, sizeof buf, "%s", !g->ok && i == 0 ? "failed" : "-");
    set_cell(t, row, col++, buf);
  }
}

static void print_grid(FILE *f, const grid *t) {
  size_t *width = calloc(t->cols, sizeof *width);
  if (!width) return;
  for (size_t i = 0; i < t->rows * t->cols; i++) {
    size_t len = t->cells[i] ? strlen(t->cells[i]) : 0;
    if (len > width[i % t->cols]) width[i % t->cols] = len;
  }
  for (size_t r = 0; r < t->rows; r++) {
    for (size_t c = 0; c < t->cols; c++) {
      const char *s = t->cells[r * t->cols + c];
      int w = (int)width[c];
      bool left = c < t->label_cols;
      fprintf(f, "%s%*s", c ? "  " : "", left ? -w : w, s ? s : "");
    }
    fputc('\n', f);
    for (size_t c = 0; r == 0 && c < t->cols; c++) {
      fprintf(f, "%s", c ? "  " : "");
      for (size_t k = 0; k < width[c]; k++) fputc('-', f);
      if (c + 1 == t->cols) fputc('\n', f);
    }
  }
  free(width);
}

void exp_table_print(FILE *f, const cJSON *records) {
  size_t n_groups;
  group *groups = group_records(records, &n_groups);
  if (!groups) return;
  const cJSON *paths = n_groups ? groups[0].sweep : NULL;
  bool runs_col = false;
  for (size_t g = 0; g < n_groups; g++)
    runs_col = runs_col || groups[g].total > 1 || groups[g].ok < groups[g].total;
  grid t = {.rows = n_groups + 1, .label_cols = (size_t)cJSON_GetArraySize(paths)};
  t.cols = t.label_cols + runs_col + TABLE_METRICS;
  t.cells = calloc(t.rows * t.cols, sizeof *t.cells);
  cJSON **shared = shared_per_path(groups, n_groups, paths);
  if (t.cells) {
    size_t col = 0;
    for (const cJSON *p = paths ? paths->child : NULL; p; p = p->next)
      set_cell(&t, 0, col++, p->string);
    if (runs_col) set_cell(&t, 0, col++, "runs ok");
    for (size_t i = 0; i < TABLE_METRICS; i++) set_cell(&t, 0, col++, table_metrics[i]);
    for (size_t g = 0; g < n_groups; g++)
      fill_row(&t, g + 1, &groups[g], paths, shared, runs_col);
    print_grid(f, &t);
    for (size_t i = 0; i < t.rows * t.cols; i++) free(t.cells[i]);
  }
  for (size_t k = 0; shared && k < t.label_cols; k++) cJSON_Delete(shared[k]);
  free(shared);
  free(t.cells);
  free(groups);
}
