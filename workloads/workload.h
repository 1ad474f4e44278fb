/*
 * workloads/: streams of steps for workers, and the one worker loop (driver).
 *
 * A workload is created once from its JSON object and is read-only afterwards
 * (shared by all workers of a run, also across threads). Each worker draws its
 * steps from its own stream, seeded by the caller. The driver runs one
 * worker's steps against its ps_worker: it signals each step's keys as an
 * intent `lookahead` steps ahead, pulls the reads, waits, charges compute,
 * pushes the writes and advances the clock. A backend supplies only how to
 * wait for a ticket, how to charge compute, and what time it is.
 */
#ifndef PSLAB_WORKLOADS_WORKLOAD_H
#define PSLAB_WORKLOADS_WORKLOAD_H

#include "model/ps.h"

#include <stdio.h>

struct cJSON;

typedef struct wl_workload wl_workload;
typedef struct wl_stream wl_stream;

/* One step of one worker. The arrays belong to the stream and stay valid
 * until the stream draws WL_STEP_KEEP more steps (or `keep` more, see
 * wl_stream_keep). */
#define WL_STEP_KEEP 4096
_Static_assert(WL_STEP_KEEP >= PS_MAX_LOOKAHEAD + 2,
               "a stream keeps the steps the longest lookahead needs");
typedef struct {
  const ps_key *reads;
  size_t n_reads;
  const ps_key *writes;
  size_t n_writes;
  size_t n_samples; /* keys the step samples (see wl_sample_distribution) */
  double flops;   /* compute cost of the step */
  /* The workload's own items of the step (e.g. the indices of the ratings
   * or triples of its minibatch), which its math reads; kept as long as the
   * keys. NULL and 0 for a workload without math. */
  const uint64_t *items;
  size_t n_items;
} wl_step;

/* Where a workload runs: what its data split and its paths depend on. */
typedef struct {
  uint32_t nodes;            /* cluster size (>= 1) */
  uint32_t workers_per_node; /* >= 1; worker ranks are node * this + index */
  const char *base_dir;      /* relative file names are taken from here
                                (the spec's directory); NULL: the current one */
} wl_context;

/* Creates a workload from its JSON object ("type": "zipf", ...) for the
 * cluster ctx describes. Data files it names are read here, once; the
 * workload is read-only afterwards. NULL on error, with a message in err
 * naming the field (relative to the workload object), what was expected and
 * what was found, or the file, its line and what was wrong. */
wl_workload *wl_create(const struct cJSON *json, const wl_context *ctx, char *err,
                       size_t errlen);
void wl_free(wl_workload *wl);
/* From now on (keep) or no longer, Zipf samplers' alias tables are built
 * once per key count and skew and kept for the life of the process, shared
 * read-only by every workload it creates and inherited by the children it
 * forks: for a parent that creates the same workload many times, itself
 * and in forked runs (`pslab advise`). Draws are unchanged: a table is a
 * function of its key count and skew. At most 8 tables are kept. Likewise
 * workloads: the first made of an object (less "eval_every" and
 * "stop_after") on a cluster is kept, and every later one made of an equal
 * object on the same cluster shares its data (read files, indexes,
 * generated ratings) instead of reading and building them again; at most 8
 * are kept. Turning it off frees them all, so no workload created meanwhile
 * may be left. */
void wl_keep_tables(bool keep);
/* The key space the workload uses: tables and their value lengths (fills
 * num_tables and tables; the caller sets nodes and partition). */
void wl_tables(const wl_workload *wl, ps_layout *layout);
/* Steps each worker runs, and how many make an epoch. */
uint64_t wl_steps_per_worker(const wl_workload *wl);
uint64_t wl_steps_per_epoch(const wl_workload *wl);
/* Steps per worker between held-out evaluations besides those at each
 * epoch's end ("eval_every"), counted from each epoch's start; 0: at epoch
 * ends only. */
uint64_t wl_eval_steps(const wl_workload *wl);

/* Whether steps draw samples (negative samples, as in word2vec) besides
 * their reads and writes. */
bool wl_samples(const wl_workload *wl);
/* The distribution samples are drawn from: keys *first .. *first + *count - 1
 * (one table) with weights *weights (count of them, malloc'd: the caller
 * frees; NULL means uniform). PS_OK, PS_ERR_INVAL when steps draw no
 * samples, or PS_ERR_NOMEM. */
int wl_sample_distribution(const wl_workload *wl, ps_key *first, uint64_t *count,
                           double **weights);

/* The n keys the workload accesses most, hottest first, into out (room for
 * n); returns how many it found (fewer when fewer keys are ever accessed), or
 * 0 on no memory. From the data when the type knows its access counts
 * (entity degree, word frequency); otherwise an estimate from sample streams
 * of every node with a fixed seed. The same workload gives the same keys. */
size_t wl_hot_keys(const wl_workload *wl, size_t n, ps_key *out);

/* ------------------------------------------------------------ real math */

/* Whether steps compute: the driver then hands the step its pulled values
 * and pushes the deltas it returns (math "real"), instead of pushing +1.0
 * to every float (no math, or math "none"). */
bool wl_math(const wl_workload *wl);

/* What a computing workload measures about the model. */
typedef struct {
  const char *name;   /* "rmse", "mrr", "hits10", "spearman", "analogy", "mse" */
  const char *label;  /* its words on an axis or a table: "RMSE", "Hits@10" */
  bool higher_better; /* mrr: true; rmse: false */
  bool sqrt;          /* quality = sqrt(num / den) (RMSE), else num / den */
  bool has_target;    /* the spec set workload.target_quality */
  double target;
} wl_quality;
/* The workload's quality measure; false when it has none (no math, or no
 * held-out data). */
bool wl_quality_info(const wl_workload *wl, wl_quality *out);
/* The table of quality measures every workload type takes its own from
 * (name, label, direction; no target): *count of them. */
const wl_quality *wl_quality_measures(size_t *count);
/* The measure called name in that table, or NULL. */
const wl_quality *wl_quality_find(const char *name);
/* The measure a workload made of json would evaluate (wl_quality_info's,
 * should it have held-out data), told from the object alone, without
 * reading its data: for results drawn from run configs. NULL for a type
 * without a quality measure, an unknown type, or "math": "none". */
const wl_quality *wl_quality_of(const struct cJSON *json);

/* The final evaluation of a run (run/): the whole held-out data at once,
 * as one worker of one would evaluate it. wl_eval_keys_all: the keys it
 * reads (malloc'd into *keys, *n of them; the caller frees). wl_eval_all:
 * its sums (which wl_quality turns into the quality) from their values,
 * vals + off[i] holding key i's value with its initial value added
 * (wl_add_initial). PS_OK, PS_ERR_INVAL (no quality measure) or
 * PS_ERR_NOMEM. */
int wl_eval_keys_all(const wl_workload *wl, ps_key **keys, size_t *n);
int wl_eval_all(const wl_workload *wl, const ps_key *keys, size_t n, const float *vals,
                const size_t *off, double *num, double *den);

/* Parameters are the stored value plus an initial value that is a fixed
 * function of the key (the store starts every value at zero and only ever
 * adds pushes): adds key k's initial value to val (len floats). No-op for
 * a workload without math. */
void wl_add_initial(const wl_workload *wl, ps_key k, float *val, uint32_t len);

/* A stream for one worker on `node` (worker_rank is global over the cluster).
 * Its generator is seeded from (seed, worker_rank), so the run's seed may be
 * passed to every worker. NULL on no memory or node >= num_nodes. */
wl_stream *wl_stream_new(const wl_workload *wl, uint32_t node,
                         uint32_t worker_rank, uint64_t seed);
void wl_stream_free(wl_stream *s);
/* Keeps only the last `steps` steps' arrays valid (1 <= steps <= WL_STEP_KEEP)
 * instead of WL_STEP_KEEP, so the stream holds `steps` steps' keys, not 4096
 * (wl_drive asks for lookahead + 2). Allocates the step storage: call before
 * the first wl_next_step. PS_OK, PS_ERR_INVAL (steps out of range, or steps
 * were drawn under a smaller guarantee) or PS_ERR_NOMEM. */
int wl_stream_keep(wl_stream *s, size_t steps);
/* Ends the stream after `steps` steps in all (or at its own end, if that
 * comes first): a stage of a run takes only its share of a worker's steps.
 * Call before drawing. */
void wl_stream_limit(wl_stream *s, uint64_t steps);
/* Draws the next step; false when the worker has no more steps (or when the
 * step storage cannot be allocated: call wl_stream_keep first to tell). */
bool wl_next_step(wl_stream *s, wl_step *out);

/* ------------------------------------------------------------------ files */

/* Opens path for reading when it is a regular file, never waiting on a FIFO
 * that stands in its place (it is opened without blocking and checked again
 * once open). Returns the stream (its size in *size, when size is given), or
 * NULL with *kind naming what the path is instead ("a FIFO", "a directory",
 * "a character device", ...), or NULL with *kind NULL and errno saying why
 * it cannot be read. The caller words the message: workloads/ and
 * experiments/ each open every file they read through it. */
FILE *wl_fopen_regular(const char *path, size_t *size, const char **kind);

/* ----------------------------------------------------------------- driver */

typedef struct {
  void *ctx;
  /* Block until ticket t of worker w completes (ps_worker_done): PS_OK; or
   * a negative ps_status when it never will (a peer died): the driver then
   * stops and returns it. */
  int (*wait)(void *ctx, ps_worker *w, ps_ticket t);
  /* Charge `flops` of computation to this worker. math_done: the step's
   * real math already ran on this thread (a backend on real time then need
   * not spin for it; the simulator charges it all the same). */
  void (*compute)(void *ctx, double flops, bool math_done);
  /* Real math: the step added initial values to `floats` pulled floats
   * (before its math; wl_add_initial). Called once a step, before compute;
   * NULL: not told (a backend on real time spent that time already). */
  void (*initial)(void *ctx, uint64_t floats);
  /* Current time in seconds (simulated or wall). */
  double (*now)(void *ctx);
  /* Sampling management (policies' ps_sampler_*_cb), for steps that draw
   * samples; NULL when the workload draws none. Called with sample_ctx.
   * prepare: n samples for a later pull, named by *handle (PS_OK or a
   * negative ps_status). pull: as ps_sample_pull, keys into keys[n] and
   * values into vals. stats: the sampler's conformity, at the end. */
  void *sample_ctx;
  int (*sample_prepare)(void *sample_ctx, size_t n, uint64_t *handle, double now);
  int (*sample_pull)(void *sample_ctx, uint64_t handle, ps_key *keys, size_t n, float *vals,
                     size_t vals_len, ps_ticket *ticket, double now);
  void (*sample_stats)(void *sample_ctx, double *tv_distance, double *reuse_factor);
  /* Trace recording (NULL: none): called once per step, after its samples
   * are pulled and before its push, with the worker's clock, the step and
   * the keys it sampled. A negative ps_status stops the run. */
  void *trace_ctx;
  int (*trace_step)(void *trace_ctx, int64_t clock, const wl_step *st,
                    const ps_key *samples, size_t n_samples);
  /* The worker's place, for its share of held-out evaluation. */
  uint32_t rank, workers;
  /* Consistency (zero: async, no clock bound). A bounded model needs the
   * node's clock service: the worker then waits at each step's start until
   * the run's clock allows it (ps_clock_wait(c - staleness), with the
   * step's keys for SPARSE), and its push completes before its clock ends.
   * With staleness 0 (BSP; not SPARSE) a clock is a superstep: the worker
   * also waits, before it pushes, until every worker has done the clock's
   * reads (ps_end_reads), so every read sees exactly the earlier clocks. */
  ps_consistency consistency;
  /* Steps whose ends the driver times into stats->mark_s (0: none): the
   * run's middle steps and its last, for run_worker_report.half_s and
   * last_s. Reading the clock changes nothing in the run. */
  uint64_t mark_steps[3];
} wl_driver_env;

/* One epoch's training loss and held-out quality, as one worker saw them:
 * sums that add up over workers (wl_quality says how num/den become the
 * quality). */
typedef struct {
  double loss;      /* the epoch's training loss, summed over its examples */
  double examples;  /* examples the loss is over */
  double q_num, q_den; /* this worker's share of the held-out evaluation */
} wl_epoch_quality;

/* One held-out evaluation of one worker: when (its training time: the
 * time from which evaluation so far is taken out) and its share's sums. */
typedef struct {
  double at_s;
  double q_num, q_den;
} wl_eval_point;

typedef struct {
  uint64_t steps;
  uint64_t accesses;       /* keys read plus keys written (samples: both) */
  uint64_t samples;        /* keys sampled (read, then pushed as writes) */
  double sample_tv_distance, sample_reuse_factor; /* env.sample_stats's */
  uint64_t pushes;         /* keys pushed (each adds 1.0 to every float) */
  uint64_t pushed_floats;  /* floats pushed: the sum of the pushed keys' lengths */
  double pushed_sum;       /* with real math: the floats pushed, summed (in
                              double); 0 without, where each is 1.0 */
  double start_s, end_s;
  double *epoch_end_s;     /* malloc'd, one per finished epoch; caller frees */
  size_t epochs;
  /* With real math: one per finished epoch (malloc'd; caller frees), else
   * NULL. epoch_end_s then leaves out the time spent evaluating. */
  wl_epoch_quality *epoch_quality;
  double eval_s;           /* time spent in held-out evaluation */
  /* With real math and held-out data: every evaluation, in order (at each
   * epoch's end, and every wl_eval_steps steps between), malloc'd (caller
   * frees), else NULL. */
  wl_eval_point *evals;
  size_t n_evals;
  /* Keys the evaluations read, and how many of them this node's replicas
   * served (each holding its node's updates and the synced rest) rather
   * than their owners. */
  uint64_t eval_keys, eval_replica_keys;
  double op_wait_s;        /* time spent waiting for the steps' pulls and pushes
                              to complete (evaluation's left out) */
  /* Bounded consistency: time spent blocked at the clock bound, how many
   * steps blocked, and at each step's start how far the worker's clock was
   * ahead of the run's (gap_hist[i]: i clocks; the last bucket: that many
   * or more). */
  double wait_s;
  uint64_t clock_waits;
  uint64_t gap_hist[PS_CLOCK_BUCKETS];
  /* When step env.mark_steps[i] ended (its push sent, as a step's clock
   * ends); NaN when the worker did not reach it. */
  double mark_s[3];
} wl_driver_stats;

/* Runs all of the stream's steps on w. A step's samples are prepared while
 * the step before runs (for the first, at its start), pulled with its reads
 * and pushed with its writes. Without math, every push adds 1.0 to each
 * float of each written (or sampled) key, so after a run the sum over all
 * values equals the sum of value lengths of all pushed keys. With math, the
 * step's math turns the pulled values (initial values added) into the
 * deltas pushed, and at each epoch's end (and every wl_eval_steps steps) the
 * worker evaluates its share of the held-out data by pulling the keys it
 * needs. lookahead <= PS_MAX_LOOKAHEAD (a step's
 * keys must outlive its intent and its push, which completes during the next
 * step). Returns PS_OK, PS_ERR_INVAL (lookahead too large, the stream
 * already drew steps under a smaller wl_stream_keep, or a step samples and
 * env has no sampling), PS_ERR_NOMEM, or the
 * first error of a core operation or of env->wait. Fills *stats, also on error (the caller
 * frees stats->epoch_end_s, stats->epoch_quality and stats->evals). */
int wl_drive(ps_worker *w, wl_stream *s, const wl_driver_env *env,
             uint32_t lookahead, wl_driver_stats *stats);

/* ------------------------------------------------------ saved parameters
 *
 * The trained parameters of a run (`pslab run --save-params DIR`), gathered
 * from their owners once the run is quiet. Each node writes the values it
 * owns as "DIR/params.part<node>"; whoever holds the run's workload merges
 * the parts into DIR/params.bin (every key of every table, initial values
 * added: the values a pull would return) and the workload's own files (w2v:
 * vectors.txt in word2vec's text format; mf: factors as CSV; kge:
 * embeddings as TSV; dnn: a .npy per tensor). Both forms are documented in
 * experiments/SPEC.md ("Saved parameters"):
 *
 *   "PSLPARAM"  8 bytes
 *   u32 version (1), u32 tables (T)
 *   T x { u64 first key, u64 keys, u32 value_len, u32 0 }
 *   table by table, key by key from its first: value_len float32
 *
 * every integer and float little-endian. */

#define WL_PARAMS_MAGIC "PSLPARAM"
#define WL_PARAMS_FILE "params.bin"

typedef struct wl_params_part wl_params_part;

/* Starts node's part in dir ("<dir>/params.part<node>", written as
 * "<...>.tmp" until closed). NULL with a message in err. */
wl_params_part *wl_params_part_open(const char *dir, uint32_t node, char *err, size_t errlen);
/* Adds key k's stored value (len floats); part is a wl_params_part (the
 * shape of ps_node_owned_each's fn). A write that fails is reported by
 * close. */
void wl_params_part_add(void *part, ps_key k, const float *value, uint32_t len);
/* Ends the part: keep renames it into place, else it is removed. Frees p.
 * 0, or -1 with a message in err (then nothing is kept). */
int wl_params_part_close(wl_params_part *p, bool keep, char *err, size_t errlen);

/* Joins the parts of nodes 0..nodes-1 in dir into dir/params.bin and the
 * workload's own files (each under a temporary name, renamed once
 * complete), then removes the parts. A key in no table, of the wrong length
 * or owned by two nodes is an error. 0, or -1 with a message in err. */
int wl_params_merge(const wl_workload *wl, const ps_layout *layout, const char *dir,
                    uint32_t nodes, char *err, size_t errlen);
/* Removes whatever parts of nodes 0..nodes-1 are in dir (and their .tmp). */
void wl_params_remove_parts(const char *dir, uint32_t nodes);

/* A params.bin read back. */
typedef struct {
  uint32_t num_tables;
  ps_table tables[PS_MAX_TABLES];
  float *values; /* table by table, key by key */
  uint64_t n_floats;
} wl_params;

/* Reads a params.bin. 0, or -1 with a message in err naming the file. */
int wl_params_load(const char *path, wl_params *out, char *err, size_t errlen);
/* Key k's value in p (its table's value_len floats), or NULL. */
const float *wl_params_value(const wl_params *p, ps_key k);
void wl_params_free(wl_params *p);

/* ---------------------------------------------------------------- traces
 *
 * Access traces, for those outside workloads/ too (the run layer records
 * them, the experiments layer merges and studies them). The format is
 * documented in workloads/TRACE.md.
 *
 * A trace says, for every worker of a run, which keys it read, wrote and
 * sampled at each of its clocks. Three pieces:
 *   the reader     loads a binary trace or its text form (told apart by the
 *                  magic), checking every length, every operation and every
 *                  key against the tables: a bad file is an error naming the
 *                  file and the byte offset or the line, never a crash;
 *   the writer     one per worker of a recording run: appends that worker's
 *                  records to a part file, FILE.part<rank> (written under a
 *                  temporary name, renamed when the worker is done);
 *   the merge      joins the parts of a run into FILE (temporary name, then
 *                  rename) and removes them;
 * plus the statistics `pslab trace stats` prints (trace_stats.c). The `trace`
 * workload type (trace.c) replays a loaded trace.
 */

#define WL_TRACE_VERSION 1
#define WL_TRACE_MAGIC "PSLTRACE"      /* 8 bytes: a binary trace */
#define WL_TRACE_PART_MAGIC "PSLTPART" /* 8 bytes: one worker's part */
#define WL_TRACE_TEXT_MAGIC "pslab-trace" /* the text form's first word */

typedef enum { WL_TRACE_READ = 0, WL_TRACE_WRITE = 1, WL_TRACE_SAMPLE = 2 } wl_trace_op;

/* The name of an operation in the text form ("read", "write", "sample"). */
const char *wl_trace_op_name(wl_trace_op op);

/* ----------------------------------------------------------------- reader */

typedef struct wl_trace wl_trace;

/* Loads the trace in file `path` (binary or text). NULL with a message in
 * err: "<path>: offset <n>: <what>" (binary), "<path>:<line>: <what>" (text)
 * or "<path>: <what>" (cannot be read, empty). Memory: the binary encoding
 * of the trace (the text form is encoded on loading), plus O(workers). */
wl_trace *wl_trace_load(const char *path, char *err, size_t errlen);
/* The same from bytes in memory (copied); name names them in messages. */
wl_trace *wl_trace_parse(const void *data, size_t len, const char *name, char *err,
                         size_t errlen);
void wl_trace_free(wl_trace *t);

/* The tables of the trace (fills num_tables and tables). */
void wl_trace_tables(const wl_trace *t, ps_layout *layout);
uint32_t wl_trace_workers(const wl_trace *t);
/* The nodes of the recording run (workers are numbered node-major). */
uint32_t wl_trace_nodes(const wl_trace *t);
/* Steps of worker w: its records grouped by clock. */
uint64_t wl_trace_steps(const wl_trace *t, uint32_t w);
/* Keys over every record of every worker. */
uint64_t wl_trace_accesses(const wl_trace *t);
/* The most keys one record holds (room wl_trace_next needs). */
size_t wl_trace_max_record_keys(const wl_trace *t);

typedef struct {
  int64_t clock;
  wl_trace_op op;
  size_t n; /* keys, ascending (duplicates kept) */
} wl_trace_record;

/* Walks one worker's records in order. */
typedef struct {
  const uint8_t *p, *end;
  int64_t clock;
} wl_trace_cursor;

void wl_trace_cursor_init(wl_trace_cursor *c, const wl_trace *t, uint32_t w);
/* The next record, its keys into keys (room for wl_trace_max_record_keys);
 * false at the end of the worker's records. A loaded trace is checked
 * whole, so a cursor never meets a bad record. */
bool wl_trace_next(wl_trace_cursor *c, wl_trace_record *r, ps_key *keys);

/* Writes t as a binary trace to path, under a temporary name renamed once
 * complete. 0, or -1 with a message in err. */
int wl_trace_save(const wl_trace *t, const char *path, char *err, size_t errlen);

/* ----------------------------------------------------------------- writer */

typedef struct wl_trace_writer wl_trace_writer;

/* "<file>.part<rank>" (malloc'd; NULL on no memory). */
char *wl_trace_part_path(const char *file, uint32_t rank);

/* Starts the part of worker `rank` (of `workers`, on `nodes` nodes) of the
 * run whose key tables layout holds, in "<path>.tmp". NULL with a message. */
wl_trace_writer *wl_trace_writer_open(const char *path, const ps_layout *layout,
                                      uint32_t nodes, uint32_t workers, uint32_t rank,
                                      char *err, size_t errlen);
/* Appends one record (keys need not be sorted; n == 0 writes nothing).
 * Clocks must not go back. PS_OK, PS_ERR_INVAL (a clock that goes back, a key
 * in no table, or a write that failed: see wl_trace_writer_close) or
 * PS_ERR_NOMEM. */
int wl_trace_writer_record(wl_trace_writer *w, int64_t clock, wl_trace_op op,
                           const ps_key *keys, size_t n);
/* The driver's trace_step (wl_driver_env): writer is a wl_trace_writer. */
int wl_trace_writer_step(void *writer, int64_t clock, const wl_step *st,
                         const ps_key *samples, size_t n_samples);
/* Ends the part: keep renames "<path>.tmp" to path, else it is removed.
 * Frees w. 0, or -1 with a message in err (the first error of any write,
 * then nothing is kept). */
int wl_trace_writer_close(wl_trace_writer *w, bool keep, char *err, size_t errlen);

/* Joins the parts "<file>.part0" .. "<file>.part<W-1>" (W from part 0's
 * header) into file, under a temporary name renamed once complete and
 * checked, and removes the parts. 0, or -1 with a message (a part missing or
 * of another run: then the parts are left as they were). */
int wl_trace_merge(const char *file, char *err, size_t errlen);
/* Removes whatever parts of file there are ("<file>.part<r>" and their
 * ".tmp"), for r < workers. */
void wl_trace_remove_parts(const char *file, uint32_t workers);

/* ------------------------------------------------------------- statistics */

typedef struct {
  uint32_t workers, nodes; /* nodes: of the locality figure */
  uint64_t steps, accesses, reads, writes, samples;
  uint64_t table_keys;     /* keys in the trace's tables */
  uint64_t keys;           /* distinct keys accessed */
  /* Share of accesses to the hottest 0.1%, 1% and 10% of the distinct keys
   * (at least one key each). */
  double top_share[3];
  /* The Zipf exponent fitted to the head of the rank-frequency curve (see
   * TRACE.md); NAN when fewer than 3 ranks qualify. */
  double zipf_skew;
  uint64_t zipf_ranks;     /* the ranks fitted: 1 .. zipf_ranks */
  /* Share of accesses to keys that range partitioning over `nodes` nodes
   * homes on the accessing worker's node (worker w on node w*nodes/workers). */
  double locality;
  /* Reuse distance: distinct other keys a worker touched between two touches
   * of one key (a step touches each of its keys once). */
  uint64_t reuses, cold;   /* touches with and without an earlier one */
  uint64_t reuse_p50, reuse_p90, reuse_p99; /* nearest rank; 0 without reuses */
  uint64_t *rank_counts;   /* accesses of each key, descending (keys of them) */
} wl_trace_stats;

/* The statistics of t, locality for `nodes` nodes (0: the trace's). PS_OK
 * or PS_ERR_NOMEM. Memory: O(distinct keys + one worker's touches). */
int wl_trace_stats_compute(const wl_trace *t, uint32_t nodes, wl_trace_stats *out);
void wl_trace_stats_free(wl_trace_stats *s);
/* Least-squares Zipf exponent of the head of counts[n] (descending): the
 * slope of log(count) against log(rank), ranks weighted 1/rank (each decade
 * weighs the same), over the ranks whose count is at least
 * WL_TRACE_FIT_MIN_COUNT. NAN when fewer than 3 ranks qualify. */
#define WL_TRACE_FIT_MIN_COUNT 100
double wl_trace_fit_zipf(const uint64_t *counts, uint64_t n, uint64_t *ranks_used);
/* The n most accessed keys of t (hottest first, ties by key) into out;
 * returns how many (fewer when fewer keys are accessed; 0 on no memory). */
size_t wl_trace_hot_keys(const wl_trace *t, size_t n, ps_key *out);

#endif
