/*
 * run/: one experiment run, everything about it that is not transport, time
 * or compute, written once for every backend (as libuv keeps in uv-common.c
 * what src/unix/ and src/win/ share).
 *
 *   setup     the policy configured, the workload created, the key layout,
 *             the hottest keys and the sample distribution: what every node
 *             of a run shares, read-only once made (run_setup);
 *   nodes     the part of each node's ps_node_config the run decides;
 *   workers   one run_worker per worker: its step stream and sampler, both
 *             seeded by the one seed contract (run_worker_seed), driven by
 *             the shared worker loop with the backend's wait, compute and
 *             clock (run_worker_drive);
 *   reports   what one node says about itself at the end: its core's
 *             counters, the sum of the values it owns, its workers' driver
 *             statistics (run_node_report), in memory or as text for a
 *             backend that gathers them over a network;
 *   metrics   the metric table, one entry per metric (name, unit, meaning,
 *             how repeats combine, shown by default), and the reduction of
 *             every node's report into the metrics object a run records;
 *   processes every process a run forks dies with its parent
 *             (run_die_with_parent).
 *
 * A backend (sim/, real/) starts the nodes, runs each worker through
 * run_worker_drive, says what time it is, charges compute, and hands every
 * node's report to run_metrics. Nothing here does I/O (but a worker's trace
 * part and a node's saved parameters, which workloads/ writes for it when
 * the run asks for them), reads a clock or starts a thread; nothing keeps
 * global state but the constant metric table.
 *
 * Arrows: sim/ and real/ include this door; it includes policies/ and
 * workloads/ (and through them model/); experiments/ reads the metric table.
 */
#ifndef PSLAB_RUN_RUN_H
#define PSLAB_RUN_RUN_H

#include "model/ps.h"
#include "policies/policy.h"
#include "workloads/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cJSON;

/* ---------------------------------------------------------------- setup */

/* What a run may use of its machine's memory (run_args.memory). */
typedef struct {
  uint64_t limit;                /* bytes available (0: no check) */
  uint32_t nodes_here;           /* nodes of the run in this memory (0: all) */
  uint64_t per_node, per_worker; /* the backend's own bytes for each */
  uint64_t per_pair;             /* ... and for each ordered pair of nodes that
                                    talk (the simulator's inbox per pair) */
  bool shared_sends;             /* one copy of a message for several nodes
                                    (env.send_shared), not one each */
} run_memory;

/* What a run is made of, as the spec gives it. */
typedef struct {
  const struct cJSON *workload; /* the spec's "workload" object */
  const struct cJSON *policy;   /* the spec's "policy" object */
  /* The spec's "consistency" object ({"model", "staleness"}; NULL: async)
   * and its "stages" list (NULL: one stage, the workload as it is). */
  const struct cJSON *consistency, *stages;
  uint32_t nodes, workers_per_node;
  /* Roles (cluster.servers, cluster.worker_nodes; 0: every node): nodes
   * [0, servers) are servers, nodes [nodes - worker_nodes, nodes) run
   * workers_per_node workers each (ps_layout). */
  uint32_t servers, worker_nodes;
  /* Scaling servers in and out (cluster.scale; n_scale 0: none), in time
   * order; borrowed: must outlive the setup. */
  const ps_scale_step *scale;
  size_t n_scale;
  uint64_t seed;                /* the run's seed */
  /* The key of every message's seal (ps_node_config.secret), which
   * run_node_config hands to every node: random per run, never derived from
   * the seed (which every spec shows). The backend makes it (run_secret_new)
   * or, on a node that learns it at start-up (real/'s ranks but 0), sets it
   * in the node's config itself. */
  uint8_t secret[PS_SECRET_LEN];
  /* The algorithm of the seals (ps_node_config.seal), which run_node_config
   * hands to every node: the backend's choice (run_seal_choose). */
  ps_seal seal;
  const char *base_dir;         /* where the spec is: relative data files are
                                   read from there (NULL: the current one) */
  /* Recording a trace (NULL: none): each worker of rank r writes its part,
   * "<trace_path>.part<r>" (workloads/workload.h, traces), under a temporary name
   * renamed once the worker is done; whoever runs the run merges the parts
   * (wl_trace_merge). Borrowed: must outlive the setup. */
  const char *trace_path;
  /* Saving the trained parameters (NULL: none): once the run is quiet each
   * node writes its owned values as a part into this directory, which must
   * exist (run_params_save_part), and whoever ends the run merges the parts
   * (run_params_merge). Borrowed: must outlive the setup. */
  const char *params_dir;
  /* What the run may use of its machine's memory: run_setup_new estimates
   * the run's memory (run/memory.c) once the workload and layout are known
   * and refuses a run that needs more than `limit`, naming the fields that
   * make it large (limit 0: no check, as --force asks). */
  run_memory memory;
} run_args;

typedef struct run_setup run_setup;

/* Configures the policy, creates the workload, builds the key layout, and
 * when the policy or the workload asks for them, estimates the hottest keys
 * and builds the sample distribution. a's JSON objects must outlive the
 * setup. NULL with a message in err ("policy.<field>: ...", "workload.<field>:
 * ...", or out of memory). */
run_setup *run_setup_new(const run_args *a, char *err, size_t errlen);
void run_setup_free(run_setup *s);

#define RUN_SPARSE_LOOKAHEAD 10 /* sparse's default "lookahead" */

/* Reads a "consistency" object ({"model": "async" | "bsp" | "ssp" | "essp" |
 * "sparse", "staleness": s, "lookahead": l}; NULL: async; bsp is ssp with
 * staleness 0, and takes none; only sparse takes a lookahead, default
 * RUN_SPARSE_LOOKAHEAD) into *out. 0, or -1 with a message in err naming the field
 * (relative to the object), what was expected and what was found. */
int run_consistency_parse(const struct cJSON *json, ps_consistency *out, char *err,
                          size_t errlen);
/* Whether the policy (its settings), the workload and the lookahead allow
 * consistency c: 0, or -1 with a message saying which combination is refused
 * and why. */
int run_consistency_check(ps_consistency c, const ps_policy_settings *settings,
                          bool samples, char *err, size_t errlen);
/* The run's consistency (the spec's, async when it gives none). */
ps_consistency run_setup_consistency(const run_setup *s);

/* The layout every node shares (num_nodes and partition set). */
const ps_layout *run_setup_layout(const run_setup *s);
/* Steps each worker runs (for progress); with stages, the clock every worker
 * ends at (the last stage's closing clock, see below). */
uint64_t run_setup_steps_per_worker(const run_setup *s);
/* The steps worker `rank` takes in the whole run: the workload's steps per
 * worker, or with stages its share of each stage's (run_stage_worker_steps;
 * the jumps of its clock to a stage's end are no steps). */
uint64_t run_setup_worker_steps(const run_setup *s, uint32_t rank);
/* The steps all run_setup_workers workers take: what progress counts to. */
uint64_t run_setup_steps(const run_setup *s);
/* How many of its run_setup_worker_steps worker w has taken, from its clock
 * (a worker that has left the run's clock, PS_CLOCK_DONE, is done). With
 * stages, its clock counted within each stage's own steps: an idle
 * worker's jump to a stage's end is no progress, so that the fraction done
 * moves with the work done (a stage of 1 active worker of 8 does not show
 * 7/8 of it done at its start). For progress lines and the estimate. */
struct run_worker;
uint64_t run_worker_progress(const run_setup *s, const struct run_worker *w);
/* The workload's quality measure, or NULL when it has none (for
 * run_metrics). Borrowed from s. */
const wl_quality *run_setup_quality(const run_setup *s);

/* Fills, over ps_node_config_default, what the run decides in node id's
 * config: id, workers, layout, policy and its JSON, settings, hot keys, the
 * secret (run_args.secret). The backend adds env (and may change stripes).
 * cfg borrows from s. */
void run_node_config(const run_setup *s, uint32_t id, ps_node_config *cfg);
/* Workers node id runs: workers_per_node, or 0 on a server-only node. */
uint32_t run_node_workers(const run_setup *s, uint32_t id);
/* Workers of the whole run. */
uint32_t run_setup_workers(const run_setup *s);

/* Whether the cluster's roles and scaling (a->servers, a->worker_nodes,
 * a->scale) are valid and go with the policy (its settings) and the rest
 * of the run (stages: the spec has "stages"; policy may be NULL): 0, or -1 with a message naming
 * the fields ("cluster.servers: ..."), what was expected and what was found.
 * Refused: a policy that puts keys at the workers' nodes (relocate, nups,
 * adaptive, replicate), or a sampling scheme that localizes what a worker
 * samples (policy.sampling.scheme preloc, pool; read from a->policy), when
 * some worker node is not a server; stages with
 * worker-only or server-only nodes (not implemented). */
int run_roles_check(const run_args *a, const ps_policy_ops *policy,
                    const ps_policy_settings *settings, bool stages, char *err, size_t errlen);

/* --------------------------------------------------------------- stages
 *
 * A run may be a series of stages (the spec's "stages", as FlexPS's tasks):
 * [{"workers": W, "steps": S, "batch": b, "lr": r, "consistency": {...}}].
 *
 *   workers   how many of the cluster's workers are active in the stage (1 to
 *             nodes * workers_per_node); the others idle through it. Which
 *             ones: worker ranks taken round-robin over the nodes, node 0's
 *             first worker, node 1's first, ..., then every node's second,
 *             and so on; a stage of W workers takes the first W of that
 *             order (run_stage_worker_steps). "auto" is resolved before a
 *             run starts (experiments/, the stage scheduler): a backend is
 *             handed counts.
 *   steps     the stage's steps in all, split as evenly as can be over its
 *             active workers (the first S mod W of the order take one more),
 *             so that parallelism is what changes from stage to stage.
 *   batch, lr the workload's own fields, for this stage (workloads that
 *             have them: mf, kge, w2v); the stage's workload is the spec's
 *             with them replaced.
 *   consistency  as the spec's top-level one (run_consistency_parse), which
 *             it replaces for this stage; without it, the top-level one.
 *
 * Parameters stay where they are from one stage to the next (no reload).
 * A stage ends at clock E, the sum over the stages so far of the most steps
 * one of their workers runs plus one: every worker moves its clock to E once
 * its steps are done and its last push acknowledged (an idle one at once)
 * and waits until every worker of the run has (ps_set_clock, ps_clock_wait:
 * the core's clock service), so no step of a stage starts before every step
 * of the one before has ended and its writes are applied, in both backends.
 * (The one clock more: the driver ends a step's clock when it issues its
 * push, before the push is acknowledged, under async consistency; the
 * closing clock is one only a finished worker moves to.) Each stage's stream of a worker is seeded from (run seed,
 * stage) and the worker's rank. */

#define RUN_STAGES_MAX 256
#define RUN_STAGE_CANDIDATES_MAX 33

/* A stage as its spec gives it. */
typedef struct {
  bool auto_workers;       /* "workers": "auto" */
  uint32_t workers;        /* active workers (0 while "auto") */
  uint64_t steps;          /* its steps in all */
  uint64_t max_per_worker; /* the most steps its workload gives one worker */
} run_stage_info;

/* Checks a's "stages" list against its workload, policy, consistency and
 * cluster (a->stages non-NULL), as run_setup_new does, and fills
 * info[0..*n) (room for RUN_STAGES_MAX). allow_auto: whether "workers":
 * "auto" is accepted (the spec may say it; a backend may not). 0, or -1 with
 * a message in err naming the JSON path ("stages[1].lr: ..."), a line for
 * each stage that has a problem (lines separated by '\n'). A workload
 * or policy that is itself invalid is not reported here (it is where it is
 * checked): then 0 with *n = 0. */
int run_stages_check(const run_args *a, bool allow_auto, run_stage_info *info, size_t *n,
                     char *err, size_t errlen);
/* The worker counts the stage scheduler tries for stage st on a cluster of
 * `workers`: 1, 2, 4, ... up to workers, and workers itself, each only when
 * it leaves every worker at least one step and at most st->max_per_worker.
 * Into out (room for RUN_STAGE_CANDIDATES_MAX), ascending; returns how many. */
size_t run_stage_candidates(const run_stage_info *st, uint32_t workers, uint32_t *out);
/* Steps worker `rank` runs in a stage of `steps` steps over `active` workers
 * on nodes x workers_per_node (0: it idles). */
uint64_t run_stage_worker_steps(uint32_t nodes, uint32_t workers_per_node, uint32_t active,
                                uint64_t steps, uint32_t rank);
/* Stages of the run (0 without "stages"). */
size_t run_setup_stages(const run_setup *s);

/* What one worker did in one stage. */
typedef struct {
  uint64_t steps;      /* 0: idle in it */
  double start_s;      /* when it started its first step (after the barrier) */
  double end_s;        /* when its last step ended (its push applied) */
  double wait_s;       /* blocked: at the consistency bound and at the
                          stage's closing barrier */
} run_stage_stats;

/* -------------------------------------------------------------- workers */

/* Fills out with a new random secret (libsodium's randombytes_buf, from the
 * operating system): a run's, for run_args.secret. */
void run_secret_new(uint8_t out[PS_SECRET_LEN]);

/* The name of the environment variable that forces a run's seal. */
#define RUN_SEAL_ENV "PSLAB_SEAL"
/* The algorithm of a run's seals (run_args.seal), chosen once per run by
 * whoever draws its secret: GMAC when every node's CPU makes it
 * (every_node_gmac: ps_seal_gmac_available on each), else SipHash. The
 * environment variable PSLAB_SEAL forces one: "siphash" or "gmac" ("auto",
 * empty or unset: the choice above); for tests and measurements. The
 * choice changes no simulated figure. 0, or -1 with err set for another
 * value, or "gmac" where a node cannot make it. */
int run_seal_choose(bool every_node_gmac, ps_seal *out, char *err, size_t errlen);
/* Whether this node offers GMAC at a rendezvous (every_node_gmac above is
 * the offers of all): its CPU makes it, and PSLAB_SEAL is not "siphash". */
bool run_seal_gmac_offered(void);

/* The seed of worker `rank`'s sampler: the reproducibility contract, here
 * once. (Its step stream is seeded by wl_stream_new from the same pair.) */
uint64_t run_worker_seed(uint64_t run_seed, uint32_t rank);

typedef struct run_worker {
  uint32_t node, index, rank; /* rank = (node - first worker node, the
                                 layout's) * workers_per_node + index */
  ps_worker *handle;          /* borrowed from the node's core */
  wl_stream *stream;
  ps_sampler *sampler;        /* when the workload samples, else NULL */
  int status;                 /* wl_drive's result, once driven */
  wl_driver_stats stats;      /* filled by run_worker_drive (all stages) */
  run_stage_stats *stages;    /* per stage (n_stages: run_setup_stages) */
  size_t n_stages;
  struct wl_trace_writer *trace; /* its part of the trace, when recording */
  char trace_error[256];      /* why recording failed, or "" */
} run_worker;

/* Prepares worker `index` of the node whose core is `core`: its handle, its
 * stream and (when the workload samples) its sampler. 0, or -1 with a
 * message in err; run_worker_free is safe either way. */
int run_worker_init(run_worker *w, const run_setup *s, ps_node *core, uint32_t index,
                    char *err, size_t errlen);
void run_worker_free(run_worker *w);

/* Runs every step of the worker through the shared worker loop (wl_drive):
 * env gives the backend's ctx, wait, compute and now; the sampling callbacks
 * are the run's. With stages, once per stage it is active in, each with the
 * stage's stream and consistency, and through every stage's closing barrier
 * (env.wait waits for the barrier's ticket). With the clock service on, the
 * worker then leaves the run's clock (PS_CLOCK_DONE). Call once, from the
 * thread (or actor) that is the worker. Stores and returns the status (the
 * first failure). */
int run_worker_drive(run_worker *w, const run_setup *s, wl_driver_env env);
/* Why a driven worker failed (status < 0): the trace writer's message when
 * recording failed, else the status's text. */
const char *run_worker_error(const run_worker *w);
/* What ticket t of w waits for, for the error of a wait that passed its
 * deadline (both backends): "ticket T (N operations pending; its PULL of
 * key K, whose home is node H)", as the core tells it. */
void run_describe_wait(ps_worker *w, ps_ticket t, char *out, size_t n);

/* -------------------------------------------------------------- reports */

/* One worker's driver statistics, as a node reports them. */
typedef struct {
  uint64_t steps, accesses, pushed_floats, samples;
  double pushed_sum;   /* every float it pushed, summed */
  double sample_tv_distance, sample_reuse_factor; /* when samples > 0 */
  double start_s;
  double *epoch_end_s; /* owned by the report; `epochs` of them */
  size_t epochs;
  wl_epoch_quality *epoch_quality; /* with real math, `epochs` of them; else NULL */
  double eval_s;       /* time spent evaluating held-out data */
  uint64_t eval_keys, eval_replica_keys; /* keys it read; of them, from replicas */
  double op_wait_s;    /* waiting for its steps' pulls and pushes */
  double wait_s;       /* bounded consistency: time blocked at the clock bound, */
  uint64_t clock_waits; /* steps that blocked, */
  uint64_t gap_hist[PS_CLOCK_BUCKETS]; /* and clocks ahead of the run's */
  run_stage_stats *stages; /* owned; n_stages of them (0 without stages) */
  size_t n_stages;
  wl_eval_point *evals; /* with held-out data, every evaluation (owned); else NULL */
  size_t n_evals;
  /* When it had run half the run's steps per worker: the end of its middle
   * step (for an odd count, midway between the ends of the two middle
   * ones); NaN when it did not get there (fewer steps; a run with stages;
   * a time before start_s, as 0 in a report made by hand: none). */
  double half_s;
  double last_s; /* the same for its last step (the run's steps per worker) */
} run_worker_report;

/* Threads as the operating system ran them: the turns they got on a core
 * (scheduled in, after a sleep or after waiting for a core), the seconds
 * they ran, and the seconds they waited runnable for a core. The real
 * backend reads the kernel's schedstat of each thread; the simulator counts
 * its run queue (cluster.machines.scheduler "run_queue"). No turns: not
 * measured (no such thread, no run queue, or no schedstat). blocked_s: the
 * seconds it slept (neither ran nor waited for a core) over what was
 * measured, for the workers over their steps (their waits for messages);
 * 0 for the I/O threads. */
typedef struct {
  double turns, ran_s, wait_s, blocked_s;
} run_thread_sched;

/* sum += x, field by field (threads counted together). */
void run_thread_sched_add(run_thread_sched *sum, const run_thread_sched *x);

/* What one node says about itself once the run is quiet. */
typedef struct {
  ps_node_stats stats;  /* its core's counters */
  /* Its load as a server (when it is one: server true), keys served over
   * time (n_series buckets of bucket_s, owned), and as a client the response
   * times of its requests by the server that answered (rt[s] for servers
   * s < n_rt, every server of the layout; owned). */
  bool server;
  uint64_t owned_keys;  /* keys it owns at the end (ps_node_owned_keys) */
  ps_server_load load;
  uint64_t *series;
  size_t n_series;
  double bucket_s;
  ps_rt_stats *rt;
  uint32_t n_rt;
  double owned_sum;     /* every float of every value it owns, summed */
  uint64_t in_transfer; /* keys still on their way to it (0 once quiet) */
  /* The replica check (run_replica_check): its all-reduce replicas
   * compared with their owners' values once quiet, and the largest
   * difference relative to the value's magnitude (0 when none). */
  uint64_t replicas_checked;
  double replica_max_diff;
  /* The final evaluation (run_final_eval), once the run is quiet, from the
   * owners' values: the whole held-out data's sums, in the report of the
   * node that made it (final_done). */
  bool final_done;
  double final_num, final_den;
  uint64_t dropped;     /* frames its transport dropped (bad or stray) */
  /* CPU seconds the node spent over the run, as its backend measures them
   * (the real backend: its process's CPU time; the simulator: its actors'
   * cost-model charges and flops at the host's speed). */
  double cpu_s;
  /* Times the node's I/O thread had nothing to do, slept and woke: the real
   * backend's ZeroMQ I/O thread's voluntary context switches, the
   * simulator's I/O actor's (0 where it has none: without placement). */
  double io_wakeups;
  /* CPU seconds of the node's I/O thread: the real backend's ZeroMQ I/O
   * thread's (the kernel's schedstat, else its utime and stime), the
   * simulator's I/O actor's charges (0 where it has none). */
  double io_cpu_s;
  /* How the operating system ran the node's threads: its I/O thread and
   * its workers' threads (together). */
  run_thread_sched io_sched, worker_sched;
  /* The real backend's straggler emulation (real/throttle.c), left 0 like
   * dropped: whether the node is a straggler, the data messages its
   * throttle delayed and the seconds it added. */
  bool throttling;
  uint64_t throttled;
  double throttle_s;
  run_worker_report *workers; /* in index order; owned */
  uint32_t n_workers;
} run_node_report;

/* Starts the report of the node whose core is `core` (counters, owned sum)
 * with room for n_workers workers, which run_report_worker fills; dropped is
 * left 0. homed: the keys homed on each home node of the core's layout
 * (ps_layout_homed_counts), which a caller holding many nodes counts once
 * for all; NULL: the node counts its own (a pass over the key space).
 * PS_OK or PS_ERR_NOMEM (then *r is empty). */
int run_report_make(run_node_report *r, ps_node *core, uint32_t n_workers,
                    const uint64_t *homed);
/* The replica check, once the run is quiet (run/replica_check.c). A node's
 * owned values of the keys it mirrors to all-reduce replicas, as bytes that
 * may travel to other nodes (*buf malloc'd; NULL and 0 when none). PS_OK or
 * PS_ERR_NOMEM. */
int run_replica_owned(ps_node *core, uint8_t **buf, size_t *len);
/* Compares the node's replicas with the owners' values in owned (every
 * node's run_replica_owned bytes, concatenated) and sets r's
 * replicas_checked and replica_max_diff. Replicas whose owner sent no value
 * (synced through the owner) are not compared. PS_OK, PS_ERR_NOMEM, or
 * PS_ERR_INVAL (bytes that are not such records). */
int run_replica_check(run_node_report *r, ps_node *core, const uint8_t *owned, size_t len);
/* The final evaluation, once the run is quiet (run/final_eval.c): the
 * whole held-out data evaluated on the owners' values, the model as a
 * whole whatever replicas or relocations the policy made. A node's owned
 * values of the keys it reads, as bytes that may travel to the node that
 * evaluates (*buf malloc'd; NULL and 0 when none, or when the workload
 * measures no quality). PS_OK or PS_ERR_NOMEM. */
int run_final_part(const run_setup *s, ps_node *core, uint8_t **buf, size_t *len);
/* Evaluates from parts (every node's run_final_part bytes, concatenated)
 * into r's final_done, final_num and final_den (keys in no part hold
 * zeros: never written). PS_OK (final_done false when the workload
 * measures no quality), PS_ERR_NOMEM or PS_ERR_INVAL (bytes that are not
 * such records, a value of the wrong length). */
int run_final_eval(const run_setup *s, const uint8_t *parts, size_t len, run_node_report *r);
/* Copies driven worker w's statistics into the report, at w->index. PS_OK,
 * PS_ERR_INVAL (index out of range) or PS_ERR_NOMEM. */
int run_report_worker(run_node_report *r, const run_worker *w);
void run_report_free(run_node_report *r);
/* The report as one line of JSON text (malloc'd), every number exact, for a
 * backend that gathers reports over a network; NULL on no memory. */
char *run_report_encode(const run_node_report *r);
/* Reads text[0..len) written by run_report_encode. 0, or -1 with a message
 * in err (then *r is empty). */
int run_report_decode(const char *text, size_t len, run_node_report *r, char *err,
                      size_t errlen);

/* ---------------------------------------------------- saved parameters */

/* Once the run is quiet: writes the values the node whose core is `core`
 * owns as its part of the run's params_dir (workloads/workload.h, saved
 * parameters). 0 (also when the run saves none), or -1 with a message. */
int run_params_save_part(const run_setup *s, ps_node *core, uint32_t node, char *err,
                         size_t errlen);
/* Once every node's part is written: merges them into params.bin and the
 * workload's own files in params_dir, removing the parts. 0 (also when the
 * run saves none), or -1 with a message (the parts are then removed). */
int run_params_merge(const run_setup *s, char *err, size_t errlen);
/* Removes whatever parts of the run's params_dir there are (a run that
 * failed keeps none). */
void run_params_discard(const run_setup *s);

/* -------------------------------------------------------------- metrics */

/* How a metric's values over the repeats of one sweep point combine. */
typedef enum {
  RUN_COMBINE_MEAN = 0, /* mean, with standard deviation and 95% interval */
  RUN_COMBINE_MAX,      /* the largest */
  RUN_COMBINE_SUM       /* the total */
} run_combine;

/* Where a metric is shown without being asked for. */
enum {
  RUN_SHOW_TABLE = 1u,   /* a column of the table printed at the end */
  RUN_SHOW_SUMMARY = 2u  /* a column of summary.csv (with _sd and _ci95
                            columns when it combines by its mean) */
};

struct run_totals; /* run/metrics.c: every node's report, summed */

typedef struct {
  const char *name;    /* as in runs.jsonl */
  /* Unit of its values: "s", "B" (bytes), "steps/s", "clocks", "share" (a
   * fraction from 0 to 1), or "" (a count, or a plain number). */
  const char *unit;
  const char *label;   /* a few words for an axis: "time", "throughput" */
  const char *meaning; /* one or two sentences for the reference */
  const char *when;    /* when a run has it: NULL for every run */
  run_combine combine;
  bool list;           /* a list, one value per epoch: tables, the summary
                          and plots use its mean */
  unsigned show;       /* RUN_SHOW_* */
  /* How run_metrics computes it from the totals; false: absent from this
   * run. Both NULL: not computed here (wall_s: the runner adds it). */
  bool (*value)(const struct run_totals *t, double *out);
  size_t (*values)(const struct run_totals *t, const double **out);
  /* A list of objects instead of numbers (list is true; stages): appends
   * them to `list`; false on no memory. None appended: absent. */
  bool (*objects)(const struct run_totals *t, struct cJSON *list);
} run_metric;

/* Every metric, in the order results show them; *count of them. */
const run_metric *run_metric_table(size_t *count);
/* The metric named `name`, or NULL. */
const run_metric *run_metric_find(const char *name);

/* The metrics of a run, from every node's report (nodes[n], in rank order),
 * as the JSON object runs.jsonl records: each metric of the table whose
 * value applies, in table order. time_s is the backend's (simulated time
 * when the run went quiet, or wall-clock time). quality: the workload's
 * (run_setup_quality), or NULL when it measures none. NULL with a message in
 * err on no memory. */
struct cJSON *run_metrics(const run_node_report *nodes, uint32_t n, double time_s,
                          const wl_quality *quality, char *err, size_t errlen);

/* ----------------------------------------------------------- stragglers
 *
 * A straggler's time line (cluster.stragglers, both backends): in each
 * phase [from_s, until_s) of the run's time (simulated, or wall-clock from
 * the start barrier) the node's cores run at speed_factor of their speed
 * and its link at bandwidth_factor of its bandwidth; outside every phase at
 * full speed and bandwidth. A node's phases come in time order and do not
 * overlap. These are pure functions of the phases (no clock is read here):
 * the simulator changes SimGrid's speeds at the boundaries, the real
 * backend stretches its server's and workers' time by them. */

typedef struct {
  double from_s, until_s;  /* seconds; until_s INFINITY: to the end of the run */
  double speed_factor;     /* > 0 */
  double bandwidth_factor; /* > 0 */
} run_phase;

/* The speed (bandwidth false) or bandwidth factor in force at time t: the
 * factor of the phase holding t, 1 outside every phase. */
double run_phase_factor(const run_phase *p, size_t n, double t, bool bandwidth);
/* How long work that takes work_s seconds at full speed takes when it starts
 * at t0 on cores whose speed follows the phases (the work done in dt is
 * factor x dt, as SimGrid runs an execution through speed changes). work_s
 * when n is 0; INFINITY never (factors are > 0). */
double run_phase_stretch(const run_phase *p, size_t n, double t0, double work_s);

/* -------------------------------------------------------------- processes */

/* Call in a forked child first thing, with the parent's pid taken before
 * fork(): the child is killed (SIGKILL) when its parent exits, and exits at
 * once if the parent is gone already (child_process.c). Every process a run
 * forks calls it, so none outlives `pslab run`. */
void run_die_with_parent(pid_t parent);

#endif
