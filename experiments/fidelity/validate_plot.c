/*
 * `pslab validate`'s drawing: every run's real time_s against its simulated
 * time_s, a point per run (a colour per sweep point), and the line y = x on
 * which a perfect prediction lies. Both axes have the same unit and the
 * same range, on a square plot, so that the distance from the line reads
 * as the error; the axes are logarithmic when the times span more than a
 * decade. The script is self-contained like a spec plot's (plots/), with
 * the same look (exp_gp_begin, exp_gp_png), and drawn by the same code
 * (exp_draw_script) into validate.svg and validate.png.
 */
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
  MAX_SERIES = 8,  /* the palette's colours; more points share one colour */
  CANVAS_W = 640,
  CANVAS_H = 560,  /* the plot and a legend entry */
  KEY_LINE_PX = 18 /* each further legend entry */
};

/* One run: its simulated and real time and which point it is of. */
typedef struct {
  double sim, real, run;
  size_t series;
} dot;

typedef struct {
  dot *dots;
  size_t n;
  const char *labels[MAX_SERIES]; /* borrowed from the records */
  double points[MAX_SERIES];      /* their "point" numbers */
  size_t n_series;
  bool one_series;                /* more sweep points than colours */
  double lo, hi;                  /* the least and largest time shown */
} scatter;

static double num(const cJSON *r, const char *key) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, key);
  return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static bool is_time_run(const cJSON *r) {
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(r, "kind");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(r, "metric");
  return cJSON_IsString(k) && strcmp(k->valuestring, "run") == 0 && cJSON_IsString(m) &&
         strcmp(m->valuestring, "time_s") == 0 && isfinite(num(r, "sim")) &&
         isfinite(num(r, "real"));
}

static size_t series_of(scatter *s, const cJSON *r) {
  double point = num(r, "point");
  for (size_t i = 0; i < s->n_series; i++)
    if (s->points[i] == point) return i;
  if (s->n_series == MAX_SERIES) {
    s->one_series = true;
    return 0;
  }
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(r, "label");
  s->labels[s->n_series] = cJSON_IsString(l) ? l->valuestring : "";
  s->points[s->n_series] = point;
  return s->n_series++;
}

static bool scatter_collect(scatter *s, const cJSON *comparison) {
  *s = (scatter){.dots = calloc((size_t)cJSON_GetArraySize(comparison) + 1, sizeof *s->dots),
                 .lo = INFINITY, .hi = 0};
  if (!s->dots) return false;
  for (const cJSON *r = comparison ? comparison->child : NULL; r; r = r->next) {
    if (!is_time_run(r)) continue;
    dot *d = &s->dots[s->n++];
    *d = (dot){num(r, "sim"), num(r, "real"), num(r, "run"), series_of(s, r)};
    s->lo = fmin(s->lo, fmin(d->sim, d->real));
    s->hi = fmax(s->hi, fmax(d->sim, d->real));
  }
  if (s->one_series) s->n_series = 1;
  for (size_t i = 0; s->one_series && i < s->n; i++) s->dots[i].series = 0;
  return true;
}

static void script_comment(exp_buf *b, const char *experiment, bool one_series) {
  exp_buf_printf(b, "# Validation of experiment \"%s\", written by `pslab validate` from "
                    "validate.jsonl:\n# every run's real time_s against its simulated "
                    "time_s; on y = x the simulator was exact.\n# Redraw with `gnuplot "
                    "validate.gp` in this directory (it writes validate.svg,\n# then "
                    "validate.png).\n#\n# Data: a block per sweep point%s ($s0, $s1, ...), "
                    "a row per run:\n#   simulated time_s, real time_s (seconds), run "
                    "number.\n# The axes show them times tscale.\n",
                 experiment, one_series ? " (here one: too many points for colours)" : "");
}

/* gnuplot ticks a log axis at powers of ten only, which a range within a
 * decade or two shows as one or two numbers: ticks at 1, 2 and 5 times
 * each power of ten in [lo, hi] instead. */
static void log_tics(exp_buf *b, const char *axis, double lo, double hi) {
  static const double steps[] = {1, 2, 5};
  size_t n = 0;
  exp_buf_printf(b, "set %stics (", axis);
  for (double d = floor(log10(lo)); d <= ceil(log10(hi)); d++)
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
      double t = steps[i] * pow(10, d);
      if (t < lo || t > hi) continue;
      exp_buf_puts(b, n++ ? ", " : "");
      exp_gp_number(b, t);
    }
  exp_buf_puts(b, ")\n");
}

static void script_axes(exp_buf *b, const scatter *s, const exp_plot_axis *a, bool log) {
  exp_buf_puts(b, "set xlabel ");
  exp_buf tb = {0};
  exp_buf_printf(&tb, "simulated %s", a->label);
  char *t = exp_buf_take(&tb);
  exp_gp_string(b, t ? t : a->label);
  free(t);
  exp_buf_puts(b, "\nset ylabel ");
  tb = (exp_buf){0};
  exp_buf_printf(&tb, "real %s", a->label);
  t = exp_buf_take(&tb);
  exp_gp_string(b, t ? t : a->label);
  free(t);
  exp_buf_puts(b, "\ntscale = ");
  exp_gp_number(b, a->scale);
  /* One range on both axes, so that y = x is the diagonal of a square. */
  double lo = 0, hi = s->hi * 1.05;
  if (log) {
    double f = pow(s->hi / s->lo, 0.05);
    lo = s->lo / f;
    hi = s->hi * f;
    exp_buf_puts(b, "\nset logscale xy");
  }
  exp_buf_printf(b, "\nset xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\n", lo * a->scale,
                 hi * a->scale, lo * a->scale, hi * a->scale);
  if (log) log_tics(b, "x", lo * a->scale, hi * a->scale);
  if (log) log_tics(b, "y", lo * a->scale, hi * a->scale);
  /* The legend a line apart from x's label, so that the two do not read
   * as one. */
  exp_buf_puts(b, "set size square\nset grid\nset key below Left reverse title \"\\n\"\n");
}

static void script_data(exp_buf *b, const scatter *s) {
  for (size_t k = 0; k < s->n_series; k++) {
    exp_buf_printf(b, "$s%zu << EOD\n", k);
    for (size_t i = 0; i < s->n; i++) {
      if (s->dots[i].series != k) continue;
      exp_gp_number(b, s->dots[i].sim);
      exp_buf_puts(b, " ");
      exp_gp_number(b, s->dots[i].real);
      exp_buf_puts(b, " ");
      exp_gp_number(b, s->dots[i].run);
      exp_buf_puts(b, "\n");
    }
    exp_buf_puts(b, "EOD\n");
  }
}

static void script_plot(exp_buf *b, const scatter *s) {
  exp_buf_puts(b, "plot x with lines dashtype 2 linecolor rgb \"#777777\" linewidth 1 "
                  "title \"y = x: exact prediction\"");
  for (size_t k = 0; k < s->n_series; k++) {
    exp_buf_printf(b, ", \\\n     $s%zu using ($1*tscale):($2*tscale) with points "
                      "pointtype 7 linecolor %zu title ", k, k + 1);
    exp_gp_string(b, s->one_series ? "runs" : s->labels[k]);
  }
  exp_buf_puts(b, "\n");
}

char *exp_validate_plot_script(const cJSON *comparison, const char *experiment, char *err,
                               size_t errlen) {
  scatter s;
  if (!scatter_collect(&s, comparison)) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (s.n == 0) {
    free(s.dots);
    snprintf(err, errlen, "no run succeeded on both backends with a time_s to draw");
    return NULL;
  }
  exp_plot_axis a;
  exp_plot_axis_make(&a, "time_s", s.hi);
  bool log = s.lo > 0 && s.hi / s.lo > 10;
  int height = CANVAS_H + KEY_LINE_PX * (int)s.n_series;
  exp_buf b = {0};
  script_comment(&b, experiment, s.one_series);
  exp_gp_begin(&b, "validate", CANVAS_W, height);
  exp_buf_puts(&b, "set title ");
  exp_buf tb = {0};
  exp_buf_printf(&tb, "%s: real against simulated time, a point per run", experiment);
  char *title = exp_buf_take(&tb);
  exp_gp_string(&b, title ? title : experiment);
  free(title);
  exp_buf_puts(&b, "\n");
  script_axes(&b, &s, &a, log);
  script_data(&b, &s);
  script_plot(&b, &s);
  exp_gp_png(&b, "validate", CANVAS_W, height);
  free(s.dots);
  char *script = exp_buf_take(&b);
  if (!script) snprintf(err, errlen, "out of memory");
  return script;
}
