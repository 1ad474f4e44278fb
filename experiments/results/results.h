/*
 * experiments/results/: what the files of the results room share, and what
 * plots/, runner/ and fidelity/ take from it beyond the door (experiment.h
 * has the records, runs.jsonl, runs.csv, summary.csv and the table):
 * statistics over repeats, records grouped by sweep point, readable labels
 * and quantities, CSV fields, and the text grid tables are printed in.
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes common/ and no other room.
 */
#ifndef PSLAB_EXPERIMENTS_RESULTS_H
#define PSLAB_EXPERIMENTS_RESULTS_H

#include "experiments/common/common.h"
#include "run/run.h"

/* ------------------------------------------------------------ records */

/* Whether a run record is of a run that succeeded (metrics, no error)
 * (run_records.c). */
bool exp_record_ok(const cJSON *rec);
/* The epoch (from 1) in which a run's training diverged: the first whose
 * loss or held-out quality (epoch_loss, epoch_quality) became NaN or
 * infinite, which runs.jsonl holds as null; 0 when it did not (or has no
 * such lists). Of a run's metrics, and of a successful record (read from
 * its metrics, so older records without "diverged_epoch" say it too). */
int exp_metrics_diverged(const cJSON *metrics);
int exp_record_diverged(const cJSON *rec);
/* Whether the divergence of a diverged record took its value of `metric`:
 * the metric is there with no number (null, a list holding null), or is
 * time_to_quality_s and absent (a quality of NaN never reaches the target).
 * A metric that run never had (staleness without replicas) is not. */
bool exp_diverged_hides(const cJSON *rec, const char *metric);
/* Whether two records' "sweep" objects name the same sweep point (both
 * absent counts as the same). */
bool exp_same_point(const cJSON *a, const cJSON *b);

/* ------------------------------------------------------------- labels */

/* Readable labels for values[0..n) taken together (value_labels.c), telling
 * them apart by what differs: an object is flattened to its leaves, written
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
/* (What an empty value means in words, exp_empty_label, is in common/:
 * inside a labelled object an empty member reads "no straggler" or
 * "key=none".) */
/* Replaces the label of each empty value among values[0..n) (labels from
 * exp_value_labels_varying, values swept at path) by exp_empty_label(path);
 * false on no memory (that label then NULL). */
bool exp_label_empty_values(const cJSON *const *values, size_t n, const char *path,
                            char **labels);

/* v in engineering form with unit (a run_metric's unit), 3 significant
 * digits, never an exponent (format_quantity.c): "s" with prefixes down to
 * p and up ("217 ms", "3.1 us"); "B" and others with prefixes up ("278 MB",
 * "147 k steps/s"); "" a plain number ("720 k", "0.75"); "share" a
 * percentage ("11.9 %"). NaN: "-". */
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

/* summary.csv's metrics (see exp_summary_csv), in metric-table order
 * (sweep_points.c). False on no memory. Release with exp_metric_list_free. */
bool exp_summary_metric_list(const exp_results *r, exp_metric_list *out);
/* The table's: --metrics' in their order, or those flagged RUN_SHOW_TABLE
 * and the plots', in metric-table order, that some record has. */
bool exp_table_metric_list(const exp_results *r, exp_metric_list *out);
void exp_metric_list_free(exp_metric_list *l);

/* The sweep paths of records, in first-appearance order, *count of them:
 * a NULL-terminated array the caller frees; the names are borrowed from
 * records. NULL on no memory. */
const char **exp_sweep_paths(const cJSON *records, size_t *count);

/* The records of one sweep point. */
typedef struct {
  const cJSON *sweep;  /* its sweep values (its first record's); borrowed */
  size_t runs, ok;     /* its records, and the successful ones */
  size_t diverged;     /* of the successful ones, those whose training diverged */
  int diverged_epoch;  /* the earliest epoch one of them diverged in (from 1) */
  exp_stats *stats;    /* per metric collected: over the successful runs */
  size_t *hidden;      /* per metric: diverged runs it has no value of for that
                          (exp_diverged_hides) */
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

/* A text table (text_grid.c): row 0 the header, then a rule, then the rows;
 * the first label_cols columns left-aligned, their cells wrapped at spaces
 * onto more lines of their row, indented by two, when longer than wrap
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

#endif
