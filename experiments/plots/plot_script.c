/*
 * Plots: the gnuplot script each plot of a spec's "plots" list becomes (the
 * list itself is parsed by spec/plot_list.c).
 *
 * A plot puts a metric (y) against a metric or a config value (x), with one
 * line per distinct value of an optional config path (series); plot_data.c
 * reduces the records to those points. A numeric x gives lines with points,
 * sorted by x; any other x (policy.type, a whole policy object) gives a
 * clustered bar chart, one cluster per x value in the order runs met them.
 * Points of several runs get error bars (their 95% confidence interval);
 * axes are labelled with their units (plot_axis.c); the canvas and the bar
 * labels are laid out to fit (plot_layout.c); the legend goes below the plot.
 *
 * The script is self-contained (its data is inline, a comment says what
 * each column is), so a user can edit and rerun it with plain gnuplot; it
 * draws <name>.svg, then the same plot as <name>.png. draw_plots.c runs it.
 */
#include "experiments/plots/plots.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- script */

void exp_gp_string(exp_buf *b, const char *s) {
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

/* How both drawings look, the svg and its PNG copy. */
#define TERMINAL_LOOK "noenhanced font \"sans,12\" background rgb \"white\""

void exp_gp_number(exp_buf *b, double v) {
  char num[40];
  exp_format_number(v, num, sizeof num);
  exp_buf_puts(b, num);
}

/* The largest |y| shown, error bars included, and the largest |x|. */
static double y_extent(const exp_plot_data *d) {
  double max = 0;
  for (size_t i = 0; i < d->n_cells + d->n_ends; i++) {
    const exp_plot_cell *c = i < d->n_cells ? &d->cells[i] : &d->ends[i - d->n_cells];
    double y = fabs(exp_plot_cell_y(d, c));
    double ci = exp_plot_cell_ci95(d, c);
    if (isfinite(ci)) y += ci;
    if (isfinite(y) && y > max) max = y;
  }
  return max;
}

static double x_extent(const exp_plot_data *d) {
  double max = 0;
  for (size_t i = 0; d->numeric && i < d->n_cells; i++)
    if (fabs(d->cells[i].x) > max) max = fabs(d->cells[i].x);
  for (size_t i = 0; i < d->n_ends; i++)
    if (fabs(d->ends[i].x) > max) max = fabs(d->ends[i].x);
  return max;
}

/* The y axis: from 0 (times, counts, shares), or, for a quality or a loss,
 * from the data with a margin each side, since what tells their points
 * apart is in the last digits (RMSE 0.773 against 0.788); 0 then only when
 * the margin would cross it. top: where the markers of diverged runs sit,
 * a little above the highest point, so that the axis ends there. */
typedef struct {
  bool fit;      /* the range is [lo, hi], from the data */
  double lo, hi; /* in the metric's unit */
  double top;
} y_range;

static bool fits_data(const exp_plot *p) {
  return !p->logy && !p->per_server &&
         (exp_is_quality_metric(p->y) || strcmp(p->y, "loss") == 0 ||
          strcmp(p->y, "epoch_loss") == 0);
}

/* The lowest and highest y shown, error bars included; false for none. */
static bool y_bounds(const exp_plot_data *d, double *lo, double *hi) {
  *lo = INFINITY;
  *hi = -INFINITY;
  for (size_t i = 0; i < d->n_cells + d->n_ends; i++) {
    const exp_plot_cell *c = i < d->n_cells ? &d->cells[i] : &d->ends[i - d->n_cells];
    double y = exp_plot_cell_y(d, c), ci = exp_plot_cell_ci95(d, c);
    if (!isfinite(y)) continue;
    if (!isfinite(ci)) ci = 0;
    *lo = fmin(*lo, y - ci);
    *hi = fmax(*hi, y + ci);
  }
  return *lo <= *hi;
}

static y_range y_range_of(const exp_plot_data *d, const exp_plot *p) {
  double most = y_extent(d), lo, hi;
  y_range r = {.top = most > 0 ? most * (p->logy ? 1.5 : 1.08) : 1};
  if (!fits_data(p) || !y_bounds(d, &lo, &hi)) return r;
  double span = hi - lo;
  if (!(span > 0)) span = fabs(hi) > 0 ? fabs(hi) / 10 : 1; /* one value: a range around it */
  r.fit = true;
  r.top = hi + 0.08 * span;
  r.lo = lo - 0.05 * span;
  r.hi = (d->n_diverged ? r.top : hi) + 0.05 * span;
  if (lo >= 0 && r.lo < 0) r.lo = 0;
  return r;
}

/* Whether some point has an interval to draw (error bars). */
static bool has_intervals(const exp_plot_data *d) {
  for (size_t i = 0; i < d->n_cells; i++)
    if (isfinite(exp_plot_cell_ci95(d, &d->cells[i]))) return true;
  return false;
}

/* What the data blocks hold, for whoever edits the script. */
static void script_comment(exp_buf *b, const exp_plot *p, const char *experiment,
                           const exp_plot_data *d, const exp_plot_axis *ya) {
  static const char *const how[] = {[RUN_COMBINE_MEAN] = "the mean of",
                                    [RUN_COMBINE_MAX] = "the largest",
                                    [RUN_COMBINE_SUM] = "the sum of"};
  exp_buf_printf(b, "# Plot \"%s\" of experiment \"%s\", written by pslab from "
                    "runs.jsonl.\n# Redraw with `gnuplot %s.gp` in this directory "
                    "(it writes %s.svg, then %s.png),\n# or with `pslab plot DIR`.\n#\n",
                 p->name, experiment, p->name, p->name, p->name);
  if (d->numeric)
    exp_buf_puts(b, "# Data: a block per line ($s0, $s1, ...), a row per point: "
                    "x, y, ci95, runs.\n");
  else
    exp_buf_puts(b, "# Data: a row per category: its label, then y, ci95, runs "
                    "for each series.\n");
  bool share = strcmp(ya->data_unit, "share") == 0;
  exp_buf_printf(b, "#   y     %s %s over the runs at that point%s%s\n", how[d->combine],
                 p->y, share ? ", a share from 0 to 1" : *ya->data_unit ? ", in " : "",
                 share ? "" : ya->data_unit);
  if (d->combine == RUN_COMBINE_MEAN)
    exp_buf_puts(b, "#   ci95  half-width of the 95% confidence interval of that mean "
                    "(Student's t);\n#         NaN with fewer than 2 runs\n");
  else
    exp_buf_puts(b, "#   ci95  NaN: y is not a mean\n");
  if (d->n_diverged)
    exp_buf_puts(b, "# $diverged: a row per place where runs diverged (their loss or quality "
                    "became\n# NaN or infinite, so y has no value): x, a y at the top of the "
                    "axis, a label.\n");
  if (d->n_ends)
    exp_buf_puts(b, "# $ends: a row per line: its last epoch's x and y, then where its runs "
                    "ended: time_s\n# (evaluation and the run's end included) and the final "
                    "y, and the line type.\n");
  exp_buf_printf(b, "#   runs  how many runs gave a value\n# The y axis shows y * "
                    "yscale (%s).%s\n", ya->label,
                 d->numeric ? "" : " The x axis shows the labels of `set xtics`, "
                                   "wrapped to fit.");
}

static void script_title(exp_buf *b, const exp_plot *p, const char *experiment,
                         const exp_plot_axis *xa, const exp_plot_axis *ya) {
  exp_buf_puts(b, "set title ");
  if (p->title) {
    exp_gp_string(b, p->title);
  } else {
    exp_buf tb = {0};
    exp_buf_printf(&tb, "%s: %s by %s", experiment, ya->words, xa->words);
    char *t = exp_buf_take(&tb);
    exp_gp_string(b, t ? t : p->y);
    free(t);
  }
  exp_buf_puts(b, "\n");
}

/* The legend below the plot, where it hides no data, its title a line
 * apart from x's label so that the two do not read as one; none for one
 * series. */
static void script_key(exp_buf *b, const exp_plot_data *d) {
  if (d->n_series < 2 && !d->n_diverged && !d->n_ends) {
    exp_buf_puts(b, "unset key\n");
    return;
  }
  exp_buf_puts(b, "set key below horizontal Left reverse title ");
  exp_buf tb = {0};
  exp_buf_printf(&tb, "\n%s", d->series_title ? d->series_title : "");
  char *t = exp_buf_take(&tb);
  exp_gp_string(b, t ? t : "");
  free(t);
  exp_buf_puts(b, "\n");
}

/* Okabe and Ito's palette, told apart also by readers with colour-vision
 * deficiency; its yellow, faint on white, comes last. Lines 2 px wide, so
 * they survive a paper's column width. Past its 8 colours, the colours
 * come again with another dash pattern and point shape (line types 9-16
 * dashed with squares, 17-24 dash-dotted with triangles, 25-32
 * dash-dot-dotted with diamonds), so that 32 lines all differ; bars past
 * the 8th take a hatch (bar_fill). Dash type 3 (dotted) is left for the
 * runs' ends. */
enum { PALETTE_COLOURS = 8, PALETTE_STYLES = 4 };
static const int dash_of_style[PALETTE_STYLES] = {1, 2, 4, 5};
static const int point_of_style[PALETTE_STYLES] = {7, 5, 9, 13};
static const int hatch_of_style[PALETTE_STYLES] = {0, 4, 5, 2};

static void script_palette(exp_buf *b) {
  static const char *const colours[PALETTE_COLOURS] = {
      "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"};
  for (size_t i = 0; i < PALETTE_COLOURS * PALETTE_STYLES; i++)
    exp_buf_printf(b, "set linetype %zu linecolor rgb \"%s\" linewidth 2 dashtype %d "
                      "pointtype %d pointsize 1.2\n",
                   i + 1, colours[i % PALETTE_COLOURS], dash_of_style[i / PALETTE_COLOURS],
                   point_of_style[i / PALETTE_COLOURS]);
  exp_buf_printf(b, "set linetype cycle %d\n", PALETTE_COLOURS * PALETTE_STYLES);
}

/* The fill of series s's bars: solid for the first 8 colours, then a hatch
 * of the same colours. */
static void bar_fill(exp_buf *b, size_t s) {
  int style = hatch_of_style[(s / PALETTE_COLOURS) % PALETTE_STYLES];
  exp_buf_printf(b, " linetype %zu", s + 1);
  if (style) exp_buf_printf(b, " fillstyle pattern %d border", style);
}

void exp_gp_begin(exp_buf *b, const char *name, int width, int height) {
  exp_buf_printf(b, "set encoding utf8\nset terminal svg size %d,%d dynamic %s\n"
                    "set output \"%s.svg\"\n", width, height, TERMINAL_LOOK, name);
  script_palette(b);
}

static void script_header(exp_buf *b, const exp_plot *p, const char *experiment,
                          const exp_plot_data *d, const exp_plot_axis *xa,
                          const exp_plot_axis *ya, const exp_plot_layout *l,
                          const y_range *yr) {
  exp_gp_begin(b, p->name, l->width, l->height);
  script_title(b, p, experiment, xa, ya);
  exp_buf_puts(b, "set xlabel ");
  exp_gp_string(b, xa->label);
  /* gnuplot leaves room under the axis for one line of labels only. */
  if (l->tick_lines > 1) exp_buf_printf(b, " offset 0,-%zu", l->tick_lines - 1);
  exp_buf_puts(b, "\nset ylabel ");
  exp_gp_string(b, ya->label);
  exp_buf_puts(b, "\nyscale = ");
  exp_gp_number(b, ya->scale);
  if (d->numeric) {
    exp_buf_puts(b, "\nxscale = ");
    exp_gp_number(b, xa->scale);
  }
  exp_buf_puts(b, d->numeric ? "\nset grid\n" : "\nset grid ytics\n");
  script_key(b, d);
  if (yr->fit) {
    exp_buf_puts(b, "# y from the data with a margin, not from 0: a quality or a loss\n"
                    "set yrange [");
    exp_gp_number(b, yr->lo * ya->scale);
    exp_buf_puts(b, ":");
    exp_gp_number(b, yr->hi * ya->scale);
    exp_buf_puts(b, "]\n");
  } else if (!p->logy) { /* all zero: a range gnuplot need not find empty */
    exp_buf_puts(b, y_extent(d) > 0 || d->n_diverged ? "set yrange [0:*]\n" : "set yrange [0:1]\n");
  }
  if (p->logx && d->numeric) exp_buf_puts(b, "set logscale x\n");
  if (p->logx && !d->numeric) exp_buf_puts(b, "# logx ignored: x is not numeric\n");
  if (p->logy) exp_buf_puts(b, "set logscale y\n");
}

/* One value of a cell and its interval and count, as data columns. */
static void cell_columns(exp_buf *b, const exp_plot_data *d, const exp_plot_cell *c) {
  if (!c) {
    exp_buf_puts(b, " NaN NaN 0");
    return;
  }
  exp_buf_puts(b, " ");
  exp_gp_number(b, exp_plot_cell_y(d, c));
  exp_buf_puts(b, " ");
  double ci = exp_plot_cell_ci95(d, c);
  if (isfinite(ci))
    exp_gp_number(b, ci);
  else
    exp_buf_puts(b, "NaN");
  exp_buf_printf(b, " %zu", c->y.n);
}

static int by_series_then_x(const void *a, const void *b) {
  const exp_plot_cell *x = a, *y = b;
  if (x->series != y->series) return x->series < y->series ? -1 : 1;
  return (x->x > y->x) - (x->x < y->x);
}

/* On a log x axis gnuplot ticks only powers of ten (nodes 1, 2, 4, 8 get
 * "1" and "10"): ticks at the values swept instead, when they are few, and
 * the axis no wider than they need. */
static void script_log_x_tics(exp_buf *b, const exp_plot_data *d, double scale) {
  enum { MAX_TICS = 12 };
  double xs[MAX_TICS];
  size_t n = 0;
  for (size_t i = 0; i < d->n_cells; i++) {
    double x = d->cells[i].x * scale;
    bool seen = false;
    for (size_t k = 0; k < n && !seen; k++) seen = xs[k] == x;
    if (seen) continue;
    if (n == MAX_TICS || !(x > 0)) return;
    xs[n++] = x;
  }
  double lo = xs[0], hi = xs[0];
  exp_buf_puts(b, "set xtics (");
  for (size_t k = 0; k < n; k++) {
    exp_buf_puts(b, k ? ", " : "");
    exp_gp_number(b, xs[k]);
    lo = xs[k] < lo ? xs[k] : lo;
    hi = xs[k] > hi ? xs[k] : hi;
  }
  exp_buf_puts(b, ")\n");
  if (hi > lo) { /* a margin of 5% of the decades shown, each side */
    double f = pow(hi / lo, 0.05);
    exp_buf_printf(b, "set xrange [%.3g:%.3g]\n", lo / f, hi * f);
  }
}

/* Whether series s has a point to draw. */
static bool series_drawn(const exp_plot_data *d, size_t s) {
  for (size_t i = 0; i < d->n_cells; i++)
    if (d->cells[i].series == s) return true;
  return false;
}

/* The runs that diverged, as a block $diverged: a row per marker, x, y at
 * the top of the axis (a little above the highest point, so that the axis
 * ends there), its label, and its series' line type (its colour). On a bar
 * chart x is the middle of the marker's bar within its cluster. In
 * order of x (plot_data.c sorts them). With
 * several series the colour tells whose, and the label only when. */
static void script_diverged_data(exp_buf *b, const exp_plot_data *d, double top) {
  exp_buf_puts(b, "$diverged << EOD\n");
  for (size_t i = 0; i < d->n_diverged; i++) {
    const exp_plot_marker *m = &d->diverged[i];
    double n = (double)d->n_series;
    double x = d->numeric ? m->x : m->x + ((double)m->series - (n - 1) / 2) / (n + 1);
    char label[64];
    int len = snprintf(label, sizeof label, "%sepoch %d", d->n_series > 1 ? "" : "diverged @ ",
                       m->epoch);
    if (m->runs > 1) snprintf(label + len, sizeof label - (size_t)len, " (%zu runs)", m->runs);
    exp_gp_number(b, x);
    exp_buf_puts(b, " ");
    exp_gp_number(b, top);
    exp_buf_puts(b, " ");
    gp_data_label(b, label);
    exp_buf_printf(b, " %zu\n", m->series + 1);
  }
  exp_buf_puts(b, "EOD\n");
}

/* Each line's end (exp_plot_data.ends) as a block $ends: from the line's
 * last point (cells sorted by series, then x) to the end, and its series'
 * line type. */
static void script_ends_data(exp_buf *b, const exp_plot_data *d) {
  exp_buf_puts(b, "$ends << EOD\n");
  for (size_t i = 0; i < d->n_ends; i++) {
    const exp_plot_cell *e = &d->ends[i], *last = NULL;
    for (size_t k = 0; k < d->n_cells; k++)
      if (d->cells[k].series == e->series) last = &d->cells[k];
    if (!last) continue;
    double v[] = {last->x, exp_plot_cell_y(d, last), e->x, exp_plot_cell_y(d, e)};
    for (size_t k = 0; k < 4; k++) {
      exp_gp_number(b, v[k]);
      exp_buf_puts(b, " ");
    }
    exp_buf_printf(b, "%zu\n", e->series + 1);
  }
  exp_buf_puts(b, "EOD\n");
}

/* The plot clauses of the ends: a dotted line from the last epoch to the
 * end, an open circle at the end, one legend entry. */
static void script_ends_plot(exp_buf *b, const exp_plot_data *d, const char *sep) {
  if (!d->n_ends) return;
  exp_buf_printf(b, "%s$ends using ($1*xscale):($2*yscale):(($3-$1)*xscale):(($4-$2)*yscale):5 "
                    "with vectors nohead dashtype 3 linecolor variable notitle, \\\n"
                    "     $ends using ($3*xscale):($4*yscale):5 with points pointtype 6 "
                    "linecolor variable title \"%s\"",
                 sep, EXP_KEY_END);
}

/* The plot clauses of the markers (after the others: sep before them). */
static void script_diverged_plot(exp_buf *b, const exp_plot_data *d, const char *sep) {
  if (!d->n_diverged) return;
  const char *x = d->numeric ? "($1*xscale)" : "1";
  exp_buf_printf(b, "%s$diverged using %s:($2*yscale):4 with points pointtype 2 pointsize 2 "
                    "linewidth 2 linecolor variable title \"%s\"", sep, x, EXP_KEY_DIVERGED);
  /* Labels above and below the crosses in turn (in order of x), so that
   * neighbours do not overwrite each other. */
  for (size_t k = 0; k < 2 && k < d->n_diverged; k++)
    exp_buf_printf(b, ", \\\n     $diverged every 2::%zu using %s:($2*yscale):3:4 with labels "
                      "offset 0,%d textcolor variable notitle", k, x, k ? -1 : 1);
}

/* Whether every point, end and marker has the same x (*x): gnuplot would
 * find an empty x range, warn and pick one itself. */
static bool one_x(const exp_plot_data *d, double *x) {
  size_t n = d->n_cells + d->n_ends + d->n_diverged;
  for (size_t i = 0; i < n; i++) {
    double v = i < d->n_cells ? d->cells[i].x
               : i < d->n_cells + d->n_ends ? d->ends[i - d->n_cells].x
                                            : d->diverged[i - d->n_cells - d->n_ends].x;
    if (i == 0) *x = v;
    else if (v != *x) return false;
  }
  return n > 0;
}

/* A single x gets a range around it, a tenth of itself each side (1 about
 * 0; a factor of 1.25 on a log axis). */
static void script_one_x(exp_buf *b, double x, bool logx) {
  double lo = logx ? x / 1.25 : x == 0 ? -1 : x - fabs(x) / 10;
  double hi = logx ? x * 1.25 : x == 0 ? 1 : x + fabs(x) / 10;
  exp_buf_puts(b, "set xrange [");
  exp_gp_number(b, lo);
  exp_buf_puts(b, ":");
  exp_gp_number(b, hi);
  exp_buf_puts(b, "]\n");
}

static void script_lines(exp_buf *b, exp_plot_data *d, const exp_plot *p,
                         double xscale, bool intervals, double top) {
  if (d->n_cells) qsort(d->cells, d->n_cells, sizeof *d->cells, by_series_then_x);
  double x;
  if (p->logx)
    script_log_x_tics(b, d, xscale);
  if (one_x(d, &x) && (!p->logx || x > 0))
    script_one_x(b, x * xscale, p->logx);
  else if (!p->logx) /* the data's own range and a margin, so no point sits on the frame */
    exp_buf_puts(b, "set autoscale xfix\nset offsets graph 0.04, graph 0.04, 0, 0\n");
  for (size_t s = 0; s < d->n_series; s++) {
    if (!series_drawn(d, s)) continue;
    exp_buf_printf(b, "$s%zu << EOD\n", s);
    for (size_t i = 0; i < d->n_cells; i++) {
      if (d->cells[i].series != s) continue;
      exp_gp_number(b, d->cells[i].x);
      cell_columns(b, d, &d->cells[i]);
      exp_buf_puts(b, "\n");
    }
    exp_buf_puts(b, "EOD\n");
  }
  if (d->n_diverged) script_diverged_data(b, d, top);
  if (d->n_ends) script_ends_data(b, d);
  exp_buf_puts(b, "plot ");
  const char *sep = "";
  for (size_t s = 0; s < d->n_series; s++) {
    if (!series_drawn(d, s)) { /* its runs all diverged: its legend entry alone */
      exp_buf_printf(b, "%sNaN with linespoints linetype %zu title ", sep, s + 1);
      exp_gp_string(b, d->series[s]);
      sep = ", \\\n     ";
      continue;
    }
    /* A time series (per_server) has many points: a line alone reads best. */
    exp_buf_printf(b, "%s$s%zu using ($1*xscale):($2*yscale) with %s linetype %zu %stitle ",
                   sep, s, p->per_server ? "lines" : "linespoints", s + 1,
                   p->per_server ? "linewidth 1.5 " : "");
    exp_gp_string(b, d->series[s]);
    /* Bars apart from the line, so that a point of one run keeps its line. */
    if (intervals)
      exp_buf_printf(b, ", \\\n     $s%zu using ($1*xscale):($2*yscale):($3*yscale) "
                        "with yerrorbars linetype %zu dashtype 1 notitle", s, s + 1);
    sep = ", \\\n     ";
  }
  script_ends_plot(b, d, sep);
  script_diverged_plot(b, d, sep);
  exp_buf_puts(b, "\n");
}

static const exp_plot_cell *find_cell(const exp_plot_data *d, size_t series, size_t cat) {
  for (size_t i = 0; i < d->n_cells; i++)
    if (d->cells[i].series == series && d->cells[i].x == (double)cat)
      return &d->cells[i];
  return NULL;
}

/* Category labels as x tics: given before the data, gnuplot makes room for
 * all their lines. */
static void script_bar_tics(exp_buf *b, const exp_plot_layout *l) {
  exp_buf_printf(b, "set xtics nomirror %s(", l->upright ? "rotate by 90 right " : "");
  for (size_t c = 0; c < l->n_ticks; c++) {
    exp_buf_puts(b, c ? ", \\\n  " : "");
    exp_gp_string(b, l->ticks[c]);
    exp_buf_printf(b, " %zu", c);
  }
  exp_buf_printf(b, ")\nset xrange [-0.5:%zu.5]\n", l->n_ticks ? l->n_ticks - 1 : 0);
}

static void script_bars(exp_buf *b, const exp_plot_data *d, const exp_plot_layout *l,
                        bool intervals, double top) {
  exp_buf_puts(b, "$data << EOD\n");
  for (size_t c = 0; c < d->n_cats; c++) {
    gp_data_label(b, d->cats[c]);
    for (size_t s = 0; s < d->n_series; s++) cell_columns(b, d, find_cell(d, s, c));
    exp_buf_puts(b, "\n");
  }
  exp_buf_printf(b, "EOD\nset style data histogram\nset style histogram %s gap 1\n"
                    "set style fill solid 0.85 border -1\n",
                 intervals ? "errorbars linewidth 1" : "clustered");
  script_bar_tics(b, l);
  if (d->n_diverged) script_diverged_data(b, d, top);
  exp_buf_puts(b, "plot ");
  for (size_t s = 0; s < d->n_series; s++) {
    size_t y = 2 + 3 * s;
    exp_buf_printf(b, "%s$data using ($%zu*yscale)", s ? ", \\\n     " : "", y);
    if (intervals) exp_buf_printf(b, ":($%zu*yscale)", y + 1);
    bar_fill(b, s);
    exp_buf_puts(b, " title ");
    exp_gp_string(b, d->series[s]);
  }
  script_diverged_plot(b, d, d->n_series ? ", \\\n     " : "");
  exp_buf_puts(b, "\n");
}

void exp_gp_png(exp_buf *b, const char *name, int width, int height) {
  exp_buf_printf(b, "\n# The same plot as a PNG, for documents and READMEs.\n"
                    "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") == 0) {\n"
                    "  print \"pslab: this gnuplot has no pngcairo terminal, so %s.png "
                    "is not drawn (Debian's gnuplot-nox has it)\"\n"
                    "  exit status %d\n}\n"
                    "set terminal pngcairo size %d,%d %s\nset output \"%s.png\"\n"
                    "replot\nunset output\n",
                 name, EXP_GNUPLOT_NO_PNG, width, height, TERMINAL_LOOK, name);
}

char *exp_plot_script(const exp_plot *p, const char *experiment,
                      const cJSON *records, char *err, size_t errlen) {
  exp_plot_data d = {0};
  exp_plot_layout l = {0};
  exp_plot_axis xa, ya;
  exp_plot_data_collect(&d, p, records);
  if (d.n_cells == 0 && d.n_diverged == 0) {
    snprintf(err, errlen, "no successful run has a value for both x (\"%s\") and y (\"%s\")",
             p->x, p->y);
    exp_plot_data_free(&d);
    return NULL;
  }
  exp_plot_axis_make(&ya, p->per_server ? "keys served per second" : p->y, y_extent(&d));
  exp_plot_axis_quality(&ya, p->y, records);
  exp_plot_axis_make(&xa, d.numeric ? p->x : d.x_title ? d.x_title : p->x, x_extent(&d));
  bool intervals = has_intervals(&d);
  y_range yr = y_range_of(&d, p);
  exp_buf b = {0};
  if (exp_plot_layout_make(&l, &d)) {
    script_comment(&b, p, experiment, &d, &ya);
    script_header(&b, p, experiment, &d, &xa, &ya, &l, &yr);
    if (d.numeric)
      script_lines(&b, &d, p, xa.scale, intervals, yr.top);
    else
      script_bars(&b, &d, &l, intervals, yr.top);
    exp_gp_png(&b, p->name, l.width, l.height);
  } else {
    b.failed = true;
  }
  exp_plot_layout_free(&l);
  exp_plot_data_free(&d);
  char *s = exp_buf_take(&b);
  if (!s) snprintf(err, errlen, "out of memory");
  return s;
}
