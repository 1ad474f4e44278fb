/*
 * Plots: the spec's "plots" list, and the gnuplot script each one becomes.
 *
 * A plot puts a metric (y) against a metric or a config value (x), with one
 * line per distinct value of an optional config path (series); plotdata.c
 * reduces the records to those points. A numeric x gives lines with points,
 * sorted by x; any other x (policy.type, a whole policy object) gives a
 * clustered bar chart, one cluster per x value in the order runs met them.
 * The script is self-contained (its data is inline), so a user can edit and
 * rerun it with plain gnuplot; draw.c runs it.
 */
#include "experiments/internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const plot_keys[] = {"name", "x", "y", "series",
                                        "logx", "logy", "title", NULL};

/* ---------------------------------------------------------- parsing */

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

static void parse_plot(const cJSON *j, const char *p, exp_plot *out,
                       exp_errors *e) {
  const char *name = NULL, *x = NULL, *y = NULL, *series = NULL, *title = NULL;
  exp_check_keys(e, j, p, plot_keys);
  if (exp_get_string(e, j, p, "name", true, &name) && name &&
      !exp_is_file_stem(name)) {
    char np[EXP_PATH_MAX];
    exp_child_path(np, sizeof np, p, "name");
    exp_expect(e, np, "a file name stem of letters, digits, '_', '.' and '-'",
               cJSON_GetObjectItemCaseSensitive(j, "name"));
  }
  exp_get_string(e, j, p, "x", true, &x);
  exp_get_string(e, j, p, "y", true, &y);
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
  }
  free(l->items);
  *l = (exp_plot_list){0};
}

/* ----------------------------------------------------------- script */

/* A gnuplot double-quoted string (backslash escapes). */
static void gp_string(exp_buf *b, const char *s) {
  exp_buf_puts(b, "\"");
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      exp_buf_printf(b, "\\%c", *s);
    else if (*s == '\n')
      exp_buf_puts(b, "\\n");
    else
      exp_buf_printf(b, "%c", *s);
  }
  exp_buf_puts(b, "\"");
}

/* A quoted label in inline data, where quotes cannot be escaped. */
static void gp_data_label(exp_buf *b, const char *s) {
  exp_buf_puts(b, "\"");
  for (; *s; s++) exp_buf_printf(b, "%c", *s == '"' ? '\'' : *s == '\n' ? ' ' : *s);
  exp_buf_puts(b, "\"");
}

static void gp_number(exp_buf *b, double v) {
  char num[40];
  exp_format_number(v, num, sizeof num);
  exp_buf_puts(b, num);
}

static void script_header(exp_buf *b, const exp_plot *p, const char *experiment,
                          const exp_plot_data *d) {
  exp_buf_printf(b, "# Plot \"%s\" of experiment \"%s\", written by pslab from "
                    "runs.jsonl.\n# Redraw with `gnuplot %s.gp` in this directory, "
                    "or `pslab plot DIR`.\n", p->name, experiment, p->name);
  exp_buf_puts(b, "set terminal svg size 800,500 dynamic noenhanced "
                  "font \"sans,12\" background rgb \"white\"\n");
  exp_buf_printf(b, "set output \"%s.svg\"\nset title ", p->name);
  if (p->title) {
    gp_string(b, p->title);
  } else {
    char *t = NULL;
    exp_buf tb = {0};
    exp_buf_printf(&tb, "%s: %s by %s", experiment, p->y, p->x);
    t = exp_buf_take(&tb);
    gp_string(b, t ? t : p->y);
    free(t);
  }
  exp_buf_puts(b, "\nset xlabel ");
  gp_string(b, p->x);
  exp_buf_puts(b, "\nset ylabel ");
  gp_string(b, p->y);
  exp_buf_puts(b, "\nset grid\n");
  if (p->series) {
    exp_buf_puts(b, "set key outside right top title ");
    gp_string(b, p->series);
    exp_buf_puts(b, "\n");
  } else if (d->n_series > 1) { /* lines told apart by other swept values */
    exp_buf_puts(b, "set key outside right top\n");
  } else {
    exp_buf_puts(b, "unset key\n");
  }
  if (p->logx && d->numeric) exp_buf_puts(b, "set logscale x\n");
  if (p->logx && !d->numeric) exp_buf_puts(b, "# logx ignored: x is not numeric\n");
  if (p->logy) exp_buf_puts(b, "set logscale y\n");
}

static int by_series_then_x(const void *a, const void *b) {
  const exp_plot_cell *x = a, *y = b;
  if (x->series != y->series) return x->series < y->series ? -1 : 1;
  return (x->x > y->x) - (x->x < y->x);
}

static void script_lines(exp_buf *b, exp_plot_data *d) {
  qsort(d->cells, d->n_cells, sizeof *d->cells, by_series_then_x);
  for (size_t s = 0; s < d->n_series; s++) {
    exp_buf_printf(b, "$s%zu << EOD\n", s);
    for (size_t i = 0; i < d->n_cells; i++) {
      if (d->cells[i].series != s) continue;
      gp_number(b, d->cells[i].x);
      exp_buf_puts(b, " ");
      gp_number(b, d->cells[i].sum / (double)d->cells[i].n);
      exp_buf_puts(b, "\n");
    }
    exp_buf_puts(b, "EOD\n");
  }
  exp_buf_puts(b, "plot ");
  for (size_t s = 0; s < d->n_series; s++) {
    exp_buf_printf(b, "%s$s%zu using 1:2 with linespoints pointtype 7 title ",
                   s ? ", \\\n     " : "", s);
    gp_string(b, d->series[s]);
  }
  exp_buf_puts(b, "\n");
}

static const exp_plot_cell *find_cell(const exp_plot_data *d, size_t series, size_t cat) {
  for (size_t i = 0; i < d->n_cells; i++)
    if (d->cells[i].series == series && d->cells[i].x == (double)cat)
      return &d->cells[i];
  return NULL;
}

static void script_bars(exp_buf *b, const exp_plot_data *d, const exp_plot *p) {
  size_t longest = 0;
  exp_buf_puts(b, "$data << EOD\n");
  for (size_t c = 0; c < d->n_cats; c++) {
    if (strlen(d->cats[c]) > longest) longest = strlen(d->cats[c]);
    gp_data_label(b, d->cats[c]);
    for (size_t s = 0; s < d->n_series; s++) {
      const exp_plot_cell *x = find_cell(d, s, c);
      exp_buf_puts(b, " ");
      if (x)
        gp_number(b, x->sum / (double)x->n);
      else
        exp_buf_puts(b, "NaN");
    }
    exp_buf_puts(b, "\n");
  }
  exp_buf_puts(b, "EOD\nset style data histogram\n"
                  "set style histogram clustered gap 1\n"
                  "set style fill solid 0.85 border -1\n");
  if (!p->logy) exp_buf_puts(b, "set yrange [0:*]\n");
  if (longest > 12) exp_buf_puts(b, "set xtics rotate by -25\n");
  exp_buf_puts(b, "plot ");
  for (size_t s = 0; s < d->n_series; s++) {
    exp_buf_printf(b, "%s$data using %zu%s title ", s ? ", \\\n     " : "", s + 2,
                   s ? "" : ":xtic(1)");
    gp_string(b, d->series[s]);
  }
  exp_buf_puts(b, "\n");
}

char *exp_plot_script(const exp_plot *p, const char *experiment,
                      const cJSON *records, char *err, size_t errlen) {
  exp_plot_data d = {0};
  exp_plot_data_collect(&d, p, records);
  if (d.n_cells == 0) {
    snprintf(err, errlen, "no successful run has a value for both x (\"%s\") and y (\"%s\")",
             p->x, p->y);
    exp_plot_data_free(&d);
    return NULL;
  }
  exp_buf b = {0};
  script_header(&b, p, experiment, &d);
  if (d.numeric)
    script_lines(&b, &d);
  else
    script_bars(&b, &d, p);
  exp_plot_data_free(&d);
  char *s = exp_buf_take(&b);
  if (!s) snprintf(err, errlen, "out of memory");
  return s;
}
