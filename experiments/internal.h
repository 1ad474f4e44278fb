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
/* Appends n bytes of data. */
void exp_buf_add(exp_buf *b, const char *data, size_t n);
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


/* v in engineering form with unit (a run_metric's unit), 3 significant
 * digits, never an exponent (quantity.c): "s" with prefixes down to p and
 * up ("217 ms", "3.1 us"); "B" and others with prefixes up ("278 MB", "147 k
 * steps/s"); "" a plain number ("720 k", "0.75"); "share" a percentage
 * ("11.9 %"). NaN: "-". */
void exp_format_quantity(double v, const char *unit, char *buf, size_t n);
/* "mean ± half" in the prefix of the larger of the two, half to 2
 * significant digits: "217 ± 3.1 ms". A NaN half: exp_format_quantity. */
void exp_format_interval(double mean, double half, const char *unit, char *buf,
                         size_t n);

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

/* ---------------------------------------------------------------- CSV */

/* One field as RFC 4180 quotes it (in double quotes, quotes doubled, when
 * it holds a comma, quote or newline) (csv.c). */
void exp_csv_field(FILE *f, const char *s);
/* A JSON value as a field: strings bare, numbers exact (exp_format_number),
 * lists and objects as compact JSON; nothing for NULL or null. */
void exp_csv_value(FILE *f, const cJSON *v);

/* ----------------------------------------------- points and metrics */

/* Metric-table entries (borrowed from the table). */
typedef struct {
  const run_metric **items;
  size_t count;
} exp_metric_list;

/* summary.csv's metrics (see exp_summary_csv), in metric-table order. False
 * on no memory. Release with exp_metric_list_free. */
bool exp_summary_metric_list(const exp_results *r, exp_metric_list *out);
/* The table's: --metrics' in their order, or those flagged RUN_SHOW_TABLE
 * and the plots', in metric-table order, that some record has. */
bool exp_table_metric_list(const exp_results *r, exp_metric_list *out);
void exp_metric_list_free(exp_metric_list *l);

/* The sweep paths of records, in first-appearance order, *count of them
 * (points.c): a NULL-terminated array the caller frees; the names are
 * borrowed from records. NULL on no memory. */
const char **exp_sweep_paths(const cJSON *records, size_t *count);

/* The records of one sweep point (points.c). */
typedef struct {
  const cJSON *sweep;  /* its sweep values (its first record's); borrowed */
  size_t runs, ok;     /* its records, and the successful ones */
  exp_stats *stats;    /* per metric collected: over the successful runs */
} exp_point;

typedef struct {
  exp_point *items;    /* in order of first appearance */
  size_t count;
} exp_points;

/* Groups records by sweep point (equal "sweep" objects) and adds each
 * successful record's value of every one of metrics (a list metric by its
 * mean, exp_metric_value) to the point's stats. False on no memory (p is
 * then empty). Release with exp_points_free. */
bool exp_points_collect(exp_points *p, const cJSON *records,
                        const exp_metric_list *metrics);
void exp_points_free(exp_points *p);

/* ------------------------------------------------------------- grid */

/* A text table (grid.c): row 0 the header, then a rule, then the rows; the
 * first label_cols columns left-aligned, their cells wrapped at spaces onto
 * more lines of their row, indented by two, when longer than wrap
 * characters (never inside a word: a longer word has a line of its own),
 * the others right-aligned on the row's first line. */
typedef struct {
  char **cells;        /* rows * cols, owned; NULL: empty */
  size_t rows, cols, label_cols, wrap;
} exp_grid;

/* False on no memory. Release with exp_grid_free either way. */
bool exp_grid_init(exp_grid *g, size_t rows, size_t cols, size_t label_cols,
                   size_t wrap);
/* Copies text into the cell. False on no memory. */
bool exp_grid_set(exp_grid *g, size_t row, size_t col, const char *text);
void exp_grid_print(const exp_grid *g, FILE *f);
void exp_grid_free(exp_grid *g);

/* ------------------------------------------------ sweep point labels */

/* Label cells longer than this wrap onto more lines of their row. */
enum { EXP_LABEL_WRAP = 40 };

/* The label columns of a table with a row per sweep point, as `pslab run`'s
 * table has them (table.c): one per sweep path whose value is not the same
 * at every point (what is the same everywhere says nothing about the rows),
 * each cell only what tells its point apart, in the words the plots use
 * (exp_value_labels_varying, lead "type"), "-" where a point has no value
 * at the path; when nothing varies, one column "experiment" holding the
 * experiment's name. */
typedef struct {
  size_t cols, rows;   /* cols >= 1 once made; a row per point */
  const char **header; /* cols names, borrowed from the records (or static) */
  char **cells;        /* rows * cols, owned */
} exp_point_labels;

/* records: objects with a "sweep" member (run records), whose sweep paths
 * in first-appearance order are the candidate columns; sweeps[0..n): each
 * point's sweep object; name: the experiment's. False on no memory. Release
 * l with exp_point_labels_free either way. */
bool exp_point_labels_make(exp_point_labels *l, const cJSON *records,
                           const cJSON *const *sweeps, size_t n, const char *name);
void exp_point_labels_free(exp_point_labels *l);

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
  double x;    /* per-epoch plots: the mean of xs */
  exp_stats y;
  exp_stats xs; /* per-epoch plots: x's values at this epoch (else empty) */
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

/* -------------------------------------------------- results directory */

/* Whether a run record is of a run that succeeded (metrics, no error). */
bool exp_record_ok(const cJSON *rec);
/* Whether two records' "sweep" objects name the same sweep point (both
 * absent counts as the same). */
bool exp_same_point(const cJSON *a, const cJSON *b);
/* The run of runs a record is of: same run number, config and seed; NULL
 * when it is of none (another spec, or not a record). Borrowed from runs. */
const exp_run *exp_record_run(const cJSON *rec, const exp_run_list *runs);
/* Adds rec (taken) to records, kept sorted by run number (after records of
 * the same number). */
void exp_records_insert(cJSON *records, cJSON *rec);
/* The end of an experiment, for `pslab run` and `pslab merge` alike: writes
 * DIR/summary.csv and DIR/runs.csv (exp_results_write), prints the table on
 * out when there are records, draws the plots. Problems go to log. Returns
 * EXP_EXIT_OK, EXP_EXIT_FAILED (a file not written) or EXP_EXIT_PLOTS. */
int exp_results_finish(const char *dir, const char *experiment, const exp_results *r,
                       const char *gnuplot, FILE *out, FILE *log);

/* What a results directory holds for a spec being resumed. */
typedef struct {
  cJSON *records; /* its successful records of the spec's runs, one per run,
                     sorted by run number */
  bool *done;     /* done[r - 1]: run r has one of them */
  size_t kept;    /* how many */
} exp_resumed;

/* Reads DIR/spec.json and DIR/runs.jsonl to resume spec there; changes
 * nothing on disk. 0 with out filled (empty when DIR has no runs.jsonl), or
 * -1 with a message in errs: DIR/spec.json holds another spec (the message
 * names it), or runs.jsonl cannot be read. A last line cut short goes to
 * warnings. Release out with exp_resumed_free. */
int exp_resume_read(const char *dir, const exp_spec *spec, exp_resumed *out,
                    exp_errors *warnings, exp_errors *errs);
void exp_resumed_free(exp_resumed *r);

/* ----------------------------------------------- plot axes and layout */

/* The canvas of a plot, pixels (a bar chart's grows to fit its labels). */
enum { EXP_PLOT_WIDTH = 800, EXP_PLOT_HEIGHT = 500 };
/* The exit status of a plot script whose gnuplot cannot draw the PNG (it
 * lacks the pngcairo terminal): draw.c says so. */
enum { EXP_GNUPLOT_NO_PNG = 4 };
/* Whether prog can be run: a path that is executable, or found in PATH. */
bool exp_program_exists(const char *prog);
/* Runs `prog script` in dir, its output to /dev/null and its complaints to
 * our stderr (plots, `pslab trace stats --svg`). 0, or -1 with a reason. */
int exp_run_gnuplot(const char *prog, const char *dir, const char *script, char *err,
                    size_t errlen);

/* Pieces of every gnuplot script pslab writes (plot.c), so that all its
 * drawings look alike. */
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
 * and not empty (draw.c). Problems go to log ("pslab: plot NAME not drawn:
 * ..."). 0, or -1. */
int exp_draw_script(const char *name, const char *script, const char *dir,
                    const char *prog, bool have_prog, FILE *log);

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

/* Replaces spec's "cluster" by itself over the fields of its "profile" file
 * (a relative path taken from base_dir), keeping "profile" to say which;
 * nothing without a profile. A problem adds a message to errs; the names of
 * the fields only the profile gave are added to profile_keys (may be NULL). */
void exp_cluster_include_profile(struct cJSON *spec, const char *base_dir, exp_errors *errs,
                                 exp_errors *profile_keys);
/* A JSON file, parsed; NULL with "<path>: <reason>" or "<path>:L:C: invalid
 * JSON ..." added to errs. */
struct cJSON *exp_json_load(const char *path, exp_errors *errs);
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
