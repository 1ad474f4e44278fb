/*
 * What summary.csv and the table are made of: the run records grouped by
 * sweep point, each metric's values over a point's successful repeats
 * (exp_stats), and which metrics each of them shows.
 *
 * Which metrics: the metric table says what is shown without being asked
 * for (RUN_SHOW_SUMMARY, RUN_SHOW_TABLE); a spec's plots add the metrics
 * they draw, since a spec that plots sample_tv_distance studies it; and
 * `--metrics a,b,c` adds its names to summary.csv and makes them the
 * table's columns. Every list is in metric-table order, except --metrics'
 * own, which is in the order the user gave.
 */
#include "experiments/results/results.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- sweep points */

const char **exp_sweep_paths(const cJSON *records, size_t *count) {
  size_t cap = 1;
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    cap += (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "sweep"));
  const char **paths = calloc(cap, sizeof *paths);
  *count = 0;
  for (const cJSON *r = paths && records ? records->child : NULL; r; r = r->next) {
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    for (const cJSON *c = cJSON_IsObject(s) ? s->child : NULL; c; c = c->next) {
      size_t k = 0;
      while (k < *count && strcmp(paths[k], c->string) != 0) k++;
      if (k == *count) paths[(*count)++] = c->string;
    }
  }
  return paths;
}

static void point_add(exp_point *pt, const cJSON *r, const exp_metric_list *metrics) {
  pt->runs++;
  if (!exp_record_ok(r)) return;
  pt->ok++;
  int diverged = exp_record_diverged(r);
  if (diverged && (!pt->diverged || diverged < pt->diverged_epoch)) pt->diverged_epoch = diverged;
  pt->diverged += diverged != 0;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metrics");
  for (size_t i = 0; i < metrics->count; i++) {
    double v;
    if (exp_metric_value(cJSON_GetObjectItemCaseSensitive(m, metrics->items[i]->name), &v))
      exp_stats_add(&pt->stats[i], v);
    else if (diverged && exp_diverged_hides(r, metrics->items[i]->name))
      pt->hidden[i]++;
  }
}

bool exp_points_collect(exp_points *p, const cJSON *records,
                        const exp_metric_list *metrics) {
  size_t cap = (size_t)cJSON_GetArraySize(records);
  *p = (exp_points){.items = calloc(cap + 1, sizeof *p->items)};
  bool ok = p->items != NULL;
  for (const cJSON *r = ok && records ? records->child : NULL; r && ok; r = r->next) {
    const cJSON *sweep = cJSON_GetObjectItemCaseSensitive(r, "sweep");
    size_t k = 0;
    while (k < p->count && !exp_same_point(p->items[k].sweep, sweep)) k++;
    if (k == p->count) {
      exp_point *pt = &p->items[p->count++];
      pt->sweep = sweep;
      pt->stats = calloc(metrics->count + 1, sizeof *pt->stats);
      pt->hidden = calloc(metrics->count + 1, sizeof *pt->hidden);
      ok = pt->stats && pt->hidden;
    }
    if (ok) point_add(&p->items[k], r, metrics);
  }
  if (!ok) exp_points_free(p);
  return ok;
}

void exp_points_free(exp_points *p) {
  for (size_t i = 0; p->items && i < p->count; i++) {
    free(p->items[i].stats);
    free(p->items[i].hidden);
  }
  free(p->items);
  *p = (exp_points){0};
}

/* ------------------------------------------------------ which metrics */

static bool records_have(const cJSON *records, const char *name) {
  for (const cJSON *r = records ? records->child : NULL; r; r = r->next)
    if (cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "metrics"),
                                         name))
      return true;
  return false;
}

/* Whether a plot shows the metric as one number per run (a per-epoch plot
 * shows its lists epoch by epoch: their mean means little in a table). */
static bool plots_use(const exp_plot_list *plots, const char *name) {
  for (size_t i = 0; plots && i < plots->count; i++)
    if (!plots->items[i].per_epoch && !plots->items[i].per_server &&
        (strcmp(plots->items[i].y, name) == 0 || strcmp(plots->items[i].x, name) == 0))
      return true;
  return false;
}

/* Whether name is among names[0..before) (before: SIZE_MAX for all). */
static bool listed(const char *const *names, const char *name, size_t before) {
  for (size_t i = 0; names && names[i] && i < before; i++)
    if (strcmp(names[i], name) == 0) return true;
  return false;
}

static bool list_add(exp_metric_list *l, const run_metric *m) {
  const run_metric **items = realloc(l->items, (l->count + 1) * sizeof *items);
  if (!items) return false;
  l->items = items;
  l->items[l->count++] = m;
  return true;
}

bool exp_summary_metric_list(const exp_results *r, exp_metric_list *out) {
  size_t n;
  const run_metric *table = run_metric_table(&n);
  bool ok = true;
  *out = (exp_metric_list){0};
  for (size_t i = 0; i < n && ok; i++) {
    const run_metric *m = &table[i];
    bool shown = (m->show & RUN_SHOW_SUMMARY) && records_have(r->records, m->name);
    if (shown || plots_use(r->plots, m->name) || listed(r->metrics, m->name, SIZE_MAX))
      ok = list_add(out, m);
  }
  if (!ok) exp_metric_list_free(out);
  return ok;
}

bool exp_table_metric_list(const exp_results *r, exp_metric_list *out) {
  size_t n;
  const run_metric *table = run_metric_table(&n);
  bool ok = true;
  *out = (exp_metric_list){0};
  for (size_t i = 0; r->metrics && r->metrics[i] && ok; i++) {
    const run_metric *m = run_metric_find(r->metrics[i]);
    if (m && !listed(r->metrics, m->name, i)) ok = list_add(out, m);
  }
  for (size_t i = 0; !r->metrics && i < n && ok; i++) {
    const run_metric *m = &table[i];
    bool wanted = (m->show & RUN_SHOW_TABLE) || plots_use(r->plots, m->name);
    if (wanted && records_have(r->records, m->name)) ok = list_add(out, m);
  }
  if (!ok) exp_metric_list_free(out);
  return ok;
}

void exp_metric_list_free(exp_metric_list *l) {
  free(l->items);
  *l = (exp_metric_list){0};
}

/* --------------------------------------------------------- --metrics */

static void unknown_metric(const char *name, size_t len, char *err, size_t errlen) {
  size_t n;
  const run_metric *table = run_metric_table(&n);
  exp_buf b = {0};
  exp_buf_printf(&b, "unknown metric \"%.*s\"; the metrics are:", (int)len, name);
  for (size_t i = 0; i < n; i++) exp_buf_printf(&b, "%s %s", i ? "," : "", table[i].name);
  char *text = exp_buf_take(&b);
  snprintf(err, errlen, "%s", text ? text : "unknown metric");
  free(text);
}

char **exp_metrics_parse(const char *list, char *err, size_t errlen) {
  size_t names = 1, len = strlen(list);
  for (const char *s = list; *s; s++) names += *s == ',';
  /* The pointers, then a copy of the text they point into: one free(). */
  char **out = malloc((names + 1) * sizeof *out + len + 1);
  if (!out) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  char *text = (char *)(out + names + 1);
  memcpy(text, list, len + 1);
  size_t k = 0;
  for (char *s = text;; s++) {
    size_t n = strcspn(s, ",");
    bool last = s[n] == '\0';
    s[n] = '\0';
    if (n == 0 || !run_metric_find(s)) {
      if (n == 0) snprintf(err, errlen, "an empty metric name in \"%s\"", list);
      else unknown_metric(s, n, err, errlen);
      free(out);
      return NULL;
    }
    out[k++] = s;
    s += n;
    if (last) break;
  }
  out[k] = NULL;
  return out;
}
