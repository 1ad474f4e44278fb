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
/* What was found, for "found ..." in messages: -3, "abc", an object,
 * nothing (the key is missing). */
void exp_describe(const cJSON *v, char *buf, size_t n);
/* A metric's value as one number: the number itself, or the mean of a
 * list (a per-epoch metric); false when v holds no number. */
bool exp_metric_value(const cJSON *v, double *out);

/* The label of swept value v in the table, among every sweep point's value
 * at its path (all[0..n), v among them): a string bare, a number exact, an
 * object as its type then what differs among all, "relocate lookahead=100"
 * (labels.c). Caller frees; NULL on no memory. */
char *exp_point_label(const cJSON *v, const cJSON *const *all, size_t n);

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

/* Mean y of one line (series) at one x: x is a number, or the index of a
 * category in exp_plot_data.cats. */
typedef struct {
  size_t series;
  double x;
  double sum;
  size_t n;
} exp_plot_cell;

typedef struct {
  char **series, **cats; /* labels, in first-appearance order */
  size_t n_series, n_cats;
  exp_plot_cell *cells;
  size_t n_cells;
  bool numeric; /* every x is a number */
} exp_plot_data;

/* Reduces run records to plot p's points (plotdata.c). */
void exp_plot_data_collect(exp_plot_data *d, const exp_plot *p,
                           const cJSON *records);
void exp_plot_data_free(exp_plot_data *d);

/* -------------------------------------------------- results directory */

/* Whether a run record is of a run that succeeded (metrics, no error). */
bool exp_record_ok(const cJSON *rec);
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
