/*
 * experiments/: the one door of the experiments room, behind the `pslab`
 * command.
 *
 * An experiment is a JSON spec (experiments/SPEC.md is its reference). This
 * room loads it, applies `--set` overrides, validates it whole (every error at
 * once, one line each: `<file>: <json.path>: expected <what>, found <what>`),
 * expands its sweep into runs, runs each in a child process through its
 * backend's entry (SimGrid holds one simulation per process; real/ forks),
 * and writes runs.jsonl, runs.csv, summary.csv, a table and gnuplot plots. A sweep
 * larger than one machine runs in shards (exp_shard) whose directories
 * exp_merge_dirs joins; an interrupted one resumes from its runs.jsonl
 * (exp_runner_options.resume). exp_validate runs a spec on both backends
 * with the same seeds and reports how well the simulator predicted the real
 * backend.
 *
 * Ownership: every pointer a function returns is the caller's unless its
 * comment says "borrowed"; structs filled by *_parse / *_expand are released
 * by the matching *_free. Nothing here keeps global state.
 *
 * Behind this door the code is in a folder per idea, each with one header
 * for what its files share (never a door): common/ (string buffer, values
 * as text, files, the error list), spec/ (loading and checking a spec: its
 * cluster, units, JSON paths, sweep and shards, plots list), backends/ (the
 * backend table, the stage scheduler), results/ (run records, runs.jsonl,
 * the CSV files, the table), plots/ (gnuplot scripts and their drawing),
 * runner/ (runs in child processes, results directories, `pslab merge`),
 * fidelity/ (`pslab calibrate`, `pslab validate`) and cli/ (the `pslab`
 * command). They include each other one way: common <- backends <- spec,
 * common <- results <- plots, then runner over spec, backends, results and
 * plots, fidelity over runner, and cli on top.
 */
#ifndef PSLAB_EXPERIMENTS_EXPERIMENT_H
#define PSLAB_EXPERIMENTS_EXPERIMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "real/real.h"
#include "sim/sim.h"

struct cJSON;

#if defined(__GNUC__)
#define EXP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define EXP_PRINTF(f, a)
#endif

/* Exit statuses of the runner and of the `pslab` command. */
enum {
  EXP_EXIT_OK = 0,
  EXP_EXIT_FAILED = 1, /* invalid spec, I/O error, or a run failed */
  EXP_EXIT_USAGE = 2,  /* bad command line */
  EXP_EXIT_PLOTS = 3   /* every run succeeded but a plot was not drawn */
};

/* ------------------------------------------------------------- errors */

/* One-line messages, collected so that a bad spec is reported whole. */
typedef struct {
  char **lines;
  size_t count;
  size_t cap;
} exp_errors;

void exp_errors_init(exp_errors *e);
void exp_errors_free(exp_errors *e);
/* Appends one formatted line (copied). False when out of memory. */
bool exp_errors_addf(exp_errors *e, const char *fmt, ...) EXP_PRINTF(2, 3);
/* Writes each line followed by a newline. */
void exp_errors_print(const exp_errors *e, FILE *f);
/* Whether some line contains `needle`. */
bool exp_errors_contain(const exp_errors *e, const char *needle);

/* -------------------------------------------------------------- units */

/* Quantities written with units, as SimGrid writes them. Each returns 0 and
 * sets *out, or -1 when s is not a non-negative number followed by a known
 * unit (a bare number in a string is refused: say which unit).
 *   flops:     "100f", "1.5Mf", "10Gf" (also "Gflops"); prefixes k M G T P E
 *   bandwidth: "10Gbps" (bits/s, divided by 8), "125MBps" (bytes/s); prefixes
 *              k M G T P E and Ki Mi Gi Ti
 *   duration:  "100ns", "50us", "1ms", "0.5s" (also ps, min, h) */
int exp_parse_flops(const char *s, double *out);
int exp_parse_bandwidth(const char *s, double *out);
int exp_parse_duration(const char *s, double *out);

/* --------------------------------------------------------- JSON paths */

/* Dotted paths into JSON: "cluster.network.latency"; a segment made of
 * digits indexes a list ("cluster.stragglers.0.node"). Keys with dots in
 * them cannot be named. */

/* The value at path, or NULL. Borrowed from root. */
struct cJSON *exp_path_get(const struct cJSON *root, const char *path);
/* Puts value at path, replacing what is there. Objects missing on the way
 * are made; a list must exist and hold the index. The leaf may be absent
 * from an object and is then added. Takes value in every case (freed on
 * error). Returns 0, or -1 with a message in err. */
int exp_path_set(struct cJSON *root, const char *path, struct cJSON *value,
                 char *err, size_t errlen);

/* ------------------------------------------------------------ cluster */

/* The spec's "cluster" object, typed for sim/ and real/ (real holds bind,
 * coordinator, base_port, timeout_s, compute, and its view of the
 * stragglers; nodes, workers_per_node and host_speed are sim's). sim's and
 * real's pointers point into the owned fields below. */
typedef struct {
  sim_cluster sim;
  real_cluster real;
  sim_straggler *stragglers;
  run_phase **phases;  /* per straggler: its phases (a whole-run one: one) */
  size_t n_phase_lists;
  real_straggler *real_stragglers; /* the real backend's view of them */
  uint32_t *place;     /* machines.place */
  char *platform_file; /* resolved against the spec's directory */
  char **hosts;
  ps_scale_step *scale; /* cluster.scale */
  /* cost.step_s_by_policy: a worker's own work per step under each policy
   * type named, in place of cost.step_s (exp_cluster_for_policy). */
  char **step_policy;
  double *step_policy_s;
  size_t n_step_policy;
} exp_cluster;

/* Sets c's cost.step_s to cost.step_s_by_policy's figure for policy's type
 * when it names one (the run's policy: its top-level "policy"). */
void exp_cluster_for_policy(exp_cluster *c, const struct cJSON *policy);

/* In a cluster profile (`pslab calibrate`), the object that says how it was
 * measured; not a cluster field. */
#define EXP_PROFILE_ABOUT "calibration"

/* Parses json (the "cluster" object) over sim_cluster_default(). A relative
 * platform_file or profile is taken from base_dir; a profile's fields go
 * under the cluster's own (EXP_PROFILE_ABOUT in it is left out). Adds one message per problem to errs
 * (paths start with "cluster."); returns true when it added none. out is
 * always filled and must be released with exp_cluster_free. */
bool exp_cluster_parse(const struct cJSON *json, const char *base_dir,
                       exp_cluster *out, exp_errors *errs);
void exp_cluster_free(exp_cluster *c);

/* -------------------------------------------------------------- sweep */

/* One run of an experiment. */
typedef struct {
  uint32_t run;          /* 1-based: the order runs go in */
  uint32_t repeat;       /* 0-based */
  size_t point;          /* sweep point, 0-based */
  uint64_t seed;         /* exp_run_seed(config seed, repeat) */
  struct cJSON *sweep;   /* {"path": value, ...} this run took, in spec order */
  struct cJSON *config;  /* the spec without sweep and plots, values set */
} exp_run;

typedef struct {
  exp_run *runs;  /* repeat-major: all points of repeat 0, then repeat 1 ... */
  size_t count;
  size_t points;  /* sweep points (count = points * repeats) */
} exp_run_list;

/* Expands a spec object: the cartesian product of its sweep lists (first key
 * outermost) times its repeats. Checks the sweep's shape and paths, adding
 * messages to errs (unprefixed); invalid axes are left out. Returns true when
 * it added no message. out must be released with exp_run_list_free. Does not
 * validate the run configs: exp_spec_parse does. */
bool exp_sweep_expand(const struct cJSON *spec, exp_run_list *out,
                      exp_errors *errs);
void exp_run_list_free(exp_run_list *l);
/* The seed of a run: the same for every sweep point of one repeat. */
uint64_t exp_run_seed(uint64_t spec_seed, uint32_t repeat);
/* Every seed, the spec's and the derived, is below this, 10^15: exact in 15
 * significant digits, as some JSON writers print numbers (exp_run_seed). */
#define EXP_SEED_LIMIT 1000000000000000ull
/* A shard of an experiment, for spreading its runs over machines: shard K of
 * N (index K, count N) holds the runs r with (r - 1) % N == K - 1, with the
 * run numbers, seeds and configs they have in the whole experiment. Count 0
 * (and index 0): the whole experiment. */
typedef struct {
  uint32_t index, count;
} exp_shard;

/* Parses "K/N" (1 <= K <= N, digits only). 0, or -1 with a message that
 * quotes text ("expected K/N with 1 <= K <= N ..., found \"4/3\""). */
int exp_shard_parse(const char *text, exp_shard *out, char *err, size_t errlen);
/* Whether run number `run` (from 1) is in shard s; every run is when s is
 * NULL or the whole experiment. */
bool exp_shard_has(const exp_shard *s, uint32_t run);
/* How many of runs are in shard s. */
size_t exp_shard_size(const exp_shard *s, const exp_run_list *runs);
/* "cluster.nodes=8, policy={type=static}" for a run's sweep object, an
 * empty value in the table's words ("no straggler", else "key=none"); ""
 * when nothing is swept. Caller frees. */
char *exp_sweep_label(const struct cJSON *sweep);

/* -------------------------------------------------------------- plots */

typedef struct {
  char *name;    /* file name stem: DIR/<name>.gp, .svg and .png */
  char *x;       /* a metric name, or a dotted path into the run config */
  char *y;       /* a metric name */
  char *series;  /* dotted path into the run config, or NULL */
  char *title;   /* or NULL */
  bool logx, logy;
  /* kind "quality_vs_time": x and y are per-epoch lists (by default
   * epoch_end_s and epoch_quality), one line per sweep point through its
   * epochs, repeats averaged epoch by epoch. */
  bool per_epoch;
  /* kind "servers_over_time": keys each server served per second against
   * time (the "servers" metric's keys_per_s), a line per server (and per
   * sweep point, when several are drawn); x is "time_s", y "servers". */
  bool per_server;
  /* "select": {path: value, ...}: only runs whose config has these values
   * (owned; NULL: every run). */
  struct cJSON *select;
} exp_plot;

typedef struct {
  exp_plot *items;
  size_t count;
} exp_plot_list;

/* Parses a spec's "plots" list (NULL: no plots). Adds messages (unprefixed)
 * and returns true when it added none. Release out with exp_plot_list_free. */
bool exp_plots_parse(const struct cJSON *plots, exp_plot_list *out,
                     exp_errors *errs);
void exp_plot_list_free(exp_plot_list *l);
/* The gnuplot script drawing plot p (output "<name>.svg", then the same
 * plot as "<name>.png", relative to the script's directory) from run records
 * (exp_record_new): each point y's values over the runs with the same x and
 * series, combined as y's metric says, with a 95% confidence interval for a
 * mean of 2 values or more. NULL with a message when no record gives a
 * value for x and y. Caller frees. */
char *exp_plot_script(const exp_plot *p, const char *experiment,
                      const struct cJSON *records, char *err, size_t errlen);
/* Writes DIR/<name>.gp for every plot and runs `gnuplot` (the program to
 * run; NULL: "gnuplot" from PATH) in dir to draw DIR/<name>.svg and
 * DIR/<name>.png. Reports problems on log. Returns EXP_EXIT_OK, or
 * EXP_EXIT_PLOTS when some plot was not drawn (gnuplot missing or failing,
 * without the pngcairo terminal, or either file not written; no data). */
int exp_plots_draw(const exp_plot_list *plots, const char *experiment,
                   const struct cJSON *records, const char *dir,
                   const char *gnuplot, FILE *log);
/* `pslab plot DIR`: redraws the plots of DIR/spec.json from DIR/runs.jsonl.
 * Returns an EXP_EXIT_* status. */
int exp_plot_dir(const char *dir, const char *gnuplot, FILE *log);

/* ------------------------------------------------------------ results */

/* Whether name is a metric of the metric table (run_metric_find). */
bool exp_is_metric(const char *name);
/* `--metrics a,b,c`: the names, as a NULL-terminated list in one allocation
 * (release it with free()), each a metric of the metric table. NULL with a
 * message in err (room for every metric's name: 1 kB) for an empty or an
 * unknown name; the message lists the metric names. */
char **exp_metrics_parse(const char *list, char *err, size_t errlen);
/* `pslab metrics`: every metric with its unit, meaning, how repeats
 * combine and where it is shown; with markdown, the table SPEC.md holds. */
void exp_metrics_print(FILE *f, bool markdown);
/* `pslab policies`: every policy's fields with their type, default, range
 * and meaning; with markdown, the tables docs/policies.md holds. */
void exp_policies_print(FILE *f, bool markdown);

/* A run record for runs.jsonl: experiment, run, repeat, seed, backend,
 * sweep, config, metrics (taken; may be NULL for a failed run, then
 * "error" says why), and "diverged_epoch" when the run's loss or quality
 * became NaN or infinite (exp_record_diverged). NULL on no memory (metrics
 * is freed). */
struct cJSON *exp_record_new(const char *experiment, const exp_run *run,
                             struct cJSON *metrics, const char *error);
/* Appends record as one line and flushes. 0, or -1 on a write error. */
int exp_jsonl_append(FILE *f, const struct cJSON *record);
/* Appends record as one line at the end of the file open at fd, with one
 * write(), and fsyncs it: the runner's way to runs.jsonl. A write the disk
 * refuses in part (full, over a size limit) is rolled back: the file is cut
 * back (ftruncate) to where it ended, its last whole line. 0, or -1 with
 * the reason in err (no file name: the caller knows it) and errno set to
 * its cause (ENOSPC, EIO for a short write without one, ENOMEM). */
int exp_jsonl_append_fd(int fd, const struct cJSON *record, char *err, size_t errlen);
/* Reads runs.jsonl into a list of records; NULL with messages in errs
 * ("<path>:<line>: ..."). */
struct cJSON *exp_jsonl_load(const char *path, exp_errors *errs);
/* The same for the runs.jsonl of an experiment that may have been killed:
 * a last line that ends without '\n' and is not a whole record (a write cut
 * short) is left out with a message in warnings instead of being an error.
 * Every other bad line is still an error. */
struct cJSON *exp_jsonl_load_interrupted(const char *path, exp_errors *warnings,
                                         exp_errors *errs);
/* Writes records as runs.jsonl at path, the lines exp_jsonl_append writes,
 * through a temporary file renamed over it (never seen half-written). 0, or
 * -1 with a message. */
int exp_jsonl_write(const char *path, const struct cJSON *records, char *err,
                    size_t errlen);

/* What the results files and the table are made from. Everything is
 * borrowed. */
typedef struct {
  const struct cJSON *records; /* run records (exp_record_new), in run order */
  /* The spec's plots, or NULL: the metrics they draw (y, and x when it is a
   * metric) are columns of summary.csv and, without --metrics, of the table. */
  const exp_plot_list *plots;
  /* --metrics: NULL-terminated metric names, or NULL. The table's columns,
   * exactly, and more columns of summary.csv. */
  const char *const *metrics;
} exp_results;

/* runs.csv: header run, repeat, seed, the sweep paths, every scalar metric
 * some record has (metric-table order, then unknown ones as met), error;
 * one row per record. False on no memory (f then holds part of it). */
bool exp_runs_csv(FILE *f, const struct cJSON *records);
/* summary.csv: one row per sweep point (first-appearance order): the sweep
 * paths' values, runs, runs_ok, then per summary metric its value combined
 * over the point's successful repeats as its entry says, and for a
 * RUN_COMBINE_MEAN metric <name>_sd and <name>_ci95 (empty below 2
 * repeats). Summary metrics: those flagged RUN_SHOW_SUMMARY that some record
 * has, the plots' and --metrics', in metric-table order. False on no
 * memory (f then holds part of it). */
bool exp_summary_csv(FILE *f, const exp_results *r);
/* The table: one row per sweep point, a label column per sweep path that
 * varies (long labels wrapped at spaces), "runs ok" with repeats or
 * failures, the metric columns (see exp_results) in engineering form,
 * "mean ± ci95" with 2 or more successful repeats. Nothing without records. */
void exp_table_print(FILE *f, const exp_results *r);
/* Every result derived from the records: writes DIR/runs.csv and
 * DIR/summary.csv, each through a temporary file renamed over it (never
 * seen half-written), and, when table is not NULL, prints the table on it.
 * The runner calls it after each run (table NULL) and at the end. 0, or -1
 * with a message in err (the other file is still written); a file that
 * cannot be written is removed, so that neither ever holds other records
 * than the list given (what runs.jsonl holds). */
int exp_results_write(const char *dir, const exp_results *r, FILE *table,
                      char *err, size_t errlen);

/* --------------------------------------------------------------- spec */

typedef struct exp_spec exp_spec;

/* Reads, overrides, validates and expands the spec in file `path`. sets are
 * "path=value" overrides (--set), applied before validation. Returns NULL
 * with every problem in errs (each "<path>: ..."). */
exp_spec *exp_spec_load(const char *path, const char *const *sets,
                        size_t n_sets, exp_errors *errs);
/* The same from text; `file` names it in messages and base_dir is where a
 * relative platform_file is looked for. */
exp_spec *exp_spec_parse(const char *text, size_t len, const char *file,
                         const char *base_dir, const char *const *sets,
                         size_t n_sets, exp_errors *errs);
void exp_spec_free(exp_spec *s);

/* Borrowed views of a valid spec. */
const char *exp_spec_name(const exp_spec *s);
const char *exp_spec_file(const exp_spec *s);
const char *exp_spec_dir(const exp_spec *s);
/* The spec after overrides (what DIR/spec.json holds). */
const struct cJSON *exp_spec_json(const exp_spec *s);
const exp_run_list *exp_spec_runs(const exp_spec *s);
const exp_plot_list *exp_spec_plots(const exp_spec *s);
/* What is suspect but not wrong, one line each (no "<file>: " prefix): a
 * --set on a path the sweep replaces in every run ("--set policy.lookahead=5
 * has no effect: sweep[\"policy\"] replaces policy in every run"). */
const exp_errors *exp_spec_warnings(const exp_spec *s);

/* The most work a run may ask for unless --force is given: key accesses
 * (experiments/SPEC.md, "The work a run may ask for"). Every shipped spec
 * and the 1,024-node scale runs ask for less than a hundredth of it. */
#define EXP_WORK_LIMIT 1e9
/* The key accesses run asks for, counted from its config's fields (spec/
 * work_limit.c), with in how the fields and figures it is made of; -1 when
 * its workload's steps come from a data file, which bounds them. */
double exp_run_work(const exp_run *run, char *how, size_t howlen);
/* true when no run of s asks for more than EXP_WORK_LIMIT; else one message
 * in errs: "<file>: run N asks for W key accesses (<fields and figures>),
 * over the limit of 1e+09 a run (...); --force runs it anyway". `pslab
 * check`, `run`, `node` and `validate` refuse such a spec without --force. */
bool exp_spec_check_work(const exp_spec *s, exp_errors *errs);

/* ----------------------------------------------------------- backends */

/* `pslab node`: this process is one node of every run (real backend). */
typedef struct {
  uint32_t rank, size;
  const char *coordinator;      /* "HOST:PORT" of rank 0, or NULL: the spec's */
  const char *coordinator_file; /* or NULL */
} exp_node_role;

/* One run, as the runner's child hands it to a backend. */
typedef struct {
  const exp_cluster *cluster;
  const struct cJSON *workload, *policy; /* the run config's objects */
  const struct cJSON *consistency, *stages; /* ... or NULL when absent */
  const char *base_dir;                  /* the spec's directory (data files) */
  uint64_t seed;
  uint32_t run;                          /* its number in the experiment */
  /* Now and then: the run's time (simulated or wall) and the fraction done.
   * May be NULL. */
  void (*progress)(void *ctx, double time_s, double fraction);
  void *progress_ctx;
  const exp_node_role *node;             /* `pslab node`, or NULL */
  /* Record the run's trace: each worker writes "<trace_path>.part<rank>"
   * (the runner merges them into trace_path); NULL: none. */
  const char *trace_path;
  /* Save the trained parameters into this existing directory (run_args'
   * params_dir); NULL: none. */
  const char *params_dir;
  /* Bytes of memory the run may use (0: no check, --force). */
  uint64_t memory_limit;
} exp_backend_job;

/* The stage scheduler (backends/stage_scheduler.c): whether a "stages" list has a stage
 * with "workers": "auto"; and its resolution for the job's run: a copy of
 * job->stages with every "auto" replaced by the count the scheduler chose
 * (simulating the candidate counts on the run's simulated cluster, in forked
 * children), and *records, a list with one entry per stage: null, or for an
 * auto stage {"candidates", "prefix_steps", "estimated_s", "chosen"}. The
 * caller deletes both. NULL with a message in err. */
bool exp_stages_have_auto(const struct cJSON *stages);
struct cJSON *exp_stages_schedule(const exp_backend_job *job, struct cJSON **records,
                                  char *err, size_t errlen);

/* A way of running runs (backends/backend_table.c). */
typedef struct {
  const char *name;                  /* the spec's "backend" */
  const char *summary;               /* one line for help texts */
  const char *const *cluster_keys;   /* the cluster fields it reads
                                        (NULL-terminated) */
  /* Runs one run and returns its metrics (caller frees), or NULL with a
   * message in err. */
  struct cJSON *(*run)(const exp_backend_job *job, char *err, size_t errlen);
} exp_backend;

/* The backends pslab has, in the order help texts list them; *count. */
const exp_backend *exp_backends(size_t *count);
/* The entry named `name` in table[count], or NULL. */
const exp_backend *exp_backend_find(const exp_backend *table, size_t count,
                                    const char *name);

/* ------------------------------------------------------------- runner */

#define EXP_PROGRESS_PERIOD_S 10.0 /* a progress line per run this often, off a terminal */

typedef struct {
  const char *out_dir;   /* NULL: results/<name> */
  bool quiet;            /* no progress lines (failures are still reported) */
  int progress_tty;      /* -1: ask isatty(log); 0: a line per start and end,
                            and one per progress_period_s while a run goes
                            on; 1: one updating line */
  double progress_period_s; /* <= 0: EXP_PROGRESS_PERIOD_S */
  const char *gnuplot;   /* NULL: "gnuplot" */
  FILE *out;             /* the table; NULL: stdout */
  FILE *log;             /* progress and errors; NULL: stderr */
  /* Put before every progress line and after "pslab: " in the closing
   * line, so that two experiments' lines in one log tell themselves apart
   * (`pslab validate`: "sim: [run 3/12] ..."); NULL: nothing. */
  const char *prefix;
  /* The backends runs are looked up in (NULL: exp_backends()); tests put
   * stand-ins here. */
  const exp_backend *backends;
  size_t n_backends;
  /* NULL: runs on the real backend fork all their nodes here. Set: this
   * process is one node of each run; only rank 0 writes results, the other
   * ranks run silently and report failures on the log. */
  const exp_node_role *node;
  /* Which runs: {0, 0} every run; else only the shard's, numbered, seeded
   * and recorded as in the whole experiment (every rank of `pslab node`
   * must be given the same). */
  exp_shard shard;
  /* Keep what the output directory holds: the runs whose successful record
   * of this spec (same run number, config and seed) is in DIR/runs.jsonl
   * are skipped, the others run and are appended. Refused (EXP_EXIT_FAILED,
   * nothing changed) when DIR/spec.json is another spec. Under `pslab node`
   * every rank must be given it and see DIR (each reads which runs to skip;
   * rank 0 alone writes). */
  bool resume;
  /* --force: no memory check; otherwise each run is refused before it
   * starts when its estimate exceeds the machine's available memory
   * (MemAvailable in /proc/meminfo, read as the run starts). (The work
   * limit, exp_spec_check_work, is the command's to check, on loading.) */
  bool force;
  /* --metrics (exp_metrics_parse), or NULL: the table's columns, and more
   * columns of summary.csv. */
  const char *const *metrics;
  /* --record-trace FILE, or NULL: each run records what every worker
   * accessed into a trace (workloads/TRACE.md), written to FILE when the
   * spec has one run, else to exp_trace_run_path(FILE, run) per run. Under
   * `pslab node`, FILE must be on a file system every node sees: each node
   * writes its workers' parts, rank 0 merges them. */
  const char *record_trace;
  /* --timeout: a run still going after this many seconds of wall time is
   * ended (its process group killed) and recorded as failed, "timed out
   * after N s"; the next run starts. 0: no limit. */
  double timeout_s;
  /* --save-params DIR, or NULL: each run saves its trained parameters
   * (workloads/workload.h, saved parameters) into DIR when the spec has one
   * run, else into DIR/run-<N>, made if missing. Under `pslab node`, DIR must
   * be on a file system every node sees. */
  const char *save_params;
} exp_runner_options;

/* ---------------------------------------------- estimate (runner/estimate.c)
 *
 * The wall time of a sweep before it runs: each distinct run config run for
 * a short while and its progress timed (estimate.c says how). */

#define EXP_ESTIMATE_BUDGET_S 2.0 /* `pslab check`'s calibration, in seconds, about */
#define EXP_ESTIMATE_RUN_S 4.0    /* `pslab run`'s */

/* A progress report of a calibration: wall seconds since the run started,
 * its (simulated) time so far, the fraction of its steps done, and the CPU
 * seconds its process had used (NaN: not known). */
typedef struct {
  double wall_s, time_s, fraction, cpu_s;
} exp_calib_point;

/* What a calibration of one run found. */
typedef struct {
  const exp_calib_point *points; /* in the order they came */
  size_t n;
  double elapsed_s; /* how long it ran */
  bool finished;    /* the run ended within it */
  double time_s;    /* finished: the run's time_s */
} exp_calibration;

/* The run's wall time from its calibration: elapsed_s when it finished;
 * else its setup (the wall time of the report at fraction 0) plus its
 * steps: what the reports (strictly between 0 and 1) up to the one before
 * last took since the setup, and the rest of the steps at the rate between
 * the last two (one report: at its own rate). The steps are counted in CPU seconds
 * times wall_per_cpu (the machine's wall seconds per CPU second, measured
 * over the whole calibration) where the reports have CPU seconds and
 * wall_per_cpu > 0, else in wall seconds; without the report at 0, from the
 * fork (setup among the steps). For a run on the real backend (real), the
 * setup plus its simulated time (time_s when it finished, else the last
 * report's time_s / fraction); without the report at 0, the setup is where
 * the line through the first and last reports meets 0. *lower: the estimate
 * is only a lower bound (elapsed_s: no report came). */
double exp_estimate_run(const exp_calibration *c, double wall_per_cpu, bool real, bool *lower);
/* For a calibration with a report at 0 and a first report after it, and
 * its estimate est: est less its setup over the wall time from the report
 * at 0 to the first (how many times its first report's time the whole run
 * came to); 0 without those. */
double exp_estimate_per_first(const exp_calibration *c, double est);
/* What a run that gave no report after its setup will take at least: its
 * setup plus the time it had after it (not enough for a first report)
 * times per_first (exp_estimate_per_first of the points that gave one, as
 * their mean), and no less than elapsed_s; elapsed_s where it finished, gave
 * a report, has no report at 0 or per_first <= 0. */
double exp_estimate_floor(const exp_calibration *c, double per_first);
/* A stage of a run as its estimate counts it: what the stage scheduler
 * simulates for it before the run starts when its "workers" is "auto"
 * (trials simulations, each of the stages before it whole, then a prefix
 * of it: prefix_share, those prefixes' steps over the stage's steps); 0
 * and 0 for a stage with a count. */
typedef struct {
  size_t trials;
  double prefix_share;
} exp_stage_cost;
/* The calibration's wall seconds per CPU second are the load of its few
 * seconds; the runs take minutes. Its factor for the load of the last
 * minute: with n runnable tasks sharing `cpus` processors evenly, a task
 * takes max(1, n / cpus) wall seconds per CPU second; during the
 * calibration n was `runnable` (its mean at the probes' reports, the
 * probe among them), during the runs it is taken as the 1-minute load
 * average plus the run (load_avg + 1). Their ratio, within
 * [1 / EXP_ESTIMATE_LOAD_MAX, EXP_ESTIMATE_LOAD_MAX]: 1 on a machine whose
 * load held. */
double exp_estimate_load_factor(double runnable, double load_avg, double cpus);
/* A run with n stages from one calibration per stage (c[k]: the run with
 * stage k alone, so that each stage's rate comes from its own steps): the
 * setup of c[0], plus each stage's steps (exp_estimate_run of c[k] less
 * its setup; where that is only a lower bound, exp_estimate_floor with
 * per_first less it, and *lower set), plus for each auto stage k
 * st[k].trials times (that setup and the simulator's time of the stages
 * before k) and st[k].prefix_share times the simulator's time of stage k.
 * On the real backend (real) a stage's steps are its simulated time
 * (exp_estimate_run's), the scheduler's simulations still the simulator's
 * wall time. */
double exp_estimate_stages(const exp_calibration *c, const exp_stage_cost *st, size_t n,
                           double wall_per_cpu, bool real, double per_first, bool *lower);
/* The j-th sweep point (of n, in sweep order) the calibration probes: j
 * times a step near n over the golden ratio and prime to n, modulo n, so
 * that the first few are spread over the sweep, and the values of its last
 * axis are all among the first that many (of 4 node counts times 3
 * policies, the first 3 probed have the 3 policies). For j < n, every
 * point once. */
size_t exp_estimate_order(size_t n, size_t j);
/* The wall and CPU seconds of a calibration's steps, from the report at 0
 * to the last report; both 0 without those or their CPU seconds. Summed over
 * the points calibrated, their ratio is exp_estimate_run's wall_per_cpu. */
void exp_calibration_span(const exp_calibration *c, double *wall_s, double *cpu_s);
/* A sweep's wall time: sum over its n points of est[i] times runs[i]. A
 * point not calibrated counts its work (exp_run_work; work NULL or <= 0:
 * unknown) times the mean of est / work over the calibrated points with a
 * work, or where it or they have none, the mean of the calibrated ones;
 * and at least its own est[i] (a lower bound; 0 where nothing is known). */
double exp_estimate_total(const double *est, const double *work, const bool *calibrated,
                          const size_t *runs, size_t n);

typedef struct {
  double total_s;    /* the runs' wall time */
  bool lower;        /* no point gave more than a lower bound: total too */
  bool real;         /* some run is on the real backend */
  bool staged;       /* some run has stages: each probed on its own */
  size_t runs, points, calibrated; /* runs, their distinct configs, of which calibrated */
  double spent_s;    /* the calibration's own wall time */
  double wall_per_cpu; /* its wall seconds per CPU second of the steps, times
                          load_factor (0: unknown) */
  double runnable_sum; /* the tasks runnable at the probes' reports (less the
                          reader), summed over runnable_n reports */
  size_t runnable_n;
  double load_avg;     /* the 1-minute load average after the calibration */
  double load_factor;  /* exp_estimate_load_factor of those (1: unknown) */
  size_t failed;     /* points whose calibration failed (their run will too) */
  char error[320];   /* the last such failure */
} exp_estimate;

/* Estimates the wall time of the runs of spec that shard holds ({0, 0}:
 * all), calibrating for about budget_s seconds in all. 0, or -1 on no
 * memory. */
int exp_estimate_spec(const exp_spec *spec, const exp_shard *shard, double budget_s,
                      exp_estimate *out);
/* "<lead>estimate: about 3 min 20 s of wall time for 12 runs (from ...)". */
void exp_estimate_print(FILE *f, const char *lead, const exp_estimate *e);
/* A wall time as the estimate says it: "4.2 s", "42 s", "3 min 20 s",
 * "2 h 5 min". */
void exp_format_wall(double s, char *buf, size_t n);

/* Where run `run` of an experiment of `runs` runs records its trace given
 * --record-trace FILE: FILE itself for a single run, else FILE with
 * "-run<N>" before the extension of its last component ("t.trace" ->
 * "t-run3.trace", "t" -> "t-run3"). malloc'd; NULL on no memory. */
char *exp_trace_run_path(const char *file, size_t runs, uint32_t run);

/* `pslab trace stats FILE`: prints the statistics of the trace in file to
 * out (locality for `nodes` nodes; 0: the trace's own) and, with svg, draws
 * its log-log rank-frequency curve there with gnuplot (the script beside it,
 * <svg without .svg>.gp). Returns EXP_EXIT_OK, EXP_EXIT_FAILED (the trace
 * cannot be read: the reason on log) or EXP_EXIT_PLOTS (the SVG not drawn). */
int exp_trace_stats(const char *file, uint32_t nodes, const char *svg, const char *gnuplot,
                    FILE *out, FILE *log);
/* `pslab trace merge FILE`: joins FILE.part0.. into FILE (as the runner
 * does after a run). EXP_EXIT_OK or EXP_EXIT_FAILED (the reason on log). */
int exp_trace_merge(const char *file, FILE *log);

/* ---------------------------------------------------------- calibrate */

/* A batch of pulls a calibration measures (fidelity/calibrate.c): `count`
 * pulls per pulling thread of `keys` keys of `floats` floats homed at
 * another node on this machine (local: at the puller's own node), each
 * thread keeping up to `window` outstanding (0 counts as 1); `clients`
 * threads pull (0 counts as 1); with both_ways the other node pulls as many
 * from the first the same way meanwhile; `spinners` threads spin on the
 * machine's cores meanwhile, so that a thread woken for a message must wait
 * for a core (their CPU is not counted). */
typedef struct {
  uint32_t keys, floats, count, window, clients;
  bool local, both_ways;
  uint32_t spinners; /* threads spinning through the batch: the cores busy */
  bool push;         /* local: each pull followed by a push of its keys (writes) */
  bool count_shared; /* count the shared accesses (which writes every key's
                        entry: such a batch is for the count, not the time) */
} exp_calib_batch;

/* What one node's threads spent over a batch. */
typedef struct {
  double process_cpu_s;  /* every thread of the node's process */
  double receiver_cpu_s; /* the thread that reads its messages when no puller waits */
  double issue_cpu_s;    /* its pulling threads (which read messages while they wait) */
  double send_cpu_s;     /* ... of which in the calls that issued the pulls */
  double wakeups;        /* times the threads reading its messages slept and woke */
  double io_wakeups;     /* times ZeroMQ's I/O thread slept and woke */
  double shared_accesses; /* count_shared: key accesses that found the key
                             last touched by another of its threads */
} exp_calib_node;

/* Totals over a batch; node[0] pulls, node[1] serves (and pulls, both ways).
 * Only doubles (the calibration takes medians field by field). */
typedef struct {
  double wall_s;       /* wall-clock time */
  double cpu_s;        /* CPU time of every process involved */
  double thread_cpu_s; /* CPU time of node 0's pulling threads */
  exp_calib_node node[2];
} exp_calib_sample;

/* Where the figures come from: a probe of the real backend
 * (exp_calib_real_source), or made-up numbers in tests. */
typedef struct {
  void *ctx;
  /* Runs batch b. 0, or -1 with a message. */
  int (*pulls)(void *ctx, const exp_calib_batch *b, exp_calib_sample *out, char *err,
               size_t errlen);
  /* How long `flops` flops of the tasks' kind of math take. */
  int (*compute)(void *ctx, double flops, double *wall_s, char *err, size_t errlen);
  /* How long real math takes to add the initial values of `floats` pulled
   * floats (the workloads' wl_add_initial). */
  int (*initial)(void *ctx, double floats, double *wall_s, char *err, size_t errlen);
  /* The scheduler's slice: how long a thread runs on its core while others
   * wait, with `threads` spinning for `seconds` (NULL: not measured, and the
   * profile has no machines.slice). */
  int (*slice)(void *ctx, uint32_t threads, double seconds, double *slice_s, char *err,
               size_t errlen);
  /* How long a thread woken `wakes` times waits for its core while
   * `spinners` threads spin there, and the spinners' involuntary switches
   * per wake-up (NULL: not measured, and the profile has no
   * calibration.preemption). */
  int (*preempt)(void *ctx, uint32_t spinners, uint32_t wakes, double *wait_s,
                 double *preempted, char *err, size_t errlen);
  uint32_t cores; /* cores the nodes may run on */
  /* A core per node (exp_calib_options.pin): the cores of the machine the
   * nodes were pinned on, each node on one (0: not pinned). */
  uint32_t pinned_of;
  /* The machine's load just before: the 1-minute load average (threads
   * runnable or running, other processes'); NAN when unknown. Above
   * EXP_CALIB_BUSY the profile's notes say the machine was not idle. */
  double load_before;
} exp_calib_source;
#define EXP_CALIB_BUSY 0.5

typedef struct {
  unsigned min_rounds;  /* a figure is the median of its last min_rounds */
  unsigned max_rounds;  /* ... rounds, measured until they agree or this */
  double target_spread; /* agree: half their range / median at most this */
  double scale;         /* multiplies each round's length (1: ~40 ms) */
  FILE *log;            /* what was measured, as it is; NULL: nothing */
  /* A core per node: the real source's nodes each pinned to a core of its
   * own, and the profile's machines those cores, one each (pin: true, both
   * I/O passes on the message's path, the preemption figures measured on
   * two cores), with the loopback between two of them as the network
   * between machines (its latency beyond the passes). */
  bool pin;
} exp_calib_options;

/* 5 to 25 rounds, 5%, scale 1, no log. */
void exp_calib_options_default(exp_calib_options *o);
/* Measures through src and returns a cluster profile (caller frees):
 * host_speed, cost, machines {count 1, cores, loopback}, and
 * EXP_PROFILE_ABOUT with every figure, its spread and rounds, every fitted
 * parameter and its spread, the model's predictions of the batches the fit
 * did not use against what they measured ("check"), and notes. NULL with a
 * message in err. */
struct cJSON *exp_calibrate(const exp_calib_source *src, const exp_calib_options *o,
                            char *err, size_t errlen);
/* The real source: two real nodes on loopback (real_probe). Forks: call
 * before any ZeroMQ context or thread exists. 0, or -1 with a message. */
int exp_calib_real_source(exp_calib_source *src, bool pin, char *err, size_t errlen);
/* Stops the probe; 0 when both nodes ended cleanly. */
int exp_calib_real_source_end(exp_calib_source *src);
/* `pslab calibrate`: measures this machine with the real source and writes
 * the profile to path (whole or not at all); the figures go to o->log,
 * problems to log. EXP_EXIT_OK or EXP_EXIT_FAILED. */
int exp_calibrate_file(const char *path, const exp_calib_options *o, FILE *log);
/* `pslab calibrate --workload SPEC --profile PROFILE --out OUT`
 * (experiments/fidelity/step_cost.c): cost.step_s, a worker's own work per
 * step, for SPEC's workload on this machine, and cost.step_s_by_policy, the
 * same under each other policy type of SPEC (its policy and its sweep's
 * "policy" list): SPEC validated on one node of one worker (its sweep
 * replaced by those policies, no step figures, 5 runs a policy and a
 * backend) into OUT's name less ".json" plus ".runs/"; per policy type, the
 * median over its runs of (real CPU - simulated CPU) / steps, at least 0.
 * Writes PROFILE with them and their record (EXP_PROFILE_ABOUT.step) to
 * OUT, whole or not at all, the changes of o (NULL: none) recorded there
 * too. The validation's table and progress go to progress (NULL: none),
 * problems to log. EXP_EXIT_OK or EXP_EXIT_FAILED (also for a refused
 * change, named on log). */
typedef struct {
  /* --set PATH=VALUE changes of SPEC, made before the one-node layout (so
   * that the figures are measured under the model the runs will use, such as
   * cluster.machines.preempt); the layout's own fields (cluster.nodes,
   * cluster.workers_per_node, sweep, repeats) are refused. */
  const char *const *sets;
  size_t n_sets;
  /* Simulate again against the real runs already in OUT's .runs/real/
   * (exp_validate_options.reuse_real) instead of making new ones. */
  bool reuse_real;
} exp_workload_options;
int exp_calibrate_workload(const char *spec, const char *profile, const char *out,
                           const exp_workload_options *o, FILE *log, FILE *progress);
#define EXP_STEP_RUNS 5
/* The per-step figures of such a validation in dir: each run's (real -
 * simulated) cpu_s over the simulated run's steps (its first record's), in
 * v[0 .. *n) (at most EXP_STEP_RUNS), sorted, of the runs of policy type
 * `policy` (a run without a swept policy is static's; NULL: every run); the
 * workload as validated into *workload (caller frees; NULL if the record
 * has none). 0, or -1 with a message naming the file. */
int exp_step_cost_read(const char *dir, const char *policy, double *v, size_t *n,
                       uint64_t *steps, struct cJSON **workload, char *err, size_t errlen);
/* The median of n sorted values (NAN for none). */
double exp_median_sorted(const double *sorted, size_t n);

void exp_runner_options_default(exp_runner_options *o);
/* Runs every run of spec (of o->shard), each in a forked child through its
 * backend's entry (with o->node, as this process's node of it), writing the
 * results in the output directory (created with its parents). A failing run
 * does not stop the others. While it runs, SIGINT and SIGTERM go to every
 * process of the run under way, which it reaps (this process is their
 * subreaper); the interrupted run is not recorded and no other starts.
 * Returns EXP_EXIT_OK, EXP_EXIT_FAILED (a run failed, or the results could
 * not be written), EXP_EXIT_PLOTS, or 128 + the signal when interrupted. */
int exp_run_experiment(const exp_spec *spec, const exp_runner_options *o);

/* -------------------------------------------------------------- merge */

typedef struct {
  const char *out_dir;  /* NULL: results/<name> */
  bool quiet;           /* no closing line (problems are still reported) */
  const char *gnuplot;  /* NULL: "gnuplot" */
  FILE *out;            /* the table; NULL: stdout */
  FILE *log;            /* warnings and errors; NULL: stderr */
} exp_merge_options;

void exp_merge_options_default(exp_merge_options *o);
/* `pslab merge`: joins result directories of one spec (the shards of an
 * experiment) into the output directory, as exp_run_experiment would have
 * written it: spec.json, runs.jsonl sorted by run number, summary.csv, the
 * table on o->out, the plots. One record per run: a successful one over a
 * failed one, the first directory's of two successful ones (with a
 * warning). Returns EXP_EXIT_FAILED having written nothing when the
 * directories' spec.json differ (the message names the first that differs),
 * one cannot be read, or the output directory is one of dirs; having written
 * what there is when runs are in no directory (a warning lists them: "runs
 * 5-7, 12") or failed; else EXP_EXIT_OK or EXP_EXIT_PLOTS. */
int exp_merge_dirs(const char *const *dirs, size_t n_dirs, const exp_merge_options *o);

/* ----------------------------------------------------------- validate */

/* `pslab validate`: a spec run on both backends with the same seeds, and how
 * well the simulator predicted the real backend (fidelity/: the comparison
 * validate_compare.c, the drawing validate_plot.c, the command
 * validate_command.c). */

/* The repeats a validation runs when neither --repeats nor the spec asks
 * for more: the real runs' spread needs several. */
enum { EXP_VALIDATE_REPEATS = 3 };

/* The metrics compared (borrowed, *count of them): time_s, steps_per_s,
 * messages, bytes, local_ratio, quality, loss, time_to_quality_s, each
 * where both records of a run have it as one number (a run without real
 * math has no loss, none without a target a time to quality). */
const char *const *exp_validate_metrics(size_t *count);
/* Of those, the telemetry (borrowed, *count of them): rt_p50_s, rt_p99_s,
 * utilization, queue_p50, queue_p99, messages_per_wakeup, cpu_s,
 * cpu_per_message_s: what says where the backends part. The table shows
 * them as each point's largest gap only. */
const char *const *exp_validate_telemetry(size_t *count);
/* How far apart sim and real are: |log((sim + offset) / (real + offset))|;
 * 0 when equal; infinite when one side only is 0 (or below). */
double exp_validate_gap(double sim, double real, double offset);
/* Appends to a comparison (exp_validate_compare's records, before its
 * ranking) a record per sweep point with telemetry point records: {"kind":
 * "gap", "experiment", "point", "label", "sweep", "metric", "sim", "real",
 * "error", "gap"}, the telemetry metric of the largest gap (counts of
 * messages waiting compared as 1 + the count; ties to the first listed;
 * "gap" null when infinite). False on no memory. */
bool exp_validate_gaps(struct cJSON *comparison);
/* A line per gap record: "  LABEL  largest gap: METRIC ERROR (sim V, real
 * V)", labels padded to one width, after an empty line. */
void exp_validate_print_gaps(FILE *f, const struct cJSON *comparison);
/* (sim - real) / real; 0 when both are 0; NaN when only real is 0. */
double exp_validate_error(double sim, double real);
/* Whether sim lies within the real runs' spread: |sim - real_mean| <= (real_max
 * - real_min) / 2 (plus 1e-9 of the mean, for rounding). 1 yes, 0 no, -1 n/a
 * (fewer than 2 real runs: no spread; or real runs all equal, spread 0, and
 * sim not equal to them: runs that never vary measure no noise to be within,
 * and the error alone tells how close sim is). */
int exp_validate_within(double sim, double real_mean, double real_min, double real_max,
                        size_t real_runs);
/* Compares the run records of the sim backend with those of the real
 * backend (exp_record_new's, as runs.jsonl holds them; borrowed), run k with
 * run k (same "run" number). Returns validate.jsonl's records (caller
 * frees; NULL on no memory), each {"kind", "experiment", "point" (from 1,
 * in order of first appearance), ...}:
 *   "run":   per run that succeeded on both and metric both have: "run",
 *            "repeat", "seed", "label", "sweep", "metric", "sim", "real",
 *            "error" (exp_validate_error; null when undefined), "within"
 *            (sim against the point's real runs; true, false or null);
 *   "point": per sweep point and metric some run of it has on both:
 *            "label", "sweep", "metric", "runs" (its runs), "compared" (of
 *            them, the runs both backends completed with the metric),
 *            "sim" and "real" (means over those), "real_min", "real_max",
 *            "real_spread" (half the range; null below 2), "error" (of the
 *            means), "within" (the sim mean).
 *   "gap":   per sweep point, the telemetry metric farthest off
 *            (exp_validate_gaps);
 *   "ranking": one, last: exp_validate_ranking's.
 * Runs first, by run number, then points, then gaps; metrics in
 * exp_validate_metrics order. "label" is the point's label as the table
 * shows it (the varying sweep paths' labels, "path=label" joined by ", "
 * when several vary). */
struct cJSON *exp_validate_compare(const struct cJSON *sim, const struct cJSON *real);
/* The ranking record of a comparison's time_s point records (borrowed):
 * over every pair of sweep points whose sweeps differ in exactly one swept
 * field, whether the simulated means order them as the real means do.
 * {"kind": "ranking", "experiment", "metric": "time_s", "pairs" (all such
 * pairs), "counted" (judged, and the real runs tell them apart: |real_a -
 * real_b| > real_spread_a + real_spread_b), "agree", "disagree" (counted
 * pairs the simulator orders the same way, and not), "within_spread"
 * (judged, not told apart), "not_judged" (a point with fewer than 2 real
 * runs), "disagreeing": [[a, b], ...] with a and b {"point", "label",
 * "sim", "real"}}. NULL on no memory. */
struct cJSON *exp_validate_ranking(const struct cJSON *comparison, const char *experiment);
/* The ranking's lines: "ranking: A of C pairs agree" and, when there are
 * any, " (W pairs within the real spread not counted, U pairs with fewer
 * than two real runs not judged)"; then a line per disagreeing pair,
 * "  disagree: LABEL (sim T, real T) vs LABEL (sim T, real T)". */
void exp_validate_print_ranking(FILE *f, const struct cJSON *ranking);
/* validate.csv: header kind, point, run, repeat, seed, the sweep paths,
 * label, metric, runs, compared, sim, real, real_min, real_max,
 * real_spread, error, within; a row per record (empty: no value; within
 * yes, no or n/a; the gap and ranking records have no row). False on no
 * memory. */
bool exp_validate_csv(FILE *f, const struct cJSON *comparison);
/* The table: a row per sweep point, labelled as `pslab run`'s table does,
 * "runs" (compared/runs), then per metric some point has (telemetry left
 * out): sim, real (mean ± half the range with 2 or more runs), error (%),
 * within (yes, no, n/a); then each point's largest gap
 * (exp_validate_print_gaps); then a summary row per metric, telemetry
 * included: sweep points, median and max |error| over them, within the
 * spread at how many of those judged; then the ranking's lines
 * (exp_validate_print_ranking). */
void exp_validate_print(FILE *f, const struct cJSON *comparison);
/* The gnuplot script of validate.svg and validate.png: real time_s
 * against simulated time_s, a point per run, a colour per sweep point (up
 * to 8), the line y = x, log axes when the times span more than a decade.
 * NULL with a message when no run record has both times. Caller frees. */
char *exp_validate_plot_script(const struct cJSON *comparison, const char *experiment,
                               char *err, size_t errlen);

typedef struct {
  const char *out_dir;  /* NULL: results/<name>-validate */
  /* Repeats of every sweep point, on both backends; 0: the spec's (after
   * --set), raised to EXP_VALIDATE_REPEATS when it has fewer. */
  uint32_t repeats;
  /* --profile FILE: the same as --set cluster.profile="<FILE made
   * absolute>", after the other overrides; NULL: none. */
  const char *profile;
  /* The real side in network namespaces: netns_script --nodes N [--rate
   * rate] --pslab <pslab> -- SPEC --set ... --out DIR/real, instead of the
   * runner's forked nodes on loopback. Every run must have the same
   * cluster.nodes. */
  bool netns;
  const char *rate;         /* --rate for the script, or NULL */
  /* The script; NULL: scripts/netns-cluster.sh in the nearest folder
   * above the pslab binary that has one. */
  const char *netns_script;
  const char *pslab;        /* the binary the script runs; NULL: this one */
  /* --reuse-real: run the simulated side only and compare it with the real
   * runs an earlier validation of the same spec left in DIR/real/ (records
   * of the same runs as the real backend reads them: exp_record_run_as), to
   * try another profile or simulator against real runs already made. */
  bool reuse_real;
  bool quiet;               /* no progress (failures are still reported) */
  bool force;               /* --force: as exp_runner_options.force, and no work limit */
  double timeout_s;         /* --timeout: as exp_runner_options.timeout_s, both sides */
  double estimate_s;        /* each side's estimate calibrates this long (exp_estimate_spec);
                               0: no estimate */
  const char *gnuplot;      /* NULL: "gnuplot" */
  FILE *out;                /* the table; NULL: stdout */
  FILE *log;                /* progress and errors; NULL: stderr */
} exp_validate_options;

void exp_validate_options_default(exp_validate_options *o);
/* `pslab validate SPEC`: loads the spec at spec_path with sets (--set) for
 * each backend, runs every run with backend sim into DIR/sim/ and with
 * backend real into DIR/real/ (the runner, exp_run_experiment: results
 * directories as `pslab run --backend X --out DIR/X` writes them; the same
 * runs, so the same seeds), then compares them (exp_validate_compare) into
 * DIR/validate.jsonl and DIR/validate.csv, prints the table on o->out and
 * draws DIR/validate.svg and .png (script DIR/validate.gp). Nothing runs
 * when the spec is invalid or --netns cannot be honoured (its script
 * missing, node counts that differ). Returns EXP_EXIT_OK, EXP_EXIT_FAILED
 * (nothing ran, or a run failed on either backend: each is named on log,
 * or a file could not be written) or EXP_EXIT_PLOTS (every run succeeded,
 * but a drawing was not made: gnuplot missing). */
int exp_validate(const char *spec_path, const char *const *sets, size_t n_sets,
                 const exp_validate_options *o);

/* ------------------------------------------------------------- advise */

/* `pslab advise`: which policy and settings run a spec's workload fastest
 * on its cluster, found by simulation (experiments/advise/, docs/advise.md). */

/* The simulator's error advise holds a margin to when no validation is
 * given: above the median |error| of time_s measured after a fresh
 * calibration on each machine of docs/fidelity.md ("How close it gets":
 * 22.4% on a 16-core machine, and 15.4-21.4% on the 2-core VM), so as not
 * to promise more than was measured anywhere. */
#define EXP_ADVISE_DEFAULT_ERROR 0.28
#define EXP_ADVISE_BUDGET_S 60.0 /* --budget's default */

typedef struct {
  const char *out_dir;    /* NULL: results/<name>-advise */
  double budget_s;        /* wall seconds of simulation (0: EXP_ADVISE_BUDGET_S) */
  const char *candidates; /* --candidates FILE, or NULL: pslab's own set */
  uint32_t confirm;       /* --confirm N: the top N on the real backend (0: none) */
  uint32_t jobs;          /* --jobs N: evaluations at a time (0: the number of cores) */
  const char *metric;     /* --metric, or NULL: time_s, or time_to_quality_s */
  /* --fidelity: a `pslab validate` results directory (or its
   * validate.jsonl) whose time_s error is the one the margin is held to;
   * NULL: EXP_ADVISE_DEFAULT_ERROR. */
  const char *fidelity;
  /* --screen: the network model of the first round ("CM02", "LV08",
   * "latency_bandwidth"; "own": the spec's, no screening); NULL:
   * latency_bandwidth, unless the spec's own is it. */
  const char *screen;
  bool quiet;             /* no progress lines */
  const char *gnuplot;    /* NULL: "gnuplot" */
  FILE *out;              /* the table; NULL: stdout */
  FILE *log;              /* progress and errors; NULL: stderr */
} exp_advise_options;

void exp_advise_options_default(exp_advise_options *o);
/* `pslab advise SPEC`: loads the spec (with sets), builds the candidate
 * set, searches it by successive halving on the simulator within the
 * budget, prints the ranked table and writes the results directory
 * (advise.jsonl, advise.txt, winner.json, search.gp/.svg/.png); with
 * confirm, runs the top candidates on the real backend. Returns
 * EXP_EXIT_OK, EXP_EXIT_FAILED (bad spec or input: messages name the
 * field; the search failed; a file not written) or EXP_EXIT_PLOTS. */
int exp_advise(const char *spec_path, const char *const *sets, size_t n_sets,
               const exp_advise_options *o);

#endif
