/*
 * experiments/plots/: what the files of the plots room share, and what
 * fidelity/ and cli/ take from it beyond the door (experiment.h has the
 * plots' scripts, their drawing and `pslab plot`): a plot's data reduced
 * from the records, its axes and layout, the pieces every gnuplot script
 * starts and ends with, and running gnuplot.
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes results/ (and through it common/); plots/ calls spec/ only
 * through the door (the plots list, JSON paths, sweep labels).
 */
#ifndef PSLAB_EXPERIMENTS_PLOTS_H
#define PSLAB_EXPERIMENTS_PLOTS_H

#include "experiments/results/results.h"

/* -------------------------------------------------------- plot data */

/* One point (or bar) of a plot: the y values of the runs of one series at
 * one x. x is a number, or the index of a category in exp_plot_data.cats. */
typedef struct {
  size_t series;
  double x;    /* per-epoch plots: the mean of xs */
  exp_stats y;
  exp_stats xs; /* per-epoch plots: x's values at this epoch (else empty) */
} exp_plot_cell;

/* Where runs whose training diverged (exp_record_diverged) would have had
 * their point, had y a value: drawn as a marker at the top of the axis. */
typedef struct {
  size_t series;
  double x;   /* as a cell's x (per-epoch plots: the mean of xs) */
  exp_stats xs; /* per-epoch plots: x's values in the epoch they diverged in */
  size_t runs;
  int epoch;  /* the earliest they diverged in, from 1 */
} exp_plot_marker;

typedef struct {
  char **series, **cats; /* labels, in first-appearance order */
  size_t n_series, n_cats;
  exp_plot_cell *cells;
  size_t n_cells;
  exp_plot_marker *diverged;
  size_t n_diverged;
  /* Quality (or loss) against training time (x epoch_end_s): where each
   * line's runs ended, x their time_s (evaluation and the end of the run
   * included) and y their final quality (or loss), so that the curve
   * reaches the time the time plots show; at most one per series, x the
   * mean of xs. */
  exp_plot_cell *ends;
  size_t n_ends;
  bool numeric;        /* every x is a number */
  run_combine combine; /* how y's values at one point combine (y's metric) */
  /* What x's values are: the plot's x, or the swept paths that label the
   * bars when x alone would mix sweep points ("policy" for x policy.type). */
  char *x_title;
  /* What tells the series apart (the legend's title): the plot's series,
   * or the swept paths that label the lines; NULL when neither. */
  char *series_title;
} exp_plot_data;

/* A cell's y: its values combined as y's metric says. */
double exp_plot_cell_y(const exp_plot_data *d, const exp_plot_cell *c);
/* Half-width of the 95% confidence interval of a cell's y, for a metric
 * whose repeats combine by their mean and a cell of 2 values or more; NAN
 * otherwise. */
double exp_plot_cell_ci95(const exp_plot_data *d, const exp_plot_cell *c);

/* Reduces run records to plot p's points (plot_data.c). */
void exp_plot_data_collect(exp_plot_data *d, const exp_plot *p,
                           const cJSON *records);
void exp_plot_data_free(exp_plot_data *d);

/* ----------------------------------------------- plot axes and layout */

/* The canvas of a plot, pixels (a bar chart's grows to fit its labels). */
enum { EXP_PLOT_WIDTH = 800, EXP_PLOT_HEIGHT = 500 };
/* The exit status of a plot script whose gnuplot cannot draw the PNG (it
 * lacks the pngcairo terminal): draw_plots.c says so. */
enum { EXP_GNUPLOT_NO_PNG = 4 };
/* Whether prog can be run: a path that is executable, or found in PATH. */
bool exp_program_exists(const char *prog);
/* Runs `prog script` in dir, its output to /dev/null (plots, `pslab trace
 * stats --svg`); what it wrote to stderr, its warnings, never reaches the
 * terminal raw: it comes back in said as one line (the first, and how many
 * other lines there were; "" when it said nothing), for the caller to
 * word. 0, or -1 with a reason in err (which ends with what it said). */
int exp_run_gnuplot(const char *prog, const char *dir, const char *script, char *said,
                    size_t saidlen, char *err, size_t errlen);

/* Pieces of every gnuplot script pslab writes (plot_script.c), so that all
 * its drawings look alike. */
/* A gnuplot double-quoted string (backslash escapes). */
void exp_gp_string(exp_buf *b, const char *s);
/* Shortest text that reads back as v (exp_format_number). */
void exp_gp_number(exp_buf *b, double v);
/* The start: UTF-8, the svg terminal of width x height pixels writing
 * "<name>.svg", the line colours (Okabe and Ito's palette). */
void exp_gp_begin(exp_buf *b, const char *name, int width, int height);
/* The end: the same plot again as "<name>.png"; a gnuplot without the
 * pngcairo terminal says so and exits with EXP_GNUPLOT_NO_PNG rather than
 * leave an old PNG in place. */
void exp_gp_png(exp_buf *b, const char *name, int width, int height);
/* Writes script as DIR/<name>.gp and, when have_prog, runs prog on it in
 * dir; the drawing counts only when both DIR/<name>.svg and .png are there
 * and not empty (draw_plots.c). Problems go to log ("pslab: plot NAME not
 * drawn: ..."), and so do gnuplot's warnings about a plot it drew, as one
 * line ("pslab: plot NAME drawn, but gnuplot warned: ..."). 0, or -1. */
int exp_draw_script(const char *name, const char *script, const char *dir,
                    const char *prog, bool have_prog, FILE *log);

/* One axis of a plot (plot_axis.c). */
typedef struct {
  char label[EXP_PATH_MAX + 64]; /* "time (ms)", "local accesses (%)", "cluster.nodes" */
  char words[EXP_PATH_MAX];      /* for a title: "time", "cluster.nodes" */
  const char *data_unit;         /* the unit of the values (the metric's), or "" */
  double scale;                  /* shown = value * scale */
} exp_plot_axis;

/* The axis showing `name`: a metric takes its words and unit from the
 * metric table, in the unit that suits max_abs, the largest absolute value
 * shown (NaN or 0: the metric's own unit); anything else (a config path) is
 * labelled by its name, scale 1. */
void exp_plot_axis_make(exp_plot_axis *a, const char *name, double max_abs);
/* A held-out quality's axis (exp_is_quality_metric) named by the measure
 * the records' workloads share: "RMSE (lower is better)", words "RMSE";
 * any other axis, or records of no one measure, as it was. */
void exp_plot_axis_quality(exp_plot_axis *a, const char *metric, const cJSON *records);

/* A plot's canvas and, for a bar chart, its category labels
 * (plot_layout.c). */
typedef struct {
  int width, height; /* canvas, pixels */
  bool upright;      /* category labels turned to read upwards */
  char **ticks;      /* each category's label as shown: wrapped at spaces */
  size_t n_ticks;
  size_t tick_lines; /* lines of the tallest label side by side (else 1) */
} exp_plot_layout;

/* The legend entries a plot has besides its series' (plot_script.c draws
 * them, plot_layout.c makes room for them). */
#define EXP_KEY_DIVERGED "diverged (loss or quality became NaN or infinite)"
#define EXP_KEY_END "the run's end (time_s, evaluation included)"

/* Lays out plot d: a bar chart's labels each wrapped to the width of its
 * slot, the canvas widened so that whole words fit, or the labels upright
 * when it would grow too wide; the canvas taller for labels of several
 * lines and for a legend of more than two rows, and wider for a legend
 * entry wider than the canvas (up to 1400 pixels), so that no entry is
 * cut. false on no memory
 * (release l with exp_plot_layout_free either way). */
bool exp_plot_layout_make(exp_plot_layout *l, const exp_plot_data *d);
void exp_plot_layout_free(exp_plot_layout *l);
/* s with '\n' in place of the spaces where lines of at most `width`
 * characters end; a longer word has a line of its own, never cut. Runs of
 * spaces become one. Caller frees; NULL on no memory. */
char *exp_wrap_words(const char *s, size_t width);

#endif
