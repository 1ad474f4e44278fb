/*
 * experiments/advise/: `pslab advise`, what its files share. The command
 * (advise_command.c) builds a set of candidates from a spec's workload and
 * cluster (candidates.c), ranks them by simulating prefixes of the run in
 * rounds of successive halving (halving.c, with the simulator as the
 * evaluator in evaluate.c), writes the results directory and the
 * recommendation (report.c), and may confirm the top candidates on the real
 * backend (confirm.c). docs/advise.md says what it does and why.
 *
 * Not a door: only the files of this room (and their tests) include it;
 * the command's entry, exp_advise, is declared in experiments/experiment.h.
 */
#ifndef PSLAB_EXPERIMENTS_ADVISE_H
#define PSLAB_EXPERIMENTS_ADVISE_H

#include "experiments/runner/runner.h"

#include <stdbool.h>
#include <stddef.h>

/* ------------------------------------------------- candidates.c */

/* One way of running the spec's workload on its cluster: a whole spec
 * (no sweep, one repeat) with its policy, consistency and cluster roles
 * set. */
typedef struct {
  char *label;   /* "relocate lookahead=100", "static partition=range, ssp staleness=4" */
  cJSON *spec;   /* owned */
  const char *origin; /* "pslab", "spec" (the spec's own policy and sweep), "file" */
  bool trades_quality; /* adv_trades_quality: its training may differ from the spec's */
  bool stop_added;     /* workload.stop_after is advise's (its whole run's steps) */
} adv_candidate;

typedef struct {
  adv_candidate *items;
  size_t count, cap;
  cJSON *skipped; /* [{"label", "reason"}]: candidates the spec's checks refused */
} adv_candidates;

/* What building a candidate set works from. */
typedef struct {
  const char *file, *base_dir; /* the spec's, for its checks */
  const cJSON *spec;           /* the spec as given (after --set) */
  cJSON *base;                 /* the spec without sweep, plots, repeats, policy */
  double nodes, workers_per_node, servers; /* the spec's cluster (servers 0: not given) */
  double steps;                /* workload.steps_per_worker, or 0 */
  bool quality;                /* the workload measures a quality */
} adv_build;

/* Whether spec passes the checks of a spec file; the first reason in why. */
bool adv_spec_ok(const cJSON *spec, const char *file, const char *base_dir, char *why,
                 size_t whylen);
/* Adds spec (taken) as a candidate labelled label, unless the checks
 * refuse it (then it goes to c->skipped) or an equal one is there. */
void adv_candidate_add(adv_candidates *c, const adv_build *b, cJSON *spec, const char *label,
                       const char *origin);
/* Whether candidate spec cand may train otherwise than spec does, and so
 * reach a quality after other steps: all but a static or relocate policy
 * (one copy of every value, read fresh) with spec's consistency, nodes and
 * workers per node. Replicas, sampling, staleness and a different number
 * of workers trade quality for speed; where keys live does not. */
bool adv_trades_quality(const cJSON *cand, const cJSON *spec);
/* "relocate lookahead=100" for a policy object, into b. */
void adv_policy_label(const cJSON *policy, exp_buf *b);
/* A candidate's label: its policy, then what differs from the spec's
 * consistency, workers per node and servers. */
void adv_choice_label(const cJSON *cand, const adv_build *b, exp_buf *out);
/* pslab's own candidates (candidate_sets.c, which docs/advise.md,
 * "The candidates" describes). */
void adv_add_pslab_set(adv_candidates *c, const adv_build *b);
/* The spec's own policy and the points of its sweep over choices, and
 * those of a --candidates file (candidates.c). */
void adv_add_spec_set(adv_candidates *c, const adv_build *b);
int adv_add_file_set(adv_candidates *c, const adv_build *b, const char *path,
                     exp_errors *errs);
/* The base every candidate starts from (the spec without sweep, plots,
 * repeats and policy). Caller deletes. */
cJSON *adv_base_of(const cJSON *spec);

/* The candidate set of spec (the spec file's JSON, after --set; file and
 * base_dir as exp_spec_parse takes them): pslab's own (adv_add_pslab_set), the spec's policy and the points of its sweep over
 * policy, consistency, cluster.workers_per_node and cluster.servers, and
 * those of cand_file (NULL: none). Each is checked as a spec would be;
 * those refused go to out->skipped. 0, or -1 with messages in errs naming
 * the field (no candidate applies; a bad cand_file). Release with
 * adv_candidates_free. */
int adv_candidates_build(const cJSON *spec, const char *file, const char *base_dir,
                         const char *cand_file, adv_candidates *out, exp_errors *errs);
void adv_candidates_free(adv_candidates *c);
/* The hot-key counts worth trying for a workload: the counts of hottest
 * keys that serve 50%, 80% and 95% of the accesses of sample streams
 * (distinct, increasing), into counts (room for 3); how many. 0 when the
 * workload cannot be made or accesses no key. */
size_t adv_hot_key_counts(const cJSON *workload, uint32_t nodes, uint32_t workers_per_node,
                          const char *base_dir, uint64_t counts[3]);

/* --------------------------------------------------- halving.c */

/* How an estimate of the whole run was made from a prefix. */
typedef enum {
  ADV_EST_EXACT = 0, /* not extrapolated: the whole run, a reached target, a bound */
  ADV_EST_SCALED,    /* the prefix's value over its share */
  ADV_EST_TWO,       /* from two prefixes: the rate between them (halving.c) */
} adv_est;

/* Why a prefix's time has no second-half estimate beside its scaled one
 * (adv_score.why; adv_score.half is then 0). */
typedef enum {
  ADV_SCALED_METRIC = 1, /* bytes, messages: the run counts them at its end only */
  ADV_SCALED_SHORT,      /* fewer than ADV_HALF_MIN_STEPS steps per worker */
  ADV_SCALED_NO_HALF,    /* the run reported no half_time_s or last_step_s */
  ADV_SCALED_FLAT,       /* the second half took no time (half_time_s >= last_step_s) */
} adv_scaled;
/* The fewest steps per worker a prefix's second half is extrapolated from. */
#define ADV_HALF_MIN_STEPS 4
/* Why, in words ("the prefix has fewer than 4 steps per worker"). */
const char *adv_scaled_why(int why);
/* An estimate's kind as advise.jsonl names it ("scaled", "two prefixes");
 * NULL for ADV_EST_EXACT. */
const char *adv_est_name(int est);

/* What an evaluation of a candidate on a prefix of the run says. */
typedef struct {
  double value;    /* the metric's estimate for the whole run (lower is better) */
  bool bound;      /* the target quality was not reached in the prefix: value is
                      only a lower bound, and `behind` ranks it */
  bool assumed;    /* time to quality of a candidate that trades no quality
                      (adv_trades_quality), not reached in the prefix: value is
                      the whole run's time, assuming it reaches the target by
                      the run's end as the spec's own training does */
  double behind;   /* with bound: how far from the target (lower is better) */
  double fraction; /* the share of the run the prefix really was (0, 1] */
  double raw;      /* the prefix's own value, not extrapolated (0: not given) */
  int est;         /* adv_est: how value was made from raw */
  double half;     /* with ADV_EST_SCALED: the whole run's time from the prefix's
                      second half (adv_extrapolate), recorded beside value, which
                      ranks; 0: not measured, why says why */
  int why;         /* adv_scaled: why half is 0 */
  double cost_s;   /* the wall time the evaluation took */
  cJSON *detail;   /* metrics to record (taken by the search), or NULL */
} adv_score;
/* Adds to record o what sc says of its second half: "second_half" (its
 * estimate) or "no_second_half" (why not), for an extrapolated sc. */
void adv_half_record(cJSON *o, const adv_score *sc);

/* Evaluates candidate `cand` on a prefix of about `fraction` of the run,
 * within timeout_s seconds of wall time. 0, or -1 with a message (the
 * candidate is then dropped). */
typedef int (*adv_eval_fn)(void *ctx, size_t cand, double fraction, double timeout_s,
                           adv_score *out, char *err, size_t errlen);

typedef struct {
  size_t n;          /* candidates */
  double budget_s;   /* wall seconds the evaluations may take in all */
  double first_fraction; /* 0: 2^-(rounds - 1), the last round at the whole run */
  double min_fraction;   /* the shortest prefix the evaluator makes: a first round
                            too dear for the budget is tried again on prefixes
                            half as long down to it (0: not tried again) */
  const double *floors;  /* each candidate's shortest prefix (NULL: not known): a
                            first round whose first candidate ran on its own is
                            not tried again */
  adv_eval_fn eval;
  void *ctx;
  FILE *log;         /* a line per round; NULL: none */
  size_t jobs;       /* evaluations at a time, each in a forked process of
                        its own (0 or 1: one at a time, in this process; at
                        most ADV_JOBS_MAX) */
  /* Screening (NULL: none): the first round evaluates every candidate with
   * this cheaper evaluator (the simulator under a cheaper network model),
   * and the second re-evaluates its better half on the same prefix with
   * eval (the spec's own model) before the prefixes double. Not used with
   * fewer than 5 candidates (the first prefix would be the whole run). */
  adv_eval_fn screen;
  const char *screen_name, *own_name; /* what each evaluates with, for the
                                         log and the records ("latency_bandwidth") */
} adv_search;
#define ADV_JOBS_MAX 64

typedef struct {
  size_t n;           /* candidates */
  cJSON *evaluations; /* [{"round", "candidate", "fraction", "value", "bound",
                          "behind", "cost_s", "metrics"}], in the order they ran */
  size_t *order;      /* candidates best first (the failed ones last) */
  adv_score *last;    /* each candidate's last score (fraction 0: never or failed) */
  double *spread;     /* each candidate's extrapolation error: the relative change
                         of its estimate between its last two rounds (0 from the
                         whole run); where no change is measured (one prefix), the
                         gap between its scaled and second-half estimates over
                         the scaled one (from_gap); NaN without a second half */
  bool *from_gap;     /* whether spread is that gap */
  int *round;         /* the last round each candidate took part in (-1: none) */
  size_t rounds;      /* rounds done */
  double spent_s;     /* wall time the evaluations took (with jobs, each
                         wave's longest evaluation) */
  bool screened;      /* the first round screened (adv_search.screen) */
  /* The screening against the spec's own model, over the candidates the
   * second round re-evaluated on the same prefix: pairs of them, those
   * the two order alike, and the median ratio own / screen of their
   * values (NaN: no second round). */
  size_t screen_pairs, screen_agree;
  double screen_ratio;
  char stop[160];     /* why the search ended */
} adv_result;

/* Successive halving: every candidate on the first prefix, then the better
 * half (rounded up) on a prefix twice as long, and so on until the whole
 * run, until the budget cannot pay for the next round (its cost predicted
 * from the last), or one candidate leads the others by more than their
 * estimates' extrapolation errors. 0 with r filled (release with
 * adv_result_free), or -1 with a message: no candidate, a budget of 0 or
 * one too small for the first round (the message says how much one round
 * needs), every candidate failed. */
int adv_halving(const adv_search *s, adv_result *r, char *err, size_t errlen);
void adv_result_free(adv_result *r);
/* Whether score a ranks before b. */
bool adv_score_better(const adv_score *a, const adv_score *b);

/* --------------------------------------------------- evaluate.c */

/* The metric a search ranks by. */
typedef struct {
  const char *name;   /* "time_s", "time_to_quality_s", "bytes", "messages" */
  bool to_quality;    /* time_to_quality_s: a prefix may not reach the target */
  bool higher_better; /* the quality's direction (to_quality) */
  double target;      /* the target quality (to_quality) */
} adv_metric;

/* Whether name is a metric advise can rank by (those above). */
bool adv_metric_known(const char *name);

/* The whole run's time from a prefix that is `got` of it (0 < got < 1),
 * took t, had run half its steps at t_half and all of them at t_last (its
 * half_time_s and last_step_s; NaN: not reported), with `steps` steps per
 * worker. sc->value, which ranks, is the prefix's time over its share,
 * t / got. Beside it, sc->half is the prefix's time plus the rest of the
 * run at its second half's pace,
 *   t + (t_last - t_half) x (1 - got) / (got / 2),
 * which counts once what a run pays once at its start and end where t / got
 * counts it again for every prefix's length of the run; but a warm-up that
 * lasts past the prefix's middle makes it misjudge the pace, so it does not
 * rank: the gap between the two is the extrapolation error of a candidate
 * with one prefix (halving.c). sc->half is 0, and sc->why says why, with
 * fewer than ADV_HALF_MIN_STEPS steps per worker, without t_half or t_last,
 * or when the second half took no time. Sets sc->value, est, half, why. */
void adv_extrapolate(double t, double t_half, double t_last, double got, double steps,
                     adv_score *sc);
/* The score of a prefix's metrics m (a run's metrics object) for a
 * candidate that trades quality or not (adv_trades_quality), the prefix
 * being `got` of the run, run by `workers` workers: time to quality exact
 * where the prefix reached the target, assumed (the whole run's time,
 * adv_extrapolate) for a candidate that trades none, else a bound; time_s
 * scaled by the share with its second half's estimate beside it
 * (adv_extrapolate), bytes and messages scaled by the share.
 * 0, or -1 with a message when the metric is missing. */
int adv_score_of(const adv_metric *mt, bool trades, const cJSON *m, double got, double workers,
                 adv_score *out, char *err, size_t errlen);

typedef struct {
  const adv_candidates *cands;
  const char *file, *base_dir; /* the spec's, for exp_spec_parse */
  adv_metric metric;
  const char *screen_model;    /* adv_sim_screen_eval's network model */
} adv_sim_ctx;

/* An adv_eval_fn: ctx is an adv_sim_ctx; the candidate's spec with its
 * workload cut to the prefix (adv_prefix) run on the simulator in a child. */
int adv_sim_eval(void *ctx, size_t cand, double fraction, double timeout_s, adv_score *out,
                 char *err, size_t errlen);
/* The same under ctx's screen_model (cluster.network.model set to it): the
 * search's screening evaluator. */
int adv_sim_screen_eval(void *ctx, size_t cand, double fraction, double timeout_s,
                        adv_score *out, char *err, size_t errlen);
/* The spec's cluster.network.model ("CM02" when not given). */
const char *adv_network_model(const cJSON *spec);
/* The network model the first round screens with, unless the spec's own is it. */
#define ADV_SCREEN_MODEL "latency_bandwidth"
/* The spec cut to about `fraction` of its run: workload.steps_per_worker (at
 * least EXP_ADVISE_MIN_STEPS) scaled; for mf, kge and w2v, whose length is
 * their epochs, the "<n> steps" of workload.stop_after (candidates.c gives
 * every candidate its own steps per worker there: the same run) likewise,
 * below one epoch too, and without math short of the first epoch's end;
 * for a dnn without math, one epoch of fewer examples; else
 * workload.epochs (at least 1) scaled. The share it really is in *got (1
 * when nothing can be cut). Caller deletes. */
cJSON *adv_prefix(const cJSON *spec, double fraction, double *got);
#define EXP_ADVISE_MIN_STEPS 10
/* Whether workload wl's type takes workload.stop_after (mf, kge, w2v). */
bool adv_stops_after(const cJSON *wl);
/* The shortest prefix adv_prefix makes of any candidate: the least of
 * their shortest shares (a candidate whose shortest is longer runs that). */
double adv_min_fraction(const adv_candidates *c);
/* The shortest prefix adv_prefix makes of candidate c. */
double adv_floor(const adv_candidate *c);

/* ----------------------------------------------------- report.c */

/* The recommendation: ranked rows, the margin and the error it is held to. */
typedef struct {
  const adv_candidates *cands;
  const adv_result *res;
  adv_metric metric;
  double target;          /* the target quality (to_quality), else NaN */
  const char *target_from; /* "the spec", "the best static run's final quality" */
  double error;           /* the simulator's error used (0.28) */
  char error_from[200];   /* where that figure comes from */
  double budget_s;
  size_t jobs;            /* evaluations at a time */
  const char *file;       /* the spec file (messages of candidates' checks) */
  const char *base_dir;   /* the spec's directory (winner.json's file paths) */
  const char *own_model;  /* the spec's network model */
  const char *screen_model; /* the first round's, when it screened; else NULL */
} adv_report;

/* The ranking records, one per candidate best first: {"kind": "rank",
 * "rank", "candidate", "label", "value", "low", "high", "bound",
 * "fraction", "round"}; and the margin between the first and the second in
 * *margin (NaN below 2 ranked). Caller deletes. */
cJSON *adv_ranking(const adv_report *rp, double *margin);
/* The network model round (0-based) ran under: the screening's or the
 * spec's (NULL: not named). */
const char *adv_round_model(const adv_report *rp, int round);
/* The table and the lines after it (margin, warning) on f. */
void adv_print(FILE *f, const adv_report *rp, const cJSON *ranking, double margin);
/* {"kind": "advise", ...}: the metric, target, budget, rounds, why the
 * search stopped, the winner, the margin, the error and whether it warns.
 * Caller deletes. */
cJSON *adv_summary(const adv_report *rp, const char *experiment, double margin);
/* Writes DIR/advise.jsonl (the summary, candidates, skipped, evaluations,
 * ranking, and the records of extra: confirmation), DIR/advise.txt (the
 * table), DIR/winner.json and the plot of the search. 0; 1 every file
 * but the drawing (gnuplot missing or failing); or -1: a file not written.
 * Problems go to log. */
int adv_write(const char *dir, const adv_report *rp, const cJSON *ranking, double margin,
              const cJSON *extra, const char *experiment, const char *gnuplot, FILE *log);
/* DIR/search.gp and, when gnuplot is there, search.svg and .png: every
 * evaluation's estimate against its round, a line per candidate of the
 * last round (search_plot.c). 0, or -1 with a message on log. */
char *adv_search_script(const adv_report *rp, const char *experiment);
int adv_draw_search(const adv_report *rp, const char *dir, const char *experiment,
                    const char *gnuplot, FILE *log);

/* ---------------------------------------------------- confirm.c */

/* Runs the top n of ranking on the real backend (one process per node on
 * loopback, as `pslab run --backend real`) into DIR/confirm/, and says
 * whether their real order is the simulated one: {"kind": "confirm",
 * "candidates": [{"label", "sim", "real"}], "held", "calibrated", "note"}.
 * NULL with a message on log when a run failed. */
cJSON *adv_confirm(const adv_report *rp, const cJSON *ranking, uint32_t n, const char *dir,
                   FILE *out, FILE *log);
/* The confirmation's lines on f. */
void adv_print_confirm(FILE *f, const adv_report *rp, const cJSON *rec);

#endif
