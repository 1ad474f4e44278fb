/*
 * experiments/internal.h: helpers shared by the files of this room (string
 * buffers, number formatting, files, the wording of validation messages).
 * Not a door: nothing outside experiments/ includes it.
 */
#ifndef PSLAB_EXPERIMENTS_INTERNAL_H
#define PSLAB_EXPERIMENTS_INTERNAL_H

#include "experiments/experiment.h"
#include "run/run.h"

#include <cjson/cJSON.h>

/* Keys in a JSON path are rendered into buffers of this size (longer paths
 * are cut in messages, never overflow). */
#define EXP_PATH_MAX 512
/* Integers in specs stay exact as JSON numbers (doubles). */
#define EXP_INT_MAX 9007199254740991.0 /* 2^53 - 1 */

/* ------------------------------------------------------ string buffer */

/* A growing string. After an allocation failure it stays failed and
 * exp_buf_take returns NULL. */
typedef struct {
  char *data;
  size_t len, cap;
  bool failed;
} exp_buf;

void exp_buf_printf(exp_buf *b, const char *fmt, ...) EXP_PRINTF(2, 3);
void exp_buf_puts(exp_buf *b, const char *s);
/* The string (caller frees), or NULL if an allocation failed. */
char *exp_buf_take(exp_buf *b);
void exp_buf_free(exp_buf *b);

/* ------------------------------------------------------------ values */

/* Shortest text that reads back as v ("3", "0.1", "1e+20"). */
void exp_format_number(double v, char *buf, size_t n);
/* A short human label: strings bare, numbers formatted, objects as
 * {k=v,...}, lists as [a,b]. Caller frees; NULL on no memory. */
char *exp_value_label(const cJSON *v);
/* Members (key and value) that every one of values[0..n) has, as a new
 * object; NULL when there are fewer than 2 values, one is not an object, or
 * they share nothing. */
cJSON *exp_shared_members(const cJSON *const *values, size_t n);
/* exp_value_label without v's members that are in `shared` (NULL: none),
 * so that swept objects are told apart by what differs: {type=relocate}
 * rather than {type=relocate,partition=range}. Caller frees. */
char *exp_value_label_except(const cJSON *v, const cJSON *shared);
/* Readable labels for values[0..n) taken together (labels.c), telling them
 * apart by what differs: an object is flattened to its leaves, written
 * "key=value" with spaces between; leaves every value has alike are left
 * out, and so is the path prefix all differing leaves share
 * ({sampling={scheme=pool,reuse=64}} among other schemes: "pool reuse=64"
 * with lead "sampling.scheme"). The leaf at `lead` (a dotted path inside
 * the objects, or NULL) comes first as its bare value: "relocate
 * lookahead=100" with lead "type". An object nothing sets apart is written
 * whole; other values as exp_value_label writes them. Fills out[0..n) (the
 * caller frees each); false on no memory, then out holds NULLs. */
bool exp_value_labels_varying(const cJSON *const *values, size_t n, const char *lead,
                              char **out);
/* What was found, for "found ..." in messages: -3, "abc", an object,
 * nothing (the key is missing). */
void exp_describe(const cJSON *v, char *buf, size_t n);
/* A metric's value as one number: the number itself, or the mean of a
 * list (a per-epoch metric); false when v holds no number. */
bool exp_metric_value(const cJSON *v, double *out);

/* --------------------------------------------------------- statistics */

/* Values of one metric over the repeats of a sweep point (stats.c). Start
 * from {0}. */
typedef struct {
  size_t n;
  double mean, m2; /* Welford's running mean and sum of squared deviations */
  double sum, min, max;
} exp_stats;

void exp_stats_add(exp_stats *s, double x);
/* Sample standard deviation; NAN with fewer than 2 values. */
double exp_stats_sd(const exp_stats *s);
/* Half-width of the 95% confidence interval of the mean (Student's t with
 * n - 1 degrees of freedom); NAN with fewer than 2 values. */
double exp_stats_ci95(const exp_stats *s);
/* The values combined as the metric's entry says (mean, max or sum); NAN
 * when there are none. */
double exp_stats_combined(const exp_stats *s, run_combine how);

/* ----------------------------------------------------------- paths */

void exp_child_path(char *buf, size_t n, const char *parent, const char *key);
void exp_index_path(char *buf, size_t n, const char *parent, size_t i);

/* ------------------------------------------------------- validation */

/* Adds "<path>: expected <what>, found <found described>". */
void exp_expect(exp_errors *e, const char *path, const char *what,
                const cJSON *found);
/* Each key of obj must be in known (NULL-terminated) and appear once. */
void exp_check_keys(exp_errors *e, const cJSON *obj, const char *path,
                    const char *const *known);

/* Member checks: key of obj (at path). Each returns true when the member is
 * valid, or absent and not required; otherwise adds a message and returns
 * false. *out is written only when the member is present and valid. */
bool exp_get_int(exp_errors *e, const cJSON *obj, const char *path,
                 const char *key, double min, double max, bool required,
                 double *out);
bool exp_get_number(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, double min, bool min_exclusive,
                    bool required, double *out);
bool exp_get_string(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const char **out);
bool exp_get_bool(exp_errors *e, const cJSON *obj, const char *path,
                  const char *key, bool *out);
bool exp_get_choice(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, const char *const *choices,
                    const char **out);
bool exp_get_object(exp_errors *e, const cJSON *obj, const char *path,
                    const char *key, bool required, const cJSON **out);

typedef enum {
  EXP_QTY_FLOPS,     /* flop/s, > 0 */
  EXP_QTY_BANDWIDTH, /* bytes/s, > 0 */
  EXP_QTY_DURATION   /* seconds, >= 0 */
} exp_quantity;
/* A number, or a string with a unit (units.c). */
bool exp_get_quantity(exp_errors *e, const cJSON *obj, const char *path,
                      const char *key, exp_quantity q, double *out);

/* Whether s is a non-empty [A-Za-z0-9_.-]+ other than "." and "..". */
bool exp_is_file_stem(const char *s);

/* -------------------------------------------------------- plot data */

/* One point (or bar) of a plot: the y values of the runs of one series at
 * one x. x is a number, or the index of a category in exp_plot_data.cats. */
typedef struct {
  size_t series;
  double x;
  exp_stats y;
} exp_plot_cell;

typedef struct {
  char **series, **cats; /* labels, in first-appearance order */
  size_t n_series, n_cats;
  exp_plot_cell *cells;
  size_t n_cells;
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

/* Reduces run records to plot p's points (plotdata.c). */
void exp_plot_data_collect(exp_plot_data *d, const exp_plot *p,
                           const cJSON *records);
void exp_plot_data_free(exp_plot_data *d);

/* ----------------------------------------------- plot axes and layout */

/* The canvas of a plot, pixels (a bar chart's grows to fit its labels). */
enum { EXP_PLOT_WIDTH = 800, EXP_PLOT_HEIGHT = 500 };
/* The exit status of a plot script whose gnuplot cannot draw the PNG (it
 * lacks the pngcairo terminal): draw.c says so. */
enum { EXP_GNUPLOT_NO_PNG = 4 };

/* One axis of a plot (plotaxis.c). */
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

/* A plot's canvas and, for a bar chart, its category labels (plotlayout.c). */
typedef struct {
  int width, height; /* canvas, pixels */
  bool upright;      /* category labels turned to read upwards */
  char **ticks;      /* each category's label as shown: wrapped at spaces */
  size_t n_ticks;
  size_t tick_lines; /* lines of the tallest label side by side (else 1) */
} exp_plot_layout;

/* Lays out plot d: a bar chart's labels each wrapped to the width of its
 * slot, the canvas widened so that whole words fit, or the labels upright
 * when it would grow too wide; the canvas taller for labels of several
 * lines and for a legend of more than two rows. false on no memory
 * (release l with exp_plot_layout_free either way). */
bool exp_plot_layout_make(exp_plot_layout *l, const exp_plot_data *d);
void exp_plot_layout_free(exp_plot_layout *l);
/* s with '\n' in place of the spaces where lines of at most `width`
 * characters end; a longer word has a line of its own, never cut. Runs of
 * spaces become one. Caller frees; NULL on no memory. */
char *exp_wrap_words(const char *s, size_t width);

/* ------------------------------------------------------------ files */

/* The whole file, NUL-terminated; NULL with "<path>: <reason>" in err. */
char *exp_read_file(const char *path, size_t *len, char *err, size_t errlen);
/* mkdir -p. 0, or -1 with a message. */
int exp_mkdir_p(const char *dir, char *err, size_t errlen);
/* Writes through "<path>.tmp" renamed over path. 0, or -1 with a message. */
int exp_write_file_atomic(const char *path, const char *data, size_t len,
                          char *err, size_t errlen);
/* dir + "/" + name; caller frees. */
char *exp_join_path(const char *dir, const char *name);

#endif
