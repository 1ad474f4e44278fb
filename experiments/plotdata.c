/*
 * Plot data: from run records to the points of one plot.
 *
 * Each successful record gives x (a metric, its run/repeat/seed, or a path
 * into its config), y (a metric; a list-valued one reduced by
 * exp_metric_value) and a series label. Points are means over the records
 * that share series and x, which are meant to be the repeats of one sweep
 * point. When two *different* sweep points would fall on the same point
 * (x = policy.type while the sweep varies whole policy objects, two of which
 * are "static"), averaging them would mix two settings into one number; the
 * labels are then made specific instead: a bar chart labels its bars by the
 * sweep values, a line chart draws a line per combination of the values
 * other than x.
 */
#include "experiments/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const cJSON *sweep; /* the record's sweep point */
  const cJSON *xv;    /* x's value */
  const cJSON *sv;    /* the series' value, or NULL */
  double y;
  char *xl;           /* label of x, for a non-numeric x */
  char *sl;           /* series label */
} entry;

/* The value `path` names for one record: a metric, the record's run,
 * repeat or seed, or else a path into its config. */
static const cJSON *record_value(const cJSON *r, const char *path) {
  if (!strchr(path, '.')) {
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, path);
    if (v) return v;
    if (!strcmp(path, "run") || !strcmp(path, "repeat") || !strcmp(path, "seed"))
      return cJSON_GetObjectItemCaseSensitive(r, path);
  }
  return exp_path_get(cJSON_GetObjectItemCaseSensitive(r, "config"), path);
}

static bool usable(const cJSON *r, const exp_plot *p, const cJSON **x, double *y) {
  if (cJSON_GetObjectItemCaseSensitive(r, "error")) return false;
  *x = record_value(r, p->x);
  return *x && exp_metric_value(record_value(r, p->y), y);
}

/* ---------------------------------------------------------- entries */

static entry *read_entries(const exp_plot *p, const cJSON *records, size_t *n,
                           bool *numeric) {
  const cJSON *x;
  double y;
  *n = 0;
  *numeric = true;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    if (!usable(r, p, &x, &y)) continue;
    (*n)++;
    if (!cJSON_IsNumber(x)) *numeric = false;
  }
  entry *e = calloc(*n + 1, sizeof *e);
  size_t i = 0;
  for (const cJSON *r = e && records ? records->child : NULL; r; r = r->next) {
    if (!usable(r, p, &x, &y)) continue;
    e[i++] = (entry){.sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep"), .xv = x,
                     .sv = p->series ? record_value(r, p->series) : NULL, .y = y};
  }
  *n = i;
  return e;
}

/* What every entry's value (x, or the series) shares, left out of labels. */
static cJSON *shared_of(const entry *e, size_t n, bool series) {
  const cJSON **values = calloc(n + 1, sizeof *values);
  for (size_t i = 0; values && i < n; i++) values[i] = series ? e[i].sv : e[i].xv;
  cJSON *shared = values ? exp_shared_members(values, n) : NULL;
  free(values);
  return shared;
}

static void label_entries(entry *e, size_t n, const exp_plot *p, bool numeric) {
  cJSON *xs = numeric ? NULL : shared_of(e, n, false);
  cJSON *ss = p->series ? shared_of(e, n, true) : NULL;
  for (size_t i = 0; i < n; i++) {
    e[i].xl = numeric ? NULL : exp_value_label_except(e[i].xv, xs);
    if (e[i].sv)
      e[i].sl = exp_value_label_except(e[i].sv, ss);
    else
      e[i].sl = strdup(p->series ? "(none)" : p->y);
  }
  cJSON_Delete(xs);
  cJSON_Delete(ss);
}

static void free_entries(entry *e, size_t n) {
  for (size_t i = 0; e && i < n; i++) {
    free(e[i].xl);
    free(e[i].sl);
  }
  free(e);
}

static bool same_place(const entry *a, const entry *b, bool numeric) {
  if (!a->sl || !b->sl || strcmp(a->sl, b->sl) != 0) return false;
  if (numeric) return a->xv->valuedouble == b->xv->valuedouble;
  return a->xl && b->xl && strcmp(a->xl, b->xl) == 0;
}

static bool same_point(const cJSON *a, const cJSON *b) {
  if (!a || !b) return a == b;
  return cJSON_Compare(a, b, true);
}

/* Whether two different sweep points would be averaged into one point. */
static bool collides(const entry *e, size_t n, bool numeric) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (same_place(&e[i], &e[j], numeric) && !same_point(e[i].sweep, e[j].sweep))
        return true;
  return false;
}

/* For each sweep path, what all entries' values there share ({} if none). */
static cJSON *shared_by_path(const entry *e, size_t n) {
  cJSON *all = cJSON_CreateObject();
  const cJSON **values = calloc(n + 1, sizeof *values);
  const cJSON *paths = n ? e[0].sweep : NULL;
  for (const cJSON *c = all && values && paths ? paths->child : NULL; c; c = c->next) {
    for (size_t i = 0; i < n; i++)
      values[i] = cJSON_GetObjectItemCaseSensitive(e[i].sweep, c->string);
    cJSON *shared = exp_shared_members(values, n);
    cJSON_AddItemToObject(all, c->string, shared ? shared : cJSON_CreateObject());
  }
  free(values);
  return all;
}

/* The sweep values except the one at `path`; a lone value without its
 * path. Caller frees; "" when nothing is left. */
static char *label_without(const cJSON *sweep, const char *path,
                           const cJSON *shared) {
  size_t left = 0;
  const cJSON *only = NULL;
  for (const cJSON *c = sweep ? sweep->child : NULL; c; c = c->next) {
    if (path && strcmp(c->string, path) == 0) continue;
    left++;
    only = c;
  }
  if (left == 1)
    return exp_value_label_except(only, cJSON_GetObjectItemCaseSensitive(shared, only->string));
  exp_buf b = {0};
  exp_buf_puts(&b, "");
  for (const cJSON *c = sweep ? sweep->child : NULL; c; c = c->next) {
    if (path && strcmp(c->string, path) == 0) continue;
    char *v = exp_value_label_except(c, cJSON_GetObjectItemCaseSensitive(shared, c->string));
    exp_buf_printf(&b, "%s%s=%s", b.len ? ", " : "", c->string, v ? v : "?");
    free(v);
  }
  return exp_buf_take(&b);
}

/* Bars are labelled by the sweep values (but the series'); lines by the
 * sweep values but x. */
static void make_specific(entry *e, size_t n, const exp_plot *p, bool numeric) {
  cJSON *shared = shared_by_path(e, n);
  for (size_t i = 0; i < n; i++) {
    char *alt = label_without(e[i].sweep, numeric ? p->x : p->series, shared);
    if (!alt || !*alt) {
      free(alt);
      continue;
    }
    char **target = numeric ? &e[i].sl : &e[i].xl;
    free(*target);
    *target = alt;
  }
  cJSON_Delete(shared);
}

/* ------------------------------------------------------------ cells */

static size_t label_index(char ***labels, size_t *n, const char *label) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*labels)[i], label) == 0) return i;
  char **l = realloc(*labels, (*n + 1) * sizeof *l);
  char *copy = strdup(label);
  if (!l || !copy) {
    if (l) *labels = l;
    free(copy);
    return SIZE_MAX;
  }
  *labels = l;
  l[*n] = copy;
  return (*n)++;
}

static void add_cell(exp_plot_data *d, size_t series, double x, double y) {
  for (size_t i = 0; i < d->n_cells; i++) {
    exp_plot_cell *c = &d->cells[i];
    if (c->series == series && c->x == x) {
      c->sum += y;
      c->n++;
      return;
    }
  }
  exp_plot_cell *cells = realloc(d->cells, (d->n_cells + 1) * sizeof *cells);
  if (!cells) return;
  d->cells = cells;
  cells[d->n_cells++] = (exp_plot_cell){series, x, y, 1};
}

void exp_plot_data_collect(exp_plot_data *d, const exp_plot *p,
                           const cJSON *records) {
  size_t n;
  *d = (exp_plot_data){0};
  entry *e = read_entries(p, records, &n, &d->numeric);
  if (e) label_entries(e, n, p, d->numeric);
  if (e && collides(e, n, d->numeric)) make_specific(e, n, p, d->numeric);
  for (size_t i = 0; e && i < n; i++) {
    if (!e[i].sl || (!d->numeric && !e[i].xl)) continue;
    size_t s = label_index(&d->series, &d->n_series, e[i].sl);
    size_t x = d->numeric ? 0 : label_index(&d->cats, &d->n_cats, e[i].xl);
    if (s == SIZE_MAX || x == SIZE_MAX) continue;
    add_cell(d, s, d->numeric ? e[i].xv->valuedouble : (double)x, e[i].y);
  }
  free_entries(e, n);
}

void exp_plot_data_free(exp_plot_data *d) {
  for (size_t i = 0; i < d->n_series; i++) free(d->series[i]);
  for (size_t i = 0; i < d->n_cats; i++) free(d->cats[i]);
  free(d->series);
  free(d->cats);
  free(d->cells);
  *d = (exp_plot_data){0};
}
