/*
 * The spec's "plots" list: each plot checked and parsed into an exp_plot (a
 * name that is a file stem, kind, x, y, series, title, log axes, select),
 * every problem one message, as the rest of the spec's are. Whether x and y
 * name metrics or config paths is checked against the runs by spec_load.c;
 * what a plot becomes is plots/'s.
 */
#include "experiments/spec/spec.h"

#include <stdlib.h>
#include <string.h>

static const char *const plot_keys[] = {"name", "kind", "x", "y", "series",
                                        "logx", "logy", "title", "select", NULL};

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

/* Adds "<p>.<key>: expected <what>, found <its value>". */
static void expect_member(exp_errors *e, const cJSON *j, const char *p, const char *key,
                          const char *what) {
  char kp[EXP_PATH_MAX];
  exp_child_path(kp, sizeof kp, p, key);
  exp_expect(e, kp, what, cJSON_GetObjectItemCaseSensitive(j, key));
}

/* "kind": sets per_epoch or per_server; "points" is the default. */
static void parse_kind(const cJSON *j, const char *p, exp_plot *out, exp_errors *e) {
  const char *kind = NULL;
  if (!exp_get_string(e, j, p, "kind", false, &kind) || !kind) return;
  if (strcmp(kind, "quality_vs_time") == 0) {
    out->per_epoch = true;
  } else if (strcmp(kind, "servers_over_time") == 0) {
    out->per_server = true;
  } else if (strcmp(kind, "points") != 0) {
    expect_member(e, j, p, "kind", "\"points\" (the default), \"quality_vs_time\" or "
                  "\"servers_over_time\"");
  }
}

static void parse_select(const cJSON *j, const char *p, exp_plot *out, exp_errors *e) {
  const cJSON *select = cJSON_GetObjectItemCaseSensitive(j, "select");
  if (select && (!cJSON_IsObject(select) || !select->child)) {
    expect_member(e, j, p, "select", "an object of dotted paths into the run config and "
                  "their values, such as {\"policy.type\": \"psld\"}");
  } else if (select) {
    out->select = cJSON_Duplicate(select, true);
  }
}

/* A servers_over_time plot sets its own axes: x, y and series are refused. */
static void refuse_axes(const cJSON *j, const char *p, exp_errors *e) {
  for (const char *const *k = (const char *const[]){"x", "y", "series", NULL}; *k; k++) {
    if (!cJSON_GetObjectItemCaseSensitive(j, *k)) continue;
    expect_member(e, j, p, *k, "nothing with kind \"servers_over_time\" (it draws keys "
                  "served per second against time, a line per server)");
  }
}

/* A quality_vs_time plot's x and y must be per-epoch metrics. */
static void check_per_epoch(const char *p, const char *x, const char *y, exp_errors *e) {
  const char *const which[] = {"x", "y"};
  const char *const names[] = {x, y};
  for (int k = 0; k < 2; k++) {
    const run_metric *m = run_metric_find(names[k]);
    if (m && m->list && m->values) continue;
    char kp[EXP_PATH_MAX];
    exp_child_path(kp, sizeof kp, p, which[k]);
    exp_errors_addf(e, "%s: expected a metric with one value per epoch or evaluation "
                       "(epoch_end_s, epoch_quality, epoch_loss, epoch_time_s, eval_end_s, "
                       "eval_quality) for kind "
                       "\"quality_vs_time\", found \"%s\"", kp, names[k]);
  }
}

static void parse_plot(const cJSON *j, const char *p, exp_plot *out,
                       exp_errors *e) {
  const char *name = NULL, *x = NULL, *y = NULL, *series = NULL, *title = NULL;
  exp_check_keys(e, j, p, plot_keys);
  if (exp_get_string(e, j, p, "name", true, &name) && name && !exp_is_file_stem(name))
    expect_member(e, j, p, "name", "a file name stem of letters, digits, '_', '.' and '-'");
  parse_kind(j, p, out, e);
  parse_select(j, p, out, e);
  if (out->per_server) {
    refuse_axes(j, p, e);
    x = "time_s";
    y = "servers";
  }
  exp_get_string(e, j, p, "x", !out->per_epoch && !out->per_server, &x);
  exp_get_string(e, j, p, "y", !out->per_epoch && !out->per_server, &y);
  if (out->per_epoch) {
    if (!x) x = "eval_end_s";
    if (!y) y = "eval_quality";
    check_per_epoch(p, x, y, e);
  }
  exp_get_string(e, j, p, "series", false, &series);
  exp_get_string(e, j, p, "title", false, &title);
  exp_get_bool(e, j, p, "logx", &out->logx);
  exp_get_bool(e, j, p, "logy", &out->logy);
  out->name = copy(name);
  out->x = copy(x);
  out->y = copy(y);
  out->series = copy(series);
  out->title = copy(title);
}

bool exp_plots_parse(const cJSON *plots, exp_plot_list *out, exp_errors *e) {
  size_t before = e->count;
  *out = (exp_plot_list){0};
  if (!plots) return true;
  if (!cJSON_IsArray(plots)) {
    exp_expect(e, "plots", "a list of plots {\"name\", \"x\", \"y\", ...}", plots);
    return false;
  }
  size_t n = (size_t)cJSON_GetArraySize(plots), i = 0;
  out->items = calloc(n + 1, sizeof *out->items);
  if (!out->items) return false;
  out->count = n;
  for (const cJSON *j = plots->child; j; j = j->next, i++) {
    char p[EXP_PATH_MAX];
    exp_index_path(p, sizeof p, "plots", i);
    if (!cJSON_IsObject(j)) {
      exp_expect(e, p, "a plot {\"name\", \"x\", \"y\", ...}", j);
      continue;
    }
    parse_plot(j, p, &out->items[i], e);
    for (size_t k = 0; out->items[i].name && k < i; k++)
      if (out->items[k].name && strcmp(out->items[k].name, out->items[i].name) == 0)
        exp_errors_addf(e, "%s.name: expected a name no other plot has, found \"%s\" "
                           "(also plots[%zu])", p, out->items[i].name, k);
  }
  return e->count == before;
}

void exp_plot_list_free(exp_plot_list *l) {
  for (size_t i = 0; i < l->count; i++) {
    exp_plot *p = &l->items[i];
    free(p->name);
    free(p->x);
    free(p->y);
    free(p->series);
    free(p->title);
    cJSON_Delete(p->select);
  }
  free(l->items);
  *l = (exp_plot_list){0};
}
