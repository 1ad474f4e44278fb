/*
 * experiments/runner/: what the files of the runner room share, and what
 * fidelity/ takes from it beyond the door (experiment.h has the runner,
 * its options and `pslab merge`): a results directory as a whole (records
 * kept in run order, spec.json, the end of an experiment, what a resumed
 * one finds there).
 *
 * Not a door: only the files of experiments/ (and their tests) include it.
 * It includes common/; its files also include backends/, results/ and
 * plots/ (spec/ comes through the door).
 */
#ifndef PSLAB_EXPERIMENTS_RUNNER_H
#define PSLAB_EXPERIMENTS_RUNNER_H

#include "experiments/common/common.h"

/* -------------------------------------- results directory (results_dir.c) */

/* The run of runs a record is of: same run number, config and seed; NULL
 * when it is of none (another spec, or not a record). Borrowed from runs. */
const exp_run *exp_record_run(const cJSON *rec, const exp_run_list *runs);
/* The same, for a record the backend named `backend` made: the cluster's
 * fields that backend does not read (the simulator's cost model, say, for
 * the real backend; exp_backend_reads), and cluster.profile, whose figures
 * are compared where they were expanded into the fields, are not compared.
 * So real runs made under one calibration are runs of the same spec under
 * another, as long as what the real backend reads (host_speed: its compute
 * spins flops / host_speed) is the same. NULL for an unknown backend. */
const exp_run *exp_record_run_as(const cJSON *rec, const exp_run_list *runs,
                                 const char *backend);
/* Adds rec (taken) to records, kept sorted by run number (after records of
 * the same number). */
void exp_records_insert(cJSON *records, cJSON *rec);
/* Writes spec (the spec as run, after --set) as DIR/spec.json, through a
 * temporary file renamed over it: what `pslab plot`, --resume and `pslab
 * merge` read back. 0, or -1 with a message. */
int exp_spec_save(const char *dir, const struct cJSON *spec, char *err, size_t errlen);
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

/* ---------------------------------- calibration (run_experiment.c) */

/* A progress report: wall seconds since the run's child was forked, the
 * run's time so far (simulated), the fraction of its steps done (0: set up,
 * no step taken), the CPU seconds the child had used (NaN: not known).
 * Returns true when it has seen enough: the probe ends there. */
typedef bool (*exp_probe_fn)(void *ctx, double wall_s, double time_s, double fraction,
                             double cpu_s);

typedef struct {
  double elapsed_s; /* wall time the probe took */
  double time_s;    /* the run's time_s when it finished in time, else NaN */
  char error[256];  /* why it failed */
} exp_probe_result;

/* Runs run as the runner would, in a forked child but always on the
 * simulator (a real run's simulated twin) and with its output thrown away,
 * for at most budget_s seconds of wall time, calling on_report for every
 * progress report until it returns true. 1: it finished in time; 0: the
 * budget or on_report ended it; -1: it failed (res->error says why). */
int exp_run_probe(const exp_spec *spec, const exp_run *run, double budget_s,
                  exp_probe_fn on_report, void *ctx, exp_probe_result *res);

/* Runs run in a forked child on the simulator, its output thrown away, for
 * at most timeout_s seconds of wall time (0: no limit): its metrics (caller
 * frees), or NULL with the reason in err ("timed out after N s", the
 * backend's error). */
cJSON *exp_run_simulated(const exp_spec *spec, const exp_run *run, double timeout_s,
                         char *err, size_t errlen);

#endif
