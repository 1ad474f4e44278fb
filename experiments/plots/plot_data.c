/*
 * Plot data: from run records to the points of one plot.
 *
 * Each successful record gives x (a metric, its run/repeat/seed, or a path
 * into its config), y (a metric; a list-valued one reduced to its mean by
 * exp_metric_value) and a series label. A point gathers the y values of the
 * records that share series and x, which are meant to be the repeats of one
 * sweep point; plot_script.c draws their combination (the metric's: mean, max or
 * sum) and, for a mean, its 95% confidence interval. When two *different*
 * sweep points would fall on the same point (x = policy.type while the
 * sweep varies whole policy objects, two of which are "static"), combining
 * them would mix two settings into one number; the labels are then made
 * specific instead: a bar chart labels its bars by the sweep values that
 * vary, and says so in x's title ("policy"), a line chart draws a line per
 * combination of the varying values other than x.
 *
 * Labels are readable (results/value_labels.c): what differs between the values, without
 * braces, an object's type first ("relocate lookahead=100").
 *
 * A per-epoch plot (kind "quality_vs_time") takes x and y from two lists of
 * one value per epoch: each record gives one point per epoch, the line of
 * its sweep point (or of its series value) runs through its epochs, and the
 * repeats of a sweep point are combined epoch by epoch, x and y both by
 * their mean.
 *
 * When x is epoch_end_s, the training time at each epoch's end, and y
 * epoch_quality (or epoch_loss), or x eval_end_s and y eval_quality (every
 * evaluation's), each line also gets its runs' end: time_s and the run's
 * final quality (evaluated on the owners' values once the run is quiet) or
 * loss, averaged over the repeats
 * (exp_plot_data.ends), so that the curve reaches the time a plot of time_s
 * shows for the same runs.
 *
 * A run whose training diverged (exp_record_diverged) has no y where y is
 * its loss or quality: it gives a marker instead (exp_plot_marker), at its
 * x (per epoch: x's value in the epoch it diverged in), so that the plot
 * shows it was run rather than leave it out.
 */
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const cJSON *rec;   /* the record */
  const cJSON *sweep; /* the record's sweep point */
  const cJSON *xv;    /* x's value */
  const cJSON *sv;    /* the series' value, or NULL */
  double y;          /* NaN for a run that diverged before y had a value */
  int diverged;      /* then the epoch it diverged in */
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

/* Whether the record is one the plot's "select" keeps. */
static bool selected(const cJSON *r, const exp_plot *p) {
  const cJSON *config = cJSON_GetObjectItemCaseSensitive(r, "config");
  for (const cJSON *s = p->select ? p->select->child : NULL; s; s = s->next)
    if (!cJSON_Compare(exp_path_get(config, s->string), s, true)) return false;
  return true;
}

/* Whether the record gives a point: x and y, or x and a divergence that
 * took y's value (y then NaN; exp_diverged_hides). */
static bool usable(const cJSON *r, const exp_plot *p, const cJSON **x, double *y) {
  if (!exp_record_ok(r) || !selected(r, p)) return false;
  *x = record_value(r, p->x);
  if (!*x) return false;
  if (exp_metric_value(record_value(r, p->y), y)) return true;
  *y = NAN;
  return exp_diverged_hides(r, p->y);
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
    e[i++] = (entry){.rec = r, .sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep"), .xv = x,
                     .sv = p->series ? record_value(r, p->series) : NULL, .y = y,
                     .diverged = isnan(y) ? exp_record_diverged(r) : 0};
  }
  *n = i;
  return e;
}

/* An object's type, when it has one, names it best: it leads its label. */
static const char *const TYPE_LEAD = "type";

/* Labels for the values of every entry (x's, or the series', at path),
 * taken together, into each entry's xl or sl; an empty value in words ("no
 * straggler"). Entries without a value keep none. */
static void label_values(entry *e, size_t n, bool series, const char *path) {
  const cJSON **values = calloc(n + 1, sizeof *values);
  char **labels = calloc(n + 1, sizeof *labels);
  size_t *at = calloc(n + 1, sizeof *at), k = 0;
  for (size_t i = 0; values && labels && at && i < n; i++) {
    const cJSON *v = series ? e[i].sv : e[i].xv;
    if (!v) continue;
    at[k] = i;
    values[k++] = v;
  }
  if (values && labels && at && exp_value_labels_varying(values, k, TYPE_LEAD, labels)) {
    exp_label_empty_values(values, k, path, labels);
    for (size_t j = 0; j < k; j++) *(series ? &e[at[j]].sl : &e[at[j]].xl) = labels[j];
  }
  free(values);
  free(labels);
  free(at);
}

static void label_entries(entry *e, size_t n, const exp_plot *p, bool numeric) {
  if (!numeric) label_values(e, n, false, p->x);
  if (p->series) label_values(e, n, true, p->series);
  for (size_t i = 0; i < n; i++)
    if (!e[i].sv) e[i].sl = strdup(p->series ? "(none)" : p->y);
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

/* Whether two different sweep points would be averaged into one point. */
static bool collides(const entry *e, size_t n, bool numeric) {
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (same_place(&e[i], &e[j], numeric) && !exp_same_point(e[i].sweep, e[j].sweep))
        return true;
  return false;
}

/* Whether the entries' sweep values at path are not all the same. */
static bool path_varies(const entry *e, size_t n, const char *path) {
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(e[0].sweep, path);
  for (size_t i = 1; i < n; i++)
    if (!exp_same_point(first, cJSON_GetObjectItemCaseSensitive(e[i].sweep, path)))
      return true;
  return false;
}

/* What leads the label of path's values: x's place inside them (x
 * policy.type, path policy: "type"), else an object's type. */
static const char *lead_for(const char *path, const char *x) {
  size_t len = strlen(path);
  if (strncmp(x, path, len) == 0 && x[len] == '.') return x + len + 1;
  return TYPE_LEAD;
}

/* Adds path's label of each entry to labels[i] ("path: label; " before it
 * when several paths make the label) and path to *title. */
static void add_path_labels(entry *e, size_t n, const char *path, const char *x,
                            bool several, exp_buf *labels, exp_buf *title) {
  const cJSON **values = calloc(n + 1, sizeof *values);
  char **text = calloc(n + 1, sizeof *text);
  for (size_t i = 0; values && text && i < n; i++)
    values[i] = cJSON_GetObjectItemCaseSensitive(e[i].sweep, path);
  bool ok = values && text && exp_value_labels_varying(values, n, lead_for(path, x), text) &&
            exp_label_empty_values(values, n, path, text);
  for (size_t i = 0; ok && i < n; i++) {
    const char *sep = labels[i].len ? "; " : "";
    if (several)
      exp_buf_printf(&labels[i], "%s%s: %s", sep, path, text[i]);
    else
      exp_buf_puts(&labels[i], text[i]);
  }
  for (size_t i = 0; text && i < n; i++) free(text[i]);
  free(values);
  free(text);
  exp_buf_printf(title, "%s%s", title->len ? ", " : "", path);
}

/* Bars are labelled by the varying sweep values but the series'; lines by
 * the varying sweep values but x's. The paths used become x's title (bars)
 * or the legend's (lines). */
static void make_specific(entry *e, size_t n, const exp_plot *p, bool numeric,
                          exp_plot_data *d) {
  const char *skip = numeric ? p->x : p->series;
  size_t used = 0;
  const cJSON *sweep = n ? e[0].sweep : NULL;
  for (const cJSON *c = sweep ? sweep->child : NULL; c; c = c->next)
    used += (!skip || strcmp(c->string, skip) != 0) && path_varies(e, n, c->string);
  exp_buf *labels = used ? calloc(n, sizeof *labels) : NULL;
  exp_buf title = {0};
  for (const cJSON *c = labels ? sweep->child : NULL; c; c = c->next)
    if ((!skip || strcmp(c->string, skip) != 0) && path_varies(e, n, c->string))
      add_path_labels(e, n, c->string, p->x, used > 1, labels, &title);
  for (size_t i = 0; labels && i < n; i++) {
    char *alt = exp_buf_take(&labels[i]);
    if (!alt || !*alt) {
      free(alt);
      continue;
    }
    char **target = numeric ? &e[i].sl : &e[i].xl;
    free(*target);
    *target = alt;
  }
  char *t = exp_buf_take(&title);
  if (t && *t) {
    char **target = numeric ? &d->series_title : &d->x_title;
    free(*target);
    *target = t;
    t = NULL;
  }
  free(t);
  free(labels);
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

/* Adds y to the cell of (series, x), made if new; the cell, or NULL on no
 * memory. */
static exp_plot_cell *add_cell(exp_plot_data *d, size_t series, double x, double y) {
  for (size_t i = 0; i < d->n_cells; i++) {
    exp_plot_cell *c = &d->cells[i];
    if (c->series == series && c->x == x) {
      exp_stats_add(&c->y, y);
      return c;
    }
  }
  exp_plot_cell *cells = realloc(d->cells, (d->n_cells + 1) * sizeof *cells);
  if (!cells) return NULL;
  d->cells = cells;
  cells[d->n_cells] = (exp_plot_cell){.series = series, .x = x};
  exp_stats_add(&cells[d->n_cells].y, y);
  return &cells[d->n_cells++];
}

/* Counts a diverged run at (series, x), made if new; the marker, or NULL
 * on no memory. */
static exp_plot_marker *add_marker(exp_plot_data *d, size_t series, double x, int epoch) {
  for (size_t i = 0; i < d->n_diverged; i++) {
    exp_plot_marker *m = &d->diverged[i];
    if (m->series == series && m->x == x) {
      m->runs++;
      if (epoch < m->epoch) m->epoch = epoch;
      return m;
    }
  }
  exp_plot_marker *m = realloc(d->diverged, (d->n_diverged + 1) * sizeof *m);
  if (!m) return NULL;
  d->diverged = m;
  m[d->n_diverged] = (exp_plot_marker){.series = series, .x = x, .runs = 1, .epoch = epoch};
  return &m[d->n_diverged++];
}

double exp_plot_cell_y(const exp_plot_data *d, const exp_plot_cell *c) {
  return exp_stats_combined(&c->y, d->combine);
}

double exp_plot_cell_ci95(const exp_plot_data *d, const exp_plot_cell *c) {
  return d->combine == RUN_COMBINE_MEAN ? exp_stats_ci95(&c->y) : NAN;
}

/* ------------------------------------------------------- per epoch */

/* The scalar metric that holds a per-epoch y's final value, when x is the
 * training time: NULL when the plot has no run's end to draw. */
static const char *final_of(const exp_plot *p) {
  if (strcmp(p->x, "eval_end_s") == 0 && strcmp(p->y, "eval_quality") == 0) return "quality";
  if (strcmp(p->x, "epoch_end_s") != 0) return NULL;
  if (strcmp(p->y, "epoch_quality") == 0) return "quality";
  if (strcmp(p->y, "epoch_loss") == 0) return "loss";
  return NULL;
}

/* Adds the end of record r (time_s, and its final value of y) to series
 * s's; nothing when r has not both as numbers (a diverged run). */
static void add_end(exp_plot_data *d, size_t s, const cJSON *r, const char *final) {
  const cJSON *t = record_value(r, "time_s"), *y = record_value(r, final);
  if (!cJSON_IsNumber(t) || !cJSON_IsNumber(y)) return;
  size_t i = 0;
  while (i < d->n_ends && d->ends[i].series != s) i++;
  if (i == d->n_ends) {
    exp_plot_cell *ends = realloc(d->ends, (d->n_ends + 1) * sizeof *ends);
    if (!ends) return;
    d->ends = ends;
    ends[d->n_ends++] = (exp_plot_cell){.series = s};
  }
  exp_stats_add(&d->ends[i].y, y->valuedouble);
  exp_stats_add(&d->ends[i].xs, t->valuedouble);
}

/* The list `name` of a record; a record written before evaluation points
 * were recorded gives its per-epoch list for eval_end_s and eval_quality
 * (the same evaluations, without eval_every's). */
static const cJSON *metric_list(const cJSON *rec, const char *name) {
  const cJSON *v = record_value(rec, name);
  if (!v && strcmp(name, "eval_end_s") == 0) v = record_value(rec, "epoch_end_s");
  if (!v && strcmp(name, "eval_quality") == 0) v = record_value(rec, "epoch_quality");
  return cJSON_IsArray(v) ? v : NULL;
}

static void collect_per_epoch(exp_plot_data *d, const exp_plot *p, const cJSON *records) {
  d->numeric = true;
  size_t n = 0;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    n += exp_record_ok(r) && selected(r, p) && metric_list(r, p->x) && metric_list(r, p->y);
  entry *e = calloc(n + 1, sizeof *e);
  size_t k = 0;
  for (const cJSON *r = records && e ? records->child : NULL; r; r = r->next) {
    if (!exp_record_ok(r) || !selected(r, p) || !metric_list(r, p->x) || !metric_list(r, p->y))
      continue;
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    e[k++] = (entry){.rec = r, .sweep = sweep,
                     .sv = p->series ? record_value(r, p->series) : NULL};
  }
  /* A line per series value, or else per sweep point, labelled by the swept
   * values that vary (the legend's title says which paths). */
  if (e && p->series) label_values(e, k, true, p->series);
  for (size_t i = 0; e && !p->series && i < k; i++) e[i].sl = strdup(p->y);
  if (e && !p->series && k) make_specific(e, k, p, true, d);
  for (size_t i = 0; i < k; i++) {
    const char *label = e[i].sl && *e[i].sl ? e[i].sl : p->y;
    size_t s = label_index(&d->series, &d->n_series, label);
    if (s == SIZE_MAX) continue;
    const cJSON *xs = metric_list(e[i].rec, p->x), *ys = metric_list(e[i].rec, p->y);
    size_t epoch = 0;
    int diverged = exp_record_diverged(e[i].rec);
    if (final_of(p)) add_end(d, s, e[i].rec, final_of(p));
    for (const cJSON *xv = xs->child, *yv = ys->child; xv && yv;
         xv = xv->next, yv = yv->next, epoch++) {
      exp_plot_marker *m = cJSON_IsNumber(xv) && !cJSON_IsNumber(yv) && diverged
                               ? add_marker(d, s, (double)epoch, diverged)
                               : NULL;
      if (m) exp_stats_add(&m->xs, xv->valuedouble);
      if (!cJSON_IsNumber(xv) || !cJSON_IsNumber(yv)) break;
      exp_plot_cell *c = add_cell(d, s, (double)epoch, yv->valuedouble);
      if (c) exp_stats_add(&c->xs, xv->valuedouble);
    }
  }
  for (size_t i = 0; i < d->n_cells; i++) d->cells[i].x = d->cells[i].xs.mean;
  for (size_t i = 0; i < d->n_diverged; i++) d->diverged[i].x = d->diverged[i].xs.mean;
  for (size_t i = 0; i < d->n_ends; i++) d->ends[i].x = d->ends[i].xs.mean;
  free_entries(e, k);
}

/* ------------------------------------------------------ per server */

static const cJSON *servers_of(const cJSON *r, const exp_plot *p) {
  if (!exp_record_ok(r) || !selected(r, p)) return NULL;
  const cJSON *v = record_value(r, "servers");
  return cJSON_IsArray(v) ? v : NULL;
}

/* A line per server ("server 3"), or per sweep point and server when the
 * runs drawn are of several ("policy=psld server 3"); x the middle of each
 * bucket, y its keys per second, repeats averaged bucket by bucket. */
static void collect_per_server(exp_plot_data *d, const exp_plot *p, const cJSON *records) {
  d->numeric = true;
  const cJSON *first = NULL;
  bool several = false;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    if (!servers_of(r, p)) continue;
    if (first && !exp_same_point(cJSON_GetObjectItemCaseSensitive(first, "sweep"),
                                 cJSON_GetObjectItemCaseSensitive(r, "sweep")))
      several = true;
    if (!first) first = r;
  }
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next) {
    const cJSON *servers = servers_of(r, p);
    char *point = servers && several
                      ? exp_sweep_label(cJSON_GetObjectItemCaseSensitive(r, "sweep"))
                      : NULL;
    for (const cJSON *s = servers ? servers->child : NULL; s; s = s->next) {
      const cJSON *node = cJSON_GetObjectItemCaseSensitive(s, "node");
      const cJSON *width = cJSON_GetObjectItemCaseSensitive(s, "bucket_s");
      const cJSON *series = cJSON_GetObjectItemCaseSensitive(s, "keys_per_s");
      if (!cJSON_IsNumber(node) || !cJSON_IsNumber(width) || !cJSON_IsArray(series)) continue;
      char label[256];
      snprintf(label, sizeof label, "%s%sserver %d", point ? point : "", point ? " " : "",
               node->valueint);
      size_t line = label_index(&d->series, &d->n_series, label);
      if (line == SIZE_MAX) continue;
      size_t j = 0;
      for (const cJSON *v = series->child; v; v = v->next, j++)
        if (cJSON_IsNumber(v))
          add_cell(d, line, ((double)j + 0.5) * width->valuedouble, v->valuedouble);
    }
    free(point);
  }
  free(d->x_title);
  d->x_title = strdup("time_s");
  free(d->series_title);
  d->series_title = NULL;
}

static int marker_by_x(const void *a, const void *b) {
  const exp_plot_marker *x = a, *y = b;
  return (x->x > y->x) - (x->x < y->x);
}

static void collect(exp_plot_data *d, const exp_plot *p, const cJSON *records);

void exp_plot_data_collect(exp_plot_data *d, const exp_plot *p,
                           const cJSON *records) {
  collect(d, p, records);
  if (d->diverged) qsort(d->diverged, d->n_diverged, sizeof *d->diverged, marker_by_x);
}

static void collect(exp_plot_data *d, const exp_plot *p, const cJSON *records) {
  size_t n;
  const run_metric *m = run_metric_find(p->y);
  *d = (exp_plot_data){.combine = m ? m->combine : RUN_COMBINE_MEAN};
  d->x_title = strdup(p->x);
  d->series_title = p->series ? strdup(p->series) : NULL;
  if (p->per_epoch || p->per_server) {
    d->combine = RUN_COMBINE_MEAN;
    if (p->per_epoch) collect_per_epoch(d, p, records);
    else collect_per_server(d, p, records);
    return;
  }
  entry *e = read_entries(p, records, &n, &d->numeric);
  if (e) label_entries(e, n, p, d->numeric);
  if (e && collides(e, n, d->numeric)) make_specific(e, n, p, d->numeric, d);
  for (size_t i = 0; e && i < n; i++) {
    if (!e[i].sl || (!d->numeric && !e[i].xl)) continue;
    size_t s = label_index(&d->series, &d->n_series, e[i].sl);
    size_t x = d->numeric ? 0 : label_index(&d->cats, &d->n_cats, e[i].xl);
    if (s == SIZE_MAX || x == SIZE_MAX) continue;
    double at = d->numeric ? e[i].xv->valuedouble : (double)x;
    if (e[i].diverged) add_marker(d, s, at, e[i].diverged);
    else add_cell(d, s, at, e[i].y);
  }
  free_entries(e, n);
}

void exp_plot_data_free(exp_plot_data *d) {
  for (size_t i = 0; i < d->n_series; i++) free(d->series[i]);
  for (size_t i = 0; i < d->n_cats; i++) free(d->cats[i]);
  free(d->series);
  free(d->cats);
  free(d->cells);
  free(d->diverged);
  free(d->ends);
  free(d->x_title);
  free(d->series_title);
  *d = (exp_plot_data){0};
}
